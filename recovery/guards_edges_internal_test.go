package recovery

import (
	"errors"
	"math"
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

// The breaker's window ending with bucket idx holds the buckets of the last breakerBuckets
// widths, idx included: a bucket exactly breakerBuckets widths old is out, as is one from
// after idx and one reset (epoch MinInt64).
func TestBreakerWindowBounds(t *testing.T) {
	const idx = 50
	var b breaker
	b.reset()
	for i, c := range []struct {
		epoch        int64
		calls, fails int32
	}{
		{idx - breakerBuckets, 100, 100}, // one full window old
		{idx - breakerBuckets + 1, 1, 1}, // the oldest bucket still in
		{idx, 2, 0},                      // the current bucket
		{idx + 1, 1000, 1000},            // after idx
		{math.MinInt64, 10000, 10000},    // reset
	} {
		b.epoch[i], b.calls[i], b.fails[i] = c.epoch, c.calls, c.fails
	}
	if calls, fails := b.window(idx); calls != 3 || fails != 1 {
		t.Errorf("window ending with bucket %d: %d calls, %d failures, want 3 and 1", idx, calls, fails)
	}
}

// A budget without a floor hands throttled retries slots a gap apart that starts at
// defaultThrottleDelay and doubles, up to MaxThrottleGap, while no first attempt earns a
// token, and starts again after one does: a crowd parked on a bucket nothing refills tries
// it ever more rarely instead of every second. A budget nothing refills (no ratio either)
// reserves nothing: its retries park for good.
func TestThrottleSlotWithoutAFloor(t *testing.T) {
	g := NewGuards(1, &BudgetConfig{Ratio: 0.1, MaxTokens: 1}, nil)
	at, gap := int64(5), defaultThrottleDelay
	for i := range 20 {
		got := g.throttleSlot(0, 5)
		if got != at {
			t.Fatalf("throttled retry %d: slot %d, want %d", i, got, at)
		}
		at += gap
		gap = min(2*gap, MaxThrottleGap)
	}
	if g.budgets[0].gap != MaxThrottleGap {
		t.Errorf("after 20 slots with no first attempt: gap %v, want the cap %v", time.Duration(g.budgets[0].gap), time.Duration(MaxThrottleGap))
	}
	g.earn(0, 6)
	next := g.budgets[0].next
	if got := g.throttleSlot(0, 5); got != next || g.budgets[0].next != next+defaultThrottleDelay {
		t.Errorf("after a first attempt: slot %d, next %d; want %d and a gap of %v again", got, g.budgets[0].next, next, time.Duration(defaultThrottleDelay))
	}
	never := NewGuards(1, &BudgetConfig{MaxTokens: 1}, nil)
	for _, at := range []int64{5, 3, noCap} {
		if got := never.throttleSlot(0, at); got != at || never.budgets[0].next != 0 {
			t.Errorf("a budget nothing refills: slot %d for %d, next %d; want the time asked and nothing reserved", got, at, never.budgets[0].next)
		}
	}
}

// A floor of +Inf tokens a second refills the bucket as soon as time moves, but not at the
// instant of the last change: then, and at any earlier time, the bucket holds what that
// change left (+Inf·0 is NaN, which no bucket may hold).
func TestBudgetInfiniteFloor(t *testing.T) {
	g := NewGuards(1, &BudgetConfig{MinPerSecond: math.Inf(1), MaxTokens: 3}, nil)
	g.spendRetry(0, 5)
	for _, c := range []struct {
		now  int64
		want float64
	}{{4, 2}, {5, 2}, {6, 3}} {
		if got := g.Tokens(0, c.now); got != c.want {
			t.Errorf("spent at 5, at %d: %v tokens, want %v", c.now, got, c.want)
		}
	}
	g.spendRetry(0, 5) // a second spend at the same instant
	if got := g.Tokens(0, 5); got != 1 {
		t.Errorf("spent twice at 5: %v tokens, want 1", got)
	}
}

// A floor so slow that one token takes more than noCap nanoseconds (here 10^-12 tokens a
// second: one in 31,700 years) waits noCap, as the longest backoff does, and spaces throttled
// retries noCap apart, rather than by a number of nanoseconds no int64 holds.
func TestBudgetWaitOfAVerySlowFloor(t *testing.T) {
	g := NewGuards(1, &BudgetConfig{MinPerSecond: 1e-12, MaxTokens: 1}, nil)
	g.spendRetry(0, 0)
	if ok, w := g.retryWait(0, 0); ok || w != noCap {
		t.Errorf("an empty bucket with a floor of 1e-12/s: ok %v, wait %d, want %d", ok, w, noCap)
	}
	for i, want := range []int64{noCap, 2 * noCap} { // come-back slots noCap apart
		if at := g.throttleSlot(0, noCap); at != want {
			t.Errorf("throttled retry %d with a floor of 1e-12/s: back at %d, want %d", i, at, want)
		}
	}
	g = NewGuards(1, &BudgetConfig{MinPerSecond: 1e9 * 0x1p-59, MaxTokens: 1}, nil) // 2^59 ns a token
	g.spendRetry(0, 0)
	if _, w := g.retryWait(0, 0); w != 1<<59 {
		t.Errorf("an empty bucket with a floor of one token in 2^59 ns: wait %d, want %d", w, int64(1)<<59)
	}
}

// refill brings the bucket to now; an instant before its last refill changes nothing (it
// neither takes tokens back nor moves the bucket's clock back).
func TestBudgetRefillAtAnEarlierInstant(t *testing.T) {
	b := budget{perNs: 0.5, max: 10, tokens: 3, last: 100}
	b.refill(90)
	if b.tokens != 3 || b.last != 100 {
		t.Errorf("refill(90) after 100: tokens %v, last %d; want 3, 100", b.tokens, b.last)
	}
	b.refill(104)
	if b.tokens != 5 || b.last != 104 {
		t.Errorf("refill(104): tokens %v, last %d; want 5, 104", b.tokens, b.last)
	}
}
