package compute

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/mayday-sim/mayday/metric"
)

// Row is the metrics row of one run: the `metrics` view's columns for it.
type Row struct {
	// Values holds every metric of metric.All, by metric.Index; NaN where the view gives
	// NULL (a ratio with a zero denominator, a metric that cannot be measured).
	Values []float64
	// TerminationReasons counts terminated roots by reason ("unspecified" when none).
	TerminationReasons map[string]int64
	// Currency is the currency of the run's prices, "" when unpriced.
	Currency string
}

// Get returns the metric called name, NaN when undefined or not a metric.
func (r Row) Get(name string) float64 {
	if i := metric.Index(name); i >= 0 {
		return r.Values[i]
	}
	return math.NaN()
}

func (r Row) set(name string, v float64) {
	i := metric.Index(name)
	if i < 0 {
		panic("compute: " + name + " is not a metric")
	}
	r.Values[i] = v
}

// ratio is num / nullif(den, 0).
func ratio(num, den float64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// ErrUnguardedPark reports a park in a run the Sink was told has no guards (Options.Guards).
var ErrUnguardedPark = errors.New("compute: an operation was parked, but the options say the run has no breaker or retry budget")

// ErrOrder reports records the Sink cannot place: a span or transition that names an
// investigation whose row came before it, or a span whose op_key names another
// investigation. The simulator writes neither; the metrics view of a stored trace of such
// records still measures it.
var ErrOrder = errors.New("compute: a span or transition came after its investigation's row, or named another investigation's operation")

// ErrTooLarge reports a Sink that held more than Options.MaxHeld records of investigations
// still open, and let go of them.
var ErrTooLarge = errors.New("compute: more records of open investigations than Options.MaxHeld")

// ErrFinished is the error of a second Finish: the first let go of what it read.
var ErrFinished = errors.New("compute: Finish called twice")

// settle takes the last of investigation e (its row, or the end of the run): its
// operations' wasted model turns, the places of its parks, its recovery episodes, its
// waste, its pending time and, for a root, its counts; then lets the entry go.
func (s *Sink) settle(e *inv) {
	s.markWastedTurns(e)
	s.placeMarks(e)
	s.settleCalls(e)
	s.episodes(e)

	st := stSettled
	if e.seen {
		st |= stSeen
		if e.parent == 0 {
			st |= stRoot
		}
		if e.completed {
			st |= stCompleted
		}
		if e.terminated {
			st |= stTerminated
		}
		if e.trulyValid {
			st |= stTrulyValid
		}
		if e.validated {
			st |= stValidated
		}
		// the tree's totals, on its root (views/02_roots.sql)
		var tree uint16
		if e.escalations > 0 {
			tree |= stTreeEsc
		}
		if e.completed && e.reduced {
			tree |= stTreeReduced
		}
		if e.completed && !e.trulyValid {
			tree |= stTreeWrong
		}
		if tree != 0 {
			s.setState(e.root, tree)
		}
		s.tokens += e.tokens
		s.pendingTime(e)
		if e.parent == 0 {
			s.root(e)
		}
	}
	s.setState(e.id, st)

	var turnWaste int64
	for i := range e.plans {
		if p := &e.plans[i]; p.bad {
			turnWaste += p.tokens
		}
		delete(s.plans, e.plans[i].id)
	}
	for i := range e.ops {
		if j, ok := s.ops.get(e.ops[i].key); ok && int(j) == i {
			s.ops.delete(e.ops[i].key)
		}
	}
	w := waste{computeC: e.execWasteCompute, computeN: e.execCompute,
		costC: e.spentFailed + e.execSpentWaste, costN: e.spent + e.execSpent}
	if e.seen {
		w.tokC, w.tokN = min(turnWaste, e.tokens), e.tokens
	}
	s.settleWaste(e, w)
	if s.pend[e.id] != nil {
		s.resolve(e.id)
	}
	delete(s.live, e.id)
	s.held -= e.held
	// The entries kept for reuse are bounded, and so is what each keeps: a run's peak of
	// open investigations (a backlog) would otherwise stay held, with the largest slices
	// any of them grew, until the run ends.
	if len(s.free) < maxFree && cap(e.calls)+cap(e.ops)+cap(e.keyed)+cap(e.plans) <= maxFreeCap {
		s.free = append(s.free, e)
	}
}

// maxFree is how many settled entries the Sink keeps for reuse, maxFreeCap the most
// elements of their slices an entry kept may hold.
const maxFree, maxFreeCap = 1024, 4096

// settleWaste counts the waste w of investigation e, which has just settled, as complete or
// not (views/07_token_costs.sql: it and its root completed); when it completed and its root
// has not settled yet, under the root's pending waste until it does.
func (s *Sink) settleWaste(e *inv, w waste) {
	if e.seen && e.completed {
		rst := s.state(e.root)
		if rst&stSettled == 0 {
			p := s.pend[e.root]
			if p == nil {
				p = &pending{}
				s.pend[e.root] = p
			}
			p.add(w)
			p.members = append(p.members, e.id)
			s.pendingRoot[e.id] = e.root
			return
		}
		if rst&stSeen != 0 && rst&stCompleted != 0 {
			s.setState(e.id, stResolved|stComplete)
			s.wastedComplete.add(w)
			return
		}
	}
	s.setState(e.id, stResolved)
	s.wasted.add(w)
}

// resolve counts the pending waste of root, which has settled (or never will).
func (s *Sink) resolve(root int64) {
	p := s.pend[root]
	delete(s.pend, root)
	st := s.state(root)
	bits := stResolved
	if st&stSeen != 0 && st&stCompleted != 0 {
		bits |= stComplete
		s.wastedComplete.add(p.waste)
	} else {
		s.wasted.add(p.waste)
	}
	for _, m := range p.members {
		s.setState(m, bits)
		delete(s.pendingRoot, m)
	}
}

// lateWaste counts the waste w of an execution of investigation id after it settled.
func (s *Sink) lateWaste(id int64, w waste) {
	if root, ok := s.pendingRoot[id]; ok {
		s.pend[root].add(w)
		return
	}
	if s.state(id)&stComplete != 0 {
		s.wastedComplete.add(w)
	} else {
		s.wasted.add(w)
	}
}

// root counts a root investigation's row (views/02_roots.sql, views/11_metrics.sql): the
// counts that do not depend on its tree, its termination reason, its arrival and end.
func (s *Sink) root(e *inv) {
	if e.terminated {
		reason := e.reason
		if s.opts.Redact != nil {
			reason = s.opts.Redact(reason)
		}
		if reason == "" {
			reason = "unspecified"
		}
		s.reasons[reason]++
	}
	s.rootArrived = append(s.rootArrived, us(e.arrived))
	if e.ended {
		s.rootEnded = append(s.rootEnded, us(e.endedAt))
	}
}

// markWastedTurns marks the model turns whose decided work was thrown away or repeated
// (views/07_token_costs.sql): of the turns an operation's attempts name, all but the first
// (by start, then span id), and the first too when the operation has no valid result.
func (s *Sink) markWastedTurns(e *inv) {
	turns, ids := s.turnBuf[:0], s.idBuf[:0]
	for i := range e.ops {
		o := &e.ops[i]
		turns = turns[:0]
		ids = causersOf(o, ids)
		for _, id := range ids {
			if ref, ok := s.plans[id]; ok {
				if owner := s.live[ref.inv]; owner != nil {
					turns = append(turns, &owner.plans[ref.i])
				}
			}
		}
		slices.SortFunc(turns, func(a, b *plan) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.id, b.id))
		})
		for j, p := range turns {
			if j > 0 || !o.valid {
				p.bad = true
			}
		}
	}
	s.turnBuf, s.idBuf = turns[:0], ids[:0]
}

