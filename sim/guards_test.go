package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// The tests in this file call the simulator's guards directly with the inputs they are
// for: states no scenario reaches through Run today (a request cancelled while still
// queued, an escalation with no reviewer), or bookkeeping whose only visible effect is
// the number of events processed.

// TestOnlyWindowHooksAreTimed: the faults filed as timed (their begin and end scheduled as
// events) are exactly those whose kind has a begin or an end hook, zone_crash among the
// kinds registered; an outage, a window too, acts through its attempt and model hooks and
// gets no events of its own, nor does a fault over the whole run.
func TestOnlyWindowHooksAreTimed(t *testing.T) {
	s := testScenario()
	s.Workload.Workers = 4
	s.Faults = []scenarios.Fault{
		{ID: "out", Kind: scenarios.FaultOutage, Tool: "svc", At: time.Second, For: time.Second},
		{ID: "zone", Index: 1, Kind: scenarios.FaultZoneCrash, At: time.Second, For: time.Second, Share: 0.5},
		{ID: "flaky", Index: 2, Kind: scenarios.FaultTransient, Tool: "svc", Probability: 0.5},
	}
	w := built(t, s, 1, record.Discard{})
	if !slices.Equal(w.timed, []int32{1}) {
		t.Fatalf("timed faults %v; want [1], the zone crash alone", w.timed)
	}
	for k, fk := range faultKinds {
		if (fk.begin != nil || fk.end != nil) != (k == scenarios.FaultZoneCrash) {
			t.Errorf("fault kind %s: begin or end hook %t; this test expects zone_crash alone to have them", k, fk.begin != nil || fk.end != nil)
		}
	}
}

// TestCancelWhileQueued: a request whose attempt times out while it still waits in the
// tool's queue (cancel_on_timeout) is dropped: it stays in the queue, no longer counts as
// waiting (so the queue_limit has room for another), and never executes; when the server
// frees, the queue skips it and frees its slot. With one server and one timeout for every
// attempt, a queued request's deadline comes after that of the request in service, which
// is cancelled first and hands the server on, so Run does not reach this today: the test
// builds the state by hand. The requests belong to investigations that never arrived
// (agentFor finds none), so nothing is billed.
func TestCancelWhileQueued(t *testing.T) {
	s := testScenario()
	s.Tools[0].Concurrency, s.Tools[0].QueueLimit = 1, 1
	s.Tools[0].Timeout, s.Tools[0].CancelOnTimeout = time.Second, true
	s.Tools[0].Idempotency = scenarios.Natural
	var c record.Collector
	w := built(t, s, 1, &c)
	tl := &w.tools[0]
	req := func(inv int64) int32 {
		op := w.newOp(record.OpKey{Investigation: inv}, 0)
		ri := w.newRequest()
		op.refs++
		w.reqs[ri] = request{agent: 0, invID: inv, tool: 0, op: op, gen: w.reqs[ri].gen + 1,
			dur: int64(10 * time.Second)}
		return ri
	}
	r0, r1 := req(1), req(2)
	w.startService(r0)
	tl.queue.push(r1)
	if tl.waiting() != 1 {
		t.Fatalf("%d requests waiting before the cancel, want 1", tl.waiting())
	}
	w.now = int64(time.Second)
	w.cancel(r1)
	if !w.reqs[r1].dropped || tl.queue.size != 1 || tl.dropped != 1 || tl.waiting() != 0 || tl.busy != 1 {
		t.Fatalf("after the cancel: dropped %t, queue %d, dropped %d, waiting %d, busy %d; want true, 1, 1, 0, 1",
			w.reqs[r1].dropped, tl.queue.size, tl.dropped, tl.waiting(), tl.busy)
	}
	if len(c.Executions) != 0 {
		t.Fatalf("a request dropped from the queue recorded %+v", c.Executions)
	}
	w.now = int64(10 * time.Second)
	w.serviceDone(r0, w.reqs[r0].gen)
	if tl.busy != 0 || tl.queue.size != 0 || tl.dropped != 0 || w.reqLive != 0 || !slices.Contains(w.freeReqs, r1) {
		t.Fatalf("after the service: busy %d, queue %d, dropped %d, live requests %d, free slots %v; want 0, 0, 0, 0 and %d free",
			tl.busy, tl.queue.size, tl.dropped, w.reqLive, w.freeReqs, r1)
	}
	if len(c.Executions) != 1 || c.Executions[0].InvestigationID != 1 || c.Executions[0].Start != 0 ||
		c.Executions[0].End != int64(10*time.Second) || c.Executions[0].Outcome != "ok" {
		t.Fatalf("executions %+v; want the one of investigation 1, 0 to 10s", c.Executions)
	}
}

