package compute

import (
	"errors"
	"math"
	"testing"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// The row's agreement with the metric views is tested in package analysis
// (compute_test.go), on simulated runs; these tests pin the arithmetic on records built by
// hand, where every value is worked out below.

const sec = int64(1e9)

func TestRowOfHandBuiltRun(t *testing.T) {
	s := New(Options{Prices: &scenarios.Prices{Currency: "EUR", Tools: []scenarios.ToolPrice{{Tool: "t", Call: 1}}}})
	// Root 1 completes at 100 s after a failed attempt and a retry; root 2 is terminated.
	key := record.OpKey{Investigation: 1, Step: 1}
	s.Transition(&record.Transition{InvestigationID: 1, At: 10 * sec, From: "pending", To: "running"})
	s.Transition(&record.Transition{InvestigationID: 2, At: 30 * sec, From: "pending", To: "running"})
	s.Span(&record.Span{InvestigationID: 1, SpanID: 1, Operation: record.OpExecuteTool, Tool: "t", HasKey: true, OpKey: key,
		Attempt: 1, Start: 20 * sec, End: 21 * sec, Status: record.StatusError})
	s.Span(&record.Span{InvestigationID: 1, SpanID: 2, Operation: record.OpExecuteTool, Tool: "t", HasKey: true, OpKey: key,
		Attempt: 2, Start: 30 * sec, End: 40 * sec, Status: record.StatusOK})
	s.Span(&record.Span{InvestigationID: 1, SpanID: 3, Operation: record.OpValidate, HasKey: true, OpKey: key,
		Start: 40 * sec, End: 50 * sec, Status: record.StatusOK})
	s.Execution(&record.Execution{Tool: "t", OpKey: key, InvestigationID: 1, Execution: 1, Outcome: "ok", Delivered: true, Compute: 3, End: 40 * sec})
	s.Execution(&record.Execution{Tool: "t", OpKey: key, InvestigationID: 2, Execution: 2, Outcome: "ok", Compute: 1, SideEffects: true, End: 60 * sec})
	s.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, ArrivedAt: 0, Ended: true, EndedAt: 100 * sec,
		FinalState: "completed", TrulyValid: true, Validated: true, Tokens: 100})
	s.Investigation(&record.Investigation{InvestigationID: 2, RootID: 2, ArrivedAt: 20 * sec, Ended: true, EndedAt: 80 * sec,
		FinalState: "terminated", TerminationReason: "", Tokens: 300})
	r, err := s.Finish(7)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"started": 2, "completed": 1, "terminated": 1, "completion_rate": 0.5, "correct_completion_rate": 0.5,
		"validation_pass_rate": 1, "retry_amplification": 2, "duplicate_side_effects": 1, "discarded_results": 1,
		// one episode: the step's failed attempt at 20 s, recovered by the valid result at 50 s
		"median_recovery_time": 30, "p95_recovery_time": 30, "episode_recovery_rate": 1,
		"goodput_recovery_time": math.NaN(), "goodput_recovered": math.NaN(),
		"tokens_per_completion": 400, "wasted_token_ratio": 0.75, // root 2's 300 tokens of 400
		"compute_per_completion": 4, "wasted_compute_ratio": 0.25, // the duplicate's 1 of 4
		"correlated_failure_share": 0, "makespan": 100, "events": 7,
		"median_pending_time": 10,  // 10 s and 10 s
		"backlog_growth":      360, // 2 arrived, none ended by the last arrival: 2 per 20 s
		"peak_backlog":        2,
		"cost_per_completion": 2, "wasted_cost_ratio": 0.5, // two calls at 1, the failed one wasted
		"median_subagent_pending_time": math.NaN(),
	}
	for name, w := range want {
		if g := r.Get(name); !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
	if r.TerminationReasons["unspecified"] != 1 || len(r.TerminationReasons) != 1 || r.Currency != "EUR" {
		t.Errorf("reasons %v, currency %q", r.TerminationReasons, r.Currency)
	}
}

func TestParkWithoutGuardsFails(t *testing.T) {
	s := New(Options{})
	s.Transition(&record.Transition{InvestigationID: 1, At: sec, Action: "park", Reason: "breaker_open"})
	if _, err := s.Finish(0); !errors.Is(err, ErrUnguardedPark) {
		t.Fatalf("Finish: %v, want ErrUnguardedPark", err)
	}
}

// Finish lets go of the calls and results it reads: a second Finish is refused, not
// answered from what is left.
func TestFinishOnce(t *testing.T) {
	s := New(Options{})
	s.Span(&record.Span{InvestigationID: 1, SpanID: 2, Operation: record.OpExecuteTool, Tool: "search",
		Start: sec, End: 2 * sec, Status: record.StatusError})
	s.Investigation(&record.Investigation{InvestigationID: 1, ArrivedAt: 0, EndedAt: 3 * sec, FinalState: "terminated"})
	if _, err := s.Finish(0); err != nil {
		t.Fatalf("first Finish: %v", err)
	}
	if _, err := s.Finish(0); !errors.Is(err, ErrFinished) {
		t.Fatalf("second Finish: %v, want ErrFinished", err)
	}
}

