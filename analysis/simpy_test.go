//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
)

// mm8File is the M/M/c-with-retries scenario that BenchmarkSimPy runs in mayday and, as
// mm8_simpy.py, in SimPy; both files say at their top what they model.
const (
	mm8File   = "testdata/simpy/mm8.yaml"
	mm8Script = "testdata/simpy/mm8_simpy.py"
	// mm8Batches is the number of batches for the batch-means standard error of the mean
	// time in system (mm8_simpy.py's default, so that both sides estimate it the same way).
	mm8Batches = 20
)

// mm8Model is the queueing model a scenario such as mm8.yaml describes, in the units of
// mm8_simpy.py's flags (seconds).
type mm8Model struct {
	customers int
	rate      float64 // Poisson arrivals per second
	servers   int
	service   float64 // mean of the exponential service time
	fail      float64 // probability that an attempt fails fast
	backoff   float64 // fixed wait before each retry
	attempts  int     // attempts per customer, the first included
	seed      uint64
}

// mm8Of reads the model from s, refusing any scenario that says more than the SimPy script
// can simulate.
func mm8Of(s *scenarios.Scenario) (mm8Model, error) {
	w, r := &s.Workload, &s.Recovery.Retry
	if len(s.Tools) != 1 || len(s.Faults) != 1 {
		return mm8Model{}, fmt.Errorf("%s: want one tool and one fault", s.Name)
	}
	t, f := &s.Tools[0], &s.Faults[0]
	switch {
	case w.Arrival.Kind != scenarios.ArrivalPoisson:
		return mm8Model{}, fmt.Errorf("%s: want Poisson arrivals", s.Name)
	case w.Steps != (scenarios.Dist{Kind: scenarios.DistConstant, Value: 1}) || w.Think.Kind != scenarios.DistConstant || w.Think.Value != 0:
		return mm8Model{}, fmt.Errorf("%s: want one step and no think time", s.Name)
	case w.Subagents.Probability > 0 || w.Behaviour != (scenarios.Behaviour{}) || w.Workers != 0 || s.Model != nil || s.Recovery.Humans != nil:
		return mm8Model{}, fmt.Errorf("%s: want no subagents, agent behaviour, worker limit, model service or humans", s.Name)
	case t.Latency.Kind != scenarios.DistExponential || t.Concurrency == 0 || t.Timeout != 0 || t.QueueLimit != 0:
		return mm8Model{}, fmt.Errorf("%s: want exponential service at finite servers without timeout or queue limit", s.Name)
	case f.Kind != scenarios.FaultTransient || (f.Tool != "" && f.Tool != t.Name):
		return mm8Model{}, fmt.Errorf("%s: want one transient fault of the tool", s.Name)
	case r.Jitter != recovery.JitterNone || (r.Multiplier != 1 && r.Max != r.Initial):
		return mm8Model{}, fmt.Errorf("%s: want a fixed backoff (jitter none, multiplier 1)", s.Name)
	}
	return mm8Model{customers: w.Investigations, rate: w.Arrival.Rate.PerSecond, servers: t.Concurrency,
		service: t.Latency.Mean / 1e9, fail: f.Probability, backoff: r.Initial.Seconds(),
		attempts: r.MaxAttempts, seed: s.Seed}, nil
}

// args are mm8_simpy.py's flags for m.
func (m mm8Model) args() []string {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return []string{"--customers", strconv.Itoa(m.customers), "--rate", g(m.rate), "--servers", strconv.Itoa(m.servers),
		"--service", g(m.service), "--fail", g(m.fail), "--backoff", g(m.backoff), "--attempts", strconv.Itoa(m.attempts),
		"--seed", strconv.FormatUint(m.seed, 10), "--batches", strconv.Itoa(mm8Batches)}
}

// mm8Theory holds the model's closed forms, per customer.
//
// A customer's attempts are a truncated geometric (each fails with p, at most k): it is
// served with probability q = 1 - p^k, after j failures with probability p^j(1-p), which
// cost j backoffs. Its successful attempt reaches the servers at its arrival time plus j
// backoffs; shifting each point of a Poisson process by an independent delay and dropping
// each independently leaves a Poisson process, so the servers see Poisson arrivals of rate
// λq and form an M/M/c queue whose mean wait is Erlang C's Wq = C(c, λqS) / (c/S - λq).
// A served customer's mean time in system is E[j | served]·backoff + Wq + S.
type mm8Theory struct {
	served, attempts, attemptsVar, timeInSystem, utilisation float64
}

