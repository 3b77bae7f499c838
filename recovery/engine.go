package recovery

import "fmt"

// Engine is one investigation's recovery state machine.
type Engine struct {
	id      int64
	p       *Policy
	j       Journal
	state   State
	attempt int
	step    int32
	rev     int32
	esc     int
	revs    int
}

// New returns an engine in state Pending.
func New(id int64, p *Policy, j Journal) *Engine {
	return &Engine{id: id, p: p, j: j}
}

// Replay rebuilds an engine from its journal records.
func Replay(id int64, p *Policy, records []JournalRecord) (*Engine, error) {
	return New(id, p, nil), nil
}

// Observe feeds one event and returns the engine's decision.
func (e *Engine) Observe(now int64, ev Event, env Env) (Decision, error) {
	return Decision{}, nil
}

func (e *Engine) State() State               { return e.state }
func (e *Engine) Attempt() int               { return e.attempt }
func (e *Engine) Op() (step, revision int32) { return e.step, e.rev }
func (e *Engine) Escalations() int           { return e.esc }
func (e *Engine) Revisions() int             { return e.revs }

func (e *TransitionError) Error() string {
	return fmt.Sprintf("recovery: illegal transition %d -> %d on event %d", e.From, e.To, e.Event)
}

func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }
