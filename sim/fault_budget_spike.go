package sim

import "github.com/mayday-sim/mayday/scenarios"

// budget_spike: with the fault's probability an investigation's model turns cost factor
// times as many tokens.
type budgetSpike struct{ p, tokens float64 }

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultBudgetSpike,
			Doc:  "per investigation: every model turn uses `factor` times the tokens",
			Keys: []string{"probability", "factor"}, Required: []string{"probability", "factor"},
			Check: func(c scenarios.FaultChecker, f *scenarios.Fault, key string) { c.Number(f.Factor, key+".factor") },
		},
		build: func(f *fault, c *scenarios.Fault) { f.x = &budgetSpike{p: c.Probability, tokens: c.Factor} },
		params: func(f *fault, p *params) {
			b := f.x.(*budgetSpike)
			p.field("probability", b.p)
			p.field("factor", b.tokens)
		},
		investigation: func(w *sim, f *fault, a, _ *agent) {
			if b := f.x.(*budgetSpike); f.hits(w, a, b.p) { // Validate holds the factor at 1 or more
				a.spike *= b.tokens
				a.spikeFault = f.id
			}
		},
	})
}
