package recovery_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"pgregory.net/rapid"
)

// A fleet of engines sharing one set of guards, driven by random events: mostly the events
// the last decision asks for (so investigations get deep into their lifecycle), sometimes
// anything at all (so refusals are exercised too), and at every consultation an adversarial
// supervisor.

type member struct {
	e       *recovery.Engine
	j       *journal
	rng     *rand.Rand
	seed    uint64
	last    recovery.Decision
	blocked map[[2]int32]bool
	// base is, per operation, the attempts sent before a human last approved a resend of
	// it: only such an approval may take an operation beyond max_attempts, by at most
	// max_attempts more.
	base map[[2]int32]int32
}

type fleet struct {
	seeds   uint64
	p       recovery.Policy
	g       *recovery.Guards
	tools   int
	now     int64
	members []*member
}

func drawPolicy(t *rapid.T) recovery.Policy {
	return recovery.Policy{
		Retry: recovery.RetryPolicy{
			MaxAttempts: rapid.IntRange(1, 4).Draw(t, "attempts"),
			Initial:     rapid.SampledFrom([]time.Duration{0, time.Second}).Draw(t, "initial"),
			Multiplier:  rapid.SampledFrom([]float64{1, 2, 3}).Draw(t, "mult"),
			Max:         rapid.SampledFrom([]time.Duration{0, 10 * time.Second}).Draw(t, "max"),
			Jitter:      recovery.Jitter(rapid.IntRange(0, 3).Draw(t, "jitter")),
			OnExhausted: recovery.Exhausted(rapid.IntRange(0, 1).Draw(t, "exhausted")),
		},
		InspectBeforeRetry: rapid.Bool().Draw(t, "inspect"),
		Revisions:          rapid.IntRange(0, 3).Draw(t, "revisions"),
		NonProgressRepeats: rapid.IntRange(0, 3).Draw(t, "repeats"),
		OnExhaustion:       recovery.OnExhaustion(rapid.IntRange(0, 2).Draw(t, "exhaustion")),
		PauseFor:           rapid.SampledFrom([]time.Duration{0, time.Minute}).Draw(t, "pause"),
		HumansAvailable:    rapid.Bool().Draw(t, "humans"),
		Supervisor:         rapid.Bool().Draw(t, "supervisor"),
		MaxInspections:     rapid.IntRange(0, 3).Draw(t, "inspections"),
		Subagents: recovery.SubagentPolicy{
			OnFailure:   recovery.SubagentAction(rapid.IntRange(0, 2).Draw(t, "on_subagent_failure")),
			MaxRespawns: rapid.IntRange(0, 2).Draw(t, "max_respawns"),
			Then:        recovery.SubagentAction(rapid.SampledFrom([]int{0, 2}).Draw(t, "then")),
		},
	}
}

func newFleet(t *rapid.T) *fleet {
	f := &fleet{p: drawPolicy(t), tools: rapid.IntRange(1, 2).Draw(t, "tools")}
	var b *recovery.BudgetConfig
	if rapid.Bool().Draw(t, "budget") {
		b = &recovery.BudgetConfig{
			Ratio:        rapid.SampledFrom([]float64{0, 0.1, 0.5}).Draw(t, "ratio"),
			MinPerSecond: rapid.SampledFrom([]float64{0, 0.1, 1}).Draw(t, "min_per_second"),
			MaxTokens:    rapid.SampledFrom([]float64{0, 1, 3}).Draw(t, "max_tokens"),
		}
	}
	var c *recovery.BreakerConfig
	if rapid.Bool().Draw(t, "breaker") {
		c = &recovery.BreakerConfig{
			Window:       rapid.SampledFrom([]time.Duration{10 * time.Second, time.Minute}).Draw(t, "window"),
			FailureRatio: rapid.SampledFrom([]float64{0.3, 0.5, 1}).Draw(t, "failure_ratio"),
			MinCalls:     rapid.IntRange(0, 4).Draw(t, "min_calls"),
			Cooldown:     rapid.SampledFrom([]time.Duration{0, 5 * time.Second, 30 * time.Second}).Draw(t, "cooldown"),
		}
	}
	f.g = recovery.NewGuards(f.tools, b, c)
	n := rapid.IntRange(1, 4).Draw(t, "engines")
	for i := 0; i < n; i++ {
		f.members = append(f.members, f.newMember())
	}
	return f
}

