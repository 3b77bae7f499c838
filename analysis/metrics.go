package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/metric"
)

// Metrics is one row of the `metrics` view: every metric of the table in package metric
// for one run. The SQL in views/*.sql is the definition; Metrics only carries its values,
// by name, so a new metric needs no change here.
//
// A ratio whose denominator is zero (no completion, no failed attempt, no recovery episode,
// ...) is undefined: NULL in SQL, NaN here, null in JSON, and Value reports it as absent.
type Metrics struct {
	RunID string
	// TerminationReasons counts terminated root investigations by reason ("unspecified"
	// when the engine gave none). Its values sum to the terminated count.
	TerminationReasons map[string]int64
	// Currency is the currency of the money metrics, from the run's prices; "" when
	// unpriced. Text output prints it; JSON leaves it out (summary.json has its own).
	Currency string

	values []float64 // by metric.Index; nil reads as all zero
}

// MetricNames lists the metrics in the order of the table in package metric: the metrics
// of docs/metrics.md, then the counts behind the rates. Each is a column of the `metrics`
// view and a key of Metrics' JSON.
var MetricNames = metric.Names()

// IsMetric reports whether name is a metric Value knows: one of MetricNames, or
// "terminated_<reason>" for any termination reason.
func IsMetric(name string) bool { return metric.Known(name) }

// Value returns the metric called name (one of MetricNames, or "terminated_<reason>"). ok
// is false when the name is not a metric, or when the metric is undefined for this run (its
// denominator is zero); the value is then NaN.
func (m Metrics) Value(name string) (v float64, ok bool) {
	if i := metric.Index(name); i >= 0 {
		if m.values != nil {
			v = m.values[i]
		}
		return v, !math.IsNaN(v)
	}
	if reason, found := strings.CutPrefix(name, metric.ReasonPrefix); found && reason != "" {
		return float64(m.TerminationReasons[reason]), true
	}
	return math.NaN(), false
}

// Get is Value without the flag: NaN when undefined or not a metric.
func (m Metrics) Get(name string) float64 {
	v, _ := m.Value(name)
	return v
}

// Set stores the value of the metric called name, one of MetricNames; a count must be a
// whole number. Metrics is a value: Set copies the values, so a copy made before it keeps
// its own.
func (m *Metrics) Set(name string, v float64) error {
	i := metric.Index(name)
	if i < 0 {
		return fmt.Errorf("analysis: %s is not a metric", name)
	}
	if all := metric.All[i]; all.Unit == metric.Count && v != math.Trunc(v) {
		return fmt.Errorf("analysis: metric %s = %v, want a whole count", name, v)
	}
	vals := make([]float64, len(metric.All))
	copy(vals, m.values)
	vals[i] = v
	m.values = vals
	return nil
}

// MarshalJSON writes run_id, the metrics in table order and termination_reasons, with
// undefined (NaN) values as null, which encoding/json would otherwise refuse.
func (m Metrics) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	id, _ := json.Marshal(m.RunID)
	buf.WriteString(`{"run_id":`)
	buf.Write(id)
	for _, name := range MetricNames {
		key, _ := json.Marshal(name)
		buf.WriteByte(',')
		buf.Write(key)
		buf.WriteByte(':')
		v, _ := m.Value(name)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			buf.WriteString("null")
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("analysis: metric %s: %w", name, err)
		}
		buf.Write(b)
	}
	reasons, err := json.Marshal(m.TerminationReasons)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`,"termination_reasons":`)
	buf.Write(reasons)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote; a null or missing metric becomes NaN.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := Metrics{values: make([]float64, len(metric.All))}
	if id, ok := raw["run_id"]; ok {
		if err := json.Unmarshal(id, &out.RunID); err != nil {
			return fmt.Errorf("analysis: run_id: %w", err)
		}
	}
	if r, ok := raw["termination_reasons"]; ok {
		if err := json.Unmarshal(r, &out.TerminationReasons); err != nil {
			return fmt.Errorf("analysis: termination_reasons: %w", err)
		}
	}
	for i, name := range MetricNames {
		var v *float64
		if r, ok := raw[name]; ok {
			if err := json.Unmarshal(r, &v); err != nil {
				return fmt.Errorf("analysis: metric %s: %w", name, err)
			}
		}
		out.values[i] = math.NaN()
		if v != nil {
			out.values[i] = *v
		}
	}
	*m = out
	return nil
}

// NewMetrics returns the metrics row of run runID from its values in MetricNames order (NaN:
// undefined), its termination reasons and its currency: a row computed without the view,
// by package metric/compute, which a test holds equal to the view's.
func NewMetrics(runID string, values []float64, reasons map[string]int64, currency string) (Metrics, error) {
	if len(values) != len(MetricNames) {
		return Metrics{}, fmt.Errorf("analysis: %d metric values, want %d", len(values), len(MetricNames))
	}
	m := Metrics{RunID: runID, TerminationReasons: reasons, Currency: currency}
	if m.TerminationReasons == nil {
		m.TerminationReasons = map[string]int64{}
	}
	if err := metricValues(&m, slices.Clone(values)); err != nil {
		return Metrics{}, err
	}
	return m, nil
}

// metricValues checks a whole row read from the view (in MetricNames order) and keeps it.
func metricValues(m *Metrics, vals []float64) error {
	for i, v := range vals {
		if metric.All[i].Unit == metric.Count && v != math.Trunc(v) && !math.IsNaN(v) {
			return fmt.Errorf("analysis: metric %s = %v, want a whole count", MetricNames[i], v)
		}
	}
	m.values = slices.Clip(vals)
	return nil
}