// built is the simulator Run would run for s and seed, before its first event.
func built(t *testing.T, s *scenarios.Scenario, seed uint64, sink record.Sink) *sim {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	w, err := newSim(s.Canonical(), seed, sink, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestTruthOutsideItsPreferences: the right action at a judgement point is the first of
// the case's preferences the engine allows (a bad configuration: terminate; a stuck agent
// or non-progress: replan; retries exhausted: escalate; otherwise revise); when it allows
// none of them, the first action it allows; when it allows nothing, terminate.
func TestTruthOutsideItsPreferences(t *testing.T) {
	w := built(t, testScenario(), 1, record.Discard{})
	agents := map[string]*agent{
		"plain": {stuckFrom: noStuck}, "bad config": {stuckFrom: noStuck, cfgBad: true},
		"stuck": {stuckFrom: 0}, "unstuck": {stuckFrom: 0, unstuck: true},
	}
	all := []recovery.Action{recovery.ActTerminate, recovery.ActEscalate, recovery.ActRevise, recovery.ActReplan}
	for _, c := range []struct {
		a       string
		point   recovery.Point
		allowed []recovery.Action
		want    recovery.Action
	}{
		{"plain", recovery.PointInvalidOutput, all, recovery.ActRevise},
		{"bad config", recovery.PointInvalidOutput, all, recovery.ActTerminate},
		{"stuck", recovery.PointInvalidOutput, all, recovery.ActReplan},
		{"unstuck", recovery.PointInvalidOutput, all, recovery.ActRevise},
		{"plain", recovery.PointNonProgress, all, recovery.ActReplan},
		{"plain", recovery.PointRetriesExhausted, all, recovery.ActEscalate},
		{"plain", recovery.PointInvalidOutput, []recovery.Action{recovery.ActTerminate, recovery.ActEscalate}, recovery.ActEscalate},
		{"plain", recovery.PointInvalidOutput, []recovery.Action{recovery.ActRetry, recovery.ActReplan}, recovery.ActRetry},
		{"plain", recovery.PointInvalidOutput, []recovery.Action{recovery.ActReplan}, recovery.ActReplan},
		{"plain", recovery.PointInvalidOutput, nil, recovery.ActTerminate},
	} {
		if got := w.truth(agents[c.a], recovery.Judgement{Point: c.point, Allowed: c.allowed}); got != c.want {
			t.Errorf("%s, %s agent, allowing %v: truth %s, want %s", c.point, c.a, c.allowed, got, c.want)
		}
	}
}

// TestEscalationWithNoReviewer: the engine escalates only when a reviewer exists (with
// none it terminates the escalation itself), so an escalation that finds no reviewer is a
// bug: the run reports it as a violation and answers at once with a rejection, a review
// that took no time, and the investigation goes on as a rejected one does. The test builds
// a run whose policy counts on a reviewer and takes the reviewer away before it starts.
func TestEscalationWithNoReviewer(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 1
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Recovery.Retry.MaxAttempts = 2
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 1, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)}}
	s.Faults = []scenarios.Fault{{ID: "down", Kind: scenarios.FaultOutage, Tool: "svc", At: 0, For: time.Hour}}
	var c record.Collector
	w := built(t, s, 1, &c)
	w.humans.n = 0
	w.run(context.Background())
	if v := w.res.Violations; len(v) != 1 || v[0] != "investigation 1 escalated with no reviewers" {
		t.Fatalf("violations %q; want the escalation with no reviewers", v)
	}
	var reviews []record.Span
	for _, sp := range c.Spans {
		if sp.Operation == record.OpHumanReview {
			reviews = append(reviews, sp)
		}
	}
	if len(reviews) != 1 || reviews[0].Start != reviews[0].End || reviews[0].QueueWait != 0 ||
		!slices.Contains(reviews[0].Attrs, record.Attr{Key: "approved", Value: "false"}) {
		t.Fatalf("human reviews %+v; want one rejection that took no time", reviews)
	}
	if len(c.Investigations) != 1 || c.Investigations[0].FinalState != "terminated" ||
		c.Investigations[0].EndedAt != reviews[0].End {
		t.Fatalf("investigations %+v; want investigation 1 terminated when it was rejected", c.Investigations)
	}
}

