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
)

type mergeOptions struct {
	io      *ioStreams
	Out     string
	Inputs  []string
	Force   bool
	Metrics []string
	Format  string
	Partial bool // --allow-partial
	Quiet   bool
}

// newMergeCmd builds 'mayday merge'; runF, when not nil, gets the parsed options instead of
// running them.
func newMergeCmd(io *ioStreams, runF func(*mergeOptions) error) *cobra.Command {
	opts := &mergeOptions{io: io}
	cmd := &cobra.Command{
		Use:   "merge OUT DB...",
		Short: "Combine run databases (such as the shards of a sweep) into one",
		Long: `Copy every run of the given databases (run folders, sweep folders or .duckdb files) into
OUT, a new folder holding mayday.duckdb (or a new .duckdb file when OUT ends in .duckdb).
Every table is copied with its run_id; a run_id found twice is refused and nothing is
written. Shards of one sweep ('mayday sweep --shard I/N') are merged in grid order, so the
result equals the database of the whole sweep, and the sweep table is printed.

Before writing anything, merge checks sweep folders against the provenance each recorded in
its sweep.json: every shard must come from the same scenario, --set overrides, grid, seeds
and mayday version, be cut into the same number of slices, appear once and hold all its
runs. Missing, duplicated or mismatched shards are refused, naming them; --allow-partial
merges an incomplete set and marks the result partial in its sweep.json.`,
		Example: `  mayday merge runs/fleet-sweep runs/fleet-sweep-1of2 runs/fleet-sweep-2of2
  mayday merge all.duckdb runs/a-s1 runs/b-s1`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeRunDirs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Out, opts.Inputs = args[0], args[1:]
			if runF != nil {
				return runF(opts)
			}
			return mergeRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Force, "force", false, "replace an existing OUT")
	f.BoolVar(&opts.Partial, "allow-partial", false, "merge an incomplete set of shards and mark the sweep partial")
	f.StringSliceVar(&opts.Metrics, "metrics", reports.DefaultSweepMetrics, "metrics of the sweep table, comma-separated")
	addFormatFlag(cmd, &opts.Format)
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors")
	_ = cmd.RegisterFlagCompletionFunc("metrics", completeMetrics)
	return cmd
}

func mergeRun(ctx context.Context, opts *mergeOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkMetricNames("--metrics", opts.Metrics); err != nil {
		return err
	}
	var paths []string
	for _, in := range opts.Inputs {
		p, err := resolveDB(in)
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	prov, cut, err := mergeProvenance(ctx, opts.Inputs, paths, opts.Partial)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted("nothing was merged")
		}
		return badInput(err)
	}

	m := mergeResult{prov: prov, inputs: len(paths), out: opts.Out, cut: cut}
	if strings.HasSuffix(opts.Out, ".duckdb") {
		// A bare database file has no folder to stage: it is written beside OUT and renamed.
		if err := bareTarget(opts.Out, opts.Force); err != nil {
			return err
		}
		for _, s := range analysis.CleanStaleFiles(opts.Out, mergeStage) {
			fmt.Fprintln(opts.io.ErrOut, "mayday:", s)
		}
		dbPath := analysis.StagePath(opts.Out, mergeStage)
		removeDB(dbPath)
		defer removeDB(dbPath)
		if err := mergeInto(ctx, opts, paths, dbPath, &m); err != nil {
			if ctx.Err() != nil {
				return interrupted("nothing was merged; %s was left as it was", opts.Out)
			}
			return err
		}
		if ctx.Err() != nil {
			return interrupted("nothing was merged; %s was left as it was", opts.Out)
		}
		if err := os.Rename(dbPath, opts.Out); err != nil {
			return internal(err)
		}
		return printMerge(opts, m)
	}
	// OUT is a folder: staged and moved into place only when whole, like every run folder.
	m.folder = true
	tx := folderTx{io: opts.io, Dir: opts.Out, Force: opts.Force, What: "run folder", Fill: func(f *analysis.Folder) (bool, error) {
		if err := mergeInto(ctx, opts, paths, f.DBPath(), &m); err != nil {
			return false, err
		}
		if m.sweep {
			m.table.Scenario = m.scenario
			m.table.Database = filepath.Join(opts.Out, analysis.DBFile)
			m.table.Provenance = prov
			if prov != nil {
				m.table.Points, m.table.Seeds, m.table.Shard = prov.GridPoints, prov.Seeds, prov.Shard
			}
			if err := writeJSONFile(f.Path(analysis.SweepFile), m.table); err != nil {
				return false, internal(err)
			}
		}
		return true, nil
	}}
	if _, err := tx.run(ctx); err != nil {
		if ctx.Err() != nil {
			return interrupted("nothing was merged; %s was left as it was", opts.Out)
		}
		return err
	}
	m.out = filepath.Join(opts.Out, analysis.DBFile)
	return printMerge(opts, m)
}

