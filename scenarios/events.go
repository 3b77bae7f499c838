package scenarios

import (
	"math"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// MaxEvents bounds the simulation events a scenario may need, by EstimateEvents' Floor (a
// run of mean size that retries nothing): at the simulator's few million events a second,
// days of a core. It refuses scenarios such as 10M investigations that each look up a
// running operation 100,000 times, and none of the examples at any size the other limits
// allow.
const MaxEvents = 1e12

// The simulator's own periods, which the estimate multiplies out (sim/sample.go,
// sim/policy.go).
const (
	sampleEvery = time.Minute // tool samples while work is left
	pauseFor    = time.Hour   // a paused investigation's wait before it retries
)

// eventsPerAttempt counts the events one attempt can cause besides lookups: the model turn,
// the service or the fast reply, the timeout, the backoff timer, the supervisor's answer, a
// review, a worker handed over and a crash with its lease.
const eventsPerAttempt = 10

// Events is the size model's estimate of a run's events, term by term, for messages.
type Events struct {
	Total    float64
	Agents   float64 // investigations and their subagents
	Attempts float64 // attempts per step at most: model turns and tool calls, retries, revisions
	Lookups  float64 // lookups of an operation in an unknown state, per attempt at most
	Hangs    float64 // lookups of attempts that a hang never answers
	Samples  float64 // tool-sample ticks over the horizon
	Pauses   float64 // wake-ups of paused investigations
	Crashes  float64 // worker crashes and the events each causes
	Reviews  float64 // human reviews, each of which may approve a fresh round of attempts
	Waits    float64 // wake-ups of retries parked on a retry budget (throttled)
	Floor    float64 // a run of mean size with no retry but every lookup: what is refused
}

// EstimateEvents bounds the events a run of s processes: every agent of the expected tree
// (spawns at a count distribution's high quantile) runs its steps (the high quantile), each
// step every model turn and tool call its retries, revisions and revised plans allow, each
// attempt its fixed events plus, when lookups are on, one lookup per inspection.interval
// for as long as an operation can run on after its timeout, at most inspection.max; an
// attempt a hang never answers is looked up inspection.max times; on top come the tool
// samples, the wake-ups of paused investigations, the worker crashes over the horizon and
// the rounds of attempts human approvals may start.
// Total is an upper estimate, not a forecast: runs use far fewer events, and a property
// test checks that generated runs never use more. Floor is the events of a run at its mean
// size in which nothing is retried or revised but every lookup that can happen does: the
// size model refuses a scenario whose Floor passes MaxEvents.
func EstimateEvents(s *Scenario) Events {
	w, r := &s.Workload, &s.Recovery
	var e Events
	e.Agents = float64(w.Investigations) * subagentTree(s, distTop)
	steps := max(1, min(distTop(w.Steps), MaxSteps))
	// Each try of a step makes a model turn and a tool call, each retried up to
	// max_attempts times; a revision or a revised plan (non_progress) tries the step again.
	e.Attempts = 2 * float64(max(r.Retry.MaxAttempts, 1)) * float64(r.Revisions+1)
	if r.NonProgress != nil {
		e.Attempts *= 2
	}
	per := float64(eventsPerAttempt)
	if w.Workers > 0 && len(w.HoldWorker) > 0 && len(w.HoldWorker) < len(HoldStates) {
		// Workers given back for waits (hold_worker): each of an attempt's five waits (the
		// model turn, the reply, the backoff, the supervisor, a review) may hand its worker
		// over and queue for one again, two events more.
		per += 10
	}
	e.Lookups, e.Hangs = lookups(s, e.Agents, steps, e.Attempts)
	horizon := float64(s.Horizon)
	e.Samples = horizon/float64(sampleEvery) + 1
	timed := func(agents float64) float64 {
		n := e.Samples + 4*float64(len(s.Faults)) + 1000
		if r.OnExhaustion == "pause" {
			n += agents * 2 * (horizon/float64(pauseFor) + 1)
		}
		for i := range s.Faults {
			// A crashed investigation is taken over and may crash again at once, for as
			// long as the horizon lasts: nothing it does bounds its crashes.
			if r := ruleOf(s.Faults[i].Kind); r != nil && r.Size.Takeovers != nil {
				n += agents * eventsPerAttempt * r.Size.Takeovers(&s.Faults[i], horizon)
			}
		}
		return n
	}
	if r.OnExhaustion == "pause" {
		e.Pauses = e.Agents * 2 * (horizon/float64(pauseFor) + 1)
	}
	e.Crashes = timed(e.Agents) - e.Samples - e.Pauses - 4*float64(len(s.Faults)) - 1000
	e.Reviews = reviews(s)
	e.Waits = budgetWaits(s, e.Agents*steps*e.Attempts)
	e.Total = float64(w.Investigations) + (e.Agents*steps+e.Reviews)*e.Attempts*(per+e.Lookups) + e.Hangs + timed(e.Agents) + e.Waits

	agents := float64(w.Investigations) * subagentTree(s, distMean)
	mean := max(1, min(distMean(w.Steps), MaxSteps))
	look, hangs := lookups(s, agents, mean, 2)
	e.Floor = agents*mean*2*(per+look) + hangs + timed(agents)
	return e
}

// budgetWaits bounds the events of retries parked on a retry budget, for runs of attempts
// attempts. The budget hands throttled retries come-back slots in turn, per tool: one
// floor refill apart (min_per_second), or without a floor a gap that starts at a second
// after a first attempt earned tokens and doubles up to recovery.MaxThrottleGap while none
// does (so about log2(MaxThrottleGap / 1s) short gaps per first attempt, then one slot per
// MaxThrottleGap). Each slot wakes one retry, which goes or parks again (two events), and
// each attempt may be parked once more beyond the slots.
func budgetWaits(s *Scenario, attempts float64) float64 {
	b := s.Recovery.RetryBudget
	if b == nil {
		return 0
	}
	horizon := float64(s.Horizon)
	var slots float64
	switch {
	case b.MinPerSecond > 0:
		slots = horizon/1e9*b.MinPerSecond + 1
	case b.Ratio > 0:
		short := math.Log2(float64(recovery.MaxThrottleGap)/float64(time.Second)) + 1
		slots = horizon/float64(recovery.MaxThrottleGap) + 1 + short*attempts
	}
	return 2 * (float64(len(s.Tools)+1)*slots + attempts)
}

// reviews bounds the human reviews of a run. An approved escalation resends with a fresh
// allotment of attempts, so an investigation can go round escalation, review and resend for
// as long as the horizon lasts: only the reviewers, each busy for a review time per review,
// bound the rounds, at about reviewers x horizon / the shortest mean review time (twice
// that, for the reviews shorter than the mean).
func reviews(s *Scenario) float64 {
	h := s.Recovery.Humans
	if h == nil || h.Reviewers <= 0 {
		return 0
	}
	shortest := distMean(h.ReviewTime)
	for _, c := range h.ByClass {
		if c.ReviewTime != nil {
			shortest = min(shortest, distMean(*c.ReviewTime))
		}
	}
	return 2 * float64(h.Reviewers) * float64(s.Horizon) / max(shortest, 1)
}

// subagentTree is the size of one investigation's tree of agents when each agent spawns,
// per step, with the subagent probability, count(subagents.count) children, down to
// max_depth levels, and (recovery.subagents.on_failure: respawn) each agent that spawns
// replaces failed children up to max times, each replacement a tree of its own.
func subagentTree(s *Scenario, count func(Dist) float64) float64 {
	w := &s.Workload
	sub := w.Subagents
	if sub.Probability <= 0 {
		return 1
	}
	steps := min(count(w.Steps), MaxSteps)
	children := sub.Probability * steps * min(count(sub.Count), MaxSubagentCount)
	return treeSum(children+respawns(s, sub.Probability*steps), sub.MaxDepth)
}

// respawns is the replacement subagents one agent may start on average, when it spawns
// subagents with probability spawn (at most 1): none unless failed subagents are respawned,
// else recovery.subagents.on_failure.max (every child failing, and every replacement too,
// until the allotment is spent).
func respawns(s *Scenario, spawn float64) float64 {
	f := s.Recovery.Subagents.OnFailure
	if f.Action != SubagentRespawn || f.Max <= 0 {
		return 0
	}
	return min(spawn, 1) * float64(f.Max)
}

// treeSum is 1 + pc + pc² + ... + pc^depth, the agents of a tree in which each agent has pc
// children, down to depth levels (at most maxSubagentDepth); it stops adding once the sum
// has overflowed.
func treeSum(pc float64, depth int) float64 {
	tree := 0.0
	for k, term := 0, 1.0; k <= min(depth, maxSubagentDepth) && tree < math.MaxFloat64; k++ {
		tree += term
		term *= pc
	}
	return tree
}

// lookups is the lookups per attempt (of an operation that runs on after its timeout) and
// the lookups of attempts a hang never answers, for agents that make steps x attempts
// attempts; both count a lookup and its answer as two events.
func lookups(s *Scenario, agents, steps, attempts float64) (perAttempt, hangs float64) {
	r := &s.Recovery
	if !r.InspectBeforeRetry {
		return 0, 0
	}
	most, every := float64(max(r.Inspection.Max, 1)), float64(max(r.Inspection.Interval, 1))
	perAttempt = 2 * min(most, runningFor(s)/every+1)
	// A hung attempt never finishes: it is looked up inspection.max times. An agent meets
	// the window once per inspection.max lookups it spends, and no more often than it
	// makes attempts.
	for _, f := range s.Faults {
		if r := ruleOf(f.Kind); r != nil && r.Size.Hangs {
			hangs += agents * 2 * min(float64(f.For)/every+most, most*steps*attempts)
		}
	}
	return perAttempt, hangs
}

// expectedLookups is the mean number of lookups (spans) per tool call of the inspection
// that inspect_before_retry starts when a call outlives its timeout: a call of service time
// L (slowed by the worst slowdown a fault puts on its tool) past timeout T runs on for
// L - T and is looked up once, then once per interval while it runs, at most
// inspection.max times. Averaged over each tool's latency distribution (quantileSteps
// midpoint quantiles) and over the step mix. Unlike lookups' per-attempt figure, which
// charges every attempt the slowest call for the events' upper estimate, this is what a
// run at its mean size writes; hung attempts are counted apart.
func expectedLookups(s *Scenario) float64 {
	if !s.Recovery.InspectBeforeRetry {
		return 0
	}
	var sum, total float64
	for _, m := range s.Workload.Mix {
		if t := s.Tool(m.Tool); t >= 0 && m.Weight > 0 {
			sum += m.Weight * toolLookups(s, &s.Tools[t])
			total += m.Weight
		}
	}
	if total == 0 {
		return 0
	}
	return sum / total
}

// toolLookups is expectedLookups for the calls of tool t alone.
func toolLookups(s *Scenario, t *Tool) float64 {
	if t.Timeout <= 0 {
		return 0
	}
	r := &s.Recovery
	most, every := float64(max(r.Inspection.Max, 1)), float64(max(r.Inspection.Interval, 1))
	slow := worstSlowdown(s, t.Name)
	var per float64
	for i := range quantileSteps {
		if over := distQuantile(t.Latency, (float64(i)+0.5)/quantileSteps)*slow - float64(t.Timeout); over > 0 {
			per += min(most, min(over, float64(s.Horizon))/every+1)
		}
	}
	return per / quantileSteps
}

// worstSlowdown is the largest factor a fault of s puts on the service time of tool (at
// least 1); tool "" takes every fault, whatever tool it slows.
func worstSlowdown(s *Scenario, tool string) float64 {
	slow := 1.0
	for i := range s.Faults {
		f := &s.Faults[i]
		if r := ruleOf(f.Kind); r != nil && r.Size.Slowdown != nil && (tool == "" || f.Tool == "" || f.Tool == tool) {
			slow = max(slow, r.Size.Slowdown(f))
		}
	}
	return slow
}

// quantileSteps is the number of quantiles expectedLookups averages over.
const quantileSteps = 4096

// distQuantile is the q-quantile of a distribution (0 < q < 1).
func distQuantile(d Dist, q float64) float64 {
	switch d.Kind {
	case DistConstant:
		return d.Value
	case DistUniform:
		return d.Min + q*(d.Max-d.Min)
	case DistExponential:
		return -d.Mean * math.Log1p(-q)
	case DistLognormal:
		if d.Median <= 0 || d.P95 <= d.Median {
			return d.Median
		}
		sigma := lognormalSigma(d)
		return math.Exp(math.Log(d.Median) + math.Sqrt2*math.Erfinv(2*q-1)*sigma)
	case DistPareto:
		if d.Alpha <= 0 {
			return math.Inf(1)
		}
		return d.Min * math.Pow(1-q, -1/d.Alpha)
	}
	return 0
}

// runningFor is the longest an operation can stay running after its caller stopped
// waiting for it (the only time it is looked up more than once, hangs aside): the slowest
// service of a tool (a high quantile, slowed by the worst brownout) beyond the tool's
// timeout. A lost reply is found done at the first lookup.
func runningFor(s *Scenario) float64 {
	slow := worstSlowdown(s, "")
	longest := 0.0
	for _, t := range s.Tools {
		if t.Timeout > 0 {
			longest = max(longest, distTop(t.Latency)*slow-float64(t.Timeout))
		}
	}
	return min(longest, float64(s.Horizon))
}

// checkEvents refuses a scenario whose estimate passes MaxEvents, naming the term to lower,
// and reports whether it did.
func (v *validator) checkEvents(s *Scenario) bool {
	e := EstimateEvents(s)
	if e.Floor <= MaxEvents {
		return false
	}
	key, what := "workload", "lower workload.investigations, workload.steps or workload.subagents"
	switch {
	case e.Lookups > 2*eventsPerAttempt || e.Hangs > e.Floor/2:
		key, what = "recovery.inspection", "raise recovery.inspection.interval or lower recovery.inspection.max"
	case e.Pauses > e.Floor/2:
		key, what = "recovery.on_exhaustion", "lower the horizon or workload.investigations, or do not pause"
	case e.Crashes > e.Floor/2:
		key, what = "faults", "lower the rate of the worker_crash fault or the horizon"
	case e.Attempts > 100:
		key, what = "recovery.retry.max_attempts", "lower recovery.retry.max_attempts or recovery.revisions"
	}
	v.check(false, key, "the run would take at least about %s simulation events (%s agents, %s lookups per attempt); the limit is %s: %s",
		approx(e.Floor), approx(e.Agents), approx(e.Lookups), approx(MaxEvents), what)
	return true
}