// TestReviewOfEachClass: an escalation is reviewed with its failure class's review time and
// approval rate (non_progress, the last class, here 1m and never approved), and a class
// beyond the last, which the engine does not send, with the defaults (10m, always approved)
// instead of indexing past the per-class tables.
func TestReviewOfEachClass(t *testing.T) {
	never, minute := 0.0, scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)}
	s := testScenario()
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 2, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)},
		ByClass:    []scenarios.HumanCase{{Class: "non_progress", Approve: &never, ReviewTime: &minute}}}
	w := built(t, s, 1, record.Discard{})
	for i, c := range []struct {
		class    recovery.Class
		want     recovery.Class
		took     time.Duration
		approved bool
	}{
		{recovery.NonProgress, recovery.NonProgress, time.Minute, false},
		{recovery.NonProgress + 1, recovery.NoFailure, 10 * time.Minute, true},
	} {
		a := &agent{slot: int32(i), id: int64(i + 1), live: true}
		w.agents = append(w.agents, a)
		w.humans.enqueue(w, a, c.class)
		r := w.humans.desk[i]
		if r.class != c.want || r.approved != c.approved || r.slot != a.slot {
			t.Errorf("class %d: review %+v; want class %s, approved %t", c.class, r, c.want, c.approved)
		}
		var end int64 = -1
		for _, e := range w.h.ev {
			if e.kind == evReviewed && e.ent == int32(i) {
				end = e.at
			}
		}
		if end != int64(c.took) {
			t.Errorf("class %d: review ends at %d, want %d", c.class, end, int64(c.took))
		}
	}
}

// TestAdmitOutcomes: admit answers a model call with its refusal ("" when admitted), the
// fault that refused it (-1 when none did, an admitted call included) and the latency
// factor of an admitted call (a brownout's slowdown during its window, else 1); the failure
// probability's draw is made only when there is one.
func TestAdmitOutcomes(t *testing.T) {
	type out struct {
		why   string
		fault int32
		slow  float64
	}
	check := func(name string, w *sim, want ...out) {
		t.Helper()
		for i, o := range want {
			why, fi, slow := w.admit(100)
			if got := (out{why, fi, slow}); got != o {
				t.Errorf("%s, call %d: %+v, want %+v", name, i+1, got, o)
			}
		}
	}
	s := testScenario()
	s.Model = &scenarios.ModelService{RequestsPerMinute: 1}
	w := built(t, s, 1, record.Discard{})
	check("one request a minute", w, out{"", -1, 1}, out{"rate_limited", -1, 1})
	// Without a failure probability the provider's stream, which serves only that draw,
	// is left untouched.
	if w.model.rng.Uint64() != stream(1, nsModel, 0).Uint64() {
		t.Errorf("a provider without failures drew from its stream")
	}
	s.Model = &scenarios.ModelService{Failure: 1}
	check("failing calls", built(t, s, 1, record.Discard{}), out{"model_error", -1, 1})
	s.Model = nil
	s.Faults = []scenarios.Fault{{ID: "slow", Kind: scenarios.FaultBrownout, Tool: scenarios.ModelTool, For: time.Minute, Slowdown: 3}}
	check("brownout", built(t, s, 1, record.Discard{}), out{"", -1, 3})
	s.Faults[0].Probability, s.Faults[0].Slowdown = 1, 1
	check("failing brownout", built(t, s, 1, record.Discard{}), out{"unavailable", 0, 1})
}

