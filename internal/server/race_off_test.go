//go:build !race

package server_test

// raceSlowdown: built without the race detector, the server runs at speed.
const raceSlowdown = 1
