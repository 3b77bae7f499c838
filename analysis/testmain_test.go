//go:build duckdb_arrow

package analysis

import (
	"os"
	"sync"
	"testing"
)

// TestMain runs the tests, then what atExit registered: the fixtures that several tests
// share live as long as the test binary.
func TestMain(m *testing.M) {
	code := m.Run()
	exitFuncs.Lock()
	for i := len(exitFuncs.f) - 1; i >= 0; i-- {
		exitFuncs.f[i]()
	}
	exitFuncs.Unlock()
	os.Exit(code)
}

var exitFuncs struct {
	sync.Mutex
	f []func()
}

// atExit registers f to run once every test has run.
func atExit(f func()) {
	exitFuncs.Lock()
	defer exitFuncs.Unlock()
	exitFuncs.f = append(exitFuncs.f, f)
}
