package tune

import (
	"math"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// The t interval of known values: mean 2, sample sd 1 over 4 values, t(3) at 97.5% is
// 3.182446, so the half-width is 3.182446 / 2.
func TestMeanCI(t *testing.T) {
	iv := meanCI([]float64{1, 2, 3, 2, math.NaN()}, 0.95)
	sd := math.Sqrt(2.0 / 3)
	h := 3.182446305284263 * sd / 2
	if iv.N != 4 || iv.Mean != 2 || math.Abs(iv.Hi-2-h) > 1e-9 || math.Abs(2-iv.Lo-h) > 1e-9 {
		t.Fatalf("%+v, want 2 ± %v", iv, h)
	}
	if iv := meanCI([]float64{5, 5}, 0.95); iv.Lo != 5 || iv.Hi != 5 {
		t.Errorf("constant: %+v", iv)
	}
	if iv := meanCI([]float64{5}, 0.95); !math.IsNaN(iv.Lo) || iv.Mean != 5 {
		t.Errorf("one value: %+v", iv)
	}
}

// A constraint holds when its whole interval satisfies it, is violated when its whole
// interval breaks it, and is unsure otherwise, for each form of expect.
func TestJudge(t *testing.T) {
	iv := func(lo, hi float64) Interval { return Interval{Mean: (lo + hi) / 2, Lo: lo, Hi: hi, N: 3} }
	for _, c := range []struct {
		check string
		iv    Interval
		want  int
	}{
		{"<= 2", iv(1, 1.9), holds}, {"<= 2", iv(1.9, 2.1), unsure}, {"<= 2", iv(2.1, 3), violated},
		{">= 0.9", iv(0.91, 0.95), holds}, {">= 0.9", iv(0.85, 0.95), unsure}, {">= 0.9", iv(0.8, 0.89), violated},
		{"< 2", iv(1, 2), unsure}, {"> 1", iv(1, 2), unsure},
		{"== 0", iv(0, 0), holds}, {"== 0", iv(0, 1), unsure}, {"== 0", iv(0.5, 1), violated},
		{"between 1 and 2", iv(1.2, 1.8), holds}, {"between 1 and 2", iv(0.5, 1.5), unsure}, {"between 1 and 2", iv(2.5, 3), violated},
		{"<= 2", Interval{Mean: 1, Lo: math.NaN(), Hi: math.NaN(), N: 1}, unsure},
		{"<= 2", Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, violated},
	} {
		e, msg := scenarios.ParseExpectation("retry_amplification", c.check)
		if msg != "" {
			t.Fatal(msg)
		}
		if got := judge(e, c.iv); got != c.want {
			t.Errorf("%s on [%v, %v]: %d, want %d", c.check, c.iv.Lo, c.iv.Hi, got, c.want)
		}
	}
}
