package sim

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

const maxInt32 = math.MaxInt32

// humans is the reviewer pool: `reviewers` people work escalations in FIFO order.
type humans struct {
	n       int
	review  dist
	approve float64
	// Per failure class (indexed by recovery.Class): the review time and approval
	// probability of its escalations; the defaults where the scenario gives none.
	reviewBy  [recovery.NonProgress + 1]dist
	approveBy [recovery.NonProgress + 1]float64
	rng       *rand.Rand
	queue     []review // FIFO: queue[head:]
	head      int
	desk      []review // the review each reviewer is doing, for the reviewers hired so far
	free      []int32  // idle reviewers among those hired, the last to finish on top
}

type review struct {
	class    recovery.Class
	slot     int32
	id       int64
	tok      int32
	queued   int64
	started  int64
	approved bool
}

func (h *humans) init(c *scenarios.Humans, seed uint64) {
	if c == nil {
		return
	}
	// At most 2^31-1 reviewers (as Validate allows), so a reviewer's number fits an int32.
	// With none, nothing below is read: an escalation finds no one (enqueue).
	h.n, h.review, h.approve = max(min(c.Reviewers, maxInt32), 0), newDist(c.ReviewTime), c.Approve
	h.rng = stream(seed, nsHumans, 0)
	for cl := recovery.NoFailure; cl <= recovery.NonProgress; cl++ {
		h.reviewBy[cl], h.approveBy[cl] = h.review, h.approve
		if e := c.Case(cl.String()); e != nil {
			if e.Approve != nil {
				h.approveBy[cl] = *e.Approve
			}
			if e.ReviewTime != nil {
				h.reviewBy[cl] = newDist(*e.ReviewTime)
			}
		}
	}
	// Reviewers are hired when first needed (the lowest free number first, as if all were
	// idle from the start), so a pool of 2^31 reviewers costs what the busiest moment needs.
}

// idle takes an idle reviewer: the last to finish, else the next one never hired yet; ok is
// false when all n are busy.
func (h *humans) idle() (i int32, ok bool) {
	if n := len(h.free); n > 0 {
		i = h.free[n-1]
		h.free = h.free[:n-1]
		return i, true
	}
	if len(h.desk) < h.n {
		h.desk = append(h.desk, review{})
		return int32(len(h.desk) - 1), true
	}
	return 0, false
}

// enqueue queues a for a human review.
func (h *humans) enqueue(w *sim, a *agent, class recovery.Class) {
	tok := w.wait(a, phHuman)
	if h.n == 0 {
		// No one to ask: the engine terminates escalations itself when no human is
		// available, so this is reached only if it did not; answer "rejected" at once.
		w.checker.violate(w, "investigation %d escalated with no reviewers", a.id)
		w.push(w.now, evReviewed, -1, a.slot, tok)
		return
	}
	if class > recovery.NonProgress {
		class = recovery.NoFailure
	}
	r := review{class: class, slot: a.slot, id: a.id, tok: tok, queued: w.now}
	if i, ok := h.idle(); ok {
		h.start(w, i, r)
		return
	}
	if h.head*2 >= len(h.queue) {
		h.queue = append(h.queue[:0], h.queue[h.head:]...)
		h.head = 0
	}
	h.queue = append(h.queue, r)
}

func (h *humans) start(w *sim, i int32, r review) {
	r.started = w.now
	// The case decides the review: its class's time and approval rate (the defaults when
	// the scenario gives none, so the draws are the same as without classes).
	d := h.reviewBy[r.class].duration(h.rng)
	r.approved = chance(h.rng, h.approveBy[r.class])
	h.desk[i] = r
	w.push(w.now+d, evReviewed, i, r.slot, r.tok)
}

// reviewed ends reviewer i's review; the reviewer takes the next escalation in line.
func (w *sim) reviewed(i, slot, tok int32) {
	h := &w.humans
	var r review
	if i >= 0 {
		r = h.desk[i]
		if h.head < len(h.queue) {
			next := h.queue[h.head]
			h.head++
			h.start(w, i, next)
		} else {
			h.free = append(h.free, i)
		}
	} else {
		a := w.agents[slot]
		r = review{slot: slot, id: a.id, tok: tok, queued: w.now, started: w.now}
	}
	a := w.agentFor(r.slot, r.id)
	if a == nil || !a.waiting(phHuman, r.tok) {
		return
	}
	w.last = w.now
	a.settle()
	s := w.spanFor(a, record.OpHumanReview, w.newSpanID())
	s.Start, s.End, s.QueueWait = r.started, w.now, r.started-r.queued
	s.Status = record.StatusOK
	linkJudged(s, a)
	s.Attrs = append(s.Attrs[:0],
		record.Attr{Key: "decided_by", Value: recovery.ByHuman.String()},
		record.Attr{Key: "approved", Value: strconv.FormatBool(r.approved)})
	w.sink.Span(s)
	w.settled(a, recovery.Event{Kind: recovery.EvHuman, Approved: r.approved})
}

