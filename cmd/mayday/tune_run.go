//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/tune"
)

// tuneInputs is what a search starts from: the scenario, its tune block with the flags
// applied, the first seed and, when resuming, what the folder measured.
type tuneInputs struct {
	base  *scenarios.Scenario
	t     scenarios.Tune
	seed  uint64
	known map[string]map[uint64]map[string]float64
	prev  *tuneFile
	dir   string
}

func tuneRun(ctx context.Context, opts *tuneOptions) error {
	in, err := tuneLoad(ctx, opts)
	if err != nil {
		return err
	}
	quiet := opts.Quiet || opts.Format == "json"
	var file *tuneFile
	tx := folderTx{io: opts.io, Dir: in.dir, Force: opts.Force || opts.Resume != "", What: "tune folder", Recognise: isTuneFolder,
		Fill: func(folder *analysis.Folder) (bool, error) {
			plan := &planner{}
			r, err := tuneSearch(ctx, opts, in, quiet, plan)
			if err != nil {
				return false, err
			}
			file = tuneSummary(opts, in, r)
			if len(plan.jobs) > 0 {
				round, data, err := planRound(in, plan.jobs)
				if err != nil {
					return false, err
				}
				file.Round, file.Complete = round, false
				if err := os.WriteFile(folder.Path(round.File), data, 0o644); err != nil {
					return false, internal(err)
				}
			}
			// Whole even when interrupted: what it holds includes all the folder held before.
			return true, writeTuneFolder(folder, in, file)
		}}
	if _, err := tx.run(ctx); err != nil {
		return err
	}
	return tuneReport(opts, in, redactTuneFile(file, tuneRedactor(in.base)))
}

// tuneReport prints what the search found, or the round to run next.
func tuneReport(opts *tuneOptions, in *tuneInputs, file *tuneFile) error {
	if file.Round != nil {
		if !opts.Quiet {
			writeRoundText(opts.io.Out, file, in.dir)
		}
		return nil
	}
	if !file.Complete {
		return interrupted("%d runs measured; %s holds them: continue with mayday tune --resume %s", file.Runs, in.dir, in.dir)
	}
	if !opts.Quiet {
		if opts.Format == "json" {
			b, err := json.MarshalIndent(file, "", "  ")
			if err != nil {
				return internal(err)
			}
			fmt.Fprintln(opts.io.Out, string(b))
		} else {
			writeTuneText(opts.io.Out, file, in.dir)
		}
	}
	if file.Recommend == nil {
		return &expectationError{fmt.Sprintf("no candidate met the constraints (%s); see %s", file.Verdict, filepath.Join(in.dir, TuneFile))}
	}
	return nil
}

// tuneSearch runs the search with a progress line.
func tuneSearch(ctx context.Context, opts *tuneOptions, in *tuneInputs, quiet bool, plan *planner) (*tune.Result, error) {
	bar := newProgress(opts.io, quiet, "tune "+in.base.Name, max(in.t.Budget, 1))
	runs := 0
	cfg := tune.Config{Tune: in.t, Seed0: in.seed, Known: in.known, Progress: func(spent, budget int, what string) {
		runs = spent
		bar.step(spent, fmt.Sprintf(" (%s)", what))
	}}
	eval := tune.Simulate(in.base, version, opts.Jobs, "", func(tune.Job) {
		runs++
		bar.step(runs, "")
		if testHookRunDone != nil {
			testHookRunDone()
		}
	})
	if opts.Plan {
		eval = plan.eval
	}
	r, err := tune.Search(ctx, cfg, eval)
	bar.done()
	if err != nil {
		if errors.Is(err, tune.ErrBadTune) {
			return nil, badInput(err)
		}
		return nil, internal(err)
	}
	return r, nil
}

