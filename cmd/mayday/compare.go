//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/reports"
)

type compareOptions struct {
	io       *ioStreams
	A, B     string
	PointA   int
	PointB   int
	Metrics  []string
	Unpaired bool
	Format   string
	Quiet    bool
}

// nCompared is how many metrics a comparison covers by default, for the help text.
var nCompared = len(metric.Compared())

// newCompareCmd builds 'mayday compare'; runF, when not nil, gets the parsed options instead of
// running them.
func newCompareCmd(io *ioStreams, runF func(*compareOptions) error) *cobra.Command {
	opts := &compareOptions{io: io}
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Compare the metrics of two runs with several seeds: which differences are real",
		Long: fmt.Sprintf(`Compare RUN_B against RUN_A (run folders, .duckdb files, or sweep folders with --point-a and
--point-b): for each metric the mean over each side's seeds, the difference B − A and a
bootstrap confidence interval of it. Metrics whose interval excludes 0 are marked with * and
the side that is better - unless that side is significantly worse on a metric that ranks
above (completion, then correctness, recovery, cost, capacity): the mark then says what was
traded ("B faster only because it completes 22%% less"). The last line is a dominance
verdict: A dominates, B dominates, a trade-off, or no significant difference. A recovery
time that never came is "never", worse than any time.

Because some %d metrics are compared at once, the intervals are Bonferroni-corrected: each
is at 1 − 0.05/m (%.2f%% for the %d default metrics), so that all of them hold together with 95%% confidence and
a mark is rarely a fluke of the seeds. With few seeds the percentile bootstrap is too narrow,
so its intervals are widened to the width of Student's t interval. When both sides ran the
same seeds, differences are taken seed by seed (both saw the same random draws), which finds
smaller effects with the same seeds; --unpaired turns this off. A metric that is the same
constant in every run of both sides shows "no difference". Intervals need two seeds per
side; run with --seeds 5 or more.`, nCompared, 100*(1-0.05/float64(nCompared)), nCompared),
		Example: `  mayday run fleet.yaml --seeds 10 --out runs/before
  mayday run fleet.yaml --seeds 10 --set recovery.retry.max_attempts=5 --out runs/after
  mayday compare runs/before runs/after
  mayday compare runs/fleet-sweep runs/fleet-sweep --point-a 0 --point-b 2`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeRunDirs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return compareRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.PointA, "point-a", -1, "grid point of RUN_A when it is a sweep")
	f.IntVar(&opts.PointB, "point-b", -1, "grid point of RUN_B when it is a sweep")
	f.StringSliceVar(&opts.Metrics, "metrics", nil, fmt.Sprintf("metrics to compare, comma-separated (default: the %d metrics of a run's summary, without the counts)", nCompared))
	f.BoolVar(&opts.Unpaired, "unpaired", false, "treat the sides as independent even when they ran the same seeds")
	addFormatFlag(cmd, &opts.Format)
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print only the metrics that differ")
	_ = cmd.RegisterFlagCompletionFunc("metrics", completeMetrics)
	return cmd
}

