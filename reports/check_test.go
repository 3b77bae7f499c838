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

func expectation(t *testing.T, metric, text string) scenarios.Expectation {
	t.Helper()
	e, msg := scenarios.ParseExpectation(metric, text)
	if msg != "" {
		t.Fatalf("%s %s: %s", metric, text, msg)
	}
	return e
}

func seedSummary(metric string, vals ...float64) Summary {
	s := Summary{Scenario: "fleet", Seed: 1, Metrics: map[string]float64{}}
	sum := 0.0
	for i, v := range vals {
		s.Seeds = append(s.Seeds, SeedRun{Seed: uint64(1 + i), Metrics: map[string]float64{metric: v}})
		sum += v
	}
	s.Metrics[metric] = sum / float64(len(vals))
	return s
}

func TestCheckExpectationsSingleSeed(t *testing.T) {
	sum := Summary{Scenario: "fleet", Seed: 7, Metrics: map[string]float64{
		"completion_rate": 0.97, "duplicate_side_effects": 2, "retry_amplification": 1.2,
	}}
	exps := []scenarios.Expectation{
		expectation(t, "completion_rate", ">= 0.95"),
		expectation(t, "duplicate_side_effects", "== 0"),
		expectation(t, "retry_amplification", "between 1 and 1.5"),
		expectation(t, "p95_recovery_time", "<= 5m"), // undefined in this run
	}
	got := CheckExpectations(sum, exps)
	wantPass := []bool{true, false, true, false}
	for i, r := range got {
		if r.Pass != wantPass[i] {
			t.Errorf("%s: pass=%v, want %v (%s)", r.Expectation, r.Pass, wantPass[i], r.Message())
		}
		if !math.IsNaN(r.Lo) {
			t.Errorf("%s: a single seed has no interval, got [%v, %v]", r.Expectation, r.Lo, r.Hi)
		}
	}
	if msg := got[1].Message(); !strings.Contains(msg, "duplicate_side_effects == 0: measured 2") {
		t.Errorf("message %q does not state expectation and value", msg)
	}
	if msg := got[3].Message(); !strings.Contains(msg, "not measured") {
		t.Errorf("message %q does not say the metric is undefined", msg)
	}
}

// With seeds, a failure whose whole interval misses the bound is a regression; one whose
// interval reaches the passing side may be noise. The seeds' values are chosen far from and
// close to the bound, so the verdicts follow from the interval's width, not from luck.
func TestCheckExpectationsTellsRegressionFromNoise(t *testing.T) {
	e := expectation(t, "completion_rate", ">= 0.95")
	far := CheckExpectations(seedSummary("completion_rate", 0.80, 0.81, 0.79, 0.80, 0.82), []scenarios.Expectation{e})[0]
	if far.Pass || !far.Regression() || far.N != 5 {
		t.Errorf("far below the bound: %+v, want a failed regression over 5 seeds", far)
	}
	if !strings.Contains(far.Message(), "a regression, not seed noise") {
		t.Errorf("message %q does not call it a regression", far.Message())
	}
	near := CheckExpectations(seedSummary("completion_rate", 0.93, 0.97, 0.92, 0.96, 0.94), []scenarios.Expectation{e})[0]
	if near.Pass || near.Regression() {
		t.Errorf("mean 0.944 with seeds on both sides of 0.95: %+v, want failed but not a regression", near)
	}
	if !(near.Lo < 0.95 && 0.95 < near.Hi) {
		t.Errorf("interval [%v, %v] should straddle 0.95", near.Lo, near.Hi)
	}
	if !strings.Contains(near.Message(), "may be seed noise") {
		t.Errorf("message %q does not say it may be noise", near.Message())
	}
}

