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
		GaveUp: 7, WentOn: 8, OnExhausted: "reduce_scope", GiveUp: 7.0 / 15}
	if x != want {
		t.Errorf("got %+v\nwant %+v", x, want)
	}
	c := x.Comment(3)
	for _, s := range []string{"after 3 in 12 of 15", "2 after more", "7 gave up", "8 went on", "3 failed once"} {
		if !strings.Contains(c, s) {
			t.Errorf("comment %q lacks %q", c, s)
		}
	}
	// 8 of 15 went on, 7 gave up: the agents give up on 7/15 of their spent operations, which
	// the fitted give_up says; only the never-retried operations need a note.
	if n := x.notes(); len(n) != 1 || !strings.Contains(n[0], "3 operations failed once") {
		t.Errorf("notes %q", n)
	}
	if !strings.Contains(c, "give_up 0.4667") {
		t.Errorf("comment %q lacks the give_up", c)
	}
}

// TestExhaustionGaveUpOncePerInvestigation: an investigation that went on after one
// exhausted operation and gave up after a later one gave up once; its earlier operation
// went on. Episodes without an investigation count one each.
func TestExhaustionGaveUpOncePerInvestigation(t *testing.T) {
	e := eps(6, 3, "ended", "terminated")
	for i := range e {
		e[i].Investigation = int64(1 + i/3) // two investigations of three exhausted operations
	}
	e = append(e, eps(2, 3, "ended", "completed")...)
	x := fitExhaustion(e, false)
	if x.GaveUp != 2 || x.WentOn != 6 || x.OnExhausted != "reduce_scope" || x.GiveUp != 0.25 {
		t.Errorf("%+v: want 2 gave up, 6 went on, reduce_scope with give_up 0.25", x)
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
// did: when some went on, reduce_scope with give_up the share that gave up, unless the run
// shows reviews and they did not mostly go on (P(X ≥ went on | n, 1/2) ≥ 0.01): then
// escalate, with a note; when none went on, escalate with reviews, else terminate. Tails:
// 7 of 7 is 2⁻⁷ = 0.0078; 10 of 11 is 12/2048 = 0.0059. Nothing exhausted leaves the
// default (and the largest attempt number) standing.
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
		want           string
		giveUp         float64
		note           string
	}{
		{2, 0, true, "escalate", 0, ""},
		{2, 0, false, "terminate", 0, ""},
		{0, 7, false, "reduce_scope", 0, ""},
		{0, 31, false, "reduce_scope", 0, ""},
		{1, 10, true, "reduce_scope", 1.0 / 11, ""},
		{0, 5, false, "reduce_scope", 0, ""},
		{12, 22, false, "reduce_scope", 12.0 / 34, ""},
		{3, 3, false, "reduce_scope", 0.5, ""},
		{3, 3, true, "escalate", 0, "3 of 6 operations whose attempts ran out went on"},
		{4, 3, false, "reduce_scope", 4.0 / 7, ""},
	}
	for _, c := range cases {
		x := fitExhaustion(append(eps(c.gaveUp, 3, "ended", "terminated"), eps(c.wentOn, 3, "ended", "completed")...), c.humans)
		if x.OnExhausted != c.want || x.GaveUp != c.gaveUp || x.WentOn != c.wentOn || math.Abs(x.GiveUp-c.giveUp) > 1e-12 {
			t.Errorf("%d gave up, %d went on, reviews %t: %+v, want %s, give_up %g", c.gaveUp, c.wentOn, c.humans, x, c.want, c.giveUp)
		}
		n := x.notes()
		if c.note == "" && len(n) != 0 || c.note != "" && (len(n) != 1 || !strings.Contains(n[0], c.note)) {
			t.Errorf("%d gave up, %d went on, reviews %t: notes %q, want %q", c.gaveUp, c.wentOn, c.humans, n, c.note)
		}
	}
	x := fitExhaustion(append(eps(5, 1, "recovered", "completed"), eps(2, 1, "ended", "completed")...), false)
	if x.MaxAttempts != 0 || x.OnExhausted != "" || x.NotRetried != 2 {
		t.Errorf("nothing exhausted: %+v", x)
	}
	if n := x.notes(); len(n) != 1 {
		t.Errorf("notes %q: want only the never-retried one", n)
	}
}

// TestFitWritesExhaustion: Fit takes the mode over the largest attempt number (a joined
// operation reached attempt 6) and writes on_exhausted with give_up (4 of 5 gave up), and the cap follows the fitted
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
	if r.MaxAttempts != 3 || r.Largest != 6 || r.Exhaust.OnExhausted != "reduce_scope" || r.Exhaust.GiveUp != 0.8 {
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
	if !strings.Contains(y, "max_attempts: 3,") || !strings.Contains(y, "on_exhausted: reduce_scope, give_up: 0.8}") ||
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
