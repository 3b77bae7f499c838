//go:build duckdb_arrow

package reports

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// gamingPair is a policy A and a policy B of one scenario. gaming marks a B built to look
// better without serving users better: the test requires that no command ranks it ahead.
type gamingPair struct {
	name   string
	yaml   string
	a, b   []string // --set overrides of each side
	gaming bool
}

// gamingBase is a small fleet with independent failures; its parameters come from gen.
func gamingBase(name string, roots int, fail float64, steps int, subagents float64) string {
	sub := ""
	if subagents > 0 {
		sub = fmt.Sprintf("  subagents: {probability: %g, count: 1, max_depth: 1}\n", subagents)
	}
	return fmt.Sprintf(`name: %s
seed: 1
horizon: 12h
workload:
  investigations: %d
  arrival: {uniform: 1h}
  steps: {dist: uniform, min: 2, max: %d}
  think: {dist: exponential, mean: 10s}
  tokens: {dist: lognormal, median: 2000, p95: 8000}
  tools: {search: 1}
%stools:
  search: {latency: {dist: exponential, mean: 2s}, idempotency: natural, timeout: 30s}
faults:
  - {kind: transient, tool: search, probability: %g}
`, name, roots, steps, sub, fail)
}

// The ways of gaming a comparison the issue measured: each is a pair of override lists on
// a base whose retries, once spent, terminate.
var (
	// B escalates what A terminates to one reviewer who never answers within the run.
	escalateToNobody = [2][]string{
		{"recovery.retry={max_attempts: 2, initial: 1s, on_exhausted: terminate}"},
		{"recovery.retry={max_attempts: 2, initial: 1s, on_exhausted: escalate}", "recovery.humans={reviewers: 1, review_time: 100h}"},
	}
	// B adds a retry budget that never refills: its retries park until the horizon.
	budgetThatNeverRefills = [2][]string{
		{"recovery.retry={max_attempts: 4, initial: 1s, on_exhausted: terminate}"},
		{"recovery.retry={max_attempts: 4, initial: 1s, on_exhausted: terminate}", "recovery.retry_budget={ratio: 0, min_per_second: 0}"},
	}
	// A replaces a failed subagent up to 3 times and then fails the parent; B goes on
	// without it (reduced scope): more completions, fewer whole correct trees.
	reduceScopeOverRespawn = [2][]string{
		{"recovery.retry={max_attempts: 1, on_exhausted: terminate}", "recovery.subagents={on_failure: {action: respawn, max: 3, then: fail}}"},
		{"recovery.retry={max_attempts: 1, on_exhausted: terminate}", "recovery.subagents={on_failure: reduce_scope}"},
	}
)

func gamingPairs(generated int) []gamingPair {
	pairs := []gamingPair{
		{"escalation to a 100 h reviewer", gamingBase("gaming-escalation", 200, 0.15, 6, 0), escalateToNobody[0], escalateToNobody[1], true},
		{"a retry budget that never refills", gamingBase("gaming-budget", 200, 0.3, 6, 0), budgetThatNeverRefills[0], budgetThatNeverRefills[1], true},
		{"reduce_scope over respawn max 3 then fail", gamingBase("gaming-subagents", 200, 0.12, 4, 0.5), reduceScopeOverRespawn[0], reduceScopeOverRespawn[1], true},
	}
	// Generated pairs: a gaming transform on a scenario of random size, failure rate, step
	// count and subagents. The stream is fixed, so the test is the same on every run.
	r := rand.New(rand.NewPCG(46, 46))
	ways := [][2][]string{escalateToNobody, escalateToNobody, budgetThatNeverRefills, reduceScopeOverRespawn}
	for i := range generated {
		w := ways[r.IntN(len(ways))]
		sub := 0.0
		if r.IntN(2) == 0 {
			sub = 0.1 + 0.4*r.Float64()
		}
		name := fmt.Sprintf("gaming-gen%d", i)
		base := gamingBase(name, 60+r.IntN(140), 0.02+0.3*r.Float64(), 2+r.IntN(8), sub)
		if r.IntN(4) == 0 {
			// and the other way round: a fair verdict must then rank A behind, or not at all
			pairs = append(pairs, gamingPair{name + " (reversed)", base, w[1], w[0], false})
			continue
		}
		pairs = append(pairs, gamingPair{name, base, w[0], w[1], false})
	}
	return pairs
}

// side is one policy of a pair run over the seeds: its runs' metrics (a Sample and a
// Summary) and each root's outcome, by seed and arrival order.
type gamingSide struct {
	sample   Sample
	summary  Summary
	outcomes map[uint64][]int
}

