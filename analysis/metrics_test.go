package analysis

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sampleMetrics has a distinct value in every field, so a mix-up of two fields shows.
func sampleMetrics() Metrics {
	m := Metrics{RunID: "fleet-s1", TerminationReasons: map[string]int64{"policy_violation": 2, "retries_exhausted": 5}}
	v := reflect.ValueOf(&m).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.25)
		case reflect.Int64:
			f.SetInt(int64(100 + i))
		}
	}
	return m
}

func TestValueByName(t *testing.T) {
	m := sampleMetrics()
	typ := reflect.TypeFor[Metrics]()
	seen := map[string]bool{}
	for _, name := range MetricNames {
		if seen[name] {
			t.Errorf("MetricNames lists %s twice", name)
		}
		seen[name] = true
		i := metricIndex[name]
		want := reflect.ValueOf(m).Field(i)
		got, ok := m.Value(name)
		if !ok {
			t.Errorf("Value(%q): not found", name)
			continue
		}
		switch want.Kind() {
		case reflect.Float64:
			if got != want.Float() {
				t.Errorf("Value(%q) = %v, want field %s = %v", name, got, typ.Field(i).Name, want.Float())
			}
		case reflect.Int64:
			if got != float64(want.Int()) {
				t.Errorf("Value(%q) = %v, want field %s = %v", name, got, typ.Field(i).Name, want.Int())
			}
		default:
			t.Errorf("metric %s is field %s of kind %s; want float64 or int64", name, typ.Field(i).Name, want.Kind())
		}
		if !IsMetric(name) {
			t.Errorf("IsMetric(%q) = false", name)
		}
	}
	// Every numeric field is a listed metric, so no metric is silently missing from the list.
	for i := range typ.NumField() {
		if k := typ.Field(i).Type.Kind(); (k == reflect.Float64 || k == reflect.Int64) && !seen[jsonName(typ.Field(i))] {
			t.Errorf("field %s (%s) is not in MetricNames", typ.Field(i).Name, jsonName(typ.Field(i)))
		}
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
	m.P95RecoveryTime = math.NaN()
	if v, ok := m.Value("p95_recovery_time"); ok || !math.IsNaN(v) {
		t.Errorf("undefined p95_recovery_time: Value = %v, %v; want NaN, false", v, ok)
	}
}

// docs/metrics.md lists these names in this order; MetricNames must start with them.
func TestMetricNamesFollowDesign(t *testing.T) {
	design := []string{"completion_rate", "correct_completion_rate", "validation_pass_rate",
		"retry_amplification", "duplicate_side_effects", "discarded_results",
		"median_recovery_time", "p95_recovery_time", "goodput_recovery_time", "full_scope_completion_rate",
		"human_intervention_rate", "terminated_rate",
		"tokens_per_completion", "compute_per_completion", "wasted_compute_ratio", "wasted_token_ratio",
		"correlated_failure_share", "makespan", "events"}
	if !slices.Equal(MetricNames[:len(design)], design) {
		t.Errorf("MetricNames starts with %v, want the design's order %v", MetricNames[:len(design)], design)
	}
}

func TestBetter(t *testing.T) {
	higher := []string{"completion_rate", "correct_completion_rate", "validation_pass_rate", "completed", "full_scope_completion_rate"}
	neutral := []string{"correlated_failure_share", "events", "started", "no_such_metric"}
	for _, name := range append(MetricNames, "terminated_policy_violation", "no_such_metric") {
		want := -1
		switch {
		case slices.Contains(higher, name):
			want = +1
		case slices.Contains(neutral, name):
			want = 0
		}
		if got := Better(name); got != want {
			t.Errorf("Better(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestMetricsJSON(t *testing.T) {
	m := sampleMetrics()
	m.MedianRecoveryTime = math.NaN()
	m.TokensPerCompletion = math.NaN()
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
	if !math.IsNaN(back.MedianRecoveryTime) || !math.IsNaN(back.TokensPerCompletion) {
		t.Errorf("null did not come back as NaN: %+v", back)
	}
	back.MedianRecoveryTime, back.TokensPerCompletion = m.MedianRecoveryTime, m.TokensPerCompletion
	bb, _ := json.Marshal(back)
	if string(bb) != string(b) {
		t.Errorf("round trip changed the metrics:\n got %s\nwant %s", bb, b)
	}
}
