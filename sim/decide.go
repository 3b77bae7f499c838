package sim

import (
	"errors"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/sim/record"
)

// observe feeds ev to a's engine and carries out its decision. Every lifecycle change of an
// investigation goes through here.
func (w *sim) observe(a *agent, ev recovery.Event) {
	w.cur = a
	w.env.Rand = a.rng
	d, err := a.eng.Observe(w.now, ev, w.env)
	w.cur = nil
	if err != nil {
		// The simulator only sends events its protocol with the engine allows; a refusal is
		// a bug on one side. The agent stays where it is (in flight at the end).
		kind := "refused"
		var te *recovery.TransitionError
		if errors.As(err, &te) {
			kind = "illegal transition"
		}
		w.checker.violate(w, "investigation %d at %d: engine %s event %s in state %s: %v",
			a.id, w.now, kind, ev.Kind, a.eng.State(), err)
		a.settle()
		return
	}
	w.apply(a, d)
}

// apply executes one engine decision.
func (w *sim) apply(a *agent, d recovery.Decision) {
	switch d.Action {
	case recovery.ActNone:
		// Nothing to do until the event the engine waits for.
	case recovery.ActSend:
		if a.modelCall {
			// The model call the engine let through was refused by the provider.
			a.modelCall = false
			w.observe(a, recovery.Event{Kind: recovery.EvFailed, Tool: int(w.model.index)})
			return
		}
		w.syncOp(a)
		w.send(a)
	case recovery.ActValidate:
		w.syncOp(a)
		w.validate(a)
	case recovery.ActNextStep, recovery.ActRevise:
		// Only the agent's own revision of an invalid result is a fix that succeeds with
		// probability revise_success; a next step, or a step a human sent back, is fresh work.
		a.fixing = d.Action == recovery.ActRevise && d.Class == recovery.InvalidOutput && d.DecidedBy != recovery.ByHuman
		w.syncOp(a)
		w.think(a)
	case recovery.ActReplan:
		// The supervisor's revised plan gets the stuck agent out of its rut as often as a
		// revision fixes a step.
		if a.stuckFrom != noStuck && chance(a.rng, w.behave.ReviseSuccess) {
			a.unstuck = true
		}
		a.fixing = false
		w.syncOp(a)
		w.think(a)
	case recovery.ActRetry, recovery.ActPark, recovery.ActInspect, recovery.ActPause:
		a.timerAct = d.Action
		tok := w.wait(a, phTimer)
		w.push(max(d.At, w.now), evTimer, a.slot, tok, 0)
	case recovery.ActConsult:
		w.consult(a, d.Judgement)
	case recovery.ActEscalate:
		w.humans.enqueue(w, a, d.Class)
	case recovery.ActReduceScope:
		if d.Class != recovery.ResourceExhaustion {
			// The step's attempts ran out (on_exhausted reduce_scope): the engine dropped it
			// and began the next; the agent goes on without its result (the engine's
			// LostWork marks the scope reduced), or finishes when it was the last step.
			if step, _ := a.eng.Op(); step >= a.nsteps || a.reduced {
				w.finishOrJoin(a)
				return
			}
			a.fixing = false
			w.syncOp(a)
			w.think(a)
			return
		}
		// Drop the remaining optional steps: finish with what is done, or make the step in
		// hand the last one when nothing is done yet.
		a.reduced = true
		if a.accepted > 0 {
			w.finishOrJoin(a)
		} else {
			w.syncOp(a)
			w.askSend(a)
		}
	case recovery.ActComplete:
		w.endAgent(a, true, "")
	case recovery.ActTerminate:
		w.endAgent(a, true, d.Reason)
	default:
		w.checker.violate(w, "investigation %d: engine asked for %s, which the simulator does not execute", a.id, d.Action)
		a.settle()
	}
}

// timer is the time an engine decision asked for.
func (w *sim) timer(slot, tok int32) {
	a := w.agents[slot]
	if !a.waiting(phTimer, tok) {
		return
	}
	w.last = w.now
	a.settle()
	if w.proceed(a, resTimer, recovery.Event{}) {
		w.timerDue(a)
	}
}

// timerDue carries out the time a's engine asked for, on a worker.
func (w *sim) timerDue(a *agent) {
	switch a.timerAct {
	case recovery.ActInspect:
		w.inspect(a)
	case recovery.ActPause:
		// The pause renews the budget allotment it waited for.
		a.tokBase, a.compBase, a.wallBase, a.costBase = a.tokens, a.compute+a.pendCPU, w.now, a.cost+a.pendCost
		w.observe(a, recovery.Event{Kind: recovery.EvTimer})
	default:
		if a.modelRetry {
			// The refused model turn is tried again.
			if w.budgetStops(a, w.modelSpend()) {
				return
			}
			w.think(a)
			a.modelRetried = true
			return
		}
		// A retry or parking is over: ask to send again, naming the tool (after a crash
		// in a new step's model turn, the engine's last tool is the previous step's).
		w.syncOp(a)
		w.askSend(a)
	}
}

// inspect looks a's current operation up by its idempotency key at its tool.
func (w *sim) inspect(a *agent) {
	w.syncOp(a)
	op := a.op
	l := w.lookup(a)
	t := &w.tools[op.tool]
	s := w.spanFor(a, record.OpInspect, w.newSpanID())
	s.Tool, s.ToolVersion = t.cfg.Name, t.cfg.Version
	s.HasKey, s.OpKey, s.Attempt = true, op.key, op.attempts
	s.Start, s.End = w.now, w.now
	s.Status = record.StatusOK
	down := int32(-1) // the fault that kept the tool from answering
	if l == recovery.LookupFailed {
		s.Status = record.StatusError
		s.FailureClass = recovery.UncertainCompletion.String()
		if down = w.toolDown(t); down >= 0 {
			s.FaultID = w.faults[down].id
		}
	}
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	s.Attrs = append(s.Attrs[:0], record.Attr{Key: "lookup", Value: l.String()})
	s.Attrs = w.errorType(s.Attrs, down)
	w.sink.Span(s)
	if l == recovery.LookupCompleted {
		// The stored result is taken: it reaches the investigation after all.
		op.delivered = true
		w.release(op, true)
		a.resultSpan = op.execSpan
	}
	w.observe(a, recovery.Event{Kind: recovery.EvInspected, Tool: int(op.tool), Lookup: l})
}
