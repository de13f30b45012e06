//go:build race

package server_test

// raceSlowdown is how much slower the race detector makes the server: about
// four times on the fairness test's requests (measured), so that its bound
// on latency holds for the server, not for the detector's bookkeeping.
const raceSlowdown = 4
