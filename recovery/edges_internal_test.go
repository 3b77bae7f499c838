package recovery

import "testing"

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