// Finish computes the metrics row; events is the simulation's event count (runs.events).
// The Sink must receive no record after it, and Finish is called once: it lets go of the
// calls and valid results it reads, to hold less at the end of a large run.
func (s *Sink) Finish(events int64) (Row, error) {
	if s.finished {
		return Row{}, ErrFinished
	}
	s.finished = true
	if s.over {
		return Row{}, ErrTooLarge
	}
	if s.unplaced {
		return Row{}, ErrUnguardedPark
	}
	if s.late && !s.opts.Replay {
		return Row{}, ErrOrder
	}
	// The investigations without a row (none in a run of the simulator, whose every
	// investigation has one, ended or in flight), in id order.
	for _, id := range slices.Sorted(maps.Keys(s.live)) {
		s.settle(s.live[id])
	}
	for _, root := range slices.Sorted(maps.Keys(s.pend)) {
		s.resolve(root)
	}
	r := Row{Values: make([]float64, len(metric.All)), TerminationReasons: s.reasons}
	for i := range r.Values {
		r.Values[i] = unset
	}
	end := us(s.end)
	r.set("events", float64(events))
	r.set("makespan", float64(end)/1e6)
	completed := s.roots(r)
	s.waste(r, completed)
	if s.opts.Prices != nil {
		r.Currency = s.opts.Prices.Currency
	}
	r.set("retry_amplification", ratio(float64(s.attempts), float64(s.operations)))
	inside, err := s.findIncidents(end)
	if err != nil {
		return Row{}, err
	}
	r.set("correlated_failure_share", ratio(float64(inside), float64(s.failedCalls)))
	for _, i := range s.openEpisodes {
		s.episodeRows.at(i).end = end
	}
	s.recovery(r, end)
	if err := s.goodput(r, end); err != nil {
		return Row{}, err
	}
	s.capacity(r, end)
	for i, v := range r.Values {
		if math.Float64bits(v) == math.Float64bits(unset) {
			return Row{}, fmt.Errorf("%w: %s", ErrNotComputed, metric.All[i].Name)
		}
	}
	return r, nil
}

