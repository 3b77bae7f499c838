package recovery

import (
	"testing"
	"time"
)

const sec = int64(time.Second)

func newBreaker(minCalls int, ratio float64, cooldown time.Duration) *Guards {
	return NewGuards(1, nil, &BreakerConfig{Window: time.Minute, FailureRatio: ratio, MinCalls: minCalls, Cooldown: cooldown})
}

// call admits one attempt at now and records its outcome at now.
func call(t *testing.T, g *Guards, now int64, ok bool) {
	t.Helper()
	admitted, _, gen := g.allow(0, now)
	if !admitted {
		t.Fatalf("attempt at %ds not admitted (breaker %s)", now/sec, g.Breaker(0, now))
	}
	g.record(0, now, gen, ok)
}

func TestBreakerOpensAtRatioWithMinCalls(t *testing.T) {
	// MinCalls 10, ratio 0.5: nine failures in a row are too few calls; the tenth call
	// trips it only if it makes failures ≥ half.
	g := newBreaker(10, 0.5, 30*time.Second)
	for i := 0; i < 9; i++ {
		call(t, g, int64(i)*sec, false)
		if s := g.Breaker(0, int64(i)*sec); s != BreakerClosed {
			t.Fatalf("after %d failures (< min calls): %s", i+1, s)
		}
	}
	call(t, g, 9*sec, false)
	if s := g.Breaker(0, 9*sec); s != BreakerOpen {
		t.Fatalf("10 failures of 10 calls: %s, want open", s)
	}

	// Exactly at the ratio opens; just below does not. 4 successes then failures: after
	// 4 failures of 8 calls (0.5) it is open; 3 of 7 (0.43) it is not.
	g = newBreaker(6, 0.5, 30*time.Second)
	for i := 0; i < 4; i++ {
		call(t, g, 0, true)
	}
	for i := 0; i < 3; i++ {
		call(t, g, sec, false)
	}
	if s := g.Breaker(0, sec); s != BreakerClosed {
		t.Fatalf("3 failures of 7 calls (< 0.5): %s", s)
	}
	call(t, g, sec, false)
	if s := g.Breaker(0, sec); s != BreakerOpen {
		t.Fatalf("4 failures of 8 calls (= 0.5): %s, want open", s)
	}
	// Successes never trip it, however many calls.
	g = newBreaker(1, 0.5, 30*time.Second)
	for i := 0; i < 100; i++ {
		call(t, g, int64(i)*sec/10, true)
	}
	if s := g.Breaker(0, 10*sec); s != BreakerClosed {
		t.Fatalf("100 successes: %s", s)
	}
}

func TestBreakerHalfOpenSingleProbe(t *testing.T) {
	g := newBreaker(1, 0.5, 30*time.Second)
	call(t, g, 0, false) // open at 0
	// Open: nothing is admitted; every refusal names the cooldown's end.
	for _, now := range []int64{0, 10 * sec, 30*sec - 1} {
		if ok, at, _ := g.allow(0, now); ok || at != 30*sec {
			t.Fatalf("open at %dns: admitted %t until %d, want refused until 30s", now, ok, at)
		}
	}
	if s := g.Breaker(0, 30*sec); s != BreakerHalfOpen {
		t.Fatalf("after the cooldown: %s, want half_open", s)
	}
	// Half-open: exactly one probe; the others wait a cooldown from the probe.
	ok, _, gen := g.allow(0, 30*sec)
	if !ok {
		t.Fatal("the first call after the cooldown must be the probe")
	}
	for i := 0; i < 5; i++ {
		if ok2, at, _ := g.allow(0, 31*sec); ok2 || at != 60*sec {
			t.Fatalf("second call while the probe is out: admitted %t until %d", ok2, at)
		}
	}
	// The probe fails: open again, for a full cooldown from now.
	g.record(0, 35*sec, gen, false)
	if s := g.Breaker(0, 35*sec); s != BreakerOpen {
		t.Fatalf("failed probe: %s, want open", s)
	}
	if ok, at, _ := g.allow(0, 36*sec); ok || at != 65*sec {
		t.Fatalf("re-opened: admitted %t until %ds, want refused until 65s", ok, at/sec)
	}
	// The next probe succeeds: closed, and calls flow.
	ok, _, gen = g.allow(0, 65*sec)
	if !ok {
		t.Fatal("no probe after the second cooldown")
	}
	g.record(0, 66*sec, gen, true)
	if s := g.Breaker(0, 66*sec); s != BreakerClosed {
		t.Fatalf("successful probe: %s, want closed", s)
	}
	for i := 0; i < 3; i++ {
		if ok, _, _ := g.allow(0, 67*sec); !ok {
			t.Fatal("closed breaker refused a call")
		}
	}
	// Closing starts a fresh window: the failures from before the opening no longer count
	// (with them, 4 failures of 5 calls ≥ 0.6 would re-open it).
	g2 := newBreaker(3, 0.6, time.Second)
	call(t, g2, 0, false)
	call(t, g2, 0, false)
	call(t, g2, 0, false) // open
	ok, _, gen = g2.allow(0, 2*sec)
	g2.record(0, 2*sec, gen, true) // closed
	call(t, g2, 2*sec, true)
	call(t, g2, 2*sec, false) // 1 failure of 2 calls in the new window
	if s := g2.Breaker(0, 2*sec); s != BreakerClosed {
		t.Fatalf("old failures counted after closing: %s", s)
	}
}

