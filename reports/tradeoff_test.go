//go:build duckdb_arrow

package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// giveUp is the shape of the pair that used to fool compare: B abandons work (completes
// ~22% less, a third of its episodes never recover, so its median reads never) while the
// few recoveries it keeps are fast, and with fewer open investigations its backlog is
// smaller. Five seeds, paired.
func giveUp() (a, b Sample) {
	seeds := []uint64{1, 2, 3, 4, 5}
	a = Sample{Label: "a", Seeds: seeds, RunIDs: []string{"1", "2", "3", "4", "5"}, Values: map[string][]float64{
		"completion_rate":       {1, 0.999, 0.999, 1, 1},
		"episode_recovery_rate": {1, 0.999, 0.999, 1, 1},
		"median_recovery_time":  {1355, 1412, 1438, 1481, 1363},
		"p95_recovery_time":     {2127, 2173, 2190, 2249, 2128},
		"peak_backlog":          {1060, 1070, 1065, 1075, 1058},
		"tokens_per_completion": {18400, 18500, 18450, 18470, 18420},
	}}
	b = Sample{Label: "b", Seeds: seeds, RunIDs: a.RunIDs, Values: map[string][]float64{
		"completion_rate":       {0.78, 0.77, 0.79, 0.78, 0.78},
		"episode_recovery_rate": {0.32, 0.30, 0.29, 0.30, 0.33},
		"median_recovery_time":  {nan, nan, nan, nan, nan},
		"p95_recovery_time":     {nan, nan, nan, nan, nan},
		"peak_backlog":          {430, 440, 436, 438, 433},
		"tokens_per_completion": {18000, 18100, 18050, 18070, 18020},
	}}
	return a, b
}

var nan = math.NaN()

