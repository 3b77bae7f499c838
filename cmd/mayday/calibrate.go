//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/fit"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

type calibrateOptions struct {
	io       *ioStreams
	Run      string
	Scenario string
	RunID    string
	Seeds    int
	Seed     uint64
	SeedSet  bool
	Out      string
	Format   string
}

func newCalibrateCmd(io *ioStreams, runF func(*calibrateOptions) error) *cobra.Command {
	opts := &calibrateOptions{io: io}
	cmd := &cobra.Command{
		Use:   "calibrate RUN SCENARIO",
		Short: "Simulate a scenario and judge it against an observed run; exit 1 when a metric is off",
		Long: `Simulate SCENARIO (a file or an embedded name) with --seeds seeds and set its runs beside
the observed RUN: per tool the two-sample Kolmogorov-Smirnov distance of success latency,
the failure share, the incidents and their minutes; the completion rate, the retry
amplification, the share of recovery episodes that recover and (by KS distance) their
lengths. Each metric has a band (the simulated mean,
its tolerance and the spread one more seed would show) and a verdict. Exit 1 when a metric
falls outside its band, so a fitted scenario can gate CI; exit 2 on bad input. --out DIR
writes the report section (calibration.md, calibration.html, calibration.png) with the
observed and simulated latency distributions overlaid. The tolerances are in docs/fit.md.`,
		Example: `  mayday fit runs/prod --out fitted.yaml
  mayday calibrate runs/prod fitted.yaml --seeds 5 --out runs/prod-calibration`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeRunDirs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Run, opts.Scenario = args[0], args[1]
			opts.SeedSet = c.Flags().Changed("seed")
			if runF != nil {
				return runF(opts)
			}
			return calibrateRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Seeds, "seeds", 5, "simulated runs (seeds seed, seed+1, ...); 2 or more give the seed-to-seed spread")
	f.Uint64Var(&opts.Seed, "seed", 0, "the first seed (default: the scenario's own)")
	f.StringVar(&opts.RunID, "run", "", "the observed run, when RUN's database holds several")
	f.StringVarP(&opts.Out, "out", "o", "", "a new folder for the report section (calibration.md, .html, .png)")
	addFormatFlag(cmd, &opts.Format)
	return cmd
}

func calibrateRun(ctx context.Context, opts *calibrateOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Seeds < 1 || opts.Seeds > 1000 {
		return badInputf("--seeds %d: want 1 to 1000", opts.Seeds)
	}
	if opts.Out != "" {
		if err := checkOut(opts.Out); err != nil {
			return err
		}
		if _, err := os.Stat(opts.Out); err == nil {
			return badInputf("--out %s: it exists; choose a new folder", opts.Out)
		}
	}
	obs, err := observe(ctx, opts.Run, opts.RunID)
	if err != nil {
		return err
	}
	s, err := scenarios.Load(opts.Scenario, nil)
	if err != nil {
		return badInput(err)
	}
	seed := s.Seed
	if opts.SeedSet {
		seed = opts.Seed
	}
	sims, err := simulateObserved(ctx, s, seed, opts.Seeds)
	if err != nil {
		return err
	}
	cal := fit.Calibrate(obs, sims)
	if opts.Format == "json" {
		err = reports.WriteCalibrationJSON(opts.io.Out, cal)
	} else {
		err = reports.WriteCalibrationText(opts.io.Out, cal)
	}
	if err != nil {
		return err
	}
	if opts.Out != "" {
		if err := writeCalibration(opts.Out, cal); err != nil {
			return err
		}
	}
	if n := len(cal.Failed()); n > 0 {
		return &expectationError{fmt.Sprintf("calibrate: %d of %d metrics outside their tolerance (first: %s)", n, len(cal.Checks), cal.Failed()[0].Name())}
	}
	return nil
}

// simulateObserved runs n seeds of s into an in-memory database and reads each run as fit
// reads an observed one.
func simulateObserved(ctx context.Context, s *scenarios.Scenario, seed uint64, n int) ([]fit.Observed, error) {
	db, err := analysis.Create("")
	if err != nil {
		return nil, internal(err)
	}
	defer db.Close()
	outs, err := pipeline.Serial(ctx, db, pipeline.Seeds(s, seed, n, version), nil)
	if err != nil {
		return nil, internal(err)
	}
	if ctx.Err() != nil {
		return nil, interrupted("nothing was written")
	}
	sims := make([]fit.Observed, 0, len(outs))
	for _, o := range outs {
		ob, err := db.FitInput(ctx, o.RunID)
		if err != nil {
			return nil, internal(err)
		}
		sims = append(sims, ob)
	}
	return sims, nil
}

// writeCalibration writes the report section into a new folder, staged beside it and
// renamed into place whole.
func writeCalibration(out string, cal fit.Calibration) error {
	stage, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return badInputf("--out %s: %w", out, err)
	}
	defer os.RemoveAll(stage)
	if err := os.Chmod(stage, 0o755); err != nil {
		return internal(err)
	}
	chart := reports.CalibrationChart(cal)
	png, err := chart.PNG(144)
	if err != nil {
		return internal(err)
	}
	svg, err := chart.SVG()
	if err != nil {
		return internal(err)
	}
	files := map[string]func(*os.File) error{
		"calibration.png":  func(f *os.File) error { _, err := f.Write(png); return err },
		"calibration.md":   func(f *os.File) error { return reports.WriteCalibrationMarkdown(f, cal, "calibration.png") },
		"calibration.html": func(f *os.File) error { return reports.WriteCalibrationHTML(f, cal, svg) },
	}
	for _, name := range []string{"calibration.png", "calibration.md", "calibration.html"} {
		f, err := os.Create(filepath.Join(stage, name))
		if err != nil {
			return internal(err)
		}
		if err := files[name](f); err != nil {
			f.Close()
			return internal(err)
		}
		if err := f.Close(); err != nil {
			return internal(err)
		}
	}
	if err := os.Rename(stage, out); err != nil {
		return internal(err)
	}
	return nil
}