func TestBreakerLostProbeReplaced(t *testing.T) {
	g := newBreaker(1, 0.5, 10*time.Second)
	call(t, g, 0, false)
	if ok, _, _ := g.allow(0, 10*sec); !ok {
		t.Fatal("no probe")
	}
	if ok, _, _ := g.allow(0, 19*sec); ok {
		t.Fatal("second probe while the first is within its cooldown")
	}
	if ok, _, _ := g.allow(0, 20*sec); !ok {
		t.Fatal("a probe whose outcome never came must be replaced after a cooldown")
	}
}

func TestBreakerWindowSlides(t *testing.T) {
	// Window 1m in 6s buckets. Failures at 0s..5s fall out once the window has moved a
	// full minute past their bucket.
	g := newBreaker(4, 0.5, 10*time.Second)
	for i := 0; i < 3; i++ {
		call(t, g, int64(i)*sec, false)
	}
	call(t, g, 59*sec, false) // bucket 9: the 0s bucket still counts, 4 of 4 fail → open
	if s := g.Breaker(0, 59*sec); s != BreakerOpen {
		t.Fatalf("4 failures within the window: %s", s)
	}
	g = newBreaker(4, 0.5, 10*time.Second)
	for i := 0; i < 3; i++ {
		call(t, g, int64(i)*sec, false)
	}
	call(t, g, 60*sec, false) // bucket 10: bucket 0 left the window, 1 call
	if s := g.Breaker(0, 60*sec); s != BreakerClosed {
		t.Fatalf("failures from a minute ago still counted: %s", s)
	}
}

func TestBudget(t *testing.T) {
	// ratio 0.2, floor 0.5/s, max 3: starts full.
	g := NewGuards(2, &BudgetConfig{Ratio: 0.2, MinPerSecond: 0.5, MaxTokens: 3}, nil)
	if tok := g.Tokens(0, 0); tok != 3 {
		t.Fatalf("initial tokens %g, want 3", tok)
	}
	// Three retries in one instant spend the bucket; the fourth is throttled and told to
	// wait for the floor: (1 − 0)/0.5 per s = 2s.
	for i := 0; i < 3; i++ {
		if ok, _ := g.retryWait(0, 0); !ok {
			t.Fatalf("retry %d refused with %g tokens", i+1, g.Tokens(0, 0))
		}
		g.spendRetry(0, 0)
	}
	ok, wait := g.retryWait(0, 0)
	if ok || wait != 2*sec {
		t.Fatalf("empty bucket: ok %t wait %s, want throttled for 2s", ok, time.Duration(wait))
	}
	// First attempts earn ratio: five of them earn one retry.
	for i := 0; i < 5; i++ {
		g.earn(0, 0)
	}
	if ok, _ := g.retryWait(0, 0); !ok {
		t.Fatalf("5 first attempts × 0.2 = 1 token, got %g", g.Tokens(0, 0))
	}
	g.spendRetry(0, 0)
	// The floor refills 0.5/s: after 2s one retry goes again; Tokens does not change state.
	if tok := g.Tokens(0, 2*sec); tok < 0.999999 || tok > 1.000001 {
		t.Fatalf("after 2s at 0.5/s: %g tokens, want 1", tok)
	}
	if ok, _ := g.retryWait(0, 2*sec); !ok {
		t.Fatal("floor did not allow a retry after 2s")
	}
	// The cap holds: a long quiet spell cannot bank more than MaxTokens.
	if tok := g.Tokens(0, 3600*sec); tok != 3 {
		t.Fatalf("after an hour: %g tokens, want the cap 3", tok)
	}
	// Tools have separate buckets.
	if tok := g.Tokens(1, 0); tok != 3 {
		t.Fatalf("tool 1 touched by tool 0's retries: %g", tok)
	}
	// Without a floor, a throttled retry can only wait for first attempts.
	g = NewGuards(1, &BudgetConfig{Ratio: 0.1, MaxTokens: 1}, nil)
	g.spendRetry(0, 0)
	if ok, wait := g.retryWait(0, 100*sec); ok || wait != -1 {
		t.Fatalf("no floor: ok %t wait %d, want throttled with no refill time", ok, wait)
	}
	// Off: Tokens says -1 and retries are never throttled.
	g = NewGuards(1, nil, nil)
	if g.Tokens(0, 0) != -1 || g.Breaker(0, 0) != BreakerOff {
		t.Fatal("guards off must read -1 tokens and breaker off")
	}
	if ok, _ := g.retryWait(0, 0); !ok {
		t.Fatal("budget off throttled a retry")
	}
}