func compareRun(ctx context.Context, opts *compareOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkMetricNames("--metrics", opts.Metrics); err != nil {
		return err
	}
	pa, err := resolveDB(opts.A)
	if err != nil {
		return err
	}
	pb, err := resolveDB(opts.B)
	if err != nil {
		return err
	}
	// DuckDB opens a file once per process: two points of one sweep share the handle.
	da, err := analysis.Open(pa)
	if err != nil {
		return badInput(err)
	}
	defer da.Close()
	db := da
	if !same(pa, pb) {
		if db, err = analysis.Open(pb); err != nil {
			return badInput(err)
		}
		defer db.Close()
	}
	a, err := loadSample(ctx, da, opts.A, opts.PointA, "--point-a", opts.Metrics)
	if err != nil {
		return err
	}
	b, err := loadSample(ctx, db, opts.B, opts.PointB, "--point-b", opts.Metrics)
	if err != nil {
		return err
	}
	c := reports.Compare(a, b, reports.CompareOptions{Metrics: opts.Metrics, Unpaired: opts.Unpaired})
	switch {
	case opts.Quiet:
		for _, d := range c.Differing() {
			fmt.Fprintf(opts.io.Out, "%s\t%s\t[%s, %s]\t%s better\n", d.Metric, reports.Format(d.Metric, d.Diff),
				reports.Format(d.Metric, d.Lo), reports.Format(d.Metric, d.Hi), strings.ToUpper(or(d.Better, "neither")))
		}
		return nil
	case opts.Format == "json":
		return c.WriteJSON(opts.io.Out)
	}
	return c.WriteText(opts.io.Out)
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// loadSample reads one side of a comparison: the complete runs of one configuration in the
// database, each metric's value per run.
func loadSample(ctx context.Context, db *analysis.DB, label string, point int, flag string, extra []string) (reports.Sample, error) {
	runs, err := analysis.ListRuns(ctx, db)
	if err != nil {
		return reports.Sample{}, internal(err)
	}
	runs, label, err = selectRuns(runs, label, point, flag)
	if err != nil {
		return reports.Sample{}, badInput(err)
	}
	all, err := db.AllMetrics(ctx)
	if err != nil {
		return reports.Sample{}, internal(err)
	}
	byRun := map[string]analysis.Metrics{}
	for _, m := range all {
		byRun[m.RunID] = m
	}
	s := reports.Sample{Label: label, Scenario: runs[0].Scenario, Values: map[string][]float64{},
		Currency: byRun[runs[0].RunID].Currency}
	for _, r := range runs {
		s.RunIDs = append(s.RunIDs, r.RunID)
		s.Seeds = append(s.Seeds, r.Seed)
	}
	if s.Unknown, err = reports.ImportUnknown(ctx, db.SQL(), s.RunIDs); err != nil {
		return reports.Sample{}, internal(err)
	}
	for _, name := range slices.Concat(analysis.MetricNames, extra) {
		vals := make([]float64, len(runs))
		for i, r := range runs {
			v, ok := byRun[r.RunID].Value(name)
			if !ok {
				v = math.NaN()
			}
			vals[i] = v
		}
		s.Values[name] = vals
	}
	return s, nil
}

// selectRuns keeps the complete runs of one configuration: the chosen sweep point, or the
// only configuration the database holds.
func selectRuns(runs []analysis.RunInfo, label string, point int, flag string) ([]analysis.RunInfo, string, error) {
	var complete []analysis.RunInfo
	for _, r := range runs {
		if r.Status == "complete" {
			complete = append(complete, r)
		}
	}
	if len(complete) == 0 {
		return nil, "", fmt.Errorf("%s: no complete run to compare", label)
	}
	var points []int
	for _, r := range complete {
		if r.Point >= 0 && !slices.Contains(points, r.Point) {
			points = append(points, r.Point)
		}
	}
	slices.Sort(points)
	if point >= 0 {
		if len(points) == 0 {
			return nil, "", fmt.Errorf("%s %d: %s is not a sweep; drop %s", flag, point, label, flag)
		}
		var sel []analysis.RunInfo
		for _, r := range complete {
			if r.Point == point {
				sel = append(sel, r)
			}
		}
		if len(sel) == 0 {
			return nil, "", fmt.Errorf("%s %d: %s has no complete runs at that point; its points are %s", flag, point, label, intList(points))
		}
		var vals []string
		for _, p := range sel[0].Params {
			vals = append(vals, p.Path+"="+p.Value)
		}
		return sel, fmt.Sprintf("%s point %d (%s)", label, point, strings.Join(vals, " ")), nil
	}
	if len(points) > 1 {
		return nil, "", fmt.Errorf("%s is a sweep of %d points; choose one with %s (%s)", label, len(points), flag, intList(points))
	}
	var configs []string
	for _, r := range complete {
		if !slices.Contains(configs, r.ConfigHash) {
			configs = append(configs, r.ConfigHash)
		}
	}
	if len(configs) > 1 {
		return nil, "", fmt.Errorf("%s holds runs of %d different configurations; compare needs one per side (a run folder, or a sweep point with %s)", label, len(configs), flag)
	}
	return complete, label, nil
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}
