package analysis

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/metric"
)

// sampleMetrics has a distinct value in every metric, so a mix-up of two shows.
func sampleMetrics() Metrics {
	m := Metrics{RunID: "fleet-s1", TerminationReasons: map[string]int64{"policy_violation": 2, "retries_exhausted": 5}}
	for i, name := range MetricNames {
		if err := m.Set(name, float64(100+i)); err != nil {
			panic(err)
		}
	}
	return m
}

func TestValueByName(t *testing.T) {
	m := sampleMetrics()
	seen := map[string]bool{}
	for i, name := range MetricNames {
		if seen[name] {
			t.Errorf("MetricNames lists %s twice", name)
		}
		seen[name] = true
		got, ok := m.Value(name)
		if !ok || got != float64(100+i) {
			t.Errorf("Value(%q) = %v, %v; want %d, true", name, got, ok, 100+i)
		}
		if !IsMetric(name) {
			t.Errorf("IsMetric(%q) = false", name)
		}
	}
	if err := m.Set("started", 1.5); err == nil {
		t.Error("Set(started, 1.5): no error for a fractional count")
	}
	if err := m.Set("no_such_metric", 1); err == nil {
		t.Error("Set(no_such_metric): no error")
	}
	// Set copies: a copy taken before keeps its value.
	before := m
	m.Set("makespan", 1)
	if before.Get("makespan") == 1 {
		t.Error("Set changed a copy of the metrics")
	}
	var zero Metrics
	if v, ok := zero.Value("completion_rate"); !ok || v != 0 {
		t.Errorf("zero Metrics: Value = %v, %v; want 0, true", v, ok)
	}
	if v, ok := m.Value("terminated_retries_exhausted"); !ok || v != 5 {
		t.Errorf("Value(terminated_retries_exhausted) = %v, %v; want 5, true", v, ok)
	}
	if v, ok := m.Value("terminated_budget_exceeded"); !ok || v != 0 {
		t.Errorf("Value of an absent reason = %v, %v; want 0, true", v, ok)
	}
	for _, bad := range []string{"", "completion", "run_id", "termination_reasons", "terminated_", "Completion_Rate"} {
		if v, ok := m.Value(bad); ok || !math.IsNaN(v) {
			t.Errorf("Value(%q) = %v, %v; want NaN, false", bad, v, ok)
		}
		if IsMetric(bad) {
			t.Errorf("IsMetric(%q) = true", bad)
		}
	}
	m.Set("p95_recovery_time", math.NaN())
	if v, ok := m.Value("p95_recovery_time"); ok || !math.IsNaN(v) {
		t.Errorf("undefined p95_recovery_time: Value = %v, %v; want NaN, false", v, ok)
	}
}

// Every metric of the metric table has its row in docs/metrics.md; the order is the table's
// to choose (summaries and the JSON follow it), so no list of names is kept here.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range MetricNames {
		if !strings.Contains(string(doc), "| `"+name+"` |") {
			t.Errorf("docs/metrics.md has no row for the metric %s", name)
		}
	}
}

func TestBetter(t *testing.T) {
	higher := []string{"completion_rate", "correct_completion_rate", "validation_pass_rate", "completed", "full_scope_completion_rate",
		"episode_recovery_rate", "goodput_recovered"}
	neutral := []string{"correlated_failure_share", "events", "started", "no_such_metric"}
	for _, name := range append(MetricNames, "terminated_policy_violation", "no_such_metric") {
		want := -1
		switch {
		case slices.Contains(higher, name):
			want = +1
		case slices.Contains(neutral, name):
			want = 0
		}
		if got := int(metric.Better(name)); got != want {
			t.Errorf("Better(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestMetricsJSON(t *testing.T) {
	m := sampleMetrics()
	m.Set("median_recovery_time", math.NaN())
	m.Set("tokens_per_completion", math.NaN())
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("unmarshal into a map: %v\n%s", err, b)
	}
	for _, name := range append(MetricNames, "run_id", "termination_reasons") {
		if _, ok := raw[name]; !ok {
			t.Errorf("JSON has no key %q: %s", name, b)
		}
	}
	if raw["median_recovery_time"] != nil || raw["tokens_per_completion"] != nil {
		t.Errorf("undefined metrics should be null: %s", b)
	}
	if !strings.HasPrefix(string(b), `{"run_id":"fleet-s1","completion_rate":`) {
		t.Errorf("JSON does not follow field order: %s", b)
	}
	var back Metrics
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	if !math.IsNaN(back.Get("median_recovery_time")) || !math.IsNaN(back.Get("tokens_per_completion")) {
		t.Errorf("null did not come back as NaN: %+v", back)
	}
	back.Set("median_recovery_time", m.Get("median_recovery_time"))
	back.Set("tokens_per_completion", m.Get("tokens_per_completion"))
	bb, _ := json.Marshal(back)
	if string(bb) != string(b) {
		t.Errorf("round trip changed the metrics:\n got %s\nwant %s", bb, b)
	}
}
