//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/traces"
)

// mergeInput is one database given to merge, with what its runs rows say: the truth that
// its sweep.json (a convenience) is checked against.
type mergeInput struct {
	arg, path string
	runs      []analysis.RunInfo
	shard     *shardInput // nil: no sweep.json beside it
}

// readMergeInputs opens every input through analysis.Open (a database from elsewhere is
// input like any other) and reads its runs. A file that is not a readable mayday database
// is the user's input, and refused.
func readMergeInputs(ctx context.Context, args, paths []string) ([]*mergeInput, error) {
	var ins []*mergeInput
	for i, p := range paths {
		db, err := analysis.Open(p)
		if err != nil {
			return nil, badInputf("%s: %w", args[i], err)
		}
		runs, err := analysis.ListRuns(ctx, db)
		db.Close()
		if err != nil {
			return nil, badInputf("%s: %w", args[i], err)
		}
		ins = append(ins, &mergeInput{arg: args[i], path: p, runs: runs})
	}
	return ins, nil
}

// partialRuns refuses runs cut short (status other than complete) unless allowPartial; it
// reports whether any was accepted, so that the result is marked partial.
func partialRuns(ins []*mergeInput, allowPartial bool) (bool, error) {
	var cut []string
	for _, in := range ins {
		for _, r := range in.runs {
			if r.Status != traces.StatusComplete {
				cut = append(cut, fmt.Sprintf("%s: run %s has status %q", in.arg, r.RunID, r.Status))
			}
		}
	}
	if len(cut) > 0 && !allowPartial {
		return false, fmt.Errorf("merge: %s; these runs were cut short: pass --allow-partial to merge them and mark the result partial",
			strings.Join(cut, "; "))
	}
	return len(cut) > 0, nil
}

// checkShardData checks each sweep folder's runs against the provenance its sweep.json
// records, and every other input against the sweep: each run must be of the sweep's
// scenario and binary, one of its seeds, at a grid point of its slice, with the sweep's
// axes. It sets each shard's run count from the data. An input without sweep.json among
// sweep folders is refused, naming it.
func checkShardData(ins []*mergeInput) error {
	var sweep *reports.SweepProvenance
	for _, in := range ins {
		if in.shard != nil {
			sweep = in.shard.prov
			break
		}
	}
	if sweep == nil {
		return nil
	}
	var problems []string
	for _, in := range ins {
		if in.shard == nil {
			problems = append(problems, fmt.Sprintf("%s does not belong to sweep %s: it is not a sweep folder (no sweep.json)", in.arg, sweep.Scenario))
			continue
		}
		problems = append(problems, shardDataProblems(in)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("merge: the data disagrees with the sweep:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// shardDataProblems compares one shard's runs with its own provenance; it counts the
// distinct (point, seed) pairs the data holds into the shard's runs.
func shardDataProblems(in *mergeInput) []string {
	p := in.shard.prov
	var axes []string
	for _, a := range p.Grid {
		axes = append(axes, a.Path)
	}
	type key struct {
		point int
		seed  uint64
	}
	held := map[key]bool{}
	var out []string
	bad := func(r analysis.RunInfo, format string, a ...any) {
		out = append(out, fmt.Sprintf("%s: run %s %s", in.arg, r.RunID, fmt.Sprintf(format, a...)))
	}
	for _, r := range in.runs {
		var paths []string
		for _, sp := range r.Params {
			paths = append(paths, sp.Path)
		}
		switch {
		case r.Scenario != p.Scenario:
			bad(r, "is of scenario %q, not %q", r.Scenario, p.Scenario)
		case r.Version != p.Version:
			bad(r, "was made by mayday %s, not %s", r.Version, p.Version)
		case r.Seed < p.FirstSeed || r.Seed-p.FirstSeed >= uint64(p.Seeds):
			bad(r, "has seed %d, outside the sweep's %d seeds from %d", r.Seed, p.Seeds, p.FirstSeed)
		case r.Point < 0 || !slices.Contains(p.ShardPoints, r.Point):
			bad(r, "is at grid point %d, not one of the shard's %v", r.Point, p.ShardPoints)
		case !slices.Equal(paths, axes):
			bad(r, "varies %s, not the sweep's axes %s", pathList(paths), pathList(axes))
		case held[key{r.Point, r.Seed}]:
			bad(r, "repeats grid point %d seed %d", r.Point, r.Seed)
		default:
			held[key{r.Point, r.Seed}] = true
		}
	}
	in.shard.runs = len(held)
	return out
}
