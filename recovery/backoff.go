package recovery

import (
	"math"
	"math/rand/v2"
)

// nominalDelay is min(max, initial·multiplier^(n−1)): the delay before attempt n+1 without
// jitter. RetryPolicy.Max 0 means no cap; n < 1 gives 0.
func nominalDelay(p *RetryPolicy, n int) int64 {
	if n < 1 || p.Initial <= 0 {
		return 0
	}
	limit := int64(p.Max)
	if limit <= 0 {
		limit = noCap
	}
	mult := max(p.Multiplier, 1)
	f := float64(p.Initial) * math.Pow(mult, float64(n-1))
	if f >= 0x1p63 { // past every int64 (+Inf included): the cap
		return limit
	}
	// Compared as integers: a Max above 2^53 ns need not be exact in a float64.
	return min(limit, int64(f))
}

// backoff is the delay before attempt n+1 of an operation (n ≥ 1 attempts sent), with the
// policy's jitter. prev is the previous delay of the operation (decorrelated jitter; 0 before
// the first retry). Each jittered delay takes exactly one draw from r: Int64N over the
// integer nanoseconds of its range, both ends included.
//
//	none:         d = min(max, initial·multiplier^(n−1))
//	full:         uniform[0, d]
//	equal:        ⌈d/2⌉ + uniform[0, ⌊d/2⌋]
//	decorrelated: min(max, uniform[initial, 3·prev]), prev = initial before the first retry
func backoff(p *RetryPolicy, n int, prev int64, r *rand.Rand) int64 {
	switch p.Jitter {
	case JitterFull:
		return int64N(r, nominalDelay(p, n)+1)
	case JitterEqual:
		d := nominalDelay(p, n)
		return d - d/2 + int64N(r, d/2+1)
	case JitterDecorrelated:
		limit := int64(p.Max)
		if limit <= 0 {
			limit = noCap
		}
		lo := max(int64(p.Initial), 0)
		if prev <= 0 {
			prev = lo
		}
		hi := 3 * prev // prev ≤ max ≤ 2^60: no overflow
		d := lo
		if hi > lo {
			d = lo + int64N(r, hi-lo+1)
		}
		return min(d, limit)
	}
	return nominalDelay(p, n)
}

// int64N draws uniformly from [0, n); without a random source it answers the middle.
func int64N(r *rand.Rand, n int64) int64 {
	if r == nil {
		return (n - 1) / 2
	}
	return r.Int64N(n)
}
