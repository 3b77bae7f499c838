//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

type sweepOptions struct {
	io       *ioStreams
	Scenario string
	Vary     []string
	Metrics  []string
	Shard    string
	ShardSet bool
	Shards   int
	Jobs     int
	runFlags
}

// newSweepCmd builds 'mayday sweep'; runF, when not nil, gets the parsed options instead of
// running them.
func newSweepCmd(io *ioStreams, runF func(*sweepOptions) error) *cobra.Command {
	opts := &sweepOptions{io: io}
	cmd := &cobra.Command{
		Use:   "sweep SCENARIO",
		Short: "Run a grid of scenario variants × seeds in parallel into one database",
		Long: `Expand the scenario's sweep grid (the cartesian product of its axes, the last axis varying
fastest), or the grid of --vary flags, which replaces the file's; run every grid point with
--seeds seeds on all cores; and store every run in one database, in grid order. Each run is
single-threaded and deterministic, so a run of the sweep has the digest the same scenario
and seed have in 'mayday run'.

run_id is <name>-p<point>-s<seed>; the table sweep_params(run_id, point, path, value) says
which values each run's point set, so SQL can group by them. The table printed at the end
shows the chosen metrics per point with 95% intervals over the seeds.

--shard I/N runs only grid points p with p mod N = I-1 (I counts from 1), so N machines (a CI
matrix, a Kubernetes indexed Job) can share a large sweep; 'mayday merge' then combines
their databases into the one the whole sweep would have written, after checking that they
are all the shards of one sweep. --shard auto reads the slice from the batch engine:
JOB_COMPLETION_INDEX with --shards N (Kubernetes), or SLURM_ARRAY_TASK_ID and
SLURM_ARRAY_TASK_COUNT (Slurm). A slice with no grid points writes an empty shard.
See docs/scale-out.md.`,
		Example: `  mayday sweep shared-outage --seeds 5
  mayday sweep fleet.yaml --vary recovery.retry.max_attempts=1,3,5 --vary 'faults[0].for=10m,1h'
  mayday sweep fleet.yaml --shard 2/4 --out sweep-2     # then: mayday merge sweep sweep-*
  mayday sweep fleet.yaml --shard auto --shards 8 --out /shards/$JOB_COMPLETION_INDEX`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.parsed(c)
			opts.ShardSet = c.Flags().Changed("shard")
			if runF != nil {
				return runF(opts)
			}
			return sweepRun(c.Context(), opts)
		},
	}
	opts.add(cmd, runFlagText{
		Seed:         "first random seed (default: the scenario's seed)",
		Seeds:        "seeds per grid point, starting at --seed; every point runs the same seeds",
		SeedsDefault: 3,
		Set:          "override a scenario value at every point: path=value (repeatable)",
		Out:          "sweep folder (default runs/<name>-sweep)",
		Force:        "replace an existing sweep folder",
		Quiet:        "print nothing but errors",
	})
	f := cmd.Flags()
	f.StringArrayVar(&opts.Vary, "vary", nil, "a grid axis path=v1,v2,... (repeatable); replaces the file's sweep grid")
	f.StringSliceVar(&opts.Metrics, "metrics", reports.DefaultSweepMetrics, "metrics to show per point, comma-separated")
	f.StringVar(&opts.Shard, "shard", "", "run only slice I of N of the grid, as I/N (1 <= I <= N), or auto: from the batch engine's environment")
	f.IntVar(&opts.Shards, "shards", 0, "with --shard auto: the number of slices N (a Kubernetes Indexed Job's completions)")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "runs at once (default: the number of cores)")
	_ = cmd.RegisterFlagCompletionFunc("metrics", completeMetrics)
	_ = cmd.RegisterFlagCompletionFunc("shard", cobra.FixedCompletions([]string{"auto"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

func sweepRun(ctx context.Context, opts *sweepOptions) error {
	base, axes, points, shard, err := sweepInputs(opts)
	if err != nil {
		return err
	}
	// Resolve every point before running any, so a bad value is bad input, not a late failure.
	seed0 := opts.seedOf(base)
	specs, params, err := pipeline.SweepJobs(base, points, shard, seed0, opts.Seeds, version)
	if err != nil {
		return badInput(err)
	}
	// A slice with no points (--shard 6/8 of a 4-point grid) is an empty shard, not an error,
	// so a fixed-size Job keeps working when the grid shrinks; merge still sees it.
	prov := pipeline.NewProvenance(base, opts.Sets, axes, len(points), seed0, opts.Seeds, shard, version)

	dir := opts.Out
	if dir == "" {
		dir = filepath.Join("runs", base.Name+"-sweep")
		if !shard.Whole() {
			dir += fmt.Sprintf("-%dof%d", shard.Index, shard.Count)
		}
	}
	quiet := opts.Quiet || opts.Format == "json"
	limit, err := memoryLimit(opts.MemLimit)
	if err != nil {
		return err
	}
	ctx, mw := pipeline.WatchMemory(ctx, limit)
	defer mw.Done()
	st := sweepStored{io: opts.io, mw: mw, quiet: quiet, label: "sweep " + base.Name}
	tx := folderTx{io: opts.io, Dir: dir, Force: opts.Force, What: "sweep folder", Fill: func(folder *analysis.Folder) (whole bool, err error) {
		db, err := analysis.Create(folder.DBPath())
		if err != nil {
			return false, internal(err)
		}
		defer func() {
			if cerr := db.Close(); err == nil && cerr != nil {
				err = internal(cerr)
			}
		}()
		if err := analysis.LimitBuffers(ctx, db, analysis.SweepBufferLimit(pipeline.Workers(opts.Jobs, len(specs)))); err != nil {
			return false, internal(err)
		}
		whole, err = st.fill(ctx, db, specs, params, opts.Jobs, opts.Seeds, opts.Metrics)
		st.table.Scenario, st.table.Database = base.Name, filepath.Join(dir, analysis.DBFile)
		st.table.Points, st.table.Seeds, st.table.Shard = len(points), opts.Seeds, shard.String()
		st.table.Provenance = prov
		if !whole || st.partial > 0 {
			// Interrupted: runs are missing or cut short, and sweep.json says so.
			p := *prov
			p.Partial = true
			st.table.Provenance = &p
		}
		if err == nil {
			err = writeJSONFile(folder.Path(analysis.SweepFile), st.table)
		}
		return whole, err
	}}
	txr, err := tx.run(ctx)
	if err != nil {
		return err
	}
	if txr.KeptOld {
		if err := memoryStopped(ctx, mw, "the old sweep folder "+dir+" was left as it was"); err != nil {
			return err
		}
		return keptOldMessage("sweep folder", dir)
	}
	if err := memoryStopped(ctx, mw, st.message(dir, len(specs))); err != nil {
		return err
	}
	var stopped error
	if ctx.Err() != nil {
		stopped = interrupted("%s", st.message(dir, len(specs)))
	}
	if opts.Quiet {
		return stopped
	}
	var perr error
	if opts.Format == "json" {
		perr = st.table.WriteJSON(opts.io.Out)
	} else {
		perr = st.table.WriteText(opts.io.Out)
	}
	if stopped != nil {
		return stopped
	}
	return perr
}

// sweepInputs checks the flags and the scenario and expands the grid, before anything runs.
func sweepInputs(opts *sweepOptions) (*scenarios.Scenario, []scenarios.SweepAxis, [][]scenarios.Override, pipeline.Shard, error) {
	var none pipeline.Shard
	if err := opts.check(); err != nil {
		return nil, nil, nil, none, err
	}
	if opts.Jobs < 0 {
		return nil, nil, nil, none, badInputf("--jobs %d: want 0 (all cores) or more", opts.Jobs)
	}
	if err := checkMetricNames("--metrics", opts.Metrics); err != nil {
		return nil, nil, nil, none, err
	}
	shard, err := pipeline.ResolveShard(opts.Shard, opts.ShardSet, opts.Shards, os.Getenv)
	if err != nil {
		return nil, nil, nil, none, badInput(err)
	}
	base, err := scenarios.Load(opts.Scenario, opts.Sets)
	if err != nil {
		return nil, nil, nil, none, badInput(err)
	}
	axes := base.Sweep
	if len(opts.Vary) > 0 {
		if axes, err = parseVary(opts.Vary); err != nil {
			return nil, nil, nil, none, badInput(err)
		}
	}
	if err := scenarios.CheckSweepSize(axes, opts.Seeds); err != nil {
		return nil, nil, nil, none, badInput(err)
	}
	points := scenarios.Expand(axes)
	if len(points) == 0 {
		return nil, nil, nil, none, badInputf("%s: no sweep grid; add a sweep block to the scenario, e.g. sweep: {recovery.retry.max_attempts: [1, 3, 5]}, or pass --vary path=v1,v2,...", base.Source.File)
	}
	return base, axes, points, shard, nil
}

// sweepStored is what a sweep stored in its folder.
type sweepStored struct {
	io           *ioStreams
	mw           *pipeline.MemoryWatch
	quiet        bool
	label        string
	table        reports.SweepTable
	ran, partial int // runs stored; of them, cut short
}

// fill runs the sweep into db, the sweep folder's database: every run is stored as it
// finishes, so what is left after the last run is the grid parameters, the checkpoint that
// writes the file and reading the table back, each shown on the progress line. It reports
// whether every run ran whole.
func (st *sweepStored) fill(ctx context.Context, db *analysis.DB, specs []pipeline.Spec, params []analysis.SweepParam, jobs, seeds int, metrics []string) (bool, error) {
	res, err := runBatch(ctx, st.io, st.mw, st.quiet, st.label, specs, jobs, db, "", "points", seeds)
	if err != nil {
		return false, internal(err)
	}
	defer res.Close()
	whole, err := st.count(ctx, res, specs)
	if err != nil {
		return false, err
	}
	// The runs are stored: what follows must not stop half-way because of the interrupt
	// that ended the batch, or the folder would be lost with every finished run.
	ctx = context.WithoutCancel(ctx)
	ph := newProgress(st.io, st.quiet, st.label, 0)
	defer ph.done()
	ph.phase("storing the grid parameters")
	if err := analysis.WriteSweepParams(ctx, db, pipeline.RanParams(specs, res.Ran, params)); err != nil {
		return false, internal(err)
	}
	ph.phase("checkpoint: writing the database file")
	if err := analysis.Checkpoint(ctx, db); err != nil {
		return false, internal(fmt.Errorf("checkpoint of %s: %w", db.Path(), err))
	}
	ph.phase("reading the sweep table")
	// Every run's metrics row came with its outcome (computed while it loaded), and the
	// folder holds only the sweep's runs.
	var all []analysis.Metrics
	for i, ran := range res.Ran {
		if ran {
			all = append(all, res.Outcomes[i].Metrics)
		}
	}
	if st.table, err = reports.SweepTableOf(ctx, db, metrics, all); err != nil {
		return false, internal(err)
	}
	return whole, nil
}

// count checks a finished batch: a failed run fails the sweep, and a sweep interrupted
// before any run finished stores nothing. It reports whether every run ran whole.
func (st *sweepStored) count(ctx context.Context, res *pipeline.BatchResult, specs []pipeline.Spec) (bool, error) {
	for i, e := range res.Errs {
		if e != nil {
			return false, internal(fmt.Errorf("sweep run %s: %w", specs[i].RunID, e))
		}
	}
	whole := true
	for i, ran := range res.Ran {
		if ran {
			st.ran++
			if res.Outcomes[i].Status != "complete" {
				st.partial++
			}
		}
		whole = whole && ran && res.Outcomes[i].Status == "complete"
	}
	if st.ran == 0 && len(specs) > 0 {
		if err := memoryStopped(ctx, st.mw, "nothing was written"); err != nil {
			return false, err
		}
		return false, interrupted("before the first sweep run finished; nothing was written")
	}
	return whole, nil
}

// message says what an interrupted sweep stored.
func (st *sweepStored) message(dir string, all int) string {
	ran, partial := st.ran, st.partial
	msg := fmt.Sprintf("the sweep folder %s was stored with %d of %d runs", dir, ran, all)
	if ran < all {
		msg += fmt.Sprintf(" (a partial sweep: %d not run)", all-ran)
	}
	if partial > 0 {
		msg += fmt.Sprintf("; %s cut short, stored with status 'partial'", plural(partial, "run was", "runs were"))
	} else {
		msg += "; every stored run is complete"
	}
	return msg
}

// parseVary reads --vary flags into grid axes. Values are split at commas outside brackets,
// braces and quotes, so a value may be a YAML flow mapping: {dist: constant, value: 1s}.
func parseVary(flags []string) ([]scenarios.SweepAxis, error) {
	var axes []scenarios.SweepAxis
	for _, f := range flags {
		path, list, ok := strings.Cut(f, "=")
		path = strings.TrimSpace(path)
		if !ok || path == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("--vary %q: want path=v1,v2,..., e.g. recovery.retry.max_attempts=1,3,5", scenarios.MaskAssignment(f))
		}
		if slices.ContainsFunc(axes, func(a scenarios.SweepAxis) bool { return a.Path == path }) {
			return nil, fmt.Errorf("--vary %q: %s is varied twice; list all its values in one --vary", scenarios.MaskAssignment(f), path)
		}
		vals := splitTopLevel(list)
		for i, v := range vals {
			vals[i] = strings.TrimSpace(v)
			if vals[i] == "" {
				return nil, fmt.Errorf("--vary %q: value %d is empty; want path=v1,v2,...", scenarios.MaskAssignment(f), i+1)
			}
		}
		axes = append(axes, scenarios.SweepAxis{Path: path, Values: vals})
	}
	return axes, nil
}

// splitTopLevel splits s at commas that are not inside (), [], {} or quotes.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '{' || r == '[' || r == '(':
			depth++
		case r == '}' || r == ']' || r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// checkMetricNames refuses names no metric has, naming the valid ones.
func checkMetricNames(flag string, names []string) error {
	for _, n := range names {
		if !analysis.IsMetric(n) {
			return badInputf("%s %s: unknown metric; want any of %s, or terminated_<reason>", flag, n, strings.Join(analysis.MetricNames, ", "))
		}
	}
	return nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
