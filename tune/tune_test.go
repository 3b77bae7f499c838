package tune

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
)

// model is a stand-in for the simulator: retries under independent failures of
// probability p, N operations a run. Each operation fails each attempt with probability p
// and makes at most n attempts; a run reports the share completed and attempts per
// operation. The draws depend on (seed, operation, attempt) only, as the simulator's do,
// so candidates on one seed share them (common random numbers).
func model(p float64, ops int) Evaluator {
	return func(_ context.Context, jobs []Job) ([]map[string]float64, error) {
		out := make([]map[string]float64, len(jobs))
		for i, j := range jobs {
			n, _ := strconv.Atoi(j.Values[0])
			done, attempts := 0, 0
			for op := range ops {
				r := rand.New(rand.NewPCG(j.Seed, uint64(op)))
				for a := 0; a < n; a++ {
					attempts++
					if r.Float64() >= p {
						done++
						break
					}
				}
			}
			out[i] = map[string]float64{"completion_rate": float64(done) / float64(ops),
				"retry_amplification": float64(attempts) / float64(ops), "duplicate_side_effects": 0}
		}
		return out, nil
	}
}

func closedForm(t *testing.T, bound string) scenarios.Tune {
	t.Helper()
	e, msg := scenarios.ParseExpectation("retry_amplification", bound)
	if msg != "" {
		t.Fatal(msg)
	}
	return scenarios.Tune{
		Vary:       []scenarios.TuneParam{{Path: "recovery.retry.max_attempts", Kind: scenarios.TuneInt, Min: 1, Max: 10}},
		Maximize:   "completion_rate",
		SubjectTo:  []scenarios.Expectation{e},
		Budget:     150,
		Seeds:      3,
		MaxSeeds:   24,
		Confidence: 0.95,
	}
}

// amplification is the expected attempts per operation with at most n attempts, each
// failing with probability p: Σ_{k<n} p^k = (1 − pⁿ)/(1 − p).
func amplification(p float64, n int) float64 { return (1 - math.Pow(p, float64(n))) / (1 - p) }

// The optimum of "maximize completion subject to amplification ≤ b" is the largest n with
// (1 − pⁿ)/(1 − p) ≤ b, since both grow with n. The bound sits halfway between the
// amplification of the optimum and of the next n, so each is several standard errors from
// it: with 2000 operations a run, attempts per operation have variance below 1.2 (p = 0.5,
// n ≤ 5), a run's amplification a standard deviation below sqrt(1.2/2000) = 0.025, and the
// half gap 0.0625 (p = 0.5) and 0.02 (p = 0.2) is met by the 95% t interval after 6 and
// 12 seeds respectively (t(5)·0.025/√6 = 0.026; p = 0.2: sd sqrt(0.27/2000) = 0.012,
// t(11)·0.012/√12 = 0.0075). The evaluations are deterministic, so the test cannot flake.
func TestClosedFormModel(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		best int
	}{{0.5, 3}, {0.2, 2}, {0.7, 2}} {
		b := (amplification(tc.p, tc.best) + amplification(tc.p, tc.best+1)) / 2
		cfg := Config{Tune: closedForm(t, "<= "+strconv.FormatFloat(b, 'f', 4, 64)), Seed0: 1}
		r, err := Search(context.Background(), cfg, model(tc.p, 2000))
		if err != nil {
			t.Fatal(err)
		}
		if r.Recommended == nil || r.Recommended.Values[0] != strconv.Itoa(tc.best) {
			t.Fatalf("p=%v: recommended %+v (verdict %s), want max_attempts %d", tc.p, r.Recommended, r.Verdict, tc.best)
		}
		if r.Spent > cfg.Tune.Budget || r.Verdict != VerdictBest {
			t.Errorf("p=%v: spent %d of %d, verdict %s", tc.p, r.Spent, cfg.Tune.Budget, r.Verdict)
		}
		iv := r.Recommended.Intervals["retry_amplification"]
		if !(iv.Hi <= b) {
			t.Errorf("p=%v: amplification interval %+v does not hold <= %v", tc.p, iv, b)
		}
		t.Logf("p=%v: n=%d in %d runs, %d rounds, runner-up %+v", tc.p, tc.best, r.Spent, r.Rounds, *r.RunnerUp)
	}
}

