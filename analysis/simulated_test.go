//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// exampleDB is an in-memory database holding one run (seed 7) of example name cut to the
// given number of investigations, its tables and metrics computed from its stored records
// (as an import's are, so that a round trip through an export compares like with like); it
// returns the run's id. The database is made once per name and size and shared by the tests
// that ask for it, which only read it; it stays open until the test binary ends.
func exampleDB(t *testing.T, name string, investigations int) (*DB, string) {
	t.Helper()
	key := fmt.Sprintf("%s/%d", name, investigations)
	exampleDBs.Lock()
	defer exampleDBs.Unlock()
	if e, ok := exampleDBs.m[key]; ok {
		return e.db, e.runID
	}
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	atExit(func() { db.Close() })
	runID, _ := simulateExample(t, db, name, 7, fmt.Sprintf("workload.investigations=%d", investigations))
	if exampleDBs.m == nil {
		exampleDBs.m = map[string]exampleDBRun{}
	}
	exampleDBs.m[key] = exampleDBRun{db, runID}
	return db, runID
}

// exampleDBs holds the databases exampleDB made, by name and size.
var exampleDBs struct {
	sync.Mutex
	m map[string]exampleDBRun
}

type exampleDBRun struct {
	db    *DB
	runID string
}

// simulateExample runs example scenario name with sets and seed through the simulator
// (invariants checked) and loads its records into db under the returned run id.
func simulateExample(t testing.TB, db *DB, name string, seed uint64, sets ...string) (string, *record.Collector) {
	t.Helper()
	sc, err := scenarios.Load(name, sets)
	if err != nil {
		t.Fatal(err)
	}
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, seed, &c, sim.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("simulation invariants: %v", res.Violations)
	}
	runID := RunID(sc.Name, seed)
	if err := LoadCollector(db, runID, &c, traces.Run{Scenario: sc.Name, Seed: seed, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	return runID, &c
}

// Wasted tokens of work that completed, on a simulated trace (invalid-configs: invalid
// results are revised, and one configuration in ten can never be valid). The expectation is
// derived from the order of the spans, not from caused_by: an agent sends the operation a
// model turn decided at the instant the turn ends (or blocks it then), so the operation a
// turn decided is that of the investigation's first execute_tool span starting at or after
// the turn's end. A turn is wasted when that operation never passed validation. Every
// completed investigation that revised an invalid result must show wasted tokens, and each
// investigation's wasted_tokens in token_costs must equal the expectation exactly.
func TestWastedTokensOnSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	runViewCase(t, tokensCase)
}

// tokensCase is the simulated run of TestWastedTokensOnSimulation, also run by the SQL
// mutation harness.
var tokensCase = func() viewCase {
	var runID string
	var c *record.Collector
	return viewCase{name: "wasted tokens (simulated invalid-configs)", load: func(t testing.TB, db *DB) {
		runID, c = simulateExample(t, db, "invalid-configs", 1, "workload.investigations=300")
	}, check: func(t testing.TB, db *DB) { checkWastedTokens(t, db, runID, c) }}
}()

