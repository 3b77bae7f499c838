//go:build duckdb_arrow

package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
)

// shardsOf is the shard inputs of a sweep cut into n slices, each holding all its runs.
func shardsOf(t *testing.T, n int, version string) []*shardInput {
	t.Helper()
	base, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		t.Fatal(err)
	}
	axes := []scenarios.SweepAxis{{Path: "recovery.retry.max_attempts", Values: []string{"2", "3", "4", "5"}}}
	var ins []*shardInput
	for i := 1; i <= n; i++ {
		p := NewProvenance(base, []string{"recovery.lease=1m"}, axes, 4, 7, 2, Shard{i, n}, version)
		ins = append(ins, &shardInput{arg: "s" + p.Shard, prov: p, index: i, count: n, runs: 2 * len(p.ShardPoints)})
	}
	return ins
}

// Shards of one sweep merge into the whole grid; a missing, repeated or foreign shard is
// refused, naming it, and --allow-partial takes a missing one and marks the result partial.
func TestCheckShards(t *testing.T) {
	ins := shardsOf(t, 2, "v1")
	p, err := checkShards(ins, false)
	if err != nil || p.Shard != "1/1" || !slices.Equal(p.ShardPoints, []int{0, 1, 2, 3}) || p.Partial {
		t.Fatalf("whole sweep: %+v, %v", p, err)
	}
	if p.OverridePaths[0] != "recovery.lease" || len(p.GridHash) != 64 || p.Grid[0].Values != 4 {
		t.Errorf("provenance %+v", p)
	}
	if _, err := checkShards(ins[:1], false); err == nil || !strings.Contains(err.Error(), "shard 2/2 of sweep research-fleet is missing") {
		t.Errorf("missing shard: %v", err)
	}
	if p, err := checkShards(ins[:1], true); err != nil || !p.Partial || !slices.Equal(p.MissingShards, []string{"2/2"}) {
		t.Errorf("--allow-partial: %+v, %v", p, err)
	}
	if _, err := checkShards([]*shardInput{ins[0], ins[0], ins[1]}, false); err == nil || !strings.Contains(err.Error(), "shard 1/2 is given twice") {
		t.Errorf("repeated shard: %v", err)
	}
	other := shardsOf(t, 2, "v2")
	if _, err := checkShards([]*shardInput{ins[0], other[1]}, false); err == nil || !strings.Contains(err.Error(), "another mayday binary (version v2 vs v1)") {
		t.Errorf("foreign shard: %v", err)
	}
	short := *ins[1]
	short.runs--
	if _, err := checkShards([]*shardInput{ins[0], &short}, false); err == nil || !strings.Contains(err.Error(), "holds 3 of its 4 runs") {
		t.Errorf("incomplete shard: %v", err)
	}
}

// A shard's data must agree with its sweep.json: the scenario, binary, seeds, grid points
// and axes of every run, each (point, seed) once.
func TestShardDataProblems(t *testing.T) {
	sh := shardsOf(t, 2, "v1")[0] // points 0 and 2, seeds 7 and 8
	params := []analysis.SweepParam{{Path: "recovery.retry.max_attempts"}}
	run := func(id, scenario string, point int, seed uint64) analysis.RunInfo {
		return analysis.RunInfo{RunID: id, Scenario: scenario, Version: "v1", Point: point, Seed: seed, Params: params}
	}
	in := &MergeInput{Arg: "a", shard: sh, Runs: []analysis.RunInfo{
		run("r1", "research-fleet", 0, 7), run("r2", "research-fleet", 2, 8),
		run("r3", "other", 0, 8), run("r4", "research-fleet", 1, 7), run("r5", "research-fleet", 0, 9), run("r6", "research-fleet", 0, 7),
	}}
	got := strings.Join(shardDataProblems(in), "\n")
	for _, want := range []string{
		`a: run r3 is of scenario "other", not "research-fleet"`,
		"a: run r4 is at grid point 1, not one of the shard's [0 2]",
		"a: run r5 has seed 9, outside the sweep's 2 seeds from 7",
		"a: run r6 repeats grid point 0 seed 7",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nlack %q", got, want)
		}
	}
	if sh.runs != 2 {
		t.Errorf("the shard holds %d distinct runs; want 2", sh.runs)
	}
}
