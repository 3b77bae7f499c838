//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

type runOptions struct {
	io        *ioStreams
	Scenarios []string
	NoTrace   bool
	runFlags
}

// newRunCmd builds 'mayday run'; runF, when not nil, gets the parsed options instead of
// running them (tests of flag parsing pass one).
func newRunCmd(io *ioStreams, runF func(*runOptions) error) *cobra.Command {
	opts := &runOptions{io: io}
	cmd := &cobra.Command{
		Use:   "run SCENARIO...",
		Short: "Simulate scenarios and write their traces and metrics to a run folder",
		Long: `Simulate each scenario (a YAML file, or the name of an embedded example) and write a run
folder holding mayday.duckdb (every trace table and the metric views) and summary.json.

The default folder is runs/<name>-s<seed>; an existing folder is refused unless --force.
With --seeds N the seeds seed, seed+1, ... run into one database and the summary shows 95%
bootstrap confidence intervals. Ctrl-C (or SIGTERM, SIGHUP) stops the simulation, keeps a consistent
database whose runs.status is 'partial', says what was stored and exits 130. With --force
an existing run folder is replaced only by a whole new run, and only a folder mayday wrote
(a database and its summary) is replaced: anything else is refused.

With --no-trace no trace is kept: the metrics are computed from the records as the
simulation emits them (the metric views' definitions, computed in Go; a test holds the two
equal), the summary is printed, and nothing is written to disk: for when only the figures
matter (a quick look, a script reading --format json).`,
		Example: `  mayday run research-fleet
  mayday run fleet.yaml --seed 7 --set recovery.retry.max_attempts=5
  mayday run shared-outage --seeds 5 --format json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Scenarios = args
			opts.parsed(c)
			if runF != nil {
				return runF(opts)
			}
			return runRun(c.Context(), opts)
		},
	}
	opts.add(cmd, runFlagText{
		Seed:         "random seed (default: the scenario's seed)",
		Seeds:        "number of seeds to run, starting at --seed",
		SeedsDefault: 1,
		Set:          "override a scenario value: path=value (repeatable), e.g. recovery.retry.max_attempts=5",
		Out:          "run folder (default runs/<name>-s<seed>)",
		Force:        "replace an existing run folder",
		Quiet:        "print nothing but errors",
	})
	cmd.Flags().BoolVar(&opts.NoTrace, "no-trace", false, "keep no trace: print the metrics, write no run folder")
	return cmd
}

func runRun(ctx context.Context, opts *runOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	if opts.NoTrace && (opts.Out != "" || opts.Force) {
		return badInputf("--no-trace writes no run folder, so --out and --force have nothing to do; drop them, or drop --no-trace to keep the traces")
	}
	if opts.Out != "" && len(opts.Scenarios) > 1 {
		return badInputf("--out names one run folder, but several scenarios were given; run them one by one or drop --out")
	}
	// Load every scenario first, so a typo in the last one does not cost the first one's run.
	scens := make([]*scenarios.Scenario, len(opts.Scenarios))
	for i, ref := range opts.Scenarios {
		s, err := scenarios.Load(ref, opts.Sets)
		if err != nil {
			return badInput(err)
		}
		scens[i] = s
	}
	limit, err := memoryLimit(opts.MemLimit)
	if err != nil {
		return err
	}
	ctx, mw := pipeline.WatchMemory(ctx, limit)
	defer mw.Done()
	var sums []reports.Summary
	var stored []string // what an interrupt message lists
	for _, s := range scens {
		seed := opts.seedOf(s)
		dir := opts.Out
		if dir == "" {
			dir = defaultRunDir(s.Name, seed, opts.Seeds)
		}
		if ctx.Err() != nil {
			stored = append(stored, fmt.Sprintf("%s was not started, nothing was written there", dir))
			continue
		}
		quiet := opts.Quiet || opts.Format == "json"
		if opts.NoTrace {
			sum, err := runInMemory(ctx, opts.io, mw, s, seed, opts.Seeds, quiet)
			if err != nil {
				return err
			}
			if sum.Status != "" {
				sums = append(sums, sum)
			}
			stored = append(stored, "nothing was written (--no-trace)")
			continue
		}
		sum, res, err := runScenario(ctx, opts.io, mw, s, seed, opts.Seeds, dir, opts.Force, quiet)
		if err != nil {
			return err
		}
		switch {
		case res.KeptOld:
			stored = append(stored, fmt.Sprintf("the old run folder %s was left as it was (the new run was not whole)", dir))
		case !res.Stored:
			stored = append(stored, fmt.Sprintf("nothing was written to %s", dir))
		default:
			sums = append(sums, sum)
			stored = append(stored, fmt.Sprintf("%s was stored with status '%s' (%s)", dir, sum.Status, plural(max(1, len(sum.Seeds)), "seed", "seeds")))
		}
	}
	if !opts.Quiet {
		for _, sum := range sums {
			if err := printSummary(opts.io, opts.Format, sum); err != nil {
				return err
			}
		}
	}
	if err := memoryStopped(ctx, mw, strings.Join(stored, "; ")); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted("%s", strings.Join(stored, "; "))
	}
	return nil
}

func defaultRunDir(name string, seed uint64, seeds int) string {
	dir := filepath.Join("runs", name+"-s"+strconv.FormatUint(seed, 10))
	if seeds > 1 {
		dir += "-n" + strconv.Itoa(seeds)
	}
	return dir
}

// runSeeds executes seeds seed..seed+n-1 of s into db, with a progress bar; it stops early
// when ctx is cancelled.
func runSeeds(ctx context.Context, io *ioStreams, mw *pipeline.MemoryWatch, db *analysis.DB, s *scenarios.Scenario, seed uint64, n int, quiet bool) ([]analysis.Outcome, error) {
	bar := newProgress(io, quiet, s.Name, n)
	specs := pipeline.Seeds(s, seed, n, version)
	for i := range specs {
		specs[i].Progress, specs[i].Phase = mw.Wrap(bar.seed(i)), bar.phase
	}
	outs, err := pipeline.Serial(ctx, db, specs, func(int) {
		if testHookRunDone != nil {
			testHookRunDone()
		}
	})
	if err != nil {
		return nil, err
	}
	bar.done()
	return outs, nil
}

// runInMemory runs seeds seed..seed+n-1 of s without a database, for --no-trace: each run's
// records stream into its digest and into the metrics computed in Go (pipeline.Compute),
// which a test holds equal to the metric views; nothing is written to disk. The summary is
// zero when no run started.
func runInMemory(ctx context.Context, io *ioStreams, mw *pipeline.MemoryWatch, s *scenarios.Scenario, seed uint64, n int, quiet bool) (reports.Summary, error) {
	outs, err := runSeeds(ctx, io, mw, nil, s, seed, n, quiet)
	if err != nil {
		return reports.Summary{}, internal(err)
	}
	if len(outs) == 0 {
		return reports.Summary{}, nil
	}
	return reports.Summarize(s, version, outs), nil
}

// runScenario runs seeds seed..seed+n-1 of s into a new run folder dir.
func runScenario(ctx context.Context, io *ioStreams, mw *pipeline.MemoryWatch, s *scenarios.Scenario, seed uint64, n int, dir string, force, quiet bool) (reports.Summary, txResult, error) {
	var sum reports.Summary
	tx := folderTx{io: io, Dir: dir, Force: force, What: "run folder", Fill: func(folder *analysis.Folder) (bool, error) {
		db, err := analysis.Create(folder.DBPath())
		if err != nil {
			return false, internal(err)
		}
		outs, err := runSeeds(ctx, io, mw, db, s, seed, n, quiet)
		if err != nil {
			db.Close()
			return false, internal(err)
		}
		if err := db.Close(); err != nil {
			return false, internal(err)
		}
		if len(outs) == 0 {
			if err := memoryStopped(ctx, mw, "nothing was written"); err != nil {
				return false, err
			}
			return false, interrupted("before the first run started; nothing was written")
		}
		sum = reports.Summarize(s, version, outs)
		sum.Database = filepath.Join(dir, analysis.DBFile)
		if err := sum.WriteFile(folder.Path(analysis.SummaryFile)); err != nil {
			return false, internal(err)
		}
		return len(outs) == n && sum.Status == "complete", nil
	}}
	res, err := tx.run(ctx)
	return sum, res, err
}

func printSummary(io *ioStreams, format string, sum reports.Summary) error {
	if format == "json" {
		return sum.WriteJSON(io.Out)
	}
	return sum.WriteText(io.Out)
}
