//go:build duckdb_arrow

package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/scenarios"
)

// Summary is a run folder's summary.json and the text a run prints: the metrics row, the
// seed and the digest; with several seeds also each seed's run and 95% bootstrap intervals.
type Summary struct {
	Scenario           string              `json:"scenario"`
	ConfigHash         string              `json:"config_hash"`
	Version            string              `json:"version"`
	Database           string              `json:"database,omitempty"`
	Seed               uint64              `json:"seed"`
	Digest             string              `json:"digest"`
	Status             string              `json:"status"`
	Currency           string              `json:"currency,omitempty"` // of the money metrics; "" when unpriced
	Metrics            map[string]float64  `json:"metrics"`            // the mean over seeds when several
	TerminationReasons map[string]int64    `json:"termination_reasons,omitempty"`
	Seeds              []SeedRun           `json:"seeds,omitempty"`
	Intervals          map[string]Interval `json:"intervals,omitempty"`
	// Unknown lists, for a run imported from traces (mayday import), the metrics its trace
	// cannot give and why; they are left out of Metrics.
	Unknown map[string]string `json:"unknown,omitempty"`
	// Import says, for each run an import wrote, how its spans were read (runs, services,
	// spans by role, unmapped span names, missing parents, orphan fragments).
	Import []analysis.ImportedRun `json:"import,omitempty"`

	windows int // the scenario's fault windows, so the text can say goodput never came back
}

// SeedRun is one seed's run inside a multi-seed summary.
type SeedRun struct {
	Seed        uint64             `json:"seed"`
	RunID       string             `json:"run_id"`
	Digest      string             `json:"digest"`
	Status      string             `json:"status"`
	Events      int64              `json:"events"`
	WallSeconds float64            `json:"wall_seconds"`
	Metrics     map[string]float64 `json:"metrics"`
	// TerminationReasons are the run's terminated investigations by reason (the runs of an
	// import of several services; a seed's are in the runs table).
	TerminationReasons map[string]int64 `json:"termination_reasons,omitempty"`
}

// Interval is a metric's mean across seeds with its bootstrap confidence interval. Lo and
// Hi are NaN when the interval is undefined (the metric has a value for one seed only); JSON
// writes them as null.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"`
}

// intervalJSON is Interval's JSON form: an undefined bound is null, since JSON has no NaN.
type intervalJSON struct {
	Mean *float64 `json:"mean"`
	Lo   *float64 `json:"lo"`
	Hi   *float64 `json:"hi"`
	N    int      `json:"n"`
}

func orNull(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes an undefined bound as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(intervalJSON{Mean: orNull(iv.Mean), Lo: orNull(iv.Lo), Hi: orNull(iv.Hi), N: iv.N})
}

// UnmarshalJSON reads a null bound as NaN.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var j intervalJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*iv = Interval{Mean: orNaN(j.Mean), Lo: orNaN(j.Lo), Hi: orNaN(j.Hi), N: j.N}
	return nil
}

// Confidence and Resamples are the bootstrap settings of every interval mayday prints.
const (
	Confidence = 0.95
	Resamples  = 2000
)

// MetricMap turns a metrics row into name → value for every metric of the table.
func MetricMap(m analysis.Metrics) map[string]float64 {
	out := make(map[string]float64, len(analysis.MetricNames))
	for _, name := range analysis.MetricNames {
		if v, ok := m.Value(name); ok {
			out[name] = v
		}
	}
	return out
}

