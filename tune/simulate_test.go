//go:build duckdb_arrow

package tune_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/tune"
)

// closedForm is a fleet whose optimum has a closed form: 1000 investigations of one step
// each at a tool whose every attempt fails fast, independently, with probability p; an
// operation is retried up to max_attempts = n times and then terminated (no humans). So
// completion is 1 − pⁿ and retry amplification (attempts per operation) is
// Σ_{k<n} pᵏ = (1 − pⁿ)/(1 − p), both increasing in n: the best n under "amplification ≤ b"
// is the largest n with (1 − pⁿ)/(1 − p) ≤ b.
func closedForm(p, bound float64) string {
	return fmt.Sprintf(`name: closed-form
horizon: 1d
workload:
  investigations: 1000
  arrival: {uniform: 1h}
tools:
  a: {latency: 1s, idempotency: keyed}
faults:
  - {kind: transient, tool: a, probability: %v}
recovery:
  retry: {initial: 1s, max: 1s, jitter: none}
tune:
  vary:
    recovery.retry.max_attempts: {min: 1, max: 8}
  maximize: completion_rate
  subject_to:
    retry_amplification: "<= %.4f"
    duplicate_side_effects: "== 0"
  budget: 120
  max_seeds: 12
`, p, bound)
}

func amplification(p float64, n int) float64 { return (1 - math.Pow(p, float64(n))) / (1 - p) }

// On the simulator, tune recommends the closed-form optimum for two failure probabilities,
// within its budget, with the constraint holding within its interval. The bound is halfway
// between the amplification of the optimum n* and of n*+1, so both sit a half gap from it
// (0.0625 for p = 0.5, n* = 3; 0.02 for p = 0.2, n* = 2). A run's amplification is a mean
// over 1000 operations of attempts whose variance is at most 1.11 (p = 0.5, n = 4) and 0.27
// (p = 0.2, n = 3), so its standard deviation is at most 0.033 and 0.016; the 95% t
// interval's half-width after 6 seeds, t(5)·sd/√6, is 0.035 and 0.017, inside each half
// gap, and within max_seeds = 12 it is 0.021 and 0.010. The simulation is deterministic, so
// the outcome is fixed; this arithmetic is why it is the right one and not luck.
func TestClosedFormOnTheSimulator(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		best int
	}{{0.5, 3}, {0.2, 2}} {
		b := (amplification(tc.p, tc.best) + amplification(tc.p, tc.best+1)) / 2
		s, err := scenarios.Parse("closed-form.yaml", []byte(closedForm(tc.p, b)), nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := tune.Config{Tune: *s.Tune, Seed0: 1}
		r, err := tune.Search(context.Background(), cfg, tune.Simulate(s, "test", 0, t.TempDir(), nil))
		if err != nil {
			t.Fatal(err)
		}
		if r.Recommended == nil || r.Recommended.Params["recovery.retry.max_attempts"] != fmt.Sprint(tc.best) {
			t.Fatalf("p=%v: verdict %s, recommended %+v; want max_attempts %d", tc.p, r.Verdict, r.Recommended, tc.best)
		}
		iv := r.Recommended.Intervals["retry_amplification"]
		if r.Verdict != tune.VerdictBest || r.Spent > 120 || !(iv.Hi <= b) {
			t.Errorf("p=%v: verdict %s, %d runs, amplification %+v against %v", tc.p, r.Verdict, r.Spent, iv, b)
		}
		if c := r.Recommended.Metrics["completion_rate"]; math.Abs(c-(1-math.Pow(tc.p, float64(tc.best)))) > 0.03 {
			t.Errorf("p=%v: completion %v, want about %v", tc.p, c, 1-math.Pow(tc.p, float64(tc.best)))
		}
		t.Logf("p=%v: max_attempts %d in %d runs; amplification %.4f [%.4f, %.4f] <= %.4f", tc.p, tc.best, r.Spent, iv.Mean, iv.Lo, iv.Hi, b)
	}
}
