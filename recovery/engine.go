package recovery

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// phase is where inside its lifecycle state an engine is: what it waits for. It is rebuilt
// from the journal (apply) like everything else.
type phase uint8

const (
	phNone     phase = iota // pending, awaiting a human, or final
	phWork                  // running: working towards the next attempt of the operation
	phValidate              // running: a result awaits validation
	phInflight              // waiting: an attempt is out
	phBackoff               // waiting: the next attempt is due at wake
	phParked                // waiting: parked on an open breaker or a spent budget until wake
	phInspect               // waiting: the operation is to be looked up at wake
	phPaused                // waiting: a budget pause ends at wake
	phDecide                // recovering: a decision is being taken within one Observe
	phConsult               // recovering: the supervisor was asked (point)
)

// held is what a budget pause left unresolved, to pick up when it ends.
type held uint8

const (
	heldNone    held = iota
	heldAttempt      // an attempt or inspection was out: its completion is uncertain
	heldResult       // a result awaited validation
)

// Engine is the recovery state machine of one investigation. It is driven by Observe, one
// event at a time, with time and randomness passed in; it answers with a Decision and writes
// every state change to its Journal. An Engine is not safe for concurrent use.
type Engine struct {
	id  int64
	p   *Policy
	j   Journal
	rec JournalRecord // reused for every record: a Journal must copy what it keeps

	state   State
	ph      phase
	cls     Class // class of the failure being recovered
	step    int32
	rev     int32
	attempt int32
	tool    int32
	wake    int64  // phBackoff, phParked, phInspect, phPaused: when
	sendGen uint32 // breaker generation of the attempt out
	breaker bool   // phParked on an open breaker (not on a spent budget)
	point   Point  // phConsult
	held    held
	reduced bool
	last    int64 // time of the last record: time never goes back

	// History of the current operation.
	blocked     bool
	inspections int32
	prevDelay   int64 // last backoff delay, for decorrelated jitter
	base        int32 // attempts sent before a human approved a resend: its allotment starts here

	// History of the investigation.
	fp        uint64 // fingerprint of the last failing operation
	fpRun     int32  // consecutive failing operations with fingerprint fp
	fpCounted bool   // the current operation's failure is already in fpRun
	replanned bool
	rung      uint8 // highest rung of the exhaustion ladder reached
	esc       int32
	revs      int32
	refusals  int32
	sent      int32                  // attempts sent in the investigation
	failures  [NonProgress + 1]int32 // failures handled, by class
	respawns  int32                  // replacement subagents started
	lost      bool                   // a subagent's work was lost: the scope is reduced
	dropped   int32                  // steps dropped when their attempts ran out (on_exhausted reduce_scope)
	after     int32                  // 1 + the step that began when the last step was dropped (0: none)
}

// Exhaustion ladder rungs, in order.
const (
	rungNone uint8 = iota
	rungPause
	rungReduce
	rungTerminate
)

// New returns the engine of investigation id in state Pending. j may be nil (no journal).
// p is shared, not copied: it must not change while engines use it.
func New(id int64, p *Policy, j Journal) *Engine {
	return &Engine{id: id, p: p, j: j}
}

// Replay rebuilds the engine of investigation id from its journal records alone. The engine
// it returns has no journal; give it one with SetJournal.
func Replay(id int64, p *Policy, records []JournalRecord) (*Engine, error) {
	e := New(id, p, nil)
	if err := e.Fold(records); err != nil {
		return nil, err
	}
	return e, nil
}

// Fold applies more journal records to an engine rebuilt by Replay (or by an earlier Fold):
// replaying a journal's first records and folding in the rest gives the very engine that
// replaying them all gives. A journal can therefore be compacted into such an engine (a
// snapshot) and the records since, so an open investigation's journal stays short however
// long it runs. On an error the engine keeps the records before the one refused.
func (e *Engine) Fold(records []JournalRecord) error {
	for i := range records {
		if err := e.apply(&records[i]); err != nil {
			return fmt.Errorf("%w: investigation %d, record %d (%s→%s on %s): %w",
				ErrBadJournal, e.id, i, records[i].From, records[i].To, records[i].Event, err)
		}
	}
	return nil
}

// Copy returns an independent copy of the engine, without its journal: a takeover starts
// from a copy of the snapshot, which stays as it was for the next compaction.
func (e *Engine) Copy() *Engine {
	c := *e
	c.j = nil
	return &c
}

// SetJournal sets where the engine's next records go.
func (e *Engine) SetJournal(j Journal) { e.j = j }

// State is the lifecycle state.
func (e *Engine) State() State { return e.state }

// Attempt is the number of attempts sent of the current operation.
func (e *Engine) Attempt() int { return int(e.attempt) }

// Op is the current logical operation; with the investigation id it is the idempotency key
// shared by all its attempts.
func (e *Engine) Op() (step, revision int32) { return e.step, e.rev }

// Escalations is the number of escalations to a human so far.
func (e *Engine) Escalations() int { return int(e.esc) }

// Revisions is the number of revisions spent from the revision budget.
func (e *Engine) Revisions() int { return int(e.revs) }

// Refusals is the number of supervisor suggestions the guardrails refused.
func (e *Engine) Refusals() int { return int(e.refusals) }

// Tool is the tool of the current operation's last attempt (or parking).
func (e *Engine) Tool() int { return int(e.tool) }

// Respawns is the number of replacement subagents started after subagents failed.
func (e *Engine) Respawns() int { return int(e.respawns) }

