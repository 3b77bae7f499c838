//go:build duckdb_arrow

package analysis

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// compareCosts checks the costs view's row of a run against refMoney: none for an unpriced
// run; else its currency, cost and wasted cost.
func compareCosts(t testing.TB, db *DB, run refRun, c *record.Collector) {
	t.Helper()
	rows := query(t, db, `SELECT currency, cost, wasted_cost FROM costs WHERE run_id = '`+run.ID+`'`)
	if run.Prices == nil {
		if len(rows) != 0 {
			t.Errorf("costs of the unpriced run %s: %v, want no row", run.ID, rows)
		}
		return
	}
	if len(rows) != 1 {
		t.Fatalf("costs of the priced run %s: %d rows, want 1", run.ID, len(rows))
	}
	invByID := map[int64]*record.Investigation{}
	for i := range c.Investigations {
		invByID[c.Investigations[i].InvestigationID] = &c.Investigations[i]
	}
	cost, wasted := refMoney(run.Prices, c, invByID)
	currency, _ := rows[0][0].(string)
	gotCost, _ := rows[0][1].(float64)
	gotWasted, _ := rows[0][2].(float64)
	near := func(g, w float64) bool { return math.Abs(g-w) <= 1e-9*math.Max(math.Abs(w), 1e-12) }
	if currency != run.Prices.Currency || !near(gotCost, cost) || !near(gotWasted, wasted) {
		t.Errorf("costs of %s: view %v %.12g (wasted %.12g), reference %s %.12g (wasted %.12g)",
			run.ID, currency, gotCost, gotWasted, run.Prices.Currency, cost, wasted)
	}
}

// pricedRun is one run of the money dataset: its records, and the price table and
// configuration its runs row carries.
type pricedRun struct {
	id     string
	c      record.Collector
	prices *scenarios.Prices
	config string
	events int64
	side   map[string]bool // tools whose idempotency is keyed or none
}

