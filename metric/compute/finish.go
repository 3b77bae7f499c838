package compute

import (
	"cmp"
	"errors"
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

// Finish computes the metrics row; events is the simulation's event count (runs.events).
// The Sink must receive no record after it.
func (s *Sink) Finish(events int64) (Row, error) {
	if s.unplaced {
		return Row{}, ErrUnguardedPark
	}
	r := Row{Values: make([]float64, len(metric.All)), TerminationReasons: map[string]int64{}}
	end := us(s.end)
	r.set("events", float64(events))
	r.set("makespan", float64(end)/1e6)
	s.trees()
	completed := s.roots(r)
	s.markWastedTurns()
	s.waste(r, completed)
	if s.opts.Prices != nil {
		r.Currency = s.opts.Prices.Currency
	}
	s.placeMarks()
	r.set("retry_amplification", ratio(float64(s.attempts), float64(s.operations)))
	r.set("correlated_failure_share", ratio(float64(s.incidentFailures()), float64(s.failedCalls)))
	s.recovery(r, end)
	s.goodput(r, end)
	s.capacity(r, end)
	return r, nil
}

// each calls f on every investigation entry, the dense ones by id, then the others by id.
func (s *Sink) each(f func(id int64, e *inv)) {
	for i := range s.invs {
		f(int64(i), &s.invs[i])
	}
	for _, id := range slices.Sorted(maps.Keys(s.sparse)) {
		f(id, s.sparse[id])
	}
}

// trees sums each root's tree (views/02_roots.sql) onto the root's entry.
func (s *Sink) trees() {
	s.each(func(_ int64, e *inv) {
		if !e.seen {
			return
		}
		esc, reduced, wrong := e.escalations, e.completed && e.reduced, e.completed && !e.trulyValid
		root := s.invOf(e.root)
		root.treeEscalations += esc
		root.treeReduced = root.treeReduced || reduced
		root.treeWrong = root.treeWrong || wrong
	})
}

// roots sets the rates over root investigations and returns the completed count.
func (s *Sink) roots(r Row) float64 {
	var started, completed, terminated, correct, validated, full, escalated float64
	s.each(func(_ int64, e *inv) {
		if !e.seen || e.parent != 0 {
			return
		}
		started++
		if e.completed {
			completed++
			if e.trulyValid && !e.treeWrong {
				correct++
			}
			if e.validated {
				validated++
			}
			if !e.treeReduced {
				full++
			}
		}
		if e.terminated {
			terminated++
			reason := s.reasons[e.reason]
			if s.opts.Redact != nil {
				reason = s.opts.Redact(reason)
			}
			if reason == "" {
				reason = "unspecified"
			}
			r.TerminationReasons[reason]++
		}
		if e.treeEscalations > 0 {
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
	return completed
}

// complete reports whether an investigation and its root completed.
func (s *Sink) complete(e *inv) bool {
	if !e.seen || !e.completed {
		return false
	}
	root := s.lookup(e.root)
	return root != nil && root.seen && root.completed
}

// markWastedTurns marks the model turns whose decided work was thrown away or repeated
// (views/07_token_costs.sql) and sums their tokens per investigation.
func (s *Sink) markWastedTurns() {
	var turns []int32
	var ids []uint64
	for i := range s.opList {
		o := &s.opList[i]
		turns = turns[:0]
		ids = s.causersOf(o, int32(i), ids)
		for _, id := range ids {
			if p, ok := s.plans[id]; ok {
				turns = append(turns, p)
			}
		}
		slices.SortFunc(turns, func(a, b int32) int {
			pa, pb := &s.planList[a], &s.planList[b]
			return cmp.Or(cmp.Compare(pa.start, pb.start), cmp.Compare(pa.id, pb.id))
		})
		for j, p := range turns {
			if j > 0 || !o.valid {
				s.planList[p].bad = true
			}
		}
	}
	for i := range s.planList {
		if p := &s.planList[i]; p.bad {
			if e := s.lookup(p.inv); e != nil {
				e.turnWaste += p.tokens
			}
		}
	}
}

// waste sets tokens, compute and money per completion and their wasted shares.
func (s *Sink) waste(r Row, completed float64) {
	var tokens, wastedTokens int64
	var wastedCompute, cost, wastedCost float64
	s.each(func(_ int64, e *inv) {
		complete := s.complete(e)
		if e.seen {
			tokens += e.tokens
			if complete {
				wastedTokens += min(e.turnWaste, e.tokens)
			} else {
				wastedTokens += e.tokens
			}
		}
		cost += e.spent + e.execSpent
		if complete {
			wastedCompute += e.execWasteCompute
			wastedCost += e.spentFailed + e.execSpentWaste
		} else {
			wastedCompute += e.execCompute
			wastedCost += e.spent + e.execSpent
		}
	})
	r.set("tokens_per_completion", ratio(float64(tokens), completed))
	r.set("wasted_token_ratio", ratio(float64(wastedTokens), float64(tokens)))
	r.set("duplicate_side_effects", float64(s.dupSideEffects))
	r.set("discarded_results", float64(s.discarded))
	r.set("compute_per_completion", ratio(s.compute, completed))
	r.set("wasted_compute_ratio", ratio(wastedCompute, s.compute))
	if s.opts.Prices == nil {
		r.set("cost_per_completion", math.NaN())
		r.set("wasted_cost_ratio", math.NaN())
		return
	}
	r.set("cost_per_completion", ratio(cost, completed))
	r.set("wasted_cost_ratio", ratio(wastedCost, cost))
}
