package sim

import "github.com/mayday-sim/mayday/scenarios"

// lost_response: with the fault's probability the attempt is carried out but its reply
// never reaches the caller, who times out (hence the tool needs a timeout).
type lostResponse struct{ p float64 }

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultLostResponse,
			Doc:  "the tool does the work, but the reply is lost with this probability: the caller waits until its timeout",
			Keys: []string{"tool", "probability"}, Required: []string{"probability"},
			Timeout: true,
		},
		build:  func(f *fault, c *scenarios.Fault) { f.x = &lostResponse{p: c.Probability} },
		params: func(f *fault, p *params) { p.field("probability", f.x.(*lostResponse).p) },
		attempt: func(w *sim, fi int32, a *agent, _ int32) bool {
			f := &w.faults[fi]
			if p := f.x.(*lostResponse).p; p > 0 && chance(f.rng, p) {
				w.fx.lost = true
				a.att.fault = fi
			}
			return false
		},
	})
}
