//go:build duckdb_arrow

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mayday-sim/mayday/analysis"
)

// The memory watchdog. A run checks its process's resident memory (the simulator's heap and
// DuckDB's buffers alike) each time the simulator reports progress, every few thousand
// events, and cancels the run before the machine's limit: the run stops as a consistent
// partial run and the command exits 3 saying so. The check is driven by the event count,
// not a timer, and only ever stops a run early, exactly as Ctrl-C does.

// memoryShare is the part of the machine's (or container's) memory a run may use.
const memoryShare = 0.9

// Shares of a --memory-limit. The watchdog stops the run at tripShare of the limit, which
// leaves the rest for storing the partial run (the batches still queued, the runs row); and
// DuckDB's buffers and the Go heap's soft limit are held to their shares, so that neither
// grows past the limit between two checks. Without them a 400MB limit peaked 53% above it
// (DuckDB alone may hold 384MB, and the Go heap doubles before the collector runs); with
// them 7% above (research-fleet at 300,000 investigations). DuckDB needs its half: at 30%
// the metric views of the partial run ran out of memory.
const (
	tripShare   = 0.8
	duckDBShare = 0.5
	goHeapShare = 0.25
)

// minDuckDB is the least DuckDB is given, whatever the limit: below it the metric views of
// a partial run cannot be computed, and the run could not be stored.
const minDuckDB = 200e6

// memoryBudget splits an explicit limit: the resident size at which the watchdog stops the
// run, DuckDB's memory cap and the Go heap's soft limit.
func memoryBudget(limit uint64) (trip, duckDB, goHeap uint64) {
	f := float64(limit)
	return uint64(f * tripShare), max(uint64(f*duckDBShare), minDuckDB), min(uint64(f*goHeapShare), analysis.GoHeapCeiling)
}

// ErrMemory is the cause of a context the watchdog cancelled.
var ErrMemory = errors.New("memory limit")

// MemoryWatch is the watchdog of one command's runs.
type MemoryWatch struct {
	limit  uint64 // bytes; 0 = off
	trip   uint64 // the resident size that stops the run (below limit)
	cancel context.CancelCauseFunc
	peak   atomic.Uint64
	hit    atomic.Bool
	read   func() uint64 // resident bytes
	undo   func()        // restores what WatchMemory capped
}

// WatchMemory returns a context that the watchdog cancels (cause ErrMemory) when the
// process's resident memory passes limit bytes (0: memoryShare of the machine's or
// container's memory). An explicit limit also caps DuckDB and the Go heap (memoryBudget)
// until Done is called.
func WatchMemory(ctx context.Context, limit uint64) (context.Context, *MemoryWatch) {
	m := &MemoryWatch{limit: limit, trip: limit, read: residentBytes, undo: func() {}}
	if limit == 0 {
		m.limit = uint64(float64(machineMemory()) * memoryShare)
		m.trip = m.limit
	} else {
		var duck, heap uint64
		m.trip, duck, heap = memoryBudget(limit)
		restore := analysis.CapMemory(duck)
		unpin := func() {}
		if os.Getenv("GOMEMLIMIT") == "" {
			unpin = analysis.PinGoHeap(int64(heap))
		}
		m.undo = func() {
			restore()
			unpin()
		}
	}
	ctx, m.cancel = context.WithCancelCause(ctx)
	return ctx, m
}

// Done restores what WatchMemory capped; call it when the command ends.
func (m *MemoryWatch) Done() { m.undo() }

// Wrap adds the check to a progress callback (nil is fine). Safe for concurrent use.
func (m *MemoryWatch) Wrap(f func(done, total int)) func(done, total int) {
	if m == nil || m.limit == 0 {
		return f
	}
	return func(done, total int) {
		m.check()
		if f != nil {
			f(done, total)
		}
	}
}

func (m *MemoryWatch) check() {
	used := m.read()
	if used > m.peak.Load() {
		m.peak.Store(used)
	}
	if used > m.trip && !m.hit.Swap(true) {
		m.cancel(ErrMemory)
	}
}

// Stopped reports whether the watchdog stopped the runs of ctx, and says so: how much memory
// the process used, the limit, what was stored (stored) and what to do.
func (m *MemoryWatch) Stopped(ctx context.Context, stored string) error {
	if m == nil || !errors.Is(context.Cause(ctx), ErrMemory) {
		return nil
	}
	limit := fmtBytes(m.limit)
	if m.trip < m.limit {
		limit = fmt.Sprintf("%s, the point where a run stops under a limit of %s", fmtBytes(m.trip), limit)
	}
	return fmt.Errorf("stopped before running out of memory: the process used %s, above %s (--memory-limit); %s; lower workload.investigations or the scenario's size, or raise --memory-limit",
		fmtBytes(m.peak.Load()), limit, stored)
}

// residentBytes reads the process's resident set size from /proc (0 where there is none,
// which leaves the watchdog idle).
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// machineMemory is the smaller of the container's memory limit (cgroup v2 or v1) and the
// machine's memory; 0 when neither can be read.
func machineMemory() uint64 {
	total := uint64(0)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				total = kb * 1024
			}
		}
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
				total = n
			}
		}
	}
	return total
}

func fmtBytes(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
