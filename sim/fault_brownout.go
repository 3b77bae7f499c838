package sim

import "github.com/mayday-sim/mayday/scenarios"

// brownout: during its window an attempt (or model call) fails fast with the fault's
// probability; the others take slowdown times as long.
type brownout struct{ p, slowdown float64 }

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind:     scenarios.FaultBrownout,
			Doc:      "in the window, each attempt fails fast with `probability`; the others take `slowdown` times their service time",
			Keys:     []string{"tool", "at", "for", "probability", "slowdown"},
			Required: []string{"for"}, Window: true, Model: true,
			Preset: func(f *scenarios.Fault) { f.Slowdown = 1 },
			Decoded: func(f *scenarios.Fault) string {
				if f.Probability == 0 && f.Slowdown == 1 {
					return "a brownout with probability 0 and slowdown 1 does nothing; want probability > 0 or slowdown > 1"
				}
				return ""
			},
			Params: scenarios.FailureKeys,
			Check: func(c scenarios.FaultChecker, f *scenarios.Fault, key string) {
				c.Number(f.Slowdown, key+".slowdown")
				scenarios.CheckFailure(c, f, key)
			},
			Size: scenarios.FaultSize{Slowdown: func(f *scenarios.Fault) float64 { return f.Slowdown }},
		},
		build: func(f *fault, c *scenarios.Fault) {
			f.x = &brownout{p: c.Probability, slowdown: c.Slowdown} // Validate: slowdown >= 1
		},
		params: func(f *fault, p *params) {
			b := f.x.(*brownout)
			p.field("probability", b.p)
			p.field("slowdown", b.slowdown)
			f.duration(p)
		},
		attempt: func(w *sim, fi int32, a *agent, tok int32) bool {
			f := &w.faults[fi]
			if !f.active(w.now) {
				return false
			}
			b := f.x.(*brownout)
			if chance(f.rng, b.p) {
				w.failFast(a, tok, fi)
				return true
			}
			w.fx.slow *= b.slowdown
			a.att.fault = fi
			return false
		},
		model: func(w *sim, fi int32) bool {
			f := &w.faults[fi]
			if !f.active(w.now) {
				return false
			}
			b := f.x.(*brownout)
			if chance(f.rng, b.p) {
				w.adm.why = "unavailable"
				return true
			}
			w.adm.slow *= b.slowdown
			return false
		},
	})
}
