//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/hunt"
	"github.com/mayday-sim/mayday/scenarios"
)

type huntOptions struct {
	io       *ioStreams
	Scenario string
	Seed     uint64
	SeedSet  bool
	Sets     []string
	Out      string
	Force    bool
	Format   string
	Quiet    bool
	Jobs     int
	Budget   string
}

// newHuntCmd builds 'mayday hunt'; runF, when not nil, gets the parsed options instead of
// running them.
func newHuntCmd(io *ioStreams, runF func(*huntOptions) error) *cobra.Command {
	opts := &huntOptions{io: io}
	cmd := &cobra.Command{
		Use:   "hunt SCENARIO",
		Short: "Search the scenario's hunt block for faults that break its policy, and shrink what it finds",
		Long: `Search the envelope of the scenario's hunt block for a mix of faults that breaks the
scenario: a failed expectation, a broken invariant of the simulator, or with hunt.liveness
a liveness failure (goodput not back within that time of the last fault window's end). Each
trial draws a random subset of the envelope's fault kinds and random values within their
ranges (swarm testing); later trials also escalate around the nearest miss. The first
violation is shrunk: faults dropped, windows shortened, parameters weakened, fewer
investigations and a shorter horizon, each step kept only when the same violation still
happens.

The folder (--out, default runs/<name>-hunt) gets hunt.json (every trial and shrink step)
and, when a violation was found, found/<name>.yaml: the shrunk scenario with its seed, which
'mayday check' fails with the same violation. Exit status: 1 when a violation was found, 0
when the budget ran out without one (the coverage of the envelope is printed), 2 on bad
input, 130 when interrupted (what was found is kept). See docs/hunt.md.`,
		Example: `  mayday hunt fleet.yaml --out hunted
  mayday hunt hunt-metastable --budget 10m
  mayday check hunted/found/*.yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Scenario = args[0]
			opts.SeedSet = c.Flags().Changed("seed")
			if runF != nil {
				return runF(opts)
			}
			return huntRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.Seed, "seed", 0, "the hunt's seed: trials and their seeds follow from it (default: the scenario's seed)")
	f.StringArrayVar(&opts.Sets, "set", nil, "override a scenario value: path=value (repeatable)")
	f.StringVarP(&opts.Out, "out", "o", "", "hunt folder (default runs/<name>-hunt)")
	f.BoolVar(&opts.Force, "force", false, "replace an existing hunt folder")
	addFormatFlag(cmd, &opts.Format)
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "runs at once (default: the number of cores)")
	f.StringVar(&opts.Budget, "budget", "", "runs (such as 80) or wall time (such as 10m) of the search; replaces hunt.budget")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

// HuntFile is the name of a hunt folder's record.
const HuntFile = "hunt.json"

// huntFoundDir is the folder of a hunt folder that holds the shrunk scenarios.
const huntFoundDir = "found"

// huntRecord is hunt.json.
type huntRecord struct {
	Scenario string         `json:"scenario"`
	Source   string         `json:"source"`
	Sets     []string       `json:"sets,omitempty"`
	Version  string         `json:"version"`
	Hunt     scenarios.Hunt `json:"hunt"`
	File     string         `json:"file,omitempty"`  // found/<name>.yaml, when a violation was found
	Files    []string       `json:"files,omitempty"` // the file of every violation found: File's, then the others'
	*hunt.Result
}

func huntRun(ctx context.Context, opts *huntOptions) error {
	base, h, seed, err := huntLoad(opts)
	if err != nil {
		return err
	}
	if opts.Out == "" {
		opts.Out = filepath.Join("runs", base.Name+"-hunt")
	}
	quiet := opts.Quiet || opts.Format == "json"
	var rec *huntRecord
	tx := folderTx{io: opts.io, Dir: opts.Out, Force: opts.Force, What: "hunt folder", Recognise: isHuntFolder,
		Fill: func(folder *analysis.Folder) (bool, error) {
			r, err := huntSearch(ctx, opts, base, h, seed, quiet)
			if err != nil {
				return false, err
			}
			rec = &huntRecord{Scenario: base.Name, Source: opts.Scenario, Sets: opts.Sets, Version: version, Hunt: h, Result: r}
			for _, f := range r.All() {
				data, err := hunt.FoundFileOf(base, r, f)
				if err != nil {
					return false, internal(fmt.Errorf("the shrunk scenario: %w", err))
				}
				file := filepath.Join(huntFoundDir, f.Name+".yaml")
				rec.Files = append(rec.Files, file)
				if err := os.MkdirAll(folder.Path(huntFoundDir), 0o755); err != nil {
					return false, internal(err)
				}
				if err := os.WriteFile(folder.Path(file), data, 0o644); err != nil {
					return false, internal(err)
				}
			}
			if len(rec.Files) > 0 {
				rec.File = rec.Files[0]
			}
			// Whole even when interrupted: it holds every trial that ran and what they found.
			return true, writeTuneJSON(folder.Path(HuntFile), rec)
		}}
	if _, err := tx.run(ctx); err != nil {
		return err
	}
	return huntReport(opts, rec)
}

// huntLoad reads the scenario and applies the flags to its hunt block; every mistake is bad
// input, found before anything runs.
func huntLoad(opts *huntOptions) (*scenarios.Scenario, scenarios.Hunt, uint64, error) {
	if err := checkFormat(opts.Format); err != nil {
		return nil, scenarios.Hunt{}, 0, err
	}
	if err := checkOut(opts.Out); err != nil {
		return nil, scenarios.Hunt{}, 0, err
	}
	if opts.Jobs < 0 {
		return nil, scenarios.Hunt{}, 0, badInputf("--jobs %d: want 0 (all cores) or more", opts.Jobs)
	}
	base, err := scenarios.Load(opts.Scenario, opts.Sets)
	if err != nil {
		return nil, scenarios.Hunt{}, 0, badInput(err)
	}
	if base.Hunt == nil {
		return nil, scenarios.Hunt{}, 0, badInputf("%s: no hunt block to search; add hunt: {faults: [{kind: outage, tool: TOOL, for: {min: 10s, max: 2m}}], at: {min: 5m, max: 30m}} (docs/hunt.md)", base.Source.File)
	}
	h := *base.Hunt
	if opts.Budget != "" {
		b, err := scenarios.ParseTuneBudget(opts.Budget)
		if err != nil {
			return nil, scenarios.Hunt{}, 0, badInputf("--budget: %v", err)
		}
		h.Budget, h.BudgetTime = b.Budget, b.BudgetTime
	}
	seed := base.Seed
	if opts.SeedSet {
		seed = opts.Seed
	}
	return base, h, seed, nil
}

// huntSearch runs the hunt with a progress line.
func huntSearch(ctx context.Context, opts *huntOptions, base *scenarios.Scenario, h scenarios.Hunt, seed uint64, quiet bool) (*hunt.Result, error) {
	units := max(h.Budget, 1) + h.Shrink // the search's runs and the shrinking's at most
	bar := newProgress(opts.io, quiet, "hunt "+base.Name, units)
	runs := 0
	cfg := hunt.Config{Hunt: h, Scenario: base, Seed: seed, Progress: func(spent, _ int, what string) {
		bar.step(spent, " ("+what+")")
	}}
	eval := hunt.Simulate(base, h.Liveness, version, opts.Jobs, "", func() {
		runs++
		bar.step(runs, "")
		if testHookRunDone != nil {
			testHookRunDone()
		}
	})
	r, err := hunt.Hunt(ctx, cfg, eval)
	bar.done()
	if err != nil {
		if errors.Is(err, hunt.ErrBadHunt) {
			return nil, badInput(err)
		}
		return nil, internal(err)
	}
	return r, nil
}

// huntReport prints what the hunt found and turns it into the exit status.
func huntReport(opts *huntOptions, rec *huntRecord) error {
	if !opts.Quiet {
		if opts.Format == "json" {
			b, err := json.MarshalIndent(rec, "", "  ")
			if err != nil {
				return internal(err)
			}
			fmt.Fprintln(opts.io.Out, string(b))
		} else {
			writeHuntText(opts.io.Out, rec, opts.Out)
		}
	}
	r := rec.Result
	switch {
	case !r.Complete && r.Found != nil:
		return interrupted("a violation was found and kept in %s (%s); its shrinking may be incomplete", opts.Out, rec.File)
	case !r.Complete:
		return interrupted("%d runs without a violation; %s holds their trials", r.Runs, filepath.Join(opts.Out, HuntFile))
	case r.Found != nil:
		var what []string
		for i, f := range r.All() {
			what = append(what, fmt.Sprintf("%s: %s", f.Violation.ID(), filepath.Join(opts.Out, rec.Files[i])))
		}
		if len(what) == 1 {
			return &expectationError{"hunt found a violation (" + strings.Replace(what[0], ": ", "): ", 1)}
		}
		return &expectationError{fmt.Sprintf("hunt found %d distinct violations: %s", len(what), strings.Join(what, "; "))}
	case r.Uncovered != "":
		return badInputf("the hunt could not cover its envelope, so finding no violation means nothing: %s; narrow the envelope's ranges to values its kinds accept", r.Uncovered)
	}
	return nil
}

func writeHuntText(w io.Writer, rec *huntRecord, dir string) {
	r := rec.Result
	fmt.Fprintf(w, "hunt %s: seed %d, %d runs searched, %d runs shrinking\n", rec.Scenario, r.Seed, r.Runs, r.ShrinkRuns)
	fmt.Fprintf(w, "violations: %s\n", strings.Join(r.Checks, "; "))
	if r.Found != nil {
		for i, f := range r.All() {
			fmt.Fprintf(w, "found in trial %d: %s\n", f.Trial, f.Violation.Message)
			fmt.Fprintf(w, "shrunk from %d faults, %d investigations, horizon %s to %d, %d, %s:\n", f.Before.Faults, f.Before.Investigations, f.Before.Horizon,
				f.After.Faults, f.After.Investigations, f.After.Horizon)
			for _, step := range f.Removed {
				fmt.Fprintf(w, "  - %s\n", step)
			}
			file := filepath.Join(dir, rec.Files[i])
			fmt.Fprintf(w, "scenario: %s (mayday check %s fails with it)\n", file, file)
		}
		return
	}
	if r.Uncovered != "" {
		fmt.Fprintf(w, "no verdict: the envelope was not covered (%s): %s\n", r.Uncovered, r.Coverage.Text)
	} else {
		fmt.Fprintf(w, "no violation: %s\n", r.Coverage.Text)
	}
	for _, e := range r.Coverage.Entries {
		var rs []string
		for _, c := range e.Ranges {
			rs = append(rs, fmt.Sprintf("%s %d/10", c.Key, c.Tenths))
		}
		fmt.Fprintf(w, "  %-14s %3d trials  %s\n", e.Kind, e.Trials, strings.Join(rs, ", "))
	}
}

// isHuntFolder says whether dir is a hunt folder mayday wrote (what --force may replace).
func isHuntFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("it cannot be read: %w", err)
	}
	found := false
	for _, e := range entries {
		switch n := e.Name(); {
		case n == HuntFile && e.Type().IsRegular():
			found = true
		case n == analysis.FolderManifest && e.Type().IsRegular():
		case n == huntFoundDir && e.IsDir():
		default:
			return fmt.Errorf("it holds %s, which a hunt folder does not", n)
		}
	}
	if !found {
		return fmt.Errorf("it holds no %s", HuntFile)
	}
	return nil
}
