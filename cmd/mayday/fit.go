//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/fit"
	"github.com/mayday-sim/mayday/scenarios"
)

type fitOptions struct {
	io    *ioStreams
	Run   string
	RunID string
	Out   string
	Name  string
	Force bool
	Quiet bool
}

func newFitCmd(io *ioStreams, runF func(*fitOptions) error) *cobra.Command {
	opts := &fitOptions{io: io}
	cmd := &cobra.Command{
		Use:   "fit RUN",
		Short: "Fit a scenario file to a run (imported or simulated) that reproduces it",
		Long: `Fit a scenario to what the run shows, in mayday's own format: per tool a latency
distribution (the family of least AIC among constant, exponential, uniform, lognormal and
pareto, with its Kolmogorov-Smirnov distance), the share of fast failures and of lost
replies with Wilson intervals, the timeout; each incident as a fault window (outage, hang or
brownout) with its times; the arrival rate (and a change of rate, as a comment), steps per
investigation, think time, tokens per turn and their growth, the step mix, subagents; and
the retry policy (attempts, backoff, jitter, and what follows when an operation's attempts
run out: on_exhausted, from how the investigations ended) as the recovery section. Comments give every
value's interval and fit. The file is checked by the scenario decoder before it is written.
See docs/fit.md.`,
		Example: `  mayday fit runs/prod-import --out fitted.yaml
  mayday calibrate runs/prod-import fitted.yaml --seeds 5`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRunDirs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return fitRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "the scenario file to write (default: standard output)")
	f.StringVar(&opts.RunID, "run", "", "the run to fit, when the database holds several")
	f.StringVar(&opts.Name, "name", "", "the fitted scenario's name (default: the run's scenario name and -fit)")
	f.BoolVar(&opts.Force, "force", false, "replace an existing --out file")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors (no progress line, no summary)")
	return cmd
}

func fitRun(ctx context.Context, opts *fitOptions) error {
	if opts.Name != "" && !scenarioName.MatchString(opts.Name) {
		return badInputf("--name %q: want lowercase letters, digits and dashes", opts.Name)
	}
	if opts.Out != "" && !opts.Force {
		if _, err := os.Stat(opts.Out); err == nil {
			return badInputf("--out %s: the file exists; choose another or add --force", opts.Out)
		}
	}
	bar := newProgress(opts.io, opts.Quiet, "fit", 0)
	bar.phase("reading the run")
	sc, src, err := fitScenario(ctx, opts.Run, opts.RunID, opts.Name)
	bar.done()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := sc.WriteYAML(&buf, src); err != nil {
		return internal(err)
	}
	if _, err := scenarios.Parse(or(opts.Out, "fitted.yaml"), buf.Bytes(), nil); err != nil {
		// The run's names were checked (fitScenario): a file that does not load is a bug
		// of mayday fit. Its problems name their keys and lines; the text itself is not
		// shown (it may be long, and nothing was written).
		return internal(fmt.Errorf("the fitted scenario does not load, so nothing was written (a bug in mayday fit; please report it with the run): %w", err))
	}
	if opts.Out == "" {
		_, err := opts.io.Out.Write(buf.Bytes())
		return err
	}
	if err := writeFileAtomic(opts.Out, buf.Bytes()); err != nil {
		return err
	}
	if !opts.Quiet {
		notes := ""
		if n := len(sc.Notes); n > 0 {
			notes = fmt.Sprintf("; %s at the end of the file", plural(n, "note", "notes"))
		}
		fmt.Fprintf(opts.io.Out, "wrote %s: %s, %s fitted to run %s%s\n", opts.Out,
			plural(len(sc.Tools), "tool", "tools"), plural(len(sc.Faults), "fault window", "fault windows"), src.Run, notes)
		r := sc.Retry
		fmt.Fprintf(opts.io.Out, "retry: max_attempts %d, on_exhausted %s: %s\n", r.MaxAttempts,
			or(r.Exhaust.OnExhausted, "escalate (the default)"), r.Exhaust.Comment(r.MaxAttempts))
	}
	return nil
}

var scenarioName = regexp.MustCompile(`^[a-z0-9-]+$`)

// fitScenario fits the run runID (or the only complete run) of the database at ref.
func fitScenario(ctx context.Context, ref, runID, name string) (fit.Scenario, fit.Source, error) {
	obs, err := observe(ctx, ref, runID)
	if err != nil {
		return fit.Scenario{}, fit.Source{}, err
	}
	// A name the scenario format cannot hold (a control character, over 128 bytes) is the
	// run's, not fit's: say which, before anything is fitted.
	for _, t := range obs.Tools {
		if err := scenarios.CheckToolName(t.Name); err != nil {
			return fit.Scenario{}, fit.Source{}, badInputf("%s: run %s: a tool cannot be written to a scenario: %w", ref, obs.Name, err)
		}
	}
	sc, err := fit.Fit(obs)
	if err != nil {
		return sc, fit.Source{}, badInputf("%s: %w", ref, err)
	}
	src := fit.Source{Run: obs.Name}
	for _, t := range obs.Tools {
		src.Attempts += len(t.Attempts)
	}
	sc.Name = or(name, fittedName(obs.Name))
	return sc, src, nil
}

// observe reads one run of the database at ref for fitting.
func observe(ctx context.Context, ref, runID string) (fit.Observed, error) {
	path, err := resolveDB(ref)
	if err != nil {
		return fit.Observed{}, err
	}
	db, err := analysis.Open(path)
	if err != nil {
		return fit.Observed{}, badInput(err)
	}
	defer db.Close()
	if runID == "" {
		if runID, err = onlyRun(ctx, db, ref); err != nil {
			return fit.Observed{}, err
		}
	}
	obs, err := db.FitInput(ctx, runID)
	if errors.Is(err, analysis.ErrNoRun) {
		return obs, badInputf("--run: %w", err)
	}
	if err != nil {
		return obs, internal(err)
	}
	return obs, nil
}

// onlyRun is the run id of the database's only complete run.
func onlyRun(ctx context.Context, db *analysis.DB, ref string) (string, error) {
	runs, err := analysis.ListRuns(ctx, db)
	if err != nil {
		return "", internal(err)
	}
	var ids []string
	for _, r := range runs {
		if r.Status == "complete" {
			ids = append(ids, r.RunID)
		}
	}
	switch len(ids) {
	case 0:
		return "", badInputf("%s: no complete run to fit", ref)
	case 1:
		return ids[0], nil
	}
	return "", badInputf("%s holds %d runs; choose one with --run (%s)", ref, len(ids), strings.Join(ids[:min(len(ids), 5)], ", "))
}

// fittedName is a scenario name made from a run id: lowercase, other characters as dashes,
// and -fit.
func fittedName(run string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(run) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-") + "-fit"
}

// writeFileAtomic writes data to a temporary file beside path and renames it into place, so
// path holds either its old contents or all of data.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return badInputf("--out %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return internal(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return internal(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return internal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return internal(err)
	}
	return nil
}