func (f *fleet) newMember() *member {
	f.seeds++
	seed := f.seeds
	j := &journal{}
	return &member{
		e: recovery.New(int64(seed), &f.p, j), j: j, seed: seed,
		rng: rand.New(rand.NewPCG(seed, 99)), blocked: map[[2]int32]bool{}, base: map[[2]int32]int32{},
	}
}

var allKinds = func() []recovery.EventKind {
	var ks []recovery.EventKind
	for k := recovery.EvStart; k <= recovery.EvSubagentFailed; k++ {
		ks = append(ks, k)
	}
	return ks
}()

// adversary is a supervisor that suggests anything, often asking to raise a budget or lift
// a block.
func adversary(t *rapid.T) recovery.Suggestion {
	return recovery.Suggestion{
		Action:      recovery.Action(rapid.IntRange(0, int(recovery.ActReplan)+1).Draw(t, "suggest")),
		RaiseBudget: rapid.IntRange(0, 3).Draw(t, "raise") == 0,
		LiftBlock:   rapid.IntRange(0, 3).Draw(t, "lift") == 0,
		Unavailable: rapid.IntRange(0, 5).Draw(t, "unavailable") == 0,
	}
}

// pick draws a member; one whose investigation ended makes room for a new one, so that the
// fleet keeps investigations at every stage.
func (f *fleet) pick(t *rapid.T) *member {
	i := rapid.IntRange(0, len(f.members)-1).Draw(t, "member")
	if f.members[i].e.State().Final() {
		f.members[i] = f.newMember()
	}
	return f.members[i]
}

// nextEvent draws the next event for m and the time it happens.
func (f *fleet) nextEvent(t *rapid.T, m *member) (recovery.Event, int64) {
	tool := rapid.IntRange(0, f.tools-1).Draw(t, "tool")
	if rapid.IntRange(0, 9).Draw(t, "wild") == 0 {
		tool = rapid.IntRange(-1, f.tools).Draw(t, "wild_tool")
	}
	ev := recovery.Event{Tool: tool, Fingerprint: uint64(rapid.IntRange(0, 2).Draw(t, "fp"))}
	now := f.now + int64(rapid.IntRange(0, 3000).Draw(t, "dt_ms"))*int64(time.Millisecond)
	plausible := rapid.IntRange(0, 4).Draw(t, "plausible") > 0
	var kinds []recovery.EventKind
	switch d := m.last; {
	case !plausible || m.e.State() == recovery.Pending && d.Action == recovery.ActNone:
		kinds = allKinds
		if m.e.State() == recovery.Pending && plausible {
			kinds = []recovery.EventKind{recovery.EvStart}
		}
	case d.Action == recovery.ActSend:
		kinds = []recovery.EventKind{recovery.EvSucceeded, recovery.EvFailed, recovery.EvTimedOut, recovery.EvCrashed, recovery.EvBudgetExceeded, recovery.EvSubagentFailed}
	case d.Action == recovery.ActValidate:
		kinds = []recovery.EventKind{recovery.EvValid, recovery.EvInvalid, recovery.EvFinished, recovery.EvCrashed}
	case d.Action == recovery.ActRetry || d.Action == recovery.ActPark || d.Action == recovery.ActPause:
		kinds = []recovery.EventKind{recovery.EvTimer, recovery.EvSend, recovery.EvCrashed, recovery.EvBudgetExceeded}
		now = max(now, d.At)
	case d.Action == recovery.ActInspect:
		kinds = []recovery.EventKind{recovery.EvInspected, recovery.EvCrashed}
		now = max(now, d.At)
	case d.Action == recovery.ActConsult:
		kinds = []recovery.EventKind{recovery.EvSupervisor}
	case d.Action == recovery.ActEscalate:
		kinds = []recovery.EventKind{recovery.EvHuman, recovery.EvCrashed}
	default: // next step, revise, replan, reduce scope
		kinds = []recovery.EventKind{recovery.EvSend, recovery.EvSend, recovery.EvPolicyViolation, recovery.EvBudgetExceeded, recovery.EvCrashed, recovery.EvFinished}
	}
	ev.Kind = rapid.SampledFrom(kinds).Draw(t, "kind")
	switch ev.Kind {
	case recovery.EvInspected:
		ev.Lookup = recovery.Lookup(rapid.IntRange(1, 4).Draw(t, "lookup"))
	case recovery.EvBudgetExceeded:
		ev.Resource = recovery.Resource(rapid.IntRange(1, 3).Draw(t, "resource"))
	case recovery.EvSupervisor:
		ev.Suggestion = adversary(t)
	case recovery.EvHuman:
		ev.Approved = rapid.Bool().Draw(t, "approved")
	}
	return ev, now
}

