//go:build duckdb_arrow

package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
)

type queryOptions struct {
	io      *ioStreams
	Run     string
	SQL     string
	Format  string
	Memory  string
	Timeout time.Duration
}

// newQueryCmd builds 'mayday query'; runF, when not nil, gets the parsed options instead of
// running them.
func newQueryCmd(ios *ioStreams, runF func(*queryOptions) error) *cobra.Command {
	opts := &queryOptions{io: ios}
	cmd := &cobra.Command{
		Use:   "query RUN SQL",
		Short: "Run a read-only SQL query against a run's database",
		Long: `Open RUN (a run folder, or a mayday.duckdb file) read-only and print the result of SQL
as a table, CSV or JSON. Tables: runs, investigations, spans, transitions, executions, faults,
tool_samples, workers; the tables derived once when each run was stored (docs/tables.md):
run_metrics, incidents, saturation, tool_minutes, recovery_episodes, recovery_curve,
goodput, lifecycle, costs; views: metrics (the rows of run_metrics), tool_stats, calls,
attempts, disruptions and others. Only the views SQL names, and those they read, are
prepared: a view reached only through SQL built at run time (query(), query_table()) is
refused.

One statement per call. Only reads run (SELECT, EXPLAIN, PRAGMA, CALL): the database is
opened read-only and DuckDB is told to refuse every other file (no COPY TO, EXPORT DATABASE,
ATTACH, INSTALL, LOAD, read_csv of other files) and every SET; to write files, use
mayday export. The views are mayday's own, whatever the file stores under their names.

A query is bounded: DuckDB's memory is capped at --memory (it spills beyond it into a
private temporary folder, removed on exit, never into the run folder) and the query stops
after --timeout, with exit 2 and a message naming the limit. Ctrl-C, SIGTERM or SIGHUP
stops it within a second, with exit 130.`,
		Example: `  mayday query runs/research-fleet-s42 "SELECT * FROM metrics"
  mayday query runs/research-fleet-s42 "SELECT tool, count(*) FROM spans GROUP BY tool" --format csv`,
		Args: cobra.ExactArgs(2),
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return completeRunDirs(c, args, toComplete)
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Run, opts.SQL = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return queryRun(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output format: table, csv or json")
	cmd.Flags().StringVar(&opts.Memory, "memory", analysis.DefaultReadMemory, "DuckDB's memory limit for the query (e.g. 512MB, 4GiB)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", analysis.DefaultQueryTimeout, "stop the query after this long (e.g. 30s, 20m)")
	return cmd
}

func queryRun(ctx context.Context, opts *queryOptions) error {
	if opts.Format != "table" && opts.Format != "csv" && opts.Format != "json" {
		return badInputf("--format %q: want table, csv or json", opts.Format)
	}
	if opts.Timeout <= 0 {
		return badInputf("--timeout %s: want a positive duration such as 30s or 20m", opts.Timeout)
	}
	if err := analysis.CheckMemory(opts.Memory); err != nil {
		return badInputf("--memory: %w", err)
	}
	path, err := resolveDB(opts.Run)
	if err != nil {
		return err
	}
	return runQuery(ctx, opts.io, path, opts.SQL, opts.Format, analysis.Limits{Memory: opts.Memory, Timeout: opts.Timeout})
}

// queryGrace is how long query waits for DuckDB to honour an interrupt or the time limit
// before it gives the statement up: nothing is written, so the process may end under it.
var queryGrace = time.Second

// runQuery runs one statement on a sandboxed handle (analysis.Open) and streams its rows.
// An interrupt stops it with exit 130, the time limit with exit 2; nothing is ever written.
func runQuery(ctx context.Context, ios *ioStreams, path, query, format string, lim analysis.Limits) error {
	lim.Statement = query // only the views it reads are defined
	db, err := analysis.OpenLimited(path, lim)
	if err != nil {
		return badInput(err) // not a mayday database, or one this version cannot read
	}
	p := newRowPrinter(ios.Out, format)
	done := make(chan error, 1)
	go func() { done <- db.QueryEach(ctx, query, p.head, p.row) }()
	deadline := time.NewTimer(lim.Timeout + queryGrace)
	defer deadline.Stop()
	select {
	case err = <-done:
	case <-deadline.C:
		db.Abandon() // the statement ignored its time limit; the process ends under it
		return badInputf("query on %s: %w (%s); stopped (raise it with --timeout)", path, analysis.ErrTimeLimit, lim.Timeout)
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(queryGrace):
			db.Abandon() // DuckDB did not honour the interrupt in time
			return errQueryInterrupted
		}
	}
	defer db.Close()
	if ctx.Err() != nil {
		return errQueryInterrupted
	}
	switch {
	case errors.Is(err, analysis.ErrTimeLimit):
		return badInputf("%w (raise it with --timeout)", err)
	case errors.Is(err, analysis.ErrMemoryLimit):
		return badInputf("%w (raise it with --memory)", err)
	case err != nil:
		return badInput(err) // the query: refused (it writes), or not valid SQL for this database
	}
	return p.done()
}

// resolveDB turns a run folder or database path into the database path.
func resolveDB(ref string) (string, error) {
	st, err := os.Stat(ref)
	if err != nil {
		return "", badInputf("%s: no run folder or database there", ref)
	}
	if st.IsDir() {
		p := filepath.Join(ref, analysis.DBFile)
		if _, err := os.Stat(p); err != nil {
			return "", badInputf("%s: a folder, but not a run folder (no %s inside)", ref, analysis.DBFile)
		}
		return p, nil
	}
	return ref, nil
}

// rowPrinter writes a result row by row: csv and json at once, the table in blocks whose
// column widths only grow, so the first rows of a large result appear without waiting for
// the last.
type rowPrinter struct {
	w      io.Writer
	format string
	cols   []string
	n      int
	csv    *csv.Writer
	buf    *bufio.Writer
	widths []int
	block  [][]string
}

// tableBlock is how many rows the table format holds to size its columns.
const tableBlock = 256

func newRowPrinter(w io.Writer, format string) *rowPrinter {
	return &rowPrinter{w: w, format: format, buf: bufio.NewWriter(w)}
}

func (p *rowPrinter) head(cols []string) error {
	p.cols = append([]string(nil), cols...)
	switch p.format {
	case "csv":
		p.csv = csv.NewWriter(p.buf)
		return p.csv.Write(cols)
	case "json":
		_, err := p.buf.WriteString("[")
		return err
	}
	p.widths = make([]int, len(cols))
	p.block = append(p.block, p.cols)
	return nil
}

func (p *rowPrinter) row(vals []any) error {
	p.n++
	switch p.format {
	case "csv":
		rec := make([]string, len(vals))
		for i, v := range vals {
			rec[i] = cell(v)
		}
		return p.csv.Write(rec)
	case "json":
		return p.jsonRow(vals)
	}
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = cell(v)
	}
	p.block = append(p.block, rec)
	if len(p.block) >= tableBlock {
		return p.flushTable()
	}
	return nil
}

