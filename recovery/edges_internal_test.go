package recovery

import (
	"math/rand/v2"
	"testing"
)

// floorDiv rounds toward minus infinity, so that the breaker's buckets are aligned on whole
// windows on both sides of 0: -1 is in the window before 0, not in the one starting at 0.
func TestFloorDiv(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 1}, {-1, 10, -1}, {-10, 10, -1}, {-11, 10, -2},
		{1, -10, -1}, {-1, -10, 0}, {-10, -10, 1}, {10, -10, -1},
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
