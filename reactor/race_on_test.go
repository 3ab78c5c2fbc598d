//go:build race

package reactor_test

// raceDetector is true when the tests run under -race, which makes copying tens of MiB too
// slow for the big-value test's timeouts.
const raceDetector = true
