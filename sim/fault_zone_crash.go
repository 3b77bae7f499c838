package sim

import (
	"math"

	"github.com/mayday-sim/mayday/scenarios"
)

// zone_crash: at the start of its window the fault's share of the running workers die at
// once, and the zone's share of the worker pool is gone until the window ends.
func init() {
	registerFault(scenarios.FaultZoneCrash, &faultKind{
		window: true,
		params: func(f *fault, p *params) {
			p.field("share", f.share)
			f.duration(p)
		},
		begin: zoneCrash,
		end:   zoneBack,
	})
}

// zoneCrash kills the fault's share of the running workers (the victims drawn from the
// fault's own stream) and takes the zone's share of the workers away.
func zoneCrash(w *sim, fi int32) {
	f := &w.faults[fi]
	w.last = w.now
	var running []*agent
	for _, a := range w.agents {
		if a != nil && crashable(a) {
			running = append(running, a)
		}
	}
	k := int(math.Round(f.share * float64(len(running))))
	for i := 0; i < k; i++ {
		j := i + f.rng.IntN(len(running)-i)
		running[i], running[j] = running[j], running[i]
		a := running[i]
		a.crashTok++ // its own crash clocks are void: the worker is gone
		w.kill(a, fi)
	}
	if p := &w.pool; p.capacity > 0 {
		f.lost = int(math.Round(f.share * float64(p.capacity)))
		p.down += f.lost
	}
}

// zoneBack returns a crashed zone's workers at the end of its window.
func zoneBack(w *sim, fi int32) {
	f := &w.faults[fi]
	w.pool.down -= f.lost
	f.lost = 0
	w.kick()
}
