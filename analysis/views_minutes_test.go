//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// compareCalls checks the calls view of a run row by row against the records (refCalls):
// every sent tool attempt and every model call, its minute, whether it failed and whether
// it is a retry; a tool attempt's queue wait and compute, 0 for a model call.
func compareCalls(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	type call struct {
		tool          string
		span          int64
		minute        int64
		failed, retry bool
		wait, compute float64
	}
	var want []call
	for _, cl := range refCalls(c) {
		w := call{tool: cl.tool, span: int64(cl.s.SpanID), minute: minuteOf(cl.s.Start), failed: isFailed(cl.s), retry: cl.retry}
		if cl.tool != "model" || cl.s.Operation == record.OpExecuteTool {
			w.wait, w.compute = float64(cl.s.QueueWait)/1e9, cl.s.Compute
		}
		want = append(want, w)
	}
	slices.SortFunc(want, func(a, b call) int { return cmp.Or(cmp.Compare(a.span, b.span), cmp.Compare(a.tool, b.tool)) })
	rows := query(t, db, `SELECT tool, span_id, minute, failed, retry, coalesce(queue_wait, 0), coalesce(compute, 0) FROM calls
		WHERE run_id = '`+runID+`' ORDER BY span_id, tool`)
	if len(rows) != len(want) {
		t.Fatalf("calls of %s: %d rows in the view, %d in the records", runID, len(rows), len(want))
	}
	for i, r := range rows {
		g := call{tool: r[0].(string), span: r[1].(int64), minute: r[2].(int64), failed: r[3].(bool), retry: r[4].(bool),
			wait: r[5].(float64), compute: r[6].(float64)}
		w := want[i]
		if math.Abs(g.wait-w.wait) <= 1e-9*math.Max(1, w.wait) && math.Abs(g.compute-w.compute) <= 1e-9*math.Max(1, w.compute) {
			g.wait, g.compute = w.wait, w.compute
		}
		if g != w {
			t.Fatalf("calls of %s: view %+v, records %+v", runID, g, w)
		}
	}
}

// compareAttempts checks the attempts view of a run row by row against the records: every
// execute_tool span that was sent (not blocked), whether it failed, whether it is a retry
// (a further attempt of its operation: the span's attempt number is above 1) and its minute.
func compareAttempts(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	type attempt struct {
		span          int64
		tool          string
		failed, retry bool
		minute        int64
	}
	var want []attempt
	for i := range c.Spans {
		s := &c.Spans[i]
		if s.Operation == record.OpExecuteTool && s.Status != record.StatusBlocked {
			want = append(want, attempt{span: int64(s.SpanID), tool: s.Tool, failed: isFailed(s), retry: s.Attempt > 1, minute: minuteOf(s.Start)})
		}
	}
	slices.SortFunc(want, func(a, b attempt) int { return cmp.Compare(a.span, b.span) })
	rows := query(t, db, `SELECT span_id, tool, failed, retry, minute FROM attempts WHERE run_id = '`+runID+`' ORDER BY span_id`)
	if len(rows) != len(want) {
		t.Fatalf("attempts of %s: %d rows in the view, %d in the records", runID, len(rows), len(want))
	}
	for i, r := range rows {
		g := attempt{span: r[0].(int64), tool: r[1].(string), failed: r[2].(bool), retry: r[3].(bool), minute: r[4].(int64)}
		if g != want[i] {
			t.Fatalf("attempts of %s: view %+v, records %+v", runID, g, want[i])
		}
	}
}

// compareExecutionCosts checks the execution_costs view of a run row by row against the
// records: each execution's reasons its compute may be wasted, worked out from the
// definition (docs/metrics.md, wasted_compute_ratio): a duplicate is any execution after the
// first of its operation at the tool; a discarded one did its work (ok or lost) without the
// result reaching the investigation; an incomplete one ran for an investigation that did
// not complete, or whose root did not (an investigation without a record never completed).
func compareExecutionCosts(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	completed := map[int64]bool{}
	root := map[int64]int64{}
	for _, inv := range c.Investigations {
		completed[inv.InvestigationID] = inv.Ended && inv.FinalState == "completed"
		root[inv.InvestigationID] = inv.RootID
	}
	type execution struct {
		tool, op                                 string
		execution                                int64
		duplicate, discarded, incomplete, wasted bool
	}
	var want, got []string // each execution printed, sorted (hand-built runs may repeat a key)
	for _, x := range c.Executions {
		r, known := root[x.InvestigationID]
		e := execution{tool: x.Tool, op: opKeyString(x.OpKey), execution: int64(x.Execution),
			duplicate:  x.Execution > 1,
			discarded:  (x.Outcome == "ok" || x.Outcome == "lost") && !x.Delivered,
			incomplete: !known || !completed[x.InvestigationID] || !completed[r]}
		e.wasted = e.duplicate || e.discarded || e.incomplete
		want = append(want, fmt.Sprintf("%+v", e))
	}
	for _, r := range query(t, db, `SELECT tool, op_key, execution, duplicate, discarded, incomplete, wasted FROM execution_costs
		WHERE run_id = '`+runID+`'`) {
		got = append(got, fmt.Sprintf("%+v", execution{tool: r[0].(string), op: r[1].(string), execution: int64(r[2].(int32)),
			duplicate: r[3].(bool), discarded: r[4].(bool), incomplete: r[5].(bool), wasted: r[6].(bool)}))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("execution_costs of %s:\nview    %v\nrecords %v", runID, got, want)
	}
}

