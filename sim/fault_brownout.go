package sim

import "github.com/mayday-sim/mayday/scenarios"

// brownout: during its window an attempt (or model call) fails fast with the fault's
// probability; the others take slowdown times as long.
func init() {
	registerFault(scenarios.FaultBrownout, &faultKind{
		window: true, toolWindow: true,
		params: func(f *fault, p *params) {
			p.field("probability", f.p)
			p.field("slowdown", f.slowdown)
			f.duration(p)
		},
		attempt: func(w *sim, fi int32, a *agent, tok int32) bool {
			f := &w.faults[fi]
			if !f.active(w.now) {
				return false
			}
			if f.rng.Float64() < f.p {
				w.failFast(a, tok, fi)
				return true
			}
			w.fx.slow *= f.slowdown
			a.att.fault = fi
			return false
		},
		model: func(w *sim, fi int32) bool {
			f := &w.faults[fi]
			if !f.active(w.now) {
				return false
			}
			if f.rng.Float64() < f.p {
				w.adm.why, w.adm.fault = "unavailable", fi
				return true
			}
			w.adm.slow *= f.slowdown
			return false
		},
	})
}
