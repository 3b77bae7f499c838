package compute

import "github.com/mayday-sim/mayday/sim/record"

// LifecycleRow is a row of lifecycle (docs/tables.md; its test-only SQL is analysis/testdata/oracle/10_lifecycle.sql): how many investigations of
// one kind (agent 'root' or 'subagent') are in each lifecycle state at the end of minute
// Minute of the run (At, the start of the next minute).
type LifecycleRow struct {
	RunID         string `db:"run_id"`
	Minute        int64  `db:"minute"`
	Agent         string `db:"agent"`
	At            Time   `db:"at"`
	Pending       int64  `db:"pending"`
	Running       int64  `db:"running"`
	Waiting       int64  `db:"waiting"`
	Recovering    int64  `db:"recovering"`
	AwaitingHuman int64  `db:"awaiting_human"`
	Completed     int64  `db:"completed"`
	Terminated    int64  `db:"terminated"`
}

// lifeStates are lifecycle's columns, in order; a state not among them counts nowhere.
var lifeStates = [...]string{"pending", "running", "waiting", "recovering", "awaiting_human", "completed", "terminated"}

// lifeState is the column of state s, -1 for none.
func lifeState(s string) int8 {
	for i, n := range lifeStates {
		if n == s {
			return int8(i)
		}
	}
	return -1
}

// Lifecycle computes the lifecycle rows of one run from its records (a record.Sink).
//
// A transition counts for the kind of its investigation, which its row tells: the
// transitions of an investigation are held, as (instant, from, to), until its row
// arrives, and then added to the moves per minute of its kind; an investigation whose row
// never arrives counts nowhere (the view's JOIN). Memory: the transitions of the
// investigations in flight, a byte per investigation that has its row (its kind, for a
// transition that would come after it), and seven counters per kind and minute.
type Lifecycle struct {
	origin Time
	end    int64 // µs since the Unix epoch: the run's last recorded instant (run_clock.end_at)
	hasEnd bool
	held   map[int64][]lifeMove
	kinds  idFlags[uint8]                       // lSeen, lSub
	moves  [2]map[int64]*[len(lifeStates)]int64 // per kind, the moves of each minute
	// The minute each kind moved in last, and its counters: a transition moves out of one
	// state and into another in the same minute, and records come in time order.
	lastMinute [2]int64
	last       [2]*[len(lifeStates)]int64
}

// The kind of an investigation whose row arrived (Lifecycle.kinds).
const (
	lSeen uint8 = 1 << iota
	lSub
)

var _ record.Sink = (*Lifecycle)(nil)

// lifeMove is a transition that moves an investigation from one state to another.
type lifeMove struct {
	at       int64 // µs since the Unix epoch
	from, to int8
}

// NewLifecycle returns an empty Lifecycle of a run whose time 0 is origin (run_origin_us:
// µs since the Unix epoch; TimeOf(0) for a simulated run, the import's time_zero_us for
// an imported one).
func NewLifecycle(origin Time) *Lifecycle {
	return &Lifecycle{origin: origin, held: map[int64][]lifeMove{}, kinds: newIDFlags[uint8](0),
		moves: [2]map[int64]*[len(lifeStates)]int64{{}, {}}}
}

// mark extends the run's extent to instant ns.
func (l *Lifecycle) mark(ns int64) {
	at := int64(TimeOf(ns))
	if !l.hasEnd || at > l.end {
		l.end, l.hasEnd = at, true
	}
}

// move adds delta investigations of kind k entering state st at instant at (µs).
func (l *Lifecycle) move(k int, at int64, st int8, delta int64) {
	if st < 0 {
		return
	}
	m := simMinute(at, l.origin)
	c := l.last[k]
	if c == nil || l.lastMinute[k] != m {
		if c = l.moves[k][m]; c == nil {
			c = &[len(lifeStates)]int64{}
			l.moves[k][m] = c
		}
		l.last[k], l.lastMinute[k] = c, m
	}
	c[st] += delta
}

