//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/tune"
)

// planner is the Evaluator of --plan: it runs nothing and records what the search asked
// for, which then stops where it would have run.
type planner struct{ jobs []tune.Job }

func (p *planner) eval(_ context.Context, jobs []tune.Job) ([]map[string]float64, error) {
	p.jobs = append(p.jobs, jobs...)
	return make([]map[string]float64, len(jobs)), nil
}

// planRound turns the jobs the search asked for into a round: its candidates as the points
// of a sweep over the block that holds the varied keys, on every seed up to the last asked.
func planRound(in *tuneInputs, jobs []tune.Job) (*tuneRound, []byte, error) {
	prefix, ok := scenarios.RoundPrefix(in.t)
	if !ok {
		return nil, nil, badInputf("--plan: the varied keys share no block (such as recovery), so a round cannot be one sweep axis; vary keys of one block, or run the search on one machine")
	}
	r := &tuneRound{Prefix: prefix, Seed: in.seed, Number: 1}
	if in.prev != nil && in.prev.Round != nil {
		r.Number = in.prev.Round.Number + 1
	}
	r.File = fmt.Sprintf("round-%d.yaml", r.Number)
	seen := map[string]bool{}
	var points [][]scenarios.Override
	for _, j := range jobs {
		r.Seeds = max(r.Seeds, int(j.Seed-in.seed)+1)
		if seen[tune.Key(j.Values)] {
			continue
		}
		seen[tune.Key(j.Values)] = true
		r.Points = append(r.Points, j.Values)
		ovs := make([]scenarios.Override, len(j.Values))
		for i, p := range in.t.Vary {
			ovs[i] = scenarios.Override{Path: p.Path, Value: j.Values[i], From: scenarios.FromTune}
		}
		points = append(points, ovs)
	}
	data, err := scenarios.RoundFile(in.base.Source.File, in.base.Source.Data, in.base.Source.Overrides, prefix, points)
	if err != nil {
		return nil, nil, internal(fmt.Errorf("round %d: %w", r.Number, err))
	}
	return r, data, nil
}

// readRoundResults adds the runs of the planned round found in the sweep folders or
// databases paths to known: each run's grid point is a candidate of the round.
func readRoundResults(ctx context.Context, in *tuneInputs, paths []string) error {
	round := in.prev.Round
	if round == nil {
		return badInputf("--results: %s planned no round (run mayday tune --plan first)", in.dir)
	}
	added := 0
	for _, p := range paths {
		db := p
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			db = filepath.Join(p, analysis.DBFile)
		}
		n, err := readRoundDB(ctx, in, round, db)
		if err != nil {
			return err
		}
		added += n
	}
	if added == 0 {
		return badInputf("--results: no complete run of %s's round %d (scenario %s) in %v", in.dir, round.Number, in.base.Name, paths)
	}
	return nil
}

func readRoundDB(ctx context.Context, in *tuneInputs, round *tuneRound, path string) (int, error) {
	db, err := analysis.Open(path)
	if err != nil {
		return 0, badInputf("--results %s: %v", path, err)
	}
	defer db.Close()
	runs, err := analysis.ListRuns(ctx, db)
	if err != nil {
		return 0, badInputf("--results %s: %v", path, err)
	}
	all, err := db.AllMetrics(ctx)
	if err != nil {
		return 0, badInputf("--results %s: %v", path, err)
	}
	byID := map[string]analysis.Metrics{}
	for _, m := range all {
		byID[m.RunID] = m
	}
	n := 0
	for _, r := range runs {
		if r.Scenario != in.base.Name || r.Status != "complete" || r.Point < 0 || r.Point >= len(round.Points) || r.Seed < round.Seed {
			continue
		}
		vals := round.Points[r.Point]
		m := map[string]float64{}
		for _, name := range scenarios.Metrics {
			if v, ok := byID[r.RunID].Value(name); ok {
				m[name] = v
			}
		}
		k := tune.Key(vals)
		if in.known[k] == nil {
			in.known[k] = map[uint64]map[string]float64{}
		}
		in.known[k][r.Seed] = m
		n++
	}
	return n, nil
}

// writeRoundText says how to run a planned round.
func writeRoundText(w io.Writer, f *tuneFile, dir string) {
	r := f.Round
	file := filepath.Join(dir, r.File)
	fmt.Fprintf(w, "tune %s: %d runs so far; round %d: %d candidates on seeds %d to %d, as the sweep %s\n",
		f.Scenario, f.Runs, r.Number, len(r.Points), r.Seed, r.Seed+uint64(r.Seeds)-1, file)
	fmt.Fprintf(w, "run it (on one machine, or sliced: docs/scale-out.md), merge it, and resume:\n")
	fmt.Fprintf(w, "  mayday sweep %s --seed %d --seeds %d --shard auto --shards N --out SHARD\n", file, r.Seed, r.Seeds)
	fmt.Fprintf(w, "  mayday merge MERGED SHARD...\n")
	fmt.Fprintf(w, "  mayday tune --resume %s --results MERGED --plan\n", dir)
}