// supervisor is the judge consulted at judgement points. A `model` supervisor costs tokens
// and latency and picks the right action (which the simulator knows) with probability
// accuracy; a `rules` supervisor is the engine itself and is never consulted.
type supervisor struct {
	model    bool
	accuracy float64
	latency  int64
	tokens   int64
	diff     *scenarios.Difficulty
}

func (s *supervisor) init(c *scenarios.Supervisor) {
	s.model = c.Kind == "model"
	s.accuracy, s.latency, s.tokens = c.Accuracy, int64(c.Latency), c.Tokens
	s.diff = c.Difficulty
	if !s.model {
		s.accuracy = 1
	}
}

// accuracyFor is the chance of a right answer on the case the trajectory describes: the
// base accuracy, lowered by each attempt of the operation beyond the first, each failure
// class beyond the first and each step done (see scenarios.Difficulty).
func (s *supervisor) accuracyFor(t recovery.Trajectory) float64 {
	d := s.diff
	if d == nil {
		return s.accuracy
	}
	p := s.accuracy - d.PerAttempt*float64(max(t.Attempts-1, 0)) -
		d.PerClass*float64(max(t.Classes()-1, 0)) - d.PerStep*float64(t.Steps)
	return min(max(p, d.Floor), 1)
}

// truth is the action that serves the investigation best at a judgement point, as only the
// simulator can know: a bad configuration cannot be fixed by more work, a stuck agent needs
// a new plan, anything else deserves a human's look (or, with no reviewer and a policy
// that drops a step whose attempts ran out, going on without it).
func (w *sim) truth(a *agent, j recovery.Judgement) recovery.Action {
	var prefs [3]recovery.Action
	stuck := a.stuckFrom != noStuck && !a.unstuck
	switch {
	case a.cfgBad:
		prefs = [3]recovery.Action{recovery.ActTerminate, recovery.ActEscalate, recovery.ActReplan}
	case j.Point == recovery.PointNonProgress || stuck:
		prefs = [3]recovery.Action{recovery.ActReplan, recovery.ActEscalate, recovery.ActTerminate}
	case j.Point == recovery.PointRetriesExhausted && allowedAction(j.Allowed, recovery.ActReduceScope) &&
		!w.policy.HumansAvailable:
		// on_exhausted reduce_scope with no reviewer: an escalation would terminate, while
		// going on without the step can still complete.
		prefs = [3]recovery.Action{recovery.ActReduceScope, recovery.ActRevise, recovery.ActTerminate}
	case j.Point == recovery.PointRetriesExhausted:
		prefs = [3]recovery.Action{recovery.ActEscalate, recovery.ActRevise, recovery.ActTerminate}
	default:
		prefs = [3]recovery.Action{recovery.ActRevise, recovery.ActEscalate, recovery.ActTerminate}
	}
	for _, p := range prefs {
		if allowedAction(j.Allowed, p) {
			return p
		}
	}
	if len(j.Allowed) > 0 {
		return j.Allowed[0]
	}
	return recovery.ActTerminate
}

// otherAction is the k-th (from 0) of the actions in as other than right; right when there
// are not that many.
func otherAction(as []recovery.Action, right recovery.Action, k int) recovery.Action {
	for _, x := range as {
		if x == right {
			continue
		}
		if k == 0 {
			return x
		}
		k--
	}
	return right
}

func allowedAction(as []recovery.Action, a recovery.Action) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// consult asks the supervisor about a's judgement point. A model supervisor's consultation
// is a call to the model provider like a model turn: its rate limits and faults admit or
// refuse it, and an admitted one takes the supervisor's latency plus the provider's latency
// for its tokens (slowed by a brownout). A refused one gets no answer: the engine decides by
// its own rule.
func (w *sim) consult(a *agent, j recovery.Judgement) {
	right := w.truth(a, j)
	a.judgement, a.rightAction = j, right
	lat := int64(0)
	if w.super.model {
		lat = w.super.latency
		if w.exceeded(a, w.modelSpend()) != 0 {
			// The consultation would spend tokens past a budget: it is not made.
			w.unanswered(a, "budget_exceeded", -1)
			return
		}
		if w.model.active {
			// Not counted in the model's samples, which count the calls of the `calls` view:
			// the model turns.
			why, fi, slow := w.admit(w.super.tokens)
			if why != "" {
				w.unanswered(a, why, fi)
				return
			}
			d := float64(lat) + w.model.perTok*float64(w.super.tokens)
			lat = satInt(d * slow)
		}
	}
	sg := recovery.Suggestion{Action: right}
	if w.super.model && !chance(a.rng, w.super.accuracyFor(j.Trajectory)) {
		// A wrong answer: another allowed action, or a request the guardrails must refuse
		// (more budget, lifting a block, retrying what the policy stopped).
		u := a.rng.Float64()
		others := len(j.Allowed)
		if allowedAction(j.Allowed, right) {
			others--
		}
		switch {
		case u < 0.2 || (others == 0 && u < 0.6):
			sg = recovery.Suggestion{Action: right, RaiseBudget: true}
		case u < 0.3 || others == 0:
			sg = recovery.Suggestion{Action: right, LiftBlock: true}
		case u < 0.45:
			sg = recovery.Suggestion{Action: recovery.ActRetry}
		default:
			sg.Action = otherAction(j.Allowed, right, a.rng.IntN(others))
		}
	}
	a.sugg = sg
	tok := w.wait(a, phConsult)
	a.consultStart = w.now
	w.push(satAdd(w.now, lat), evSupervised, a.slot, tok, 0)
}