func (m mm8Model) theory() mm8Theory {
	p, k := m.fail, m.attempts
	var th mm8Theory
	var backoffs, m2 float64
	for a := 1; a <= k; a++ {
		pa := math.Pow(p, float64(a-1)) * (1 - p) // served on attempt a
		if a < k {
			th.attempts += float64(a) * pa
			m2 += float64(a*a) * pa
		} else {
			pk := math.Pow(p, float64(k-1)) // the last attempt is made whatever its outcome
			th.attempts += float64(k) * pk
			m2 += float64(k*k) * pk
		}
		th.served += pa
		backoffs += float64(a-1) * m.backoff * pa
	}
	th.attemptsVar = m2 - th.attempts*th.attempts
	lam := m.rate * th.served
	load := lam * m.service
	th.utilisation = load / float64(m.servers)
	wq := erlangWaitProb(m.servers, load) / (float64(m.servers)/m.service - lam)
	th.timeInSystem = backoffs/th.served + wq + m.service
	return th
}

// erlangWaitProb is Erlang C: the probability that an arrival waits in an M/M/c queue
// with offered load a = λS < c.
func erlangWaitProb(c int, a float64) float64 {
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a) // term is a^c/c!
	return top / (sum + top)
}

// mm8Stats is what one side of the comparison measured; mm8_simpy.py prints the same.
type mm8Stats struct {
	customers, completed, attempts int
	meanTIS, seTIS                 float64 // mean time in system of the served (s), its batch-means SE
}

// mm8Customer is one customer (root investigation), for mm8Summarise.
type mm8Customer struct {
	arrived  int64
	id       int64
	served   bool
	tis      float64 // time in system, seconds
	attempts int
}

// mm8Summarise computes the stats of customers in arrival order, the standard error by
// batch means: waits in a queue are autocorrelated, so the customers in arrival order are
// cut into mm8Batches runs whose means are nearly independent (each run spans about
// n/(20λ) = 1,560 s of mm8.yaml's time, some hundred times the queue's relaxation time
// 1/(μ(√c - √(λqS))²) ≈ 11 s); the SE is the spread of the batch means over √batches.
// It is the computation mm8_simpy.py does.
func mm8Summarise(cs []mm8Customer) mm8Stats {
	n := len(cs)
	var sums [mm8Batches]float64
	var counts [mm8Batches]int
	st := mm8Stats{customers: n}
	for i, c := range cs {
		st.attempts += c.attempts
		if c.served {
			b := i * mm8Batches / n
			sums[b] += c.tis
			counts[b]++
			st.completed++
			st.meanTIS += c.tis
		}
	}
	st.meanTIS /= float64(st.completed)
	var mean, ss float64
	for b := range sums {
		mean += sums[b] / float64(counts[b]) / mm8Batches
	}
	for b := range sums {
		d := sums[b]/float64(counts[b]) - mean
		ss += d * d
	}
	st.seTIS = math.Sqrt(ss / (mm8Batches - 1) / mm8Batches)
	return st
}

// mm8Agree lists where two measurements of model m disagree by more than 5 standard
// errors of their difference. With want == nil, got is compared with the closed forms.
// Completions are binomial (n, q) and attempts a sum of n independent truncated geometrics,
// so their SE is exact; the mean time in system uses the batch-means SEs, with 19 degrees
// of freedom each: a t beyond 5 has probability below 1e-4. An SE over 2% of the mean
// (observed: under 1%) is itself an error, so that the check cannot pass by imprecision.
func mm8Agree(m mm8Model, got mm8Stats, want *mm8Stats) []string {
	th := m.theory()
	n := float64(m.customers)
	sides, w := 2.0, mm8Stats{customers: m.customers, completed: -1}
	if want == nil {
		sides = 1
	} else {
		w = *want
	}
	var bad []string
	check := func(what string, g, e, se float64) {
		if math.Abs(g-e) > 5*se {
			bad = append(bad, fmt.Sprintf("%s %.6g, want %.6g ± %.3g (5 SE)", what, g, e, 5*se))
		}
	}
	if got.customers != m.customers || w.customers != m.customers {
		bad = append(bad, fmt.Sprintf("%d and %d customers, want %d", got.customers, w.customers, m.customers))
	}
	for _, s := range []mm8Stats{got, w} {
		if s.completed >= 0 && !(s.seTIS <= 0.02*s.meanTIS) {
			bad = append(bad, fmt.Sprintf("SE of the mean time in system %.4g s is over 2%% of %.4g s", s.seTIS, s.meanTIS))
		}
	}
	eC, eA, eT, seT := n*th.served, n*th.attempts, th.timeInSystem, got.seTIS
	if want != nil {
		eC, eA, eT = float64(w.completed), float64(w.attempts), w.meanTIS
		seT = math.Hypot(got.seTIS, w.seTIS)
	}
	check("completed", float64(got.completed), eC, math.Sqrt(sides*n*th.served*(1-th.served)))
	check("attempts", float64(got.attempts), eA, math.Sqrt(sides*n*th.attemptsVar))
	check("mean time in system (s)", got.meanTIS, eT, seT)
	return bad
}