// tuneLoad reads the scenario (from the argument, or from the folder to resume) and applies
// the flags to its tune block. Every mistake is bad input, found before anything runs.
func tuneLoad(ctx context.Context, opts *tuneOptions) (*tuneInputs, error) {
	if err := checkFormat(opts.Format); err != nil {
		return nil, err
	}
	if err := checkOut(opts.Out); err != nil {
		return nil, err
	}
	if opts.Jobs < 0 {
		return nil, badInputf("--jobs %d: want 0 (all cores) or more", opts.Jobs)
	}
	if opts.Resume != "" {
		in, err := tuneResume(opts)
		if err == nil && len(opts.Results) > 0 {
			err = readRoundResults(ctx, in, opts.Results)
		}
		return in, err
	}
	if len(opts.Results) > 0 {
		return nil, badInputf("--results: only with --resume DIR, the folder that planned the round")
	}
	if opts.Scenario == "" {
		return nil, badInputf("tune: name a scenario, or --resume a tune folder")
	}
	base, err := scenarios.Load(opts.Scenario, opts.Sets)
	if err != nil {
		return nil, badInput(err)
	}
	in := &tuneInputs{base: base, seed: base.Seed, dir: opts.Out}
	if opts.SeedSet {
		in.seed = opts.Seed
	}
	if base.Tune != nil {
		in.t = *base.Tune
	} else {
		in.t = scenarios.Tune{Seeds: scenarios.DefaultTuneSeeds, MaxSeeds: scenarios.DefaultTuneMaxSeeds, Confidence: scenarios.DefaultTuneConfidence}
	}
	if err := tuneFlags(opts, &in.t); err != nil {
		return nil, err
	}
	if len(in.t.Vary) == 0 {
		return nil, badInputf("%s: no tune block to search; add tune: {vary: {recovery.retry.max_attempts: {min: 1, max: 10}}, maximize: completion_rate}", base.Source.File)
	}
	if in.dir == "" {
		in.dir = filepath.Join("runs", base.Name+"-tune")
	}
	return in, nil
}

// tuneFlags applies the flags that replace parts of the tune block.
func tuneFlags(opts *tuneOptions, t *scenarios.Tune) error {
	if opts.changed == nil {
		opts.changed = func(string) bool { return false }
	}
	if opts.Budget != "" {
		b, err := scenarios.ParseTuneBudget(opts.Budget)
		if err != nil {
			return badInputf("--budget: %v", err)
		}
		t.Budget, t.BudgetTime = b.Budget, b.BudgetTime
	}
	if opts.Maximize != "" && opts.Minimize != "" {
		return badInputf("--maximize and --minimize: give one of them")
	}
	for flag, m := range map[string]string{"--maximize": opts.Maximize, "--minimize": opts.Minimize} {
		if m != "" && !scenarios.IsMetric(m) {
			return badInputf("%s %q: not a metric; want one of %s", flag, m, joinComma(scenarios.Metrics))
		}
	}
	if opts.Maximize != "" {
		t.Maximize, t.Minimize = opts.Maximize, ""
	}
	if opts.Minimize != "" {
		t.Maximize, t.Minimize = "", opts.Minimize
	}
	if opts.changed("subject-to") {
		t.SubjectTo = nil
		for _, s := range opts.SubjectTo {
			m, check, ok := strings.Cut(s, "=")
			m = strings.TrimSpace(m)
			if !ok || !scenarios.IsMetric(m) {
				return badInputf("--subject-to %q: want metric=check such as 'retry_amplification=<= 2'", s)
			}
			e, msg := scenarios.ParseExpectation(m, check)
			if msg != "" {
				return badInputf("--subject-to %q: %s", s, msg)
			}
			t.SubjectTo = append(t.SubjectTo, e)
		}
	}
	if opts.changed("objectives") {
		for _, m := range opts.Objectives {
			if !scenarios.IsMetric(m) {
				return badInputf("--objectives: %q is not a metric", m)
			}
		}
		t.Objectives = opts.Objectives
	}
	return tuneNumbers(opts, t)
}

