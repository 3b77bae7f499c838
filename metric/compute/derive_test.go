package compute

import (
	"math"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Hand-built records at the corners of tool_stats, lifecycle and costs; package analysis
// holds the same accumulators equal to the views on whole runs.

func modelTurn(inv int64, span uint64, start int64, st record.Status) *record.Span {
	return &record.Span{InvestigationID: inv, SpanID: span, Operation: record.OpPlan, Start: start, End: start,
		Status: st, Attrs: []record.Attr{{Key: "kind", Value: "model_turn"}}}
}

func attempt(inv int64, tool string, step, n int32, st record.Status, wait int64) *record.Span {
	return &record.Span{InvestigationID: inv, Operation: record.OpExecuteTool, Tool: tool, HasKey: true,
		OpKey: record.OpKey{Investigation: inv, Step: step}, Attempt: n, Status: st, QueueWait: wait}
}

func statOf(t *testing.T, rows []ToolStat, tool string) ToolStat {
	t.Helper()
	for _, r := range rows {
		if r.Tool == String(tool) {
			return r
		}
	}
	t.Fatalf("no row of tool %q in %+v", tool, rows)
	return ToolStat{}
}

// A model call is a retry when the previous call of its investigation by start (then span
// id) failed, whatever order the calls arrive in; the calls of an investigation without a
// row are settled by Rows.
func TestToolStatsModelRetriesFollowStartOrder(t *testing.T) {
	ts := NewToolStats(ToolStatsOptions{})
	// Investigation 1: by start, error, ok, error, error: the 2nd and 4th follow a failure.
	// Sent out of order, and two at one instant ordered by span id.
	ts.Span(modelTurn(1, 4, 3000, record.StatusError))
	ts.Span(modelTurn(1, 2, 1000, record.StatusOK))
	ts.Span(modelTurn(1, 1, 1000, record.StatusError))
	ts.Span(modelTurn(1, 3, 2000, record.StatusError))
	ts.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, FinalState: "completed"})
	// Investigation 2 never gets a row: one failure then one call.
	ts.Span(modelTurn(2, 6, 500, record.StatusOK))
	ts.Span(modelTurn(2, 5, 400, record.StatusTimeout))
	m := statOf(t, ts.Rows("r", nil, nil), "model")
	const calls, retries = 6, 3 // spans 2 and 4 of investigation 1, span 6 of 2
	if m.Attempts != calls || m.Retries != retries || m.Operations != calls-retries {
		t.Errorf("attempts %d retries %d operations %d, want %d %d %d", m.Attempts, m.Retries, m.Operations, calls, retries, calls-retries)
	}
	if m.Errors != 3 || m.Timeouts != 1 || m.OK != 2 {
		t.Errorf("errors %d timeouts %d ok %d", m.Errors, m.Timeouts, m.OK)
	}
	if !m.MeanQueueWait.Valid || m.MeanQueueWait.V != 0 || m.P95QueueWait != Float(0) {
		t.Errorf("the model's queue waits: %+v %+v, want 0", m.MeanQueueWait, m.P95QueueWait)
	}
	if want := Float(float64(calls) / float64(calls-retries)); m.Amplification != want {
		t.Errorf("amplification %+v, want %+v", m.Amplification, want)
	}
}

