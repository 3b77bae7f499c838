package sim

import "github.com/mayday-sim/mayday/scenarios"

// lost_response: with the fault's probability the attempt is carried out but its reply
// never reaches the caller, who times out (hence the tool needs a timeout).
func init() {
	registerFault(scenarios.FaultLostResponse, &faultKind{
		needsTimeout: true,
		params:       func(f *fault, p *params) { p.field("probability", f.p) },
		attempt: func(w *sim, fi int32, a *agent, _ int32) bool {
			if f := &w.faults[fi]; f.p > 0 && f.rng.Float64() < f.p {
				w.fx.lost = true
				a.att.fault = fi
			}
			return false
		},
	})
}
