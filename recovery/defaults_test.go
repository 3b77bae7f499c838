package recovery_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// The engine's defaults, field by field, written out here rather than taken from the
// package, so that a changed default fails this test (and doc.go has to change with it).
// The simulator passes zero settings through, so these are what every scenario runs with.
func TestDefaultsPinned(t *testing.T) {
	if got, want := recovery.DefaultBudget, (recovery.BudgetConfig{Ratio: 0.1, MinPerSecond: 1, MaxTokens: 10}); got != want {
		t.Errorf("DefaultBudget %+v, want %+v", got, want)
	}
	if got, want := recovery.DefaultBreaker, (recovery.BreakerConfig{Window: time.Minute, FailureRatio: 0.5, MinCalls: 20, Cooldown: 2 * time.Minute}); got != want {
		t.Errorf("DefaultBreaker %+v, want %+v", got, want)
	}
	if recovery.DefaultInspectEvery != time.Minute || recovery.DefaultMaxInspections != 60 {
		t.Errorf("inspection defaults %v and %d, want 1m and 60", recovery.DefaultInspectEvery, recovery.DefaultMaxInspections)
	}
}

type discard struct{}

func (discard) Append(int64, *recovery.JournalRecord) {}

// observe feeds ev at now and fails the test on an error.
func observe(t *testing.T, e *recovery.Engine, now int64, ev recovery.Event, env recovery.Env) recovery.Decision {
	t.Helper()
	d, err := e.Observe(now, ev, env)
	if err != nil {
		t.Fatalf("%v at %v: %v", ev.Kind, time.Duration(now), err)
	}
	return d
}

// With MaxInspections and InspectEvery zero, an operation the tool reports as running is
// looked up every DefaultInspectEvery, exactly, DefaultMaxInspections times; the next
// "running" escalates it. A policy's own values replace both.
func TestInspectionDefaults(t *testing.T) {
	for _, tc := range []struct {
		max   int
		every time.Duration
		wantN int
		wantD time.Duration
	}{{0, 0, 60, time.Minute}, {3, 5 * time.Second, 3, 5 * time.Second}} {
		p := recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: 2, Max: time.Minute},
			InspectBeforeRetry: true, HumansAvailable: true, MaxInspections: tc.max, InspectEvery: tc.every}
		env := recovery.Env{Rand: rand.New(rand.NewPCG(1, 2)), Guards: recovery.NewGuards(1, nil, nil)}
		e := recovery.New(1, &p, discard{})
		observe(t, e, 0, recovery.Event{Kind: recovery.EvStart}, env)
		observe(t, e, 0, recovery.Event{Kind: recovery.EvSend}, env)
		d := observe(t, e, int64(time.Second), recovery.Event{Kind: recovery.EvTimedOut}, env)
		lookups := 0
		for d.Action == recovery.ActInspect && lookups <= 1000 {
			now := d.At
			lookups++
			d = observe(t, e, now, recovery.Event{Kind: recovery.EvInspected, Lookup: recovery.LookupRunning}, env)
			if d.Action == recovery.ActInspect && d.At != now+int64(tc.wantD) {
				t.Fatalf("lookup %d at %v: next at %v, want %v later", lookups, time.Duration(now), time.Duration(d.At), tc.wantD)
			}
		}
		if lookups != tc.wantN || d.Action != recovery.ActEscalate || d.Reason != recovery.ReasonInspectionUnresolved {
			t.Errorf("max %d every %v: %d lookups then %v (%s), want %d then escalate (%s)", tc.max, tc.every,
				lookups, d.Action, d.Reason, tc.wantN, recovery.ReasonInspectionUnresolved)
		}
	}
}
