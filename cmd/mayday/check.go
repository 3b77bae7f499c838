//go:build duckdb_arrow

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

type checkOptions struct {
	io             *ioStreams
	Scenarios      []string
	All            bool
	Baseline       string
	UpdateBaseline bool
	Tolerance      float64
	JUnit          string
	Jobs           int
	runFlags
}

// newCheckCmd builds 'mayday check'; runF, when not nil, gets the parsed options instead of
// running them.
func newCheckCmd(io *ioStreams, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{io: io}
	cmd := &cobra.Command{
		Use:   "check [SCENARIO...]",
		Short: "Run scenarios and fail when a recovery metric misses its expectation or regresses",
		Long: `Run each scenario (a YAML file or an embedded example) and evaluate its expect block:
each line such as completion_rate: ">= 0.95" is one check (operators >=, <=, >, <, == and
"between A and B", on any metric of 'mayday run'). Exit status: 0 when every check holds, 1
when one fails, 2 on bad input, 3 when a scenario could not run.

With --seeds N the value checked is the mean over N seeds, and a failure shows its 95%
interval: when the whole interval fails it is a regression, when it reaches the passing side
it may be seed noise.

--baseline compares the run with a stored summary (the summary.json of an earlier run, or
what --update-baseline wrote) and fails when a metric moved in its worse direction by more
than the tolerance: --tolerance, relative to the baseline value, or the absolute per-metric
value of the scenario's tolerances block. With several scenarios --baseline names a folder
holding <scenario>.json.

Without --out the runs keep no trace (their metrics are computed as they run, as by run
--no-trace) and nothing is written; --out keeps them (one run folder per scenario inside it). Scenarios and seeds run in parallel on all cores (--jobs).`,
		Example: `  mayday check --all                                  # every embedded example, as CI does
  mayday check fleet.yaml --seeds 5 --junit report.xml
  mayday check fleet.yaml --baseline baseline.json --update-baseline   # record
  mayday check fleet.yaml --baseline baseline.json                     # compare`,
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Scenarios = args
			opts.parsed(c)
			if runF != nil {
				return runF(opts)
			}
			return checkRun(c.Context(), opts)
		},
	}
	opts.add(cmd, runFlagText{
		Seed:         "random seed (default: each scenario's seed)",
		Seeds:        "number of seeds per scenario, starting at --seed",
		SeedsDefault: 1,
		Set:          "override a scenario value: path=value (repeatable)",
		Out:          "keep the run folders in this folder (default: keep no trace)",
		Force:        "replace existing run folders inside --out",
		Quiet:        "print only the checks that fail",
	})
	f := cmd.Flags()
	f.BoolVar(&opts.All, "all", false, "check every embedded example scenario")
	f.StringVar(&opts.Baseline, "baseline", "", "compare with a stored summary.json (or a folder of <scenario>.json)")
	f.BoolVar(&opts.UpdateBaseline, "update-baseline", false, "write this run's summaries to --baseline instead of comparing")
	f.Float64Var(&opts.Tolerance, "tolerance", reports.DefaultTolerance, "relative worsening --baseline accepts (0.05 = 5%); the scenario's tolerances block overrides it per metric")
	f.StringVar(&opts.JUnit, "junit", "", "write a JUnit XML report to this file")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "runs at once (default: the number of cores)")
	_ = cmd.RegisterFlagCompletionFunc("junit", cobra.FixedCompletions([]string{"xml"}, cobra.ShellCompDirectiveFilterFileExt))
	_ = cmd.RegisterFlagCompletionFunc("baseline", cobra.FixedCompletions([]string{"json"}, cobra.ShellCompDirectiveFilterFileExt))
	_ = cmd.RegisterFlagCompletionFunc("out", cobra.NoFileCompletions)
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

// checkRun runs the scenarios, evaluates them and reports. Everything that could be bad input
// (flags, scenario files, baseline files) is checked before the first simulation starts.
func checkRun(ctx context.Context, opts *checkOptions) error {
	scens, baselines, err := checkInputs(opts)
	if err != nil {
		return err
	}
	// One batch of every scenario × seed, so a slow scenario does not leave cores idle.
	var specs []pipeline.Spec
	first := make([]int, len(scens)) // index of each scenario's first spec
	for i, s := range scens {
		first[i] = len(specs)
		specs = append(specs, pipeline.Seeds(s, opts.seedOf(s), opts.Seeds, version)...)
	}
	quiet := opts.Quiet || opts.Format == "json"
	limit, err := memoryLimit(opts.MemLimit)
	if err != nil {
		return err
	}
	ctx, mw := pipeline.WatchMemory(ctx, limit)
	defer mw.Done()
	res, err := runBatch(ctx, opts.io, mw, quiet, "check", specs, opts.Jobs, nil, opts.Out, "scenarios", opts.Seeds)
	if err != nil {
		return internal(err)
	}
	defer res.Close()
	if err := memoryStopped(ctx, mw, "no check was evaluated and nothing was written"); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted("no check was evaluated and nothing was written")
	}
	var report reports.CheckReport
	var kept []string // run folders written, for an interrupt message
	broken := 0
	for i, s := range scens {
		sc, err := evalScenario(ctx, opts, s, res, first[i], baselines[i])
		if err != nil {
			return err
		}
		if sc.Error != "" {
			broken++
		}
		if sc.RunFolder != "" {
			kept = append(kept, sc.RunFolder)
		}
		report.Scenarios = append(report.Scenarios, sc)
	}
	return writeCheckReport(ctx, opts, report, kept, broken)
}

