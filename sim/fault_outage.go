package sim

import "github.com/mayday-sim/mayday/scenarios"

// outage: during its window every attempt at the tool (or model call) fails fast, and the
// tool answers no lookups. It has no parameters of its own.
func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultOutage,
			Doc:  "from `at` for `for`, every attempt at the tool fails fast",
			Keys: []string{"tool", "at", "for"}, Required: []string{"for"},
			Params: scenarios.FailureKeys, Check: scenarios.CheckFailure,
			Window: true, Model: true,
		},
		unreachable: true,
		build:       func(*fault, *scenarios.Fault) {},
		params:      func(f *fault, p *params) { f.duration(p) },
		attempt: func(w *sim, fi int32, a *agent, tok int32) bool {
			if w.faults[fi].active(w.now) {
				w.failFast(a, tok, fi)
				return true
			}
			return false
		},
		model: func(w *sim, fi int32) bool {
			if w.faults[fi].active(w.now) {
				w.adm.why = "unavailable"
				return true
			}
			return false
		},
	})
}
