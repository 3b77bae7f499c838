package fit

import (
	"math"
	"testing"
)

// TestBand: the band is mean ± (tolerance + t(0.975; k−1)·s·√(1 + 1/k)). For the values
// 1, 2, 3 (mean 2, s = 1) and t(0.975; 2) = 4.3027, the half-width with no tolerance is
// 4.3027·√(4/3) = 4.968.
func TestBand(t *testing.T) {
	c := band(Check{Observed: 6.9}, []float64{1, 2, 3}, 0, 0)
	if math.Abs(c.Hi-(2+4.968)) > 1e-3 || !c.Pass {
		t.Errorf("band %+v, want hi 6.968 and a pass", c)
	}
	if c := band(Check{Observed: 7.0}, []float64{1, 2, 3}, 0, 0); c.Pass {
		t.Errorf("7.0 is outside [−2.968, 6.968]: %+v", c)
	}
	if c := band(Check{Observed: 2.5}, []float64{2}, 0.5, 0); !c.Pass || c.Hi != 2.5 {
		t.Errorf("one seed: the tolerance alone: %+v", c)
	}
	if c := band(Check{Observed: math.NaN()}, []float64{math.NaN()}, 0, 0); !c.Pass {
		t.Errorf("undefined on both sides passes: %+v", c)
	}
	if c := band(Check{Observed: 1}, []float64{math.NaN()}, 0, 0); c.Pass {
		t.Errorf("undefined on one side fails: %+v", c)
	}
}
