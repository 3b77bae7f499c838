package sim

import "github.com/mayday-sim/mayday/scenarios"

// budget_spike: with the fault's probability an investigation's model turns cost factor
// times as many tokens.
func init() {
	registerFault(scenarios.FaultBudgetSpike, &faultKind{
		params: func(f *fault, p *params) {
			p.field("probability", f.p)
			p.field("factor", f.factor)
		},
		investigation: func(w *sim, f *fault, a, _ *agent) {
			if f.hits(w, a) && f.factor > 0 {
				a.spike *= f.factor
				a.spikeFault = f.id
			}
		},
	})
}
