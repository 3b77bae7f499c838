package hunt

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	_ "github.com/mayday-sim/mayday/sim" // the fault kinds
)

const fleet = `name: fleet
seed: 7
horizon: 6h
workload:
  investigations: 400
  arrival: {poisson: 120/h}
tools:
  search: {latency: 1s, timeout: 1m}
faults:
  - {kind: transient, tool: search, probability: 0.001}
expect:
  completion_rate: ">= 0.9"
hunt:
  faults:
    - {kind: transient, tool: search, probability: {min: 0.01, max: 0.1}}
    - {kind: brownout, tool: search, for: {min: 30s, max: 4m}, slowdown: {min: 1.2, max: 10}, probability: 0}
    - {kind: outage, tool: search, for: {min: 10s, max: 3m}}
  at: {min: 10m, max: 30m}
  max_faults: 4
  budget: 40
  liveness: 15m
`

func load(t *testing.T, sets ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse("fleet.yaml", []byte(fleet), sets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var slowdownRe = regexp.MustCompile(`kind: brownout[^}]*slowdown: ([0-9.]+)`)

// metastable is an Evaluator of a fleet that a brownout with slowdown >= 5 of any length
// tips into a metastable state (a liveness violation), with or without other faults; a
// milder brownout is a near miss, closer the stronger it is.
func metastable(counts *int) Evaluator {
	return func(ctx context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i, r := range runs {
			*counts++
			out[i] = Outcome{Ran: ctx.Err() == nil, Violations: []Violation{}}
			for _, m := range slowdownRe.FindAllStringSubmatch(r.Overrides[0].Value, -1) {
				x, _ := strconv.ParseFloat(m[1], 64)
				if x >= 5 {
					out[i].Violations = []Violation{{Kind: Liveness, Metric: LivenessMetric, Message: "goodput never came back"}}
				} else {
					out[i].Closeness = max(out[i].Closeness, x/5)
				}
			}
		}
		return out, nil
	}
}

func never(counts *int) Evaluator {
	return func(_ context.Context, runs []Run) ([]Outcome, error) {
		*counts += len(runs)
		out := make([]Outcome, len(runs))
		for i := range out {
			out[i] = Outcome{Ran: true, Violations: []Violation{}}
		}
		return out, nil
	}
}

func config(s *scenarios.Scenario, seed uint64) Config {
	return Config{Hunt: *s.Hunt, Scenario: s, Seed: seed}
}

func durOf(t *testing.T, s string) time.Duration {
	t.Helper()
	x, ok := (scenarios.TuneParam{Kind: scenarios.TuneDuration}).Number(s)
	if !ok {
		t.Fatalf("%q is not a duration", s)
	}
	return time.Duration(x * float64(time.Second))
}

// The hunt finds the brownout, shrinks the trial to that one fault, weakened toward the
// bound (5) it cannot cross, and never makes a step larger than the one it came from.
func TestHuntFindsAndShrinks(t *testing.T) {
	s := load(t)
	runs := 0
	r, err := Hunt(context.Background(), config(s, 1), metastable(&runs))
	if err != nil {
		t.Fatal(err)
	}
	f := r.Found
	if f == nil || f.Violation.ID() != "liveness:goodput_recovery_time" || !r.Complete || !f.Complete {
		t.Fatalf("found %+v, complete %v", f, r.Complete)
	}
	if r.Runs > s.Hunt.Budget || r.ShrinkRuns > s.Hunt.Shrink || runs != r.Runs+r.ShrinkRuns {
		t.Errorf("runs: %d searched (budget %d), %d shrinking (at most %d), %d evaluated", r.Runs, s.Hunt.Budget, r.ShrinkRuns, s.Hunt.Shrink, runs)
	}
	final := r.Trials[f.Final]
	if len(final.Faults) != 1 || !strings.Contains(final.Faults[0], "kind: brownout") {
		t.Fatalf("shrunk to %v; want the one brownout", final.Faults)
	}
	x, _ := strconv.ParseFloat(slowdownRe.FindStringSubmatch(final.Faults[0])[1], 64)
	// Steps of an eighth of the way to 1.2 stop below 5 + (5-1.2)/7 ≈ 5.54.
	if x < 5 || x > 5.55 {
		t.Errorf("slowdown %v; weakening toward 1.2 should stop within an eighth of the way from 5", x)
	}
	for _, tr := range r.Trials {
		if tr.Phase == "swarm" || tr.Phase == "escalate" || tr.Phase == "control" {
			continue
		}
		from := r.Trials[tr.From]
		if len(tr.Faults) > len(from.Faults) || tr.Investigations > from.Investigations || durOf(t, tr.Horizon) > durOf(t, from.Horizon) {
			t.Errorf("shrink step %d (%s) grew from trial %d: %v", tr.N, tr.Change, tr.From, tr.size())
		}
	}
	if a, b := f.After, f.Before; a.Faults > b.Faults || a.Investigations > b.Investigations || durOf(t, a.Horizon) > durOf(t, b.Horizon) {
		t.Errorf("shrunk scenario %+v is larger than the original %+v", a, b)
	}
	// Liveness needs the horizon and the arrivals to outlast the window by liveness + 5m.
	end := time.Duration(0)
	for _, o := range f.Overrides {
		if o.Path == "horizon" {
			end = durOf(t, o.Value)
		}
	}
	if end < 20*time.Minute+15*time.Minute {
		t.Errorf("horizon cut to %s, below what testing liveness needs", end)
	}
	data, err := FoundFile(s, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Found by mayday hunt", "goodput_recovery_time: \"<= 15m\"", "name: fleet-liveness-goodput-recovery-time", "faults: [{kind: brownout"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the found file lacks %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "hunt:") {
		t.Errorf("the found file keeps its hunt block:\n%s", data)
	}
}

// The same scenario and seed give the same trials and the same finding; another seed
// other trials.
func TestHuntDeterministic(t *testing.T) {
	s := load(t)
	var runs int
	js := func(seed uint64) string {
		r, err := Hunt(context.Background(), config(s, seed), metastable(&runs))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		return string(b)
	}
	a, b, c := js(3), js(3), js(4)
	if a != b {
		t.Errorf("two hunts with seed 3 differ:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 3 and 4 gave the same hunt")
	}
}

// A policy that survives the envelope yields nothing within the budget, and the coverage
// says how much of the envelope the trials drew.
func TestHuntNoViolation(t *testing.T) {
	s := load(t)
	runs := 0
	r, err := Hunt(context.Background(), config(s, 1), never(&runs))
	if err != nil {
		t.Fatal(err)
	}
	if r.Found != nil || r.Runs != 40 || runs != 40 || r.ShrinkRuns != 0 {
		t.Fatalf("found %v after %d runs (%d evaluated); want nothing after the budget of 40", r.Found, r.Runs, runs)
	}
	c := r.Coverage
	// 40 trials draw each entry with probability >= 1/2 · 1 ...: every kind is drawn.
	if c.Trials != 40 || len(c.Entries) != 3 || c.Share < 0.5 || !strings.Contains(c.Text, "drew 3 of 3 kinds") {
		t.Errorf("coverage %+v", c)
	}
}

// Swarm trials leave kinds out: some trials draw a strict subset of the envelope's kinds.
func TestHuntSwarmLeavesKindsOut(t *testing.T) {
	s := load(t)
	runs := 0
	r, err := Hunt(context.Background(), config(s, 5), never(&runs))
	if err != nil {
		t.Fatal(err)
	}
	partial := 0
	for _, tr := range r.Trials {
		if tr.Phase == "swarm" && len(tr.Kinds) < 3 {
			partial++
		}
		if len(tr.Faults) < 2 || len(tr.Faults) > 1+s.Hunt.MaxFaults {
			t.Errorf("trial %d has %d faults; want the scenario's own and 1 to %d drawn", tr.N, len(tr.Faults), s.Hunt.MaxFaults)
		}
	}
	// Each trial keeps all 3 kinds with probability 1/8, so all 40 doing so has odds 8^-40.
	if partial == 0 {
		t.Errorf("no swarm trial left a kind out")
	}
}

// An interrupted hunt stops, marked incomplete.
func TestHuntInterrupted(t *testing.T) {
	s := load(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := 0
	r, err := Hunt(ctx, config(s, 1), never(&runs))
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete || r.Runs != 0 {
		t.Errorf("complete %v after %d runs", r.Complete, r.Runs)
	}
}

// peakParams are the parameters of a fault kind registered only by this test.
type peakParams struct {
	Peak float64 `key:"hunt_peak,min=1,max=100,default=2" doc:"the latency factor at the peak"`
}

var peakRe = regexp.MustCompile(`hunt_peak: ([0-9.]+)`)

// A kind's own parameter is drawn and weakened like any shared key: a kind registered later
// (here by the test) is hunted with no edit of the hunt.
func TestHuntKindParameters(t *testing.T) {
	scenarios.RegisterFault(scenarios.FaultRule{
		Kind: "hunt_peak_test", Doc: "latency peaks over the window",
		Keys: []string{"tool", "at", "for"}, Params: scenarios.KeysOf[peakParams]("hunt_peak_test's parameters"),
		Required: []string{"for"}, Window: true,
	})
	file := strings.Replace(fleet, "    - {kind: outage, tool: search, for: {min: 10s, max: 3m}}\n",
		"    - {kind: hunt_peak_test, tool: search, for: 1m, hunt_peak: {min: 1, max: 100}}\n", 1)
	s, err := scenarios.Parse("fleet.yaml", []byte(file), nil)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(_ context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i, r := range runs {
			out[i] = Outcome{Ran: true, Violations: []Violation{}}
			for _, m := range peakRe.FindAllStringSubmatch(r.Overrides[0].Value, -1) {
				if x, _ := strconv.ParseFloat(m[1], 64); x >= 20 {
					out[i].Violations = []Violation{{Kind: Expect, Metric: "completion_rate", Message: "too slow"}}
				}
			}
		}
		return out, nil
	}
	r, err := Hunt(context.Background(), config(s, 2), eval)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found == nil {
		t.Fatal("nothing found")
	}
	final := r.Trials[r.Found.Final].Faults
	if len(final) != 1 || !strings.Contains(final[0], "kind: hunt_peak_test") {
		t.Fatalf("shrunk to %v; want the one hunt_peak_test fault", final)
	}
	// Steps of an eighth of the way to 1 stop below 20 + (20-1)/7 ≈ 22.7.
	if x, _ := strconv.ParseFloat(peakRe.FindStringSubmatch(final[0])[1], 64); x < 20 || x > 22.8 {
		t.Errorf("hunt_peak %v; want within an eighth of the way from 20", x)
	}
}

// TestRefusedTrialsAreNotAnAllClear: an envelope whose draws the scenario refuses at run
// time (here every brownout) is not covered: the refused trials count as not run, and a
// hunt that finds nothing says it could not cover the envelope instead of an all-clear.
func TestRefusedTrialsAreNotAnAllClear(t *testing.T) {
	s := load(t)
	eval := func(_ context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i, r := range runs {
			out[i] = Outcome{Ran: true, Violations: []Violation{}}
			if strings.Contains(r.Overrides[0].Value, "brownout") {
				out[i] = Outcome{Refused: "slowdown out of range"}
			}
		}
		return out, nil
	}
	r, err := Hunt(context.Background(), Config{Hunt: *s.Hunt, Scenario: s, Seed: 1}, eval)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found != nil || r.Refused == 0 || r.Coverage.Refused != r.Refused {
		t.Fatalf("found %v, refused %d, coverage refused %d: want nothing found and the refusals counted", r.Found, r.Refused, r.Coverage.Refused)
	}
	if r.Runs+r.Refused != s.Hunt.Budget {
		t.Errorf("%d runs and %d refused trials, want the budget of %d spent", r.Runs, r.Refused, s.Hunt.Budget)
	}
	for _, e := range r.Coverage.Entries {
		if e.Kind == "brownout" && e.Trials != 0 {
			t.Errorf("brownout counted in %d trials that ran, though every one was refused", e.Trials)
		}
	}
	if !strings.Contains(r.Uncovered, "brownout") {
		t.Errorf("uncovered %q: want it to name the kind no trial ran", r.Uncovered)
	}
	// Refusing nothing covers the envelope.
	var n int
	r, err = Hunt(context.Background(), Config{Hunt: *s.Hunt, Scenario: s, Seed: 1}, never(&n))
	if err != nil || r.Uncovered != "" {
		t.Errorf("nothing refused: uncovered %q, err %v", r.Uncovered, err)
	}
}

// TestNotMeasuredIsCountedNotViolated: trials that cannot measure an expectation's metric
// show in the coverage, and are no violation.
func TestNotMeasuredIsCountedNotViolated(t *testing.T) {
	s := load(t)
	eval := func(_ context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i := range runs {
			out[i] = Outcome{Ran: true, Violations: []Violation{}, NotMeasured: []string{LivenessMetric}}
		}
		return out, nil
	}
	r, err := Hunt(context.Background(), Config{Hunt: *s.Hunt, Scenario: s, Seed: 1}, eval)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found != nil || r.Coverage.NotMeasured[LivenessMetric] != r.Coverage.Trials || !strings.Contains(r.Coverage.Text, "not measured") {
		t.Errorf("found %v, not measured %v of %d trials, text %q", r.Found, r.Coverage.NotMeasured, r.Coverage.Trials, r.Coverage.Text)
	}
}

// distinctEval shows two violations at once, as a simulation can: a brownout (any) breaks
// completion_rate, an outage (any) breaks liveness.
func distinctEval(_ context.Context, runs []Run) ([]Outcome, error) {
	out := make([]Outcome, len(runs))
	for i, r := range runs {
		out[i] = Outcome{Ran: true, Violations: []Violation{}}
		if strings.Contains(r.Overrides[0].Value, "kind: brownout") {
			out[i].Violations = append(out[i].Violations, Violation{Kind: Expect, Metric: "completion_rate", Message: "too few completed"})
		}
		if strings.Contains(r.Overrides[0].Value, "kind: outage") {
			out[i].Violations = append(out[i].Violations, Violation{Kind: Liveness, Metric: LivenessMetric, Message: "goodput never came back"})
		}
	}
	return out, nil
}

// TestHuntShrinksEveryDistinctViolation: a search that shows two distinct violations
// reports both, each shrunk on its own to the one fault that causes it, under names of
// their own.
func TestHuntShrinksEveryDistinctViolation(t *testing.T) {
	s := load(t)
	r, err := Hunt(context.Background(), config(s, 1), distinctEval)
	if err != nil {
		t.Fatal(err)
	}
	all := r.All()
	if len(all) != 2 {
		t.Fatalf("found %d violations; want the two distinct ones", len(all))
	}
	want := map[string]string{"expect:completion_rate": "kind: brownout", "liveness:" + LivenessMetric: "kind: outage"}
	names := map[string]bool{}
	for _, f := range all {
		kind, ok := want[f.Violation.ID()]
		if !ok {
			t.Fatalf("found %s; want one of %v", f.Violation.ID(), want)
		}
		delete(want, f.Violation.ID())
		final := r.Trials[f.Final]
		if len(final.Faults) != 1 || !strings.Contains(final.Faults[0], kind) || !final.has(f.Violation.ID()) {
			t.Errorf("%s shrunk to %v; want the one %s fault", f.Violation.ID(), final.Faults, kind)
		}
		if names[f.Name] {
			t.Errorf("two findings are named %s", f.Name)
		}
		names[f.Name] = true
		data, err := FoundFileOf(s, r, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Parse(f.Name+".yaml", data, nil); err != nil {
			t.Errorf("the shrunk scenario of %s does not parse: %v", f.Violation.ID(), err)
		}
	}
	// Each shrinking spends its own hunt.shrink runs at most.
	if r.ShrinkRuns > 2*s.Hunt.Shrink {
		t.Errorf("%d shrink runs; want at most %d per violation", r.ShrinkRuns, s.Hunt.Shrink)
	}
}

// TestShrinkKeepsTheSameInvariant: a brownout breaks one invariant, a run without one
// another. Shrinking the first must not drop the brownout and keep "an invariant" broken:
// the step trades the violation for another, and is refused.
func TestShrinkKeepsTheSameInvariant(t *testing.T) {
	s := load(t)
	a := "run fleet-hunt-t3 (seed 9): invariant violated: investigation 12 at 4000: illegal transition running→completed on reply (done)"
	b := "run fleet-hunt-t5 (seed 11): invariant violated: keyed tool search executed key {3 1} 2 times"
	eval := func(_ context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i, r := range runs {
			msg := b
			if strings.Contains(r.Overrides[0].Value, "kind: brownout") {
				// The same invariant in another run: other numbers, the same Check.
				msg = strings.Replace(a, "12 at 4000", strconv.Itoa(i+1)+" at "+strconv.Itoa(100*i+7), 1)
			}
			out[i] = Outcome{Ran: true, Violations: []Violation{{Kind: Invariant, Check: InvariantCheck(msg), Message: msg}}, Closeness: 1}
		}
		return out, nil
	}
	r, err := Hunt(context.Background(), config(s, 1), eval)
	if err != nil {
		t.Fatal(err)
	}
	if InvariantCheck(a) == InvariantCheck(b) || InvariantCheck(a) != InvariantCheck(strings.Replace(a, "12", "7", 1)) {
		t.Fatalf("checks %q and %q", InvariantCheck(a), InvariantCheck(b))
	}
	var withBrownout *Found
	for _, f := range r.All() {
		if f.Violation.Check == InvariantCheck(a) {
			withBrownout = f
		}
	}
	if withBrownout == nil || len(r.All()) != 2 {
		t.Fatalf("found %d violations, the brownout's %v; want both invariants", len(r.All()), withBrownout)
	}
	final := r.Trials[withBrownout.Final]
	if len(final.Faults) != 1 || !strings.Contains(final.Faults[0], "kind: brownout") {
		t.Errorf("the brownout's invariant shrunk to %v; want the brownout kept", final.Faults)
	}
	for _, tr := range r.Trials {
		if tr.Reproduced && !strings.Contains(strings.Join(tr.Faults, " "), "kind: brownout") && r.Trials[tr.From].has(withBrownout.Violation.ID()) {
			t.Errorf("shrink step %d (%s) was kept on another invariant", tr.N, tr.Change)
		}
	}
}

// decoyed is metastable, but once a violation has been found every later run also breaks
// an invariant, whatever its faults: shrinking must keep only the steps that still show
// the violation it shrinks, not any violation.
func decoyed(counts *int) Evaluator {
	inner, found := metastable(counts), false
	return func(ctx context.Context, runs []Run) ([]Outcome, error) {
		out, err := inner(ctx, runs)
		if err != nil {
			return nil, err
		}
		for i := range out {
			if found {
				out[i].Violations = append(out[i].Violations, Violation{Kind: Invariant, Message: "decoy"})
			}
			found = found || len(out[i].Violations) > 0
		}
		return out, nil
	}
}

// TestShrinkKeepsItsOwnViolation: with another violation in every later run, the liveness
// violation is still shrunk to the brownout that causes it: no step is kept on the other.
func TestShrinkKeepsItsOwnViolation(t *testing.T) {
	s := load(t)
	runs := 0
	r, err := Hunt(context.Background(), config(s, 1), decoyed(&runs))
	if err != nil {
		t.Fatal(err)
	}
	id := "liveness:" + LivenessMetric
	var live *Found
	for _, f := range r.All() {
		if final := r.Trials[f.Final]; !final.has(f.Violation.ID()) {
			t.Errorf("%s shrunk to trial %d, which does not show it: %+v", f.Violation.ID(), f.Final, final.Violations)
		}
		if f.Violation.ID() == id {
			live = f
		}
	}
	if live == nil {
		t.Fatalf("no %s among %d findings", id, len(r.All()))
	}
	final := r.Trials[live.Final]
	if len(live.Removed) == 0 || len(final.Faults) != 1 || !strings.Contains(final.Faults[0], "kind: brownout") {
		t.Errorf("%d steps kept; shrunk to %v with %+v; want the one brownout", len(live.Removed), final.Faults, final.Violations)
	}
}

// TestWindowEnd: a drawn window ends at its start plus its length; the latest of them and
// of the scenario's own windows is the state's.
func TestWindowEnd(t *testing.T) {
	s := load(t)
	sr := newSearch(config(s, 1), never(new(int)))
	entry := slices.IndexFunc(s.Hunt.Faults, func(f scenarios.HuntFault) bool { return f.Kind == "outage" })
	f := s.Hunt.Faults[entry]
	vals := make([]string, len(f.Params))
	for k, p := range f.Params {
		vals[k] = "1m"
		if p.Path == "for" {
			vals[k] = "3m"
		}
	}
	st := sr.base.clone()
	st.draws = []draw{{entry: entry, vals: vals, at: "20m"}, {entry: entry, vals: vals, at: "10m"}}
	if got := sr.windowEnd(st); got != 23*time.Minute {
		t.Errorf("window end %v, want 20m + 3m", got)
	}
}

// TestHuntBudgets: a budget that is not a whole number of rounds is spent exactly; no
// budget at all is the default one; shrink: 0 runs no control and no shrink step.
func TestHuntBudgets(t *testing.T) {
	s := load(t)
	cfg := config(s, 1)
	cfg.Hunt.Budget = 21
	runs := 0
	r, err := Hunt(context.Background(), cfg, never(&runs))
	if err != nil {
		t.Fatal(err)
	}
	if r.Runs != 21 || runs != 21 || r.Budget != 21 {
		t.Errorf("budget 21: %d runs (%d evaluated), budget %d", r.Runs, runs, r.Budget)
	}
	cfg.Hunt.Budget, cfg.Hunt.BudgetTime = 0, 0
	runs = 0
	if r, err = Hunt(context.Background(), cfg, never(&runs)); err != nil {
		t.Fatal(err)
	}
	if r.Runs != scenarios.DefaultHuntBudget || r.Budget != scenarios.DefaultHuntBudget {
		t.Errorf("no budget: %d runs, budget %d; want the default %d", r.Runs, r.Budget, scenarios.DefaultHuntBudget)
	}
	cfg = config(s, 1)
	cfg.Hunt.Shrink = 0
	runs = 0
	if r, err = Hunt(context.Background(), cfg, metastable(&runs)); err != nil {
		t.Fatal(err)
	}
	if r.Found == nil || r.ShrinkRuns != 0 || runs != r.Runs || len(r.Found.Removed) != 0 || r.Found.Final != r.Found.Trial {
		t.Errorf("shrink 0: found %+v, %d shrink runs, %d evaluated of %d", r.Found, r.ShrinkRuns, runs, r.Runs)
	}
	data, err := FoundFile(s, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "nothing could be removed") || strings.Contains(string(data), " by:\n") {
		t.Errorf("nothing removed, the found file says:\n%s", data)
	}
}

// TestHuntSaysWhatItChecks: the liveness bound is reported, and with none set it is left
// out of the result and of its checks.
func TestHuntSaysWhatItChecks(t *testing.T) {
	s := load(t)
	cfg := config(s, 1)
	cfg.Hunt.Budget = 8
	r, err := Hunt(context.Background(), cfg, never(new(int)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Liveness != "15m" || !slices.ContainsFunc(r.Checks, func(c string) bool { return strings.HasPrefix(c, "liveness:") }) {
		t.Errorf("liveness %q, checks %q", r.Liveness, r.Checks)
	}
	cfg.Hunt.Liveness = 0
	if r, err = Hunt(context.Background(), cfg, never(new(int))); err != nil {
		t.Fatal(err)
	}
	if r.Liveness != "" || slices.ContainsFunc(r.Checks, func(c string) bool { return strings.HasPrefix(c, "liveness:") }) {
		t.Errorf("no liveness: liveness %q, checks %q", r.Liveness, r.Checks)
	}
}

// TestShrinkKeepsArrivalsForLiveness: under Poisson arrivals (120/h), cutting the
// investigations for a liveness violation stops at the arrivals that reach past the last
// window by liveness + 5 minutes.
func TestShrinkKeepsArrivalsForLiveness(t *testing.T) {
	s := load(t)
	r, err := Hunt(context.Background(), config(s, 1), metastable(new(int)))
	if err != nil {
		t.Fatal(err)
	}
	final := r.Trials[r.Found.Final]
	need := newSearch(config(s, 1), nil).windowEnd(final.state) + 15*time.Minute + 5*time.Minute
	if min := int(math.Ceil(120.0 / 3600 * need.Seconds())); final.Investigations < min || final.Investigations >= s.Workload.Investigations {
		t.Errorf("shrunk to %d investigations; want at least %d (arrivals past %s) and fewer than %d", final.Investigations, min, need, s.Workload.Investigations)
	}
}

// TestHuntTimeBudget: under a time budget the hunt runs whole rounds until the clock (here
// one that moves a second a reading) has passed it, and reports its progress to the end.
func TestHuntTimeBudget(t *testing.T) {
	s := load(t)
	cfg := config(s, 1)
	cfg.Hunt.Budget, cfg.Hunt.BudgetTime = 0, 10*time.Second
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { now = now.Add(time.Second); return now }
	var last [2]int
	calls := 0
	cfg.Progress = func(spent, budget int, _ string) { calls++; last = [2]int{spent, budget} }
	r, err := Hunt(context.Background(), cfg, never(new(int)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Budget != 0 || r.BudgetTime != "10s" || r.Runs == 0 || r.Runs%RoundSize != 0 {
		t.Errorf("time budget: %d runs, budget %d, time %q", r.Runs, r.Budget, r.BudgetTime)
	}
	if calls == 0 || last != [2]int{r.Runs, 0} {
		t.Errorf("progress told %d times, last %v; want the %d runs and budget 0", calls, last, r.Runs)
	}
}

// TestEscalateStaysInRange: escalating a near miss keeps each drawn fault's entry, moves
// its values within [0, 1], and adds at most one fault.
func TestEscalateStaysInRange(t *testing.T) {
	s := load(t)
	sr := newSearch(config(s, 3), nil)
	near := sr.base.clone()
	for e := range s.Hunt.Faults {
		near.draws = append(near.draws, sr.drawEntry(e))
	}
	added, moved := 0, 0
	for range 30 {
		out := sr.escalate(near)
		if len(out) < len(near.draws) || len(out) > len(near.draws)+1 {
			t.Fatalf("escalated %d faults into %d", len(near.draws), len(out))
		}
		added += len(out) - len(near.draws)
		for i, d := range near.draws {
			if out[i].entry != d.entry {
				t.Errorf("fault %d changed entry %d to %d", i, d.entry, out[i].entry)
			}
			for k, u := range out[i].u {
				if u < 0 || u > 1 {
					t.Errorf("fault %d value %d at %v, outside [0, 1]", i, k, u)
				}
				if u != d.u[k] {
					moved++
				}
			}
		}
	}
	// A fault joins with probability 1/3 a time: 30 tries add none with probability
	// (2/3)^30 < 10^-5, and all 30 with probability 3^-30.
	if added == 0 || added == 30 || moved == 0 {
		t.Errorf("30 escalations added %d faults and moved %d values", added, moved)
	}
}

// TestWindowEndOfTheScenario: the scenario's own windows count, even when its drawn ones
// end earlier.
func TestWindowEndOfTheScenario(t *testing.T) {
	s := load(t, "faults=[{kind: outage, tool: search, at: 50m, for: 5m}]")
	sr := newSearch(config(s, 1), nil)
	if got := sr.windowEnd(sr.base.clone()); got != 55*time.Minute {
		t.Errorf("window end %v, want 55m", got)
	}
}

// TestRefusalsWhileShrinkingSpendNoBudget: only search trials a scenario refuses count as
// refused; a refused shrink step is just not kept.
func TestRefusalsWhileShrinkingSpendNoBudget(t *testing.T) {
	s := load(t)
	inner, found := metastable(new(int)), false
	eval := func(ctx context.Context, runs []Run) ([]Outcome, error) {
		out, err := inner(ctx, runs)
		was := found // a batch after the one that found the violation
		for i := range out {
			if was {
				out[i] = Outcome{Refused: "refused while shrinking"}
			}
			found = found || len(out[i].Violations) > 0
		}
		return out, err
	}
	r, err := Hunt(context.Background(), config(s, 1), eval)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found == nil || r.Refused != 0 || len(r.Found.Removed) != 0 {
		t.Errorf("found %+v, %d refused; want a finding, nothing refused in the search, nothing removed", r.Found, r.Refused)
	}
}

// TestNearMissesAreEscalated: a search that only comes near a violation escalates its
// nearest miss (a trial with drawn faults) in later rounds.
func TestNearMissesAreEscalated(t *testing.T) {
	s := load(t)
	eval := func(_ context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i, r := range runs {
			out[i] = Outcome{Ran: true, Violations: []Violation{}}
			if strings.Contains(r.Overrides[0].Value, "kind: outage") {
				out[i].Closeness = 0.5
			}
		}
		return out, nil
	}
	r, err := Hunt(context.Background(), config(s, 1), eval)
	if err != nil {
		t.Fatal(err)
	}
	esc := 0
	for _, tr := range r.Trials {
		if tr.Phase == "escalate" {
			esc++
			if tr.N < RoundSize {
				t.Errorf("trial %d escalated in the first round", tr.N)
			}
		}
	}
	if esc == 0 {
		t.Errorf("no trial escalated a near miss in %d trials", len(r.Trials))
	}
}

// TestWeakenStopsNearTheMild: when every brownout keeps the violation, weakening halves the
// distance of its slowdown to the mild end (1.2) until it is within 2% of the range
// (0.176): the last value lies within [0.088, 0.176) of it.
func TestWeakenStopsNearTheMild(t *testing.T) {
	s := load(t)
	eval := func(_ context.Context, runs []Run) ([]Outcome, error) {
		out := make([]Outcome, len(runs))
		for i, r := range runs {
			out[i] = Outcome{Ran: true, Violations: []Violation{}}
			if strings.Contains(r.Overrides[0].Value, "kind: brownout") {
				out[i].Violations = []Violation{{Kind: Liveness, Metric: LivenessMetric, Message: "x"}}
			}
		}
		return out, nil
	}
	r, err := Hunt(context.Background(), config(s, 1), eval)
	if err != nil {
		t.Fatal(err)
	}
	final := r.Trials[r.Found.Final]
	if len(final.Faults) != 1 {
		t.Fatalf("shrunk to %v", final.Faults)
	}
	x, _ := strconv.ParseFloat(slowdownRe.FindStringSubmatch(final.Faults[0])[1], 64)
	// The written value has 4 significant digits: allow their rounding.
	if d := x - 1.2; d < 0.088-0.001 || d >= 0.176 {
		t.Errorf("slowdown %v, %v above the mild end; want within [0.088, 0.176)", x, d)
	}
}

// TestShrinkBudgetHoldsWithControls: workload steps run with their controls, two runs a
// candidate; a small shrink budget is still never overspent, and every kept step makes the
// trial strictly smaller.
func TestShrinkBudgetHoldsWithControls(t *testing.T) {
	s := load(t)
	for _, budget := range []int{5, 7, 12, 60} {
		cfg := config(s, 1)
		cfg.Hunt.Shrink = budget
		runs := 0
		r, err := Hunt(context.Background(), cfg, metastable(&runs))
		if err != nil {
			t.Fatal(err)
		}
		if r.Found == nil || r.ShrinkRuns > budget || runs != r.Runs+r.ShrinkRuns {
			t.Errorf("shrink budget %d: %d shrink runs, %d evaluated of %d", budget, r.ShrinkRuns, runs, r.Runs+r.ShrinkRuns)
		}
		for _, tr := range r.Trials {
			if !tr.Reproduced {
				continue
			}
			from := r.Trials[tr.From]
			if tr.Phase == "workload" && tr.Investigations >= from.Investigations && durOf(t, tr.Horizon) >= durOf(t, from.Horizon) {
				t.Errorf("shrink budget %d: step %d (%s) kept without cutting the workload", budget, tr.N, tr.Change)
			}
		}
	}
}