// Known turns a search's measurements into the Known of a resumed one.
func known(r *Result) map[string]map[uint64]map[string]float64 {
	k := map[string]map[uint64]map[string]float64{}
	for _, c := range r.Candidates {
		for j, m := range c.Runs {
			if k[Key(c.Values)] == nil {
				k[Key(c.Values)] = map[uint64]map[string]float64{}
			}
			k[Key(c.Values)][1+uint64(j)] = m
		}
	}
	return k
}

// A search interrupted after any number of runs and resumed from what it measured ends
// with the recommendation, runs and candidates of the uninterrupted search; so does one
// whose evaluator is handed the jobs in a different grouping (more workers).
func TestInterruptResume(t *testing.T) {
	cfg := Config{Tune: closedForm(t, "<= 1.8125"), Seed0: 1}
	cfg.Tune.Vary = append(cfg.Tune.Vary, scenarios.TuneParam{Path: "recovery.retry.initial", Kind: scenarios.TuneDuration, Min: 1, Max: 30})
	cfg.Tune.Initial = 12
	whole, err := Search(context.Background(), cfg, model(0.5, 500))
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{1, 7, 20, whole.Spent - 1} {
		ctx, cancel := context.WithCancel(context.Background())
		runs := 0
		inner := model(0.5, 500)
		eval := func(ctx context.Context, jobs []Job) ([]map[string]float64, error) {
			out := make([]map[string]float64, len(jobs))
			for i := range jobs {
				if runs == stopAt {
					cancel()
					break
				}
				m, _ := inner(ctx, jobs[i:i+1])
				out[i] = m[0]
				runs++
			}
			return out, nil
		}
		part, err := Search(ctx, cfg, eval)
		if err != nil {
			t.Fatal(err)
		}
		if part.Complete || part.Spent != stopAt {
			t.Fatalf("stopped at %d: complete %v, spent %d", stopAt, part.Complete, part.Spent)
		}
		cfg2 := cfg
		cfg2.Known = known(part)
		again, err := Search(context.Background(), cfg2, model(0.5, 500))
		if err != nil {
			t.Fatal(err)
		}
		if again.Spent != whole.Spent || len(again.Candidates) != len(whole.Candidates) ||
			Key(again.Recommended.Values) != Key(whole.Recommended.Values) || again.Verdict != whole.Verdict {
			t.Errorf("resumed after %d runs: %s (%s, %d runs); uninterrupted: %s (%s, %d runs)", stopAt,
				Key(again.Recommended.Values), again.Verdict, again.Spent, Key(whole.Recommended.Values), whole.Verdict, whole.Spent)
		}
	}
}

// A key that changes nothing gives candidates that measure exactly the same on every seed:
// the recommendation is reported as a tie with them, not as better.
func TestTieIsReported(t *testing.T) {
	cfg := Config{Tune: closedForm(t, "<= 1.8125"), Seed0: 1}
	cfg.Tune.Vary[0].Max = 4
	cfg.Tune.Vary = append(cfg.Tune.Vary, scenarios.TuneParam{Path: "tools.a.version", Kind: scenarios.TuneChoice, Choices: []string{"x", "y"}})
	r, err := Search(context.Background(), cfg, model(0.5, 2000))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != VerdictTie || len(r.Tied) != 1 || r.Recommended.Values[0] != "3" {
		t.Fatalf("verdict %s, tied %v, recommended %v", r.Verdict, r.Tied, r.Recommended.Values)
	}
	twin := r.Candidates[r.Tied[0]]
	if twin.Values[0] != "3" || twin.Values[1] == r.Recommended.Values[1] {
		t.Errorf("tied with %v", twin.Values)
	}
}

