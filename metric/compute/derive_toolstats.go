package compute

import (
	"cmp"
	"maps"
	"slices"

	"github.com/mayday-sim/mayday/sim/record"
)

// ToolStat is a row of tool_stats (views/08_tool_stats.sql, docs/metrics.md): per tool of a
// run, its traffic, failures, guards' effect and cost. Tool is NULL for the one row of
// execute_tool and inspect spans without a tool, whose counts are all 0 (the view's joins
// match no NULL tool).
type ToolStat struct {
	RunID                  string     `db:"run_id"`
	Tool                   NullString `db:"tool"`
	Attempts               int64      `db:"attempts"`
	Operations             int64      `db:"operations"`
	Retries                int64      `db:"retries"`
	Amplification          NullFloat  `db:"amplification"`
	OK                     int64      `db:"ok"`
	Errors                 int64      `db:"errors"`
	Timeouts               int64      `db:"timeouts"`
	Invalid                int64      `db:"invalid"`
	Blocked                int64      `db:"blocked"`
	Inspections            int64      `db:"inspections"`
	MeanQueueWait          NullFloat  `db:"mean_queue_wait"`
	P95QueueWait           NullFloat  `db:"p95_queue_wait"`
	Executions             int64      `db:"executions"`
	DuplicateExecutions    int64      `db:"duplicate_executions"`
	DuplicateSideEffects   int64      `db:"duplicate_side_effects"`
	DiscardedResults       int64      `db:"discarded_results"`
	Compute                float64    `db:"compute"`
	WastedCompute          float64    `db:"wasted_compute"`
	IncidentMinutes        float64    `db:"incident_minutes"`
	Incidents              int64      `db:"incidents"`
	IncidentFailedAttempts int64      `db:"incident_failed_attempts"`
	RecoveryEpisodes       int64      `db:"recovery_episodes"`
	MedianRecoveryTime     NullFloat  `db:"median_recovery_time"`
	P95RecoveryTime        NullFloat  `db:"p95_recovery_time"`
}

// ToolStatsOptions configure a ToolStats.
type ToolStatsOptions struct {
	// UnknownQueueWait: the spans' queue waits are unknown (NULL in the trace, as for a run
	// imported from traces), so only the model's calls, whose wait is 0, have one.
	UnknownQueueWait bool
}

// ToolStats computes the tool_stats rows of one run from its records (a record.Sink).
//
// Memory: per tool, its counters and its sent attempts' non-zero queue waits (8 bytes
// each: quantile_cont is exact, so every value is kept; waits of 0, a fast failure or an
// idle tool, are only counted); per investigation in flight, its tool operations (for the
// distinct count of operations) and its model calls (a model call is a retry when the
// investigation's previous call, by start, failed); a byte per investigation (whether it
// is complete, see completion), and the compute of executions whose completeness is not
// known yet. Nothing grows with the investigations that have ended.
type ToolStats struct {
	opts     ToolStatsOptions
	tools    map[string]*toolAcc // by name; "" is a tool named '' (an execution's)
	nullTool bool                // an execute_tool or inspect span without a tool (NULL)

	live map[int64]*tsInv // investigations whose row has not arrived, by id

	done    completion
	pending map[int64][]toolCompute // compute of unresolved investigations' executions that only incompleteness wastes
}

var _ record.Sink = (*ToolStats)(nil)

// toolAcc is what tool_stats counts of one tool.
type toolAcc struct {
	attempts, operations, retries int64
	ok, errors, timeouts, invalid int64
	blocked, inspections          int64
	waits                         int64   // queue waits known (the average's count)
	waitSum                       float64 // seconds
	zeroWaits                     int64
	nonZero                       []int64 // ns
	executions, duplicates        int64
	dupSideEffects, discarded     int64
	compute, wasted               float64
	hasExecutions                 bool
}

type opTool struct {
	key  record.OpKey
	tool *toolAcc
}

type modelCall struct {
	start  int64 // µs
	span   uint64
	failed bool
}

type tsInv struct {
	ops   []opTool            // its distinct operations, each with its tool
	seen  map[opTool]struct{} // ops as a set, once they are more than opScan
	calls []modelCall
}

// opScan is how many operations an investigation's list is searched through for one
// before they are kept in a set too: a few dozen at most, most investigations.
const opScan = 32

// addOp adds k to the investigation's operations and reports whether it was new. The
// latest is looked at first: an operation's attempts follow one another.
func (e *tsInv) addOp(k opTool) bool {
	if e.seen != nil {
		if _, ok := e.seen[k]; ok {
			return false
		}
		e.seen[k] = struct{}{}
	} else {
		for i := len(e.ops) - 1; i >= 0; i-- {
			if e.ops[i] == k {
				return false
			}
		}
		if len(e.ops) == opScan {
			e.seen = make(map[opTool]struct{}, 2*opScan)
			for _, o := range e.ops {
				e.seen[o] = struct{}{}
			}
			e.seen[k] = struct{}{}
		}
	}
	e.ops = append(e.ops, k)
	return true
}

