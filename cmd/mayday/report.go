//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/reports"
)

type reportOptions struct {
	io     *ioStreams
	Runs   []string
	Out    string
	Format string
	Force  bool
	Quiet  bool
}

// newReportCmd builds 'mayday report'; runF, when not nil, gets the parsed options instead of
// running them.
func newReportCmd(io *ioStreams, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{io: io}
	cmd := &cobra.Command{
		Use:   "report RUN...",
		Short: "Write an HTML and a Markdown report with charts of one or more runs",
		Long: `Read each RUN (a run folder, a sweep folder or a mayday.duckdb file) read-only and write:

  report.html  one self-contained page: charts inline as SVG, styles inline, nothing fetched
               from the network, so it opens anywhere (a CI artifact, a laptop offline);
  report.md    the same report in Markdown, with its charts as PNG files beside it, to paste
               into a pull request comment.

The charts: investigations by lifecycle state over time with the fault windows shaded;
failed attempts per tool per minute with the detected incidents; retries and retry-budget
tokens of the tools that failed; the distribution of recovery time; retry amplification and
duplicate side effects per tool; cost per completed investigation. The tables: the metrics
(with confidence intervals when a run has several seeds), incidents, tools, termination
reasons, refused supervisor suggestions and the ten slowest recoveries with their
investigation ids.

Given several runs (both sides of a comparison, the points of a sweep), the charts overlay
them and the metrics table has a column per run. The default folder is report/ inside the
first RUN, where a new report replaces the last one; a folder given with --out that exists
is refused unless --force, as every command's folder is. The report is written to a hidden
folder beside it and moved into place whole. Either way, only a report folder whose
contents match the manifest mayday wrote into it (.mayday-manifest.json) is replaced; a
folder holding anything else is refused, naming it.`,
		Example: `  mayday report runs/research-fleet-s42
  mayday report runs/before runs/after --out review/
  mayday report runs/before runs/after --out review/ --force   # again, over the first
  mayday report runs/fleet-sweep --format json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeRunDirs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Runs = args
			if runF != nil {
				return runF(opts)
			}
			return reportRun(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "folder to write the report into (default: report/ inside the first RUN)")
	addFormatFlag(cmd, &opts.Format)
	f.BoolVar(&opts.Force, "force", false, "replace the --out folder when it holds a report mayday wrote (report/ inside the first RUN is always replaced)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors")
	return cmd
}

func reportRun(ctx context.Context, opts *reportOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if err := checkOut(opts.Out); err != nil {
		return err
	}
	// Check every argument before reading any, so a typo in the last is reported at once.
	for _, r := range opts.Runs {
		if _, err := reports.DBPath(r); err != nil {
			return badInput(err)
		}
	}
	dir := opts.Out
	if dir == "" {
		dir = defaultReportDir(opts.Runs[0])
	}
	// A run that cannot be read is bad input (not a mayday database, one from an
	// incompatible version); failing to draw or write what was read is ours.
	bar := newProgress(opts.io, opts.Quiet || opts.Format == "json", "report", 0)
	defer bar.done()
	runs, err := reports.LoadProgress(ctx, opts.Runs, func(what string, done, total int) {
		if total > 0 {
			what = fmt.Sprintf("%s (%d/%d)", what, done, total)
		}
		bar.update(what)
	})
	if ctx.Err() != nil {
		return interrupted("no report was written")
	}
	if err != nil {
		return badInput(err) // not a mayday database, one a limit stopped, one this version cannot read
	}
	bar.phase("drawing the charts and writing " + dir)
	var files reports.Files
	// report/ inside the run is the report's own place, so a new report replaces the last
	// one there; a folder the user named with --out is theirs until --force says otherwise.
	force := opts.Force || opts.Out == ""
	tx := folderTx{io: opts.io, Dir: dir, Force: force, What: "report folder", Recognise: isReportFolder,
		Fill: func(f *analysis.Folder) (bool, error) {
			staged, err := reports.New(runs, version).Write(f.Path(""))
			if err != nil {
				return false, internal(err)
			}
			files = reports.Files{Dir: dir, HTML: filepath.Join(dir, reports.HTMLFile), Markdown: filepath.Join(dir, reports.MarkdownFile)}
			for _, img := range staged.Images {
				files.Images = append(files.Images, filepath.Join(dir, filepath.Base(img)))
			}
			return true, nil
		}}
	_, err = tx.run(ctx)
	bar.done()
	if err != nil {
		if ctx.Err() != nil {
			return interrupted("no report was written; %s was left as it was", dir)
		}
		return err
	}
	if ctx.Err() != nil {
		return interrupted("the report was written whole to %s", dir)
	}
	if opts.Quiet {
		return nil
	}
	if opts.Format == "json" {
		b, err := json.MarshalIndent(files, "", "  ")
		if err != nil {
			return internal(err)
		}
		_, err = fmt.Fprintf(opts.io.Out, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintf(opts.io.Out, "report: %s\n        %s (%d PNG charts beside it)\n", files.HTML, files.Markdown, len(files.Images))
	return err
}

// isReportFolder says whether dir is a report folder mayday wrote, which a new report
// replaces: only report.html, report.md and PNG charts.
func isReportFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("it cannot be read: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || (n != reports.HTMLFile && n != reports.MarkdownFile && n != analysis.FolderManifest && filepath.Ext(n) != ".png") {
			return fmt.Errorf("it holds %s, which a report does not", n)
		}
	}
	return nil
}

// defaultReportDir is report/ inside the run folder, or beside the database file.
func defaultReportDir(run string) string {
	if st, err := os.Stat(run); err == nil && !st.IsDir() {
		return filepath.Join(filepath.Dir(run), "report")
	}
	return filepath.Join(run, "report")
}
