package tune

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
)

// outcomeModel is a stand-in for the simulator that reports what each root came to. Every
// root fails with probability p (the draw depends on seed and root only, so candidates share
// it); what a failed root becomes is the candidate's policy:
//   - terminate: terminated;
//   - limbo: escalated to a reviewer who never answers, so unfinished at the horizon;
//   - retry: tried once more, succeeding with probability q (a draw of its own), else
//     terminated.
func outcomeModel(p, q float64, roots int) Evaluator {
	return func(_ context.Context, jobs []Job) ([]map[string]float64, error) {
		out := make([]map[string]float64, len(jobs))
		for i, j := range jobs {
			var done, term, open int
			for root := range roots {
				r := rand.New(rand.NewPCG(j.Seed, uint64(root)))
				failed, again := r.Float64() < p, r.Float64() < q
				switch {
				case !failed:
					done++
				case j.Values[0] == "limbo":
					open++
				case j.Values[0] == "retry" && again:
					done++
				default:
					term++
				}
			}
			n := float64(roots)
			out[i] = map[string]float64{
				"correct_completion_rate": float64(done) / n, "full_scope_completion_rate": float64(done) / n,
				"completion_rate": float64(done) / n, "unfinished_rate": float64(open) / n, "terminated_rate": float64(term) / n,
			}
		}
		return out, nil
	}
}

// A search that minimises terminated_rate does not recommend the policy that leaves the
// failed roots unanswered: its terminated_rate is 0, but it is better than the others on
// no root outcome and worse on unfinished_rate, so metric.Judge holds it back, as compare
// does. Of the others, retry terminates fewer roots (p(1−q) against p) and completes more.
func TestHeldCandidateIsNotRecommended(t *testing.T) {
	cfg := Config{Tune: scenarios.Tune{
		Vary:     []scenarios.TuneParam{{Path: "recovery.on_exhausted", Kind: scenarios.TuneChoice, Choices: []string{"terminate", "limbo", "retry"}}},
		Minimize: "terminated_rate", Budget: 60, Seeds: 3, MaxSeeds: 12, Confidence: 0.95,
	}, Seed0: 1}
	r, err := Search(context.Background(), cfg, outcomeModel(0.15, 0.5, 400))
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended == nil || r.Recommended.Values[0] != "retry" {
		t.Fatalf("recommended %+v (verdict %s), want retry", r.Recommended, r.Verdict)
	}
	for _, c := range r.Candidates {
		if c.Values[0] == "limbo" && c.Status != StatusHeld {
			t.Errorf("limbo: status %s (%s), want %s", c.Status, c.Reason, StatusHeld)
		}
		if slices.Contains(r.Tied, c.ID) && c.Values[0] == "limbo" {
			t.Errorf("limbo reported as a tie")
		}
	}
}

// Generated policies on generated fleets: the recommendation is never a candidate that
// metric.Judge, given its means and those of another feasible candidate on their common
// seeds, holds back on root outcomes (on any outcome when the goal is one; on
// unfinished_rate, more roots left unanswered, when the goal is a cost).
func TestNeverRecommendsAHeldCandidate(t *testing.T) {
	goals := []string{"terminated_rate", "unfinished_rate", "completion_rate", "correct_completion_rate", "cost_per_completion"}
	const roots = 300
	for trial := range 50 {
		g := rand.New(rand.NewPCG(uint64(trial), 7))
		n := 3 + g.IntN(4)
		// Each policy sends a failed root to one outcome (correct, full, reduced, terminated,
		// unfinished) with its own weights, at its own cost.
		weights := make([][5]float64, n)
		cost := make([]float64, n)
		var choices []string
		for i := range weights {
			choices = append(choices, fmt.Sprint("p", i))
			for o := range weights[i] {
				weights[i][o] = g.Float64() * float64(g.IntN(2)) // some outcomes never reached
			}
			weights[i][3] += 0.01
			cost[i] = g.Float64()
		}
		p := 0.1 + 0.4*g.Float64()
		eval := func(_ context.Context, jobs []Job) ([]map[string]float64, error) {
			out := make([]map[string]float64, len(jobs))
			for i, j := range jobs {
				var idx int
				fmt.Sscanf(j.Values[0], "p%d", &idx)
				w := weights[idx]
				var counts [5]int
				for root := range roots {
					r := rand.New(rand.NewPCG(j.Seed, uint64(root)))
					if r.Float64() >= p {
						counts[0]++
						continue
					}
					u := r.Float64() * (w[0] + w[1] + w[2] + w[3] + w[4])
					o := 0
					for ; o < 4 && u >= w[o]; o++ {
						u -= w[o]
					}
					counts[o]++
				}
				f := func(x int) float64 { return float64(x) / roots }
				out[i] = map[string]float64{
					"correct_completion_rate":    f(counts[0]),
					"full_scope_completion_rate": f(counts[0] + counts[1]),
					"completion_rate":            f(counts[0] + counts[1] + counts[2]),
					"terminated_rate":            f(counts[3]),
					"unfinished_rate":            f(counts[4]),
					"cost_per_completion":        cost[idx] * (1 + 0.1*rand.New(rand.NewPCG(j.Seed, 99)).Float64()),
				}
			}
			return out, nil
		}
		goal := goals[trial%len(goals)]
		tn := scenarios.Tune{Vary: []scenarios.TuneParam{{Path: "recovery.policy", Kind: scenarios.TuneChoice, Choices: choices}},
			Budget: 80, Seeds: 3, MaxSeeds: 12, Confidence: 0.95}
		if metric.Better(goal) > 0 {
			tn.Maximize = goal
		} else {
			tn.Minimize = goal
		}
		r, err := Search(context.Background(), Config{Tune: tn, Seed0: 1}, eval)
		if err != nil {
			t.Fatal(err)
		}
		if r.Recommended == nil {
			t.Fatalf("trial %d: no recommendation (%s)", trial, r.Verdict)
		}
		outcome := goal != "cost_per_completion"
		held := 0
		for _, c := range r.Candidates {
			if c.Status == StatusHeld {
				held++
			}
			if c == r.Recommended || len(c.Runs) == 0 {
				continue
			}
			// metric.Judge on the two candidates' means over their common seeds, as compare
			// would rank them.
			k := min(len(c.Runs), len(r.Recommended.Runs))
			var effects []metric.Effect
			for _, m := range metric.Outcomes {
				effects = append(effects, metric.Effect{Metric: m, A: mean(values(c, m, k)), B: mean(values(r.Recommended, m, k))})
			}
			v := metric.Judge(effects)
			worseUnfinished := effects[3].B > effects[3].A+1e-9
			if v.Held == "b" && (outcome || worseUnfinished) {
				t.Errorf("trial %d (goal %s): recommended %v is held back by %v on %s", trial, goal, r.Recommended.Values, c.Values, v.HeldOn)
			}
		}
		t.Logf("trial %d: goal %s, %d policies, %d held, recommended %v (%s)", trial, goal, n, held, r.Recommended.Values, r.Verdict)
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
