//go:build duckdb_arrow

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
)

type exportOptions struct {
	io         *ioStreams
	Run        string
	Format     string
	Out        string
	Force      bool
	ChunkSpans int
	Encoding   string
	Gzip       bool
	Quiet      bool
}

// newExportCmd builds 'mayday export'; runF, when not nil, gets the parsed options instead of
// running them.
func newExportCmd(io *ioStreams, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{io: io}
	cmd := &cobra.Command{
		Use:   "export RUN --format otlp|parquet --out DIR",
		Short: "Write a run's or a sweep's traces as OpenTelemetry (OTLP/JSON) or Parquet files",
		Long: `Export every run in RUN (a run folder, a sweep folder or a .duckdb file) into the new
folder DIR, for tools that read OpenTelemetry traces or Parquet.

  otlp     ExportTraceServiceRequest files, one trace per root investigation, at most
           --chunk-spans spans per file (whole traces), each ready to POST to an OTLP/HTTP
           endpoint (/v1/traces): OTLP/JSON (.json, the default) or, with --encoding
           proto, the protobuf body (.pb, less than half the size), which Phoenix, Tempo
           and the OpenTelemetry Collector take; --gzip compresses each file (.gz).
           mayday import reads either back.
  parquet  one zstd-compressed Parquet file per trace table; a sweep in a hive layout
           <table>/point=P/seed=S/<run_id>.parquet.

DIR is written in a hidden folder beside it and renamed into place when whole; an existing
DIR is refused unless --force and it is a previous export (it holds export.json). The
mapping of columns to OpenTelemetry attributes is in docs/export.md.`,
		Example: `  mayday export runs/research-fleet-s42 --format otlp --out exports/otlp
  mayday export runs/research-fleet-s42 --format otlp --encoding proto --gzip --out exports/otlp-pb
  mayday export runs/fleet-sweep --format parquet --out exports/sweep-parquet`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRunDirs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return exportRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "", "what to write: otlp or parquet (required)")
	f.StringVar(&opts.Out, "out", "", "the export folder to create (required)")
	f.BoolVar(&opts.Force, "force", false, "replace DIR if it holds a previous export")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress line on a terminal")
	f.IntVar(&opts.ChunkSpans, "chunk-spans", analysis.DefaultChunkSpans, "otlp: spans per file at most (a file ends between traces)")
	f.StringVar(&opts.Encoding, "encoding", analysis.EncodingJSON, "otlp: json (OTLP/JSON) or proto (the OTLP/HTTP protobuf body)")
	f.BoolVar(&opts.Gzip, "gzip", false, "otlp: gzip each file")
	_ = cmd.RegisterFlagCompletionFunc("encoding", cobra.FixedCompletions(
		[]string{analysis.EncodingJSON, analysis.EncodingProto}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{analysis.FormatOTLP, analysis.FormatParquet}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func exportRun(ctx context.Context, opts *exportOptions) error {
	if opts.Format != analysis.FormatOTLP && opts.Format != analysis.FormatParquet {
		return badInputf("--format %q: want otlp or parquet", opts.Format)
	}
	if opts.Out == "" {
		return badInputf("--out: name the export folder to create, e.g. --out exports/%s", opts.Format)
	}
	if opts.Encoding != analysis.EncodingJSON && opts.Encoding != analysis.EncodingProto {
		return badInputf("--encoding %q: want json or proto", opts.Encoding)
	}
	encoding := opts.Encoding
	if opts.Format != analysis.FormatOTLP {
		if opts.Gzip || opts.Encoding != analysis.EncodingJSON {
			return badInputf("--encoding and --gzip apply to --format otlp only (Parquet files are zstd-compressed)")
		}
		encoding = ""
	}
	if opts.ChunkSpans < 1 {
		return badInputf("--chunk-spans %d: want at least 1 span per file", opts.ChunkSpans)
	}
	path, err := resolveDB(opts.Run)
	if err != nil {
		return err
	}
	db, err := analysis.Open(path)
	if err != nil {
		return badInput(err)
	}
	defer db.Close()
	bar := newProgress(opts.io, opts.Quiet, "export", 0)
	bar.phase("reading " + opts.Run)
	m, err := analysis.Export(ctx, db, opts.Out, analysis.ExportOptions{
		Format: opts.Format, Force: opts.Force, ChunkSpans: opts.ChunkSpans, Encoding: encoding, Gzip: opts.Gzip,
		Version: version, Source: opts.Run,
		Progress: func(files int, rows int64) {
			bar.update(fmt.Sprintf("%s written, %s", plural(files, "file", "files"),
				plural(int(rows), rowWord(opts.Format), rowWord(opts.Format)+"s")))
		},
	})
	bar.done()
	if ctx.Err() != nil {
		return interrupted("nothing was exported")
	}
	if err != nil {
		if errors.Is(err, analysis.ErrExists) || errors.Is(err, analysis.ErrNotExport) || untrusted(err) {
			return badInput(err)
		}
		return internal(err)
	}
	_, err = fmt.Fprintf(opts.io.Out, "exported %s (%s) as %s: %s, %s, %s\n",
		opts.Run, plural(len(m.Runs), "run", "runs"), opts.Format,
		plural(len(m.Files), "file", "files"), plural(int(m.Rows()), rowWord(opts.Format), rowWord(opts.Format)+"s"),
		byteSize(m.Bytes()))
	if err == nil {
		_, err = fmt.Fprintf(opts.io.Out, "  %s\n", opts.Out)
	}
	return err
}

func rowWord(format string) string {
	if format == analysis.FormatOTLP {
		return "span"
	}
	return "row"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
