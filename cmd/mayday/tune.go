//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/tune"
)

type tuneOptions struct {
	io         *ioStreams
	Scenario   string
	Seed       uint64
	SeedSet    bool
	Sets       []string
	Out        string
	Force      bool
	Format     string
	Quiet      bool
	Jobs       int
	Resume     string
	Budget     string
	Maximize   string
	Minimize   string
	SubjectTo  []string
	Objectives []string
	Seeds      int
	MaxSeeds   int
	Confidence float64
	Plan       bool
	Results    []string
	changed    func(name string) bool
}

// newTuneCmd builds 'mayday tune'; runF, when not nil, gets the parsed options instead of
// running them.
func newTuneCmd(io *ioStreams, runF func(*tuneOptions) error) *cobra.Command {
	opts := &tuneOptions{io: io}
	cmd := &cobra.Command{
		Use:   "tune [SCENARIO]",
		Short: "Search the scenario's tune block for the best recovery policy under its constraints",
		Long: `Search the keys of the scenario's tune block for the setting that maximizes (or minimizes)
one metric while the constraints of subject_to hold: a Latin hypercube start, then a race on
common seeds (every candidate runs the same seeds, compared seed by seed), dropping
candidates that break a constraint or are significantly worse than the best feasible one,
halving the rest and doubling their seeds, then refining around the leader while the budget
lasts. The recommendation is significantly better than the runner-up, or the tie is said.

The folder (--out, default runs/<name>-tune) gets tune.json (the recommendation, its
metrics and intervals, the front when objectives are given, and every candidate with its
runs), recommended.set (--set lines), recommended.yaml (the scenario with the
recommendation applied) and report.md. Ctrl-C keeps what was measured; 'mayday tune
--resume DIR' goes on from it and recommends what an uninterrupted search would have.
See docs/scenarios.md#tune.`,
		Example: `  mayday tune fleet.yaml --budget 150
  mayday tune fleet.yaml --maximize completion_rate --subject-to 'retry_amplification=<= 2' --out tuned
  mayday tune --resume tuned --budget 300`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Scenario = args[0]
			}
			opts.SeedSet = c.Flags().Changed("seed")
			opts.changed = c.Flags().Changed
			if runF != nil {
				return runF(opts)
			}
			return tuneRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.Seed, "seed", 0, "first random seed of every candidate (default: the scenario's seed)")
	f.StringArrayVar(&opts.Sets, "set", nil, "override a scenario value: path=value (repeatable)")
	f.StringVarP(&opts.Out, "out", "o", "", "tune folder (default runs/<name>-tune)")
	f.BoolVar(&opts.Force, "force", false, "replace an existing tune folder")
	addFormatFlag(cmd, &opts.Format)
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "runs at once (default: the number of cores)")
	f.StringVar(&opts.Resume, "resume", "", "continue the search stored in this tune folder")
	f.BoolVar(&opts.Plan, "plan", false, "run nothing: write the next round of candidates as a sweep file for 'mayday sweep' (docs/scale-out.md)")
	f.StringArrayVar(&opts.Results, "results", nil, "with --resume: a sweep folder or database holding the runs of the planned round, such as a merge of its shards (repeatable)")
	f.StringVar(&opts.Budget, "budget", "", "runs (such as 150) or wall time (such as 10m); replaces tune.budget")
	f.StringVar(&opts.Maximize, "maximize", "", "metric to maximize; replaces the tune block's goal")
	f.StringVar(&opts.Minimize, "minimize", "", "metric to minimize; replaces the tune block's goal")
	f.StringArrayVar(&opts.SubjectTo, "subject-to", nil, `a constraint metric=check, such as 'retry_amplification=<= 2' (repeatable); replaces subject_to`)
	f.StringSliceVar(&opts.Objectives, "objectives", nil, "metrics of a Pareto front, comma-separated; replaces objectives")
	f.IntVar(&opts.Seeds, "seeds", 0, "seeds of a first look at a candidate; replaces tune.seeds")
	f.IntVar(&opts.MaxSeeds, "max-seeds", 0, "seeds of a candidate at most; replaces tune.max_seeds")
	f.Float64Var(&opts.Confidence, "confidence", 0, "level of every interval, in (0, 1); replaces tune.confidence")
	_ = cmd.RegisterFlagCompletionFunc("maximize", completeMetrics)
	_ = cmd.RegisterFlagCompletionFunc("minimize", completeMetrics)
	_ = cmd.MarkFlagDirname("out")
	_ = cmd.MarkFlagDirname("resume")
	return cmd
}

// tuneFile is tune.json: what a search found and everything a resumed one needs.
type tuneFile struct {
	Scenario   string           `json:"scenario"`
	Source     string           `json:"source"` // the SCENARIO argument
	Sets       []string         `json:"sets,omitempty"`
	ConfigHash string           `json:"config_hash"`
	Seed       uint64           `json:"seed"`
	Version    string           `json:"version"`
	Tune       scenarios.Tune   `json:"tune"`
	Complete   bool             `json:"complete"`
	Verdict    string           `json:"verdict"`
	Runs       int              `json:"runs"`
	Rounds     int              `json:"rounds"`
	Recommend  *tuneCandidate   `json:"recommended"`
	RunnerUp   *tune.Comparison `json:"runner_up,omitempty"`
	Tied       []int            `json:"tied,omitempty"`
	Front      []tuneCandidate  `json:"front,omitempty"`
	Candidates []tuneCandidate  `json:"candidates"`
	Round      *tuneRound       `json:"round,omitempty"`
}

// tuneRound is a planned round (--plan): the candidates a sweep of File runs, as its
// points, on seeds Seed to Seed+Seeds-1.
type tuneRound struct {
	Number int        `json:"number"`
	File   string     `json:"file"`
	Prefix string     `json:"prefix"`
	Seed   uint64     `json:"seed"`
	Seeds  int        `json:"seeds"`
	Points [][]string `json:"points"` // each point's values, in the order of tune.vary
}

// tuneCandidate is one candidate in tune.json, with its runs' metrics by seed.
type tuneCandidate struct {
	*tune.Candidate
	Values []string         `json:"values"`
	Runs   []tuneRunMetrics `json:"runs,omitempty"`
}

type tuneRunMetrics struct {
	Seed    uint64             `json:"seed"`
	Metrics map[string]float64 `json:"metrics"`
}

// TuneFile is the name of a tune folder's summary.
const TuneFile = "tune.json"

// Files of a tune folder besides tune.json.
const (
	tuneSetFile    = "recommended.set"
	tunePatchFile  = "recommended.yaml"
	tuneReportFile = "report.md"
	tuneChartFile  = "tune.svg"
)

// isTuneFolder says whether dir is a tune folder mayday wrote (what --force and --resume
// may replace).
func isTuneFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("it cannot be read: %w", err)
	}
	found := false
	for _, e := range entries {
		switch n := e.Name(); {
		case n == TuneFile && e.Type().IsRegular():
			found = true
		case strings.HasPrefix(n, "round-") && filepath.Ext(n) == ".yaml" && e.Type().IsRegular():
		case (n == tuneSetFile || n == tunePatchFile || n == tuneReportFile || n == analysis.FolderManifest || filepath.Ext(n) == ".svg") && e.Type().IsRegular():
		default:
			return fmt.Errorf("it holds %s, which a tune folder does not", n)
		}
	}
	if !found {
		return fmt.Errorf("it holds no %s", TuneFile)
	}
	return nil
}

func writeTuneJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func joinComma(xs []string) string { return strings.Join(xs, ", ") }
