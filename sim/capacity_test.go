package sim

import (
	"math"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

func spanAttr(s *record.Span, key string) string {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// TestQueueLimitRefuses: n attempts reach a tool with one server and queue_limit q at the
// same instant. One is served, q wait, and the other n-1-q are refused at once with an
// overload error (transient class). With a single attempt allowed and terminate on
// exhaustion, exactly q+1 investigations complete and n-1-q are terminated; nothing refused
// ever executes.
func TestQueueLimitRefuses(t *testing.T) {
	const n, q = 40, 5
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Tools[0].Concurrency = 1
	s.Tools[0].QueueLimit = q
	s.Recovery.Retry.MaxAttempts = 1
	s.Recovery.Retry.OnExhausted = recovery.ExhaustedTerminate
	var c record.Collector
	res := run(t, s, 1, &c)
	refused := 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation == record.OpExecuteTool && spanAttr(sp, "error") == "overloaded" {
			refused++
			if sp.Status != record.StatusError || sp.FailureClass != "transient" || sp.End != sp.Start {
				t.Errorf("refused attempt span %+v: want an immediate error of class transient", sp)
			}
		}
	}
	if refused != n-1-q || res.Completed != q+1 || res.Terminated != n-1-q || len(c.Executions) != q+1 {
		t.Errorf("refused %d, completed %d, terminated %d, executions %d; want %d, %d, %d, %d",
			refused, res.Completed, res.Terminated, len(c.Executions), n-1-q, q+1, n-1-q, q+1)
	}

	// Refusals are transient failures, retried under the retry policy: with enough
	// attempts and backoff every investigation completes, each key executing once.
	s.Recovery.Retry = scenarios.Retry{MaxAttempts: 50, Initial: time.Second, Multiplier: 1.5, Max: time.Minute,
		Jitter: recovery.JitterFull, OnExhausted: recovery.ExhaustedEscalate}
	c = record.Collector{}
	res = run(t, s, 1, &c)
	if res.Completed != n || len(c.Executions) != n {
		t.Errorf("with retries: %d completed, %d executions; want %d and %d", res.Completed, len(c.Executions), n, n)
	}
}

// TestLookupFailsWhileToolDown: during a hang of a keyed tool no attempt executes, so before
// lookups could fail the engine saw "not found" and retried; now every lookup inside the
// window fails (naming the fault) and none says not_found, and after the window lookups work
// again.
func TestLookupFailsWhileToolDown(t *testing.T) {
	for _, kind := range []scenarios.FaultKind{scenarios.FaultHang, scenarios.FaultOutage} {
		s := testScenario()
		s.Workload.Investigations = 20
		s.Tools[0].Timeout = time.Minute
		s.Faults = []scenarios.Fault{{ID: "down", Kind: kind, Tool: "svc", At: 0, For: time.Hour}}
		s.Recovery.Humans = &scenarios.Humans{Reviewers: 2, Approve: 1,
			ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(2 * time.Hour)}}
		var c record.Collector
		run(t, s, 2, &c)
		inside, failed := 0, 0
		for i := range c.Spans {
			sp := &c.Spans[i]
			if sp.Operation != record.OpInspect || sp.Start >= int64(time.Hour) {
				continue
			}
			inside++
			if spanAttr(sp, "lookup") == "failed" && sp.FaultID == "down" && sp.Status == record.StatusError {
				failed++
			}
		}
		if kind == scenarios.FaultHang && inside == 0 {
			t.Fatalf("%s: no lookups inside the window; the test sees nothing", kind)
		}
		if failed != inside {
			t.Errorf("%s: %d of %d lookups inside the window failed naming the fault; want all", kind, failed, inside)
		}
	}
}

