package sim

import (
	"fmt"

	"github.com/mayday-sim/mayday/recovery"
)

// maxViolations bounds how many violations a run keeps (the count is still reported).
const maxViolations = 100

// checker holds the invariant checks of a run (docs/architecture.md and the simulator's own
// bookkeeping). Cheap checks run as records are made; the rest at the end.
type checker struct {
	on         bool
	violations []string
	dropped    int
	rootsEnded int // root Investigation records emitted
}

func (c *checker) init(w *sim) {
	c.on = w.opt.Check
}

func (c *checker) violate(w *sim, format string, args ...any) {
	if len(c.violations) >= maxViolations {
		c.dropped++
		return
	}
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

// figure3 is the set of legal lifecycle edges, written from the state machine in
// docs/architecture.md independently of the engine's own table: every decision is taken while
// recovering; completion comes from running after a valid result; termination and human
// review come out of recovering, and a human's answer leads back to running or ends it.
var figure3 = [recovery.Terminated + 1][recovery.Terminated + 1]bool{
	recovery.Pending:       {recovery.Running: true},
	recovery.Running:       {recovery.Waiting: true, recovery.Recovering: true, recovery.Completed: true},
	recovery.Waiting:       {recovery.Running: true, recovery.Recovering: true},
	recovery.Recovering:    {recovery.Running: true, recovery.Waiting: true, recovery.AwaitingHuman: true, recovery.Terminated: true},
	recovery.AwaitingHuman: {recovery.Running: true, recovery.Terminated: true},
}

func legal(from, to recovery.State) bool {
	return int(from) < len(figure3) && int(to) < len(figure3) && figure3[from][to]
}

// transition checks one journal record: it starts where the last one ended, follows a
// legal edge (notes change nothing), and nothing follows a final state.
func (c *checker) transition(w *sim, a *agent, r *recovery.JournalRecord) {
	if !c.on {
		return
	}
	from := a.journalState()
	switch {
	case from.Final():
		c.violate(w, "investigation %d: record %s→%s after final state %s", a.id, r.From, r.To, from)
	case r.From != from:
		c.violate(w, "investigation %d: record starts in %s, last state was %s", a.id, r.From, from)
	case r.Note && r.From != r.To:
		c.violate(w, "investigation %d: note record changes state %s→%s", a.id, r.From, r.To)
	case !r.Note && !legal(r.From, r.To):
		c.violate(w, "investigation %d at %d: illegal transition %s→%s on %s (%s)", a.id, r.At, r.From, r.To, r.Event, r.Reason)
	}
}

// replayed checks that an engine rebuilt from the journal alone is where the old one was.
func (c *checker) replayed(w *sim, a *agent, e *recovery.Engine) {
	if !c.on {
		return
	}
	s1, r1 := a.eng.Op()
	s2, r2 := e.Op()
	if e.State() != a.eng.State() || s1 != s2 || r1 != r2 || e.Attempt() != a.eng.Attempt() ||
		e.Revisions() != a.eng.Revisions() || e.Escalations() != a.eng.Escalations() {
		c.violate(w, "investigation %d: replay gives %s op (%d,%d) attempt %d, the engine was %s op (%d,%d) attempt %d",
			a.id, e.State(), s2, r2, e.Attempt(), a.eng.State(), s1, r1, a.eng.Attempt())
	}
}

// keyedExec checks that a keyed tool executed a key at most once (to its end: executions
// cancelled on their caller's timeout never completed).
func (c *checker) keyedExec(w *sim, t *tool, op *opState) {
	if n := op.execs - op.cancelled; n > 1 {
		c.violate(w, "keyed tool %s executed key %v %d times", t.cfg.Name, op.key, n)
	}
}

// ended checks an investigation's end: a final engine state exactly when it ended.
func (c *checker) ended(w *sim, a *agent, ended bool) {
	if a.parentSlot < 0 {
		c.rootsEnded++
	}
	if !c.on {
		return
	}
	if st := a.eng.State(); st.Final() != ended {
		c.violate(w, "investigation %d ended=%t in state %s", a.id, ended, st)
	}
}

// final runs the end-of-run checks: conservation of root investigations and a clean slate.
func (c *checker) final(w *sim) {
	r := &w.res
	if sum := r.Completed + r.Terminated + r.AwaitingHuman + r.InFlight; sum != r.Started || c.rootsEnded != r.Started {
		c.violate(w, "investigations not conserved: started %d, completed %d + terminated %d + awaiting human %d + in flight %d = %d, records %d",
			r.Started, r.Completed, r.Terminated, r.AwaitingHuman, r.InFlight, sum, c.rootsEnded)
	}
	if !r.Partial && r.Started != w.roots && r.Makespan < w.horizon {
		c.violate(w, "only %d of %d investigations arrived before the run ended at %d", r.Started, w.roots, r.Makespan)
	}
	if w.open != 0 || w.openRoots != 0 {
		c.violate(w, "%d investigations (%d roots) left open after the run", w.open, w.openRoots)
	}
	if c.dropped > 0 {
		c.violations = append(c.violations, fmt.Sprintf("... and %d more violations", c.dropped))
	}
}
