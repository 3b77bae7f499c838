package recovery

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// A probe that hung is replaced after a cooldown; when the replacement fails, the breaker
// opens and, a cooldown later, is half-open again. The hung probe's outcome, arriving only
// then, belongs to a generation long past: it must not close the breaker, and the next
// probe goes with a generation of its own.
func TestBreakerIgnoresTheOutcomeOfAReplacedProbe(t *testing.T) {
	const cool = 10
	g := NewGuards(1, nil, &BreakerConfig{Window: time.Second, FailureRatio: 1, MinCalls: 1, Cooldown: cool})
	ok, _, gen := g.allow(0, 0)
	if !ok {
		t.Fatal("a closed breaker refused the first call")
	}
	g.record(0, 0, gen, false) // one failure of one call trips it
	if s := g.Breaker(0, 1); s != BreakerOpen {
		t.Fatalf("after the failure: %s, want open", s)
	}
	okA, _, genA := g.allow(0, cool) // probe A: it never answers in time
	if !okA {
		t.Fatal("no probe once the cooldown had passed")
	}
	if ok, at, _ := g.allow(0, cool+cool-1); ok || at != cool+cool {
		t.Fatalf("a second probe while A may still answer: ok %v, come back at %d, want at %d", ok, at, cool+cool)
	}
	okB, _, genB := g.allow(0, cool+cool) // probe B replaces A exactly a cooldown later
	if !okB || genB != genA {
		t.Fatalf("the replacing probe: ok %v, generation %d, want %d (the same half-open period)", okB, genB, genA)
	}
	g.record(0, 21, genB, false) // B fails: open again
	if s := g.Breaker(0, 21); s != BreakerOpen {
		t.Fatalf("after the replacing probe failed: %s, want open", s)
	}
	okC, _, genC := g.allow(0, 21+cool) // half-open again: probe C
	if !okC {
		t.Fatal("no probe a cooldown after the second opening")
	}
	if genC == genA {
		t.Fatalf("the new half-open period has A's generation %d", genA)
	}
	g.record(0, 21+cool, genA, true) // A's late success
	if s := g.Breaker(0, 21+cool); s != BreakerHalfOpen {
		t.Fatalf("after a stale probe's success: %s, want still half-open (waiting for probe C)", s)
	}
	g.record(0, 21+cool+1, genC, true) // C's success closes it
	if s := g.Breaker(0, 21+cool+1); s != BreakerClosed {
		t.Fatalf("after probe C succeeded: %s, want closed", s)
	}
}

// A budget without a floor never refills by itself: its wait is -1 (only first attempts can
// earn tokens), not a huge or negative number of nanoseconds. With a floor of one token a
// second, an empty bucket waits exactly the rest of the second.
func TestBudgetWait(t *testing.T) {
	g := NewGuards(1, &BudgetConfig{Ratio: 0.5, MinPerSecond: 0, MaxTokens: 1}, nil)
	if ok, w := g.retryWait(0, 0); !ok || w != 0 {
		t.Fatalf("a full bucket: ok %v, wait %d, want a retry at once", ok, w)
	}
	g.spendRetry(0, 0)
	for _, now := range []int64{0, 1, int64(time.Hour)} {
		if ok, w := g.retryWait(0, now); ok || w != -1 {
			t.Errorf("an empty bucket without a floor at %d ns: ok %v, wait %d, want -1", now, ok, w)
		}
	}
	f := NewGuards(1, &BudgetConfig{MinPerSecond: 1, MaxTokens: 1}, nil)
	f.spendRetry(0, 0)
	for _, c := range []struct{ now, want int64 }{{0, 1e9}, {4e8, 6e8}, {1e9 - 1, 1}, {1e9, 0}} {
		if _, w := f.retryWait(0, c.now); w != c.want {
			t.Errorf("floor 1/s, spent at 0, at %d ns: wait %d, want %d", c.now, w, c.want)
		}
	}
}

// An event kind outside the defined ones (0, or any value from the first past the last
// name) is refused as unexpected, and leaves the engine as it was.
func TestUnknownEventKindsAreRefused(t *testing.T) {
	p := Policy{Retry: RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: 2}}
	env := Env{Rand: rand.New(rand.NewPCG(1, 1))}
	kinds := []EventKind{0}
	for k := len(eventNames); k < 256; k++ {
		kinds = append(kinds, EventKind(k))
	}
	for _, k := range kinds {
		e := New(1, &p, nil)
		if _, err := e.Observe(0, Event{Kind: EvStart}, env); err != nil {
			t.Fatal(err)
		}
		before := e.State()
		_, err := e.Observe(1, Event{Kind: k}, env)
		if !errors.Is(err, ErrUnexpectedEvent) {
			t.Errorf("event kind %d: error %v, want ErrUnexpectedEvent", k, err)
		}
		if e.State() != before {
			t.Errorf("event kind %d moved the engine from %s to %s", k, before, e.State())
		}
	}
}

// nominalDelay with an initial delay of 0 is 0 at every attempt, also where the
// multiplier's power overflows to +Inf (0·Inf is NaN, which no delay may become); with a
// positive initial delay such an attempt gets the cap.
func TestNominalDelayAtHugeAttempts(t *testing.T) {
	for _, n := range []int{1, 2, 64, 1100, 1 << 20} {
		if d := nominalDelay(&RetryPolicy{Initial: 0, Multiplier: 2}, n); d != 0 {
			t.Errorf("initial 0, attempt %d: %d, want 0", n, d)
		}
		want := int64(time.Minute) // 2^(n-1) s is past the cap from n = 7 on
		if n <= 2 {
			want = int64(n) * int64(time.Second)
		}
		if d := nominalDelay(&RetryPolicy{Initial: time.Second, Multiplier: 2, Max: time.Minute}, n); d != want {
			t.Errorf("initial 1s, max 1m, attempt %d: %d, want %d", n, d, want)
		}
		if d := nominalDelay(&RetryPolicy{Initial: time.Second, Multiplier: 2}, n); n >= 64 && d != noCap {
			t.Errorf("initial 1s, no cap, attempt %d: %d, want the largest delay %d", n, d, noCap)
		}
	}
}
