package sim

import "github.com/mayday-sim/mayday/scenarios"

// transient: each attempt at the tool (or model call) fails fast with the fault's
// probability, a draw from the fault's own stream.
type transient struct{ p float64 }

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultTransient,
			Doc:  "each attempt at the tool fails fast with this probability",
			Keys: []string{"tool", "probability"}, Required: []string{"probability"},
			Params: scenarios.FailureKeys, Check: scenarios.CheckFailure,
			Model: true,
		},
		build:  func(f *fault, c *scenarios.Fault) { f.x = &transient{p: c.Probability} },
		params: func(f *fault, p *params) { p.field("probability", f.x.(*transient).p) },
		attempt: func(w *sim, fi int32, a *agent, tok int32) bool {
			f := &w.faults[fi]
			if p := f.x.(*transient).p; p > 0 && chance(f.rng, p) {
				w.failFast(a, tok, fi)
				return true
			}
			return false
		},
		model: func(w *sim, fi int32) bool {
			f := &w.faults[fi]
			if p := f.x.(*transient).p; p > 0 && chance(f.rng, p) {
				w.adm.why = "model_error"
				return true
			}
			return false
		},
	})
}
