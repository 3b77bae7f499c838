package sim

import (
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
)

// pauseFor is how long an investigation paused by an exhausted budget waits before it
// resumes with a renewed allotment. The scenario format has no key for it; an hour is the
// order of a budget period.
const pauseFor = time.Hour

// Policy maps a scenario's recovery section to the engine's configuration. It is the only
// place where scenario spellings become engine values.
func Policy(r *scenarios.Recovery) recovery.Policy {
	p := recovery.Policy{
		Retry: recovery.RetryPolicy{
			MaxAttempts: r.Retry.MaxAttempts,
			Initial:     r.Retry.Initial,
			Multiplier:  r.Retry.Multiplier,
			Max:         r.Retry.Max,
			Jitter:      jitter(r.Retry.Jitter),
			OnExhausted: recovery.ExhaustedEscalate,
		},
		InspectBeforeRetry: r.InspectBeforeRetry,
		// A scenario built in Go may leave the block zero: the engine then takes its own
		// defaults, the same as the file format's.
		InspectEvery:    r.Inspection.Interval,
		MaxInspections:  r.Inspection.Max,
		Revisions:       r.Revisions,
		PauseFor:        pauseFor,
		HumansAvailable: r.Humans != nil && r.Humans.Reviewers > 0,
		Supervisor:      r.Supervisor.Kind == "model",
	}
	if r.Retry.OnExhausted == "terminate" {
		p.Retry.OnExhausted = recovery.ExhaustedTerminate
	}
	if r.NonProgress != nil {
		p.NonProgressRepeats = r.NonProgress.Repeats
	}
	switch r.OnExhaustion {
	case "pause":
		p.OnExhaustion = recovery.ExhaustionPause
	case "reduce_scope":
		p.OnExhaustion = recovery.ExhaustionReduceScope
	default:
		p.OnExhaustion = recovery.ExhaustionTerminate
	}
	return p
}

func jitter(s string) recovery.Jitter {
	switch s {
	case "none":
		return recovery.JitterNone
	case "equal":
		return recovery.JitterEqual
	case "decorrelated":
		return recovery.JitterDecorrelated
	}
	return recovery.JitterFull
}

// guards builds the fleet guards shared by all investigations, one per tool.
// guards builds the fleet guards: one per tool, and one for the model provider (the index
// past the last tool) when it is active.
func guards(s *scenarios.Scenario, model bool) *recovery.Guards {
	var b *recovery.BudgetConfig
	if rb := s.Recovery.RetryBudget; rb != nil {
		b = &recovery.BudgetConfig{Ratio: rb.Ratio, MinPerSecond: rb.MinPerSecond}
	}
	var c *recovery.BreakerConfig
	if br := s.Recovery.Breaker; br != nil {
		c = &recovery.BreakerConfig{Window: br.Window, FailureRatio: br.FailureRatio, MinCalls: br.MinCalls, Cooldown: br.Cooldown}
	}
	n := len(s.Tools)
	if model {
		n++
	}
	return recovery.NewGuards(n, b, c)
}
