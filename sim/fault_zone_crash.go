package sim

import (
	"math"

	"github.com/mayday-sim/mayday/scenarios"
)

// zone_crash: at the start of its window the fault's share of the running workers die at
// once, and the zone's share of the worker pool is gone until the window ends.
type zoneCrashFault struct {
	share float64
	lost  int // workers taken away while it lasts
}

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultZoneCrash,
			Doc:  "a node or zone goes down: at `at`, `share` of the running workers die in that one event, and with limited `workload.workers` the zone's `share` of them (rounded) is gone until `for` ends",
			Keys: []string{"at", "for", "share"}, Required: []string{"for", "share"},
			Window: true,
			Check: func(c scenarios.FaultChecker, f *scenarios.Fault, key string) {
				c.Check(scenarios.Finite(f.Share) && f.Share > 0 && f.Share <= 1, key+".share", "%v; want a share in (0, 1]", f.Share)
			},
			Size: scenarios.FaultSize{Takeovers: func(*scenarios.Fault, float64) float64 { return 1 }},
		},
		build: func(f *fault, c *scenarios.Fault) { f.x = &zoneCrashFault{share: c.Share} },
		params: func(f *fault, p *params) {
			p.field("share", f.x.(*zoneCrashFault).share)
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
	z := f.x.(*zoneCrashFault)
	w.last = w.now
	var running []*agent
	for _, a := range w.agents {
		if a != nil && crashable(a) {
			running = append(running, a)
		}
	}
	k := int(math.Round(z.share * float64(len(running))))
	for i := 0; i < k; i++ {
		j := i + f.rng.IntN(len(running)-i)
		running[i], running[j] = running[j], running[i]
		a := running[i]
		a.crashTok++ // its own crash clocks are void: the worker is gone
		w.kill(a, fi)
	}
	if p := &w.pool; p.capacity > 0 {
		z.lost = int(math.Round(z.share * float64(p.capacity)))
		p.down += z.lost
	}
}

// zoneBack returns a crashed zone's workers at the end of its window.
func zoneBack(w *sim, fi int32) {
	z := w.faults[fi].x.(*zoneCrashFault)
	w.pool.down -= z.lost
	z.lost = 0
	w.kick()
}
