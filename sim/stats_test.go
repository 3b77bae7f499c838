package sim

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// truncGeom is the number of attempts A of an operation that is retried until it succeeds
// or k attempts are spent, each attempt failing independently with probability p:
// P(A=a) = p^(a-1)(1-p) for a < k and P(A=k) = p^(k-1). It returns E[A] and Var[A].
// E[A] = (1-p^k)/(1-p), the retry amplification of docs/metrics.md.
func truncGeom(p float64, k int) (mean, variance float64) {
	var m1, m2 float64
	for a := 1; a <= k; a++ {
		pa := math.Pow(p, float64(a-1)) * (1 - p)
		if a == k {
			pa = math.Pow(p, float64(k-1))
		}
		m1 += float64(a) * pa
		m2 += float64(a*a) * pa
	}
	return m1, m2 - m1*m1
}

// countSink tallies what the statistical tests need without keeping the records.
type countSink struct {
	record.Discard
	toolSpans   int
	keys        map[record.OpKey]bool
	execs       int
	duplicates  int // executions beyond the first of their key
	undelivered int
	inspections map[string]int
	completed   int
	roots       int
	waits       []float64 // queue_wait (s) of successful attempts, in arrival order
}

func newCountSink() *countSink {
	return &countSink{keys: map[record.OpKey]bool{}, inspections: map[string]int{}}
}

func (c *countSink) Span(s *record.Span) {
	switch s.Operation {
	case record.OpExecuteTool:
		if s.Status == record.StatusBlocked {
			return
		}
		c.toolSpans++
		c.keys[s.OpKey] = true
		if s.Status == record.StatusOK {
			c.waits = append(c.waits, float64(s.QueueWait)/1e9)
		}
	case record.OpInspect:
		for _, a := range s.Attrs {
			if a.Key == "lookup" {
				c.inspections[a.Value]++
			}
		}
	}
}

func (c *countSink) Execution(e *record.Execution) {
	c.execs++
	if e.Execution > 1 {
		c.duplicates++
	}
	if !e.Delivered {
		c.undelivered++
	}
}

func (c *countSink) Investigation(r *record.Investigation) {
	if r.ParentID == 0 {
		c.roots++
		if r.FinalState == "completed" {
			c.completed++
		}
	}
}

// retryScenario: n one-step investigations on one tool whose attempts fail fast with
// probability p, k attempts per operation, then termination (no humans).
func retryScenario(n int, p float64, k int) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival.Rate.PerSecond = 50
	s.Faults = []scenarios.Fault{{ID: "flaky", Kind: scenarios.FaultTransient, Tool: "svc", Probability: p}}
	s.Recovery.Retry.MaxAttempts = k
	s.Recovery.Retry.OnExhausted = recovery.ExhaustedTerminate
	return s
}

// TestRetryCompletion checks bounded retry against probability theory. With independent
// per-attempt failure probability p and k attempts, an operation completes with
// probability 1 - p^k, and the attempts per operation have the truncated geometric mean
// (1 - p^k)/(1 - p). With n operations the completion count is binomial and the attempt
// total a sum of n independent truncated geometrics, so each estimate must lie within 5
// standard errors of its expectation (normal approximation: a false alarm has probability
// about 6e-7 per comparison).
func TestRetryCompletion(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 5_000
	}
	for _, c := range []struct {
		p float64
		k int
	}{{0.3, 3}, {0.5, 2}, {0.2, 1}, {0.6, 5}} {
		t.Run(fmt.Sprintf("p=%g,k=%d", c.p, c.k), func(t *testing.T) {
			sink := newCountSink()
			res := run(t, retryScenario(n, c.p, c.k), 7, sink)
			q := 1 - math.Pow(c.p, float64(c.k))
			got := float64(res.Completed) / float64(res.Started)
			se := math.Sqrt(q * (1 - q) / float64(n))
			if math.Abs(got-q) > 5*se {
				t.Errorf("completion %.4f, want 1-p^k = %.4f ± %.4f", got, q, 5*se)
			}
			if res.Completed+res.Terminated != n {
				t.Errorf("completed %d + terminated %d != %d", res.Completed, res.Terminated, n)
			}
			mean, variance := truncGeom(c.p, c.k)
			if want := q / (1 - c.p); math.Abs(mean-want) > 1e-12 {
				t.Fatalf("truncated geometric mean %.6f != (1-p^k)/(1-p) %.6f", mean, want)
			}
			amp := float64(sink.toolSpans) / float64(len(sink.keys))
			seA := math.Sqrt(variance / float64(n))
			if len(sink.keys) != n || math.Abs(amp-mean) > 5*seA {
				t.Errorf("attempts per operation %.4f over %d operations, want (1-p^k)/(1-p) = %.4f ± %.4f",
					amp, len(sink.keys), mean, 5*seA)
			}
		})
	}
}

// erlangC is the probability that an arrival waits in an M/M/c queue with offered load
// a = λ/μ (a < c).
func erlangC(c int, a float64) float64 {
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	// term is now a^c/c!
	top := term * float64(c) / (float64(c) - a)
	return top / (sum + top)
}

