package recovery_test

import (
	"sort"
	"testing"

	"github.com/mayday-sim/mayday/recovery"
	"pgregory.net/rapid"
)

func TestZZCoverage(t *testing.T) {
	counts := map[string]int{}
	rapid.Check(t, func(rt *rapid.T) {
		f := newFleet(rt)
		steps := rapid.IntRange(1, 300).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			m := f.pick(rt)
			ev, now := f.nextEvent(rt, m)
			n := len(m.j.recs)
			d, err := m.e.Observe(now, ev, recovery.Env{Rand: m.rng, Guards: f.g})
			if err != nil {
				counts["err"]++
				continue
			}
			f.now = now
			for _, r := range m.j.recs[n:] {
				counts[r.From.String()+">"+r.To.String()+":"+r.Action.String()+":"+r.Reason]++
			}
			m.last = d
		}
	})
	var ks []string
	for k := range counts {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		t.Logf("%6d %s", counts[k], k)
	}
}
