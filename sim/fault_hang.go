package sim

import "github.com/mayday-sim/mayday/scenarios"

// hang: during its window the tool accepts every attempt and never answers: nothing
// executes and the caller times out (hence the tool needs a timeout); lookups fail too.
// It has no parameters of its own.
func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultHang,
			Doc:  "in the window, attempts are accepted and never answered (nothing executes): the caller times out",
			Keys: []string{"tool", "at", "for"}, Required: []string{"for"},
			Window: true, Timeout: true, Size: scenarios.FaultSize{Hangs: true},
		},
		unreachable: true,
		build:       func(*fault, *scenarios.Fault) {},
		params:      func(f *fault, p *params) { f.duration(p) },
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
