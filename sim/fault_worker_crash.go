package sim

import (
	"math"

	"github.com/mayday-sim/mayday/scenarios"
)

// worker_crash: the worker of each running investigation dies at the fault's rate (an
// exponential clock per investigation); the lease then lets a new worker take over.
func init() {
	registerFault(scenarios.FaultWorkerCrash, &faultKind{
		build:  func(f *fault, c *scenarios.Fault) { f.rate = c.Rate.PerSecond / 1e9 },
		params: func(f *fault, p *params) { p.field("rate_per_hour", f.rate*3600e9) },
		worker: scheduleCrash,
	})
}

// scheduleCrash draws when a's worker next dies under fault fi. Draws are stateless hashes
// of (seed, fault, investigation, n), so crashes do not shift any other draw of the
// investigation; a fault with no rate draws nothing.
func scheduleCrash(w *sim, fi int32, a *agent) {
	f := &w.faults[fi]
	if f.rate <= 0 {
		return
	}
	u := hashUnit(w.seed, f.key, a.key, a.crashDraws)
	a.crashDraws++
	dt := -math.Log(u) / f.rate
	if dt >= float64(w.horizon-w.now) {
		return
	}
	w.push(satAdd(w.now, satInt(dt)), evCrash, a.slot, a.crashTok, fi)
}
