package fit

import (
	"math"
	"strings"
	"testing"
)

// eps makes n episodes of a tool failure with k failed attempts, its outcome and the way
// its investigation ended.
func eps(n, k int, outcome, endedAs string) []Episode {
	out := make([]Episode, n)
	for i := range out {
		out[i] = Episode{Tool: "docs/search", Failed: k, Outcome: outcome, EndedAs: endedAs}
	}
	return out
}

// TestExhaustionAttemptsAreTheMode: three attempts ran out in most operations; two
// operations the trace joined (six failures) and one that ran out after two must not move
// the estimate, as the largest attempt number would (6).
func TestExhaustionAttemptsAreTheMode(t *testing.T) {
	var e []Episode
	e = append(e, eps(7, 3, "ended", "terminated")...)
	e = append(e, eps(5, 3, "ended", "completed")...)
	e = append(e, eps(2, 6, "ended", "completed")...)
	e = append(e, eps(1, 2, "ended", "completed")...)
	e = append(e, eps(9, 1, "recovered", "completed")...)
	e = append(e, eps(3, 1, "ended", "completed")...)   // refused: never retried
	e = append(e, eps(4, 1, "in_flight", "")...)        // open at the horizon: no outcome yet
	e = append(e, Episode{Failed: 1, Outcome: "ended"}) // the model's failure: not a tool's
	x := fitExhaustion(e, false)
	want := ExhaustFit{MaxAttempts: 3, Exhausted: 15, AtMax: 12, Fewer: 1, More: 2, NotRetried: 3,
		GaveUp: 7, WentOn: 8, OnExhausted: "terminate"}
	if x != want {
		t.Errorf("got %+v\nwant %+v", x, want)
	}
	c := x.Comment(3)
	for _, s := range []string{"after 3 in 12 of 15", "2 after more", "7 gave up", "8 went on", "3 failed once"} {
		if !strings.Contains(c, s) {
			t.Errorf("comment %q lacks %q", c, s)
		}
	}
	// 8 of 15 went on, not mostly (P(X ≥ 8 | 15, 1/2) = 0.5): they terminate; over 40 roots
	// the completion rate may be lower by up to 8/40 = 0.2.
	if n := x.notes(40); len(n) != 2 || !strings.Contains(n[0], "8 of 15") || !strings.Contains(n[0], "not mostly") ||
		!strings.Contains(n[0], "lower by up to 0.2") {
		t.Errorf("notes %q", n)
	}
}

// TestExhaustionTies: a tie between attempt counts keeps the fewer, whatever the order the
// episodes come in; recoveries after as many failures as the estimate are counted.
func TestExhaustionTies(t *testing.T) {
	for _, order := range [][2]int{{4, 2}, {2, 4}} {
		e := append(eps(3, order[0], "ended", "terminated"), eps(3, order[1], "ended", "terminated")...)
		e = append(e, eps(2, 2, "recovered", "completed")...)
		x := fitExhaustion(e, false)
		if x.MaxAttempts != 2 || x.AtMax != 3 || x.More != 3 || x.RecoveredBeyond != 2 {
			t.Errorf("order %v: %+v, want 2 attempts (3 of 6), 3 more, 2 recovered beyond", order, x)
		}
	}
}

