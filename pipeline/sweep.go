//go:build duckdb_arrow

package pipeline

import (
	"fmt"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
)

// A sweep runs a grid of scenario variants × seeds. Runs are independent and each is
// single-threaded and deterministic, so they spread over cores (Batch) and over machines
// (Shard, then analysis.Merge) without changing a single row: a run's trace depends only on
// its scenario and seed, never on which worker or machine ran it.

// SweepJobs is the jobs of a sweep: for every grid point the shard owns, in grid order, and
// every seed seed0 ... seed0+seeds-1, the run analysis.SweepRunID(name, point, seed) of the
// base scenario with the point's values, and the sweep_params rows of its point, its values
// redacted (traces.ParamRedactor). Every point is resolved before anything runs, so a bad
// value is found first; the error names the point and its values.
func SweepJobs(base *scenarios.Scenario, points [][]scenarios.Override, shard Shard, seed0 uint64, seeds int, version string) ([]Spec, []analysis.SweepParam, error) {
	var specs []Spec
	var params []analysis.SweepParam
	redact := traces.ParamRedactor(base) // grid values are stored and printed redacted
	baseSecrets := traces.ScenarioOptions(base).Secrets
	for p, point := range points {
		if !shard.Has(p) {
			continue
		}
		s, err := base.With(point...)
		if err != nil {
			return nil, nil, fmt.Errorf("sweep point %d (%s): %w", p, pointText(point, redact), err)
		}
		for k := range seeds {
			seed := seed0 + uint64(k)
			id := analysis.SweepRunID(base.Name, p, seed)
			specs = append(specs, Spec{Scenario: s, Seed: seed, RunID: id, Version: version, Secrets: baseSecrets})
			for _, o := range point {
				params = append(params, analysis.SweepParam{RunID: id, Point: p, Path: o.Path, Value: redact(o.Path, o.Value)})
			}
		}
	}
	return specs, params, nil
}

func pointText(point []scenarios.Override, redact func(path, value string) string) string {
	parts := make([]string, len(point))
	for i, o := range point {
		parts[i] = o.Path + "=" + redact(o.Path, o.Value)
	}
	return strings.Join(parts, " ")
}

// RanParams keeps the sweep_params rows of the runs that ran: the rows of a run whose
// spec i has ran[i] false are dropped.
func RanParams(specs []Spec, ran []bool, params []analysis.SweepParam) []analysis.SweepParam {
	var out []analysis.SweepParam
	specOf := make(map[string]int, len(specs))
	for i, s := range specs {
		specOf[s.RunID] = i
	}
	for _, p := range params {
		if ran[specOf[p.RunID]] {
			out = append(out, p)
		}
	}
	return out
}
