//go:build race

package scenarios

// raceDetector: the tests run under the race detector (make test), which makes parsing
// and validating about ten times slower and finds nothing in the single-goroutine work of
// the golden files of generated files and of Validate; those check a prefix of their file
// there (30 files, one scenario), and all of it in a plain go test.
const raceDetector = true
