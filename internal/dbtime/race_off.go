//go:build !race

package dbtime

// raceScale: see race_on.go.
const raceScale = 1