// LostWork reports whether the investigation went on without some of its work, so that it
// can no longer complete at full scope: a subagent's (its failure, under the subagent policy
// reduce_scope) or a step's whose attempts ran out (on_exhausted reduce_scope).
func (e *Engine) LostWork() bool { return e.lost || e.dropped > 0 }

// Dropped is the number of steps dropped when their attempts ran out: the investigation went
// on without their results (on_exhausted reduce_scope).
func (e *Engine) Dropped() int { return int(e.dropped) }

// Blocked reports whether the current operation was blocked by policy.
func (e *Engine) Blocked() bool { return e.blocked }

func (e *TransitionError) Error() string {
	return fmt.Sprintf("recovery: illegal transition %s → %s on event %s", e.From, e.To, e.Event)
}

func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }

// Observe feeds one event that happened at now and returns what to do next. A refused
// event (an error) changes nothing.
func (e *Engine) Observe(now int64, ev Event, env Env) (Decision, error) {
	if e.state.Final() {
		return Decision{}, ErrFinal
	}
	if now < e.last {
		return Decision{}, fmt.Errorf("%w: event %s at %d ns, before the last record at %d ns", ErrClock, ev.Kind, now, e.last)
	}
	if err := e.accepts(ev); err != nil {
		return Decision{}, err
	}
	switch ev.Kind {
	case EvStart:
		e.begin(now, EvStart, Running, ActNextStep, ByEngine, ReasonStarted)
		e.commit(env.Guards)
		return Decision{Action: ActNextStep, At: now, Reason: ReasonStarted}, nil
	case EvSend, EvTimer:
		if e.ph == phPaused {
			return e.resume(now, env), nil
		}
		return e.send(now, ev, env)
	case EvSucceeded:
		if err := e.outcome(now, ev, env, true); err != nil {
			return Decision{}, err
		}
		e.begin(now, EvSucceeded, Running, ActValidate, ByEngine, ReasonReply)
		e.commit(env.Guards)
		return Decision{Action: ActValidate, At: now, Reason: ReasonReply}, nil
	case EvValid:
		e.note(now, EvValid, ActNextStep, ByEngine, ReasonValid)
		e.rec.Step, e.rec.Revision, e.rec.Attempt, e.rec.Class = e.step+1, 0, 0, NoFailure
		e.commit(env.Guards)
		return Decision{Action: ActNextStep, At: now, Reason: ReasonValid}, nil
	case EvFinished:
		e.begin(now, EvFinished, Completed, ActComplete, ByEngine, ReasonFinished)
		e.commit(env.Guards)
		return Decision{Action: ActComplete, At: now, Reason: ReasonFinished}, nil
	case EvFailed:
		if err := e.outcome(now, ev, env, false); err != nil {
			return Decision{}, err
		}
		e.fail(now, EvFailed, Transient, ReasonFailed, ev.Fingerprint, env)
		if e.stuck() {
			return e.nonProgress(now, EvFailed, env), nil
		}
		return e.retry(now, EvFailed, env), nil
	case EvTimedOut:
		if err := e.outcome(now, ev, env, false); err != nil {
			return Decision{}, err
		}
		e.fail(now, EvTimedOut, UncertainCompletion, ReasonTimedOut, ev.Fingerprint, env)
		if e.stuck() {
			return e.nonProgress(now, EvTimedOut, env), nil
		}
		return e.uncertain(now, EvTimedOut, env), nil
	case EvInvalid:
		e.fail(now, EvInvalid, InvalidOutput, ReasonInvalidOutput, ev.Fingerprint, env)
		if e.stuck() {
			return e.nonProgress(now, EvInvalid, env), nil
		}
		return e.invalid(now, env), nil
	case EvInspected:
		return e.inspected(now, ev, env), nil
	case EvPolicyViolation:
		return e.violation(now, env), nil
	case EvBudgetExceeded:
		return e.exhausted(now, ev, env), nil
	case EvCrashed:
		return e.crashed(now, env), nil
	case EvSubagentFailed:
		return e.subagentFailed(now, env), nil
	case EvSupervisor:
		return e.supervised(now, ev.Suggestion, env), nil
	case EvHuman:
		if ev.Approved && e.resend() {
			// The human authorises another attempt of the same logical operation, under the
			// same idempotency key: a keyed tool answers it from its record, and whatever
			// else it causes is a repeat of the same operation, not new work.
			e.begin(now, EvHuman, Running, ActRetry, ByHuman, ReasonApproved)
			e.rec.Wake = now
			e.commit(env.Guards)
			return Decision{Action: ActRetry, At: now, Class: e.cls, DecidedBy: ByHuman, Reason: ReasonApproved}, nil
		}
		if ev.Approved {
			// A human may authorise what the supervisor may not: the step goes on as a new
			// logical operation (a blocked one is never sent again), outside the budget.
			e.begin(now, EvHuman, Running, ActRevise, ByHuman, ReasonApproved)
			e.rec.Revision, e.rec.Attempt = e.rev+1, 0
			e.commit(env.Guards)
			return Decision{Action: ActRevise, At: now, DecidedBy: ByHuman, Reason: ReasonApproved}, nil
		}
		e.begin(now, EvHuman, Terminated, ActTerminate, ByHuman, ReasonRejected)
		e.commit(env.Guards)
		return Decision{Action: ActTerminate, At: now, DecidedBy: ByHuman, Reason: ReasonRejected}, nil
	}
	return Decision{}, fmt.Errorf("%w: unknown event kind %d", ErrUnexpectedEvent, ev.Kind)
}

