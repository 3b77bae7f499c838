//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// runClockCase: runs whose last recorded instant is each kind of mark in turn, every other
// mark earlier, so that a run's end taken from the wrong mark (or the earliest of one) shows
// in makespan: "arrival", an investigation still in flight that arrived at 9m after another
// ended at 8m; "end", an investigation that ended at 6m; "span", a span still open at the
// horizon, 10m, after one that failed at 0; "transition", an
// investigation in flight whose last transition (at 5m) follows its spans; "execution", a
// tool's execution that finished at 7m after the reply was lost, and a hung one that
// would end later but never finished.
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
		"clock-end": {Investigations: []record.Investigation{inv(1, 0, 6*m)}, Spans: []record.Span{span(1, 1, m, 2*m, record.StatusOK)}},
		"clock-execution": {Investigations: []record.Investigation{inv(1, 0, 3*m)},
			Spans: []record.Span{span(1, 1, m, 3*m, record.StatusTimeout)},
			Executions: []record.Execution{
				{Tool: "api", OpKey: record.OpKey{Investigation: 1}, InvestigationID: 1, Execution: 1, Start: m, End: 7 * m, Outcome: "lost"},
				{Tool: "api", OpKey: record.OpKey{Investigation: 1}, InvestigationID: 1, Execution: 2, Start: 2 * m, End: 20 * m, Outcome: "hung"},
			}},
	}
	wants := map[string]float64{"clock-arrival": 540, "clock-span": 600, "clock-transition": 300, "clock-execution": 420, "clock-end": 360}
	return referenceCaseOf("the run's clock, from each kind of mark", runs, func(id string, want refResult) error {
		if got := want.Metrics.Get("makespan"); got != wants[id] {
			return fmt.Errorf("makespan %v, want %v", got, wants[id])
		}
		return nil
	})
}

func TestRunClockMarks(t *testing.T) { runViewCase(t, runClockCase()) }
