//go:build duckdb_arrow

package pipeline

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

// The peak-memory benchmarks run `mayday run`'s pipeline (simulation, trace load, metrics)
// on research-fleet at 100,000 investigations and report the process's peak resident
// memory (peak-MiB); a peak above 1 GiB fails the benchmark. The peak is the process's
// high-water mark, so run each alone in its process, as `make bench-memory` (part of `make
// bench`) does:
//
//	go test -tags duckdb_arrow -run '^$' -bench 'PeakMemory100k$' -benchtime 1x ./pipeline/

// BenchmarkPeakMemory100k: 100,000 investigations at the shipped arrival rate (1,000/h, so
// 100 hours of arrivals; the horizon is stretched to fit) and the shipped capacity.
func BenchmarkPeakMemory100k(b *testing.B) {
	peakMemory(b, "horizon=120h")
}

// BenchmarkPeakMemory100kTenfold: ten times the arrival rate, with tool capacity and
// reviewers scaled with it, so the fleet keeps its shape.
func BenchmarkPeakMemory100kTenfold(b *testing.B) {
	peakMemory(b, "workload.arrival.poisson=10000/h",
		"tools.backtest.concurrency=15000",
		"tools.fetch_data.concurrency=2000",
		"recovery.humans.reviewers=250")
}

// BenchmarkPeakMemory100kOverload: ten times the arrival rate on the shipped capacity: the
// backlog grows all run long, so nearly every investigation is open at once, retrying and
// parking, which is the most state the simulator and the load ever hold.
func BenchmarkPeakMemory100kOverload(b *testing.B) {
	peakMemory(b, "workload.arrival.poisson=10000/h")
}

// peakTargetMiB is the most a run of these benchmarks may hold resident (1 GiB).
const peakTargetMiB = 1024

func peakMemory(b *testing.B, sets ...string) {
	analysis.LimitGoHeap() // as the binary does
	analysis.TuneMalloc()
	s, err := scenarios.Load("research-fleet", append([]string{"workload.investigations=100000"}, sets...))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var events, rows int64
	for i := 0; i < b.N; i++ {
		db, err := analysis.Create(filepath.Join(dir, "peak-"+strconv.Itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		out, err := Execute(context.Background(), db, Spec{Scenario: s, Seed: s.Seed})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.SQL().QueryRow("SELECT (SELECT count(*) FROM spans) + (SELECT count(*) FROM transitions)").Scan(&rows); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		if out.Metrics.Get("started") != 100_000 {
			b.Fatalf("started %v investigations, want 100000", out.Metrics.Get("started"))
		}
		events = out.Events
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	peak := float64(ru.Maxrss) / 1024 // Linux reports Maxrss in KiB
	b.ReportMetric(peak, "peak-MiB")
	if peak > peakTargetMiB {
		b.Errorf("peak resident memory %.0f MiB, above the target of %d MiB", peak, peakTargetMiB)
	}
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(float64(rows), "span+transition-rows/op")
}
