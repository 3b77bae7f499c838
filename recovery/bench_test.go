package recovery_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// ring is a journal that keeps the last records in a fixed array, as a durable journal's
// write buffer would: it allocates nothing per record.
type ring struct {
	recs [64]recovery.JournalRecord
	n    int
}

func (r *ring) Append(_ int64, rec *recovery.JournalRecord) {
	r.recs[r.n%len(r.recs)] = *rec
	r.n++
}

// BenchmarkDecision measures one Observe in steady state: the cycle send (admitted by the
// retry budget and the breaker), succeeded, valid (next step), one decision per iteration,
// each journaled.
func BenchmarkDecision(b *testing.B) {
	p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Second,
		Multiplier: 2, Max: time.Minute, Jitter: recovery.JitterFull}, InspectBeforeRetry: true}
	g := recovery.NewGuards(4, &recovery.DefaultBudget, &recovery.DefaultBreaker)
	j := &ring{}
	e := recovery.New(1, p, j)
	env := recovery.Env{Rand: rand.New(rand.NewPCG(1, 1)), Guards: g}
	cycle := [3]recovery.Event{
		{Kind: recovery.EvSend, Tool: 2},
		{Kind: recovery.EvSucceeded, Tool: 2},
		{Kind: recovery.EvValid},
	}
	now := int64(0)
	if _, err := e.Observe(now, recovery.Event{Kind: recovery.EvStart}, env); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now += int64(time.Millisecond)
		if _, err := e.Observe(now, cycle[i%3], env); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	if j.n < b.N {
		b.Fatalf("%d records for %d decisions", j.n, b.N)
	}
}

// BenchmarkDecisionRetry measures the failure path: send, failed (a backoff drawn with
// jitter), timer (admitted again), succeeded, valid.
func BenchmarkDecisionRetry(b *testing.B) {
	p := &recovery.Policy{Retry: recovery.RetryPolicy{MaxAttempts: 3, Initial: time.Millisecond,
		Multiplier: 2, Max: time.Second, Jitter: recovery.JitterDecorrelated}}
	g := recovery.NewGuards(1, &recovery.BudgetConfig{Ratio: 1, MinPerSecond: 1000, MaxTokens: 10}, &recovery.DefaultBreaker)
	e := recovery.New(1, p, &ring{})
	env := recovery.Env{Rand: rand.New(rand.NewPCG(1, 1)), Guards: g}
	cycle := [5]recovery.Event{
		{Kind: recovery.EvSend}, {Kind: recovery.EvFailed}, {Kind: recovery.EvTimer},
		{Kind: recovery.EvSucceeded}, {Kind: recovery.EvValid},
	}
	now := int64(0)
	if _, err := e.Observe(now, recovery.Event{Kind: recovery.EvStart}, env); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// 10s between events: every backoff has elapsed and the breaker's window never
		// holds enough failures to open it.
		now += int64(10 * time.Second)
		if _, err := e.Observe(now, cycle[i%5], env); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
