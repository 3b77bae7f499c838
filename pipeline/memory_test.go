//go:build duckdb_arrow

package pipeline

import (
	"context"
	"errors"
	"testing"
)

// An explicit --memory-limit (of 400MB or more) is split so that the process stays within
// 20% of it: the watchdog stops the run at 80%, and DuckDB's buffers and the Go heap are
// capped below that, so the two together cannot grow past the limit between two checks
// while the partial run is stored.
func TestMemoryBudget(t *testing.T) {
	// Below 400MB DuckDB keeps its floor, which a partial run needs to be stored.
	if _, duck, _ := memoryBudget(64 << 20); duck != minDuckDB {
		t.Errorf("a 64MiB limit gives DuckDB %d; want its floor %d", duck, uint64(minDuckDB))
	}
	for _, limit := range []uint64{400e6, 1 << 30, 8 << 30} {
		trip, duck, heap := memoryBudget(limit)
		if trip >= limit || trip < limit/2 {
			t.Errorf("limit %d: the watchdog stops at %d; want below the limit, with room to store", limit, trip)
		}
		if duck+heap > trip {
			t.Errorf("limit %d: DuckDB %d + Go heap %d pass the watchdog's trip size %d", limit, duck, heap, trip)
		}
	}
	// The watchdog trips at its trip size, not at the limit.
	ctx, cancel := context.WithCancelCause(context.Background())
	used := uint64(0)
	m := &MemoryWatch{limit: 1000, trip: 800, cancel: cancel, read: func() uint64 { return used }}
	for _, used = range []uint64{100, 799, 800} {
		m.check()
	}
	if ctx.Err() != nil {
		t.Fatal("stopped at 800 of a trip size of 800")
	}
	used = 801
	m.check()
	if !errors.Is(context.Cause(ctx), ErrMemory) || m.peak.Load() != 801 {
		t.Errorf("at 801 of 800: cause %v, peak %d; want the memory limit, peak 801", context.Cause(ctx), m.peak.Load())
	}
}