// pendingTimes returns every investigation's time from arrival to start (its engine's first
// move out of pending), in seconds, in arrival order.
func pendingTimes(c *record.Collector) []float64 {
	arrived := map[int64]int64{}
	for _, inv := range c.Investigations {
		arrived[inv.InvestigationID] = inv.ArrivedAt
	}
	seen := map[int64]bool{}
	var out []float64
	for _, tr := range c.Transitions {
		if tr.From == "pending" && tr.To != "pending" && !seen[tr.InvestigationID] {
			seen[tr.InvestigationID] = true
			out = append(out, float64(tr.At-arrived[tr.InvestigationID])/1e9)
		}
	}
	return out
}

// TestWorkersMMc: with workers: c, Poisson arrivals at λ, one step whose model turn takes
// Exp(μ) and a tool without delay, each investigation holds a worker for an Exp(μ) time:
// an M/M/c queue. Its waiting time has P(wait) = C(c, λ/μ) (Erlang C) and mean
// Wq = C / (cμ - λ). c = 4, λ = 3.2/min, μ = 1/min (ρ = 0.8): C = 0.5964, Wq = 0.7455 min.
// Waits are autocorrelated, so the bound comes from independent replications: 8 seeds of
// 4000 investigations, their means' standard error s; the mean over seeds must lie within
// 5 s of the closed form (with 7 degrees of freedom the two-sided t tail beyond 5 is
// about 2e-3), and s must be under 8%
// of Wq so the bound is not vacuous. The first 400 of each seed (the warm-up from an empty
// system) are dropped.
func TestWorkersMMc(t *testing.T) {
	const c, lambda, mu = 4, 3.2 / 60, 1.0 / 60 // per second
	C := erlangC(c, lambda/mu)
	wq := C / (c*mu - lambda)
	var means, waitShare []float64
	for seed := uint64(1); seed <= 8; seed++ {
		s := testScenario()
		s.Workload.Investigations = 4000
		s.Workload.Workers = c
		s.Workload.Arrival.Rate.PerSecond = lambda
		s.Workload.Think = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Second) / mu}
		s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
		var col record.Collector
		res := run(t, s, seed, &col)
		if res.Completed != 4000 {
			t.Fatalf("seed %d: %d of 4000 completed", seed, res.Completed)
		}
		p := pendingTimes(&col)[400:]
		sum, waited := 0.0, 0
		for _, x := range p {
			sum += x
			if x > 0 {
				waited++
			}
		}
		means = append(means, sum/float64(len(p)))
		waitShare = append(waitShare, float64(waited)/float64(len(p)))
	}
	check := func(name string, xs []float64, want float64) {
		m, sd := meanSD(xs)
		se := sd / math.Sqrt(float64(len(xs)))
		t.Logf("%s: measured %.4f ± %.4f (s.e.), closed form %.4f", name, m, se, want)
		if math.Abs(m-want) > 5*se || se > 0.08*want {
			t.Errorf("%s: measured %.4f (s.e. %.4f), closed form %.4f", name, m, se, want)
		}
	}
	check("mean pending time (s)", means, wq)
	check("share that waits", waitShare, C)
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)-1))
}