func tuneNumbers(opts *tuneOptions, t *scenarios.Tune) error {
	if opts.changed("seeds") {
		t.Seeds = opts.Seeds
	}
	if opts.changed("max-seeds") {
		t.MaxSeeds = opts.MaxSeeds
	}
	if opts.changed("confidence") {
		t.Confidence = opts.Confidence
	}
	switch {
	case t.Seeds < 2:
		return badInputf("--seeds %d: want 2 or more (an interval needs two runs)", t.Seeds)
	case t.MaxSeeds < t.Seeds:
		return badInputf("--max-seeds %d: want at least the seeds, %d", t.MaxSeeds, t.Seeds)
	case !(t.Confidence > 0 && t.Confidence < 1):
		return badInputf("--confidence %v: want a level in (0, 1) such as 0.95", t.Confidence)
	}
	if g, _ := t.Objective(); g == "" && len(t.Vary) > 0 {
		return badInputf("tune: no goal; add maximize: or minimize: to the tune block, or pass --maximize METRIC")
	}
	return nil
}

// tuneResume loads the search stored in the folder: its scenario (which must not have
// changed), its tune block and its measurements. --budget may raise the budget; the goal
// and constraints stay those of the search.
func tuneResume(opts *tuneOptions) (*tuneInputs, error) {
	for _, f := range []string{"maximize", "minimize", "subject-to", "objectives", "seeds", "max-seeds", "confidence", "seed", "set"} {
		if opts.changed != nil && opts.changed(f) {
			return nil, badInputf("--%s with --resume: a resumed search keeps its settings (only --budget may change)", f)
		}
	}
	// Only a folder mayday wrote, as it wrote it: tune.json names a file to load, and an
	// edited one could make the search read (and an error show) any file.
	if err := analysis.VerifyManifest(opts.Resume); err != nil {
		return nil, badInputf("--resume %s: not a tune folder as mayday wrote it (%v); start a new search", opts.Resume, err)
	}
	b, err := os.ReadFile(filepath.Join(opts.Resume, TuneFile))
	if err != nil {
		return nil, badInputf("--resume %s: %v", opts.Resume, err)
	}
	var prev tuneFile
	if err := json.Unmarshal(b, &prev); err != nil {
		return nil, badInputf("--resume %s: %s is not a tune summary: %v", opts.Resume, TuneFile, err)
	}
	ref := prev.Source
	if opts.Scenario != "" {
		ref = opts.Scenario
	}
	base, err := scenarios.Load(ref, prev.Sets)
	if err != nil {
		if opts.Scenario != "" {
			return nil, badInput(err)
		}
		// The reason could quote the file; it is shown only for a file named on the command line.
		return nil, badInputf("--resume %s: the scenario the search ran, %s, cannot be loaded; check it with mayday validate, or give it: mayday tune SCENARIO --resume %s", opts.Resume, ref, opts.Resume)
	}
	if base.Hash() != prev.ConfigHash || base.Tune == nil {
		return nil, badInputf("--resume %s: the scenario %s changed since the search began (config hash %.12s, was %.12s); start a new search", opts.Resume, ref, base.Hash(), prev.ConfigHash)
	}
	if opts.Out != "" && filepath.Clean(opts.Out) != filepath.Clean(opts.Resume) {
		return nil, badInputf("--out %s with --resume %s: a resumed search writes its own folder", opts.Out, opts.Resume)
	}
	in := &tuneInputs{base: base, t: prev.Tune, seed: prev.Seed, prev: &prev, dir: opts.Resume}
	if opts.Budget != "" {
		bud, err := scenarios.ParseTuneBudget(opts.Budget)
		if err != nil {
			return nil, badInputf("--budget: %v", err)
		}
		in.t.Budget, in.t.BudgetTime = bud.Budget, bud.BudgetTime
	}
	// tune.json stores the varied values redacted: the keys come from the scenario, whose
	// hash is the one the search ran, and each stored value maps back to one of them.
	in.t.Vary = base.Tune.Vary
	if err := unredactKnown(in, &prev, tuneRedactor(base)); err != nil {
		return nil, badInputf("--resume %s: %s: %v", opts.Resume, TuneFile, err)
	}
	return in, nil
}
