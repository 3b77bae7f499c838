package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// pricedFleet draws a scenario with a cost budget and priced tokens, calls and compute:
// two tools of random latency, concurrency, queue limit and idempotency (timeouts, with
// cancel_on_timeout when cancel), transient faults, a rate-limited model, invalid results
// with revisions, a model supervisor, humans, subagents, and an exhaustion policy that
// never renews the budget (terminate or reduce_scope).
func pricedFleet(r *rand.Rand, i int, timeouts bool) *scenarios.Scenario {
	s := testScenario()
	s.Name = fmt.Sprintf("priced-%d", i)
	s.Workload.Investigations = 120
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistUniform, Min: 2, Max: 8}
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(200 + r.IntN(3000))}
	s.Workload.Behaviour = scenarios.Behaviour{InvalidOutput: 0.3 * r.Float64(), ReviseSuccess: 0.7}
	s.Workload.Subagents = scenarios.Subagents{Probability: 0.1 * r.Float64(), Count: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1}, MaxDepth: 1}
	s.Tools = nil
	s.Workload.Mix = nil
	idem := []scenarios.Idempotency{scenarios.Keyed, scenarios.Natural, scenarios.None}
	s.Prices = &scenarios.Prices{Currency: "USD",
		Models: []scenarios.ModelPrice{{Model: "test-model", Input: 0.01 * r.Float64(), Output: 0.03 * r.Float64()}}}
	for k, name := range []string{"a", "b"} {
		mean := time.Duration((0.5 + 5*r.Float64()) * float64(time.Second))
		t := scenarios.Tool{Name: name, Idempotency: idem[r.IntN(3)], Compute: 3 * r.Float64(),
			Latency: scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(mean)}}
		if r.IntN(2) == 0 {
			t.Concurrency = 1 + r.IntN(4)
			t.QueueLimit = r.IntN(4)
		}
		if timeouts {
			t.Timeout = time.Duration((0.5 + 2*r.Float64()) * float64(mean))
			t.CancelOnTimeout = true
		}
		s.Tools = append(s.Tools, t)
		s.Workload.Mix = append(s.Workload.Mix, scenarios.Weight{Tool: name, Weight: 1})
		s.Prices.Tools = append(s.Prices.Tools, scenarios.ToolPrice{Tool: name, Call: 0.01 * r.Float64(), ComputeSecond: 0.005 * r.Float64()})
		s.Faults = append(s.Faults, scenarios.Fault{ID: "flaky-" + name, Index: k, Kind: scenarios.FaultTransient, Tool: name, Probability: 0.5 * r.Float64()})
	}
	if r.IntN(2) == 0 {
		s.Model = &scenarios.ModelService{RequestsPerMinute: float64(30 + r.IntN(120)), Failure: 0.05 * r.Float64()}
	}
	s.Recovery.Retry = scenarios.Retry{MaxAttempts: 1 + r.IntN(6), Initial: time.Second, Multiplier: 2, Max: time.Minute,
		Jitter: recovery.JitterFull, OnExhausted: recovery.ExhaustedEscalate}
	s.Recovery.Revisions = r.IntN(3)
	if r.IntN(2) == 0 {
		s.Recovery.Supervisor = scenarios.Supervisor{Kind: "model", Accuracy: 0.8, Latency: 10 * time.Second, Tokens: int64(r.IntN(3000))}
	}
	if r.IntN(2) == 0 {
		s.Recovery.Humans = &scenarios.Humans{Reviewers: 1 + r.IntN(2), Approve: 0.8,
			ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(5 * time.Minute)}}
	}
	s.Recovery.Budgets.Cost = 0.005 + 0.1*r.Float64()
	s.Recovery.OnExhaustion = []string{"terminate", "reduce_scope"}[r.IntN(2)]
	return s
}