// accepts refuses an event the engine cannot take now: a *TransitionError when the event's
// only meaning is an illegal edge, ErrUnexpectedEvent when the edge exists but the engine is
// not waiting for this event.
func (e *Engine) accepts(ev Event) error {
	if ev.Kind == 0 || int(ev.Kind) >= len(eventNames) {
		return fmt.Errorf("%w: unknown event kind %d", ErrUnexpectedEvent, ev.Kind)
	}
	ph := e.ph
	if e.state == AwaitingHuman {
		ph = phNone
	}
	mask := accept[ph]
	if e.state == Pending {
		mask = 1 << EvStart
	} else if e.state == AwaitingHuman {
		mask = 1<<EvHuman | 1<<EvCrashed | 1<<EvSubagentFailed
	}
	ok := mask&(1<<ev.Kind) != 0
	if ok && ev.Kind == EvFinished && e.ph == phWork && !e.reduced && !e.justDropped() {
		ok = false
	}
	if ok && ev.Kind == EvInspected && (ev.Lookup < LookupCompleted || ev.Lookup > LookupFailed) {
		return fmt.Errorf("%w: inspected with lookup %d, want completed, running, not_found or failed", ErrUnexpectedEvent, ev.Lookup)
	}
	if ok && ev.Kind == EvBudgetExceeded && (ev.Resource < Tokens || ev.Resource > Cost) {
		return fmt.Errorf("%w: budget_exceeded with resource %d, want tokens, compute, wall or cost", ErrUnexpectedEvent, ev.Resource)
	}
	if ok {
		return nil
	}
	to := nominal[ev.Kind]
	if ev.Kind == EvHuman && !ev.Approved {
		to = Terminated
	}
	if to != noState && !legal(e.state, to) {
		return &TransitionError{From: e.state, To: to, Event: ev.Kind}
	}
	return fmt.Errorf("%w: %s while %s%s", ErrUnexpectedEvent, ev.Kind, e.state, phaseNames[ph])
}

// begin fills the reused record for a transition from the current state to to; the caller
// may change the operation fields before commit.
func (e *Engine) begin(now int64, ev EventKind, to State, act Action, by Decider, reason string) {
	e.rec = JournalRecord{
		At: now, From: e.state, To: to, Event: ev, Class: e.cls, Action: act, DecidedBy: by,
		Reason: reason, Attempt: e.attempt, Step: e.step, Revision: e.rev, Tool: e.tool,
	}
}

// note fills the reused record for an audit record that changes no lifecycle state.
func (e *Engine) note(now int64, ev EventKind, act Action, by Decider, reason string) {
	e.begin(now, ev, e.state, act, by, reason)
	e.rec.Note = true
}

// commit applies the prepared record, keeps the guards' parked count and journals it.
func (e *Engine) commit(g *Guards) {
	wasParked, oldTool := e.ph == phParked && e.breaker, e.tool
	if err := e.apply(&e.rec); err != nil {
		// The engine only prepares records along legal edges; reaching this is a bug.
		panic(err)
	}
	if isParked := e.ph == phParked && e.breaker; g != nil && (wasParked != isParked || oldTool != e.tool) {
		if wasParked {
			g.parked[oldTool]--
		}
		if isParked {
			g.parked[e.tool]++
		}
	}
	if e.j != nil {
		e.j.Append(e.id, &e.rec)
	}
}

// apply is the only place an engine's state changes, so a replay of the journal rebuilds
// exactly what Observe built.
func (e *Engine) apply(r *JournalRecord) error {
	if r.From != e.state {
		return fmt.Errorf("record starts in %s, engine is in %s", r.From, e.state)
	}
	if r.Note && r.To != r.From {
		return fmt.Errorf("note record changes state %s → %s", r.From, r.To)
	}
	if !r.Note && !legal(r.From, r.To) {
		return &TransitionError{From: r.From, To: r.To, Event: r.Event}
	}
	// Check before changing anything: a refused record leaves the engine as it was.
	if r.Note && r.Event == EvSubagentFailed && r.Action != ActRespawn && r.Action != ActReduceScope {
		return fmt.Errorf("subagent_failed note with action %s", r.Action)
	}
	if r.Note && r.Event != EvSupervisor && r.Event != EvSubagentFailed && r.Action != ActNextStep &&
		r.Action != ActBlock && r.Action != ActConsult && r.Action != ActPark {
		return fmt.Errorf("note record with action %s", r.Action)
	}
	if !r.Note && r.To == Waiting && r.Action != ActSend && r.Action != ActRetry &&
		r.Action != ActPark && r.Action != ActInspect && r.Action != ActPause {
		return fmt.Errorf("waiting with action %s", r.Action)
	}
	if r.Step != e.step || r.Revision != e.rev {
		e.blocked, e.inspections, e.prevDelay, e.fpCounted, e.held, e.base = false, 0, 0, false, heldNone, 0
	}
	prev := e.ph
	e.last = r.At
	e.step, e.rev, e.attempt, e.tool = r.Step, r.Revision, r.Attempt, r.Tool
	e.state, e.cls = r.To, r.Class
	if r.Note {
		e.applyNote(r)
		return nil
	}
	e.applyState(r, prev)
	e.applyAction(r)
	return nil
}