// TestErlangC checks the tool's server model against queueing theory: Poisson arrivals
// (rate λ) of single-step investigations at a tool with c servers and exponential service
// (rate μ) form an M/M/c queue whose mean wait in queue is Wq = C(c, λ/μ) / (cμ - λ).
// Waits within one run are autocorrelated, so the test uses independent replications
// (different seeds): the replication means are i.i.d., and their grand mean must lie
// within 5 standard errors (estimated from their spread; with 9 degrees of freedom the
// two-sided tail beyond t = 5 is about 7e-4) of Wq. The first 10% of each replication is
// dropped because the queue starts empty. The standard error must also be small (< 5% of
// Wq), so the test cannot pass by being imprecise.
func TestErlangC(t *testing.T) {
	const (
		c      = 4
		lambda = 3.0 // per second
		mu     = 1.0 // per second (mean service 1s)
		reps   = 10
	)
	n := 40_000
	if testing.Short() {
		n = 15_000
	}
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival.Rate.PerSecond = lambda
	s.Tools[0].Concurrency = c
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Second) / mu}
	wq := erlangC(c, lambda/mu) / (float64(c)*mu - lambda)
	means := make([]float64, reps)
	for r := range means {
		sink := newCountSink()
		run(t, s, uint64(100+r), sink)
		if len(sink.waits) != n {
			t.Fatalf("replication %d: %d successful attempts, want %d", r, len(sink.waits), n)
		}
		sum := 0.0
		w := sink.waits[n/10:]
		for _, x := range w {
			sum += x
		}
		means[r] = sum / float64(len(w))
	}
	grand, ss := 0.0, 0.0
	for _, m := range means {
		grand += m
	}
	grand /= reps
	for _, m := range means {
		ss += (m - grand) * (m - grand)
	}
	se := math.Sqrt(ss / (reps - 1) / reps)
	t.Logf("Wq theory %.4fs, simulated %.4fs ± %.4f (SE), replication means %.3f", wq, grand, se, means)
	if math.Abs(grand-wq) > 5*se {
		t.Errorf("mean queue wait %.4fs, Erlang C predicts %.4fs (5 SE = %.4f)", grand, wq, 5*se)
	}
	if se > 0.05*wq {
		t.Errorf("standard error %.4f is over 5%% of Wq %.4f: too imprecise to test", se, wq)
	}
}

// lostScenario: n one-step investigations on one tool whose replies are lost with
// probability q after the work is done; the caller times out and recovers.
func lostScenario(n int, q float64, k int, idem scenarios.Idempotency, inspect bool) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival.Rate.PerSecond = 50
	s.Tools[0].Idempotency = idem
	s.Tools[0].Timeout = 10 * time.Second // service takes 100ms: a timeout means a lost reply
	s.Faults = []scenarios.Fault{{ID: "lossy", Kind: scenarios.FaultLostResponse, Tool: "svc", Probability: q}}
	s.Recovery.Retry.MaxAttempts = k
	s.Recovery.Retry.OnExhausted = recovery.ExhaustedTerminate
	s.Recovery.InspectBeforeRetry = inspect
	return s
}

// TestDuplicateSideEffects checks idempotency against probability theory. At a tool that
// keeps no record (`none`), a blind retry after a lost reply executes the work again. With
// loss probability q and k attempts, the attempts of an operation are truncated geometric
// (each attempt "fails" when its reply is lost) and every attempt executes, so the
// duplicate executions per operation are E[A] - 1 = (1-q^k)/(1-q) - 1, and the total over n
// operations lies within 5 standard errors (sqrt(n Var[A])) of n(E[A]-1). A keyed tool
// with inspection looks the key up after a timeout and takes the stored result: it must
// execute every key exactly once and deliver every result, whatever is lost.
func TestDuplicateSideEffects(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 5_000
	}
	const q, k = 0.2, 4
	t.Run("none-blind-retry", func(t *testing.T) {
		sink := newCountSink()
		res := run(t, lostScenario(n, q, k, scenarios.None, false), 11, sink)
		mean, variance := truncGeom(q, k)
		want := float64(n) * (mean - 1)
		tol := 5 * math.Sqrt(float64(n)*variance)
		if d := float64(sink.duplicates); math.Abs(d-want) > tol {
			t.Errorf("%d duplicate executions, theory predicts %.0f ± %.0f", sink.duplicates, want, tol)
		}
		if sink.execs != sink.toolSpans {
			t.Errorf("none tool: %d executions for %d attempts; every attempt should execute", sink.execs, sink.toolSpans)
		}
		qc := 1 - math.Pow(q, k)
		got := float64(res.Completed) / float64(n)
		if se := math.Sqrt(qc * (1 - qc) / float64(n)); math.Abs(got-qc) > 5*se {
			t.Errorf("completion %.4f, want 1-q^k = %.4f ± %.4f", got, qc, 5*se)
		}
	})
	t.Run("keyed-inspect", func(t *testing.T) {
		sink := newCountSink()
		res := run(t, lostScenario(n, q, k, scenarios.Keyed, true), 11, sink)
		if sink.duplicates != 0 || sink.execs != n {
			t.Errorf("keyed tool with inspection: %d executions (%d duplicates) for %d operations, want exactly one each",
				sink.execs, sink.duplicates, n)
		}
		if sink.undelivered != 0 || res.Completed != n {
			t.Errorf("%d results undelivered, %d of %d completed; inspection should recover every lost reply",
				sink.undelivered, res.Completed, n)
		}
		// Every first reply is lost with probability q and then found by inspection.
		found := float64(sink.inspections["completed"])
		if se := math.Sqrt(float64(n) * q * (1 - q)); math.Abs(found-float64(n)*q) > 5*se {
			t.Errorf("%v lookups found the result, want n·q = %.0f ± %.0f", found, float64(n)*q, 5*se)
		}
	})
}
