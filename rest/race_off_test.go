//go:build !race

package rest_test

// raceDetector: the race detector runs decodes ten times as slowly or more.
const raceDetector = false