// applyNote applies a record that changes no lifecycle state.
func (e *Engine) applyNote(r *JournalRecord) {
	if r.Event == EvSupervisor { // a refused suggestion or no answer: nothing moves
		if !r.Unavailable {
			e.refusals++
		}
		return
	}
	if r.Event == EvSubagentFailed { // the investigation goes on where it was
		if r.Action == ActRespawn {
			e.respawns++
		} else {
			e.lost = true
		}
		return
	}
	switch r.Action {
	case ActNextStep: // a valid step is progress
		e.fp, e.fpRun = 0, 0
		e.ph = phWork
	case ActBlock:
		e.blocked = true
	case ActConsult:
		e.ph, e.point = phConsult, r.Point
	case ActPark:
		e.ph, e.wake, e.breaker = phParked, r.Wake, r.Breaker
	}
}

// applyState applies what entering r.To means; prev is the phase before the record.
func (e *Engine) applyState(r *JournalRecord, prev phase) {
	switch r.To {
	case Running:
		e.ph = phWork
		if r.Action == ActValidate {
			e.ph = phValidate
		}
	case Waiting:
		e.wake = r.Wake
		switch r.Action {
		case ActSend:
			e.ph, e.sendGen, e.wake = phInflight, r.Gen, 0
			e.sent++
		case ActRetry:
			e.ph = phBackoff
		case ActPark:
			e.ph, e.breaker = phParked, r.Breaker
		case ActInspect:
			e.ph = phInspect
		case ActPause:
			e.ph = phPaused
		}
	case Recovering:
		e.ph = phDecide
		switch r.Event {
		case EvFailed, EvTimedOut, EvInvalid, EvPolicyViolation, EvBudgetExceeded:
			if r.Class > NoFailure && r.Class <= NonProgress {
				e.failures[r.Class]++
			}
		}
		switch r.Event {
		case EvFailed, EvTimedOut, EvInvalid:
			if fp := r.Fingerprint; fp != 0 && !e.fpCounted {
				e.fpCounted = true
				if fp == e.fp {
					e.fpRun++
				} else {
					e.fp, e.fpRun = fp, 1
				}
			}
		case EvBudgetExceeded:
			switch prev {
			case phInflight, phInspect:
				e.held = heldAttempt
			case phValidate:
				e.held = heldResult
			case phPaused: // keep what the first pause held
			default:
				e.held = heldNone
			}
		}
	case AwaitingHuman:
		e.ph = phNone
		e.esc++
	default:
		e.ph = phNone
	}
}

// applyAction applies what the record's action changes besides the state.
func (e *Engine) applyAction(r *JournalRecord) {
	switch r.Action {
	case ActRetry:
		if r.Backoff {
			e.prevDelay = r.Wake - r.At
		}
		if r.DecidedBy == ByHuman {
			// An approved resend: a fresh allotment of attempts and lookups, and the backoff
			// starts again from initial.
			e.base, e.inspections, e.prevDelay = r.Attempt, 0, 0
		}
	case ActInspect:
		if !r.Resumed {
			e.inspections++
		}
	case ActRevise:
		if r.DecidedBy != ByHuman {
			e.revs++
		}
	case ActReplan:
		e.replanned, e.fp, e.fpRun = true, 0, 0
	case ActReduceScope:
		if r.Class == ResourceExhaustion {
			e.reduced = true
		} else {
			// Retries exhausted: the step was dropped and the next one began.
			e.dropped++
			e.after = r.Step + 1
		}
	}
	if r.Class == ResourceExhaustion {
		switch r.Action {
		case ActPause:
			e.rung = rungPause
		case ActReduceScope:
			e.rung = rungReduce
		case ActTerminate:
			e.rung = rungTerminate
		}
	}
}

// outcome checks an attempt's tool and feeds its outcome to the tool's breaker.
func (e *Engine) outcome(now int64, ev Event, env Env, success bool) error {
	if int32(ev.Tool) != e.tool || ev.Tool != int(int32(ev.Tool)) {
		return fmt.Errorf("%w: %s on tool %d for an attempt sent to tool %d", ErrUnexpectedEvent, ev.Kind, ev.Tool, e.tool)
	}
	if g := env.Guards; g != nil {
		if err := g.checkTool(int32(ev.Tool)); err != nil {
			return err
		}
		g.record(int32(ev.Tool), now, e.sendGen, success)
	}
	return nil
}

// fail records the move into recovering for a failure of class c.
func (e *Engine) fail(now int64, ev EventKind, c Class, reason string, fp uint64, env Env) {
	e.cls = c
	e.begin(now, ev, Recovering, ActNone, ByEngine, reason)
	e.rec.Fingerprint = fp
	e.commit(env.Guards)
}

// justDropped reports whether the operation in hand is the first of the step that began
// when the previous one was dropped, with nothing done of it yet: when the dropped step was
// the last, the caller finishes here (EvFinished).
func (e *Engine) justDropped() bool {
	return e.after == e.step+1 && e.rev == 0 && e.attempt == 0
}

// maxAttempts is the policy's limit as given: the scenario rule (scenarios.Validate, which
// sim.Run calls) keeps it in 1..1000, and the engine does not re-check it.
func (e *Engine) maxAttempts() int32 { return int32(e.p.Retry.MaxAttempts) }

// spent reports whether the operation's attempts are used up: max_attempts since the
// operation began, or since a human last approved a resend of it.
func (e *Engine) spent() bool { return e.attempt-e.base >= e.maxAttempts() }