// ledger is what each investigation spent, read from its records as the trace tables hold
// them (the `costs` view's rules): tokens of plan and supervise spans at the model's prices,
// the call price of every attempt sent, and the compute of every execution at its tool's
// price. largest is its most expensive single spend: a model turn, a consultation, or an
// attempt together with the execution it started (an execution no attempt started at its
// start, such as one that waited in a queue past its attempt's timeout, counts alone).
type ledger struct{ cost, largest map[int64]float64 }

func spent(s *scenarios.Scenario, c *record.Collector) ledger {
	l := ledger{cost: map[int64]float64{}, largest: map[int64]float64{}}
	add := func(inv int64, x float64) {
		l.cost[inv] += x
		l.largest[inv] = max(l.largest[inv], x)
	}
	mp := s.Prices.Model(s.Workload.Model)
	call, comp := map[string]float64{}, map[string]float64{}
	for _, t := range s.Tools {
		if tp := s.Prices.Tool(t.Name); tp != nil {
			call[t.Name], comp[t.Name] = tp.Call, tp.ComputeSecond
		}
	}
	type start struct {
		key record.OpKey
		at  int64
	}
	execs := map[start][]int{} // executions by operation and start
	for i := range c.Executions {
		e := &c.Executions[i]
		k := start{e.OpKey, e.Start}
		execs[k] = append(execs[k], i)
	}
	used := make([]bool, len(c.Executions))
	for i := range c.Spans {
		sp := &c.Spans[i]
		switch {
		case sp.Operation == record.OpPlan || sp.Operation == record.OpSupervise:
			if sp.InputTokens+sp.OutputTokens > 0 {
				add(sp.InvestigationID, float64(sp.InputTokens)/1000*mp.Input+float64(sp.OutputTokens)/1000*mp.Output)
			}
		case sp.Operation == record.OpExecuteTool && sp.Status != record.StatusBlocked:
			x := call[sp.Tool]
			if sp.QueueWait < sp.End-sp.Start || sp.Status == record.StatusOK {
				// It started service at Start + QueueWait: the execution that began then.
				for _, j := range execs[start{sp.OpKey, sp.Start + sp.QueueWait}] {
					if !used[j] {
						used[j] = true
						x += c.Executions[j].Compute * comp[sp.Tool]
						break
					}
				}
			}
			add(sp.InvestigationID, x)
		}
	}
	for j := range c.Executions {
		if !used[j] {
			e := &c.Executions[j]
			add(e.InvestigationID, e.Compute*comp[e.Tool])
		}
	}
	return l
}

// checkOvershoot fails the test for any investigation whose cost exceeds its budget by more
// than its largest single spend, and returns how many exceeded their budget at all.
func checkOvershoot(t *testing.T, s *scenarios.Scenario, c *record.Collector) (over int) {
	t.Helper()
	l := spent(s, c)
	b := s.Recovery.Budgets.Cost
	for inv, cost := range l.cost {
		if cost > b {
			over++
		}
		// A float tolerance far below any price: sums of a few hundred terms.
		if cost > b+l.largest[inv]+1e-12 {
			t.Errorf("%s: investigation %d spent %.6f against a budget of %.6f, more than its largest spend %.6f over it",
				s.Name, inv, cost, b, l.largest[inv])
		}
	}
	return over
}

// TestBudgetAtEverySpend: over random priced fleets with cost budgets, no investigation
// spends more than its budget plus its single largest spend, and the budget binds
// (investigations do cross it). Budgets are checked before every model call, consultation
// and attempt, so the one spend that crosses the budget is the last one started.
func TestBudgetAtEverySpend(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 8
	}
	r := rand.New(rand.NewPCG(22, 3))
	crossed := 0
	for i := range n {
		s := pricedFleet(r, i, i%2 == 1)
		var c record.Collector
		run(t, s, uint64(i+1), &c)
		crossed += checkOvershoot(t, s, &c)
	}
	t.Logf("%d fleets: %d investigations crossed their budget, each by at most one spend", n, crossed)
	if crossed < n {
		t.Errorf("only %d investigations crossed their budget in %d fleets: the test checks little", crossed, n)
	}
}
