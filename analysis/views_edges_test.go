//go:build duckdb_arrow

package analysis

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
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

// edgeModelCase: the incidents dataset of edgeIncidentsCase with the model in place of the
// tool: every attempt becomes a call to the model (a plan span of kind model_turn; a failed
// one a call refused by the provider's rate limit, error = rate_limited, tool "model",
// start = end, with a queue wait and compute that a model call does not count). A refusal is
// evidence of saturation, never of an incident: the model has no incident, and its
// saturation spans are the windows of edgeIncidentsCase's incidents (the same calls, the
// refusals in place of the failures, tested the same way). A tool attempt carrying the kind
// model_turn is still a tool attempt, and no retry of the model call whose key it shares.
func edgeModelCase() viewCase {
	var c record.Collector
	for _, s := range edgeIncidentsRecords().Spans {
		if s.Status == record.StatusBlocked || s.FaultID != "" {
			continue
		}
		s.Operation, s.Tool = record.OpPlan, ""
		s.Attrs = []record.Attr{{Key: "kind", Value: "model_turn"}}
		if s.Status == record.StatusError {
			s.Tool, s.FailureClass = "model", "transient"
			s.Attrs = append(s.Attrs, record.Attr{Key: "error", Value: "rate_limited"})
			s.QueueWait, s.Compute = 1000, 0.5
		}
		c.Spans = append(c.Spans, s)
	}
	// The tool attempt carrying the kind model_turn shares the key of a refused call at
	// minute 25 and comes next in number: it is no retry of that call (another tool).
	for _, s := range c.Spans {
		if s.Start == 25*minute && s.Status == record.StatusError {
			c.Spans = append(c.Spans, record.Span{TraceID: s.TraceID, SpanID: 1 << 40, InvestigationID: s.InvestigationID,
				Operation: record.OpExecuteTool, Tool: "api", HasKey: true, OpKey: s.OpKey, Attempt: s.Attempt + 1,
				Start: 25*minute + second, End: 25*minute + 2*second, Status: record.StatusOK,
				Attrs: []record.Attr{{Key: "kind", Value: "model_turn"}}})
			break
		}
	}
	c.Investigations = edgeIncidentsRecords().Investigations
	for _, sm := range edgeIncidentsRecords().Samples {
		sm.Tool = "model"
		c.Samples = append(c.Samples, sm)
	}
	vc := referenceCaseOf("the model's refused calls on the incident thresholds", map[string]*record.Collector{"edge-model": &c},
		func(id string, want refResult) error {
			if got := incidentWindows(want.Incidents, "model"); len(got) != 0 {
				return fmt.Errorf("the model's incidents %v, want none (refusals are no incident evidence)", got)
			}
			var got [][2]int64
			for _, sp := range want.Saturation {
				if sp.Tool == "model" {
					got = append(got, [2]int64{sp.Start, sp.End})
				}
			}
			if w := edgeIncidentWindows(); !slices.Equal(got, w) {
				return fmt.Errorf("the model's saturation %v, want %v", got, w)
			}
			return nil
		})
	check := vc.check
	vc.check = func(t testing.TB, db *DB) {
		check(t, db)
		// A model call has no queue wait and no compute, whatever its span says; its refusals
		// are counted in its minutes.
		r := query(t, db, `SELECT count(*), count(*) FILTER (WHERE queue_wait <> 0 OR compute <> 0) FROM calls
			WHERE run_id = 'edge-model' AND tool = 'model'`)
		if n := r[0][0].(int64); n != int64(len(c.Spans)-1) || r[0][1].(int64) != 0 {
			t.Errorf("calls of the model: %v (calls, with a queue wait or compute), want %d, 0", r[0], len(c.Spans)-1)
		}
		var refused int64
		for _, s := range c.Spans {
			if s.Status == record.StatusError {
				refused++
			}
		}
		r = query(t, db, `SELECT sum(refused)::BIGINT, sum(failed_attempts)::BIGINT FROM tool_minutes WHERE run_id = 'edge-model' AND tool = 'model'`)
		if r[0][0] != refused || r[0][1] != refused {
			t.Errorf("the model's minutes: %v refused and failed, want %d", r[0], refused)
		}
	}
	return vc
}

func TestModelCallsOnThresholds(t *testing.T) { runViewCase(t, edgeModelCase()) }

// toolStatsExtra is what compareToolStatsExtra checks of a tool_stats row besides the
// counts of compareToolStats.
type toolStatsExtra struct {
	invalid                          int64
	amplification, meanWait, p95Wait float64 // NaN: NULL
	incidentMinutes                  float64
	incidentFailed                   int64
	episodes                         int64
	medianRecovery, p95Recovery      float64 // NaN: NULL
}

