package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestChanceAtItsDraw pins the Bernoulli draw at its edge: the event happens when the
// uniform draw is below p, so a p equal to the draw is a miss and the next float64 above it
// a hit; every call draws exactly once, p = 0 and p = 1 too.
func TestChanceAtItsDraw(t *testing.T) {
	fresh := func() *rand.Rand { return rand.New(rand.NewPCG(28, 3307)) }
	r := fresh()
	u, next := r.Float64(), r.Float64()
	for _, c := range []struct {
		p    float64
		want bool
	}{
		{0, false},
		{math.Nextafter(u, 0), false},
		{u, false},
		{math.Nextafter(u, 1), true},
		{1, true},
	} {
		r := fresh()
		if got := chance(r, c.p); got != c.want {
			t.Errorf("chance(p = %v) with the draw %v: %t, want %t", c.p, u, got, c.want)
		}
		if got := r.Float64(); got != next {
			t.Errorf("chance(p = %v) did not draw exactly once: the next draw is %v, want %v", c.p, got, next)
		}
	}
}

// TestHitsAtItsDraw pins a per-investigation fault's decision at its edge: the fault
// applies when the investigation's stateless draw is below its probability, not at it.
func TestHitsAtItsDraw(t *testing.T) {
	w, f, a := &sim{seed: 3307}, &fault{key: nameKey("bad-config")}, &agent{key: mix64(1)}
	u := hashUnit(w.seed, f.key, a.key, 0)
	for _, c := range []struct {
		p    float64
		want bool
	}{
		{0, false},
		{math.Nextafter(u, 0), false},
		{u, false},
		{math.Nextafter(u, 1), true},
		{1, true},
	} {
		if got := f.hits(w, a, c.p); got != c.want {
			t.Errorf("hits(p = %v) with the draw %v: %t, want %t", c.p, u, got, c.want)
		}
	}
}