// rootLevel is a root's outcome, best first (metric.Outcomes): 4 complete and correct, 3
// complete, 2 reduced scope, 1 terminated, 0 unfinished at the horizon.
const rootLevelQuery = `SELECT r.seed, CASE
    WHEN o.final_state = 'completed' AND o.tree_reduced = 0 AND o.truly_valid AND o.tree_wrong = 0 THEN 4
    WHEN o.final_state = 'completed' AND o.tree_reduced = 0 THEN 3
    WHEN o.final_state = 'completed' THEN 2
    WHEN o.final_state = 'terminated' THEN 1
    ELSE 0 END AS level
FROM roots o JOIN runs r USING (run_id)
ORDER BY r.seed, o.arrived_at, o.investigation_id`

func runGamingSide(t *testing.T, label, yaml string, sets []string, seeds int) gamingSide {
	t.Helper()
	sc, err := scenarios.Parse(label+".yaml", []byte(yaml), sets)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	db, err := analysis.Create("") // in memory: the test reads it, nothing else
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var outs []analysis.Outcome
	s := Sample{Label: label, Scenario: sc.Name, Values: map[string][]float64{}}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		out, err := pipeline.Execute(ctx, db, pipeline.Spec{Scenario: sc, Seed: seed, Version: "test"})
		if err != nil {
			t.Fatalf("%s seed %d: %v", label, seed, err)
		}
		outs = append(outs, out)
		s.RunIDs, s.Seeds = append(s.RunIDs, out.RunID), append(s.Seeds, seed)
		for _, name := range metric.Names() {
			v, ok := out.Metrics.Value(name)
			if !ok {
				v = math.NaN()
			}
			s.Values[name] = append(s.Values[name], v)
		}
	}
	_, rows, err := db.Query(ctx, rootLevelQuery)
	if err != nil {
		t.Fatal(err)
	}
	side := gamingSide{sample: s, summary: Summarize(sc, "test", outs), outcomes: map[uint64][]int{}}
	for _, row := range rows {
		seed, level := toUint(row[0]), toUint(row[1])
		side.outcomes[seed] = append(side.outcomes[seed], int(level))
	}
	return side
}

func toUint(v any) uint64 {
	switch x := v.(type) {
	case int32:
		return uint64(x)
	case int64:
		return uint64(x)
	case uint64:
		return x
	case uint32:
		return uint64(x)
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

// rootWise compares the outcome of every root of b with the same root of a (same seed,
// same arrival): whether b is worse on some and better on none.
func rootWise(t *testing.T, a, b gamingSide) (noBetter bool, worse int) {
	t.Helper()
	noBetter = true
	for seed, la := range a.outcomes {
		lb := b.outcomes[seed]
		if len(la) != len(lb) {
			t.Fatalf("seed %d: %d roots against %d: the two policies must see the same arrivals", seed, len(la), len(lb))
		}
		for i := range la {
			switch {
			case lb[i] > la[i]:
				noBetter = false
			case lb[i] < la[i]:
				worse++
			}
		}
	}
	return noBetter, worse
}

// TestNoCommandRanksAGamingPolicyAhead tries to game the verdict that compare, check
// --baseline and tune share (metric.Judge): on the pairs the issue measured and on
// generated pairs, whenever B is no better than A on the outcome of every root and worse on
// at least one, neither compare nor check --baseline may rank B ahead, and the two must
// agree on which side does.
func TestNoCommandRanksAGamingPolicyAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates policy pairs")
	}
	const seeds = 4
	dominated := 0
	for _, p := range gamingPairs(8) {
		t.Run(p.name, func(t *testing.T) {
			a := runGamingSide(t, "A", p.yaml, p.a, seeds)
			b := runGamingSide(t, "B", p.yaml, p.b, seeds)
			noBetter, worse := rootWise(t, a, b)
			c := Compare(a.sample, b.sample, CompareOptions{Resamples: 4000, Seed: 1})
			bc := NewBaselineCheck("baseline.json", b.summary, a.summary, 0.05, nil)
			t.Logf("roots: B no better on each: %v, worse on %d; compare: %s led by %q; check: %s led by %q",
				noBetter, worse, c.Dominance, c.Leader, bc.Dominance, bc.Leader)
			if noBetter && worse > 0 || p.gaming {
				if noBetter && worse > 0 {
					dominated++
				}
				if c.Leader == "b" || c.Dominance == DominanceB {
					t.Errorf("compare ranks B ahead: %s", c.DominanceText())
				}
				if bc.Leader == "b" || bc.Dominance == DominanceB {
					t.Errorf("check --baseline ranks B ahead: %s", bc.VerdictText())
				}
			}
			if p.gaming && (c.Leader != "a" || bc.Leader != "a") {
				t.Errorf("on a pair of the issue compare and check --baseline must both rank A ahead: compare %q, check %q", c.Leader, bc.Leader)
			}
			if (c.Leader == "a" && bc.Leader == "b") || (c.Leader == "b" && bc.Leader == "a") {
				t.Errorf("compare ranks %q ahead, check --baseline %q", c.Leader, bc.Leader)
			}
		})
	}
	// The generated pairs must put the rule to work, not pass by never meeting its case.
	if dominated < 2 {
		t.Errorf("only %d pairs had B no better on every root and worse on one: the test barely tries", dominated)
	}
}