// TestZoneCrash, by hand: 100 roots at once, 10 workers, one step of a 10-minute model turn,
// lease 1m; a zone crash of share 0.3 at 5m for 30m. At 0 ten start; at 5m round(0.3·10) = 3
// of the 10 running die in that one event and the zone's 3 workers are gone until 35m. At 6m
// the 3 leases expire but no worker is free (7 held, capacity 7), so they are taken over at
// 10m, when the 7 survivors finish. The victims' model turn was done, so they only resend
// the step and finish at once (the tool has no delay), freeing their workers too: 4 + 3
// roots start at 10m, and 7 at 20m (capacity is still 7), never 10 before 35m.
// Without workers the same crash kills round(0.3·100) = 30 of the 100 running at once.
func TestZoneCrash(t *testing.T) {
	mk := func(workers int) *scenarios.Scenario {
		s := testScenario()
		s.Workload.Investigations = 100
		s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
		s.Workload.Workers = workers
		s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)}
		s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
		s.Recovery.Lease = time.Minute
		s.Faults = []scenarios.Fault{{ID: "zone-a", Kind: scenarios.FaultZoneCrash, At: 5 * time.Minute, For: 30 * time.Minute, Share: 0.3}}
		return s
	}
	var c record.Collector
	res := run(t, mk(10), 1, &c)
	if res.Completed != 100 {
		t.Fatalf("%d of 100 completed", res.Completed)
	}
	starts := map[int64]int{}    // minute -> roots leaving pending
	takeovers := map[int64]int{} // minute -> crashed investigations taken over
	for _, tr := range c.Transitions {
		switch {
		case tr.From == "pending" && tr.To != "pending":
			starts[tr.At/int64(time.Minute)]++
		case tr.Event == "crashed" && tr.Reason == "worker_crashed":
			takeovers[tr.At/int64(time.Minute)]++
		}
	}
	crashes := 0
	for _, inv := range c.Investigations {
		crashes += int(inv.Crashes)
	}
	// While the zone is down (5m to 35m) the fleet has 7 workers: nothing starts at 5m when
	// the crash frees 3 of the 10, and the 3 come back, each to a waiting root, at 35m.
	if starts[5] != 0 || starts[30] != 7 || starts[35] != 3 {
		t.Errorf("starts at 5m %d, 30m %d, 35m %d; want 0, 7, 3 (%v)", starts[5], starts[30], starts[35], starts)
	}
	if crashes != 3 || starts[0] != 10 || starts[10] != 7 || takeovers[10] != 3 || len(takeovers) != 1 || starts[20] != 7 {
		t.Errorf("crashes %d, starts at 0m %d, 10m %d, 20m %d, takeovers %v; want 3, 10, 7, 7, {10: 3}",
			crashes, starts[0], starts[10], starts[20], takeovers)
	}
	c = record.Collector{}
	run(t, mk(0), 1, &c)
	crashes = 0
	for _, inv := range c.Investigations {
		crashes += int(inv.Crashes)
	}
	if crashes != 30 {
		t.Errorf("unlimited workers: %d crashed, want 30", crashes)
	}
}

// TestCostBudget: a money budget is checked at the end of each model turn like the token
// budget. Each turn costs 1000 tokens at 0.003/0.015 per 1000 (¾ input, ¼ output) = 0.006,
// each step's tool call 0.01 plus 2 s × 3 units × 0.0005 = 0.013. After turn s (from 0) an
// investigation has spent 0.006(s+1) + 0.013s: 0.044 after turn 2, 0.063 after turn 3, so a
// budget of 0.05 is exceeded at turn 3, after 3 accepted steps, and terminates it.
func TestCostBudget(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 10
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 6}
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 1000}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(2 * time.Second)}
	s.Tools[0].Compute = 3
	s.Prices = &scenarios.Prices{Currency: "USD",
		Models: []scenarios.ModelPrice{{Model: "test-model", Input: 0.003, Output: 0.015}},
		Tools:  []scenarios.ToolPrice{{Tool: "svc", Call: 0.01, ComputeSecond: 0.0005}}}
	s.Recovery.Budgets.Cost = 0.05
	var c record.Collector
	res := run(t, s, 1, &c)
	for _, inv := range c.Investigations {
		if inv.TerminationReason != "budget_exceeded" || inv.Steps != 3 {
			t.Errorf("investigation %d: %s (%s) after %d steps; want terminated as budget_exceeded after 3",
				inv.InvestigationID, inv.FinalState, inv.TerminationReason, inv.Steps)
		}
	}
	if res.Terminated != 10 {
		t.Errorf("%d of 10 terminated", res.Terminated)
	}
}

// modelTurns counts the model turns admitted (ok) and refused for each reason.
func modelTurns(c *record.Collector, before int64) (ok int, refused map[string]int) {
	refused = map[string]int{}
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpPlan || spanAttr(sp, "kind") != "model_turn" || sp.Start >= before {
			continue
		}
		if sp.Status == record.StatusOK {
			ok++
		} else {
			refused[spanAttr(sp, "error")]++
		}
	}
	return ok, refused
}

