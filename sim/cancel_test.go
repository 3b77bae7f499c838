package sim

import (
	"math"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// cancelFleet is 3000 one-step investigations of one tool (1 compute unit a second, no
// retries: a timed-out attempt ends its investigation) with the given latency, a timeout of
// 5s and concurrency conc (0 = unlimited).
func cancelFleet(lat scenarios.Dist, conc int, cancel bool) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = 3000
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalPoisson, Rate: scenarios.Rate{PerSecond: 0.5}}
	s.Tools[0].Idempotency = scenarios.Natural
	s.Tools[0].Latency = lat
	s.Tools[0].Timeout = 5 * time.Second
	s.Tools[0].Concurrency = conc
	s.Tools[0].CancelOnTimeout = cancel
	s.Recovery.Retry.MaxAttempts = 1
	return s
}

// executionCompute runs s and returns the compute of each execution; it fails the test if
// an execution outlived its attempt's timeout (ended after the attempt was sent + 5s) while
// the tool cancels, and reports how many did.
func executionCompute(t *testing.T, s *scenarios.Scenario) (compute []float64, outlived int) {
	t.Helper()
	var c record.Collector
	run(t, s, 7, &c)
	sent := map[record.OpKey]int64{} // one attempt per operation here
	for i := range c.Spans {
		if sp := &c.Spans[i]; sp.Operation == record.OpExecuteTool {
			sent[sp.OpKey] = sp.Start
		}
	}
	for i := range c.Executions {
		e := &c.Executions[i]
		compute = append(compute, e.Compute)
		if e.End > sent[e.OpKey]+int64(5*time.Second) {
			outlived++
		}
	}
	if s.Tools[0].CancelOnTimeout && outlived > 0 {
		t.Fatalf("%d executions outlived their attempt's timeout with cancel_on_timeout", outlived)
	}
	return compute, outlived
}

// TestCancelOnTimeoutConstant: a constant latency of 10s against a timeout of 5s. Each
// execution then costs exactly 10 compute units when the tool works to the end, and
// min(10, 5) = 5 when it stops at its caller's timeout.
func TestCancelOnTimeoutConstant(t *testing.T) {
	lat := scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Second)}
	for _, tc := range []struct {
		cancel bool
		want   float64
	}{{false, 10}, {true, 5}} {
		xs, outlived := executionCompute(t, cancelFleet(lat, 0, tc.cancel))
		if len(xs) != 3000 {
			t.Fatalf("cancel=%t: %d executions, want one per investigation (3000)", tc.cancel, len(xs))
		}
		for _, x := range xs {
			if math.Abs(x-tc.want) > 1e-9 {
				t.Fatalf("cancel=%t: an execution used %g compute units, want %g", tc.cancel, x, tc.want)
			}
		}
		if !tc.cancel && outlived != 3000 {
			t.Errorf("without cancel_on_timeout %d of 3000 executions outlived their timeout, want all", outlived)
		}
	}
}

// TestCancelOnTimeoutExponential: latency L exponential with mean μ = 10s, timeout T = 5s,
// τ = T/μ. A tool that works to the end uses E[L] = μ = 10 compute units per execution; one
// that stops at the timeout uses E[min(L, T)] = μ(1 − e^−τ) = 3.93, with
// E[min(L, T)²] = 2μ²(1 − e^−τ(1 + τ)), so a standard deviation of 1.60 (of L: 10). Over
// 3000 executions the means' standard errors are 0.029 and 0.18; the bounds are 5 of them.
// With one server (attempts queue, and the timeout counts from when the attempt was sent)
// no execution outlives its attempt's timeout either, and the compute falls. Every attempt
// still executes: the ones ahead of a waiting attempt were sent before it and stop by their
// own timeouts, so it reaches the server before its own.
func TestCancelOnTimeoutExponential(t *testing.T) {
	const mu, tt = 10.0, 5.0
	tau := tt / mu
	lat := scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(10 * time.Second)}
	m1 := mu * (1 - math.Exp(-tau))
	m2 := 2 * mu * mu * (1 - math.Exp(-tau)*(1+tau))
	sdCut := math.Sqrt(m2 - m1*m1)
	for _, tc := range []struct {
		cancel   bool
		mean, sd float64
	}{{false, mu, mu}, {true, m1, sdCut}} {
		xs, _ := executionCompute(t, cancelFleet(lat, 0, tc.cancel))
		got, _ := meanSD(xs)
		se := tc.sd / math.Sqrt(float64(len(xs)))
		t.Logf("cancel=%t: %d executions, mean compute %.4f, closed form %.4f ± %.4f", tc.cancel, len(xs), got, tc.mean, 5*se)
		if len(xs) != 3000 || math.Abs(got-tc.mean) > 5*se {
			t.Errorf("cancel=%t: %d executions, mean compute %.4f; want 3000 and %.4f ± %.4f", tc.cancel, len(xs), got, tc.mean, 5*se)
		}
	}
	total := func(xs []float64) (s float64) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	full, outlived := executionCompute(t, cancelFleet(lat, 1, false))
	cut, _ := executionCompute(t, cancelFleet(lat, 1, true))
	t.Logf("one server: compute %.0f in %d executions without cancelling (%d outlived their timeout), %.0f in %d with",
		total(full), len(full), outlived, total(cut), len(cut))
	if outlived == 0 || total(cut) >= total(full) || len(cut) != 3000 {
		t.Errorf("one server: compute %.0f (%d executions) with cancelling, %.0f (%d) without, %d outlived; want less, 3000, some",
			total(cut), len(cut), total(full), len(full), outlived)
	}
}
