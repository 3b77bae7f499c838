package recovery_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// TestValidate checks that each bad setting is refused with an error naming its key.
func TestValidate(t *testing.T) {
	good := func() recovery.Policy {
		return recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second,
			Multiplier: 2, Max: time.Minute}}
	}
	p := good()
	if err := p.Validate(); err != nil {
		t.Fatalf("good policy refused: %v", err)
	}
	for key, mutate := range map[string]func(*recovery.Policy){
		"retry.max_attempts":   func(p *recovery.Policy) { p.Retry.MaxAttempts = 0 },
		"retry.initial":        func(p *recovery.Policy) { p.Retry.Initial = -1 },
		"retry.multiplier":     func(p *recovery.Policy) { p.Retry.Multiplier = 0.5 },
		"retry.max is":         func(p *recovery.Policy) { p.Retry.Max = -1 },
		"below retry.initial":  func(p *recovery.Policy) { p.Retry.Max = time.Millisecond },
		"retry.jitter":         func(p *recovery.Policy) { p.Retry.Jitter = 9 },
		"retry.on_exhausted":   func(p *recovery.Policy) { p.Retry.OnExhausted = 9 },
		"revisions":            func(p *recovery.Policy) { p.Revisions = -1 },
		"non_progress.repeats": func(p *recovery.Policy) { p.NonProgressRepeats = -1 },
		"on_exhaustion":        func(p *recovery.Policy) { p.OnExhaustion = 9 },
		"pause":                func(p *recovery.Policy) { p.PauseFor = -1 },
		"inspection.max":       func(p *recovery.Policy) { p.MaxInspections = -1 },
		"inspection.interval":  func(p *recovery.Policy) { p.InspectEvery = -1 },
	} {
		p := good()
		mutate(&p)
		err := p.Validate()
		if !errors.Is(err, recovery.ErrBadPolicy) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: got %v", key, err)
		}
	}
	for key, b := range map[string]recovery.BudgetConfig{
		"retry_budget.ratio":          {Ratio: -1, MinPerSecond: 1},
		"retry_budget.min_per_second": {Ratio: 0.1, MinPerSecond: -1},
		"both 0":                      {},
		"retry_budget.max_tokens":     {Ratio: 0.1, MaxTokens: -1},
	} {
		if err := b.Validate(); !errors.Is(err, recovery.ErrBadPolicy) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: got %v", key, err)
		}
	}
	for key, c := range map[string]recovery.BreakerConfig{
		"breaker.window":        {Window: -1},
		"breaker.failure_ratio": {FailureRatio: 1.5},
		"breaker.min_calls":     {MinCalls: -1},
		"breaker.cooldown":      {Cooldown: -1},
	} {
		if err := c.Validate(); !errors.Is(err, recovery.ErrBadPolicy) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: got %v", key, err)
		}
	}
	if err := recovery.DefaultBudget.Validate(); err != nil {
		t.Errorf("DefaultBudget: %v", err)
	}
	if err := recovery.DefaultBreaker.Validate(); err != nil {
		t.Errorf("DefaultBreaker: %v", err)
	}
}

// TestNames pins the trace spellings that the design's tables use.
func TestNames(t *testing.T) {
	for got, want := range map[string]string{
		recovery.AwaitingHuman.String():         "awaiting_human",
		recovery.UncertainCompletion.String():   "uncertain_completion",
		recovery.ActReduceScope.String():        "reduce_scope",
		recovery.EvBudgetExceeded.String():      "budget_exceeded",
		recovery.BySupervisor.String():          "supervisor",
		recovery.BreakerHalfOpen.String():       "half_open",
		recovery.BreakerOff.String():            "off",
		recovery.JitterDecorrelated.String():    "decorrelated",
		recovery.State(99).String():             "unknown",
		recovery.PointRetriesExhausted.String(): "retries_exhausted",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for _, s := range []string{"none", "full", "equal", "decorrelated"} {
		if j, ok := recovery.ParseJitter(s); !ok || j.String() != s {
			t.Errorf("ParseJitter(%q) = %v, %t", s, j, ok)
		}
	}
	if _, ok := recovery.ParseJitter("fulll"); ok {
		t.Error("ParseJitter accepted a misspelling")
	}
}

// TestDefaultInspection pins the documented polling defaults (doc.go): an operation the
// tool keeps reporting as running is looked up every minute, 60 times, before it is
// escalated as unknown. The values are written out, not taken from the constants, so that
// changing a default fails here and has to be changed in the documentation too.
func TestDefaultInspection(t *testing.T) {
	p := &recovery.Policy{
		Retry:              recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: 2, Max: time.Minute},
		InspectBeforeRetry: true,
		HumansAvailable:    true,
	}
	e := recovery.New(1, p, nil)
	env := recovery.Env{}
	now := int64(0)
	for _, ev := range []recovery.Event{{Kind: recovery.EvStart}, {Kind: recovery.EvSend}, {Kind: recovery.EvTimedOut}} {
		if _, err := e.Observe(now, ev, env); err != nil {
			t.Fatal(err)
		}
		now += int64(time.Second)
	}
	lookups := 0
	for {
		d, err := e.Observe(now, recovery.Event{Kind: recovery.EvInspected, Lookup: recovery.LookupRunning}, env)
		if err != nil {
			t.Fatal(err)
		}
		lookups++
		if d.Action != recovery.ActInspect {
			if d.Action != recovery.ActEscalate || d.Reason != recovery.ReasonInspectionUnresolved {
				t.Fatalf("after %d lookups: %s (%s), want escalate (inspection_unresolved)", lookups, d.Action, d.Reason)
			}
			break
		}
		if gap := time.Duration(d.At - now); gap != time.Minute {
			t.Fatalf("lookup %d: next one after %s, want 1m", lookups, gap)
		}
		if lookups > 1000 {
			t.Fatal("still polling after 1000 lookups")
		}
		now = d.At
	}
	if lookups != 60 {
		t.Errorf("escalated after %d lookups, want 60", lookups)
	}
	if e.Attempt() != 1 {
		t.Errorf("polling sent attempts: %d, want 1", e.Attempt())
	}
}