func (l *Lifecycle) apply(k int, m lifeMove) {
	l.move(k, m.at, m.from, -1)
	l.move(k, m.at, m.to, 1)
}

// Transition holds a transition that changes the state until its investigation's row.
func (l *Lifecycle) Transition(r *record.Transition) {
	l.mark(r.At)
	from := r.From
	if from == "" {
		from = "pending"
	}
	if from == r.To {
		return
	}
	m := lifeMove{int64(TimeOf(r.At)), lifeState(from), lifeState(r.To)}
	if st := l.kinds.get(r.InvestigationID); st&lSeen != 0 {
		k := 0
		if st&lSub != 0 {
			k = 1
		}
		l.apply(k, m)
		return
	}
	l.held[r.InvestigationID] = append(l.held[r.InvestigationID], m)
}

// Investigation counts the arrival and the held transitions of an investigation.
func (l *Lifecycle) Investigation(r *record.Investigation) {
	l.mark(r.ArrivedAt)
	if r.Ended {
		l.mark(r.EndedAt)
	}
	k, bits := 0, lSeen
	if r.ParentID != 0 {
		k, bits = 1, lSeen|lSub
	}
	l.kinds.set(r.InvestigationID, bits)
	l.move(k, int64(TimeOf(r.ArrivedAt)), 0, 1)
	for _, m := range l.held[r.InvestigationID] {
		l.apply(k, m)
	}
	delete(l.held, r.InvestigationID)
}

// Span and Execution extend the run's extent (run_clock); Fault, Sample and Worker do not.
func (l *Lifecycle) Span(r *record.Span) { l.mark(r.End) }
func (l *Lifecycle) Execution(r *record.Execution) {
	if r.Outcome != "hung" {
		l.mark(r.End)
	}
}
func (l *Lifecycle) Fault(*record.Fault)   {}
func (l *Lifecycle) Sample(*record.Sample) {}
func (l *Lifecycle) Worker(*record.Worker) {}

// Minutes is run_clock.minutes of the run: how many minutes its recorded instants touch
// (arrivals, ends, spans' ends, transitions, executions' ends but of those hung), 1 when
// there are none.
func (l *Lifecycle) Minutes() int64 {
	end := int64(l.origin)
	if l.hasEnd {
		end = l.end
	}
	return simMinute(end, l.origin) + 1
}

// simMinute is sim_minute of instant at (µs) in a run whose time 0 is origin: DuckDB's
// integer division, which truncates toward zero.
func simMinute(at int64, origin Time) int64 { return (at - int64(origin)) / usPerMinute }

// Rows returns the rows of lifecycle of run runID: for each minute 0 .. Minutes()-1, by
// minute, the rows of 'root' then 'subagent'. A move before minute 0 or after the last
// counts nowhere (the view sums moves over its grid only).
func (l *Lifecycle) Rows(runID string) []LifecycleRow {
	n, origin := l.Minutes(), l.origin
	var per [2][][len(lifeStates)]int64
	for k := range per {
		per[k] = make([][len(lifeStates)]int64, max(n, 0))
		for m, c := range l.moves[k] {
			if m < 0 || m >= n {
				continue
			}
			for i, d := range c {
				per[k][m][i] += d
			}
		}
	}
	rows := make([]LifecycleRow, 0, 2*max(n, 0))
	var run [2][len(lifeStates)]int64
	for m := range n {
		for k, agent := range [2]string{"root", "subagent"} {
			for i, d := range per[k][m] {
				run[k][i] += d
			}
			c := run[k]
			rows = append(rows, LifecycleRow{RunID: runID, Minute: m, Agent: agent,
				At: origin + Time((m+1)*usPerMinute), Pending: c[0], Running: c[1], Waiting: c[2],
				Recovering: c[3], AwaitingHuman: c[4], Completed: c[5], Terminated: c[6]})
		}
	}
	return rows
}