// walk takes n random steps: a member, an event for it, the engine's decision.
func (f *fleet) walk(t *rapid.T, n int) {
	for i := 0; i < n; i++ {
		m := f.pick(t)
		ev, now := f.nextEvent(t, m)
		f.step(t, m, ev, now)
	}
}

// step feeds one event to m and checks every invariant the event could break.
func (f *fleet) step(t *rapid.T, m *member, ev recovery.Event, now int64) {
	before, nrec := stateLine(m.e), len(m.j.recs)
	judgement := m.last.Judgement
	d, err := m.e.Observe(now, ev, recovery.Env{Rand: m.rng, Guards: f.g})
	if err != nil {
		if got := stateLine(m.e); got != before || len(m.j.recs) != nrec {
			t.Fatalf("refused %s changed the engine: %s → %s, %d new records", ev.Kind, before, got, len(m.j.recs)-nrec)
		}
		return
	}
	f.now = now
	if ev.Kind != recovery.EvSubagentFailed || d.Action == recovery.ActTerminate {
		// A respawn or a reduced scope leaves the engine where it was: what it waits for
		// is still what the last decision asked.
		m.last = d
	}
	if sp := f.p.Subagents; m.e.Respawns() > 0 && (sp.OnFailure != recovery.SubagentRespawn || m.e.Respawns() > sp.MaxRespawns) {
		t.Fatalf("%d respawns under policy %+v", m.e.Respawns(), sp)
	}
	maxAttempts := max(1, f.p.Retry.MaxAttempts)
	recs := m.j.recs[nrec:]
	for i := range recs {
		r := &recs[i]
		prev := recovery.Pending
		if k := nrec + i; k > 0 {
			prev = m.j.recs[k-1].To
		}
		switch {
		case r.From != prev:
			t.Fatalf("record %s→%s does not start where the last ended (%s)", r.From, r.To, prev)
		case r.Note && r.From != r.To:
			t.Fatalf("note record changes state %s→%s", r.From, r.To)
		case !r.Note && !recovery.Legal(r.From, r.To):
			t.Fatalf("illegal edge journaled: %s→%s on %s", r.From, r.To, r.Event)
		}
		op := [2]int32{r.Step, r.Revision}
		// A block is the policy's audit note; a refused supervisor suggestion is journaled
		// with the action it asked for, which may also read "block".
		if r.Note && r.Action == recovery.ActBlock && r.DecidedBy == recovery.ByPolicy {
			m.blocked[op] = true
		}
		if !r.Note && r.DecidedBy == recovery.ByHuman && r.To == recovery.Running {
			// An approval resends the same operation exactly when its retries ran out or
			// its completion is unknown, and never a blocked one; otherwise it starts a
			// new revision.
			resend := !m.blocked[op] && (r.Class == recovery.Transient || r.Class == recovery.UncertainCompletion)
			switch {
			case r.From != recovery.AwaitingHuman:
				t.Fatalf("human decision %s from %s", r.Action, r.From)
			case resend && r.Action != recovery.ActRetry:
				t.Fatalf("approval after %s (op %v) gave %s, want a resend of the same key", r.Class, op, r.Action)
			case !resend && r.Action != recovery.ActRevise:
				t.Fatalf("approval after %s (op %v, blocked %t) gave %s, want a new revision", r.Class, op, m.blocked[op], r.Action)
			case r.Action == recovery.ActRetry:
				m.base[op] = r.Attempt
			}
		}
		if int(r.Attempt-m.base[op]) > maxAttempts {
			t.Fatalf("op %v: record with attempt %d > max_attempts %d after the last approval at attempt %d",
				op, r.Attempt, maxAttempts, m.base[op])
		}
		if r.Action == recovery.ActSend && !r.Note && r.To == recovery.Waiting && m.blocked[op] {
			t.Fatalf("blocked operation %v sent", op)
		}
	}
	step, rev := m.e.Op()
	if (d.Action == recovery.ActSend || d.Action == recovery.ActRetry) && m.blocked[[2]int32{step, rev}] {
		t.Fatalf("decision %s for blocked operation (%d, %d)", d.Action, step, rev)
	}
	if base := m.base[[2]int32{step, rev}]; m.e.Attempt()-int(base) > maxAttempts {
		t.Fatalf("attempt %d > max_attempts %d after the last approval at attempt %d", m.e.Attempt(), maxAttempts, base)
	}
	if m.e.Revisions() > f.p.Revisions {
		t.Fatalf("revisions %d > budget %d", m.e.Revisions(), f.p.Revisions)
	}
	if d.Action == recovery.ActConsult && len(d.Judgement.Allowed) == 0 {
		t.Fatalf("consultation with nothing allowed")
	}
	if ev.Kind == recovery.EvSupervisor {
		s := ev.Suggestion
		// No answer is decided like a refusal (the engine's default, one note), but it is
		// not counted as one.
		refused := s.Unavailable || s.RaiseBudget || s.LiftBlock || !slices.Contains(judgement.Allowed, s.Action)
		var notes int
		for _, r := range recs {
			if r.Note && r.Event == recovery.EvSupervisor {
				notes++
			}
		}
		switch {
		case d.Action == recovery.ActRetry || d.Action == recovery.ActSend:
			t.Fatalf("supervisor %+v obtained %s", s, d.Action)
		case refused && (d.DecidedBy == recovery.BySupervisor || notes != 1):
			t.Fatalf("guardrail let %+v through (allowed %v): %s by %s, %d refusal notes", s, judgement.Allowed, d.Action, d.DecidedBy, notes)
		case !refused && (d.DecidedBy != recovery.BySupervisor || notes != 0):
			t.Fatalf("allowed suggestion %+v refused: %s by %s", s, d.Action, d.DecidedBy)
		}
	}
	// The guards' parked count is the number of engines whose last record parked them on
	// that tool's breaker (a subagent's respawn or lost work is a note that moves nothing).
	for tool := 0; tool < f.tools; tool++ {
		want := 0
		for _, o := range f.members {
			n := len(o.j.recs)
			for n > 0 && o.j.recs[n-1].Note && o.j.recs[n-1].Event == recovery.EvSubagentFailed {
				n--
			}
			if n > 0 {
				r := o.j.recs[n-1]
				if r.Action == recovery.ActPark && r.Reason == recovery.ReasonBreakerOpen && int(r.Tool) == tool && !o.e.State().Final() {
					want++
				}
			}
		}
		if got := f.g.Parked(tool); got != want {
			t.Fatalf("tool %d: guards count %d parked, engines say %d", tool, got, want)
		}
	}
}

func TestPropertyInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFleet(t)
		f.walk(t, rapid.IntRange(1, 300).Draw(t, "steps"))
		for _, m := range f.members {
			e, err := recovery.Replay(int64(m.seed), &f.p, m.j.recs)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if got, want := fullState(e), fullState(m.e); got != want {
				t.Fatalf("replay differs:\n  replayed %s\n  original %s", got, want)
			}
		}
	})
}

// TestPropertyFoldIsReplay checks journal compaction: replaying a journal's first records,
// copying that snapshot and folding the rest into the copy gives the engine that replaying
// every record gives, at any split, and leaves the snapshot as it was.
func TestPropertyFoldIsReplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFleet(t)
		f.walk(t, rapid.IntRange(1, 300).Draw(t, "steps"))
		m := f.members[0]
		recs := m.j.recs
		whole, err := recovery.Replay(int64(m.seed), &f.p, recs)
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		split := rapid.IntRange(0, len(recs)).Draw(t, "split")
		snap, err := recovery.Replay(int64(m.seed), &f.p, recs[:split])
		if err != nil {
			t.Fatalf("replay of the first %d records: %v", split, err)
		}
		before := fullState(snap)
		e := snap.Copy()
		if err := e.Fold(recs[split:]); err != nil {
			t.Fatalf("fold of records %d..%d: %v", split, len(recs), err)
		}
		if got, want := fullState(e), fullState(whole); got != want {
			t.Fatalf("split at %d of %d: folded %s, replayed %s", split, len(recs), got, want)
		}
		if got := fullState(snap); got != before {
			t.Fatalf("folding into a copy changed the snapshot: %s, was %s", got, before)
		}
	})
}

