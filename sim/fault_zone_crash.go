package sim

import (
	"math"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/scenarios"
)

// zone_crash: a zone goes down for its window. Named by `zone`, it is one zone of
// workload.zones: every investigation running on that zone's workers crashes, and exactly
// that zone's workers are gone until the window ends. Given a `share` instead, it is a
// random part of the fleet: that share of the running workers die at once (the victims
// drawn from the fault's own stream), and with limited workers that share of the pool
// (rounded) is gone until the window ends.
type zoneCrashFault struct {
	share float64
	zone  string
	lost  int // share: workers taken away while it lasts
}

// zoneCrashParams are zone_crash's own keys.
type zoneCrashParams struct {
	Zone string `json:",omitempty" key:"zone" want:"a zone of workload.zones" doc:"zone_crash: the zone of workload.zones that goes down (give share instead for a random part of the fleet)"`
}

func init() {
	registerFault(&faultKind{
		rule: scenarios.FaultRule{
			Kind: scenarios.FaultZoneCrash,
			Doc: "a zone goes down from `at` for `for`: with `zone`, every investigation running on that zone's workers (of workload.zones) crashes and exactly those workers are gone until the window ends; with `share` instead, that share of the running workers die in that one event and, with limited `workload.workers`, that share of them (rounded) is gone until `for` ends. " +
				"Give exactly one of `zone` and `share`",
			Keys:     []string{"at", "for", "share"},
			Params:   scenarios.KeysOf[zoneCrashParams]("zone_crash's parameters"),
			Required: []string{"for"},
			Window:   true,
			Check:    checkZoneCrash,
			Size:     scenarios.FaultSize{Takeovers: func(*scenarios.Fault, float64) float64 { return 1 }},
		},
		build: func(f *fault, c *scenarios.Fault) {
			f.x = &zoneCrashFault{share: c.Share, zone: c.Params.(*zoneCrashParams).Zone}
		},
		params: func(f *fault, p *params) {
			if z := f.x.(*zoneCrashFault); z.zone == "" {
				p.field("share", z.share)
			} else {
				p.text("zone", z.zone)
			}
			f.duration(p)
		},
		begin: zoneCrash,
		end:   zoneBack,
	})
}

// checkZoneCrash: exactly one of share and zone; a zone is one of workload.zones, whose
// workers are limited.
func checkZoneCrash(c scenarios.FaultChecker, f *scenarios.Fault, key string) {
	zone := f.Params.(*zoneCrashParams).Zone
	if zone == "" {
		c.Check(f.Share != 0, key, "a zone_crash needs zone (a zone of workload.zones) or share (a random part of the fleet)")
		c.Check(scenarios.Finite(f.Share) && f.Share >= 0 && f.Share <= 1, key+".share", "%v; want a share in (0, 1]", f.Share)
		return
	}
	c.Check(f.Share == 0, key+".zone", "given together with share; want exactly one: zone names a zone of workload.zones, share takes a random part of the fleet")
	w := &c.Scenario().Workload
	var names []string
	for _, z := range w.Zones {
		names = append(names, z.Name)
	}
	if len(names) == 0 {
		c.Check(false, key+".zone", "unknown zone %q: workload.zones declares none; declare the zones, such as zones: {a: 0.75, %s: 0.25}", zone, zone)
		return
	}
	if !slices.Contains(names, zone) {
		c.Check(false, key+".zone", "unknown zone %q; want one of workload.zones: %s", zone, strings.Join(names, ", "))
		return
	}
	c.Check(w.Workers > 0, key+".zone", "zone %q has no workers: workload.workers is 0 (unlimited, in no zone); set workload.workers, or give share instead", zone)
}

// zoneCrash takes the fault's zone, or its share of the fleet, down.
func zoneCrash(w *sim, fi int32) {
	f := &w.faults[fi]
	z := f.x.(*zoneCrashFault)
	w.last = w.now
	if z.zone != "" {
		w.zoneDown(fi, z.zone)
		return
	}
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
	// A share of no pool (capacity 0) is 0 workers.
	p := &w.pool
	z.lost = int(math.Round(z.share * float64(p.capacity)))
	p.down += z.lost
}

// zoneDown takes zone name down under fault fi: its workers leave the pool, and every
// investigation holding one loses it. One doing work a crash loses crashes (its lease then
// runs); one that was only waiting (for a human) keeps its place and queues for a worker when
// its wait ends, as if workload.hold_worker had let the worker go.
func (w *sim) zoneDown(fi int32, name string) {
	p := &w.pool
	zi := slices.Index(p.zones, name)
	p.zoneDown[zi]++
	if p.zoneDown[zi] > 1 {
		return // already down
	}
	p.down += p.zoneSize(zi)
	for _, a := range w.agents {
		if a == nil || !a.live || !a.worker || p.zoneOf(a.wid) != zi {
			continue
		}
		if crashable(a) {
			a.crashTok++ // its own crash clocks are void: the worker is gone
			w.kill(a, fi)
			continue
		}
		w.releaseWorker(a)
		a.released = true
	}
}

// zoneBack returns a crashed zone's workers at the end of its window.
func zoneBack(w *sim, fi int32) {
	z := w.faults[fi].x.(*zoneCrashFault)
	p := &w.pool
	if z.zone == "" {
		p.down -= z.lost
		z.lost = 0
		w.kick()
		return
	}
	zi := slices.Index(p.zones, z.zone)
	p.zoneDown[zi]--
	if p.zoneDown[zi] > 0 {
		return
	}
	p.down -= p.zoneSize(zi)
	for _, k := range p.gone[zi] {
		p.idle.push(k)
	}
	p.gone[zi] = p.gone[zi][:0]
	w.kick()
}