func (e *Engine) maxInspections() int32 {
	if e.p.MaxInspections > 0 {
		return int32(min(e.p.MaxInspections, math.MaxInt32))
	}
	return DefaultMaxInspections
}

func (e *Engine) inspectEvery() int64 {
	if e.p.InspectEvery > 0 {
		return int64(e.p.InspectEvery)
	}
	return int64(DefaultInspectEvery)
}

// resend reports whether a human's approval of the current escalation continues the same
// operation: after its retries ran out or its completion could not be established
// (transient or uncertain), unless it was blocked. After invalid output the approval is
// for new work, a revision.
func (e *Engine) resend() bool {
	return !e.blocked && (e.cls == Transient || e.cls == UncertainCompletion)
}

// send admits an attempt of the current operation through the tool's guards.
func (e *Engine) send(now int64, ev Event, env Env) (Decision, error) {
	tool := e.tool
	if ev.Kind == EvSend {
		tool = int32(ev.Tool)
	}
	g := env.Guards
	if g != nil {
		if err := g.checkTool(tool); err != nil {
			return Decision{}, err
		}
	}
	if e.ph == phBackoff && now < e.wake {
		// The engine, not the caller, owns the backoff.
		return Decision{Action: ActRetry, At: e.wake, Class: e.cls, Reason: ReasonBackoff}, nil
	}
	if e.ph == phParked && now < e.wake {
		reason := ReasonThrottled
		if e.breaker {
			reason = ReasonBreakerOpen
		}
		return Decision{Action: ActPark, At: e.wake, Class: Transient, Reason: reason}, nil
	}
	if e.blocked {
		// Unreachable: a blocked operation never returns to running.
		return Decision{}, fmt.Errorf("%w: send of blocked operation (%d, %d)", ErrUnexpectedEvent, e.step, e.rev)
	}
	if e.spent() {
		// The operation's attempts were spent before (its last one abandoned by a pause or
		// a reduction of scope): this send is a retry the policy forbids.
		e.cls = Transient
		e.begin(now, ev.Kind, Recovering, ActNone, ByPolicy, ReasonRetriesExhausted)
		e.commit(g)
		return e.judge(now, ev.Kind, PointRetriesExhausted, env), nil
	}
	retry := e.attempt > 0
	var gen uint32
	if g != nil {
		// The budget is asked first: it has no side effect, while the breaker hands out
		// its single half-open probe.
		if retry {
			if ok, wait := g.retryWait(tool, now); !ok {
				at := g.throttleSlot(tool, now+e.throttleDelay(wait, env.Rand))
				return e.park(now, ev.Kind, tool, at, false, env), nil
			}
		}
		ok, at, gn := g.allow(tool, now)
		if !ok {
			return e.park(now, ev.Kind, tool, at, true, env), nil
		}
		gen = gn
		if retry {
			g.spendRetry(tool, now)
		} else {
			g.earn(tool, now)
		}
	}
	if e.state == Waiting {
		reason := ReasonBackoffElapsed
		if e.ph == phParked {
			reason = ReasonUnparked
		}
		e.begin(now, ev.Kind, Running, ActSend, ByEngine, reason)
		e.rec.Tool = tool
		e.commit(g)
	}
	e.begin(now, ev.Kind, Waiting, ActSend, ByEngine, ReasonAttemptSent)
	e.rec.Attempt, e.rec.Tool, e.rec.Gen = e.attempt+1, tool, gen
	e.commit(g)
	return Decision{Action: ActSend, At: now, Class: NoFailure, Reason: ReasonAttemptSent}, nil
}

// park makes the operation wait until at without spending an attempt: on the tool's open
// breaker, or else on its retry budget.
func (e *Engine) park(now int64, ev EventKind, tool int32, at int64, breaker bool, env Env) Decision {
	reason := ReasonThrottled
	if breaker {
		reason = ReasonBreakerOpen
	}
	if e.state == Running {
		e.begin(now, ev, Waiting, ActPark, ByEngine, reason)
	} else {
		e.note(now, ev, ActPark, ByEngine, reason)
	}
	e.rec.Tool, e.rec.Wake, e.rec.Breaker, e.rec.Class = tool, at, breaker, Transient
	e.commit(env.Guards)
	return Decision{Action: ActPark, At: at, Class: Transient, Reason: reason}
}

// throttleDelay is how long a retry the budget refused waits: until the floor refills a
// token (wait, from retryWait: positive, or negative when the floor never will), or the
// nominal backoff if longer, spread by equal jitter so that operations throttled together
// do not all come back at once. A wait of 0 adds nothing to the nominal backoff.
func (e *Engine) throttleDelay(wait int64, r *rand.Rand) int64 {
	d := max(nominalDelay(&e.p.Retry, int(e.attempt-e.base)), wait)
	// A budget without a floor refills only from other callers' first attempts, which may
	// never come: polling it at a backoff of microseconds would flood the run with events
	// until the horizon, so it is polled no faster than defaultThrottleDelay. A budget that
	// nothing can refill (no floor, no ratio) never lets the retry through: it parks for
	// good, with no event until the horizon, instead of polling.
	if wait == waitNever {
		return noCap
	}
	if wait < 0 {
		d = max(d, defaultThrottleDelay)
	}
	return (d+1)/2 + int64N(r, d/2+1)
}

