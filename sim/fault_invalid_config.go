package sim

import "github.com/mayday-sim/mayday/scenarios"

// invalid_config: with the fault's probability a root investigation starts from a bad
// configuration (its subagents inherit it): every result it produces fails validation.
type invalidConfig struct{ p float64 }

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultInvalidConfig,
			Doc:  "per root investigation: its configuration is permanently bad, so every step's result fails validation (its subagents share it)",
			Keys: []string{"probability"}, Required: []string{"probability"},
		},
		build:  func(f *fault, c *scenarios.Fault) { f.x = &invalidConfig{p: c.Probability} },
		params: func(f *fault, p *params) { p.field("probability", f.x.(*invalidConfig).p) },
		investigation: func(w *sim, f *fault, a, parent *agent) {
			if f.hits(w, a, f.x.(*invalidConfig).p) && parent == nil {
				a.cfgBad, a.cfgFault = true, f.id
			}
		},
	})
}
