//go:build duckdb_arrow

package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

// benchSweep is research-fleet cut to 2,000 investigations, two grid points (retry
// budgets) × three seeds: six runs of about a second each.
func benchSweep(b *testing.B) ([]Spec, []analysis.SweepParam) {
	b.Helper()
	base, err := scenarios.Load("research-fleet", []string{"workload.investigations=2000"})
	if err != nil {
		b.Fatal(err)
	}
	axes := []scenarios.SweepAxis{{Path: "recovery.retry.max_attempts", Values: []string{"2", "4"}}}
	specs, params, err := SweepJobs(base, scenarios.Expand(axes), Shard{}, 1, 3, "")
	if err != nil {
		b.Fatal(err)
	}
	return specs, params
}

// BenchmarkSweep measures `mayday sweep`'s pipeline, from the first run to the closed file:
// the runs on one worker per core, loading straight into the sweep's database, then the
// grid parameters, the checkpoint and the close. wall/ideal is the wall time over the ideal
// (the sum of the runs' own times, BatchResult.Elapsed: each from its first record to the
// checkpoint that writes its rows into the file, as closing a `mayday run` does, divided by
// the workers): what the sweep adds beyond its runs (among it the runs' metrics, read in one
// query at the batch's end), plus the last worker's idle tail. The target is at most 1.15. batch-s is the runs' phase, after-s
// what follows the last run.
func BenchmarkSweep(b *testing.B) {
	specs, params := benchSweep(b)
	workers := runtime.NumCPU()
	dir := b.TempDir()
	var wall, sum, runs, after time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(dir, "sweep-"+strconv.Itoa(i)+".duckdb")
		db, err := analysis.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := Batch{Workers: workers, Into: db}.Run(context.Background(), specs)
		if err != nil {
			b.Fatal(err)
		}
		runs += time.Since(start)
		mark := time.Now()
		if err := analysis.WriteSweepParams(context.Background(), db, params); err != nil {
			b.Fatal(err)
		}
		if _, err := db.SQL().Exec("CHECKPOINT"); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		after += time.Since(mark)
		b.StopTimer()
		for k, d := range res.Elapsed {
			if !res.Ran[k] {
				b.Fatalf("run %s did not run", specs[k].RunID)
			}
			sum += d
		}
		os.Remove(path)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()/n, "wall-s")
	b.ReportMetric(sum.Seconds()/n, "runs-sum-s")
	b.ReportMetric(runs.Seconds()/n, "batch-s")
	b.ReportMetric(after.Seconds()/n, "after-s") // grid parameters, checkpoint, close
	b.ReportMetric(float64(workers), "workers")
	b.ReportMetric(wall.Seconds()/(sum.Seconds()/float64(workers)), "wall/ideal")
}

// BenchmarkThroughput1k is the shape of `mayday tune`: many small runs (research-fleet at
// 1,000 investigations, 20 seeds) through Batch on one worker per core, each worker loading
// into its own temporary database and every run's metrics read back, nothing kept. runs/s
// is the throughput; run-ms the mean wall time of one run (its own, as the worker saw it).
func BenchmarkThroughput1k(b *testing.B) {
	s, err := scenarios.Load("research-fleet", []string{"workload.investigations=1000"})
	if err != nil {
		b.Fatal(err)
	}
	specs := Seeds(s, 1, 20, "")
	workers := runtime.NumCPU()
	var wall, sum time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Batch{Workers: workers, Dir: b.TempDir()}.Run(context.Background(), specs)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		for k, d := range res.Elapsed {
			if !res.Ran[k] || res.Outcomes[k].Status != "complete" {
				b.Fatalf("run %d did not complete", k)
			}
			sum += d
		}
		if err := res.Close(); err != nil {
			b.Fatal(err)
		}
	}
	runs := float64(b.N * len(specs))
	b.ReportMetric(runs/wall.Seconds(), "runs/s")
	b.ReportMetric(sum.Seconds()*1e3/runs, "run-ms")
	b.ReportMetric(float64(workers), "workers")
}