// unset marks a metric Finish has not computed yet: a NaN of its own bits, which no
// computation gives (an undefined metric is math.NaN()).
var unset = math.Float64frombits(0x7ff8_dead_beef_0001)

// ErrNotComputed reports a metric of metric.All that Finish does not compute: a metric
// added to the table must be computed here too (docs/extending.md).
var ErrNotComputed = errors.New("compute: a metric of the table is not computed")

// Tables returns the derived tables of the run, for run id runID, once Finish has
// succeeded.
func (s *Sink) Tables(runID string) Tables {
	t := Tables{Curve: s.curveRows, Goodput: s.goodputRows,
		Incidents: s.incidentRows, Saturation: s.saturationRows, ToolMinutes: s.minuteRows}
	if s.life != nil {
		t.Lifecycle, t.Costs = s.life.Rows(runID), s.costs.Rows(runID)
		for i := range t.Lifecycle {
			t.Lifecycle[i].At += s.at(0) - TimeOf(0)
		}
	}
	for i := range t.Incidents {
		t.Incidents[i].RunID = runID
	}
	for i := range t.Saturation {
		t.Saturation[i].RunID = runID
	}
	for i := range t.ToolMinutes {
		t.ToolMinutes[i].RunID = runID
	}
	// The rows of recovery_episodes are made a range at a time, when they are stored: at a
	// million investigations they are over a million rows of some 300 bytes each, which the
	// end of a run held all at once beside the records they are made from.
	if n := s.episodeRows.len(); n > 0 {
		t.episodeCount = n
		t.episodeRange = func(dst []Episode, from, to int) []Episode {
			for i := from; i < to; i++ {
				dst = append(dst, s.row(s.episodeRows.at(i), runID))
			}
			return dst
		}
	}
	if s.stats != nil {
		t.ToolStats = s.stats.RowsOf(runID, t.Incidents, func(each func(tool string, secs float64)) {
			for i := range s.episodeRows.len() {
				// A row has a tool when its record does (s.row).
				if e := s.episodeRows.at(i); e.tool != noTool {
					each(s.tools.list[e.tool], e.seconds())
				}
			}
		})
	}
	for i := range t.Curve {
		t.Curve[i].RunID = runID
	}
	for i := range t.Goodput {
		t.Goodput[i].RunID = runID
	}
	return t
}

// eachState calls f on the state of every settled investigation.
func (s *Sink) eachState(f func(st uint16)) { s.states.each(f) }

// roots sets the rates over root investigations and returns the completed count.
func (s *Sink) roots(r Row) float64 {
	var started, completed, terminated, correct, validated, full, escalated float64
	s.eachState(func(st uint16) {
		if st&stSeen == 0 || st&stRoot == 0 {
			return
		}
		started++
		if st&stCompleted != 0 {
			completed++
			if st&stTrulyValid != 0 && st&stTreeWrong == 0 && st&stTreeReduced == 0 {
				correct++
			}
			if st&stValidated != 0 {
				validated++
			}
			if st&stTreeReduced == 0 {
				full++
			}
		}
		if st&stTerminated != 0 {
			terminated++
		}
		if st&stTreeEsc != 0 {
			escalated++
		}
	})
	r.set("started", started)
	r.set("completed", completed)
	r.set("terminated", terminated)
	r.set("completion_rate", ratio(completed, started))
	r.set("correct_completion_rate", ratio(correct, started))
	r.set("validation_pass_rate", ratio(validated, completed))
	r.set("full_scope_completion_rate", ratio(full, started))
	r.set("human_intervention_rate", ratio(escalated, started))
	r.set("terminated_rate", ratio(terminated, started))
	r.set("unfinished_rate", ratio(started-completed-terminated, started))
	return completed
}

// waste sets tokens, compute and money per completion and their wasted shares.
func (s *Sink) waste(r Row, completed float64) {
	wastedTokens := s.wasted.tokN + s.wastedComplete.tokC
	wastedCompute := s.wasted.computeN + s.wastedComplete.computeC
	wastedCost := s.wasted.costN + s.wastedComplete.costC
	r.set("tokens_per_completion", ratio(float64(s.tokens), completed))
	r.set("wasted_token_ratio", ratio(float64(wastedTokens), float64(s.tokens)))
	r.set("duplicate_side_effects", float64(s.dupSideEffects))
	r.set("discarded_results", float64(s.discarded))
	r.set("compute_per_completion", ratio(s.compute, completed))
	r.set("wasted_compute_ratio", ratio(wastedCompute, s.compute))
	if s.opts.Prices == nil {
		r.set("cost_per_completion", math.NaN())
		r.set("wasted_cost_ratio", math.NaN())
		return
	}
	r.set("cost_per_completion", ratio(s.cost, completed))
	r.set("wasted_cost_ratio", ratio(wastedCost, s.cost))
}