// mm8Sink keeps the customers of a run and checks, on every tool span, how mayday models a
// fast failure: it answers at once (no time, no queue wait) and nothing executes.
type mm8Sink struct {
	record.Discard
	customers           []mm8Customer
	failed, executions  int
	slowFailures, spans int
}

func (k *mm8Sink) Investigation(r *record.Investigation) {
	if r.ParentID != 0 {
		return
	}
	served := r.FinalState == "completed"
	k.customers = append(k.customers, mm8Customer{arrived: r.ArrivedAt, id: r.InvestigationID, served: served,
		tis: float64(r.EndedAt-r.ArrivedAt) / 1e9, attempts: int(r.Attempts)})
}

func (k *mm8Sink) Span(s *record.Span) {
	if s.Operation != record.OpExecuteTool {
		return
	}
	k.spans++
	if s.Status == record.StatusError {
		k.failed++
		if s.End != s.Start || s.QueueWait != 0 {
			k.slowFailures++
		}
	}
}

func (k *mm8Sink) Execution(*record.Execution) { k.executions++ }

// sorted returns the customers in arrival order.
func (k *mm8Sink) sorted() []mm8Customer {
	sort.Slice(k.customers, func(i, j int) bool {
		a, b := k.customers[i], k.customers[j]
		return a.arrived < b.arrived || a.arrived == b.arrived && a.id < b.id
	})
	return k.customers
}

// TestSimPyScenarioClosedForm runs mm8.yaml in the simulator alone and checks it against
// the model's closed forms (mm8Theory, mm8Agree): served customers 1 - p^k, attempts per
// customer the truncated geometric mean (1 - p^k)/(1 - p), and the mean time in system of
// the served from Erlang C plus the expected backoff. It also checks the modelling choice
// both files state: a fast failure takes no time, never queues and executes nothing, so
// there is exactly one execution per served customer.
func TestSimPyScenarioClosedForm(t *testing.T) {
	s, err := scenarios.Load(mm8File, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mm8Of(s)
	if err != nil {
		t.Fatal(err)
	}
	th := m.theory()
	if th.utilisation < 0.7 || th.utilisation > 0.9 {
		t.Fatalf("utilisation %.3f: mm8.yaml should load its servers to about 0.8", th.utilisation)
	}
	k := &mm8Sink{}
	res, err := sim.Run(context.Background(), s, s.Seed, k, sim.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("invariant violations: %v", res.Violations)
	}
	got := mm8Summarise(k.sorted())
	t.Logf("theory: served %.4f, attempts %.4f, time in system %.4f s; mayday: %d served, %d attempts, %.4f ± %.4f s",
		th.served, th.attempts, th.timeInSystem, got.completed, got.attempts, got.meanTIS, got.seTIS)
	for _, e := range mm8Agree(m, got, nil) {
		t.Error(e)
	}
	if k.slowFailures > 0 || k.executions != got.completed || k.spans != got.attempts || k.failed != got.attempts-got.completed {
		t.Errorf("%d tool spans (%d failed, %d of them taking time or queueing), %d executions; want %d attempts, "+
			"%d failing at once, one execution per served customer (%d)",
			k.spans, k.failed, k.slowFailures, k.executions, got.attempts, got.attempts-got.completed, got.completed)
	}
}