// B is never called better on a metric when it is significantly worse on one that ranks
// above it; its recovery times read never (worse than any time), and the verdict is a
// trade-off led by A.
func TestCompareSeesTradeOffs(t *testing.T) {
	a, b := giveUp()
	names := []string{"completion_rate", "median_recovery_time", "p95_recovery_time", "episode_recovery_rate", "tokens_per_completion", "peak_backlog"}
	c := Compare(a, b, CompareOptions{Metrics: names, Seed: 1})
	got := map[string]MetricDiff{}
	for _, d := range c.Metrics {
		got[d.Metric] = d
		if d.Better == "b" {
			t.Errorf("%s: B called better although it completes 22%% less (%+v)", d.Metric, d)
		}
	}
	for _, m := range []string{"median_recovery_time", "p95_recovery_time"} {
		if d := got[m]; d.Better != "a" || d.NeverB != 5 || !math.IsInf(d.B, 1) {
			t.Errorf("%s: %+v; want A better, B never in all 5 runs", m, d)
		}
	}
	for _, m := range []string{"tokens_per_completion", "peak_backlog"} {
		d := got[m]
		if d.TradedSide != "b" || d.TradedFor != "completion_rate" || !strings.Contains(d.Note, "only because it completes 22% less") {
			t.Errorf("%s: %+v; want B's gain traded for completion_rate", m, d)
		}
	}
	if !strings.HasPrefix(got["tokens_per_completion"].Note, "B cheaper") || !strings.HasPrefix(got["peak_backlog"].Note, "B lower") {
		t.Errorf("notes %q, %q", got["tokens_per_completion"].Note, got["peak_backlog"].Note)
	}
	if c.Dominance != DominanceTrade || c.Leader != "a" {
		t.Errorf("dominance %q led by %q, want a trade-off led by A", c.Dominance, c.Leader)
	}
	var text, js bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"never", "* B cheaper only because it completes 22% less", "Verdict: trade-off"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var out struct {
		Dominance string `json:"dominance"`
		Leader    string `json:"leader"`
		Metrics   []struct {
			Metric    string `json:"metric"`
			Better    string `json:"better"`
			NeverB    int    `json:"never_b"`
			TradedFor string `json:"traded_for"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Dominance != DominanceTrade || out.Leader != "a" || out.Metrics[5].TradedFor != "completion_rate" || out.Metrics[1].NeverB != 5 {
		t.Errorf("JSON %s", js.String())
	}
}

// Without a loss above, a gain stands: B better on cost and worse on nothing dominates. With
// a loss on a metric ranked below (capacity), B's gain stands and A's capacity gain is the
// one traded: a trade-off that B leads.
func TestCompareDominance(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	ids := []string{"1", "2", "3", "4", "5"}
	a := Sample{Seeds: seeds, RunIDs: ids, Values: map[string][]float64{
		"completion_rate": {1, 1, 1, 1, 1}, "tokens_per_completion": {100, 101, 102, 103, 104},
		"peak_backlog": {10, 10, 11, 10, 10}}}
	b := Sample{Seeds: seeds, RunIDs: ids, Values: map[string][]float64{
		"completion_rate": {1, 1, 1, 1, 1}, "tokens_per_completion": {80, 81, 82, 83, 84},
		"peak_backlog": {10, 10, 11, 10, 10}}}
	c := Compare(a, b, CompareOptions{Metrics: []string{"completion_rate", "tokens_per_completion", "peak_backlog"}, Seed: 1})
	if c.Dominance != DominanceB || c.Metrics[1].Better != "b" {
		t.Errorf("dominance %q, tokens %+v; want B dominates", c.Dominance, c.Metrics[1])
	}
	b.Values["peak_backlog"] = []float64{20, 21, 22, 20, 21}
	c = Compare(a, b, CompareOptions{Metrics: []string{"completion_rate", "tokens_per_completion", "peak_backlog"}, Seed: 1})
	if d := c.Metrics[2]; c.Dominance != DominanceTrade || c.Leader != "b" || c.Metrics[1].Better != "b" || d.Better != "" || d.TradedFor != "tokens_per_completion" {
		t.Errorf("dominance %q led by %q, %+v; want a trade-off led by B, its cost gain kept, A's capacity gain traded", c.Dominance, c.Leader, c.Metrics)
	}
	c = Compare(a, a, CompareOptions{Metrics: []string{"completion_rate", "tokens_per_completion"}, Seed: 1})
	if c.Dominance != DominanceNoDiff {
		t.Errorf("A against itself: %q", c.Dominance)
	}
}

// check --baseline: a policy that gives up fails on the recovery times (never now), and its
// cheaper tokens are not called better; the verdict is a trade-off.
func TestCheckBaselineSeesTradeOffs(t *testing.T) {
	base := Summary{Scenario: "s", Metrics: map[string]float64{"completion_rate": 1, "median_recovery_time": 1400,
		"episode_recovery_rate": 1, "tokens_per_completion": 18400}}
	cur := Summary{Scenario: "s", Metrics: map[string]float64{"completion_rate": 0.78,
		"episode_recovery_rate": 0.3, "tokens_per_completion": 15000}}
	got := map[string]BaselineResult{}
	rs := CheckBaseline(cur, base, 0.05, nil)
	for _, r := range rs {
		got[r.Metric] = r
	}
	if r := got["median_recovery_time"]; r.Pass || !math.IsInf(r.Value, 1) || !strings.Contains(r.Message(), "never") {
		t.Errorf("median_recovery_time never now: %s (pass %v)", r.Message(), r.Pass)
	}
	tok := got["tokens_per_completion"]
	if !tok.Pass || tok.TradedFor != "completion_rate" || !strings.Contains(tok.Message(), "not better: cheaper only because it completes 22% less") {
		t.Errorf("tokens: %s", tok.Message())
	}
	if d := BaselineDominance(rs); d != DominanceTrade {
		t.Errorf("dominance %q, want a trade-off", d)
	}
	// Never in both: unchanged, passes; never in the baseline only: an improvement.
	never := Summary{Metrics: map[string]float64{"episode_recovery_rate": 0.3}}
	for _, r := range CheckBaseline(never, never, 0.05, nil) {
		if !r.Pass || r.Worse() != 0 {
			t.Errorf("never in both: %s", r.Message())
		}
	}
	fixed := Summary{Metrics: map[string]float64{"episode_recovery_rate": 0.9, "median_recovery_time": 600}}
	for _, r := range CheckBaseline(fixed, never, 0.05, nil) {
		if r.Metric == "median_recovery_time" && (!r.Pass || !r.Improved()) {
			t.Errorf("recovering where the baseline never did: %s", r.Message())
		}
	}
}

// An expectation on a recovery time that reads never fails and says never; without episodes
// or without a fault window it is "not measured", and goodput's reason is not a collapse.
func TestExpectationNeverAndNotMeasured(t *testing.T) {
	e := expectation(t, "p95_recovery_time", "<= 30m")
	rs := CheckExpectations(Summary{Metrics: map[string]float64{"episode_recovery_rate": 0.5}}, []scenarios.Expectation{e})
	if rs[0].Pass || !strings.Contains(rs[0].Message(), "never (fewer than 95%") {
		t.Errorf("never: %s", rs[0].Message())
	}
	g := expectation(t, "goodput_recovery_time", "<= 10m")
	rs = CheckExpectations(Summary{Metrics: map[string]float64{}}, []scenarios.Expectation{g})
	if rs[0].Pass || !strings.Contains(rs[0].Message(), "no fault window") || strings.Contains(rs[0].Message(), "never") {
		t.Errorf("no window: %s", rs[0].Message())
	}
	rs = CheckExpectations(Summary{Metrics: map[string]float64{"goodput_recovered": 0}}, []scenarios.Expectation{g})
	if rs[0].Pass || !strings.Contains(rs[0].Message(), "never (goodput did not come back") {
		t.Errorf("collapse: %s", rs[0].Message())
	}
	// Several seeds, one of which never recovered: the mean is never.
	sum := seedSummary("median_recovery_time", 100, 200)
	sum.Seeds = append(sum.Seeds, SeedRun{Seed: 3, Metrics: map[string]float64{"episode_recovery_rate": 0.2}})
	rs = CheckExpectations(sum, []scenarios.Expectation{expectation(t, "median_recovery_time", "<= 30m")})
	if rs[0].Pass || !math.IsInf(rs[0].Value, 1) {
		t.Errorf("one seed never: %s", rs[0].Message())
	}
}