// TestFaultsWithoutProbabilityDrawNothing: a transient or lost_response fault with
// probability 0 hits nothing and leaves its own stream untouched, on a tool and on the
// model alike.
func TestFaultsWithoutProbabilityDrawNothing(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 20
	s.Tools[0].Timeout = time.Minute
	s.Faults = []scenarios.Fault{
		{ID: "t", Kind: scenarios.FaultTransient, Tool: "svc"},
		{ID: "m", Index: 1, Kind: scenarios.FaultTransient, Tool: scenarios.ModelTool},
		{ID: "l", Index: 2, Kind: scenarios.FaultLostResponse, Tool: "svc"},
	}
	var c record.Collector
	w := built(t, s, 1, &c)
	w.run(context.Background())
	if w.res.Completed != 20 || len(w.res.Violations) > 0 {
		t.Fatalf("result %+v", w.res)
	}
	for _, sp := range c.Spans {
		if sp.FaultID != "" {
			t.Fatalf("span %+v hit by a fault of probability 0", sp)
		}
	}
	for _, f := range w.faults {
		if f.rng.Uint64() != stream(1, nsFault, f.key).Uint64() {
			t.Errorf("fault %s drew from its stream", f.id)
		}
	}
}

// TestRegisterFaultRefuses: a fault kind registered twice, or without a build, panics
// before it reaches package scenarios' rules.
func TestRegisterFaultRefuses(t *testing.T) {
	for _, c := range []struct {
		fk   *faultKind
		want string
	}{
		{faultKinds[scenarios.FaultOutage], "sim: fault kind outage registered twice"},
		{&faultKind{rule: scenarios.FaultRule{Kind: "no-build"}}, "sim: fault kind no-build has no build"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("registerFault(%s) panicked with %v, want %q", c.fk.rule.Kind, r, c.want)
				}
			}()
			registerFault(c.fk)
		}()
	}
	if faultKinds["no-build"] != nil {
		t.Errorf("a kind without a build was registered")
	}
}

// journalProbe checks, at each transition record, that the journal of the investigation
// that wrote it holds the records since its last compaction: n mod journalCompact of its
// n records, the rest folded into its snapshot.
type journalProbe struct {
	record.Discard
	w       *sim
	n       map[int64]int
	checked int
	crashed int // records of takeovers
	bad     []string
}

func (p *journalProbe) Transition(tr *record.Transition) {
	a := p.w.cur
	p.n[tr.InvestigationID]++
	n := p.n[tr.InvestigationID]
	p.checked++
	if tr.Event == recovery.EvCrashed.String() {
		p.crashed++
	}
	if len(a.journal) != n%journalCompact || (a.snap != nil) != (n >= journalCompact) {
		p.bad = append(p.bad, fmt.Sprintf("investigation %d, record %d: journal of %d, snapshot %t",
			tr.InvestigationID, n, len(a.journal), a.snap != nil))
	}
}

// TestJournalCompactsEvery16: an open investigation's journal is folded into its snapshot
// every journalCompact records, not before: memory stays bounded, and a takeover replays the
// snapshot and the few records since. Investigations that retry long enough to fill it
// several times, with a takeover each, and complete.
func TestJournalCompactsEvery16(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 5
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Recovery.Retry = recovery.RetryPolicy{MaxAttempts: 40, Initial: time.Second, Multiplier: 1, Max: time.Second,
		Jitter: recovery.JitterNone, OnExhausted: recovery.ExhaustedTerminate}
	s.Recovery.Lease = time.Second
	s.Faults = []scenarios.Fault{
		{ID: "down", Kind: scenarios.FaultOutage, Tool: "svc", At: 0, For: 30 * time.Second},
		{ID: "crash", Index: 1, Kind: scenarios.FaultZoneCrash, At: 10 * time.Second, For: time.Second, Share: 1},
	}
	p := &journalProbe{n: map[int64]int{}}
	w := built(t, s, 1, p)
	p.w = w
	w.run(context.Background())
	if w.res.Completed != 5 || len(w.res.Violations) > 0 {
		t.Fatalf("result %+v", w.res)
	}
	if p.crashed == 0 {
		t.Fatal("no takeover: the test needs one")
	}
	if len(p.bad) > 0 {
		t.Fatalf("%d of %d records found the journal wrong, first: %s", len(p.bad), p.checked, p.bad[0])
	}
	for id, n := range p.n {
		if n < 3*journalCompact {
			t.Fatalf("investigation %d wrote %d records; the test needs several compactions", id, n)
		}
	}
}

