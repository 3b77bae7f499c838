//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// BenchmarkPeakMemory100k runs `mayday run`'s pipeline on research-fleet grown tenfold to
// 100,000 investigations (arrivals, tool capacity and reviewers scaled with it, so the fleet
// keeps its shape instead of drowning in its own queues) and reports the process's peak
// resident memory. The peak is the process's high-water mark, so run this benchmark alone:
//
//	go test -tags duckdb_arrow -run '^$' -bench PeakMemory100k -benchtime 1x ./analysis/
func BenchmarkPeakMemory100k(b *testing.B) {
	s, err := scenarios.Load("research-fleet", []string{
		"workload.investigations=100000",
		"workload.arrival.poisson=10000/h",
		"tools.backtest.concurrency=15000",
		"tools.fetch_data.concurrency=2000",
		"recovery.humans.reviewers=250",
	})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var events int64
	for i := 0; i < b.N; i++ {
		db, err := Create(filepath.Join(dir, "peak-"+itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		out, err := Execute(context.Background(), db, Spec{Scenario: s, Seed: s.Seed})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		if out.Metrics.Get("started") != 100_000 {
			b.Fatalf("started %v investigations, want 100000", out.Metrics.Get("started"))
		}
		events = out.Sim.Events
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-MiB") // Linux reports Maxrss in KiB
	b.ReportMetric(float64(events), "events/op")
}
