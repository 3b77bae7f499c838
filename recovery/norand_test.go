package recovery_test

import (
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// Without a random source (Env.Rand nil) a jittered delay is the middle of its range, so
// that a caller without randomness still gets a deterministic, policy-shaped delay:
// full jitter over [0, d] answers ⌊d/2⌋, equal jitter ⌈d/2⌉ + ⌊⌊d/2⌋/2⌋, decorrelated
// initial + ⌊(3·prev − initial)/2⌋.
func TestJitterWithoutRandomIsTheMiddle(t *testing.T) {
	const d = 10*time.Second + 1 // odd, so that each halving shows its rounding
	for _, tc := range []struct {
		jitter recovery.Jitter
		want   []time.Duration // the delays before attempts 2, 3 and 4
	}{
		// nominal d, 2d, 4d: halves 5000000000, d, 2d
		{recovery.JitterFull, []time.Duration{5000000000, d, 2 * d}},
		// d − ⌊d/2⌋ + ⌊d/4⌋, then 2d − d + ⌊d/2⌋, then 4d − 2d + d
		{recovery.JitterEqual, []time.Duration{7500000001, 15000000001, 3 * d}},
		// prev d: d + ⌊(3d − d)/2⌋ = 2d; prev 2d: d + ⌊5d/2⌋; prev 35000000003:
		// d + ⌊(105000000009 − d)/2⌋
		{recovery.JitterDecorrelated, []time.Duration{2 * d, 35000000003, 57500000005}},
	} {
		p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 4, Initial: d, Multiplier: 2, Jitter: tc.jitter}}
		e := recovery.New(1, p, discard{})
		now := int64(0)
		observe(t, e, now, recovery.Event{Kind: recovery.EvStart}, recovery.Env{})
		observe(t, e, now, recovery.Event{Kind: recovery.EvSend}, recovery.Env{})
		for i, want := range tc.want {
			dec := observe(t, e, now, recovery.Event{Kind: recovery.EvFailed}, recovery.Env{})
			if dec.Action != recovery.ActRetry || time.Duration(dec.At-now) != want {
				t.Errorf("%s jitter without random, retry %d: %s after %v, want retry after %v", tc.jitter, i+1, dec.Action, time.Duration(dec.At-now), want)
			}
			now = dec.At
			if dec := observe(t, e, now, recovery.Event{Kind: recovery.EvTimer}, recovery.Env{}); dec.Action != recovery.ActSend {
				t.Fatalf("%s jitter: timer at the retry's time: %s, want send", tc.jitter, dec.Action)
			}
		}
	}
}