// Candidates whose goal differs by less than the noise can tell apart within max_seeds are
// a tie when the seeds run out: here the goal does not depend on the key at all, and each
// candidate's noise is its own (no common random numbers to cancel it).
func TestNoiseTieAtMaxSeeds(t *testing.T) {
	cfg := Config{Tune: scenarios.Tune{
		Vary:     []scenarios.TuneParam{{Path: "workload.behaviour.stuck", Kind: scenarios.TuneNumber, Min: 0, Max: 1}},
		Maximize: "completion_rate", Budget: 100, Seeds: 3, MaxSeeds: 12, Confidence: 0.95, Initial: 4,
	}, Seed0: 1}
	eval := func(_ context.Context, jobs []Job) ([]map[string]float64, error) {
		out := make([]map[string]float64, len(jobs))
		for i, j := range jobs {
			r := rand.New(rand.NewPCG(j.Seed, uint64(j.Candidate)))
			out[i] = map[string]float64{"completion_rate": 0.9 + 0.01*r.NormFloat64()}
		}
		return out, nil
	}
	r, err := Search(context.Background(), cfg, eval)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != VerdictTie || r.Spent > 100 {
		t.Fatalf("verdict %s after %d runs; want a tie", r.Verdict, r.Spent)
	}
}

// On a continuous key the refinement rounds close in on the optimum: the goal here is
// 1 − (x − 0.37)² plus noise that depends on the seed only (common random numbers cancel
// it in paired differences), so the best candidate is the one nearest 0.37; after the
// start and rounds of boxes that halve around the leader, the recommendation is within
// 0.03 of it (the box after five rounds is ±0.016 wide).
func TestContinuousOptimum(t *testing.T) {
	cfg := Config{Tune: scenarios.Tune{
		Vary:     []scenarios.TuneParam{{Path: "workload.behaviour.stuck", Kind: scenarios.TuneNumber, Min: 0, Max: 1}},
		Maximize: "completion_rate", Budget: 200, Seeds: 3, MaxSeeds: 12, Confidence: 0.95,
	}, Seed0: 1}
	eval := func(_ context.Context, jobs []Job) ([]map[string]float64, error) {
		out := make([]map[string]float64, len(jobs))
		for i, j := range jobs {
			x, _ := strconv.ParseFloat(j.Values[0], 64)
			r := rand.New(rand.NewPCG(j.Seed, 7))
			out[i] = map[string]float64{"completion_rate": 1 - (x-0.37)*(x-0.37) + 0.01*r.NormFloat64() + 0.0005*math.Sin(float64(j.Candidate))}
		}
		return out, nil
	}
	r, err := Search(context.Background(), cfg, eval)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := strconv.ParseFloat(r.Recommended.Values[0], 64)
	if math.Abs(x-0.37) > 0.03 || r.Spent > 200 {
		t.Fatalf("recommended %v after %d runs, %d rounds (verdict %s); want about 0.37", x, r.Spent, r.Rounds, r.Verdict)
	}
	t.Logf("x = %v after %d runs, %d rounds, verdict %s, %d candidates", x, r.Spent, r.Rounds, r.Verdict, len(r.Candidates))
}

// A time budget stops the search when the clock passes it, before the next batch of runs;
// the search is still complete (not interrupted) and recommends from what it measured.
func TestTimeBudget(t *testing.T) {
	tn := closedForm(t, "<= 1.22") // p = 0.2: the run budget takes two batches (TestClosedFormModel)
	whole, err := Search(context.Background(), Config{Tune: tn, Seed0: 1}, model(0.2, 2000))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Tune: tn, Seed0: 1}
	cfg.Tune.Budget, cfg.Tune.BudgetTime = 0, 10*time.Minute
	now := time.Unix(0, 0)
	// Each look at the clock costs 6 minutes: the deadline is set at 6m (so 16m), the first
	// batch starts at 12m, the second would at 18m.
	cfg.Now = func() time.Time { now = now.Add(6 * time.Minute); return now }
	r, err := Search(context.Background(), cfg, model(0.2, 2000))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || r.Spent != 30 || whole.Spent <= 30 {
		t.Fatalf("complete %v after %d runs (the run budget spent %d)", r.Complete, r.Spent, whole.Spent)
	}
}

