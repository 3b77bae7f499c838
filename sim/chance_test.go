package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// drawEdge is a probability p and whether an event drawn below p happens for a given draw.
type drawEdge struct {
	p    float64
	want bool
}

// drawEdges are the probabilities around the draw u: 0, just below u, u itself (all
// misses: the event needs a draw below p), just above u and 1 (hits).
func drawEdges(u float64) []drawEdge {
	return []drawEdge{{0, false}, {math.Nextafter(u, 0), false}, {u, false}, {math.Nextafter(u, 1), true}, {1, true}}
}

// TestChanceAtItsDraw pins the Bernoulli draw at its edge: the event happens when the
// uniform draw is below p, so a p equal to the draw is a miss and the next float64 above it
// a hit; every call draws exactly once, p = 0 and p = 1 too.
func TestChanceAtItsDraw(t *testing.T) {
	fresh := func() *rand.Rand { return rand.New(rand.NewPCG(28, 3307)) }
	r := fresh()
	u, next := r.Float64(), r.Float64()
	for _, c := range drawEdges(u) {
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
	for _, c := range drawEdges(u) {
		if got := f.hits(w, a, c.p); got != c.want {
			t.Errorf("hits(p = %v) with the draw %v: %t, want %t", c.p, u, got, c.want)
		}
	}
}

// fixedSource is a rand.Source that always answers u.
type fixedSource uint64

func (s fixedSource) Uint64() uint64 { return uint64(s) }

// TestPickToolAtItsEdges: the mix's cumulative weights cut [0, total) into half-open
// stretches, one a tool: a draw exactly on a cut goes to the tool after it.
func TestPickToolAtItsEdges(t *testing.T) {
	w := &sim{mixTool: []int32{7, 8, 9}, mixCum: []float64{1, 2, 4}}
	half := uint64(1) << 52 // Float64() = 0.5, u = 0.5·4 = 2: the cut before the third
	for _, c := range []struct {
		src  uint64
		want int32
	}{
		{0, 7},             // u = 0
		{half / 2, 8},      // u = 0.25·4 = 1: the first cut
		{half/2 - 1, 7},    // just below it
		{half, 9},          // u = 2: the second cut
		{half - 1, 8},      // just below it
		{1<<53 - 1, 9},     // the largest draw
		{half + half/2, 9}, // u = 3
	} {
		if got := w.pickTool(rand.New(fixedSource(c.src))); got != c.want {
			t.Errorf("draw %v: tool %d, want %d", float64(c.src)/(1<<53), got, c.want)
		}
	}
	one := &sim{mixTool: []int32{5}, mixCum: []float64{3}}
	if got := one.pickTool(rand.New(fixedSource(half))); got != 5 {
		t.Errorf("a mix of one: tool %d, want 5", got)
	}
}
