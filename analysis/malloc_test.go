//go:build duckdb_arrow

package analysis

import (
	"runtime"
	"testing"
)

func TestTuneMalloc(t *testing.T) {
	t.Setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
	if TuneMalloc() {
		t.Error("TuneMalloc overrode the malloc tunables GLIBC_TUNABLES sets")
	}
	t.Setenv("GLIBC_TUNABLES", "")
	// CI and the release builds are linux/glibc; elsewhere there is nothing to tune.
	if runtime.GOOS == "linux" && glibc() && !TuneMalloc() {
		t.Error("TuneMalloc did not fix glibc's thresholds")
	}
}
