package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// Metrics is one row of the `metrics` view: every metric of docs/metrics.md for one run.
// The SQL in views/*.sql is the definition; this struct only carries its values.
//
// A ratio whose denominator is zero (no completion, no failed attempt, no recovery episode,
// ...) is undefined: NULL in SQL, NaN here, null in JSON, and Value reports it as absent.
type Metrics struct {
	RunID string `json:"run_id"`

	CompletionRate        float64 `json:"completion_rate"`
	CorrectCompletionRate float64 `json:"correct_completion_rate"`
	ValidationPassRate    float64 `json:"validation_pass_rate"`
	RetryAmplification    float64 `json:"retry_amplification"`
	DuplicateSideEffects  int64   `json:"duplicate_side_effects"`
	DiscardedResults      int64   `json:"discarded_results"`
	MedianRecoveryTime    float64 `json:"median_recovery_time"` // seconds
	P95RecoveryTime       float64 `json:"p95_recovery_time"`    // seconds
	// GoodputRecoveryTime is NaN (null) when goodput never came back, or without a fault window.
	GoodputRecoveryTime     float64 `json:"goodput_recovery_time"` // seconds
	FullScopeCompletionRate float64 `json:"full_scope_completion_rate"`
	HumanInterventionRate   float64 `json:"human_intervention_rate"`
	TerminatedRate          float64 `json:"terminated_rate"`
	TokensPerCompletion     float64 `json:"tokens_per_completion"`
	ComputePerCompletion    float64 `json:"compute_per_completion"` // compute-unit seconds
	WastedComputeRatio      float64 `json:"wasted_compute_ratio"`
	WastedTokenRatio        float64 `json:"wasted_token_ratio"`
	CorrelatedFailureShare  float64 `json:"correlated_failure_share"`
	Makespan                float64 `json:"makespan"` // seconds of simulated time
	Events                  int64   `json:"events"`

	// capacity
	MedianPendingTime float64 `json:"median_pending_time"` // seconds
	BacklogGrowth     float64 `json:"backlog_growth"`      // roots per hour
	PeakBacklog       int64   `json:"peak_backlog"`

	// money, in the scenario's currency
	CostPerCompletion float64 `json:"cost_per_completion"`
	WastedCostRatio   float64 `json:"wasted_cost_ratio"`

	Started    int64 `json:"started"`
	Completed  int64 `json:"completed"`
	Terminated int64 `json:"terminated"`
	// TerminationReasons counts terminated root investigations by reason ("unspecified"
	// when the engine gave none). Its values sum to Terminated.
	TerminationReasons map[string]int64 `json:"termination_reasons"`
}

// MetricNames lists the metrics in the order of the table in package metric: the metrics
// of docs/metrics.md, then the counts behind the rates. Each is a column of the `metrics`
// view and a key of Metrics' JSON.
var MetricNames = metric.Names()

// metricIndex maps a metric name to its field index in Metrics.
var metricIndex = func() map[string]int {
	t := reflect.TypeFor[Metrics]()
	idx := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		idx[jsonName(t.Field(i))] = i
	}
	for _, name := range MetricNames {
		if _, ok := idx[name]; !ok {
			panic("analysis: metric " + name + " has no field in Metrics")
		}
	}
	return idx
}()

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// IsMetric reports whether name is a metric Value knows: one of MetricNames, or
// "terminated_<reason>" for any termination reason.
func IsMetric(name string) bool { return metric.Known(name) }

// Value returns the metric called name (one of MetricNames, or
// "terminated_<reason>"). ok is false when the name is not a metric, or when the metric is
// undefined for this run (its denominator is zero); the value is then NaN.
func (m Metrics) Value(name string) (v float64, ok bool) {
	if i, found := metricIndex[name]; found && slices.Contains(MetricNames, name) {
		switch f := reflect.ValueOf(m).Field(i); f.Kind() {
		case reflect.Float64:
			v = f.Float()
		case reflect.Int64:
			v = float64(f.Int())
		}
		return v, !math.IsNaN(v)
	}
	if reason, found := strings.CutPrefix(name, metric.ReasonPrefix); found && reason != "" {
		return float64(m.TerminationReasons[reason]), true
	}
	return math.NaN(), false
}

// Better says which direction of a metric is an improvement of the recovery policy: +1 when
// higher is better, −1 when lower is better, 0 when the metric describes the scenario rather
// than the policy or the name is unknown (the table in package metric). A CI gate flags a
// change against this direction as a regression.
func Better(name string) int { return int(metric.Better(name)) }

// MarshalJSON writes the metrics in field order, with undefined (NaN) values as null, which
// encoding/json would otherwise refuse.
func (m Metrics) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	v := reflect.ValueOf(m)
	t := v.Type()
	for i := range t.NumField() {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(jsonName(t.Field(i)))
		buf.Write(key)
		buf.WriteByte(':')
		val := v.Field(i).Interface()
		if f, ok := val.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			val = nil
		}
		b, err := json.Marshal(val)
		if err != nil {
			return nil, fmt.Errorf("analysis: metric %s: %w", jsonName(t.Field(i)), err)
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote; a null or missing ratio becomes NaN.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	type plain Metrics
	p := plain{}
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Float64 {
			f.SetFloat(math.NaN())
		}
	}
	// A null leaves a field untouched, so pre-set NaNs survive exactly for nulls.
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = Metrics(p)
	return nil
}

// set stores the value of the metric called name (one of MetricNames).
func (m *Metrics) set(name string, v float64) error {
	i, ok := metricIndex[name]
	if !ok {
		return fmt.Errorf("analysis: %s is not a metric", name)
	}
	switch f := reflect.ValueOf(m).Elem().Field(i); f.Kind() {
	case reflect.Float64:
		f.SetFloat(v)
	case reflect.Int64:
		if v != math.Trunc(v) {
			return fmt.Errorf("analysis: metric %s = %v, want a whole count", name, v)
		}
		f.SetInt(int64(v))
	}
	return nil
}