func TestQuantileCont(t *testing.T) {
	for _, c := range []struct {
		x    []int64
		p, w float64
	}{{[]int64{1, 2, 3, 4}, 0.5, 2.5}, {[]int64{5}, 0.5, 5}, {[]int64{1, 3, 10}, 0.5, 3}, {nil, 0.5, math.NaN()}} {
		if g := quantileCont(c.x, c.p); !(g == c.w || math.IsNaN(g) && math.IsNaN(c.w)) {
			t.Errorf("quantileCont(%v, %v) = %v, want %v", c.x, c.p, g, c.w)
		}
	}
}

// A span after its investigation's row is not what the simulator writes: Finish says so
// rather than give a row without it.
func TestSpanAfterRowFails(t *testing.T) {
	s := New(Options{})
	s.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: sec, FinalState: "completed"})
	s.Span(&record.Span{InvestigationID: 1, SpanID: 1, Operation: record.OpExecuteTool, Tool: "t", HasKey: true, OpKey: record.OpKey{Investigation: 1, Step: 1}, Start: 2 * sec, End: 3 * sec, Status: record.StatusOK})
	if _, err := s.Finish(0); !errors.Is(err, ErrOrder) {
		t.Fatalf("Finish: %v, want ErrOrder", err)
	}
}

// An execution that ends after its investigation's row counts towards the waste of the
// investigation as it settled: complete (its root completed) or not.
func TestLateExecutionCountsAsItsInvestigation(t *testing.T) {
	s := New(Options{})
	s.Investigation(&record.Investigation{InvestigationID: 2, ParentID: 1, RootID: 1, Ended: true, EndedAt: sec, FinalState: "completed", TrulyValid: true})
	// Before root 1 settles: pending on it.
	s.Execution(&record.Execution{Tool: "t", InvestigationID: 2, Execution: 2, Outcome: "ok", Delivered: true, Compute: 1, End: 2 * sec})
	s.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, Ended: true, EndedAt: 3 * sec, FinalState: "completed", TrulyValid: true})
	// After: complete, so only the duplicate's compute is wasted.
	s.Execution(&record.Execution{Tool: "t", InvestigationID: 2, Execution: 1, Outcome: "ok", Delivered: true, Compute: 3, End: 4 * sec})
	s.Execution(&record.Execution{Tool: "t", InvestigationID: 1, Execution: 2, Outcome: "ok", Delivered: true, Compute: 4, End: 5 * sec})
	r, err := s.Finish(0)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Get("wasted_compute_ratio"); g != 5.0/8 {
		t.Errorf("wasted_compute_ratio = %v, want 5/8 (the two duplicates' 1 and 4 of 8)", g)
	}
}

// MaxHeld bounds the spans and transitions held for investigations still open, not those of
// investigations that have ended: three investigations of two spans each, each ending
// before the next starts, hold at most two at a time and fit a bound of 2; the same spans
// with every investigation still open until the end pass it, and Finish fails with
// ErrTooLarge however many records follow.
func TestMaxHeldCountsOpenWork(t *testing.T) {
	span := func(s *Sink, inv int64, id uint64) {
		s.Span(&record.Span{InvestigationID: inv, SpanID: id, Operation: record.OpExecuteTool, Tool: "t", HasKey: true,
			OpKey: record.OpKey{Investigation: inv, Step: 1}, Start: sec, End: 2 * sec, Status: record.StatusOK})
	}
	row := func(s *Sink, inv int64) {
		s.Investigation(&record.Investigation{InvestigationID: inv, RootID: inv, Ended: true, EndedAt: 3 * sec, FinalState: "completed"})
	}
	ended := New(Options{MaxHeld: 2})
	open := New(Options{MaxHeld: 2})
	for inv := int64(1); inv <= 3; inv++ {
		span(ended, inv, uint64(2*inv))
		span(ended, inv, uint64(2*inv+1))
		row(ended, inv)
		span(open, inv, uint64(2*inv))
		span(open, inv, uint64(2*inv+1))
	}
	for inv := int64(1); inv <= 3; inv++ {
		row(open, inv)
	}
	r, err := ended.Finish(0)
	if err != nil {
		t.Fatalf("ended one after another: %v", err)
	}
	if got := r.Values[metric.Index("started")]; got != 3 {
		t.Errorf("ended one after another: started %v, want 3", got)
	}
	if _, err := open.Finish(0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("open together: Finish %v, want ErrTooLarge", err)
	}
}

// Finish computes every metric of the table: a metric added to metric.All and not computed
// here makes Finish fail, naming it, on any run (here an empty one).
func TestFinishComputesEveryMetric(t *testing.T) {
	r, err := New(Options{}).Finish(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Values) != len(metric.All) {
		t.Fatalf("%d values for %d metrics", len(r.Values), len(metric.All))
	}
	for i, v := range r.Values {
		if math.Float64bits(v) == math.Float64bits(unset) {
			t.Errorf("%s not computed", metric.All[i].Name)
		}
	}
}