// unanswered records a consultation the model provider refused (why: rate_limited,
// model_error, unavailable; fi the fault, -1 none) and tells a's engine that no answer came.
// It spends no tokens.
func (w *sim) unanswered(a *agent, why string, fi int32) {
	w.noAnswer(a, w.now, why, fi)
	w.observe(a, recovery.Event{Kind: recovery.EvSupervisor, Suggestion: recovery.Suggestion{Unavailable: true}})
}

// noAnswer records a's consultation from start to now that got no answer (why, fault fi).
func (w *sim) noAnswer(a *agent, start int64, why string, fi int32) {
	s := w.spanFor(a, record.OpSupervise, w.newSpanID())
	s.Start, s.End = start, w.now
	s.Model = w.sc.Workload.Model
	s.Status = record.StatusError
	s.FailureClass = recovery.Transient.String()
	if fi >= 0 {
		s.FaultID = w.faults[fi].id
	}
	linkJudged(s, a)
	s.Attrs = append(s.Attrs[:0],
		record.Attr{Key: "decided_by", Value: recovery.BySupervisor.String()},
		record.Attr{Key: "point", Value: a.judgement.Point.String()},
		record.Attr{Key: "error", Value: why})
	s.Attrs = w.errorType(s.Attrs, fi)
	w.sink.Span(s)
}

// supervised delivers the supervisor's answer to a's engine.
func (w *sim) supervised(slot, tok int32) {
	a := w.agents[slot]
	if !a.waiting(phConsult, tok) {
		return
	}
	w.last = w.now
	a.settle()
	if w.super.model && w.model.active {
		if fi := w.modelDown(a.consultStart, w.now); fi >= 0 {
			// The model went down while the consultation was in flight: no answer comes.
			w.noAnswer(a, a.consultStart, "unavailable", fi)
			w.settled(a, recovery.Event{Kind: recovery.EvSupervisor, Suggestion: recovery.Suggestion{Unavailable: true}})
			return
		}
	}
	j, sg := &a.judgement, a.sugg
	s := w.spanFor(a, record.OpSupervise, w.newSpanID())
	s.Start, s.End = w.now, w.now
	if w.super.model {
		s.Start = a.consultStart
		s.Model = w.sc.Workload.Model
		n := w.super.tokens
		a.tokens = satAdd(a.tokens, n)
		a.cost += w.money.tokens(n)
		s.InputTokens, s.OutputTokens = n-n/4, n/4
	}
	s.Status = record.StatusOK
	linkJudged(s, a)
	s.Attrs = append(s.Attrs[:0],
		record.Attr{Key: "decided_by", Value: recovery.BySupervisor.String()},
		record.Attr{Key: "point", Value: j.Point.String()},
		record.Attr{Key: "suggestion", Value: sg.Action.String()},
		record.Attr{Key: "right_action", Value: a.rightAction.String()},
		record.Attr{Key: "correct", Value: strconv.FormatBool(sg.Action == a.rightAction && !sg.RaiseBudget && !sg.LiftBlock)})
	if sg.RaiseBudget {
		s.Attrs = append(s.Attrs, record.Attr{Key: "requests", Value: "raise_budget"})
	}
	if sg.LiftBlock {
		s.Attrs = append(s.Attrs, record.Attr{Key: "requests", Value: "lift_block"})
	}
	w.sink.Span(s)
	w.settled(a, recovery.Event{Kind: recovery.EvSupervisor, Suggestion: sg})
}

// linkJudged ties a span of a judgement about a (a human review, a supervisor consultation)
// to the operation under judgement and to what it used: the configuration and the last
// result.
func linkJudged(s *record.Span, a *agent) {
	if a.op != nil {
		s.HasKey, s.OpKey = true, a.op.key
	}
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	if a.resultSpan != 0 {
		s.CausedBy = append(s.CausedBy, a.resultSpan)
	}
}
