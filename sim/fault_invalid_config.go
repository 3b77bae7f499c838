package sim

import "github.com/mayday-sim/mayday/scenarios"

// invalid_config: with the fault's probability a root investigation starts from a bad
// configuration (its subagents inherit it): every result it produces fails validation.
func init() {
	registerFault(scenarios.FaultInvalidConfig, &faultKind{
		params: func(f *fault, p *params) { p.field("probability", f.p) },
		investigation: func(w *sim, f *fault, a, parent *agent) {
			if f.hits(w, a) && parent == nil {
				a.cfgBad, a.cfgFault = true, f.id
			}
		},
	})
}
