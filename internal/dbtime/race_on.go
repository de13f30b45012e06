//go:build race

package dbtime

// raceScale stretches budgets under the race detector, which slows the
// work they bound several times over: SQLite runs in the process, as Go
// the detector instruments. Builds without it (every deployed one) keep
// the budgets as given.
const raceScale = 5
