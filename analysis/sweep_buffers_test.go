//go:build duckdb_arrow

package analysis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSweepBufferLimit(t *testing.T) {
	for _, c := range []struct {
		jobs int
		want uint64
	}{
		{0, 384e6}, {1, 384e6}, {2, 384e6}, {3, 576e6}, {4, 768e6}, {5, 960e6},
		{6, MergeBufferLimit}, {64, MergeBufferLimit},
	} {
		if got := SweepBufferLimit(c.jobs); got != c.want {
			t.Errorf("SweepBufferLimit(%d) = %d, want %d", c.jobs, got, c.want)
		}
	}
}

// TestLimitBuffersKeepsTheCap: a command given a memory limit caps DuckDB (CapMemory); a
// sweep's buffer limit does not raise its database above that cap.
func TestLimitBuffersKeepsTheCap(t *testing.T) {
	if os.Getenv(MemoryEnv) != "" {
		t.Skip(MemoryEnv + " is set: it decides DuckDB's memory")
	}
	ctx := context.Background()
	limitOf := func(cap uint64) string {
		restore := CapMemory(cap)
		defer restore()
		db, err := Create(filepath.Join(t.TempDir(), DBFile))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := LimitBuffers(ctx, db, MergeBufferLimit); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.SQL().QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := limitOf(200e6); !strings.HasPrefix(got, "190.") { // 200e6 bytes, in whole MiB
		t.Errorf("memory_limit with a cap of 200e6 bytes = %q, want 190 MiB", got)
	}
	if got := limitOf(0); !strings.HasPrefix(got, "1.0 GiB") && !strings.HasPrefix(got, "1024.") {
		t.Errorf("memory_limit without a cap = %q, want MergeBufferLimit, 1 GiB", got)
	}
}
