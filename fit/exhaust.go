package fit

import (
	"fmt"
	"math"
)

// ExhaustFit is what the agents did when an operation's attempts ran out, read from the
// recovery episodes a tool's failure began. An episode that ended unrecovered after k ≥ 2
// failed attempts is an operation whose attempts ran out after k; one that ended after a
// single failure was never retried.
type ExhaustFit struct {
	// MaxAttempts is the attempts the exhausted operations most often used (0: no
	// operation ran out after a retry, so the largest attempt number seen stands).
	MaxAttempts int
	// Exhausted counts the operations that ran out after retries (k ≥ 2); AtMax those of
	// them that used MaxAttempts, Fewer those that used fewer, More those that used more (a
	// later operation of the same tool the trace read as a retry of this one).
	Exhausted, AtMax, Fewer, More int
	// RecoveredBeyond counts the operations that recovered after MaxAttempts or more
	// failures (they needed more attempts than MaxAttempts).
	RecoveredBeyond int
	// NotRetried counts the operations that failed once, were never tried again, and whose
	// step was never recovered (a policy refusal, or giving up at once).
	NotRetried int
	// GaveUp counts the exhausted operations whose investigation was then terminated (it
	// gave up); WentOn those whose investigation went on and completed without the step.
	GaveUp, WentOn int
	// OnExhausted is recovery.retry.on_exhausted: "terminate", "escalate" (human reviews
	// follow), or "" when nothing ran out (the default stands).
	OnExhausted string
}

// fitExhaustion reads, from the episodes a tool's failure began, the attempts an
// operation gets and what follows when they run out. The attempts are the mode of the
// failed attempts over the operations that ran out after at least one retry (ties to
// the fewer): the largest attempt number is not used, since one operation the trace
// joined to the next of the same tool (an agent that moved on and called the tool again)
// reads as one operation of twice the attempts. What follows is the investigation's end:
// terminated (it gave up) or completed (it went on without the step). The scenario
// format's on_exhausted has terminate and escalate (to human reviewers, who resend or
// terminate); it has no "go on without the step", so a fleet that went on is fitted as
// terminating, with a note. Escalate is chosen when the run shows human reviews.
func fitExhaustion(eps []Episode, humans bool) ExhaustFit {
	var x ExhaustFit
	byK := map[int]int{}
	for _, e := range eps {
		if e.Tool == "" || e.Outcome != "ended" {
			continue
		}
		if e.Failed < 2 {
			x.NotRetried++
			continue
		}
		byK[e.Failed]++
		x.Exhausted++
		switch e.EndedAs {
		case "terminated":
			x.GaveUp++
		case "completed":
			x.WentOn++
		}
	}
	for k, n := range byK {
		// Map order must not reach the result: a tie keeps the fewer attempts.
		if n > x.AtMax || n == x.AtMax && k < x.MaxAttempts {
			x.MaxAttempts, x.AtMax = k, n
		}
	}
	for k, n := range byK {
		switch {
		case k < x.MaxAttempts:
			x.Fewer += n
		case k > x.MaxAttempts:
			x.More += n
		}
	}
	if x.MaxAttempts > 0 {
		for _, e := range eps {
			if e.Tool != "" && e.Outcome == "recovered" && e.Failed >= x.MaxAttempts {
				x.RecoveredBeyond++
			}
		}
	}
	switch {
	case x.Exhausted == 0:
	case humans:
		x.OnExhausted = "escalate"
	default:
		x.OnExhausted = "terminate"
	}
	return x
}

// Comment says what the fit chose for the attempts and their exhaustion, from how many
// cases.
func (x ExhaustFit) Comment(maxAttempts int) string {
	if x.Exhausted == 0 {
		s := "max_attempts the largest attempt number seen; no operation ran out of attempts after a retry"
		if x.NotRetried > 0 {
			s += fmt.Sprintf("; %d failed once and were never retried", x.NotRetried)
		}
		return s
	}
	s := fmt.Sprintf("attempts ran out after %d in %d of %d operations that failed every retry", maxAttempts, x.AtMax, x.Exhausted)
	if x.More > 0 {
		s += fmt.Sprintf(" (%d after more: the trace joined two operations)", x.More)
	}
	if x.Fewer > 0 {
		s += fmt.Sprintf(" (%d after fewer)", x.Fewer)
	}
	s += fmt.Sprintf("; then %d gave up (terminated), %d went on without the step", x.GaveUp, x.WentOn)
	if x.NotRetried > 0 {
		s += fmt.Sprintf("; %d failed once and were never retried", x.NotRetried)
	}
	return s
}

// notes are what the format cannot say about the exhaustion, for the end of the file.
func (x ExhaustFit) notes(roots int) []string {
	var out []string
	if x.WentOn > 0 && x.OnExhausted == "terminate" {
		out = append(out, fmt.Sprintf("recovery.retry.on_exhausted: %d of %d operations whose attempts ran out went on without their step (the investigation completed); the format has no such action (terminate or escalate), so they terminate here: the fit's completion_rate may be lower by up to %s",
			x.WentOn, x.Exhausted, num(math.Round(float64(x.WentOn)/float64(max(roots, 1))*1000)/1000)))
	}
	if x.NotRetried > 0 {
		out = append(out, fmt.Sprintf("%d operations failed once and were never retried (a policy refusal, or a non-retryable error); the format retries every fast failure of a tool, so they are fitted as the tool's transient failures", x.NotRetried))
	}
	return out
}