// retry sends another attempt after a backoff, or handles exhausted retries.
func (e *Engine) retry(now int64, ev EventKind, env Env) Decision {
	if e.spent() {
		return e.judge(now, ev, PointRetriesExhausted, env)
	}
	d := backoff(&e.p.Retry, int(e.attempt-e.base), e.prevDelay, env.Rand)
	if d == 0 {
		e.begin(now, ev, Running, ActRetry, ByEngine, ReasonRetry)
	} else {
		e.begin(now, ev, Waiting, ActRetry, ByEngine, ReasonBackoff)
	}
	e.rec.Wake, e.rec.Backoff = now+d, true
	e.commit(env.Guards)
	return Decision{Action: ActRetry, At: now + d, Class: e.cls, Reason: e.rec.Reason}
}

// uncertain handles an attempt whose completion is unknown.
func (e *Engine) uncertain(now int64, ev EventKind, env Env) Decision {
	if !e.p.InspectBeforeRetry {
		return e.retry(now, ev, env)
	}
	e.begin(now, ev, Waiting, ActInspect, ByEngine, ReasonInspectBeforeRetry)
	e.rec.Wake = now
	e.commit(env.Guards)
	return Decision{Action: ActInspect, At: now, Class: e.cls, Reason: ReasonInspectBeforeRetry}
}

// inspected decides on the lookup's answer: "was the operation completed?" in the state machine
// of docs/architecture.md.
func (e *Engine) inspected(now int64, ev Event, env Env) Decision {
	e.cls = UncertainCompletion
	e.begin(now, EvInspected, Recovering, ActNone, ByEngine, lookupReasons[ev.Lookup])
	e.rec.Lookup = ev.Lookup
	e.commit(env.Guards)
	switch ev.Lookup {
	case LookupCompleted:
		e.begin(now, EvInspected, Running, ActValidate, ByEngine, ReasonInspectedCompleted)
		e.commit(env.Guards)
		return Decision{Action: ActValidate, At: now, Class: UncertainCompletion, Reason: ReasonInspectedCompleted}
	case LookupRunning:
		if e.inspections >= e.maxInspections() {
			return e.escalate(now, EvInspected, ByEngine, ReasonInspectionUnresolved, env)
		}
		// A running operation is not a failure: poll at a fixed interval, without jitter
		// (no draw; lookups are cheap reads), until MaxInspections lookups say running.
		at := now + e.inspectEvery()
		e.begin(now, EvInspected, Waiting, ActInspect, ByEngine, ReasonStillRunning)
		e.rec.Wake = at
		e.commit(env.Guards)
		return Decision{Action: ActInspect, At: at, Class: UncertainCompletion, Reason: ReasonStillRunning}
	case LookupNotFound:
		return e.retry(now, EvInspected, env)
	default:
		return e.escalate(now, EvInspected, ByEngine, ReasonLookupFailed, env)
	}
}

// invalid handles a result that failed validation: revise while the budget lasts.
func (e *Engine) invalid(now int64, env Env) Decision {
	if e.revs < int32(e.p.Revisions) {
		return e.act(now, EvInvalid, ActRevise, ByEngine, ReasonInvalidOutput, env)
	}
	return e.judge(now, EvInvalid, PointInvalidOutput, env)
}

// stuck reports whether the last failing operations repeat one approach.
func (e *Engine) stuck() bool {
	return e.p.NonProgressRepeats > 0 && e.fpRun >= int32(e.p.NonProgressRepeats)
}

// nonProgress asks for a revised plan once, then terminates.
func (e *Engine) nonProgress(now int64, ev EventKind, env Env) Decision {
	e.cls = NonProgress
	if e.replanned {
		return e.act(now, ev, ActTerminate, ByPolicy, ReasonNonProgress, env)
	}
	return e.judge(now, ev, PointNonProgress, env)
}

// violation blocks a forbidden operation before it is sent, records it and escalates; it is
// never retried and no supervisor is asked.
func (e *Engine) violation(now int64, env Env) Decision {
	e.cls = PolicyViolation
	e.begin(now, EvPolicyViolation, Recovering, ActNone, ByPolicy, ReasonPolicyViolation)
	e.commit(env.Guards)
	e.note(now, EvPolicyViolation, ActBlock, ByPolicy, ReasonPolicyViolation)
	e.commit(env.Guards)
	return e.escalate(now, EvPolicyViolation, ByPolicy, ReasonPolicyViolation, env)
}

// exhausted climbs the resource-exhaustion ladder: pause, reduce scope, terminate, starting
// at the policy's rung; each further exceedance climbs one rung.
func (e *Engine) exhausted(now int64, ev Event, env Env) Decision {
	e.cls = ResourceExhaustion
	e.begin(now, EvBudgetExceeded, Recovering, ActNone, ByPolicy, ReasonBudgetExceeded)
	e.rec.Resource = ev.Resource
	e.commit(env.Guards)
	rung := rungTerminate
	switch e.p.OnExhaustion {
	case ExhaustionPause:
		rung = rungPause
	case ExhaustionReduceScope:
		rung = rungReduce
	}
	if e.rung >= rung {
		rung = min(e.rung+1, rungTerminate)
	}
	switch rung {
	case rungPause:
		pause := int64(e.p.PauseFor)
		if pause <= 0 {
			pause = int64(defaultPause)
		}
		e.begin(now, EvBudgetExceeded, Waiting, ActPause, ByPolicy, ReasonBudgetExceeded)
		e.rec.Wake = now + pause
		e.commit(env.Guards)
		return Decision{Action: ActPause, At: now + pause, Class: ResourceExhaustion, DecidedBy: ByPolicy, Reason: ReasonBudgetExceeded}
	case rungReduce:
		return e.act(now, EvBudgetExceeded, ActReduceScope, ByPolicy, ReasonBudgetExceeded, env)
	}
	return e.act(now, EvBudgetExceeded, ActTerminate, ByPolicy, ReasonBudgetExceeded, env)
}