// checkInputs reads and checks everything a check needs before anything runs: its flags, its
// scenarios, its baselines, and that --out can hold the run folders.
func checkInputs(opts *checkOptions) ([]*scenarios.Scenario, []baselineRef, error) {
	if err := checkFlags(opts); err != nil {
		return nil, nil, badInput(err)
	}
	refs := opts.Scenarios
	if opts.All {
		for _, info := range scenarios.List() {
			refs = append(refs, info.Name)
		}
	}
	scens, err := loadAll(refs, opts.Sets)
	if err != nil {
		return nil, nil, badInput(err)
	}
	baselines, err := findBaselines(opts, scens)
	if err != nil {
		return nil, nil, badInput(err)
	}
	if opts.Out == "" {
		return scens, baselines, nil
	}
	// Refuse a folder that cannot be replaced before anything runs.
	for _, s := range scens {
		dir := filepath.Join(opts.Out, filepath.Base(defaultRunDir(s.Name, opts.seedOf(s), opts.Seeds)))
		if _, err := os.Lstat(dir); err != nil {
			continue
		}
		if !opts.Force {
			return nil, nil, badInputf("run folder %s: %w; choose another --out or pass --force to replace it", dir, analysis.ErrExists)
		}
		if err := analysis.IsRunFolder(dir); err != nil {
			return nil, nil, badInputf("run folder %s: --force replaces only a folder mayday wrote, and %w; nothing was changed", dir, err)
		}
	}
	return scens, baselines, nil
}

// evalScenario evaluates one scenario's runs (opts.Seeds specs from first on): its
// expectations, its baseline, and with --out its run folder.
func evalScenario(ctx context.Context, opts *checkOptions, s *scenarios.Scenario, res *pipeline.BatchResult, first int, b baselineRef) (reports.ScenarioCheck, error) {
	idx := make([]int, opts.Seeds)
	for k := range idx {
		idx[k] = first + k
	}
	sc, sum := reports.CheckRuns(s, version, opts.seedOf(s), res, idx)
	if sum == nil {
		return sc, nil
	}
	if opts.Out != "" {
		dir := filepath.Join(opts.Out, filepath.Base(defaultRunDir(s.Name, sc.Seed, opts.Seeds)))
		if err := keepRunFolder(ctx, opts.io, res, idx, dir, opts.Force, sum); err != nil {
			return sc, err
		}
		sc.RunFolder = dir
	}
	if b.path != "" {
		switch {
		case opts.UpdateBaseline:
			if err := writeBaseline(b.path, *sum); err != nil {
				return sc, internal(err)
			}
		case b.missing:
			sc.Baseline = &reports.BaselineCheck{File: b.path, Missing: true}
		default:
			sc.Baseline = reports.NewBaselineCheck(b.path, *sum, b.sum, opts.Tolerance, s.Tolerances)
		}
	}
	return sc, nil
}

// writeCheckReport writes the report (JUnit, text or JSON) and turns its outcome into the
// command's error: interrupted, a scenario that could not run, or a failed expectation.
func writeCheckReport(ctx context.Context, opts *checkOptions, report reports.CheckReport, kept []string, broken int) error {
	if opts.JUnit != "" {
		if err := writeJUnit(opts.JUnit, report); err != nil {
			return err
		}
	}
	var err error
	switch {
	case opts.Quiet:
		err = report.WriteText(opts.io.Out, true)
	case opts.Format == "json":
		err = report.WriteJSON(opts.io.Out)
	default:
		err = report.WriteText(opts.io.Out, false)
	}
	if err != nil {
		return internal(err)
	}
	if opts.UpdateBaseline && !opts.Quiet && opts.Format != "json" {
		fmt.Fprintf(opts.io.ErrOut, "baseline written to %s\n", opts.Baseline)
	}
	if ctx.Err() != nil {
		// Every check was evaluated (the batch had finished); the signal came while storing.
		what := "every check was evaluated and reported"
		if len(kept) > 0 {
			what += "; run folders stored: " + strings.Join(kept, ", ")
		}
		return interrupted("%s", what)
	}
	if broken > 0 {
		return internal(fmt.Errorf("%s could not run", plural(broken, "scenario", "scenarios")))
	}
	if tests, failures, _ := report.Counts(); failures > 0 {
		return &expectationError{msg: fmt.Sprintf("check failed: %d of %s", failures, plural(tests, "check", "checks"))}
	}
	return nil
}