// TestModelSpend: a model call can grow the tokens, and the cost too when the model has a
// price for its input or its output tokens (either alone is enough).
func TestModelSpend(t *testing.T) {
	w := built(t, testScenario(), 1, record.Discard{})
	for _, c := range []struct {
		in, out float64
		want    spend
	}{
		{0, 0, spendTokens}, {0.001, 0, spendTokens | spendCost}, {0, 0.001, spendTokens | spendCost}, {1, 1, spendTokens | spendCost},
	} {
		w.money.in, w.money.out = c.in, c.out
		if got := w.modelSpend(); got != c.want {
			t.Errorf("prices per token in %v, out %v: model spend %b, want %b", c.in, c.out, got, c.want)
		}
	}
}

// TestHashUnitPinned: hashUnit is a fixed function of its inputs, so a seed's decisions
// per (fault, investigation) are the same in every build: three values pinned, each the
// centre of its cell of width 2^-53, (2k+1)/2^54, strictly inside (0, 1) (a worker crash
// takes its logarithm). The last is at least 1/2, where the centre rounds to a multiple of
// 2^-53.
func TestHashUnitPinned(t *testing.T) {
	for _, c := range []struct {
		in   [4]uint64
		want float64
	}{
		{[4]uint64{1, 2, 3, 0}, 10894162123161.0 / (1 << 54)},
		{[4]uint64{0, 0, 0, 0}, 8120800492669341.0 / (1 << 54)},
		{[4]uint64{9, 0, 0, 7}, 12491384301482880.0 / (1 << 54)},
	} {
		if got := hashUnit(c.in[0], c.in[1], c.in[2], c.in[3]); got != c.want || !(got > 0 && got < 1) {
			t.Errorf("hashUnit%v = %.17g, want %.17g", c.in, got, c.want)
		}
	}
}

// TestOtherAction: a supervisor's wrong answer picks uniformly among the allowed actions
// other than the right one: the k-th of them, whether or not the right one is allowed.
func TestOtherAction(t *testing.T) {
	all := []recovery.Action{recovery.ActRetry, recovery.ActRevise, recovery.ActEscalate, recovery.ActTerminate}
	for _, c := range []struct {
		as    []recovery.Action
		right recovery.Action
		k     int
		want  recovery.Action
	}{
		{all, recovery.ActRevise, 0, recovery.ActRetry},
		{all, recovery.ActRevise, 1, recovery.ActEscalate},
		{all, recovery.ActRevise, 2, recovery.ActTerminate},
		{all, recovery.ActReplan, 3, recovery.ActTerminate},
		{all, recovery.ActRetry, 0, recovery.ActRevise},
		{all, recovery.ActRevise, 3, recovery.ActRevise},
	} {
		if got := otherAction(c.as, c.right, c.k); got != c.want {
			t.Errorf("otherAction(%v, %s, %d) = %s, want %s", c.as, c.right, c.k, got, c.want)
		}
	}
}

// TestTokensGrowth: with tokens.growth g, step s's model turn costs g^s times the drawn
// tokens: 100, 200, 400 for three steps at g = 2, and 100 at every step at g = 1.
func TestTokensGrowth(t *testing.T) {
	for _, c := range []struct {
		g    float64
		want []int64
	}{{2, []int64{100, 200, 400}}, {1, []int64{100, 100, 100}}} {
		s := testScenario()
		s.Workload.Investigations = 1
		s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}
		s.Workload.TokensGrowth = c.g
		var col record.Collector
		run(t, s, 1, &col)
		var got []int64
		for _, sp := range col.Spans {
			if sp.Operation == record.OpPlan && sp.InputTokens+sp.OutputTokens > 0 {
				got = append(got, sp.InputTokens+sp.OutputTokens)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("growth %v: turns of %v tokens, want %v", c.g, got, c.want)
		}
	}
}
