//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// runClockCase: runs whose last recorded instant is each kind of mark in turn, every other
// mark earlier, so that a run's end taken from the wrong mark (or the earliest of one) shows
// in makespan: "arrival", an investigation still in flight that arrived at 9m after another
// ended at 8m; "end", an investigation that ended a microsecond before 6m (so 6 minutes,
// not 7); "span", a span still open at the
// horizon, 10m, after one that failed at 0; "transition", an
// investigation in flight whose last transition (at 5m) follows its spans; "execution", a
// tool's execution that finished at 7m after the reply was lost, after one that finished at
// 1m, and a hung one that would end later but never finished.
func runClockCase() viewCase {
	const m = 60_000_000_000
	inv := func(id, arrived, ended int64) record.Investigation {
		r := record.Investigation{InvestigationID: id, RootID: id, ArrivedAt: arrived, FinalState: "running"}
		if ended >= 0 {
			r.Ended, r.EndedAt, r.FinalState = true, ended, "completed"
		}
		return r
	}
	span := func(id uint64, inv, start, end int64, st record.Status) record.Span {
		return record.Span{TraceID: inv, SpanID: id, InvestigationID: inv, Operation: record.OpExecuteTool, Tool: "api",
			HasKey: true, OpKey: record.OpKey{Investigation: inv}, Attempt: 1, Start: start, End: end, Status: st}
	}
	tr := func(inv, at int64, from, to, ev, act string) record.Transition {
		return record.Transition{InvestigationID: inv, At: at, From: from, To: to, Event: ev, Action: act, DecidedBy: "engine", Reason: ev}
	}
	runs := map[string]*record.Collector{
		"clock-arrival": {Investigations: []record.Investigation{inv(1, 0, 8*m), inv(2, 9*m, -1)},
			Spans: []record.Span{span(1, 1, m, 2*m, record.StatusOK)}},
		"clock-span": {Investigations: []record.Investigation{inv(1, 0, -1)},
			Spans:       []record.Span{span(1, 1, 0, 0, record.StatusError), span(2, 1, m, 10*m, record.StatusUnset)},
			Transitions: []record.Transition{tr(1, 0, "pending", "running", "start", "next_step"), tr(1, m, "running", "waiting", "send", "send")}},
		"clock-transition": {Investigations: []record.Investigation{inv(1, 0, -1)},
			Spans: []record.Span{span(1, 1, m, m, record.StatusError)},
			Transitions: []record.Transition{tr(1, 0, "pending", "running", "start", "next_step"), tr(1, m, "running", "waiting", "send", "send"),
				tr(1, m, "waiting", "recovering", "failed", "none"), tr(1, m, "recovering", "waiting", "failed", "retry"),
				tr(1, 5*m, "waiting", "running", "timer", "send")}},
		"clock-end": {Investigations: []record.Investigation{inv(1, 0, 6*m-1000)}, Spans: []record.Span{span(1, 1, m, 2*m, record.StatusOK)}},
		"clock-execution": {Investigations: []record.Investigation{inv(1, 0, 3*m)},
			Spans: []record.Span{span(1, 1, m, 3*m, record.StatusTimeout)},
			Executions: []record.Execution{
				{Tool: "api", OpKey: record.OpKey{Investigation: 1}, InvestigationID: 1, Execution: 1, Start: 0, End: m, Outcome: "ok"},
				{Tool: "api", OpKey: record.OpKey{Investigation: 1}, InvestigationID: 1, Execution: 1, Start: m, End: 7 * m, Outcome: "lost"},
				{Tool: "api", OpKey: record.OpKey{Investigation: 1}, InvestigationID: 1, Execution: 2, Start: 2 * m, End: 20 * m, Outcome: "hung"},
			}},
	}
	wants := map[string]float64{"clock-arrival": 540, "clock-span": 600, "clock-transition": 300, "clock-execution": 420, "clock-end": 359.999999}
	return referenceCaseOf("the run's clock, from each kind of mark", runs, func(id string, want refResult) error {
		if got := want.Metrics.Get("makespan"); got != wants[id] {
			return fmt.Errorf("makespan %v, want %v", got, wants[id])
		}
		return nil
	})
}