func checkFlags(opts *checkOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	switch {
	case opts.Tolerance < 0:
		return fmt.Errorf("--tolerance %g: want a relative tolerance >= 0, e.g. 0.05 for 5%%", opts.Tolerance)
	case opts.UpdateBaseline && opts.Baseline == "":
		return errors.New("--update-baseline needs --baseline FILE (or a folder) to write to")
	case opts.Jobs < 0:
		return fmt.Errorf("--jobs %d: want 0 (all cores) or more", opts.Jobs)
	case opts.All && len(opts.Scenarios) > 0:
		return errors.New("give scenarios or --all, not both")
	case !opts.All && len(opts.Scenarios) == 0:
		return errors.New("no scenario to check: name scenario files or embedded examples, or pass --all")
	}
	return nil
}

// loadAll loads every scenario, reporting every one that is wrong rather than the first.
func loadAll(refs, sets []string) ([]*scenarios.Scenario, error) {
	var scens []*scenarios.Scenario
	var errs []error
	names := map[string]string{}
	for _, ref := range refs {
		s, err := scenarios.Load(ref, sets)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := names[s.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: scenario name %q is also the name of %s; each checked scenario needs its own name", ref, s.Name, prev))
			continue
		}
		names[s.Name] = ref
		scens = append(scens, s)
	}
	return scens, errors.Join(errs...)
}

// keepRunFolder writes the runs idx of res into the run folder dir with its summary. The
// runs are finished, so an interrupt does not stop the copy half-way.
func keepRunFolder(ctx context.Context, io *ioStreams, res *pipeline.BatchResult, idx []int, dir string, force bool, sum *reports.Summary) error {
	ctx = context.WithoutCancel(ctx)
	tx := folderTx{io: io, Dir: dir, Force: force, What: "run folder", Fill: func(folder *analysis.Folder) (bool, error) {
		db, err := analysis.Create(folder.DBPath())
		if err != nil {
			return false, internal(err)
		}
		if err := res.CopyRuns(ctx, db, idx); err != nil {
			db.Close()
			return false, internal(err)
		}
		if err := db.Close(); err != nil {
			return false, internal(err)
		}
		sum.Database = filepath.Join(dir, analysis.DBFile)
		if err := sum.WriteFile(folder.Path(analysis.SummaryFile)); err != nil {
			return false, internal(err)
		}
		return true, nil
	}}
	_, err := tx.run(ctx)
	return err
}

// baselineRef is where one scenario's baseline lives and, when comparing, what it holds.
type baselineRef struct {
	path    string
	missing bool
	sum     reports.Summary
}

// findBaselines resolves --baseline for each scenario: one file for a single scenario, or a
// folder of <scenario>.json. When comparing, it reads them now, so a bad file is bad input
// before anything runs.
func findBaselines(opts *checkOptions, scens []*scenarios.Scenario) ([]baselineRef, error) {
	refs := make([]baselineRef, len(scens))
	if opts.Baseline == "" {
		return refs, nil
	}
	st, statErr := os.Stat(opts.Baseline)
	folder := (statErr == nil && st.IsDir()) || strings.HasSuffix(opts.Baseline, "/") || len(scens) > 1
	if folder && statErr == nil && !st.IsDir() {
		return nil, fmt.Errorf("--baseline %s: a file holds one scenario's summary, but %d scenarios are checked; give a folder (it will hold <scenario>.json)", opts.Baseline, len(scens))
	}
	if folder && statErr != nil && !opts.UpdateBaseline {
		return nil, fmt.Errorf("--baseline %s: no such folder; record baselines first with --update-baseline", opts.Baseline)
	}
	for i, s := range scens {
		path := opts.Baseline
		if folder {
			path = filepath.Join(opts.Baseline, s.Name+".json")
		}
		refs[i].path = path
		if opts.UpdateBaseline {
			continue
		}
		sum, err := reports.ReadSummary(path)
		switch {
		case errors.Is(err, os.ErrNotExist) && folder:
			refs[i].missing = true
		case errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("--baseline %s: no such file; record one with --update-baseline", path)
		case err != nil:
			return nil, fmt.Errorf("--baseline: %w", err)
		case sum.Scenario != s.Name:
			return nil, fmt.Errorf("--baseline %s: a summary of scenario %q, but the scenario checked is %q", path, sum.Scenario, s.Name)
		default:
			refs[i].sum = sum
		}
	}
	return refs, nil
}

// writeBaseline stores a summary as a baseline: it is summary.json without the database
// path, which names a folder that may not exist where the baseline is read.
func writeBaseline(path string, sum reports.Summary) error {
	sum.Database = ""
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := sum.WriteFile(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func writeJUnit(path string, report reports.CheckReport) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return badInputf("--junit %s: %w", path, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return badInputf("--junit %s: %w", path, err)
	}
	if err := report.WriteJUnit(f); err != nil {
		f.Close()
		return internal(err)
	}
	if err := f.Close(); err != nil {
		return badInputf("--junit %s: %w", path, err)
	}
	return nil
}
