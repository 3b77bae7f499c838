package recovery

import "fmt"

// Validate reports the first field of p that the engine cannot work with, naming it by its
// scenario key and saying what would be valid. Zero values that have a documented default
// (PauseFor, MaxInspections, InspectEvery, RetryPolicy.Max) are valid.
func (p *Policy) Validate() error {
	r := &p.Retry
	switch {
	case r.MaxAttempts < 1:
		return fmt.Errorf("%w: retry.max_attempts is %d, want >= 1 (1 = no retry)", ErrBadPolicy, r.MaxAttempts)
	case r.Initial < 0:
		return fmt.Errorf("%w: retry.initial is %s, want >= 0", ErrBadPolicy, r.Initial)
	case r.Multiplier < 1:
		return fmt.Errorf("%w: retry.multiplier is %g, want >= 1", ErrBadPolicy, r.Multiplier)
	case r.Max < 0:
		return fmt.Errorf("%w: retry.max is %s, want >= 0 (0 = no cap)", ErrBadPolicy, r.Max)
	case r.Max > 0 && r.Max < r.Initial:
		return fmt.Errorf("%w: retry.max %s is below retry.initial %s", ErrBadPolicy, r.Max, r.Initial)
	case r.Jitter > JitterDecorrelated:
		return fmt.Errorf("%w: retry.jitter is %d, want none, full, equal or decorrelated", ErrBadPolicy, r.Jitter)
	case r.OnExhausted > ExhaustedTerminate:
		return fmt.Errorf("%w: retry.on_exhausted is %d, want escalate or terminate", ErrBadPolicy, r.OnExhausted)
	case p.Revisions < 0:
		return fmt.Errorf("%w: revisions is %d, want >= 0", ErrBadPolicy, p.Revisions)
	case p.NonProgressRepeats < 0:
		return fmt.Errorf("%w: non_progress.repeats is %d, want >= 0 (0 = off)", ErrBadPolicy, p.NonProgressRepeats)
	case p.OnExhaustion > ExhaustionReduceScope:
		return fmt.Errorf("%w: on_exhaustion is %d, want pause, reduce_scope or terminate", ErrBadPolicy, p.OnExhaustion)
	case p.PauseFor < 0:
		return fmt.Errorf("%w: pause is %s, want >= 0 (0 = 1h)", ErrBadPolicy, p.PauseFor)
	case p.MaxInspections < 0:
		return fmt.Errorf("%w: inspection.max is %d, want >= 0 (0 = %d)", ErrBadPolicy, p.MaxInspections, DefaultMaxInspections)
	case p.InspectEvery < 0:
		return fmt.Errorf("%w: inspection.interval is %s, want >= 0 (0 = %s)", ErrBadPolicy, p.InspectEvery, DefaultInspectEvery)
	}
	return nil
}

// Validate reports a retry-budget setting the guards cannot work with.
func (c *BudgetConfig) Validate() error {
	switch {
	case c.Ratio < 0:
		return fmt.Errorf("%w: retry_budget.ratio is %g, want >= 0", ErrBadPolicy, c.Ratio)
	case c.MinPerSecond < 0:
		return fmt.Errorf("%w: retry_budget.min_per_second is %g, want >= 0", ErrBadPolicy, c.MinPerSecond)
	case c.Ratio == 0 && c.MinPerSecond == 0:
		return fmt.Errorf("%w: retry_budget.ratio and retry_budget.min_per_second are both 0: no retry could go once the first tokens are spent; want either > 0", ErrBadPolicy)
	case c.MaxTokens < 0:
		return fmt.Errorf("%w: retry_budget.max_tokens is %g, want >= 0 (0 = %g)", ErrBadPolicy, c.MaxTokens, DefaultBudget.MaxTokens)
	}
	return nil
}

// Validate reports a breaker setting the guards cannot work with.
func (c *BreakerConfig) Validate() error {
	switch {
	case c.Window < 0:
		return fmt.Errorf("%w: breaker.window is %s, want > 0 (0 = %s)", ErrBadPolicy, c.Window, DefaultBreaker.Window)
	case c.FailureRatio < 0 || c.FailureRatio > 1:
		return fmt.Errorf("%w: breaker.failure_ratio is %g, want in (0, 1] (0 = %g)", ErrBadPolicy, c.FailureRatio, DefaultBreaker.FailureRatio)
	case c.MinCalls < 0:
		return fmt.Errorf("%w: breaker.min_calls is %d, want >= 0", ErrBadPolicy, c.MinCalls)
	case c.Cooldown < 0:
		return fmt.Errorf("%w: breaker.cooldown is %s, want >= 0", ErrBadPolicy, c.Cooldown)
	}
	return nil
}
