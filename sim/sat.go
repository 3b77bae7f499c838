package sim

import "math"

// Saturating arithmetic: a scenario may ask for values (a slowdown of 1e300, an arrival
// rate of 1e-22 per hour, a token factor of 1e300) whose products do not fit in int64.
// Times and counts saturate at a ceiling instead of wrapping, so a huge delay lands after
// the horizon (and is never reached) and a huge token count stays huge.

// farFuture is later than any horizon (which validation keeps below ~292 years) and leaves
// room to add to it without overflowing.
const farFuture = math.MaxInt64 / 4

// satInt converts x to int64, saturating at ±farFuture; NaN is 0.
func satInt(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= farFuture:
		return farFuture
	case x <= -farFuture:
		return -farFuture
	}
	return int64(x)
}

// satAdd is a + b for a, b >= 0, saturating at farFuture.
func satAdd(a, b int64) int64 {
	return a + min(b, farFuture-a)
}

// satCount32 converts a drawn count to the simulator's 32-bit counters, saturating.
func satCount32(n int64) int32 {
	return int32(min(n, math.MaxInt32))
}