func TestRunClockMarks(t *testing.T) { runViewCase(t, runClockCase()) }

// treesCase: two trees. Root 1 is still in flight; its subagents 2 (completed, reduced
// scope) and 3 (terminated, reduced scope: not a reduced completion). Root 4 completed with
// a wrong result; its subagent 5 completed, full scope (the empty scope reads as full), valid.
func treesCase() viewCase {
	const s = 1_000_000_000
	sub := func(id, root int64, state, scope string, valid bool, tokens int64) record.Investigation {
		return record.Investigation{InvestigationID: id, ParentID: root, RootID: root, Depth: 1, ArrivedAt: s, Ended: true,
			EndedAt: 5 * s, FinalState: state, Scope: scope, TrulyValid: valid, Validated: valid, Tokens: tokens, Compute: 1.5, Escalations: 1}
	}
	c := &record.Collector{Investigations: []record.Investigation{
		{InvestigationID: 1, RootID: 1, FinalState: "running", Tokens: 7},
		sub(2, 1, "completed", record.ScopeReduced, true, 11),
		sub(3, 1, "terminated", record.ScopeReduced, false, 13),
		{InvestigationID: 4, RootID: 4, Ended: true, EndedAt: 9 * s, FinalState: "completed", Tokens: 17},
		sub(5, 4, "completed", "", true, 19),
	}}
	return referenceCaseOf("trees of subagents", map[string]*record.Collector{"trees": c}, func(string, refResult) error { return nil })
}

func TestTrees(t *testing.T) { runViewCase(t, treesCase()) }

// compareRoots checks the roots view's own columns against the records: one row per root
// (no parent), in_flight for a root that has not ended, and its tree's totals: subagents
// below it, tokens, compute and escalations of the whole tree, and the tree's completed
// investigations with a reduced scope or a wrong result.
func compareRoots(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	type tree struct {
		inFlight                       bool
		subagents, tokens, escalations int64
		reduced, wrong                 int64
		compute                        float64
	}
	want := map[int64]*tree{}
	for _, inv := range c.Investigations {
		if inv.ParentID == 0 {
			want[inv.InvestigationID] = &tree{inFlight: !inv.Ended, subagents: -1}
		}
	}
	for _, inv := range c.Investigations {
		tr := want[inv.RootID]
		if tr == nil {
			continue
		}
		tr.subagents++
		tr.tokens += inv.Tokens
		tr.compute += inv.Compute
		tr.escalations += int64(inv.Escalations)
		if inv.FinalState == "completed" && inv.Scope == record.ScopeReduced {
			tr.reduced++
		}
		if inv.FinalState == "completed" && !inv.TrulyValid {
			tr.wrong++
		}
	}
	rows, err := db.SQL().Query(`SELECT investigation_id, in_flight, subagents, tree_tokens, tree_compute,
		tree_escalations, tree_reduced, tree_wrong FROM roots WHERE run_id = ?`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var got tree
		if err := rows.Scan(&id, &got.inFlight, &got.subagents, &got.tokens, &got.compute, &got.escalations, &got.reduced, &got.wrong); err != nil {
			t.Fatal(err)
		}
		n++
		w := want[id]
		if w == nil {
			t.Fatalf("roots of %s: investigation %d is no root", runID, id)
		}
		if math.Abs(got.compute-w.compute) <= 1e-9*math.Max(1, w.compute) {
			got.compute = w.compute
		}
		if got != *w {
			t.Errorf("roots of %s: investigation %d: view %+v, records %+v", runID, id, got, *w)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Errorf("roots of %s: %d rows, %d roots in the records", runID, n, len(want))
	}
}
