//go:build duckdb_arrow

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/reports"
)

type importOptions struct {
	io          *ioStreams
	Inputs      []string
	Out         string
	Force       bool
	Conventions string
	RetryWindow time.Duration
	RunID       string
	Service     string
	Redact      []string
	Format      string
	Quiet       bool
	MaxMessage  string
	MaxFile     string
	MaxInput    string
	MaxSpread   time.Duration
	MaxRuns     int
}

// newImportCmd builds 'mayday import'; runF, when not nil, gets the parsed options instead
// of running them.
func newImportCmd(io *ioStreams, runF func(*importOptions) error) *cobra.Command {
	opts := &importOptions{io: io}
	cmd := &cobra.Command{
		Use:   "import FILE|DIR... --out DIR",
		Short: "Read OpenTelemetry traces of a real fleet into a run folder, with the same metrics",
		Long: `Read OTLP trace data into the new run folder DIR: the OpenTelemetry Collector file
exporter's JSON lines, OTLP/JSON request bodies and OTLP protobuf (.pb: one request, or
requests each after its length as a varint); .gz files are read too, and a folder is read
for its .json, .jsonl, .ndjson and .pb files.

Spans of the GenAI conventions, the Vercel AI SDK (ai.*), OpenInference and OpenLLMetry
are recognised span by span, or all as one with --conventions. Each service.name is a run
of its own (--service keeps one). Agent spans become investigations (a subagent's parent is
its nearest agent ancestor, or the run that started it, by link or session id; fragments of
a trace whose root is missing are one investigation), tool spans attempts of logical
operations (a retry: the same repeating tool call id, else an attempt attribute, else the
agent calling a failed tool again at a later step within --retry-window), model spans model
turns with their tokens. Timestamps are kept as recorded. Every import says on stderr how
its spans were read. A mayday export (mayday export --format otlp) is read back run by
run, whole.

What a trace cannot know (tool-side executions, true validity, compute, pending time)
stays NULL; the metrics that need it are NULL, and summary.json says why under "unknown".
Secret-looking attribute values are redacted as in a simulated run. The mapping is in
docs/import.md.

The files are read as untrusted: a line, request body or protobuf message larger than
--max-message, a file larger than --max-file or input larger than --max-input (all
decompressed), a run whose spans cover more than --max-spread, times outside the years
2000-2199, and counts outside 0..2^53 are refused (exit 2); a folder is read for its
regular files only, and a link in it to a file outside it is refused.`,
		Example: `  mayday import otel-collector/traces.jsonl --out runs/prod-2026-03-02
  mayday import exports/otlp --out runs/roundtrip
  mayday import spans.pb --conventions openinference --retry-window 2m --out runs/phoenix`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Inputs = args
			if runF != nil {
				return runF(opts)
			}
			return importRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "the run folder to create (required)")
	f.BoolVar(&opts.Force, "force", false, "replace DIR if it is a run folder mayday wrote")
	f.StringVar(&opts.Conventions, "conventions", analysis.ConvAuto, "auto (per span) or one of "+strings.Join(analysis.ConventionNames(), ", "))
	f.DurationVar(&opts.RetryWindow, "retry-window", analysis.DefaultRetryWindow, "a call of a tool this soon after a failed call of it, at a later step of the same investigation, is its retry (when no repeating tool call id or attempt attribute says)")
	f.StringVar(&opts.RunID, "run-id", "import", "the run id of the imported traces (a mayday export keeps its own; with several services, each run is RUN-ID-SERVICE)")
	f.StringVar(&opts.Service, "service", "", "import only the spans of this service.name (default: every service, one run each)")
	f.StringSliceVar(&opts.Redact, "redact", nil, "more secret-key patterns to redact, as a scenario's redact")
	f.StringVar(&opts.Format, "format", "text", "how to print the summary: text or json")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress line on a terminal")
	f.StringVar(&opts.MaxMessage, "max-message", fmt.Sprintf("%dMiB", analysis.DefaultMaxMessage>>20), "refuse a JSON line, JSON request body or protobuf message larger than this, decompressed")
	f.StringVar(&opts.MaxFile, "max-file", fmt.Sprintf("%dGiB", analysis.DefaultMaxFile>>30), "refuse a file larger than this, decompressed")
	f.StringVar(&opts.MaxInput, "max-input", fmt.Sprintf("%dGiB", analysis.DefaultMaxTotal>>30), "refuse input larger than this, every file decompressed")
	f.DurationVar(&opts.MaxSpread, "max-spread", analysis.DefaultMaxSpread, "refuse a run whose spans cover more than this, from the first start to the last end")
	f.IntVar(&opts.MaxRuns, "max-runs", analysis.DefaultMaxRuns, "refuse input of more runs than this (one per service.name, one per run of a mayday export)")
	_ = cmd.RegisterFlagCompletionFunc("conventions", cobra.FixedCompletions(
		append([]string{analysis.ConvAuto}, analysis.ConventionNames()...), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func importRun(ctx context.Context, opts *importOptions) error {
	if opts.Out == "" {
		return badInputf("--out: name the run folder to create, e.g. --out runs/imported")
	}
	if opts.Format != "text" && opts.Format != "json" {
		return badInputf("--format %q: want text or json", opts.Format)
	}
	if opts.RetryWindow <= 0 {
		return badInputf("--retry-window %s: want a positive duration", opts.RetryWindow)
	}
	limits, err := importLimits(opts)
	if err != nil {
		return err
	}
	if _, err := analysis.TraceInputs(opts.Inputs); err != nil {
		return badInput(err)
	}
	for _, in := range opts.Inputs {
		if analysis.IsExportManifest(in) {
			fmt.Fprintf(opts.io.ErrOut, "note: skipping %s: the manifest of a mayday export, not trace data\n", in)
		}
	}
	var sum reports.Summary
	tx := folderTx{io: opts.io, Dir: opts.Out, Force: opts.Force, What: "run folder", Fill: func(folder *analysis.Folder) (bool, error) {
		var err error
		sum, err = importInto(ctx, opts, limits, folder)
		return err == nil, err
	}}
	res, err := tx.run(ctx)
	if ctx.Err() != nil {
		return interrupted("nothing was written")
	}
	if err != nil {
		return err
	}
	if !res.Stored {
		return internal(errors.New("import: the run folder was not stored"))
	}
	if opts.Format == "text" && len(sum.Import) > 1 && !sum.Import[0].Native {
		// One run per service: each has its own metrics, which are no seeds of one another.
		return printPerRun(opts.io, sum)
	}
	return printSummary(opts.io, opts.Format, sum)
}

// importInto imports into the staged folder and writes its summary.
func importInto(ctx context.Context, opts *importOptions, limits analysis.ReadLimits, folder *analysis.Folder) (reports.Summary, error) {
	db, err := analysis.Create(folder.DBPath())
	if err != nil {
		return reports.Summary{}, internal(err)
	}
	bar := newProgress(opts.io, opts.Quiet, "import", 0)
	res, err := analysis.Import(ctx, db, opts.Inputs, analysis.ImportOptions{
		Conventions: opts.Conventions, RetryWindow: opts.RetryWindow, RunID: opts.RunID, Service: opts.Service,
		Redact: opts.Redact, Version: version, Limits: limits,
		Progress: func(file string, i, n int, spans int64) {
			bar.update(fmt.Sprintf("file %d of %d (%s), %s read", i, n, filepath.Base(file), plural(int(spans), "span", "spans")))
		},
	})
	bar.done()
	if err != nil {
		db.Close()
		if ctx.Err() != nil {
			return reports.Summary{}, interrupted("nothing was written")
		}
		if errors.Is(err, analysis.ErrBadTraceInput) {
			return reports.Summary{}, badInput(err)
		}
		return reports.Summary{}, internal(err)
	}
	outs, err := analysis.ImportOutcomes(ctx, db, res)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return reports.Summary{}, internal(err)
	}
	var unknown map[string]string
	for _, r := range res.Runs {
		if len(r.Unknown) > 0 {
			unknown = r.Unknown
		}
	}
	sum := reports.SummarizeImported(res.Runs[0].Scenario, version, outs, unknown)
	sum.Import = res.Runs
	if opts.Format == "text" {
		printImportNotes(opts.io, res)
	}
	sum.Database = filepath.Join(opts.Out, analysis.DBFile)
	if err := sum.WriteFile(folder.Path(analysis.SummaryFile)); err != nil {
		return reports.Summary{}, internal(err)
	}
	return sum, nil
}

// printImportNotes says on stderr how each run's spans were read: spans by role, names of
// spans it did not map, missing parents and orphan fragments, so that a span format it
// does not know never goes unnoticed.
func printImportNotes(io *ioStreams, res *analysis.ImportResult) {
	for _, r := range res.Runs {
		if r.Parts > 0 {
			fmt.Fprintf(io.ErrOut, "import: run %s: more spans than an import holds in memory: spilled to disk and built in %d parts of joined traces\n", r.RunID, r.Parts)
		}
		st := r.Summary
		if st == nil {
			continue
		}
		roles := make([]string, 0, len(st.SpansByRole))
		for _, k := range slices.Sorted(maps.Keys(st.SpansByRole)) {
			roles = append(roles, fmt.Sprintf("%s %d", k, st.SpansByRole[k]))
		}
		fmt.Fprintf(io.ErrOut, "import: run %s (service %q): %d spans in %d traces: %s; %d investigations\n",
			r.RunID, r.Service, r.Spans, st.Traces, strings.Join(roles, ", "), r.Investigations)
		if len(st.Unmapped) > 0 {
			names := slices.SortedFunc(maps.Keys(st.Unmapped), func(a, b string) int {
				return cmp.Or(cmp.Compare(st.Unmapped[b], st.Unmapped[a]), strings.Compare(a, b))
			})
			var parts []string
			for i, n := range names {
				if i == 8 {
					parts = append(parts, fmt.Sprintf("and %d more names", len(names)-8))
					break
				}
				parts = append(parts, fmt.Sprintf("%q %d", n, st.Unmapped[n]))
			}
			fmt.Fprintf(io.ErrOut, "import:   spans of no role (kept only as links): %s\n", strings.Join(parts, ", "))
		}
		if st.MissingParents > 0 || st.CyclesBroken > 0 || st.JoinedTraces > 0 {
			fmt.Fprintf(io.ErrOut, "import:   %d spans whose parent is missing (%d traces without their root span, grouped by trace), %d parent loops cut, %d agent traces joined to the run that started them\n",
				st.MissingParents, st.MissingRoots, st.CyclesBroken, st.JoinedTraces)
		}
		if st.SpansByRole["tool"] == 0 && st.SpansByRole["model_turn"] == 0 {
			fmt.Fprintf(io.ErrOut, "import:   warning: no span was read as a tool call or a model turn; name the conventions with --conventions (%s)\n", strings.Join(analysis.ConventionNames(), ", "))
		}
	}
}

// printPerRun prints the summary of each run of an import of several services, each with
// its own metrics (summary.json lists them under seeds, each with its run id).
func printPerRun(io *ioStreams, sum reports.Summary) error {
	for i, r := range sum.Import {
		if i >= len(sum.Seeds) {
			break
		}
		one := sum
		one.Scenario, one.Seeds, one.Intervals = r.Scenario, nil, nil
		one.Seed, one.Digest, one.Status, one.Metrics = sum.Seeds[i].Seed, sum.Seeds[i].Digest, sum.Seeds[i].Status, sum.Seeds[i].Metrics
		one.TerminationReasons = sum.Seeds[i].TerminationReasons
		fmt.Fprintf(io.Out, "run %s:\n", r.RunID)
		if err := one.WriteText(io.Out); err != nil {
			return err
		}
	}
	return nil
}

// importLimits reads --max-message, --max-file, --max-input and --max-spread.
func importLimits(opts *importOptions) (analysis.ReadLimits, error) {
	var l analysis.ReadLimits
	for _, f := range []struct {
		flag, value string
		into        *int64
	}{{"max-message", opts.MaxMessage, &l.Message}, {"max-file", opts.MaxFile, &l.File}, {"max-input", opts.MaxInput, &l.Total}} {
		n, err := parseBytes(f.value)
		if err != nil || n > math.MaxInt64 {
			return l, badInputf("--%s %q: want a size such as 64MiB or 16GiB", f.flag, f.value)
		}
		*f.into = int64(n)
	}
	if opts.MaxSpread <= 0 {
		return l, badInputf("--max-spread %s: want a positive duration such as 744h (31 days)", opts.MaxSpread)
	}
	l.Spread = opts.MaxSpread
	if opts.MaxRuns <= 0 {
		return l, badInputf("--max-runs %d: want a positive count", opts.MaxRuns)
	}
	l.Runs = opts.MaxRuns
	return l, nil
}
