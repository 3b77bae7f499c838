package metric

import (
	"math/rand/v2"
	"testing"
)

// outcomeShares are the cumulative shares of metric.Outcomes (and terminated_rate) of roots
// at levels 4 complete and correct, 3 complete, 2 reduced, 1 terminated, 0 unfinished.
func outcomeShares(levels []int) map[string]float64 {
	n := float64(len(levels))
	count := func(f func(int) bool) float64 {
		k := 0
		for _, l := range levels {
			if f(l) {
				k++
			}
		}
		return float64(k) / n
	}
	return map[string]float64{
		"correct_completion_rate":    count(func(l int) bool { return l == 4 }),
		"full_scope_completion_rate": count(func(l int) bool { return l >= 3 }),
		"completion_rate":            count(func(l int) bool { return l >= 2 }),
		"unfinished_rate":            count(func(l int) bool { return l == 0 }),
		"terminated_rate":            count(func(l int) bool { return l == 1 }),
	}
}

// TestJudgeNeverRanksAnOutcomeDominatedSideAhead generates A's root outcomes, makes B by
// moving some roots down the ladder (a terminated root into limbo among them), and gives
// every other metric a random significant side: whatever B gains elsewhere, Judge must
// not rank it ahead, nor count any of its gains.
func TestJudgeNeverRanksAnOutcomeDominatedSideAhead(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 46))
	others := []string{"validation_pass_rate", "retry_amplification", "median_recovery_time", "episode_recovery_rate",
		"human_intervention_rate", "tokens_per_completion", "makespan", "peak_backlog", "cost_per_completion"}
	for trial := range 2000 {
		n := 1 + r.IntN(50)
		a, b := make([]int, n), make([]int, n)
		for i := range a {
			a[i] = r.IntN(5)
			b[i] = a[i]
		}
		moved := 0
		for i := range b {
			if b[i] > 0 && r.IntN(3) == 0 {
				b[i] = r.IntN(b[i]) // strictly lower
				moved++
			}
		}
		if moved == 0 {
			continue
		}
		sa, sb := outcomeShares(a), outcomeShares(b)
		var effects []Effect
		for _, name := range append(append([]string(nil), Outcomes...), "terminated_rate") {
			e := Effect{Metric: name, A: sa[name], B: sb[name]}
			// Significant at random, but only ever in the direction of the values.
			if gain := float64(Better(name)) * (e.B - e.A); gain != 0 && r.IntN(2) == 0 {
				e.Better = "a"
				if gain > 0 {
					e.Better = "b"
				}
			}
			effects = append(effects, e)
		}
		for _, name := range others {
			e := Effect{Metric: name, A: r.Float64(), B: r.Float64()}
			if r.IntN(4) > 0 {
				e.Better = "b" // B looks better nearly everywhere else
			}
			effects = append(effects, e)
		}
		r.Shuffle(len(effects), func(i, j int) { effects[i], effects[j] = effects[j], effects[i] })
		v := Judge(effects)
		if v.Leader == "b" || v.Dominance == DominanceB {
			t.Fatalf("trial %d: B ranks ahead (%s, leader %q) with every root no better and %d worse: %+v", trial, v.Dominance, v.Leader, moved, effects)
		}
		if v.Held != "b" {
			t.Fatalf("trial %d: B is not held back: %+v", trial, v)
		}
		for i, e := range effects {
			if e.Better == "b" && v.TradedFor[i] < 0 {
				t.Fatalf("trial %d: B's gain on %s counts", trial, e.Metric)
			}
		}
	}
}

// TestJudgeRanksByWhatUsersGet checks the order of the ladder on hand-made cases.
func TestJudgeRanksByWhatUsersGet(t *testing.T) {
	cases := []struct {
		name    string
		effects []Effect
		leader  string
	}{
		{"more correct complete work beats more completions", []Effect{
			{Metric: "correct_completion_rate", Better: "a", A: 0.444, B: 0.314},
			{Metric: "completion_rate", Better: "b", A: 0.45, B: 0.49},
		}, "a"},
		{"terminating beats leaving unfinished", []Effect{
			{Metric: "terminated_rate", Better: "b", A: 0.15, B: 0},
			{Metric: "unfinished_rate", Better: "a", A: 0, B: 0.15},
		}, "a"},
		{"finishing what was unfinished is better even if it terminates", []Effect{
			{Metric: "terminated_rate", Better: "a", A: 0, B: 0.15},
			{Metric: "unfinished_rate", Better: "b", A: 0.15, B: 0},
		}, "b"},
		{"cheaper at equal outcomes ranks ahead", []Effect{
			{Metric: "completion_rate", A: 0.9, B: 0.9},
			{Metric: "tokens_per_completion", Better: "b", A: 100, B: 80},
		}, "b"},
		{"cheaper with one root worse does not", []Effect{
			{Metric: "completion_rate", A: 0.9, B: 0.89},
			{Metric: "tokens_per_completion", Better: "b", A: 100, B: 80},
		}, "a"},
	}
	for _, c := range cases {
		if v := Judge(c.effects); v.Leader != c.leader {
			t.Errorf("%s: leader %q (%s), want %q", c.name, v.Leader, v.Dominance, c.leader)
		}
	}
}