// Minimizing works the other way round: the least amplification subject to completion
// ≥ 0.9 under p = 0.5 is the smallest n with 1 − 0.5ⁿ ≥ 0.9, n = 4 (0.9375; n = 3 gives
// 0.875). A run's completion over 2000 operations has a standard deviation below
// sqrt(0.875·0.125/2000) = 0.0074, so 3 seeds' 95% t interval (half-width 4.30·0.0074/√3 =
// 0.018) already separates both from the bound (gaps 0.025 and 0.0375).
func TestMinimize(t *testing.T) {
	e, _ := scenarios.ParseExpectation("completion_rate", ">= 0.9")
	tn := closedForm(t, "<= 10")
	tn.Maximize, tn.Minimize, tn.SubjectTo = "", "retry_amplification", []scenarios.Expectation{e}
	r, err := Search(context.Background(), Config{Tune: tn, Seed0: 1}, model(0.5, 2000))
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended == nil || r.Recommended.Values[0] != "4" || r.Verdict != VerdictBest {
		t.Fatalf("verdict %s, recommended %+v", r.Verdict, r.Recommended)
	}
}

// Halving ranks candidates whose constraints hold at their means before better-scoring
// ones whose means break a bound. Three unsure candidates of a trade-off (more attempts
// complete more and amplify more) on three seeds: A's amplification averages 1.78 against
// a bound of 1.8, B's and C's 1.88 and 1.92, all three intervals straddling it (spreads of
// 0.1 to 0.2 over 3 seeds give t(2)·s/√3 half-widths of 0.25 to 0.5). Ranked by completion
// alone, halving kept C and B and dropped A, the only one whose mean keeps the bound: in a
// search of max_attempts the optimum is lost this way before its interval can narrow.
func TestHalvingKeepsTheLikelyFeasible(t *testing.T) {
	e, msg := scenarios.ParseExpectation("retry_amplification", "<= 1.8")
	if msg != "" {
		t.Fatal(msg)
	}
	s := &search{t: scenarios.Tune{SubjectTo: []scenarios.Expectation{e}, Confidence: 0.95},
		goal: "completion_rate", higher: true, twins: map[int][]int{}}
	cand := func(id int, done float64, amp ...float64) *Candidate {
		c := &Candidate{ID: id}
		for _, a := range amp {
			c.Runs = append(c.Runs, map[string]float64{"completion_rate": done, "retry_amplification": a})
		}
		return c
	}
	a := cand(0, 0.88, 1.70, 1.78, 1.86)
	b := cand(1, 0.96, 1.78, 1.88, 1.98)
	c := cand(2, 0.99, 1.72, 1.92, 2.12)
	kept := s.halve(s.cut([]*Candidate{a, b, c}, 3), 3)
	for _, x := range []*Candidate{a, b, c} {
		if x.feas != unsure {
			t.Fatalf("candidate %d: feasibility %d, want unsure (the dataset is wrong)", x.ID, x.feas)
		}
	}
	if len(kept) != 2 || kept[0] != a {
		t.Fatalf("halving kept %v, want A (id 0) first of two", ids(kept))
	}
	if a.Status == StatusDropped || b.Status != StatusDropped {
		t.Errorf("statuses A %q, B %q: want A kept and B, the lower-scoring of the unlikely, dropped", a.Status, b.Status)
	}
}

func ids(cs []*Candidate) []int {
	var out []int
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}
