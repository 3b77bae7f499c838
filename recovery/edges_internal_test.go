package recovery

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// floorDiv rounds toward minus infinity, so that the breaker's buckets are aligned on whole
// windows on both sides of 0: -1 is in the window before 0, not in the one starting at 0.
// Its divisor, a breaker's width, is at least 1.
func TestFloorDiv(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 1}, {-1, 10, -1}, {-10, 10, -1}, {-11, 10, -2},
		{0, 1, 0}, {-7, 1, -7}, {7, 1, 7}, {-9, 10, -1}, {-20, 10, -2}, {-21, 10, -3},
		{math.MinInt64, 10, math.MinInt64/10 - 1}, {math.MaxInt64, 10, math.MaxInt64 / 10},
	} {
		if got := floorDiv(tc.a, tc.b); got != tc.want {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestDecorrelatedZeroWidthDrawsNothing: with Initial 0 the decorrelated range is the one
// value 0, and backoff answers it without drawing from the caller's stream, which the
// simulator shares with the agent's other draws.
func TestDecorrelatedZeroWidthDrawsNothing(t *testing.T) {
	p := &RetryPolicy{MaxAttempts: 5, Jitter: JitterDecorrelated}
	r, fresh := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 3; n++ {
		if d := backoff(p, n, 0, r); d != 0 {
			t.Fatalf("attempt %d: %d, want 0", n, d)
		}
	}
	if r.Uint64() != fresh.Uint64() {
		t.Error("a range of one value drew from the stream")
	}
}

// nominalDelay is min(max, initial·multiplier^(n−1)) to the nanosecond also where a float64
// is coarser than a nanosecond (from 2^53 ns, 104 days): a Max of 2^53+1 ns rounds to 2^53
// as a float64, and an initial delay of exactly 2^53 ns must stay 2^53, not become the cap.
// A product of exactly 2^63, one past the largest int64, gets the cap.
func TestNominalDelayBeyondFloatPrecision(t *testing.T) {
	for _, tc := range []struct {
		initial, max time.Duration
		mult         float64
		n            int
		want         int64
	}{
		{1 << 53, 1<<53 + 1, 1, 1, 1 << 53},
		{1 << 53, 1<<53 + 1, 2, 2, 1<<53 + 1},
		{1<<53 + 2, 1<<53 + 1, 1, 1, 1<<53 + 1},
		{1 << 62, 0, 2, 2, noCap},
		{1 << 62, 1<<62 + 1, 2, 2, 1<<62 + 1},
		{1 << 62, 0, 1, 1, noCap},
	} {
		p := &RetryPolicy{Initial: tc.initial, Max: tc.max, Multiplier: tc.mult}
		if d := nominalDelay(p, tc.n); d != tc.want {
			t.Errorf("initial %d ns, max %d ns, multiplier %g, attempt %d: %d, want %d", tc.initial, tc.max, tc.mult, tc.n, d, tc.want)
		}
	}
}

// throttleDelay, without a random source (the middle of the jitter's range): the larger of
// the budget's wait and the nominal backoff, at least defaultThrottleDelay when the budget
// never refills by itself (wait -1); a wait of 0 adds nothing.
func TestThrottleDelay(t *testing.T) {
	const ms = int64(time.Millisecond)
	for _, tc := range []struct {
		initial       time.Duration
		attempt, base int32
		wait, want    int64
	}{
		{100 * time.Millisecond, 1, 0, 0, 75 * ms},   // nominal 100ms: 50ms + 25ms
		{100 * time.Millisecond, 1, 0, -1, 750 * ms}, // polled no faster than 1s
		{100 * time.Millisecond, 1, 0, 300 * ms, 225 * ms},
		{100 * time.Millisecond, 3, 0, 300 * ms, 300 * ms}, // nominal 400ms
		{100 * time.Millisecond, 3, 2, 300 * ms, 225 * ms}, // after an approved resend at 2: nominal 100ms
		{3 * time.Second, 1, 0, -1, 2250 * ms},             // nominal 3s is above 1s
		{0, 1, 0, -1, 750 * ms},
		{0, 1, 0, 0, 0},
		{0, 1, 0, 3, 2}, // 2 + 0
		{0, 1, 0, 5, 4}, // 3 + 1
	} {
		e := New(1, &Policy{Retry: RetryPolicy{MaxAttempts: 10, Initial: tc.initial, Multiplier: 2}}, nil)
		e.attempt, e.base = tc.attempt, tc.base
		if d := e.throttleDelay(tc.wait, nil); d != tc.want {
			t.Errorf("initial %v, attempt %d (base %d), wait %d: %d, want %d", tc.initial, tc.attempt, tc.base, tc.wait, d, tc.want)
		}
	}
}

// A replayed record into recovering on a failure counts that failure under its class, for
// every class from Transient to NonProgress (NonProgress too, though the engine itself
// never journals it on a failure); a record without a class, or with a class past the last,
// counts nothing (and does not index past the counts).
func TestApplyCountsFailuresByClass(t *testing.T) {
	for c := Class(0); c <= NonProgress+2; c++ {
		for _, ev := range []EventKind{EvFailed, EvTimedOut, EvInvalid, EvPolicyViolation, EvBudgetExceeded} {
			e := New(1, &Policy{}, nil)
			err := e.Fold([]JournalRecord{
				{From: Pending, To: Running, Event: EvStart, Action: ActNextStep},
				{From: Running, To: Recovering, Event: ev, Class: c},
			})
			if err != nil {
				t.Fatalf("class %d on %s: %v", c, ev, err)
			}
			var want [NonProgress + 1]int32
			if c > NoFailure && c <= NonProgress {
				want[c] = 1
			}
			if e.failures != want {
				t.Errorf("class %d on %s: failures %v, want %v", c, ev, e.failures, want)
			}
		}
	}
}