// resume ends a budget pause once its time has come.
func (e *Engine) resume(now int64, env Env) Decision {
	if now < e.wake {
		return Decision{Action: ActPause, At: e.wake, Class: ResourceExhaustion, DecidedBy: ByPolicy, Reason: ReasonBudgetExceeded}
	}
	switch e.held {
	case heldAttempt:
		e.cls = UncertainCompletion
		e.begin(now, EvTimer, Recovering, ActNone, ByEngine, ReasonResumedUncertain)
		e.commit(env.Guards)
		return e.uncertain(now, EvTimer, env)
	case heldResult:
		e.begin(now, EvTimer, Running, ActValidate, ByEngine, ReasonResumed)
		e.commit(env.Guards)
		return Decision{Action: ActValidate, At: now, Reason: ReasonResumed}
	}
	e.begin(now, EvTimer, Running, ActRetry, ByEngine, ReasonResumed)
	e.rec.Wake, e.rec.Resumed = now, true
	e.commit(env.Guards)
	return Decision{Action: ActRetry, At: now, Reason: ReasonResumed}
}

// crashed takes over after the worker died: what it had out is uncertain, what it was
// waiting for is waited for again.
func (e *Engine) crashed(now int64, env Env) Decision {
	if e.state == AwaitingHuman {
		return Decision{Action: ActNone, At: now, Reason: ReasonAwaitingHuman}
	}
	if e.ph == phConsult {
		return Decision{Action: ActConsult, At: now, Class: e.cls, Reason: pointReasons[e.point], Judgement: e.judgement()}
	}
	ph, wake, breaker := e.ph, e.wake, e.breaker
	if ph == phInflight || ph == phValidate {
		e.cls = UncertainCompletion
		e.begin(now, EvCrashed, Recovering, ActNone, ByEngine, ReasonWorkerCrashed)
		e.commit(env.Guards)
		return e.uncertain(now, EvCrashed, env)
	}
	if ph == phWork {
		e.cls = NoFailure // nothing was out; otherwise the episode's class goes on
	}
	e.begin(now, EvCrashed, Recovering, ActNone, ByEngine, ReasonWorkerCrashed)
	e.commit(env.Guards)
	var d Decision
	switch ph {
	case phBackoff:
		d = Decision{Action: ActRetry, At: wake}
		e.begin(now, EvCrashed, Waiting, ActRetry, ByEngine, ReasonResumed)
	case phParked:
		d = Decision{Action: ActPark, At: wake, Class: Transient, Reason: ReasonThrottled}
		if breaker {
			d.Reason = ReasonBreakerOpen
		}
		e.begin(now, EvCrashed, Waiting, ActPark, ByEngine, d.Reason)
	case phInspect:
		d = Decision{Action: ActInspect, At: max(now, wake)}
		e.begin(now, EvCrashed, Waiting, ActInspect, ByEngine, ReasonResumed)
	case phPaused:
		d = Decision{Action: ActPause, At: wake}
		e.begin(now, EvCrashed, Waiting, ActPause, ByEngine, ReasonResumed)
	default: // phWork: nothing was out
		d = Decision{Action: ActRetry, At: now}
		e.begin(now, EvCrashed, Running, ActRetry, ByEngine, ReasonResumed)
	}
	if d.Reason == "" {
		d.Reason = ReasonResumed
	}
	d.Class = e.cls
	e.rec.Wake, e.rec.Breaker = d.At, ph == phParked && breaker
	e.rec.Resumed = ph != phParked
	e.commit(env.Guards)
	return d
}

// judge takes a judgement point: asks the supervisor if there is one, else decides by rule.
func (e *Engine) judge(now int64, ev EventKind, pt Point, env Env) Decision {
	if pt == PointRetriesExhausted && e.p.Retry.GiveUp > 0 && env.Rand.Float64() < e.p.Retry.GiveUp {
		// The agent's own choice, before any policy or supervisor: it abandons the task.
		return e.act(now, ev, ActTerminate, ByEngine, pointReasons[pt], env)
	}
	if !e.p.Supervisor {
		act, by := e.fallback(pt)
		return e.act(now, ev, act, by, pointReasons[pt], env)
	}
	e.note(now, ev, ActConsult, ByEngine, pointReasons[pt])
	e.rec.Point = pt
	e.commit(env.Guards)
	return Decision{Action: ActConsult, At: now, Class: e.cls, Reason: pointReasons[pt], Judgement: e.judgement()}
}

// fallback is the engine's own action at a judgement point.
func (e *Engine) fallback(pt Point) (Action, Decider) {
	switch pt {
	case PointNonProgress:
		return ActReplan, ByEngine
	case PointRetriesExhausted:
		switch e.p.Retry.OnExhausted {
		case ExhaustedTerminate:
			return ActTerminate, ByPolicy
		case ExhaustedReduceScope:
			return ActReduceScope, ByPolicy
		}
	}
	return ActEscalate, ByPolicy
}

