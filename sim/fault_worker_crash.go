package sim

import (
	"math"

	"github.com/mayday-sim/mayday/scenarios"
)

// worker_crash: the worker of each running investigation dies at the fault's rate (an
// exponential clock per investigation); the lease then lets a new worker take over.
type workerCrash struct{ perNs float64 } // crashes per ns of running time

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultWorkerCrash,
			Doc:  "the worker of a running investigation dies at this rate (a rate ≥ 0; `0/h` is allowed); after `recovery.lease` another worker takes over",
			Keys: []string{"rate"}, Required: []string{"rate"},
			Check: func(c scenarios.FaultChecker, f *scenarios.Fault, key string) {
				c.Check(scenarios.Finite(f.Rate.PerSecond) && f.Rate.PerSecond >= 0, key+".rate", "%v per second; want >= 0", f.Rate.PerSecond)
			},
			// A crashed investigation is taken over and may crash again at once, for as long
			// as the horizon lasts: nothing it does bounds its crashes.
			Size: scenarios.FaultSize{Takeovers: func(f *scenarios.Fault, horizon float64) float64 {
				return f.Rate.PerSecond*horizon/1e9 + 1
			}},
		},
		build:  func(f *fault, c *scenarios.Fault) { f.x = &workerCrash{perNs: c.Rate.PerSecond / 1e9} },
		params: func(f *fault, p *params) { p.field("rate_per_hour", f.x.(*workerCrash).perNs*3600e9) },
		worker: scheduleCrash,
	})
}

// scheduleCrash draws when a's worker next dies under fault fi. Draws are stateless hashes
// of (seed, fault, investigation, n), so crashes do not shift any other draw of the
// investigation; a fault with no rate draws nothing.
func scheduleCrash(w *sim, fi int32, a *agent) {
	f := &w.faults[fi]
	rate := f.x.(*workerCrash).perNs
	if rate <= 0 {
		return
	}
	u := hashUnit(w.seed, f.key, a.key, a.crashDraws)
	a.crashDraws++
	dt := -math.Log(u) / rate
	if dt >= float64(w.horizon-w.now) {
		return
	}
	w.push(satAdd(w.now, satInt(dt)), evCrash, a.slot, a.crashTok, fi)
}