// A crowd of retries throttled at once is told to come back in successive slots one floor
// refill apart, in the order they were throttled, rather than all at once (when all but one
// would find the bucket empty and park again).
func TestThrottledRetriesGetSuccessiveSlots(t *testing.T) {
	// Floor 0.5/s: one token every 2s.
	g := NewGuards(2, &BudgetConfig{Ratio: 0.1, MinPerSecond: 0.5, MaxTokens: 1}, nil)
	g.spendRetry(0, 0)
	prev := int64(-1)
	for i := 0; i < 5; i++ {
		at := g.throttleSlot(0, sec) // each asks to come back at 1s
		want := sec + int64(i)*2*sec
		if at != want {
			t.Fatalf("throttled retry %d told to come back at %s, want %s", i, time.Duration(at), time.Duration(want))
		}
		if at <= prev {
			t.Fatalf("slot %d not after slot %d", i, i-1)
		}
		prev = at
	}
	// A retry asking for a later time than the next free slot keeps its own time.
	if at := g.throttleSlot(0, 100*sec); at != 100*sec {
		t.Fatalf("late retry moved to %s, want 100s", time.Duration(at))
	}
	// Tools keep separate queues.
	if at := g.throttleSlot(1, sec); at != sec {
		t.Fatalf("tool 1 queued behind tool 0: %s", time.Duration(at))
	}
	// Without a floor the slots are a growing gap apart while no first attempt earns a
	// token: 1s, then 1s later, then 2s after that.
	g = NewGuards(1, &BudgetConfig{Ratio: 0.1, MaxTokens: 1}, nil)
	if a, b, c := g.throttleSlot(0, sec), g.throttleSlot(0, sec), g.throttleSlot(0, sec); a != sec || b != 2*sec || c != 4*sec {
		t.Fatalf("no floor: slots %s, %s, %s, want 1s, 2s, 4s", time.Duration(a), time.Duration(b), time.Duration(c))
	}
}

// Passed is a success the breaker did not admit: it counts in a closed breaker's window,
// closes a half-open one, and changes nothing while the breaker is open; a first call earns
// the retry budget its ratio.
func TestGuardsPassed(t *testing.T) {
	g := NewGuards(1, &BudgetConfig{Ratio: 0.5, MinPerSecond: 0}, &BreakerConfig{Window: 10, FailureRatio: 0.5, MinCalls: 2, Cooldown: 100})
	for i := range 2 {
		_, _, gen := g.allow(0, int64(i))
		g.record(0, int64(i), gen, false)
	}
	if s := g.Breaker(0, 2); s != BreakerOpen {
		t.Fatalf("after two failures: breaker %s, want open", s)
	}
	g.Passed(0, 50, true)
	if s := g.Breaker(0, 50); s != BreakerOpen {
		t.Errorf("a call during the cooldown: breaker %s, want still open", s)
	}
	if s := g.Breaker(0, 150); s != BreakerHalfOpen {
		t.Fatalf("after the cooldown: breaker %s, want half_open", s)
	}
	g.Passed(0, 150, true)
	if s := g.Breaker(0, 151); s != BreakerClosed {
		t.Errorf("a success while half open: breaker %s, want closed", s)
	}
	before := g.Tokens(0, 151)
	g.Passed(0, 151, false)
	if after := g.Tokens(0, 151); after <= before && before < 10 {
		t.Errorf("a first call: budget %v -> %v, want it to earn", before, after)
	}
	g.Passed(5, 151, false) // no such tool: ignored
}

// TestBreakerOwnRatio: a breaker opens at the ratio it is given, not the default: with
// 0.3 and 10 calls, 3 failures open it and 2 do not.
func TestBreakerOwnRatio(t *testing.T) {
	for _, c := range []struct {
		fails int
		want  BreakerState
	}{{2, BreakerClosed}, {3, BreakerOpen}} {
		g := newBreaker(10, 0.3, 30*time.Second)
		for i := 0; i < 10-c.fails; i++ {
			call(t, g, 0, true)
		}
		for i := 0; i < c.fails; i++ {
			call(t, g, sec, false)
		}
		if s := g.Breaker(0, sec); s != c.want {
			t.Errorf("ratio 0.3, %d failures of 10 calls: %s, want %s", c.fails, s, c.want)
		}
	}
}

