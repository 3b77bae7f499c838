package sim

import "github.com/mayday-sim/mayday/scenarios"

// transient: each attempt at the tool (or model call) fails fast with the fault's
// probability, a draw from the fault's own stream.
func init() {
	registerFault(scenarios.FaultTransient, &faultKind{
		params: func(f *fault, p *params) { p.field("probability", f.p) },
		attempt: func(w *sim, fi int32, a *agent, tok int32) bool {
			if f := &w.faults[fi]; f.p > 0 && f.rng.Float64() < f.p {
				w.failFast(a, tok, fi)
				return true
			}
			return false
		},
		model: func(w *sim, fi int32) bool {
			if f := &w.faults[fi]; f.p > 0 && f.rng.Float64() < f.p {
				w.adm.why, w.adm.fault = "model_error", fi
				return true
			}
			return false
		},
	})
}
