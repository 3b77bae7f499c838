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
	// GaveUp counts the exhausted operations after which the investigation gave up: one per
	// investigation that ended terminated after its attempts ran out (its earlier exhausted
	// operations, if any, went on). WentOn counts the others whose investigation ended.
	GaveUp, WentOn int
	// OnExhausted is recovery.retry.on_exhausted: "reduce_scope" (some went on without the
	// step), "escalate" (human reviews follow, and most did not go on), "terminate" (every
	// one gave up), or "" when nothing ran out (the default stands).
	OnExhausted string
	// GiveUp is recovery.retry.give_up with reduce_scope: the share of exhausted operations
	// after which the investigation gave up, GaveUp / (GaveUp + WentOn) (0 when none did).
	GiveUp float64
}

// fitExhaustion reads, from the episodes a tool's failure began, the attempts an
// operation gets and what follows when they run out. The attempts are the mode of the
// failed attempts over the operations that ran out after at least one retry (ties to
// the fewer): the largest attempt number is not used, since one operation the trace
// joined to the next of the same tool (an agent that moved on and called the tool again)
// reads as one operation of twice the attempts. What follows is the investigation's end:
// an investigation that ended terminated gave up after the last of its exhausted
// operations, and went on after the others. When some went on, on_exhausted is reduce_scope
// (drop the step, go on) with give_up the share that gave up, the agent's own choice,
// unless the run shows human reviews and the operations did not mostly go on
// (MostlyWentOn): then escalate (reviewers resend or terminate). When every one gave up,
// terminate, or escalate with reviews.
func fitExhaustion(eps []Episode, humans bool) ExhaustFit {
	var x ExhaustFit
	byK := map[int]int{}
	gaveUp := map[int64]bool{} // investigations already counted as giving up
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
			// one give-up per investigation (an episode of no known investigation is its own)
			if e.Investigation != 0 && gaveUp[e.Investigation] {
				x.WentOn++
			} else {
				gaveUp[e.Investigation] = true
				x.GaveUp++
			}
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
	case x.WentOn > 0 && (!humans || MostlyWentOn(x.WentOn, x.GaveUp)):
		x.OnExhausted = "reduce_scope"
		x.GiveUp = float64(x.GaveUp) / float64(x.GaveUp+x.WentOn)
	case humans:
		x.OnExhausted = "escalate"
	default:
		x.OnExhausted = "terminate"
	}
	return x
}

// wentOnLevel is the significance level of MostlyWentOn.
const wentOnLevel = 0.01

// MostlyWentOn reports whether the operations whose attempts ran out mostly went on without
// their step (wentOn) rather than gave up (gaveUp): whether a fleet that did each half the
// time would show wentOn or more of the wentOn + gaveUp with probability below 0.01 (the
// one-sided binomial test). With human reviews in the run, a bare majority is not enough
// to draw reduce_scope, which never asks reviewers about spent retries. 31 of 31 is
// 5·10⁻¹⁰; 22 of 34 is 0.06.
func MostlyWentOn(wentOn, gaveUp int) bool {
	return wentOn > gaveUp && upperTail(wentOn, wentOn+gaveUp) < wentOnLevel
}

// upperTail is P(X ≥ k) for X binomial(n, 1/2), summed in log space so that large n
// neither overflows nor loses the small terms.
func upperTail(k, n int) float64 {
	ln2 := math.Log(2)
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	p := 0.0
	for i := k; i <= n; i++ {
		p += math.Exp(lg(n) - lg(i) - lg(n-i) - float64(n)*ln2)
	}
	return p
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
	if x.GiveUp > 0 {
		s += fmt.Sprintf(" (give_up %s)", num(x.GiveUp))
	}
	if x.NotRetried > 0 {
		s += fmt.Sprintf("; %d failed once and were never retried", x.NotRetried)
	}
	return s
}

// notes are what the format cannot say about the exhaustion, for the end of the file.
func (x ExhaustFit) notes() []string {
	var out []string
	if x.OnExhausted == "escalate" && x.WentOn > 0 {
		out = append(out, fmt.Sprintf("recovery.retry.on_exhausted: %d of %d operations whose attempts ran out went on without their step, but not mostly (a binomial test against half and half at 0.01), and the run shows human reviews: they escalate here, and a review resends or terminates",
			x.WentOn, x.Exhausted))
	}
	if x.NotRetried > 0 {
		out = append(out, fmt.Sprintf("%d operations failed once and were never retried (a policy refusal, or a non-retryable error); the format retries every fast failure of a tool, so they are fitted as the tool's transient failures", x.NotRetried))
	}
	return out
}