// simulatePriced runs scenario sc (seed) into a pricedRun; extra model prices are added to
// its table afterwards (the decoder takes only the workload's model), so that the view must
// pick each span's own model.
func simulatePriced(t testing.TB, id string, sc *scenarios.Scenario, seed uint64, extra ...scenarios.ModelPrice) *pricedRun {
	r := &pricedRun{id: id, side: map[string]bool{}}
	for _, tool := range sc.Tools {
		r.side[tool.Name] = tool.Idempotency != scenarios.Natural
	}
	res, err := sim.Run(context.Background(), sc, seed, &r.c, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.events = res.Events
	p := *sc.Prices
	p.Models = append(slices.Clone(p.Models), extra...)
	slices.SortFunc(p.Models, func(a, b scenarios.ModelPrice) int { return cmpString(a.Model, b.Model) })
	sc.Prices = &p
	r.prices, r.config = &p, string(sc.JSON())
	return r
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// handPricedRuns are two runs built by hand. "priced-hand": two models and two tools
// priced, worked out below (cost 12.4, wasted 5.9). "priced-idle": priced, one investigation, no span and no
// execution (its cost is 0, not NULL).
func handPricedRuns() []*pricedRun {
	const minute = int64(60e9)
	p := &scenarios.Prices{Currency: "GBP",
		Models: []scenarios.ModelPrice{{Model: "m", Input: 2, Output: 10}, {Model: "m2", Input: 1, Output: 1}},
		Tools:  []scenarios.ToolPrice{{Tool: "t", Call: 0.5, ComputeSecond: 3}, {Tool: "x", Call: 100, ComputeSecond: 0.25}}}
	cfg, err := json.Marshal(map[string]any{"name": "priced-hand", "prices": p})
	if err != nil {
		panic(err)
	}
	hand := &pricedRun{id: "priced-hand", prices: p, config: string(cfg)}
	key := record.OpKey{Investigation: 1, Step: 0}
	span := func(id uint64, inv int64, op record.Operation, model, tool string, st record.Status, in, out int64, at int64) record.Span {
		s := record.Span{TraceID: inv, SpanID: id, InvestigationID: inv, Operation: op, Model: model, Tool: tool,
			Start: at, End: at + minute/2, Status: st, InputTokens: in, OutputTokens: out}
		if op == record.OpExecuteTool {
			s.HasKey, s.OpKey, s.Attempt = true, key, int32(id-2)
		}
		if op == record.OpPlan {
			s.Attrs = []record.Attr{{Key: "kind", Value: "model_turn"}}
		}
		return s
	}
	hand.c.Spans = []record.Span{
		span(1, 1, record.OpPlan, "m", "", record.StatusOK, 1000, 300, 0),                 // 2 + 3
		span(2, 1, record.OpSupervise, "m2", "", record.StatusOK, 400, 100, minute),       // 0.4 + 0.1
		span(3, 1, record.OpExecuteTool, "", "t", record.StatusError, 0, 0, 2*minute),     // 0.5, wasted
		span(4, 1, record.OpExecuteTool, "", "t", record.StatusOK, 0, 0, 3*minute),        // 0.5
		span(5, 1, record.OpExecuteTool, "", "t", record.StatusBlocked, 0, 0, 4*minute),   // never sent: 0
		span(6, 2, record.OpPlan, "m", "", record.StatusOK, 500, 100, 5*minute),           // 1 + 1, wasted
		span(7, 1, record.OpValidate, "", "", record.StatusOK, 0, 0, 6*minute),            // no price
		span(8, 1, record.OpExecuteTool, "", "other", record.StatusError, 0, 0, 7*minute), // unpriced tool
		span(9, 1, record.OpExecuteTool, "", "guarded", record.StatusBlocked, 0, 0, 7*minute),
		span(10, 3, record.OpPlan, "m", "", record.StatusOK, 200, 100, minute),          // 0.4 + 1, wasted: a failed subagent
		span(11, 4, record.OpPlan, "m2", "", record.StatusOK, 1000, 1000, 5*minute),     // 1 + 1, wasted: its root failed
		span(12, 1, record.OpPlan, "m3", "", record.StatusOK, 5000, 5000, 7*minute),     // a model without a price: 0
		span(13, 1, record.OpInspect, "", "t", record.StatusError, 0, 0, 7*minute+1000), // an inspection is free, failed or not
		span(14, 2, record.OpPlan, "m3", "", record.StatusOK, 100, 100, 5*minute+1000),  // wasted, but without a price: 0
	}
	// x: an execution and no attempt (its call price never applies): 2 · 0.25. guarded: a
	// blocked attempt and nothing else.
	hand.c.Executions = []record.Execution{{Tool: "x", OpKey: key, InvestigationID: 1, Execution: 1, Start: 3 * minute,
		End: 3*minute + 1, Outcome: "ok", Delivered: true, Compute: 2}}
	hand.c.Spans[6].HasKey, hand.c.Spans[6].OpKey = true, key
	hand.c.Investigations = []record.Investigation{
		{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 8 * minute, FinalState: "completed", Tokens: 1800, TrulyValid: true, Validated: true, Steps: 1},
		{InvestigationID: 2, RootID: 2, ArrivedAt: 5 * minute, Ended: true, EndedAt: 6 * minute, FinalState: "terminated", TerminationReason: "budget_exhausted", Tokens: 800},
		{InvestigationID: 3, ParentID: 1, RootID: 1, Depth: 1, ArrivedAt: minute, Ended: true, EndedAt: 2 * minute, FinalState: "terminated", TerminationReason: "budget_exhausted", Tokens: 300},
		{InvestigationID: 4, ParentID: 2, RootID: 2, Depth: 1, ArrivedAt: 5 * minute, Ended: true, EndedAt: 6 * minute, FinalState: "completed", Tokens: 2000, TrulyValid: true},
	}
	hand.c.Investigations[0].Tokens += 10000
	// A park on an open breaker in an investigation that never sent a keyed span: a sign
	// without an operation or a tool, so no tool's minute is guarded by it.
	hand.c.Transitions = []record.Transition{{InvestigationID: 2, At: 5*minute + 2000, From: "running", To: "running",
		Event: "breaker_open", Action: "park", Reason: "breaker_open", DecidedBy: "engine"}}
	idleCfg, err := json.Marshal(map[string]any{"name": "priced-idle", "prices": p})
	if err != nil {
		panic(err)
	}
	idle := &pricedRun{id: "priced-idle", prices: p, config: string(idleCfg)}
	idle.c.Investigations = []record.Investigation{{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: minute, FinalState: "completed"}}
	// priced-unit: two attempts at t, one failed: a cost of exactly 1 (0.5 + 0.5), half of it
	// wasted, so that a ratio over the cost cannot mistake 1 for no cost.
	unitCfg, err := json.Marshal(map[string]any{"name": "priced-unit", "prices": p})
	if err != nil {
		panic(err)
	}
	unit := &pricedRun{id: "priced-unit", prices: p, config: string(unitCfg)}
	unit.c.Spans = []record.Span{span(3, 1, record.OpExecuteTool, "", "t", record.StatusError, 0, 0, 0),
		span(4, 1, record.OpExecuteTool, "", "t", record.StatusOK, 0, 0, minute)}
	unit.c.Investigations = []record.Investigation{{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 2 * minute, FinalState: "completed", TrulyValid: true, Validated: true}}
	// priced-empty: priced, and nothing arrived: a cost of 0 and no completion to share it.
	emptyCfg, err := json.Marshal(map[string]any{"name": "priced-empty", "prices": p})
	if err != nil {
		panic(err)
	}
	empty := &pricedRun{id: "priced-empty", prices: p, config: string(emptyCfg)}
	return []*pricedRun{hand, idle, unit, empty}
}

// pricedFleet is the research fleet in small, priced, with a rate-limited model (refused
// calls), subagents that fail (completed investigations whose root did not, and the
// reverse), a model supervisor, faults of every kind and a horizon that leaves work in
// flight: tokens, calls and compute in every state. notify has no price.
func pricedFleet(t testing.TB, prices string) *scenarios.Scenario {
	sc, err := scenarios.Load("research-fleet", []string{
		"workload.investigations=120", "workload.arrival={uniform: 150m}", "horizon=3h",
		"workload.subagents={probability: 0.3, count: {dist: uniform, min: 1, max: 2}, max_depth: 2}",
		"model={requests_per_minute: 20}", "prices=" + prices,
	})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// moneyCase: priced runs against the money reference (refMoney), and the hand-built run
// against the numbers worked out by hand.
func moneyCase() viewCase {
	var runs []*pricedRun
	return viewCase{name: "priced runs", load: func(t testing.TB, db *DB) {
		a := simulatePriced(t, "priced-fleet-1", pricedFleet(t, `{currency: EUR, models: {research-model-2: {input: 0.003, output: 0.015}},
			tools: {backtest: {call: 0.002, compute_second: 0.0001}, fetch_data: {call: 0.001, compute_second: 0.03}}}`), 1,
			scenarios.ModelPrice{Model: "another-model", Input: 7, Output: 11})
		b := simulatePriced(t, "priced-fleet-2", pricedFleet(t, `{models: {research-model-2: {input: 0.01, output: 0.02}},
			tools: {notify: {call: 0.05}, backtest: {compute_second: 0.002}, fetch_data: {call: 0.003}}}`), 2)
		sc, err := scenarios.Parse("money.yaml", []byte(`
name: money
workload: {investigations: 20, steps: 3, tokens: {dist: constant, value: 1000, growth: 1.25}, model: m}
tools: {svc: {latency: 2s, compute: 3}}
prices: {currency: EUR, models: {m: {input: 0.003, output: 0.015}}, tools: {svc: {call: 0.01, compute_second: 0.0005}}}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		clean := simulatePriced(t, "priced-clean", sc, 1)
		runs = append([]*pricedRun{a, b, clean}, handPricedRuns()...)
		for _, r := range runs {
			if err := LoadCollector(db, r.id, &r.c, traces.Run{Scenario: r.id, Seed: 1, Config: r.config,
				Events: r.events, Status: traces.StatusComplete}); err != nil {
				t.Fatal(err)
			}
		}
	}, check: func(t testing.TB, db *DB) {
		for _, r := range runs {
			checkRunRecords(t, db, refRun{ID: r.id, Events: r.events, Prices: r.prices, SideEffects: r.side}, &r.c)
		}
		// The hand-built run, worked out by hand (see handPricedRuns).
		rows := query(t, db, `SELECT cost, wasted_cost FROM costs WHERE run_id = 'priced-hand'`)
		if len(rows) != 1 || math.Abs(rows[0][0].(float64)-12.4) > 1e-12 || math.Abs(rows[0][1].(float64)-5.9) > 1e-12 {
			t.Errorf("costs of priced-hand: %v, want cost 12.4, wasted 5.9", rows)
		}
		checkAlonePriced(t, db)
		// A configuration that is not JSON is no price table: no costs row (a runs row alone,
		// for this query only).
		if _, err := db.SQL().Exec(`INSERT INTO runs (run_id, config) VALUES ('bad-config', 'prices: not json')`); err != nil {
			t.Fatal(err)
		}
		defer db.SQL().Exec(`DELETE FROM runs WHERE run_id = 'bad-config'`)
		if r := query(t, db, `SELECT count(*) FROM costs WHERE run_id = 'bad-config'`); r[0][0] != int64(0) {
			t.Errorf("costs of a run whose configuration is not JSON: %v rows, want none", r[0][0])
		}
	}}
}

func TestMoneyMatchesReference(t *testing.T) { runViewCase(t, moneyCase()) }

// checkAlonePriced: with priced-hand the only priced run in the database (the others'
// configurations set aside for this query), its costs are still its own spans'. The
// mutation harness replaces the views of the files it is done with by tables of their rows
// (materialize): once costs is such a table, setting configurations aside cannot change it,
// and no mutant of a later file can, so the check has nothing to ask.
func checkAlonePriced(t testing.TB, db *DB) {
	if r := query(t, db, `SELECT count(*) FROM duckdb_views() WHERE view_name = 'costs' AND NOT internal`); r[0][0] != int64(1) {
		return
	}
	for _, q := range []string{
		`CREATE TEMP TABLE money_set_aside AS SELECT run_id, config FROM runs WHERE run_id <> 'priced-hand'`,
		`UPDATE runs SET config = NULL WHERE run_id <> 'priced-hand'`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, q := range []string{
			`UPDATE runs SET config = a.config FROM money_set_aside a WHERE runs.run_id = a.run_id`,
			`DROP TABLE money_set_aside`,
		} {
			if _, err := db.SQL().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}()
	rows := query(t, db, `SELECT run_id, cost FROM costs`)
	if len(rows) != 1 || rows[0][0] != "priced-hand" || math.Abs(rows[0][1].(float64)-12.4) > 1e-12 {
		t.Errorf("costs with priced-hand the only priced run: %v, want priced-hand 12.4", rows)
	}
}