// compareToolMinutes checks the tool_minutes table of a run row by row against the
// reference (refToolMinutes): every minute in which a tool received a call or was guarded,
// its counts, and whether one of the reference's incidents of the tool covers part of it.
func compareToolMinutes(t testing.TB, db *DB, runID string, c *record.Collector, incidents []refIncident) {
	t.Helper()
	invByID := map[int64]*record.Investigation{}
	for i := range c.Investigations {
		invByID[c.Investigations[i].InvestigationID] = &c.Investigations[i]
	}
	mins := refToolMinutes(c, refCalls(c), refSigns(c, invByID), incidents)
	keys := slices.SortedFunc(func(yield func(tm) bool) {
		for k := range mins {
			if !yield(k) {
				return
			}
		}
	}, func(a, b tm) int { return cmp.Or(cmp.Compare(a.tool, b.tool), cmp.Compare(a.m, b.m)) })
	rows := query(t, db, `SELECT tool, minute, attempts, failed_attempts, retries, refused, parked, throttled, guarded, in_incident,
		epoch_us(start) FROM tool_minutes WHERE run_id = '`+runID+`' ORDER BY tool, minute`)
	if len(rows) != len(keys) {
		t.Fatalf("tool_minutes of %s: %d rows in the table, %d in the reference", runID, len(rows), len(keys))
	}
	for i, r := range rows {
		k, w := keys[i], *mins[keys[i]]
		g := refMinute{attempts: r[2].(int64), failed: r[3].(int64), retries: r[4].(int64), refused: r[5].(int64), parked: r[6].(int64),
			throttled: r[7].(int64), guarded: r[8].(bool), inIncident: r[9].(bool)}
		if got := (tm{r[0].(string), r[1].(int64)}); got != k || g != w {
			t.Fatalf("tool_minutes of %s: table %v %+v, reference %v %+v", runID, got, g, k, w)
		}
		if start := r[10].(int64) - epochMicros; start != k.m*60_000_000 {
			t.Fatalf("tool_minutes of %s: %v starts at %d µs, want %d", runID, k, start, k.m*60_000_000)
		}
	}
}

// compareTokenCosts checks the token_costs view of a run investigation by investigation
// against the reference: its tokens, whether it or its root did not complete, and its
// wasted tokens.
func compareTokenCosts(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	invByID := map[int64]*record.Investigation{}
	for i := range c.Investigations {
		invByID[c.Investigations[i].InvestigationID] = &c.Investigations[i]
	}
	wasted := refWastedTokensByInvestigation(c, invByID)
	rows := query(t, db, `SELECT investigation_id, tokens, incomplete, wasted_tokens::DOUBLE FROM token_costs
		WHERE run_id = '`+runID+`' ORDER BY investigation_id`)
	if len(rows) != len(c.Investigations) {
		t.Fatalf("token_costs of %s: %d rows, %d investigations", runID, len(rows), len(c.Investigations))
	}
	done := func(id int64) bool { inv := invByID[id]; return inv != nil && inv.FinalState == "completed" }
	for _, r := range rows {
		id := r[0].(int64)
		inv := invByID[id]
		if inv == nil {
			t.Fatalf("token_costs of %s: investigation %d is not in the records", runID, id)
		}
		w, _ := r[3].(float64)
		incomplete := !(done(id) && done(inv.RootID))
		if r[1].(int64) != inv.Tokens || r[2].(bool) != incomplete || w != wasted[id] {
			t.Fatalf("token_costs of %s, investigation %d: view %v, reference tokens %d, incomplete %v, wasted %v",
				runID, id, r[1:], inv.Tokens, incomplete, wasted[id])
		}
	}
}
