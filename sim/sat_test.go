package sim

import (
	"math"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// The saturating conversions keep huge values huge instead of wrapping: NaN is 0, a value
// at or beyond ±farFuture is ±farFuture, anything else converts exactly.
func TestSaturatingConversions(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want int64
	}{
		{math.NaN(), 0}, {0, 0}, {-1.5, -1}, {1e18, 1e18}, {farFuture, farFuture}, {1e300, farFuture},
		{math.Inf(1), farFuture}, {-farFuture, -farFuture}, {-1e300, -farFuture}, {math.Inf(-1), -farFuture},
		{1<<61 - 1<<11, 1<<61 - 1<<11}, // the greatest float64 below farFuture
	} {
		if got := satInt(tc.x); got != tc.want {
			t.Errorf("satInt(%g) = %d, want %d", tc.x, got, tc.want)
		}
	}
	for _, tc := range []struct{ a, b, want int64 }{
		{1, 2, 3}, {farFuture - 1, 1, farFuture}, {farFuture - 1, 2, farFuture}, {farFuture, 0, farFuture},
		{1, farFuture, farFuture}, {0, 0, 0},
	} {
		if got := satAdd(tc.a, tc.b); got != tc.want {
			t.Errorf("satAdd(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n    int64
		want int32
	}{{0, 0}, {math.MaxInt32, math.MaxInt32}, {math.MaxInt32 + 1, math.MaxInt32}, {1 << 40, math.MaxInt32}} {
		if got := satCount32(tc.n); got != tc.want {
			t.Errorf("satCount32(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// A drawn duration is never negative and saturates at MaxInt64/4; a drawn count is at
// least its floor and at most 2^40.
func TestDrawsSaturate(t *testing.T) {
	for _, tc := range []struct {
		v     float64
		dur   int64
		count int64
	}{
		{-5, 0, 3}, {math.NaN(), 0, 3}, {2.5, 2, 3}, {7.4, 7, 7}, {7.5, 7, 8},
		{1 << 60, 1 << 60, 1 << 40}, {1e300, math.MaxInt64 / 4, 1 << 40},
		{1 << 40, 1 << 40, 1 << 40}, {1<<40 + 1, 1<<40 + 1, 1 << 40},
		// The float64 below the ceiling MaxInt64/4 = 2^61-1, and 2^61, the float64 it rounds
		// to, whose conversion would be one above it.
		{1<<61 - 1<<8, 1<<61 - 1<<8, 1 << 40}, {1 << 61, math.MaxInt64 / 4, 1 << 40},
	} {
		d := newDist(scenarios.Dist{Kind: scenarios.DistConstant, Value: tc.v})
		if got := d.duration(nil); got != tc.dur {
			t.Errorf("constant %g: duration %d, want %d", tc.v, got, tc.dur)
		}
		if got := d.count(nil, 3); got != tc.count {
			t.Errorf("constant %g: count (at least 3) %d, want %d", tc.v, got, tc.count)
		}
	}
}