func TestCheckBaseline(t *testing.T) {
	base := Summary{Scenario: "fleet", Seed: 1, ConfigHash: "h", Metrics: map[string]float64{
		"completion_rate": 0.90, "retry_amplification": 1.50, "duplicate_side_effects": 0,
		"human_intervention_rate": 0.10, "events": 1000,
	}}
	cur := Summary{Scenario: "fleet", Seed: 1, ConfigHash: "h", Metrics: map[string]float64{
		"completion_rate":         0.86, // −4.4%: within 5%
		"retry_amplification":     1.60, // +6.7%, lower is better: beyond 5%
		"duplicate_side_effects":  1,    // baseline 0, no absolute tolerance: any rise fails
		"human_intervention_rate": 0.14, // +0.04, absolute tolerance 0.05: passes
		"events":                  5000, // no direction: not compared
	}}
	tols := []scenarios.Tolerance{{Metric: "human_intervention_rate", Value: 0.05}}
	got := map[string]BaselineResult{}
	for _, r := range CheckBaseline(cur, base, 0.05, tols) {
		got[r.Metric] = r
	}
	want := map[string]bool{"completion_rate": true, "retry_amplification": false, "duplicate_side_effects": false, "human_intervention_rate": true}
	for m, pass := range want {
		r, ok := got[m]
		if !ok {
			t.Errorf("%s not compared", m)
			continue
		}
		if r.Pass != pass {
			t.Errorf("%s: pass=%v, want %v (%s)", m, r.Pass, pass, r.Message())
		}
	}
	if _, ok := got["events"]; ok {
		t.Errorf("events has no better direction and must not be compared")
	}
	if !got["human_intervention_rate"].Absolute {
		t.Errorf("human_intervention_rate should use the scenario's absolute tolerance")
	}
	// Improvements pass whatever their size.
	better := Summary{Scenario: "fleet", Metrics: map[string]float64{"completion_rate": 0.99, "retry_amplification": 1.0}}
	for _, r := range CheckBaseline(better, base, 0.0, nil) {
		if !r.Pass {
			t.Errorf("%s improved but failed: %s", r.Metric, r.Message())
		}
	}
	bc := NewBaselineCheck("b.json", Summary{Scenario: "fleet", Seed: 2, ConfigHash: "other", Metrics: cur.Metrics}, base, 0.05, nil)
	if !bc.ConfigChanged || len(bc.Notes) != 2 {
		t.Errorf("notes %q: want a changed-config note and a different-seed note", bc.Notes)
	}
}

func TestCheckReportCountsAndJSON(t *testing.T) {
	rep := sampleReport(t)
	tests, failures, errors := rep.Counts()
	if tests != 6 || failures != 2 || errors != 1 {
		t.Fatalf("counts: %d tests, %d failures, %d errors; want 6, 2, 1", tests, failures, errors)
	}
	if !rep.Failed() {
		t.Fatal("a report with failures must be Failed")
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Pass      bool `json:"pass"`
		Failures  int  `json:"failures"`
		Scenarios []struct {
			Expectations []struct {
				Value *float64 `json:"value"`
				Pass  bool     `json:"pass"`
			} `json:"expectations"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(buf.Bytes(), &parsed); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, buf.String())
	}
	if parsed.Pass || parsed.Failures != 2 || parsed.Scenarios[0].Expectations[2].Value != nil {
		t.Errorf("JSON: pass=%v failures=%d, undefined value %v; want false, 2, null", parsed.Pass, parsed.Failures, parsed.Scenarios[0].Expectations[2].Value)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "PASS") || !strings.Contains(text.String(), "fleet.yaml:12") {
		t.Errorf("failures-only text shows a pass or lacks the file:line of the failure:\n%s", text.String())
	}
}

// sampleReport: scenario fleet with three expectations (one fails, one is undefined and so
// fails) and a baseline of one metric that passes; scenario broken did not run and has one
// expectation (an error); scenario bare has no expectations (one passing "run" case).
func sampleReport(t *testing.T) CheckReport {
	sum := Summary{Scenario: "fleet", Seed: 1, Metrics: map[string]float64{"completion_rate": 0.9, "duplicate_side_effects": 0}}
	exps := []scenarios.Expectation{
		expectation(t, "completion_rate", ">= 0.95"),
		expectation(t, "duplicate_side_effects", "== 0"),
		expectation(t, "p95_recovery_time", "< 60"),
	}
	exps[0].Line = 12
	fleet := ScenarioCheck{Scenario: "fleet", Source: "fleet.yaml", Seed: 1, Seeds: 1, Expectations: CheckExpectations(sum, exps),
		Baseline: &BaselineCheck{File: "b.json", Metrics: []BaselineResult{{Metric: "completion_rate", Baseline: 0.9, Value: 0.9, Direction: 1, Pass: true}}}}
	broken := ScenarioCheck{Scenario: "broken", Source: "embedded:broken", Seeds: 1, Error: "invariant violated",
		Expectations: CheckExpectations(Summary{}, []scenarios.Expectation{expectation(t, "completion_rate", "> 0")})}
	bare := ScenarioCheck{Scenario: "bare", Source: "bare.yaml", Seeds: 1}
	return CheckReport{Scenarios: []ScenarioCheck{fleet, broken, bare}}
}
