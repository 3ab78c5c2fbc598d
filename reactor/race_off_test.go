//go:build !race

package reactor_test

const raceDetector = false