// Operations of a tool are its distinct op keys; an attempt without a number counts for a
// tool named 'model' neither as a retry nor as a call that is none (the view's NULL); a
// span without a tool makes the row of the NULL tool, last, all zero.
func TestToolStatsOperationsAndNullTool(t *testing.T) {
	ts := NewToolStats(ToolStatsOptions{})
	ts.Span(attempt(1, "db", 1, 1, record.StatusError, 0))
	ts.Span(attempt(1, "db", 1, 2, record.StatusOK, 0))
	ts.Span(attempt(1, "db", 2, 1, record.StatusOK, 0))
	ts.Span(attempt(1, "model", 3, 0, record.StatusOK, 0))
	blocked := attempt(1, "db", 4, 1, record.StatusBlocked, 0)
	ts.Span(blocked)
	ts.Span(&record.Span{InvestigationID: 1, Operation: record.OpInspect, Tool: "db"})
	ts.Span(&record.Span{InvestigationID: 1, Operation: record.OpInspect})
	ts.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, FinalState: "completed"})
	rows := ts.Rows("r", nil, nil)
	if len(rows) != 3 || rows[2].Tool.Valid || rows[2] != (ToolStat{RunID: "r"}) {
		t.Fatalf("rows %+v: want db, model, then the NULL tool's, empty", rows)
	}
	db := statOf(t, rows, "db")
	if db.Attempts != 3 || db.Operations != 2 || db.Retries != 1 || db.Blocked != 1 || db.Inspections != 1 {
		t.Errorf("db: %+v", db)
	}
	if m := statOf(t, rows, "model"); m.Attempts != 1 || m.Operations != 0 || m.Retries != 0 || m.Amplification.Valid {
		t.Errorf("model: %+v", m)
	}
}

// p95_queue_wait is the interpolated quantile of every known wait, zeros (kept as a count)
// and negatives (which an import may carry) in their places.
func TestToolStatsQueueWaitQuantile(t *testing.T) {
	waits := []int64{0, 5e8, 0, -2e8, 3e9, 0, 7e8, 0, 0, 1, 2e9, 0}
	for n := 1; n <= len(waits); n++ {
		ts := NewToolStats(ToolStatsOptions{})
		for i, w := range waits[:n] {
			ts.Span(attempt(1, "db", int32(i), 1, record.StatusOK, w))
		}
		got := statOf(t, ts.Rows("r", nil, nil), "db")
		sorted := slices.Clone(waits[:n])
		slices.Sort(sorted)
		var sum float64
		for _, w := range sorted {
			sum += seconds(w)
		}
		want := quantileCont(sorted, 0.95) / 1e9
		if !got.P95QueueWait.Valid || math.Abs(got.P95QueueWait.V-want) > 1e-12 {
			t.Errorf("%d waits: p95 %+v, want %v", n, got.P95QueueWait, want)
		}
		if mean := sum / float64(n); math.Abs(got.MeanQueueWait.V-mean) > 1e-12 {
			t.Errorf("%d waits: mean %v, want %v", n, got.MeanQueueWait.V, mean)
		}
	}
	// Unknown waits (an import): none for the tool.
	ts := NewToolStats(ToolStatsOptions{UnknownQueueWait: true})
	ts.Span(attempt(1, "db", 1, 1, record.StatusOK, 5))
	if got := statOf(t, ts.Rows("r", nil, nil), "db"); got.MeanQueueWait.Valid || got.P95QueueWait.Valid {
		t.Errorf("unknown waits: %+v", got)
	}
}