// TestModelRateLimit: a token bucket of R requests per minute that starts full admits at
// most R + R·t calls in the first t minutes. With demand always waiting (20 agents of 100
// instant steps, each retrying a refused call every second) a refilled request waits at most
// 1 s for a caller, so at least R·(t − 1 s) are admitted: over t = 10 minutes with R = 120
// the admitted calls lie in [1198, 1320]. Calls refused as rate_limited are retried, never
// lost: every investigation completes, with one admitted turn per step.
func TestModelRateLimit(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 20
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 100}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
	s.Model = &scenarios.ModelService{RequestsPerMinute: 120}
	s.Recovery.Retry = scenarios.Retry{MaxAttempts: 1000, Initial: time.Second, Multiplier: 1, Max: time.Second,
		Jitter: recovery.JitterNone, OnExhausted: recovery.ExhaustedEscalate}
	var c record.Collector
	res := run(t, s, 1, &c)
	ok, refused := modelTurns(&c, int64(10*time.Minute))
	t.Logf("first 10 minutes: %d calls admitted, refused %v", ok, refused)
	if ok < 1198 || ok > 1320 || refused["rate_limited"] == 0 || len(refused) != 1 {
		t.Errorf("first 10 minutes: %d calls admitted, refused %v; want 1200 to 1320 and only rate_limited refusals", ok, refused)
	}
	if res.Completed != 20 {
		t.Errorf("%d of 20 completed; refused calls must be retried", res.Completed)
	}
	all, _ := modelTurns(&c, math.MaxInt64)
	if all != 20*100 {
		t.Errorf("%d turns admitted in all, want one per step (%d)", all, 20*100)
	}
}

// TestModelTokenRateAndLatency: tokens_per_minute limits the token throughput the same way
// (calls of 1000 tokens against 60000 tokens/min admit at most 60 + 60·t calls in t
// minutes), and latency_per_1k_tokens adds 1000/1000 × 2 s to each turn; a model outage
// fails every call in its window naming the fault.
func TestModelTokenRateAndLatency(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 20
	s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 50}
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 1000}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
	s.Model = &scenarios.ModelService{TokensPerMinute: 60000, LatencyPer1kTokens: 2 * time.Second}
	s.Faults = []scenarios.Fault{{ID: "model-down", Kind: scenarios.FaultOutage, Tool: "model", At: 12 * time.Minute, For: 2 * time.Minute}}
	s.Recovery.Retry = scenarios.Retry{MaxAttempts: 1000, Initial: time.Second, Multiplier: 1, Max: time.Second,
		Jitter: recovery.JitterNone, OnExhausted: recovery.ExhaustedEscalate}
	var c record.Collector
	res := run(t, s, 1, &c)
	ok, _ := modelTurns(&c, int64(10*time.Minute))
	if ok > 60+600 || ok < 590 {
		t.Errorf("first 10 minutes: %d calls of 1000 tokens admitted at 60000 tokens/min; want 600 to 660", ok)
	}
	down, named := 0, 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpPlan || spanAttr(sp, "kind") != "model_turn" {
			continue
		}
		if sp.Status == record.StatusOK && sp.End-sp.Start != int64(2*time.Second) {
			t.Fatalf("turn of 1000 tokens took %v, want 2s", time.Duration(sp.End-sp.Start))
		}
		if sp.Start >= int64(12*time.Minute) && sp.Start < int64(14*time.Minute) {
			down++
			if sp.Status == record.StatusError && sp.FaultID == "model-down" {
				named++
			}
		}
	}
	if down == 0 || named != down || res.Completed != 20 {
		t.Errorf("outage window: %d calls, %d failed naming the fault; %d of 20 completed", down, named, res.Completed)
	}
}

