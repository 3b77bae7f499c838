package sim

import "github.com/mayday-sim/mayday/scenarios"

// hang: during its window the tool accepts every attempt and never answers: nothing
// executes and the caller times out (hence the tool needs a timeout); lookups fail too.
func init() {
	registerFault(scenarios.FaultHang, &faultKind{
		window: true, toolWindow: true, unreachable: true, needsTimeout: true,
		build:  func(f *fault, _ *scenarios.Fault) { f.p = 1 },
		params: func(f *fault, p *params) { f.duration(p) },
		attempt: func(w *sim, fi int32, a *agent, tok int32) bool {
			if w.faults[fi].active(w.now) {
				a.att.fault = fi
				w.armTimeout(a, &w.tools[a.op.tool], tok)
				return true
			}
			return false
		},
	})
}
