//go:build !race

package scenarios

// raceDetector: see race_on_test.go.
const raceDetector = false