func checkWastedTokens(t testing.TB, db *DB, runID string, c *record.Collector) {
	type turn struct {
		end    int64
		tokens int64
	}
	turns := map[int64][]turn{}
	type call struct {
		start int64
		key   record.OpKey
	}
	calls := map[int64][]call{}
	validOp := map[record.OpKey]bool{}
	invalidOp := map[int64]bool{}
	for i := range c.Spans {
		s := &c.Spans[i]
		switch {
		case s.Operation == record.OpPlan && spanKind(s) == "model_turn" && s.Status == record.StatusOK:
			turns[s.InvestigationID] = append(turns[s.InvestigationID], turn{s.End, s.InputTokens + s.OutputTokens})
		case s.Operation == record.OpExecuteTool && s.HasKey:
			calls[s.InvestigationID] = append(calls[s.InvestigationID], call{s.Start, s.OpKey})
		case s.Operation == record.OpValidate && s.Status == record.StatusOK:
			validOp[s.OpKey] = true
		case s.Operation == record.OpValidate && s.Status == record.StatusInvalid:
			invalidOp[s.InvestigationID] = true
		}
	}
	byID := map[int64]*record.Investigation{}
	for i := range c.Investigations {
		byID[c.Investigations[i].InvestigationID] = &c.Investigations[i]
	}
	want := map[int64]int64{}
	for _, inv := range c.Investigations {
		if !(inv.FinalState == "completed" && byID[inv.RootID].FinalState == "completed") {
			want[inv.InvestigationID] = inv.Tokens
			continue
		}
		cs := calls[inv.InvestigationID]
		slices.SortStableFunc(cs, func(a, b call) int { return cmp.Compare(a.start, b.start) })
		var w int64
		for _, tn := range turns[inv.InvestigationID] {
			i, _ := slices.BinarySearchFunc(cs, tn.end, func(c call, at int64) int { return cmp.Compare(c.start, at) })
			if i < len(cs) && !validOp[cs[i].key] {
				w += tn.tokens
			}
		}
		want[inv.InvestigationID] = min(w, inv.Tokens)
	}
	rows, err := db.SQL().Query(`SELECT investigation_id, wasted_tokens FROM token_costs WHERE run_id = ?`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var revised, revisedWasted, n int
	for rows.Next() {
		var id, got int64
		if err := rows.Scan(&id, &got); err != nil {
			t.Fatal(err)
		}
		n++
		if got != want[id] {
			t.Errorf("investigation %d: %d wasted tokens, want %d", id, got, want[id])
		}
		if inv := byID[id]; inv.FinalState == "completed" && invalidOp[id] {
			revised++
			if got > 0 {
				revisedWasted++
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(c.Investigations) {
		t.Errorf("token_costs has %d rows, want one per investigation (%d)", n, len(c.Investigations))
	}
	// Tokens are lognormal (never 0), so every turn that decided an invalid result counts.
	if revised < 10 || revisedWasted != revised {
		t.Errorf("%d of %d completed investigations with an invalid result show wasted tokens; want all, and at least 10", revisedWasted, revised)
	}
	w, all := refWastedTokens(c, byID)
	if got := wastedRatio(t, db, runID); math.Abs(got-w/all) > 1e-12 {
		t.Errorf("wasted_token_ratio %v, reference %v", got, w/all)
	}
	t.Logf("%d completed investigations revised an invalid result; all show wasted tokens (ratio %.4f)", revised, w/all)
}

// A worker crash's sign of trouble is the instant the worker died and is known when its
// lease expires (worker-crashes: lease 5m): every crashed disruption is known exactly 300 s
// after it began, and a recovery episode that a crash opened detects it after 300 s, not 0.
func TestCrashDetectedAtLease(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	db := openTestDB(t)
	runID, _ := simulateExample(t, db, "worker-crashes", 1, "workload.investigations=200")
	var signs, atLease, episodes, episodesAtLease int64
	if err := db.SQL().QueryRow(`SELECT count(*), count(*) FILTER (WHERE epoch_us(known_at) - epoch_us("at") = 300000000)
		FROM disruptions WHERE run_id = ? AND kind = 'crashed'`, runID).Scan(&signs, &atLease); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow(`SELECT count(*), count(*) FILTER (WHERE detection_seconds = 300)
		FROM recovery_episodes WHERE run_id = ? AND first_kind = 'crashed'`, runID).Scan(&episodes, &episodesAtLease); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d crash signs, %d episodes opened by a crash", signs, episodes)
	if signs < 20 || atLease != signs || episodes == 0 || episodesAtLease != episodes {
		t.Errorf("%d crash signs, %d known 300 s later; %d episodes opened by a crash, %d detected after 300 s; want every one",
			signs, atLease, episodes, episodesAtLease)
	}
}

func wastedRatio(t testing.TB, db *DB, runID string) float64 {
	m, err := db.Metrics(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return m.Get("wasted_token_ratio")
}

// The whole tree decides a full completion (transient-errors with one subagent on a fifth
// of the steps, 40% search failures and two attempts per operation: many subagents fail).
// With the default policy (reduce_scope) a root whose subagent failed still completes and
// counts in completion_rate, but never in full_scope_completion_rate; with fail it does not
// complete at all.
func TestFullScopeLooksAtTheWholeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	sets := []string{"workload.investigations=300", "workload.subagents={probability: 0.2, count: 1, max_depth: 1}",
		"faults[0].probability=0.4", "recovery.retry.max_attempts=2"}
	const lostQ = `SELECT count(*) FILTER (WHERE tree_reduced = 0),
		count(*)
		FROM roots r WHERE run_id = ? AND final_state = 'completed' AND EXISTS (
			SELECT 1 FROM investigations c WHERE c.run_id = r.run_id AND c.root_id = r.investigation_id
			AND c.investigation_id <> r.investigation_id AND c.final_state = 'terminated')`
	for _, tc := range []struct {
		policy string
		sets   []string
	}{{"reduce_scope", sets}, {"fail", append(slices.Clone(sets), "recovery.subagents.on_failure=fail")}} {
		db := openTestDB(t)
		runID, _ := simulateExample(t, db, "transient-errors", 1, tc.sets...)
		var full, lost int64
		if err := db.SQL().QueryRow(lostQ, runID).Scan(&full, &lost); err != nil {
			t.Fatal(err)
		}
		m, err := db.Metrics(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d completed roots lost a subagent; completion %.4f, full scope %.4f", tc.policy, lost, m.Get("completion_rate"), m.Get("full_scope_completion_rate"))
		if full != 0 {
			t.Errorf("%s: %d roots count as full although a subagent of theirs failed", tc.policy, full)
		}
		if tc.policy == "reduce_scope" && lost < 20 {
			t.Errorf("%s: only %d completed roots lost a subagent; the case tests nothing", tc.policy, lost)
		}
		if tc.policy == "fail" && lost != 0 {
			t.Errorf("fail: %d roots completed although a subagent of theirs failed", lost)
		}
	}
}
