package scenarios

import (
	"strings"
	"testing"
)

// A negative seed is refused as negative, not as a number that does not fit.
func TestNegativeSeedMessage(t *testing.T) {
	_, err := Parse("t.yaml", []byte("name: t\nseed: -5\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "seed: -5 is negative; want a whole number >= 0") {
		t.Errorf("seed -5: %v; want it refused as negative", err)
	}
}

// A null tokens.growth is the default (no growth), wherever it stands in the mapping.
func TestNullTokenGrowth(t *testing.T) {
	for _, tokens := range []string{
		"{growth: null, dist: constant, value: 100}",
		"{dist: constant, value: 100, growth: ~}",
	} {
		s, err := Parse("t.yaml", []byte("name: t\ntools: {svc: {latency: {dist: constant, value: 1s}}}\nworkload: {tokens: "+tokens+"}\n"), nil)
		if err != nil {
			t.Fatalf("tokens %s: %v", tokens, err)
		}
		if s.Workload.TokensGrowth != 0 || s.Workload.Tokens.Value != 100 {
			t.Errorf("tokens %s: growth %v, value %v; want no growth and 100", tokens, s.Workload.TokensGrowth, s.Workload.Tokens.Value)
		}
	}
}

// The generator's whole numbers stay in [lo, hi] and reach the bound: every path of
// integer, each choice fixed (choose returns k mod n for each k).
func TestGeneratedIntegersStayInBounds(t *testing.T) {
	for _, b := range []struct{ lo, hi float64 }{{0, 5}, {3, 20}, {2, 2000}} {
		seen := map[int64]bool{}
		for k := range 2000 {
			g := &generator{choose: func(n int) int { return k % n }}
			v := g.integer(b.lo, b.hi)
			if float64(v) < b.lo || float64(v) > b.hi {
				t.Fatalf("integer(%v, %v) = %d with choices k=%d: out of bounds", b.lo, b.hi, v, k)
			}
			seen[v] = true
		}
		if !seen[int64(b.hi)] || len(seen) < 5 {
			t.Errorf("integer(%v, %v): %d values drawn, the bound among them: %v; want the bound and at least 5", b.lo, b.hi, len(seen), seen[int64(b.hi)])
		}
	}
}
