package sim

import (
	"math"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// reviewFleet: c workers, Poisson arrivals at λ, one step whose model turn takes Exp(μ) on a
// worker and a tool without delay; every result is invalid and no revision is allowed, so
// every investigation is escalated to a review of constant length R (1000 reviewers: never a
// queue) that rejects it. The reviews dominate: R is ten times the work.
func reviewFleet(n, c int, lambda, mu float64, review time.Duration) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Workers = c
	s.Workload.Arrival.Rate.PerSecond = lambda
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Second) / mu}
	s.Workload.Behaviour.InvalidOutput = 1
	s.Recovery.Revisions = 0
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: 0}
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 1000, Approve: 0,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(review)}}
	return s
}

// TestHoldWorkerDuringReview compares a fleet whose investigations keep their worker while a
// human reviews them (the default) with one that releases it (hold_worker without
// awaiting_human), c = 4, λ = 3.2/min, μ = 1/min, R = 10 min, 4000 investigations.
//
// Released: a worker is busy only for the model turn, Exp(μ); after the review the
// investigation queues for a worker again, but only to take in the rejection, which takes no
// time, so a worker is held for Exp(μ) per investigation and the starts form an M/M/c queue
// with ρ = λ/(cμ) = 0.8: P(wait) = C(4, 3.2) = 0.5964 (Erlang C), mean wait 0.7455 min, as in
// TestWorkersMMc and with the same replication bound (8 seeds; the mean over seeds within
// 5 standard errors, which with 7 degrees of freedom fails by chance about once in 500
// runs). The resumed work waits in the same FIFO queue: its arrivals are the departures of
// the M/M/c queue shifted by R, a Poisson stream (Burke) whose past is independent of the
// queue's present, so by PASTA a resume finds the queue as a time average does and waits for
// a worker with probability C too (a job without service in a FIFO queue waits exactly as
// long as a job with service would).
//
// Held: a worker is busy for Exp(μ) + R per investigation, so ρ = λ(1/μ + R)/c = 8.8: the
// fleet cannot keep up. Deterministically, each investigation holds a worker for at least R
// from its review's start, so a worker ends at most one investigation per R and at most
// c·t/R of them have ended by any time t; all N end no earlier than N·R/c = 10,000 min.
// Released, all end by the last arrival (about N/λ = 1250 min) plus R plus a wait.
func TestHoldWorkerDuringReview(t *testing.T) {
	const n, c, lambda, mu = 4000, 4, 3.2 / 60, 1.0 / 60 // per second
	const review = 10 * time.Minute
	C := erlangC(c, lambda/mu)
	wq := C / (c*mu - lambda)
	var means, waitShare, resumeShare []float64
	for seed := uint64(1); seed <= 8; seed++ {
		s := reviewFleet(n, c, lambda, mu, review)
		s.Workload.HoldWorker = []string{"running", "waiting", "recovering"}
		var col record.Collector
		res := run(t, s, seed, &col)
		if res.Terminated != n {
			t.Fatalf("seed %d: %d of %d terminated", seed, res.Terminated, n)
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
		resumed := resumeWaits(t, &col, review)[400:]
		waited = 0
		for _, x := range resumed {
			if x > 0 {
				waited++
			}
		}
		resumeShare = append(resumeShare, float64(waited)/float64(len(resumed)))
		if seed == 1 && float64(res.Makespan) > 2000*60e9 {
			t.Errorf("released: the last investigation ended at %v; want about N/λ + R", time.Duration(res.Makespan))
		}
	}
	check := func(name string, xs []float64, want float64) {
		m, sd := meanSD(xs)
		se := sd / math.Sqrt(float64(len(xs)))
		t.Logf("%s: measured %.4f ± %.4f (s.e.), closed form %.4f", name, m, se, want)
		if math.Abs(m-want) > 5*se || se > 0.08*want {
			t.Errorf("%s: measured %.4f (s.e. %.4f), closed form %.4f", name, m, se, want)
		}
	}
	check("released: mean pending time (s)", means, wq)
	check("released: share that waits to start", waitShare, C)
	check("released: share that waits to resume after the review", resumeShare, C)

	// Held: the deterministic bound at every end, and the makespan.
	var col record.Collector
	res := run(t, reviewFleet(n, c, lambda, mu, review), 1, &col)
	ended := 0
	for _, inv := range col.Investigations {
		if !inv.Ended {
			continue
		}
		ended++
		if bound := float64(c) * float64(inv.EndedAt) / float64(review); float64(ended) > bound {
			t.Fatalf("held: %d ended by %v, above c·t/R = %.1f", ended, time.Duration(inv.EndedAt), bound)
		}
	}
	if ended != n || res.Makespan < int64(n/c)*int64(review) {
		t.Errorf("held: %d ended, the last at %v; want %d, no earlier than N·R/c = %v", ended,
			time.Duration(res.Makespan), n, time.Duration(int64(n/c)*int64(review)))
	}
	t.Logf("held: makespan %v (bound %v)", time.Duration(res.Makespan), time.Duration(int64(n/c)*int64(review)))
}

// resumeWaits returns, per investigation in order of their review's end, how long it waited
// for a worker after its review (from the human_review span's end to the engine's decision,
// awaiting_human → terminated), in seconds. It checks that each review lasted R and ran on
// no worker: the investigation had given its worker back.
func resumeWaits(t *testing.T, c *record.Collector, review time.Duration) []float64 {
	t.Helper()
	decided := map[int64]int64{}
	for _, tr := range c.Transitions {
		if tr.From == "awaiting_human" && tr.To != "awaiting_human" {
			decided[tr.InvestigationID] = tr.At
		}
	}
	var out []float64
	for i := range c.Spans {
		sp := &c.Spans[i]
		if sp.Operation != record.OpHumanReview {
			continue
		}
		if sp.Worker != 0 || sp.End-sp.Start != int64(review) {
			t.Fatalf("review of %d: worker %d, %v long; want none and %v", sp.InvestigationID, sp.Worker, time.Duration(sp.End-sp.Start), review)
		}
		at, ok := decided[sp.InvestigationID]
		if !ok || at < sp.End {
			t.Fatalf("review of %d ended at %v, decided at %v", sp.InvestigationID, time.Duration(sp.End), time.Duration(at))
		}
		out = append(out, float64(at-sp.End)/1e9)
	}
	return out
}
