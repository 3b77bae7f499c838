//go:build duckdb_arrow

package analysis

import (
	"context"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// capacityMetrics simulates n single-step roots arriving as Poisson(λ) whose one model turn
// takes Exp(μ) (the tool has no delay) on the given workers, and reads the metrics view.
func capacityMetrics(t *testing.T, n, workers int, lambda, mu float64) Metrics {
	t.Helper()
	sc, err := scenarios.Parse("capacity.yaml", []byte(`
name: capacity
tools: {svc: {latency: {dist: constant, value: 0s}}}
workload: {investigations: 1}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc.Workload.Investigations = n
	sc.Workload.Workers = workers
	sc.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: lambda}}
	sc.Workload.Think = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Second) / mu}
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	if err != nil || len(res.Violations) > 0 {
		t.Fatalf("run: %v %v", err, res.Violations)
	}
	db := openTestDB(t)
	if err := LoadCollector(db, "capacity-s1", &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	m, err := db.Metrics(context.Background(), "capacity-s1")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBacklogGrowth: workers below the load. λ = 3/min against c = 2 workers of rate
// μ = 1/min: the workers finish at most cμ = 2/min, so over the arrival window the open
// roots grow by λ - cμ = 1/min = 60 per hour. With 3000 roots the window is about 1000
// minutes; departures while every worker is busy are Poisson(cμT) (sd ≈ √2000 ≈ 45 roots,
// 2.7/h), so the bound of ±12/h is over 4 sd. With 4 workers (ρ = 0.75) the backlog is
// stationary: its growth is the final open count over the window, near 0 (under 5/h), and
// the median wait for a worker is a fraction of the overloaded fleet's.
func TestBacklogGrowth(t *testing.T) {
	const lambda, mu = 3.0 / 60, 1.0 / 60
	over := capacityMetrics(t, 3000, 2, lambda, mu)
	stable := capacityMetrics(t, 3000, 4, lambda, mu)
	t.Logf("workers 2: backlog_growth %.2f/h, median_pending_time %.0f s, peak_backlog %v", over.Get("backlog_growth"), over.Get("median_pending_time"), over.Get("peak_backlog"))
	t.Logf("workers 4: backlog_growth %.2f/h, median_pending_time %.0f s, peak_backlog %v", stable.Get("backlog_growth"), stable.Get("median_pending_time"), stable.Get("peak_backlog"))
	if want := (lambda - 2*mu) * 3600; over.Get("backlog_growth") < want-12 || over.Get("backlog_growth") > want+12 {
		t.Errorf("workers 2: backlog_growth %.2f/h, want λ - cμ = %.0f ± 12", over.Get("backlog_growth"), want)
	}
	if stable.Get("backlog_growth") < 0 || stable.Get("backlog_growth") > 5 {
		t.Errorf("workers 4: backlog_growth %.2f/h, want in [0, 5]", stable.Get("backlog_growth"))
	}
	if !(over.Get("median_pending_time") > 20*stable.Get("median_pending_time")) || over.Get("peak_backlog") < 500 || stable.Get("peak_backlog") > 100 {
		t.Errorf("median pending %.0f s vs %.0f s, peak backlog %v vs %v: want the overloaded fleet far behind",
			over.Get("median_pending_time"), stable.Get("median_pending_time"), over.Get("peak_backlog"), stable.Get("peak_backlog"))
	}
}

// TestLifecycleCountsSubagents: the lifecycle view has a row per minute for roots and one for
// subagents, and each counts its own kind: at the last minute every investigation of the
// kind is in its final state, so the rows sum to the roots and the subagents the simulator
// started, and their completed counts to those that completed. With 2 workers the roots
// also wait pending, which the view shows while they queue.
func TestLifecycleCountsSubagents(t *testing.T) {
	sc, err := scenarios.Parse("tree.yaml", []byte(`
name: tree
workload:
  investigations: 60
  steps: 3
  think: {dist: exponential, mean: 10s}
  subagents: {probability: 0.5, count: 2, max_depth: 1}
  workers: 2
tools: {svc: {latency: 5s}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	if err != nil || len(res.Violations) > 0 {
		t.Fatalf("run: %v %v", err, res.Violations)
	}
	want := map[string][2]int64{} // kind -> investigations, completed
	for _, inv := range c.Investigations {
		k := "root"
		if inv.ParentID != 0 {
			k = "subagent"
		}
		w := want[k]
		w[0]++
		if inv.FinalState == "completed" {
			w[1]++
		}
		want[k] = w
	}
	if want["subagent"][0] == 0 {
		t.Fatal("no subagents: the test sees nothing")
	}
	db := openTestDB(t)
	if err := LoadCollector(db, "tree-s1", &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	for kind, w := range want {
		var total, completed, maxPending int64
		if err := db.SQL().QueryRow(`SELECT pending + running + waiting + recovering + awaiting_human + completed + terminated, completed,
			(SELECT max(pending) FROM lifecycle WHERE agent = ?)
			FROM lifecycle WHERE agent = ? ORDER BY minute DESC LIMIT 1`, kind, kind).Scan(&total, &completed, &maxPending); err != nil {
			t.Fatal(err)
		}
		if total != w[0] || completed != w[1] || (kind == "root" && maxPending < 10) {
			t.Errorf("%s: lifecycle ends with %d investigations, %d completed (most pending %d); simulator %d, %d",
				kind, total, completed, maxPending, w[0], w[1])
		}
	}
}