// mergeInto copies the runs of the databases at paths into a new database at dbPath and,
// when they are sweep runs, reads the merged sweep's table.
func mergeInto(ctx context.Context, opts *mergeOptions, paths []string, dbPath string, m *mergeResult) error {
	for i, p := range paths {
		if same(p, opts.Out) || same(p, filepath.Join(opts.Out, analysis.DBFile)) {
			return badInputf("%s: OUT is also input %d; merge into a new folder", opts.Out, i+1)
		}
	}
	db, err := analysis.Create(dbPath)
	if err != nil {
		return internal(err)
	}
	if err := analysis.LimitBuffers(ctx, db, analysis.MergeBufferLimit); err != nil {
		db.Close()
		return internal(err)
	}
	ph := newProgress(opts.io, opts.Quiet || opts.Format == "json", "merge", 0)
	defer ph.done()
	m.ids, err = analysis.MergeWith(ctx, db, paths, analysis.MergeOptions{Progress: func(path, table string, i, n int) {
		ph.phase(fmt.Sprintf("copying %s of %s (%d/%d tables)", table, path, i+1, n))
	}})
	if err != nil {
		db.Close()
		if errors.Is(err, analysis.ErrDuplicateRun) || errors.Is(err, analysis.ErrLayout) {
			return badInput(err)
		}
		return internal(err)
	}
	ph.phase("checkpoint: writing the database file")
	if err := analysis.Checkpoint(ctx, db); err != nil {
		db.Close()
		return internal(err)
	}
	ph.phase("reading the runs back")
	runs, err := analysis.ListRuns(ctx, db)
	if err == nil {
		for _, r := range runs {
			m.sweep = m.sweep || r.Point >= 0
		}
		if m.sweep {
			m.scenario = runs[0].Scenario
			m.table, err = reports.ReadSweepTable(ctx, db, opts.Metrics)
		}
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return internal(err)
}

// mergeResult is what a merge wrote, for printMerge.
type mergeResult struct {
	prov     *reports.SweepProvenance
	table    reports.SweepTable
	sweep    bool // the inputs held sweep runs: table is the merged sweep's
	ids      []string
	inputs   int
	out      string // the database written
	folder   bool   // OUT is a folder (with sweep.json), not a bare .duckdb file
	scenario string
	cut      bool // runs cut short were merged (--allow-partial)
}

func printMerge(opts *mergeOptions, m mergeResult) error {
	prov, table, hasSweep, ids := m.prov, m.table, m.sweep, m.ids
	switch {
	case prov != nil && prov.Partial:
		fmt.Fprintf(opts.io.ErrOut, "mayday: merged a partial sweep of %s: %s missing or incomplete%s; %s\n",
			prov.Scenario, pathList(prov.MissingShards), cutNote(m.cut), partialWhere(m.folder))
	case m.cut:
		fmt.Fprintf(opts.io.ErrOut, "mayday: merged runs cut short (--allow-partial): their status in the runs table is 'partial'\n")
	}
	if opts.Quiet {
		return nil
	}
	if opts.Format == "json" {
		if hasSweep {
			return table.WriteJSON(opts.io.Out)
		}
		return reports.WriteJSON(opts.io.Out, map[string]any{"database": m.out, "runs": ids, "sources": opts.Inputs})
	}
	fmt.Fprintf(opts.io.Out, "merged %s from %s into %s\n", plural(len(ids), "run", "runs"), plural(m.inputs, "database", "databases"), m.out)
	if hasSweep {
		table.Database = ""
		return table.WriteText(opts.io.Out)
	}
	return nil
}

// same reports whether two paths name the same file, whether or not it exists yet.
func same(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

// mergeProvenance reads every input's runs (the truth) and has pipeline check the inputs
// that are sweep folders against each other and against their data. It returns the
// provenance of the merged sweep (nil when no input is one) and whether runs cut short were
// accepted (--allow-partial), which marks the result partial.
func mergeProvenance(ctx context.Context, args, paths []string, allowPartial bool) (*reports.SweepProvenance, bool, error) {
	ins, err := readMergeInputs(ctx, args, paths)
	if err != nil {
		return nil, false, err
	}
	return pipeline.MergeProvenance(ins, allowPartial)
}

// readMergeInputs opens every input through analysis.Open (a database from elsewhere is
// input like any other) and reads its runs. A file that is not a readable mayday database
// is the user's input, and refused.
func readMergeInputs(ctx context.Context, args, paths []string) ([]*pipeline.MergeInput, error) {
	var ins []*pipeline.MergeInput
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
		ins = append(ins, &pipeline.MergeInput{Arg: args[i], Path: p, Runs: runs})
	}
	return ins, nil
}

func pathList(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}

func partialWhere(folder bool) string {
	if folder {
		return "sweep.json says partial: true"
	}
	return "a bare .duckdb file has no sweep.json to record that"
}

func cutNote(cut bool) string {
	if cut {
		return ", runs cut short merged"
	}
	return ""
}

// mergeStage names the file a merge into a bare .duckdb writes before renaming it.
const mergeStage = ".tmp-merge-"

// removeDB removes a staged database and its write-ahead log.
func removeDB(path string) {
	_ = os.Remove(path)
	_ = os.Remove(path + ".wal")
}

// bareTarget refuses an existing OUT.duckdb unless --force and it is a mayday database
// (analysis.IsMaydayDB): merge never replaces the user's own DuckDB file, or any other file.
func bareTarget(out string, force bool) error {
	if err := analysis.CheckOutPath(out); err != nil {
		return badInputf("OUT %w", err)
	}
	st, err := os.Lstat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return badInputf("%s: %w", out, err)
	}
	if !force {
		return badInputf("%s: %w; choose another OUT or pass --force to replace it", out, analysis.ErrExists)
	}
	if !st.Mode().IsRegular() {
		return badInputf("%s: --force replaces only a mayday database, and it is not a file; nothing was changed", out)
	}
	if err := analysis.IsMaydayDB(out); err != nil {
		return badInputf("%s: --force replaces only a mayday database, and %w; nothing was changed", out, err)
	}
	return nil
}