// supervisorCorrect runs s and returns the share of supervisor answers marked correct
// (the right action, nothing the guardrails must refuse) and how many there were.
func supervisorCorrect(t *testing.T, s *scenarios.Scenario) (float64, int) {
	t.Helper()
	var c record.Collector
	run(t, s, 5, &c)
	n, ok := 0, 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation == record.OpSupervise {
			n++
			if spanAttr(sp, "correct") == "true" {
				ok++
			}
		}
	}
	return float64(ok) / float64(n), n
}

// TestSupervisorDifficulty: the model supervisor is right with probability
// accuracy − per_attempt·(attempts − 1) − per_class·(classes − 1) − per_step·steps. Every
// attempt fails (transient, probability 1), so each consultation comes after max_attempts =
// 3 attempts of an operation with one failure class and no step done: with accuracy 0.9 and
// per_attempt 0.2 the chance is 0.9 − 0.4 = 0.5, without difficulty 0.9. Each of the 3000
// investigations consults once (no revisions, no humans: the fallback terminates), so the
// share's standard error is at most √(0.25/3000) = 0.009; the bound is 5 of them.
func TestSupervisorDifficulty(t *testing.T) {
	mk := func(d *scenarios.Difficulty) *scenarios.Scenario {
		s := testScenario()
		s.Workload.Investigations = 3000
		s.Faults = []scenarios.Fault{{ID: "always", Kind: scenarios.FaultTransient, Tool: "svc", Probability: 1}}
		s.Recovery.Supervisor = scenarios.Supervisor{Kind: "model", Accuracy: 0.9, Difficulty: d}
		return s
	}
	for _, tc := range []struct {
		d    *scenarios.Difficulty
		want float64
	}{
		{nil, 0.9},
		{&scenarios.Difficulty{PerAttempt: 0.2}, 0.5},
		{&scenarios.Difficulty{PerAttempt: 0.2, PerClass: 0.3, Floor: 0.6}, 0.6}, // one class: no penalty; floor 0.6
	} {
		got, n := supervisorCorrect(t, mk(tc.d))
		se := math.Sqrt(tc.want * (1 - tc.want) / float64(n))
		t.Logf("difficulty %+v: %d consultations, %.4f correct, closed form %.2f", tc.d, n, got, tc.want)
		if n < 3000 || math.Abs(got-tc.want) > 5*se {
			t.Errorf("difficulty %+v: %d consultations, %.4f correct; want %.2f ± %.4f", tc.d, n, got, tc.want, 5*se)
		}
	}
}

// TestReviewersByClass: humans.approve and review_time per failure class. Policy violations
// are never approved here and take 10 minutes to review; invalid outputs (no revision budget,
// so each goes to a human) are always approved and take 1 minute. So every review of 10
// minutes rejects and every 1-minute one approves, and the rejections are exactly the
// investigations terminated as rejected, one per blocked operation.
func TestReviewersByClass(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 400
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 4}
	s.Workload.Behaviour = scenarios.Behaviour{InvalidOutput: 0.2, PolicyViolation: 0.05, ReviseSuccess: 1}
	never := 0.0
	long := scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)}
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 3, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)},
		ByClass:    []scenarios.HumanCase{{Class: "policy_violation", Approve: &never, ReviewTime: &long}}}
	var c record.Collector
	res := run(t, s, 3, &c)
	approved, rejected, blocked, bad := 0, 0, 0, 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		switch {
		case sp.Operation == record.OpHumanReview:
			d := sp.End - sp.Start
			switch spanAttr(sp, "approved") {
			case "true":
				approved++
				if d != int64(time.Minute) {
					bad++
				}
			default:
				rejected++
				if d != int64(10*time.Minute) {
					bad++
				}
			}
		case sp.Status == record.StatusBlocked:
			blocked++
		}
	}
	terminated := 0
	for _, inv := range c.Investigations {
		if inv.TerminationReason == "rejected" {
			terminated++
		}
	}
	t.Logf("%d approved, %d rejected, %d blocked", approved, rejected, blocked)
	if bad != 0 || approved == 0 || rejected == 0 || rejected != blocked || terminated != rejected || res.Terminated != rejected {
		t.Errorf("%d approved, %d rejected (%d with the wrong review time), %d blocked, %d terminated as rejected (%d in all)",
			approved, rejected, bad, blocked, terminated, res.Terminated)
	}
}