// compareToolStatsExtra checks tool_stats's invalid attempts, amplification and queue waits
// against the records (a model call waits 0), and its incident and recovery columns against
// the reference's incidents and episodes.
func compareToolStatsExtra(t testing.TB, db *DB, runID string, c *record.Collector, want refResult) {
	t.Helper()
	ref := map[string]*toolStatsExtra{}
	waits := map[string][]float64{}
	ops := map[string]float64{}
	get := func(tool string) *toolStatsExtra {
		if ref[tool] == nil {
			ref[tool] = &toolStatsExtra{}
		}
		return ref[tool]
	}
	for _, cl := range refCalls(c) {
		w := float64(cl.s.QueueWait) / 1e9
		if cl.tool == "model" {
			w = 0
			if !cl.retry {
				ops["model"]++
			}
		}
		waits[cl.tool] = append(waits[cl.tool], w)
		if cl.s.Status == record.StatusInvalid {
			get(cl.tool).invalid++
		}
	}
	keys := map[string]map[record.OpKey]bool{}
	for _, s := range c.Spans {
		if s.Operation == record.OpExecuteTool && s.Status != record.StatusBlocked {
			if keys[s.Tool] == nil {
				keys[s.Tool] = map[record.OpKey]bool{}
			}
			keys[s.Tool][s.OpKey] = true
		}
	}
	for tool, k := range keys {
		ops[tool] = float64(len(k))
	}
	for tool, ws := range waits {
		r := get(tool)
		slices.Sort(ws)
		sum := 0.0
		for _, w := range ws {
			sum += w
		}
		r.meanWait, r.p95Wait = sum/float64(len(ws)), quantile7(ws, 0.95)
		r.amplification = ratio(float64(len(ws)), ops[tool])
	}
	for _, inc := range want.Incidents {
		r := get(inc.Tool)
		r.incidentMinutes += inc.Minutes()
		r.incidentFailed += inc.Failed
	}
	secs := map[string][]float64{}
	for _, ep := range want.Episodes {
		get(ep.Tool).episodes++
		secs[ep.Tool] = append(secs[ep.Tool], ep.Seconds)
	}
	for tool, r := range ref {
		s := secs[tool]
		slices.Sort(s)
		r.medianRecovery, r.p95Recovery = quantile7(s, 0.5), quantile7(s, 0.95)
		if _, ok := waits[tool]; !ok {
			r.amplification, r.meanWait, r.p95Wait = math.NaN(), math.NaN(), math.NaN()
		}
	}
	rows, err := db.SQL().Query(`SELECT tool, invalid, amplification, mean_queue_wait, p95_queue_wait, incident_minutes,
		incident_failed_attempts, recovery_episodes, median_recovery_time, p95_recovery_time
		FROM tool_stats WHERE run_id = ? ORDER BY tool`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var tool string
		var g toolStatsExtra
		var f [5]sql.NullFloat64
		if err := rows.Scan(&tool, &g.invalid, &f[0], &f[1], &f[2], &g.incidentMinutes, &g.incidentFailed, &g.episodes, &f[3], &f[4]); err != nil {
			t.Fatal(err)
		}
		w, ok := ref[tool]
		if !ok { // no call and no episode: every ratio and quantile undefined
			nan := math.NaN()
			w = &toolStatsExtra{amplification: nan, meanWait: nan, p95Wait: nan, medianRecovery: nan, p95Recovery: nan}
		}
		for i, p := range []*float64{&g.amplification, &g.meanWait, &g.p95Wait, &g.medianRecovery, &g.p95Recovery} {
			*p = math.NaN()
			if f[i].Valid {
				*p = f[i].Float64
			}
		}
		wf := []float64{w.amplification, w.meanWait, w.p95Wait, w.medianRecovery, w.p95Recovery}
		for i, gv := range []float64{g.amplification, g.meanWait, g.p95Wait, g.medianRecovery, g.p95Recovery} {
			if !(gv == wf[i] || math.IsNaN(gv) && math.IsNaN(wf[i]) || math.Abs(gv-wf[i]) <= 1e-9*math.Max(1, math.Abs(wf[i]))) {
				t.Errorf("tool_stats %s of %s: amplification, mean and p95 queue wait, median and p95 recovery: view %v, reference %v",
					tool, runID, []float64{g.amplification, g.meanWait, g.p95Wait, g.medianRecovery, g.p95Recovery}, wf)
				break
			}
		}
		if math.Abs(g.incidentMinutes-w.incidentMinutes) <= 1e-9*math.Max(1, w.incidentMinutes) {
			g.incidentMinutes = w.incidentMinutes
		}
		if g.invalid != w.invalid || g.incidentMinutes != w.incidentMinutes || g.incidentFailed != w.incidentFailed || g.episodes != w.episodes {
			t.Errorf("tool_stats %s of %s: invalid, incident minutes, incident failed attempts, episodes: view %d %v %d %d, reference %d %v %d %d",
				tool, runID, g.invalid, g.incidentMinutes, g.incidentFailed, g.episodes, w.invalid, w.incidentMinutes, w.incidentFailed, w.episodes)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