// TestExhaustionFollows: the action follows what the exhausted operations' investigations
// did: mostly went on (P(X ≥ went on | n, 1/2) < 0.01) → reduce_scope, with or without
// reviews; otherwise reviews make it escalate and their absence terminate, a bare majority
// or too few cases to tell included. The note names those the action does not fit. Tails:
// 7 of 7 is 2⁻⁷ = 0.0078; 10 of 11 is 12/2048 = 0.0059; 5 of 5 is 2⁻⁵ = 0.031; 22 of 34 is
// 0.061; 31 of 31 is 4.7·10⁻¹⁰. Nothing exhausted leaves the default (and the
// largest attempt number) standing.
func TestExhaustionFollows(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{{7, 7, 1.0 / 128}, {10, 11, 12.0 / 2048}, {0, 4, 1}, {2, 4, 11.0 / 16}} {
		if got := upperTail(c.k, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P(X >= %d | %d, 1/2) = %g, want %g", c.k, c.n, got, c.want)
		}
	}
	cases := []struct {
		gaveUp, wentOn int
		humans         bool
		want, note     string
	}{
		{2, 0, true, "escalate", ""},
		{2, 0, false, "terminate", ""},
		{0, 7, false, "reduce_scope", ""},
		{0, 31, false, "reduce_scope", ""},
		{1, 10, true, "reduce_scope", "1 of 11 operations whose attempts ran out gave up"},
		{0, 5, false, "terminate", "5 of 5 operations whose attempts ran out went on"},
		{12, 22, false, "terminate", "22 of 34 operations whose attempts ran out went on"},
		{3, 3, false, "terminate", "3 of 6 operations whose attempts ran out went on"},
		{3, 3, true, "escalate", ""},
		{4, 3, false, "terminate", "3 of 7 operations whose attempts ran out went on"},
	}
	for _, c := range cases {
		x := fitExhaustion(append(eps(c.gaveUp, 3, "ended", "terminated"), eps(c.wentOn, 3, "ended", "completed")...), c.humans)
		if x.OnExhausted != c.want || x.GaveUp != c.gaveUp || x.WentOn != c.wentOn {
			t.Errorf("%d gave up, %d went on, reviews %t: %+v, want %s", c.gaveUp, c.wentOn, c.humans, x, c.want)
		}
		n := x.notes(10)
		if c.note == "" && len(n) != 0 || c.note != "" && (len(n) != 1 || !strings.Contains(n[0], c.note)) {
			t.Errorf("%d gave up, %d went on, reviews %t: notes %q, want %q", c.gaveUp, c.wentOn, c.humans, n, c.note)
		}
	}
	x := fitExhaustion(append(eps(5, 1, "recovered", "completed"), eps(2, 1, "ended", "completed")...), false)
	if x.MaxAttempts != 0 || x.OnExhausted != "" || x.NotRetried != 2 {
		t.Errorf("nothing exhausted: %+v", x)
	}
	if n := x.notes(10); len(n) != 1 {
		t.Errorf("notes %q: want only the never-retried one", n)
	}
}

// TestFitWritesExhaustion: Fit takes the mode over the largest attempt number (a joined
// operation reached attempt 6) and writes on_exhausted, and the cap follows the fitted
// attempts: initial·multiplier^(max_attempts − 2).
func TestFitWritesExhaustion(t *testing.T) {
	obs := Observed{Name: "x", Arrivals: []float64{0, 10, 20}}
	tool := ToolObs{Name: "T"}
	for i := range 8 {
		op := string(rune('a' + i))
		tool.Attempts = append(tool.Attempts,
			Attempt{Start: float64(100 * i), Seconds: 1, Wall: 1, Status: StatusError, Op: op, Attempt: 1},
			Attempt{Start: float64(100*i) + 1 + float64(i+1)*0.5, Seconds: 1, Wall: 1, Status: StatusOK, Op: op, Attempt: 2})
	}
	tool.Attempts = append(tool.Attempts, Attempt{Start: 900, Seconds: 1, Wall: 1, Status: StatusError, Op: "z", Attempt: 6})
	obs.Tools = []ToolObs{tool}
	obs.Episodes = append(eps(4, 3, "ended", "terminated"), eps(1, 6, "ended", "completed")...)
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Retry
	if r.MaxAttempts != 3 || r.Largest != 6 || r.Exhaust.OnExhausted != "terminate" {
		t.Fatalf("retry %+v", r)
	}
	if want := r.Initial * r.Multiplier; math.Abs(r.Max-want) > 1e-9 {
		t.Errorf("max %g, want %g", r.Max, want)
	}
	var b strings.Builder
	if err := s.WriteYAML(&b, Source{Run: "x"}); err != nil {
		t.Fatal(err)
	}
	y := b.String()
	if !strings.Contains(y, "max_attempts: 3,") || !strings.Contains(y, "on_exhausted: terminate}") ||
		!strings.Contains(y, "after 3 in 4 of 5") {
		t.Errorf("YAML lacks the fitted exhaustion:\n%s", y)
	}
}

// TestEpisodeRecoveryOverToolEpisodes: calibrate's episode_recovery_rate counts only the
// episodes a tool's failure began; without episodes it is the run's metric.
func TestEpisodeRecoveryOverToolEpisodes(t *testing.T) {
	o := Observed{Episodes: append(eps(3, 1, "recovered", "completed"), eps(1, 3, "ended", "terminated")...)}
	o.Episodes = append(o.Episodes, Episode{Failed: 1, Outcome: "ended", EndedAs: "terminated"})
	if got := toolEpisodeRecovery(o, "episode_recovery_rate"); got != 0.75 {
		t.Errorf("got %g, want 3/4", got)
	}
	o = Observed{Metrics: map[string]float64{"episode_recovery_rate": 0.4}}
	if got := toolEpisodeRecovery(o, "episode_recovery_rate"); got != 0.4 {
		t.Errorf("without episodes: %g, want the metric 0.4", got)
	}
	if got := toolEpisodeRecovery(Observed{Episodes: []Episode{{Outcome: "ended"}}}, "episode_recovery_rate"); !math.IsNaN(got) {
		t.Errorf("no tool episode: %g, want undefined", got)
	}
}