// TestGuardsOutOfRange: asked about a tool they do not cover (one past the last, or
// negative), the guards answer "none" instead of failing: nothing parked, no budget, no
// breaker; a call passed to such a tool changes nothing.
func TestGuardsOutOfRange(t *testing.T) {
	g := NewGuards(2, &BudgetConfig{Ratio: 0.1, MinPerSecond: 1}, &BreakerConfig{})
	for _, tool := range []int{-1, 2} {
		if n := g.Parked(tool); n != 0 {
			t.Errorf("Parked(%d) = %d", tool, n)
		}
		if v := g.Tokens(tool, 0); v != -1 {
			t.Errorf("Tokens(%d) = %v", tool, v)
		}
		if s := g.Breaker(tool, 0); s != BreakerOff {
			t.Errorf("Breaker(%d) = %s", tool, s)
		}
		g.Passed(tool, 0, false) // a call to no tool changes nothing, and does not fail
	}
	if g.Tokens(1, 0) != 10 || g.Breaker(1, 0) != BreakerClosed || g.Parked(1) != 0 {
		t.Errorf("the last tool: tokens %v, breaker %s", g.Tokens(1, 0), g.Breaker(1, 0))
	}
}

// A zero FailureRatio or Window takes DefaultBreaker's (0.5 and 1m), not the zero given:
// with MinCalls 4, one failure in four calls leaves the breaker closed and three in six
// open it; failures 59s apart are in one window.
func TestBreakerZeroRatioAndWindowTakeTheDefaults(t *testing.T) {
	g := NewGuards(1, nil, &BreakerConfig{MinCalls: 4, Cooldown: 10 * time.Second})
	for i, ok := range []bool{true, true, true, false, false} {
		call(t, g, int64(i)*sec, ok)
		if s := g.Breaker(0, int64(i)*sec); s != BreakerClosed {
			t.Fatalf("after call %d (%d failures of %d): %s, want closed", i+1, max(i-2, 0), i+1, s)
		}
	}
	call(t, g, 5*sec, false)
	if s := g.Breaker(0, 5*sec); s != BreakerOpen {
		t.Fatalf("3 failures of 6 calls: %s, want open", s)
	}
	g = NewGuards(1, nil, &BreakerConfig{MinCalls: 4, Cooldown: 10 * time.Second})
	for range 3 {
		call(t, g, 0, false)
	}
	call(t, g, 59*sec, false)
	if s := g.Breaker(0, 59*sec); s != BreakerOpen {
		t.Fatalf("4 failures in 59s: %s, want open (a window of 1m)", s)
	}
}

// Clone copies the guards' state, budget and breaker alike, and the copy goes its own way:
// what is spent or recorded on one is not on the other; guards without a budget or breaker
// clone without them.
func TestGuardsClone(t *testing.T) {
	g := NewGuards(2, &BudgetConfig{Ratio: 0.5, MinPerSecond: 0, MaxTokens: 3}, &BreakerConfig{Window: time.Minute, FailureRatio: 0.5, MinCalls: 1, Cooldown: time.Minute})
	g.spendRetry(1, 0)
	call(t, g, 0, false) // tool 0's breaker opens
	c := g.Clone()
	if c.Tokens(1, 0) != 2 || c.Tokens(0, 0) != 3 || c.Breaker(0, 0) != BreakerOpen || c.Breaker(1, 0) != BreakerClosed || c.Tools() != 2 {
		t.Fatalf("clone: tokens %v and %v, breakers %s and %s, %d tools; want 3 and 2, open and closed, 2 tools",
			c.Tokens(0, 0), c.Tokens(1, 0), c.Breaker(0, 0), c.Breaker(1, 0), c.Tools())
	}
	c.spendRetry(1, 0)
	c.record(1, 0, 0, false)
	if g.Tokens(1, 0) != 2 || g.Breaker(1, 0) != BreakerClosed {
		t.Errorf("the original after the clone spent and failed: tokens %v, breaker %s; want 2 and closed", g.Tokens(1, 0), g.Breaker(1, 0))
	}
	if c.Tokens(1, 0) != 1 || c.Breaker(1, 0) != BreakerOpen {
		t.Errorf("the clone after it spent and failed: tokens %v, breaker %s; want 1 and open", c.Tokens(1, 0), c.Breaker(1, 0))
	}
	off := NewGuards(1, nil, nil).Clone()
	if off.Tokens(0, 0) != -1 || off.Breaker(0, 0) != BreakerOff || off.Tools() != 1 {
		t.Errorf("clone of guards without budget or breaker: tokens %v, breaker %s, %d tools", off.Tokens(0, 0), off.Breaker(0, 0), off.Tools())
	}
}