// Summarize builds the summary of one or more seeds of one scenario.
func Summarize(sc *scenarios.Scenario, version string, outs []analysis.Outcome) Summary {
	first := outs[0]
	s := Summary{
		Scenario:   sc.Name,
		ConfigHash: sc.Hash(),
		Version:    version,
		Seed:       first.Seed,
		Digest:     first.Digest,
		Status:     "complete",
		Metrics:    MetricMap(first.Metrics),
	}
	if sc.Prices != nil {
		s.Currency = sc.Prices.Currency
	}
	for _, f := range sc.Faults {
		if f.Kind.Correlated() && f.For > 0 {
			s.windows++
		}
	}
	reasons := map[string]int64{}
	for _, o := range outs {
		if o.Status != "complete" {
			s.Status = o.Status
		}
		for k, v := range o.Metrics.TerminationReasons {
			reasons[k] += v
		}
	}
	if len(reasons) > 0 {
		s.TerminationReasons = reasons
	}
	if len(outs) == 1 {
		return s
	}
	s.Intervals = map[string]Interval{}
	for _, o := range outs {
		s.Seeds = append(s.Seeds, SeedRun{
			Seed: o.Seed, RunID: o.RunID, Digest: o.Digest, Status: o.Status,
			Events: o.Events, WallSeconds: o.Wall.Seconds(), Metrics: MetricMap(o.Metrics),
		})
	}
	for _, name := range analysis.MetricNames {
		vals := make([]float64, 0, len(outs))
		for _, sr := range s.Seeds {
			if v := summaryValue(Summary{Metrics: sr.Metrics}, name); !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 || countInf(vals) > 0 {
			// A seed that never recovered makes the mean "never": the metric is left out,
			// and its companion (episode_recovery_rate, goodput_recovered) says so.
			delete(s.Metrics, name)
			continue
		}
		mean, lo, hi := MetricCI(name, vals, first.Seed)
		s.Intervals[name] = Interval{Mean: mean, Lo: lo, Hi: hi, N: len(vals)}
		s.Metrics[name] = mean
	}
	return s
}

// SummarizeImported builds the summary of runs written by mayday import: the first run's
// metrics (each run's under seeds when there are several), and the metrics the trace
// cannot give, with why.
func SummarizeImported(scenario, version string, outs []analysis.Outcome, unknown map[string]string) Summary {
	first := outs[0]
	s := Summary{Scenario: scenario, Version: version, Seed: first.Seed, Digest: first.Digest,
		Status: first.Status, Metrics: MetricMap(first.Metrics), TerminationReasons: first.Metrics.TerminationReasons,
		Unknown: unknown}
	if len(s.TerminationReasons) == 0 {
		s.TerminationReasons = nil
	}
	s.Currency = first.Metrics.Currency
	if len(outs) > 1 {
		for _, o := range outs {
			s.Seeds = append(s.Seeds, SeedRun{Seed: o.Seed, RunID: o.RunID, Digest: o.Digest, Status: o.Status,
				Events: o.Events, Metrics: MetricMap(o.Metrics), TerminationReasons: o.Metrics.TerminationReasons})
		}
	}
	return s
}

// WriteFile writes the summary as indented JSON.
func (s Summary) WriteFile(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadSummary reads a summary.json.
func ReadSummary(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: not a mayday summary: %w", path, err)
	}
	if s.Metrics == nil {
		return s, fmt.Errorf("%s: not a mayday summary: no metrics", path)
	}
	return s, nil
}

// WriteJSON writes the summary as JSON for machines.
func (s Summary) WriteJSON(w io.Writer) error { return WriteJSON(w, s) }

// WriteText writes a compact metrics table for people.
func (s Summary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s  seed %d", s.Scenario, s.Seed)
	if len(s.Seeds) > 1 {
		fmt.Fprintf(w, " (+%d more seeds, %d%% intervals)", len(s.Seeds)-1, int(Confidence*100))
	}
	fmt.Fprintf(w, "  %s  digest %s\n", s.Status, short(s.Digest))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range analysis.MetricNames {
		v, ok := s.Metrics[name]
		if !ok {
			continue
		}
		if iv, ok := s.Intervals[name]; ok {
			fmt.Fprintf(tw, "  %s\t%s\t[%s, %s]\n", name, s.format(name, v), s.format(name, iv.Lo), s.format(name, iv.Hi))
		} else {
			fmt.Fprintf(tw, "  %s\t%s\n", name, s.format(name, v))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s.writeScopeAndGoodput(w)
	if len(s.TerminationReasons) > 0 {
		fmt.Fprintf(w, "  terminated by reason:")
		for _, k := range sortedKeys(s.TerminationReasons) {
			fmt.Fprintf(w, " %s=%d", k, s.TerminationReasons[k])
		}
		fmt.Fprintln(w)
	}
	if len(s.Unknown) > 0 {
		fmt.Fprintf(w, "  not in a trace (%d metrics, why: summary.json \"unknown\"): %s\n", len(s.Unknown), strings.Join(sortedKeys(s.Unknown), ", "))
	}
	if s.Database != "" {
		fmt.Fprintf(w, "database: %s\n", s.Database)
	}
	return nil
}

// writeScopeAndGoodput says in words what metrics hide when read alone: completions at
// reduced scope (completion_rate counts them, full_scope_completion_rate does not), and a
// recovery that never happened (the recovery times are then undefined), told apart from
// one that could not be measured.
func (s Summary) writeScopeAndGoodput(w io.Writer) {
	done, full := s.Metrics["completion_rate"], s.Metrics["full_scope_completion_rate"]
	if _, known := s.Metrics["full_scope_completion_rate"]; known && done-full > 1e-12 {
		reduced := done - full
		fmt.Fprintf(w, "  reduced scope: %s of started completed with less than their plan (counted by completion_rate, not by full_scope_completion_rate)\n", Format("completion_rate", reduced))
	}
	for _, name := range []string{"median_recovery_time", "p95_recovery_time", "goodput_recovery_time"} {
		switch v := summaryValue(s, name); {
		case math.IsInf(v, 0):
			fmt.Fprintf(w, "  %s: never: %s\n", name, neverWhy(name))
		case math.IsNaN(v) && name == "goodput_recovery_time" && s.windows > 0:
			fmt.Fprintf(w, "  %s: not measured: %s\n", name, undefinedWhy(name))
		}
	}
}

// Format prints a metric value the way people read it, with its unit (durations for
// seconds); metric.Format is the one definition. Money prints without a currency here.
func Format(name string, v float64) string { return metric.Format(name, v) }

// format prints a value with its unit and, for money, the summary's currency.
func (s Summary) format(name string, v float64) string {
	return metric.FormatMoney(name, v, s.Currency)
}

func short(d string) string {
	if len(d) > 16 {
		return d[:16]
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
