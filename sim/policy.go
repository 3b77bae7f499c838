package sim

import (
	"fmt"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
)

// pauseFor is how long an investigation paused by an exhausted budget waits before it
// resumes with a renewed allotment. The scenario format has no key for it; an hour is the
// order of a budget period.
const pauseFor = time.Hour

// Policy maps a scenario's recovery section to the engine's configuration. It is the only
// place where scenario spellings become engine values, and it reads them with the engine's
// own parsers (recovery.ParseJitter and the like), so a spelling the engine does not know is
// an error, never a silent default. The ranges were checked once by scenarios.Validate.
func Policy(r *scenarios.Recovery) (recovery.Policy, error) {
	j, ok := recovery.ParseJitter(r.Retry.Jitter)
	if !ok {
		return recovery.Policy{}, fmt.Errorf("retry.jitter %q is not a jitter the engine knows", r.Retry.Jitter)
	}
	ex, ok := recovery.ParseExhausted(r.Retry.OnExhausted)
	if !ok {
		return recovery.Policy{}, fmt.Errorf("retry.on_exhausted %q is not an action the engine knows", r.Retry.OnExhausted)
	}
	oe, ok := recovery.ParseOnExhaustion(r.OnExhaustion)
	if !ok {
		return recovery.Policy{}, fmt.Errorf("on_exhaustion %q is not a policy the engine knows", r.OnExhaustion)
	}
	p := recovery.Policy{
		Retry: recovery.RetryPolicy{
			MaxAttempts: r.Retry.MaxAttempts,
			Initial:     r.Retry.Initial,
			Multiplier:  r.Retry.Multiplier,
			Max:         r.Retry.Max,
			Jitter:      j,
			OnExhausted: ex,
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
		OnExhaustion:    oe,
	}
	if r.NonProgress != nil {
		p.NonProgressRepeats = r.NonProgress.Repeats
	}
	return p, nil
}

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
