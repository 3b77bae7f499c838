package sim

import (
	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/sim/record"
)

// scheduleCrashes tells the faults that kill workers (worker_crash) that a worker now
// works for a: each schedules when it next dies.
func (w *sim) scheduleCrashes(a *agent) {
	for _, fi := range w.crash {
		w.faults[fi].fk.worker(w, fi, a)
	}
}

// crashed kills a's worker: everything it waited for is lost (replies to it are discarded)
// but its journal survives. A worker that is idle (pending, awaiting a human, waiting for
// its subagents) has nothing to lose; its crash clock simply restarts (the exponential
// clock is memoryless).
func (w *sim) crashed(slot, ctok, fi int32) {
	a := w.agents[slot]
	if !a.live || a.crashTok != ctok || a.down {
		return
	}
	w.last = w.now
	a.crashTok++
	if !crashable(a) {
		w.scheduleCrashes(a)
		return
	}
	w.kill(a, fi)
}

// kill takes a's worker down under fault fi; the lease then runs.
func (w *sim) kill(a *agent, fi int32) {
	a.crashes++
	if a.phase == phAttempt {
		// The attempt's outcome dies with the worker: its span ends here, uncertain.
		t := &w.tools[a.op.tool]
		t.failures++
		w.toolSpan(a, t, record.StatusError, recovery.UncertainCompletion, w.faults[fi].id, false, 0)
	}
	a.tok++
	a.phase, a.down = phDown, true
	a.diedAt, a.diedFault, a.diedWorker = w.now, fi, a.wid
	w.releaseWorker(a)
	w.push(w.now+int64(w.sc.Recovery.Lease), evLease, a.slot, a.crashTok, 0)
}

// leaseExpired lets a new worker take over: it rebuilds the engine from the journal alone
// and tells it the old worker crashed.
func (w *sim) leaseExpired(slot, ctok int32) {
	a := w.agents[slot]
	if !a.live || a.crashTok != ctok || !a.down {
		return
	}
	w.last = w.now
	w.takeoverSpan(a)
	// With limited workers the takeover waits for a free one; a stays down until then.
	w.acquire(a, contTakeOver)
}

// takeoverSpan records a's crash as the fleet learns of it, when the lease expires: from
// the instant the worker died to now, on the operation in hand.
func (w *sim) takeoverSpan(a *agent) {
	s := w.spanFor(a, record.OpTakeover, w.newSpanID())
	if op := a.op; op != nil {
		s.HasKey, s.OpKey = true, op.key
	}
	s.Start, s.End = a.diedAt, w.now
	s.Worker = a.diedWorker // the worker that died: a new one is not found yet
	s.Status = record.StatusError
	s.FaultID = w.faults[a.diedFault].id
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	w.sink.Span(s)
}

// takeOver is a new worker taking over a crashed investigation.
func (w *sim) takeOver(a *agent) {
	a.down = false
	a.phase = phIdle
	e, err := w.rebuild(a)
	if err != nil {
		w.checker.violate(w, "investigation %d: replay of its journal (%d records since the snapshot) failed: %v", a.id, len(a.journal), err)
	} else {
		w.checker.replayed(w, a, e)
		e.SetJournal((*journal)(w))
		a.eng = e
	}
	w.scheduleCrashes(a)
	w.observe(a, recovery.Event{Kind: recovery.EvCrashed})
}