func (p *rowPrinter) jsonRow(vals []any) error {
	if p.n > 1 {
		p.buf.WriteString(",")
	}
	p.buf.WriteString("\n  {")
	for i, v := range vals {
		if i > 0 {
			p.buf.WriteString(", ")
		}
		k, _ := json.Marshal(p.cols[i])
		val, err := json.Marshal(jsonValue(v))
		if err != nil {
			val, _ = json.Marshal(cell(v))
		}
		p.buf.Write(k)
		p.buf.WriteString(": ")
		p.buf.Write(val)
	}
	_, err := p.buf.WriteString("}")
	return err
}

// flushTable prints the held rows padded to the widest cell seen so far.
func (p *rowPrinter) flushTable() error {
	for _, r := range p.block {
		for i, c := range r {
			p.widths[i] = max(p.widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range p.block {
		for i, c := range r {
			if i == len(r)-1 {
				p.buf.WriteString(c)
				break
			}
			p.buf.WriteString(c)
			p.buf.WriteString(strings.Repeat(" ", p.widths[i]-utf8.RuneCountInString(c)+2))
		}
		p.buf.WriteString("\n")
	}
	p.block = p.block[:0]
	return p.buf.Flush()
}

func (p *rowPrinter) done() error {
	switch p.format {
	case "csv":
		p.csv.Flush()
		if err := p.csv.Error(); err != nil {
			return err
		}
	case "json":
		p.buf.WriteString("\n]\n")
	default:
		if err := p.flushTable(); err != nil {
			return err
		}
		fmt.Fprintf(p.buf, "(%s)\n", plural(p.n, "row", "rows"))
	}
	return p.buf.Flush()
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	}
	return v
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000")
	case float64:
		return fmt.Sprintf("%.6g", x)
	case []byte:
		return string(x)
	case duckdb.OrderedMap, []any, map[string]any:
		// A map, list or struct prints as JSON ({"k": 1}), which text and CSV readers can
		// parse, not as the driver's Go types (OrderedMap{...}, map[...]).
		var b strings.Builder
		writeJSONish(&b, x)
		return b.String()
	}
	return fmt.Sprint(v)
}

// untrusted says whether err is about the database given (not mayday's own failure): it is
// not a mayday database, holds an identifier mayday does not write, or reading it reached a
// limit.
func untrusted(err error) bool {
	for _, e := range []error{analysis.ErrNotMayday, analysis.ErrIdentifier, analysis.ErrTimeLimit, analysis.ErrMemoryLimit} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// writeJSONish writes v as JSON, keeping a map's key order (DuckDB's) and a struct's fields
// sorted by name, with '<', '>' and '&' as they are.
func writeJSONish(b *strings.Builder, v any) {
	switch x := v.(type) {
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			key, ok := k.(string)
			if !ok {
				key = cell(k)
			}
			writeJSONish(b, key)
			b.WriteByte(':')
			writeJSONish(b, vals[i])
		}
		b.WriteByte('}')
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONish(b, k)
			b.WriteByte(':')
			writeJSONish(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONish(b, e)
		}
		b.WriteByte(']')
	default:
		var enc strings.Builder
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(jsonValue(x)); err != nil {
			b.WriteString(strconv.Quote(fmt.Sprint(x)))
			return
		}
		b.WriteString(strings.TrimSuffix(enc.String(), "\n"))
	}
}