// TestWorkerPriority, by hand: one worker, two roots arriving at 0, each spawning one
// subagent after its first model turn (a 1 s tool call follows). Root 1 starts at 0; root
// 2 arrives and queues; root 1's turn (0 s, an event after the arrival) spawns subagent 3,
// which queues second. At 1 s root 1 waits for its child and gives its worker back: fifo and
// roots_first hand it to root 2, subagents_first to subagent 3.
func TestWorkerPriority(t *testing.T) {
	for prio, want := range map[string]int64{scenarios.PriorityFIFO: 2, scenarios.PrioritySubagentsFirst: 3, scenarios.PriorityRootsFirst: 2} {
		s := testScenario()
		s.Workload.Investigations = 2
		s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
		s.Workload.Workers, s.Workload.Priority = 1, prio
		s.Workload.Subagents = scenarios.Subagents{Probability: 1, Count: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1}, MaxDepth: 1}
		s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Second)}
		var c record.Collector
		res := run(t, s, 1, &c)
		var second int64 = -1
		for _, tr := range c.Transitions {
			if tr.From == "pending" && tr.To == "running" && tr.At == int64(time.Second) {
				second = tr.InvestigationID
				break
			}
		}
		if second != want || res.Completed != 2 {
			t.Errorf("%s: investigation %d started at 1s (%d roots completed); want %d", prio, second, res.Completed, want)
		}
	}
}

// TestModelBreaker: the breaker guards the model like a tool. During a 30-minute model
// outage, a breaker (window 1m, min_calls 10, failure_ratio 0.5, cooldown 2m) opens after
// the first failed calls, and callers park instead of calling: far fewer calls reach the
// model in the window than with no breaker, where every agent retries every 2 s at most.
func TestModelBreaker(t *testing.T) {
	mk := func(br *scenarios.Breaker) *scenarios.Scenario {
		s := testScenario()
		s.Workload.Investigations = 30
		s.Workload.Arrival = scenarios.Arrival{Kind: scenarios.ArrivalAtOnce}
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 20}
		s.Workload.Think = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Second)}
		s.Faults = []scenarios.Fault{{ID: "model-down", Kind: scenarios.FaultOutage, Tool: "model", At: time.Minute, For: 30 * time.Minute}}
		s.Recovery.Retry = scenarios.Retry{MaxAttempts: 1000, Initial: time.Second, Multiplier: 2, Max: 2 * time.Second,
			Jitter: recovery.JitterNone, OnExhausted: recovery.ExhaustedEscalate}
		s.Recovery.Breaker = br
		return s
	}
	count := func(s *scenarios.Scenario) (calls, parked int) {
		var c record.Collector
		res := run(t, s, 1, &c)
		if res.Completed != 30 {
			t.Fatalf("%d of 30 completed", res.Completed)
		}
		for i := range c.Spans {
			sp := &c.Spans[i]
			if sp.FaultID == "model-down" {
				calls++
			}
		}
		for _, tr := range c.Transitions {
			if tr.Reason == "breaker_open" {
				parked++
			}
		}
		return calls, parked
	}
	open, _ := count(mk(nil))
	guarded, parked := count(mk(&scenarios.Breaker{Window: time.Minute, FailureRatio: 0.5, MinCalls: 10, Cooldown: 2 * time.Minute}))
	t.Logf("calls refused by the outage: %d without a breaker, %d with one (%d parkings)", open, guarded, parked)
	if parked == 0 || guarded*5 > open {
		t.Errorf("calls refused by the outage: %d without a breaker, %d with one (%d parkings); want the breaker to hold back most", open, guarded, parked)
	}
}