// judgement is what the supervisor is asked at the current point; Allowed is static.
func (e *Engine) judgement() Judgement {
	j := Judgement{Point: e.point, Trajectory: Trajectory{
		Steps: e.step, Revision: e.rev, Attempts: e.attempt, Sent: e.sent,
		Revisions: e.revs, Escalations: e.esc, Failures: e.failures,
	}}
	switch e.point {
	case PointNonProgress:
		j.Allowed = allowedNonProgress
	case PointRetriesExhausted:
		// Going on without the step is offered only where the policy itself would: a
		// scenario that never drops a step keeps the supervisor's choices it always had.
		reduce := e.p.Retry.OnExhausted == ExhaustedReduceScope
		revise := e.revs < int32(e.p.Revisions)
		switch {
		case reduce && revise:
			j.Allowed = allowedExhaustedReduceRevise
		case reduce:
			j.Allowed = allowedExhaustedReduce
		case revise:
			j.Allowed = allowedExhaustedRevise
		default:
			j.Allowed = allowedExhausted
		}
	default:
		j.Allowed = allowedInvalid
	}
	return j
}

// supervised checks the supervisor's suggestion against the guardrails.
func (e *Engine) supervised(now int64, s Suggestion, env Env) Decision {
	j := e.judgement()
	if s.Unavailable {
		// No answer to check: the engine's own rule decides, as without a supervisor.
		e.note(now, EvSupervisor, ActNone, ByEngine, ReasonSupervisorUnavailable)
		e.rec.Unavailable = true
		e.commit(env.Guards)
		act, by := e.fallback(e.point)
		return e.act(now, EvSupervisor, act, by, pointReasons[e.point], env)
	}
	reason := ""
	if s.LiftBlock {
		reason = ReasonRefusedLiftBlock
	} else if s.RaiseBudget {
		reason = ReasonRefusedRaiseBudget
	} else if s.Action == ActRetry || s.Action == ActSend {
		reason = ReasonRefusedRetry
	} else if !allowed(j.Allowed, s.Action) {
		reason = ReasonRefusedNotAllowed
	}
	if reason == "" {
		return e.act(now, EvSupervisor, s.Action, BySupervisor, pointReasons[e.point], env)
	}
	e.note(now, EvSupervisor, s.Action, BySupervisor, reason)
	e.rec.RaiseBudget, e.rec.LiftBlock = s.RaiseBudget, s.LiftBlock
	e.commit(env.Guards)
	act, by := e.fallback(e.point)
	return e.act(now, EvSupervisor, act, by, pointReasons[e.point], env)
}

func allowed(as []Action, a Action) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// act leaves recovering with a decided action.
func (e *Engine) act(now int64, ev EventKind, act Action, by Decider, reason string, env Env) Decision {
	switch act {
	case ActRevise, ActReplan:
		e.begin(now, ev, Running, act, by, reason)
		e.rec.Revision, e.rec.Attempt = e.rev+1, 0
	case ActReduceScope:
		e.begin(now, ev, Running, act, by, reason)
		if e.cls != ResourceExhaustion {
			// Retries exhausted: the step is dropped and the next begins, a new logical
			// operation; its class tells the ladder's reduction (resource_exhaustion) apart.
			e.rec.Step, e.rec.Revision, e.rec.Attempt = e.step+1, 0, 0
		}
	case ActEscalate:
		return e.escalate(now, ev, by, reason, env)
	default:
		act = ActTerminate
		e.begin(now, ev, Terminated, act, by, reason)
	}
	e.commit(env.Guards)
	return Decision{Action: act, At: now, Class: e.cls, DecidedBy: by, Reason: reason}
}

// escalate queues a human review, or terminates when no human is available.
func (e *Engine) escalate(now int64, ev EventKind, by Decider, reason string, env Env) Decision {
	act, to := ActEscalate, AwaitingHuman
	if !e.p.HumansAvailable {
		act, to = ActTerminate, Terminated
	}
	e.begin(now, ev, to, act, by, reason)
	e.commit(env.Guards)
	return Decision{Action: act, At: now, Class: e.cls, DecidedBy: by, Reason: reason}
}

// subagentFailed applies the subagent policy to a subagent's failure. Respawning and
// reducing the scope are notes (the investigation goes on where it was); failing terminates
// it: from running or waiting through recovering, as any termination.
func (e *Engine) subagentFailed(now int64, env Env) Decision {
	sp := &e.p.Subagents
	act, reason := sp.OnFailure, ReasonSubagentFailed
	if act == SubagentRespawn && int(e.respawns) >= sp.MaxRespawns {
		act, reason = sp.Then, ReasonRespawnsSpent
		if act == SubagentRespawn {
			act = SubagentReduceScope
		}
	}
	switch act {
	case SubagentRespawn:
		e.note(now, EvSubagentFailed, ActRespawn, ByEngine, reason)
		e.commit(env.Guards)
		return Decision{Action: ActRespawn, At: now, Reason: reason}
	case SubagentFail:
		if e.state == Running || e.state == Waiting {
			e.cls = NoFailure
			e.begin(now, EvSubagentFailed, Recovering, ActNone, ByEngine, reason)
			e.commit(env.Guards)
		}
		e.begin(now, EvSubagentFailed, Terminated, ActTerminate, ByEngine, reason)
		e.commit(env.Guards)
		return Decision{Action: ActTerminate, At: now, Reason: reason}
	}
	e.note(now, EvSubagentFailed, ActReduceScope, ByEngine, reason)
	e.commit(env.Guards)
	return Decision{Action: ActReduceScope, At: now, Reason: reason}
}
