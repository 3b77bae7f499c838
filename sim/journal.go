package sim

import (
	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/sim/record"
)

// journal is the durable journal of every investigation's engine: each record becomes a
// `transitions` row (notes too, with from = to) and is kept, while the investigation is
// open, so that a new worker can rebuild the engine after a crash. Every journalCompact
// records the journal is compacted: the records are folded into the investigation's
// snapshot engine (recovery.Engine.Fold), so a takeover replays the snapshot and the
// records since. Memory per open investigation stays bounded however long it retries.

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
	if len(a.journal) >= journalCompact {
		w.compact(a)
	}
	w.trans = record.Transition{
		InvestigationID: id, At: r.At, From: r.From.String(), To: r.To.String(),
		Event: r.Event.String(), FailureClass: className(r.Class), Action: r.Action.String(),
		DecidedBy: r.DecidedBy.String(), Reason: r.Reason, Attempt: r.Attempt,
	}
	w.sink.Transition(&w.trans)
}

// className is the trace spelling of a failure class ("" for none).
func className(c recovery.Class) string { return c.String() }

// journalCompact is how many records an open investigation's journal holds before they are
// folded into its snapshot.
const journalCompact = 16

// compact folds a's journal records into its snapshot engine and empties the journal.
func (w *sim) compact(a *agent) {
	if a.snap == nil {
		a.snap = recovery.New(a.id, &w.policy, nil)
	}
	if err := a.snap.Fold(a.journal); err != nil {
		w.checker.violate(w, "investigation %d: compacting %d journal records failed: %v", a.id, len(a.journal), err)
	}
	a.snapState = a.journal[len(a.journal)-1].To
	clear(a.journal)
	a.journal = a.journal[:0]
}

// rebuild replays a's snapshot and the journal records since into a new engine.
func (w *sim) rebuild(a *agent) (*recovery.Engine, error) {
	if a.snap == nil {
		return recovery.Replay(a.id, &w.policy, a.journal)
	}
	e := a.snap.Copy()
	if err := e.Fold(a.journal); err != nil {
		return nil, err
	}
	return e, nil
}

// journalState is the state a's journal ends in: its last record's, else its snapshot's.
func (a *agent) journalState() recovery.State {
	if n := len(a.journal); n > 0 {
		return a.journal[n-1].To
	}
	if a.snap != nil {
		return a.snapState
	}
	return recovery.Pending
}
