package recovery_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// delays drives one operation through n fast failures and returns the backoff delay the
// engine chose before each retry.
func delays(t *testing.T, p *recovery.Policy, seed uint64, n int) []int64 {
	t.Helper()
	e := recovery.New(7, p, nil)
	env := recovery.Env{Rand: rand.New(rand.NewPCG(seed, 7))}
	now := int64(0)
	obs := func(ev recovery.Event) recovery.Decision {
		d, err := e.Observe(now, ev, env)
		if err != nil {
			t.Fatalf("%s at %d: %v", ev.Kind, now, err)
		}
		return d
	}
	obs(recovery.Event{Kind: recovery.EvStart})
	if d := obs(recovery.Event{Kind: recovery.EvSend}); d.Action != recovery.ActSend {
		t.Fatalf("first send: %s", d.Action)
	}
	var out []int64
	for i := 0; i < n; i++ {
		now += 1000
		d := obs(recovery.Event{Kind: recovery.EvFailed})
		if d.Action != recovery.ActRetry {
			t.Fatalf("failure %d: want retry, got %s (%s)", i+1, d.Action, d.Reason)
		}
		out = append(out, d.At-now)
		now = d.At
		if d := obs(recovery.Event{Kind: recovery.EvTimer}); d.Action != recovery.ActSend {
			t.Fatalf("retry %d: want send, got %s", i+1, d.Action)
		}
	}
	return out
}

// TestBackoffExact checks every jitter mode against delays computed here, independently of
// the engine, from a stream with the same seed: the formulas of doc.go, one Int64N draw per
// jittered delay, both ends of each range included.
func TestBackoffExact(t *testing.T) {
	const n = 9 // the cap (60s) is reached at the 7th retry: 1s·2^6 = 64s
	initial, maxd := int64(time.Second), int64(time.Minute)
	nominal := func(k int) int64 { // before attempt k+1, k ≥ 1; multiplier 2 is exact
		d := initial << (k - 1)
		return min(d, maxd)
	}
	for _, tc := range []struct {
		jitter recovery.Jitter
		want   func(r *rand.Rand) []int64
	}{
		{recovery.JitterNone, func(*rand.Rand) []int64 {
			var w []int64
			for k := 1; k <= n; k++ {
				w = append(w, nominal(k))
			}
			return w
		}},
		{recovery.JitterFull, func(r *rand.Rand) []int64 {
			var w []int64
			for k := 1; k <= n; k++ {
				w = append(w, r.Int64N(nominal(k)+1))
			}
			return w
		}},
		{recovery.JitterEqual, func(r *rand.Rand) []int64 {
			var w []int64
			for k := 1; k <= n; k++ {
				d := nominal(k)
				w = append(w, (d+1)/2+r.Int64N(d/2+1))
			}
			return w
		}},
		{recovery.JitterDecorrelated, func(r *rand.Rand) []int64 {
			var w []int64
			prev := initial
			for k := 1; k <= n; k++ {
				d := min(maxd, initial+r.Int64N(3*prev-initial+1))
				w = append(w, d)
				prev = d
			}
			return w
		}},
	} {
		t.Run(tc.jitter.String(), func(t *testing.T) {
			p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: n + 1,
				Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: tc.jitter}}
			for seed := uint64(1); seed <= 20; seed++ {
				got := delays(t, p, seed, n)
				want := tc.want(rand.New(rand.NewPCG(seed, 7)))
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("seed %d retry %d: delay %s, want %s (all: %v)", seed, i+1,
							time.Duration(got[i]), time.Duration(want[i]), got)
					}
				}
			}
		})
	}
}

// TestBackoffNoneFixed pins the deterministic schedule to literal values: 1s, 2s, 4s, then
// the 5s cap, for initial 1s, multiplier 2, max 5s; and 1.5 growth rounds down to whole ns.
func TestBackoffNoneFixed(t *testing.T) {
	p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 6, Initial: time.Second,
		Multiplier: 2, Max: 5 * time.Second}}
	got := delays(t, p, 1, 5)
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if time.Duration(got[i]) != want[i] {
			t.Fatalf("retry %d: %s, want %s", i+1, time.Duration(got[i]), want[i])
		}
	}
	p.Retry.Multiplier, p.Retry.Max = 1.5, 0 // 0: no cap
	got = delays(t, p, 1, 4)
	want = []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond, 3375 * time.Millisecond}
	for i := range want {
		if time.Duration(got[i]) != want[i] {
			t.Fatalf("×1.5 retry %d: %s, want %s", i+1, time.Duration(got[i]), want[i])
		}
	}
}

// TestBackoffBounds checks the documented ranges over many seeds, and that the jitter
// actually spreads the delays (a degenerate draw would put every delay at one point).
func TestBackoffBounds(t *testing.T) {
	for _, j := range []recovery.Jitter{recovery.JitterFull, recovery.JitterEqual, recovery.JitterDecorrelated} {
		p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 4, Initial: time.Second,
			Multiplier: 2, Max: 3 * time.Second, Jitter: j}}
		distinct := map[int64]bool{}
		for seed := uint64(0); seed < 200; seed++ {
			prev := int64(time.Second)
			for k, d := range delays(t, p, seed, 3) {
				nom := min(int64(time.Second)<<k, int64(3*time.Second))
				lo, hi := int64(0), nom
				switch j {
				case recovery.JitterEqual:
					lo = (nom + 1) / 2
				case recovery.JitterDecorrelated:
					lo, hi = int64(time.Second), min(3*prev, int64(3*time.Second))
					prev = d
				}
				if d < lo || d > hi {
					t.Fatalf("%s seed %d retry %d: %s outside [%s, %s]", j, seed, k+1,
						time.Duration(d), time.Duration(lo), time.Duration(hi))
				}
				if k == 0 {
					distinct[d] = true
				}
			}
		}
		// 200 draws from a range of ≥ 5e8 ns: a repeat is a birthday event of probability
		// about 200²/(2·5e8) = 4e-5, so fewer than 190 distinct values means no jitter.
		if len(distinct) < 190 {
			t.Errorf("%s: only %d distinct first delays in 200 seeds", j, len(distinct))
		}
	}
}