// An execution's compute is wasted when duplicate or discarded, or when its investigation
// or its root did not complete, which may be known only after the execution (executions of
// a subagent before its root's row, of an investigation before its row, or of one whose
// row never comes).
func TestToolStatsWastedComputeWaitsForTheRoot(t *testing.T) {
	ts := NewToolStats(ToolStatsOptions{})
	co := NewCosts(CostsOptions{Prices: &scenarios.Prices{Currency: "EUR", Tools: []scenarios.ToolPrice{{Tool: "db", ComputeSecond: 2}}}})
	both := record.Tee{ts, co}
	exec := func(inv int64, compute float64) {
		both.Execution(&record.Execution{Tool: "db", InvestigationID: inv, Execution: 1, Outcome: "ok", Delivered: true, Compute: compute})
	}
	// Root 1 completes after its subagents 2 (completed) and 3 (terminated); root 4
	// terminates after its completed subagent 5; 6 has no row; 7's root 8 never has one.
	exec(2, 1)
	exec(3, 2)
	exec(5, 4)
	both.Investigation(&record.Investigation{InvestigationID: 2, ParentID: 1, RootID: 1, FinalState: "completed"})
	both.Investigation(&record.Investigation{InvestigationID: 3, ParentID: 1, RootID: 1, FinalState: "terminated"})
	both.Investigation(&record.Investigation{InvestigationID: 5, ParentID: 4, RootID: 4, FinalState: "completed"})
	exec(1, 8)
	both.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, FinalState: "completed"})
	both.Investigation(&record.Investigation{InvestigationID: 4, RootID: 4, FinalState: "terminated"})
	exec(2, 16) // after its root's row: complete
	exec(6, 32)
	both.Investigation(&record.Investigation{InvestigationID: 7, ParentID: 8, RootID: 8, FinalState: "completed"})
	exec(7, 64)
	both.Execution(&record.Execution{Tool: "db", InvestigationID: 1, Execution: 2, Outcome: "ok", Delivered: true, Compute: 128, SideEffects: true})
	both.Execution(&record.Execution{Tool: "db", InvestigationID: 1, Execution: 1, Outcome: "lost", Compute: 256})
	total := 1.0 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + 256
	wasted := 2.0 + 4 + 32 + 64 + 128 + 256 // 3 terminated, 5's root terminated, 6 and 8 have no row, a duplicate, a discarded result
	db := statOf(t, ts.Rows("r", nil, nil), "db")
	if db.Executions != 9 || db.DuplicateExecutions != 1 || db.DuplicateSideEffects != 1 || db.DiscardedResults != 1 {
		t.Errorf("db: %+v", db)
	}
	if db.Compute != total || db.WastedCompute != wasted {
		t.Errorf("compute %v wasted %v, want %v %v", db.Compute, db.WastedCompute, total, wasted)
	}
	if got := co.Rows("r"); len(got) != 1 || got[0] != (Cost{"r", String("EUR"), 2 * total, 2 * wasted}) {
		t.Errorf("costs %+v, want compute at 2 a second: %v, wasted %v", got, 2*total, 2*wasted)
	}
}

// Incidents and episodes count for their tools; an episode without a tool, and a tool that
// only they name, make no row.
func TestToolStatsIncidentsAndEpisodes(t *testing.T) {
	ts := NewToolStats(ToolStatsOptions{})
	ts.Span(attempt(1, "db", 1, 1, record.StatusError, 0))
	inc := []Incident{{Tool: "db", Minutes: 3, FailedAttempts: 5}, {Tool: "db", Minutes: 2, FailedAttempts: 1}, {Tool: "other", Minutes: 9}}
	secs := []float64{4, 1, 10, 2}
	var eps []Episode
	for _, s := range secs {
		eps = append(eps, Episode{Tool: String("db"), Seconds: s})
	}
	eps = append(eps, Episode{Seconds: 1000})
	rows := ts.Rows("r", inc, eps)
	if len(rows) != 1 {
		t.Fatalf("rows %+v: want db's only", rows)
	}
	db := rows[0]
	slices.Sort(secs)
	at := func(i int) float64 { return secs[i] }
	if db.Incidents != 2 || db.IncidentMinutes != 5 || db.IncidentFailedAttempts != 6 || db.RecoveryEpisodes != int64(len(secs)) ||
		db.MedianRecoveryTime != Float(quantileContF(len(secs), at, 0.5)) || db.P95RecoveryTime != Float(quantileContF(len(secs), at, 0.95)) {
		t.Errorf("db: %+v", db)
	}
	// (1,2,4,10): the median halfway between 2 and 4.
	if db.MedianRecoveryTime.V != 3 {
		t.Errorf("median %v, want 3", db.MedianRecoveryTime.V)
	}
}

