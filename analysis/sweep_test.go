//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"1/1": {1, 1}, "2/4": {2, 4}, " 3 / 3 ": {3, 3}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"0/4": "counts from 1", "5/4": "counts from 1", "1/0": "want I/N", "2": "want I/N", "a/b": "want I/N"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseShard(%q): %v; want an error saying %q", in, err, msg)
		}
	}
}

// The slices of a grid partition it: every point in exactly one slice, dealt round-robin.
func TestShardPartitionsTheGrid(t *testing.T) {
	const points = 11
	for n := 1; n <= 5; n++ {
		seen := make([]int, points)
		for i := 1; i <= n; i++ {
			s := Shard{i, n}
			for p := range points {
				if s.Has(p) {
					seen[p]++
					if p%n != i-1 {
						t.Errorf("shard %v holds point %d; round-robin gives it to %d/%d", s, p, p%n+1, n)
					}
				}
			}
		}
		for p, c := range seen {
			if c != 1 {
				t.Errorf("N=%d: point %d is in %d slices, want 1", n, p, c)
			}
		}
	}
	if !(Shard{}).Has(7) || !(Shard{}).Whole() {
		t.Error("the zero Shard must be the whole grid")
	}
}

const batchScenario = `
name: batch
seed: 3
horizon: 1d
workload:
  investigations: 40
  arrival: {uniform: 10m}
  steps: {dist: uniform, min: 2, max: 5}
  think: {dist: exponential, mean: 5s}
  tokens: {dist: constant, value: 500}
  tools: {t: 1}
tools:
  t: {latency: {dist: exponential, mean: 2s}, idempotency: keyed, timeout: 1m}
faults:
  - {kind: transient, tool: t, probability: 0.2}
recovery:
  retry: {max_attempts: 3, on_exhausted: terminate}
sweep:
  recovery.retry.max_attempts: [1, 4]
`

func batchSpecs(t *testing.T) []Spec {
	t.Helper()
	base, err := scenarios.Parse("batch.yaml", []byte(batchScenario), nil)
	if err != nil {
		t.Fatal(err)
	}
	var specs []Spec
	for p, point := range base.Points() {
		s, err := base.With(point...)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			specs = append(specs, Spec{Scenario: s, Seed: seed, RunID: SweepRunID(s.Name, p, seed)})
		}
	}
	return specs
}

// A batch on several workers gives every run the digest and metrics it has when run alone,
// and CopyRuns stores the runs in the order asked, whatever order the workers finished in.
func TestBatchEqualsSerial(t *testing.T) {
	ctx := context.Background()
	specs := batchSpecs(t)
	serial, err := Create(filepath.Join(t.TempDir(), "serial.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	var want []Outcome
	for _, s := range specs {
		o, err := Execute(ctx, serial, s)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, o)
	}

	var done atomic.Int32
	res, err := Batch{Workers: 3, Dir: t.TempDir(), Done: func(int, Outcome, error) { done.Add(1) }}.Run(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if int(done.Load()) != len(specs) {
		t.Errorf("Done called %d times, want %d", done.Load(), len(specs))
	}
	for i, o := range res.Outcomes {
		if !res.Ran[i] || res.Errs[i] != nil {
			t.Fatalf("spec %d did not run: %v", i, res.Errs[i])
		}
		if o.RunID != want[i].RunID || o.Digest != want[i].Digest {
			t.Errorf("spec %d: %s digest %s, alone %s digest %s", i, o.RunID, o.Digest, want[i].RunID, want[i].Digest)
		}
		if a, b := o.Metrics.Get("completion_rate"), want[i].Metrics.Get("completion_rate"); a != b {
			t.Errorf("spec %d: completion_rate %v in the batch, %v alone", i, a, b)
		}
	}

	// Reverse order on purpose: the stored order is the one asked for.
	dst, err := Create(filepath.Join(t.TempDir(), "dst.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	order := []int{5, 4, 3, 2, 1, 0}
	if err := res.CopyRuns(ctx, dst, order); err != nil {
		t.Fatal(err)
	}
	runs, err := ListRuns(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	var wantIDs []string
	for _, i := range order {
		wantIDs = append(wantIDs, specs[i].RunID)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("stored runs %v, want %v", ids, wantIDs)
	}
	// Every table's rows came along: the copied database measures what the serial one does.
	got, err := dst.AllMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := serial.AllMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ref) {
		t.Fatalf("%d metrics rows, want %d", len(got), len(ref))
	}
	for i := range got {
		g, r := got[i], ref[i]
		if g.RunID != r.RunID || g.Get("events") != r.Get("events") || g.Get("completion_rate") != r.Get("completion_rate") || g.Get("started") != r.Get("started") {
			t.Errorf("metrics of %s after the copy differ from the serial run: %+v vs %+v", g.RunID, g, r)
		}
	}
}
