//go:build duckdb_arrow

package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// episodeTrace builds traces of single-step investigations, one recovery episode each: a
// failed attempt sent at start (the first sign), then a valid result at start+length
// (recovered), the investigation terminated then (never recovered), or nothing (still open
// at the horizon: censored). A last investigation without trouble ends at end, which makes
// end the run's end and so the instant censored episodes are cut at.
type episodeTrace struct {
	c    record.Collector
	span uint64
	id   int64
}

func (e *episodeTrace) add(start, length int64, outcome string) {
	e.id++
	key := record.OpKey{Investigation: e.id}
	sp := func(op record.Operation, attempt int32, from, to int64, st record.Status) {
		e.span++
		e.c.Spans = append(e.c.Spans, record.Span{TraceID: e.id, SpanID: e.span, InvestigationID: e.id, AgentID: e.id,
			Operation: op, Tool: "api", HasKey: true, OpKey: key, Attempt: attempt, Start: from, End: to, Status: st})
	}
	sp(record.OpExecuteTool, 1, start, start, record.StatusError)
	inv := record.Investigation{InvestigationID: e.id, RootID: e.id, ArrivedAt: start, Tokens: 1}
	switch outcome {
	case "recovered":
		sp(record.OpExecuteTool, 2, start+length, start+length, record.StatusOK)
		sp(record.OpValidate, 2, start+length, start+length, record.StatusOK)
		inv.Ended, inv.EndedAt, inv.FinalState = true, start+length, "completed"
	case "ended":
		inv.Ended, inv.EndedAt, inv.FinalState = true, start+length, "terminated"
	}
	e.c.Investigations = append(e.c.Investigations, inv)
}

func (e *episodeTrace) finish(end int64) *record.Collector {
	e.id++
	e.c.Investigations = append(e.c.Investigations, record.Investigation{InvestigationID: e.id, RootID: e.id,
		ArrivedAt: 0, Ended: true, EndedAt: end, FinalState: "completed", Tokens: 1})
	return &e.c
}