// TestPropertyReplayDecides checks that an engine rebuilt from its journal mid-run decides
// exactly like the original from then on, given the same events, random stream and guards.
func TestPropertyReplayDecides(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFleet(t)
		f.walk(t, rapid.IntRange(0, 100).Draw(t, "prefix"))
		m := f.members[0]
		// The original goes on with the fleet's guards; the copy with a clone of them. Both
		// get a fresh stream with the same seed.
		e2, err := recovery.Replay(int64(m.seed), &f.p, m.j.recs)
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		j2 := &journal{}
		e2.SetJournal(j2)
		g2 := f.g.Clone()
		seed := rapid.Uint64().Draw(t, "seed")
		r1, r2 := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
		m.rng = r1
		for i, n := 0, rapid.IntRange(1, 60).Draw(t, "suffix"); i < n; i++ {
			ev, now := f.nextEvent(t, m)
			nrec := len(m.j.recs)
			d1, err1 := m.e.Observe(now, ev, recovery.Env{Rand: r1, Guards: f.g})
			d2, err2 := e2.Observe(now, ev, recovery.Env{Rand: r2, Guards: g2})
			if fmt.Sprint(d1, err1) != fmt.Sprint(d2, err2) {
				t.Fatalf("after replay, %s at %d: original %+v %v, replayed %+v %v", ev.Kind, now, d1, err1, d2, err2)
			}
			if got, want := fmt.Sprint(j2.recs), fmt.Sprint(m.j.recs[nrec:]); got != want {
				t.Fatalf("after replay, %s: records differ:\n  replayed %s\n  original %s", ev.Kind, got, want)
			}
			j2.recs = j2.recs[:0]
			if err1 == nil {
				f.now, m.last = now, d1
			}
			if got, want := fullState(e2), fullState(m.e); got != want {
				t.Fatalf("after replay, %s: %s vs %s", ev.Kind, got, want)
			}
		}
	})
}

// TestPropertyReplayIgnoresReasons checks that replay decides on typed fields alone: every
// record's Reason is replaced (renamed, blanked, or swapped for another reason's text, such
// as breaker_open on a throttled parking), and the engine rebuilt from that journal must
// still decide exactly like the original from then on, which exercises the state that
// fullState cannot see (backoff delay, breaker parking, lookups spent).
func TestPropertyReplayIgnoresReasons(t *testing.T) {
	others := []string{"", recovery.ReasonBreakerOpen, recovery.ReasonBackoff, recovery.ReasonRetry,
		recovery.ReasonResumed, recovery.ReasonThrottled, "renamed"}
	rapid.Check(t, func(t *rapid.T) {
		f := newFleet(t)
		f.walk(t, rapid.IntRange(0, 150).Draw(t, "prefix"))
		m := f.members[0]
		recs := slices.Clone(m.j.recs)
		for i := range recs {
			if k := rapid.IntRange(0, len(others)).Draw(t, "perturb"); k < len(others) {
				recs[i].Reason = others[k]
			} else {
				recs[i].Reason = "x_" + recs[i].Reason
			}
		}
		e2, err := recovery.Replay(int64(m.seed), &f.p, recs)
		if err != nil {
			t.Fatalf("replay with perturbed reasons: %v", err)
		}
		if got, want := fullState(e2), fullState(m.e); got != want {
			t.Fatalf("replay with perturbed reasons differs:\n  replayed %s\n  original %s", got, want)
		}
		g2 := f.g.Clone()
		seed := rapid.Uint64().Draw(t, "seed")
		r1, r2 := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
		m.rng = r1
		for i, n := 0, rapid.IntRange(1, 60).Draw(t, "suffix"); i < n; i++ {
			ev, now := f.nextEvent(t, m)
			d1, err1 := m.e.Observe(now, ev, recovery.Env{Rand: r1, Guards: f.g})
			d2, err2 := e2.Observe(now, ev, recovery.Env{Rand: r2, Guards: g2})
			if fmt.Sprint(d1, err1) != fmt.Sprint(d2, err2) {
				t.Fatalf("after a replay with perturbed reasons, %s at %d: original %+v %v, replayed %+v %v", ev.Kind, now, d1, err1, d2, err2)
			}
			if err1 == nil {
				f.now, m.last = now, d1
			}
		}
	})
}