// The lifecycle counts each investigation from its arrival, by its kind, with its
// transitions before or after its row; an investigation without a row counts nowhere; a
// transition from nothing leaves pending, one to its own state moves nothing; the run lasts
// until its last recorded instant, in minutes counted from its origin.
func TestLifecycleCountsMovesByKind(t *testing.T) {
	const minute = int64(60e9)
	origin := TimeOf(-2 * minute) // an imported run's time 0, two minutes before the records' 0
	l := NewLifecycle(origin)
	l.Transition(&record.Transition{InvestigationID: 1, At: 10, From: "", To: "running"})
	l.Transition(&record.Transition{InvestigationID: 1, At: 20, From: "running", To: "running"})
	l.Transition(&record.Transition{InvestigationID: 1, At: minute + 5, From: "running", To: "mystery"})
	l.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, ArrivedAt: 0, Ended: true, EndedAt: minute + 5})
	l.Investigation(&record.Investigation{InvestigationID: 2, ParentID: 1, RootID: 1, ArrivedAt: 30})
	l.Transition(&record.Transition{InvestigationID: 2, At: 2 * minute, From: "pending", To: "completed"}) // after its row
	l.Transition(&record.Transition{InvestigationID: 9, At: 40, To: "running"})                            // no row
	l.Execution(&record.Execution{Outcome: "hung", End: 100 * minute})
	l.Span(&record.Span{End: 3*minute + 1})
	if got, want := l.Minutes(), int64(5+1); got != want { // the span ends in minute 5 after the origin
		t.Fatalf("minutes %d, want %d", got, want)
	}
	rows := l.Rows("r")
	if len(rows) != 12 {
		t.Fatalf("%d rows, want 2 per minute", len(rows))
	}
	type counts struct{ pending, running, completed int64 }
	want := map[string][]counts{
		"root":     {{}, {}, {0, 1, 0}, {}, {}, {}}, // running from minute 2; 'mystery' from minute 3
		"subagent": {{}, {}, {1, 0, 0}, {1, 0, 0}, {0, 0, 1}, {0, 0, 1}},
	}
	for _, r := range rows {
		w := want[r.Agent][r.Minute]
		if got := (counts{r.Pending, r.Running, r.Completed}); got != w || r.At != origin+Time((r.Minute+1)*60e6) {
			t.Errorf("minute %d %s: %+v at %d, want %+v", r.Minute, r.Agent, r, r.At, w)
		}
	}
}

// Costs: a failed attempt's call is wasted even in a complete investigation; every price
// listed for a name counts (the view joins each); the model priced is the stored
// (redacted) name; an unpriced run has no row.
func TestCostsCorners(t *testing.T) {
	prices := &scenarios.Prices{Currency: "USD",
		Models: []scenarios.ModelPrice{{Model: "M", Input: 1, Output: 2}},
		Tools:  []scenarios.ToolPrice{{Tool: "db", Call: 0.5}, {Tool: "db", Call: 0.25}}}
	c := NewCosts(CostsOptions{Prices: prices, Redact: func(s string) string {
		if s == "secret-m" {
			return "M"
		}
		return s
	}})
	c.Span(attempt(1, "db", 1, 1, record.StatusTimeout, 0))
	c.Span(attempt(1, "db", 1, 2, record.StatusOK, 0))
	c.Span(attempt(1, "db", 2, 1, record.StatusBlocked, 0))
	c.Span(&record.Span{InvestigationID: 1, Operation: record.OpSupervise, Model: "secret-m", InputTokens: 2000, OutputTokens: 500})
	c.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, FinalState: "completed"})
	call := 0.5 + 0.25
	tokens := 2000.0/1000*1 + 500.0/1000*2
	if got := c.Rows("r"); len(got) != 1 || got[0] != (Cost{"r", String("USD"), 2*call + tokens, call}) {
		t.Errorf("costs %+v, want %v wasted %v", got, 2*call+tokens, call)
	}
	if got := NewCosts(CostsOptions{}).Rows("r"); got != nil {
		t.Errorf("unpriced: %+v", got)
	}
}