func loadEpisodes(t *testing.T, c *record.Collector) (*DB, Metrics) {
	t.Helper()
	db := openTestDB(t)
	if err := LoadCollector(db, "curve", c, traces.Run{Scenario: "curve", Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	m, err := db.Metrics(t.Context(), "curve")
	if err != nil {
		t.Fatal(err)
	}
	return db, m
}

// Five episodes worked by hand: recovered at 10 s, censored at 11 s and 12 s (they start at
// 14 s and 13 s, and the run ends at 25 s), recovered at 20 s, never recovered at 25 s. At 10 s one of 5 at risk recovers: share 1/5, open 4/5.
// The censored two leave the risk set without an event. At 20 s one of the 2 left
// recovers: share 1/5 + 4/5 · 1/2 = 3/5, so half had recovered by 20 s. Counting the
// censored ones as failures would give 2/5 (no median), dropping them 2/3; the never-
// recovered one is never dropped: the curve stops at 3/5, so there is no p95.
func TestRecoveryCurveByHand(t *testing.T) {
	var e episodeTrace
	e.add(0, 10*second, "recovered")
	e.add(0, 20*second, "recovered")
	e.add(0, 25*second, "ended")
	e.add(14*second, 0, "")
	e.add(13*second, 0, "")
	db, m := loadEpisodes(t, e.finish(25*second))
	if got := m.Get("median_recovery_time"); got != 20 {
		t.Errorf("median_recovery_time %v, want 20", got)
	}
	if got := m.Get("p95_recovery_time"); !math.IsNaN(got) {
		t.Errorf("p95_recovery_time %v, want NULL (never: the curve stops at 3/5)", got)
	}
	if got := m.Get("episode_recovery_rate"); got != 0.4 {
		t.Errorf("episode_recovery_rate %v, want 2/5", got)
	}
	var share float64
	if err := db.SQL().QueryRow(`SELECT recovered_share FROM recovery_curve WHERE seconds = 20 AND run_id = 'curve'`).Scan(&share); err != nil {
		t.Fatal(err)
	}
	if math.Abs(share-0.6) > 1e-12 {
		t.Errorf("recovered_share at 20 s = %v, want 3/5", share)
	}
}

// TestRecoveryQuantilesClosedForm draws n episodes with exponential repair (rate μ) and an
// independent give-up share g: an episode gives up (never recovers) with probability g, at
// an exponential time of mean 5 min; otherwise it recovers at X ~ Exp(μ). The share of all
// episodes recovered by t is F(t) = (1 − g)(1 − e^(−μt)), so the time by which a share p
// had recovered exists only when 1 − g > p and is
//
//	t_p = ln((1 − g) / (1 − g − p)) / μ      (the median: ln(2(1 − g)/(1 − 2g)) / μ).
//
// Episodes start uniformly over 2 h and the run ends 30 min after the last start, so each
// is censored at C ~ U[30 min, 2 h 30 min]: censoring is independent of the outcome, as the
// estimator assumes, and reaches some episodes before t_p.
//
// Bounds: the sample p-quantile of F has standard deviation sqrt(p(1 − p)/n) / F'(t_p), and
// F'(t_p) = μ(1 − g − p). Censoring before t_p removes at most P(C < t_p) = (t_p − 1800)/
// 7200 < 10% of the risk set here, which widens it by at most 1/sqrt(0.9). With n = 20000:
// g = 0.2, p = 0.5: t = 588.5 s, sd <= 7.5 s; g = 0.02, p = 0.95: t = 2092 s, sd <= 32.5 s;
// the test allows 6 sd (a miss has probability < 1e-8 for a normal estimate). Where 1 − g
// is below p by more than 10 sd of the recovered share (sd = sqrt(0.25/n) = 0.0035), the
// metric must be NULL ("never").
func TestRecoveryQuantilesClosedForm(t *testing.T) {
	const n = 20000
	mu := 1.0 / 600
	for _, tc := range []struct {
		g      float64
		median bool // 1 − g > 0.5 by a wide margin
		p95    bool
		sdMed  float64
		sdP95  float64
	}{
		{g: 0.2, median: true, sdMed: 7.5},
		{g: 0.02, median: true, p95: true, sdMed: 5.5, sdP95: 32.5},
		{g: 0.6},
	} {
		r := rand.New(rand.NewPCG(19, math.Float64bits(tc.g)))
		var e episodeTrace
		var recovered, censored int
		const window, tail = 2 * 3600 * second, 1800 * second
		end := int64(window + tail)
		for range n {
			start := r.Int64N(window)
			var length int64
			outcome := "recovered"
			if r.Float64() < tc.g {
				outcome = "ended"
				length = int64(r.ExpFloat64()*300e6) * 1000
			} else {
				length = int64(r.ExpFloat64()/mu*1e6) * 1000 // whole µs, as a TIMESTAMP keeps them
			}
			if start+length > end {
				outcome, length = "", 0
				censored++
			}
			if outcome == "recovered" {
				recovered++
			}
			e.add(start, length, outcome)
		}
		_, m := loadEpisodes(t, e.finish(end))
		check := func(name string, exists bool, p, sd float64) {
			got := m.Get(name)
			if !exists {
				if !math.IsNaN(got) {
					t.Errorf("g=%v: %s = %v, want NULL: only %.2f of episodes ever recover", tc.g, name, got, 1-tc.g)
				}
				return
			}
			want := math.Log((1-tc.g)/(1-tc.g-p)) / mu
			if math.Abs(got-want) > 6*sd {
				t.Errorf("g=%v: %s = %.1f s, closed form %.1f s (allowed ±%.0f s)", tc.g, name, got, want, 6*sd)
			}
			t.Logf("g=%v: %s = %.1f s, closed form %.1f s", tc.g, name, got, want)
		}
		check("median_recovery_time", tc.median, 0.5, tc.sdMed)
		check("p95_recovery_time", tc.p95, 0.95, tc.sdP95)
		if got, want := m.Get("episode_recovery_rate"), float64(recovered)/n; got != want {
			t.Errorf("g=%v: episode_recovery_rate %v, want %d/%d", tc.g, got, recovered, n)
		}
		if censored == 0 {
			t.Errorf("g=%v: no episode was censored; the test means to exercise censoring", tc.g)
		}
	}
}
