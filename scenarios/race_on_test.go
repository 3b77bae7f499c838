//go:build race

package scenarios

// raceDetector: the tests run under the race detector (make test), which makes parsing
// about ten times slower and finds nothing in the single-goroutine parses of the golden
// files; those check a prefix of their file there, and all of it in a plain go test.
const raceDetector = true
