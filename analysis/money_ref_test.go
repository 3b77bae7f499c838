package analysis

import (
	"math"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// refMoney is the money a priced run spent, computed from its records and its price table
// as docs/metrics.md defines cost_per_completion and wasted_cost_ratio (written from the
// definitions, not from the SQL): every model turn and supervisor consultation at its
// model's price per 1000 input and output tokens, every tool attempt sent (not blocked) at
// its tool's price per call, and every execution's compute at its tool's price per
// compute-unit second. Wasted: the compute of wasted executions (duplicate, discarded, or
// for an investigation that, or whose root, did not complete), the call of every failed
// attempt (error or timeout), and the tokens and calls of investigations that, or whose
// root, did not complete.
func refMoney(p *scenarios.Prices, c *record.Collector, invByID map[int64]*record.Investigation) (cost, wasted float64) {
	done := func(id int64) bool {
		inv := invByID[id]
		return inv != nil && inv.FinalState == "completed"
	}
	complete := func(id int64) bool {
		inv := invByID[id]
		return inv != nil && done(inv.InvestigationID) && done(inv.RootID)
	}
	for i := range c.Spans {
		s := &c.Spans[i]
		var spent float64
		switch {
		case s.Operation == record.OpPlan || s.Operation == record.OpSupervise:
			if mp := p.Model(s.Model); mp != nil {
				spent = float64(s.InputTokens)/1000*mp.Input + float64(s.OutputTokens)/1000*mp.Output
			}
		case s.Operation == record.OpExecuteTool && s.Status != record.StatusBlocked:
			if tp := p.Tool(s.Tool); tp != nil {
				spent = tp.Call
			}
		}
		cost += spent
		if s.Operation == record.OpExecuteTool && isFailed(s) || !complete(s.InvestigationID) {
			wasted += spent
		}
	}
	for _, e := range c.Executions {
		tp := p.Tool(e.Tool)
		if tp == nil {
			continue
		}
		spent := e.Compute * tp.ComputeSecond
		cost += spent
		discarded := (e.Outcome == "ok" || e.Outcome == "lost") && !e.Delivered
		if e.Execution > 1 || discarded || !complete(e.InvestigationID) {
			wasted += spent
		}
	}
	return cost, wasted
}

// setMoney sets the money metrics of a run: undefined without prices, per completed root
// and as a share of the cost otherwise.
func setMoney(m *Metrics, p *scenarios.Prices, c *record.Collector, invByID map[int64]*record.Investigation) {
	if p == nil {
		m.Set("cost_per_completion", math.NaN())
		m.Set("wasted_cost_ratio", math.NaN())
		return
	}
	cost, wasted := refMoney(p, c, invByID)
	m.Currency = p.Currency
	m.Set("cost_per_completion", ratio(cost, m.Get("completed")))
	m.Set("wasted_cost_ratio", ratio(wasted, cost))
}
