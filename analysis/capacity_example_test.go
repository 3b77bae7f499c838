//go:build duckdb_arrow

package analysis

import (
	"context"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// crunchRun is what the ablation reads of one run of the capacity-crunch example.
type crunchRun struct {
	m                     Metrics
	rateLimited, overload int64 // model calls refused by the rate limit; backtest attempts shed
	crashes               int64
}

func runCrunch(t *testing.T, seed uint64, sets ...string) crunchRun {
	t.Helper()
	sc, err := scenarios.Load("capacity-crunch", sets)
	if err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	id := RunID(sc.Name, seed)
	simulateLive(t, db, sc, seed, id, true)
	var r crunchRun
	if r.m, err = db.Metrics(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow(`SELECT
		(SELECT count(*) FROM spans s JOIN span_attrs a USING (run_id, span_id) WHERE s.operation = 'plan' AND a.key = 'error' AND a.value = 'rate_limited'),
		(SELECT count(*) FROM spans s JOIN span_attrs a USING (run_id, span_id) WHERE s.operation = 'execute_tool' AND a.key = 'error' AND a.value = 'overloaded'),
		(SELECT coalesce(sum(crashes), 0) FROM investigations)`).Scan(&r.rateLimited, &r.overload, &r.crashes); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCapacityCrunchAblation proves what the capacity-crunch example claims, on seeds 1 to 3,
// by taking one mechanism away at a time:
//   - arrivals outpace the fleet: backlog_growth > 0 and the backlog peaks above 100 roots;
//   - the 40 workers make investigations wait (median_pending_time > 0; 0 without the
//     limit), and they protect the shared services: with unlimited workers more model calls
//     are throttled and more backtest attempts shed, fewer investigations complete and the
//     run takes longer;
//   - a tighter model limit (15000 tokens/min) throttles more calls, makes investigations
//     wait longer for a worker and the fleet fall further behind;
//   - growing context (tokens.growth 1.15) raises cost_per_completion (against growth 1);
//   - queue_limit is what sheds backtest attempts (none without it);
//   - the zone crash is the only source of crashes (none without it).
func TestCapacityCrunchAblation(t *testing.T) {
	if testing.Short() {
		t.Skip("18 simulations")
	}
	for seed := uint64(1); seed <= 3; seed++ {
		base := runCrunch(t, seed)
		unlimited := runCrunch(t, seed, "workload.workers=0")
		tight := runCrunch(t, seed, "model.tokens_per_minute=15000")
		flat := runCrunch(t, seed, "workload.tokens.growth=1")
		noShed := runCrunch(t, seed, "tools.backtest.queue_limit=0")
		noCrash := runCrunch(t, seed, "faults=[{id: model-brownout, kind: brownout, tool: model, at: 2h, for: 20m, probability: 0.3, slowdown: 2}]")
		b := base.m
		t.Logf("seed %v base: pending %.0f s, backlog_growth %.1f/h, peak %v, completion %.3f, makespan %.0f s, cost %.4f, rate_limited %v, shed %v, crashes %v",
			seed, b.Get("median_pending_time"), b.Get("backlog_growth"), b.Get("peak_backlog"), b.Get("completion_rate"), b.Get("makespan"), b.Get("cost_per_completion"), base.rateLimited, base.overload, base.crashes)
		t.Logf("seed %d unlimited workers: pending %.0f s, completion %.3f, makespan %.0f s, rate_limited %d, shed %d",
			seed, unlimited.m.Get("median_pending_time"), unlimited.m.Get("completion_rate"), unlimited.m.Get("makespan"), unlimited.rateLimited, unlimited.overload)
		t.Logf("seed %d tight model: pending %.0f s, backlog_growth %.1f/h, rate_limited %d; growth 1: cost %.4f; no queue_limit: shed %d; no zone crash: crashes %d",
			seed, tight.m.Get("median_pending_time"), tight.m.Get("backlog_growth"), tight.rateLimited, flat.m.Get("cost_per_completion"), noShed.overload, noCrash.crashes)
		if !(b.Get("backlog_growth") > 0 && b.Get("peak_backlog") > 100) {
			t.Errorf("seed %v: backlog_growth %.1f, peak %v; want the fleet falling behind", seed, b.Get("backlog_growth"), b.Get("peak_backlog"))
		}
		u := unlimited.m
		if !(b.Get("median_pending_time") > 0 && u.Get("median_pending_time") == 0 && unlimited.rateLimited > base.rateLimited &&
			unlimited.overload > base.overload && u.Get("completion_rate") < b.Get("completion_rate") && u.Get("makespan") > b.Get("makespan")) {
			t.Errorf("seed %d: workers do not protect the shared services: base %+v, unlimited %+v", seed, base, unlimited)
		}
		if !(tight.rateLimited > base.rateLimited && tight.m.Get("median_pending_time") > b.Get("median_pending_time") && tight.m.Get("backlog_growth") > b.Get("backlog_growth")) {
			t.Errorf("seed %d: a tighter model limit does not slow the fleet: base %+v, tight %+v", seed, base, tight)
		}
		if !(b.Get("cost_per_completion") > flat.m.Get("cost_per_completion")) {
			t.Errorf("seed %d: cost_per_completion %.4f with growth, %.4f without", seed, b.Get("cost_per_completion"), flat.m.Get("cost_per_completion"))
		}
		if !(base.overload > 0 && noShed.overload == 0) {
			t.Errorf("seed %d: shed attempts %d with queue_limit, %d without", seed, base.overload, noShed.overload)
		}
		if !(base.crashes > 0 && noCrash.crashes == 0) {
			t.Errorf("seed %d: crashes %d with the zone crash, %d without", seed, base.crashes, noCrash.crashes)
		}
	}
}
