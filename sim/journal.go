package sim

import (
	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/sim/record"
)

// journal is the durable journal of every investigation's engine: each record becomes a
// `transitions` row (notes too, with from = to) and is kept, while the investigation is
// open, so that a new worker can rebuild the engine with recovery.Replay after a crash.
type journal sim

var _ recovery.Journal = (*journal)(nil)

func (j *journal) Append(id int64, r *recovery.JournalRecord) {
	w := (*sim)(j)
	a := w.cur
	if a == nil || a.id != id {
		w.checker.violate(w, "journal record for investigation %d outside its engine's Observe", id)
		return
	}
	w.checker.transition(w, a, r)
	a.journal = append(a.journal, *r)
	w.trans = record.Transition{
		InvestigationID: id, At: r.At, From: r.From.String(), To: r.To.String(),
		Event: r.Event.String(), FailureClass: className(r.Class), Action: r.Action.String(),
		DecidedBy: r.DecidedBy.String(), Reason: r.Reason, Attempt: r.Attempt,
	}
	w.sink.Transition(&w.trans)
}

// className is the trace spelling of a failure class ("" for none).
func className(c recovery.Class) string { return c.String() }