type toolCompute struct {
	tool    *toolAcc
	compute float64
}

// NewToolStats returns an empty ToolStats.
func NewToolStats(opts ToolStatsOptions) *ToolStats {
	t := &ToolStats{opts: opts, tools: map[string]*toolAcc{}, live: map[int64]*tsInv{},
		pending: map[int64][]toolCompute{}}
	t.done = newCompletion(t.resolved)
	return t
}

func (t *ToolStats) tool(name string) *toolAcc {
	a := t.tools[name]
	if a == nil {
		a = &toolAcc{}
		t.tools[name] = a
	}
	return a
}

func (t *ToolStats) inv(id int64) *tsInv {
	e := t.live[id]
	if e == nil {
		e = &tsInv{}
		t.live[id] = e
	}
	return e
}

// wait counts a sent call's queue wait (ns).
func (a *toolAcc) wait(ns int64) {
	a.waits++
	a.waitSum += seconds(ns)
	if ns == 0 {
		a.zeroWaits++
	} else {
		a.nonZero = append(a.nonZero, ns)
	}
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// status counts a sent call's status.
func (a *toolAcc) status(st record.Status) {
	switch st {
	case record.StatusOK:
		a.ok++
	case record.StatusError:
		a.errors++
	case record.StatusTimeout:
		a.timeouts++
	case record.StatusInvalid:
		a.invalid++
	}
}

// Span counts tool attempts, blocked operations, inspections and model calls.
func (t *ToolStats) Span(r *record.Span) {
	switch r.Operation {
	case record.OpExecuteTool, record.OpInspect:
		if r.Tool == "" {
			t.nullTool = true
			return // its counts go to the NULL tool, which the view's joins never match
		}
		a := t.tool(r.Tool)
		if r.Operation == record.OpInspect {
			a.inspections++
			return
		}
		if r.Status == record.StatusBlocked {
			a.blocked++
			return
		}
		a.attempts++
		a.status(r.Status)
		// retry is attempt > 1, NULL for an attempt without a number (stored NULL), which
		// the view counts neither as a retry nor, for the model's row, as no retry.
		if r.Attempt > 1 {
			a.retries++
		} else if r.Tool == "model" && r.Attempt != 0 {
			a.operations++ // the view's model row counts its calls that are no retry
		}
		if r.Tool != "model" && r.HasKey {
			if t.inv(r.OpKey.Investigation).addOp(opTool{r.OpKey, a}) {
				a.operations++
			}
		}
		if !t.opts.UnknownQueueWait {
			a.wait(r.QueueWait)
		}
	case record.OpPlan:
		if spanKind(r) != "model_turn" {
			return
		}
		a := t.tool("model")
		a.attempts++
		a.status(r.Status)
		a.wait(0)
		e := t.inv(r.InvestigationID)
		e.calls = append(e.calls, modelCall{us(r.Start), r.SpanID, failed(r.Status)})
	}
}

// settleCalls counts the retries among an investigation's model calls: a call whose
// previous one (by start, then span id) failed.
func (t *ToolStats) settleCalls(calls []modelCall) {
	if len(calls) == 0 {
		return
	}
	slices.SortFunc(calls, func(a, b modelCall) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.span, b.span))
	})
	a := t.tool("model")
	for i := range calls {
		if i > 0 && calls[i-1].failed {
			a.retries++
		} else {
			a.operations++
		}
	}
}

// Investigation settles the investigation's model calls and operations, and tells whether
// its executions' compute is wasted.
func (t *ToolStats) Investigation(r *record.Investigation) {
	if e := t.live[r.InvestigationID]; e != nil {
		t.settleCalls(e.calls)
		delete(t.live, r.InvestigationID)
	}
	t.done.row(r)
}

// resolved adds the held compute of investigation id's executions to the wasted compute
// when it is incomplete.
func (t *ToolStats) resolved(id int64, complete bool) {
	held, ok := t.pending[id]
	if !ok {
		return
	}
	delete(t.pending, id)
	if !complete {
		for _, h := range held {
			h.tool.wasted += h.compute
		}
	}
}

// Execution counts an execution at its tool.
func (t *ToolStats) Execution(r *record.Execution) {
	a := t.tool(r.Tool)
	a.hasExecutions = true
	a.executions++
	a.compute += r.Compute
	duplicate := r.Execution > 1
	discarded := (r.Outcome == "ok" || r.Outcome == "lost") && !r.Delivered
	if duplicate {
		a.duplicates++
		if r.SideEffects {
			a.dupSideEffects++
		}
	}
	if discarded {
		a.discarded++
	}
	if duplicate || discarded {
		a.wasted += r.Compute
		return
	}
	switch known, complete := t.done.known(r.InvestigationID); {
	case known && !complete:
		a.wasted += r.Compute
	case !known:
		held := t.pending[r.InvestigationID]
		if n := len(held); n > 0 && held[n-1].tool == a {
			held[n-1].compute += r.Compute
		} else {
			t.pending[r.InvestigationID] = append(held, toolCompute{a, r.Compute})
		}
	}
}

// Transition, Fault, Sample and Worker are not read.
func (t *ToolStats) Transition(*record.Transition) {}
func (t *ToolStats) Fault(*record.Fault)           {}
func (t *ToolStats) Sample(*record.Sample)         {}
func (t *ToolStats) Worker(*record.Worker)         {}

// Rows returns the rows of tool_stats of run runID, one per tool, by tool name (byte
// order), the NULL tool last. incidents and episodes are the run's rows of incidents and
// recovery_episodes, whose minutes, failed attempts and recovery times are added to their
// tools' rows (an episode without a tool counts nowhere). It reads what the records left
// and may be called once all have arrived; the model calls of investigations whose row
// never arrived are settled here.
func (t *ToolStats) Rows(runID string, incidents []Incident, episodes []Episode) []ToolStat {
	return t.RowsOf(runID, incidents, func(each func(tool string, secs float64)) {
		for _, ep := range episodes {
			if ep.Tool.Valid {
				each(ep.Tool.V, ep.Seconds)
			}
		}
	})
}

// RowsOf is Rows with the episodes given as each one's tool and seconds, in the rows'
// order, for every episode with a tool.
func (t *ToolStats) RowsOf(runID string, incidents []Incident, episodes func(each func(tool string, secs float64))) []ToolStat {
	for _, e := range t.live {
		t.settleCalls(e.calls)
		e.calls = nil
	}
	// Executions whose completeness never resolved are incomplete.
	for _, id := range slices.Sorted(maps.Keys(t.pending)) { // in one order: the sums' last bits depend on it
		for _, h := range t.pending[id] {
			h.tool.wasted += h.compute
		}
		delete(t.pending, id)
	}
	names := make([]string, 0, len(t.tools))
	for n := range t.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	type rec struct{ secs []float64 }
	recs := map[string]*rec{}
	episodes(func(tool string, secs float64) {
		r := recs[tool]
		if r == nil {
			r = &rec{}
			recs[tool] = r
		}
		r.secs = append(r.secs, secs)
	})
	rows := make([]ToolStat, 0, len(names)+1)
	for _, n := range names {
		a := t.tools[n]
		row := ToolStat{RunID: runID, Tool: String(n),
			Attempts: a.attempts, Operations: a.operations, Retries: a.retries,
			OK: a.ok, Errors: a.errors, Timeouts: a.timeouts, Invalid: a.invalid,
			Blocked: a.blocked, Inspections: a.inspections,
			Executions: a.executions, DuplicateExecutions: a.duplicates, DuplicateSideEffects: a.dupSideEffects,
			DiscardedResults: a.discarded, Compute: a.compute, WastedCompute: a.wasted}
		if a.attempts > 0 && a.operations > 0 {
			row.Amplification = Float(float64(a.attempts) / float64(a.operations))
		}
		if a.waits > 0 {
			row.MeanQueueWait = Float(a.waitSum / float64(a.waits))
			row.P95QueueWait = Float(a.p95Wait())
		}
		for _, in := range incidents {
			if in.Tool == n {
				row.Incidents++
				row.IncidentMinutes += in.Minutes
				row.IncidentFailedAttempts += in.FailedAttempts
			}
		}
		if r := recs[n]; r != nil {
			slices.Sort(r.secs)
			at := func(i int) float64 { return r.secs[i] }
			row.RecoveryEpisodes = int64(len(r.secs))
			row.MedianRecoveryTime = nullFloat(quantileContF(len(r.secs), at, 0.5))
			row.P95RecoveryTime = nullFloat(quantileContF(len(r.secs), at, 0.95))
		}
		rows = append(rows, row)
	}
	if t.nullTool {
		rows = append(rows, ToolStat{RunID: runID})
	}
	return rows
}

// p95Wait is quantile_cont(queue_wait, 0.95) over the tool's known waits: the non-zero
// ones sorted, with the zeros in their place among them.
func (a *toolAcc) p95Wait() float64 {
	slices.Sort(a.nonZero)
	neg, _ := slices.BinarySearch(a.nonZero, 0) // the negative waits (none in a simulated run)
	z := int(a.zeroWaits)
	at := func(i int) float64 {
		switch {
		case i < neg:
			return seconds(a.nonZero[i])
		case i < neg+z:
			return 0
		default:
			return seconds(a.nonZero[i-z])
		}
	}
	return quantileContF(int(a.waits), at, 0.95)
}
