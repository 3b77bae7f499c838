//go:build duckdb_arrow

package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
)

func init() { subcommands = append(subcommands, newQueryCmd) }

func newQueryCmd(ios *ioStreams) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "query RUN SQL",
		Short: "Run a read-only SQL query against a run's database",
		Long: `Open RUN (a run folder, or a mayday.duckdb file) read-only and print the result of SQL
as a table, CSV or JSON. Tables: runs, investigations, spans, transitions, executions, faults,
tool_samples; views: metrics, incidents, recovery_episodes, tool_stats, lifecycle. Statements that would
write are refused.`,
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
			if format != "table" && format != "csv" && format != "json" {
				return fmt.Errorf("--format %q: want table, csv or json", format)
			}
			path, err := resolveDB(args[0])
			if err != nil {
				return err
			}
			db, err := analysis.Open(path)
			if err != nil {
				return err
			}
			defer db.Close()
			cols, rows, err := db.Query(c.Context(), args[1])
			if err != nil {
				return err
			}
			return printRows(ios.Out, format, cols, rows)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, csv or json")
	return cmd
}

// resolveDB turns a run folder or database path into the database path.
func resolveDB(ref string) (string, error) {
	st, err := os.Stat(ref)
	if err != nil {
		return "", fmt.Errorf("%s: no run folder or database there", ref)
	}
	if st.IsDir() {
		p := filepath.Join(ref, analysis.DBFile)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: a folder, but not a run folder (no %s inside)", ref, analysis.DBFile)
		}
		return p, nil
	}
	return ref, nil
}

func printRows(w io.Writer, format string, cols []string, rows [][]any) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(cols)
		rec := make([]string, len(cols))
		for _, r := range rows {
			for i, v := range r {
				rec[i] = cell(v)
			}
			_ = cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	case "json":
		// An array of objects with keys in column order.
		var b strings.Builder
		b.WriteString("[")
		for ri, r := range rows {
			if ri > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n  {")
			for i, v := range r {
				if i > 0 {
					b.WriteString(", ")
				}
				k, _ := json.Marshal(cols[i])
				val, err := json.Marshal(jsonValue(v))
				if err != nil {
					val, _ = json.Marshal(cell(v))
				}
				b.Write(k)
				b.WriteString(": ")
				b.Write(val)
			}
			b.WriteString("}")
		}
		b.WriteString("\n]\n")
		_, err := io.WriteString(w, b.String())
		return err
	default:
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		for _, r := range rows {
			for i, v := range r {
				if i > 0 {
					fmt.Fprint(tw, "\t")
				}
				fmt.Fprint(tw, cell(v))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "(%s)\n", plural(len(rows), "row", "rows"))
		return err
	}
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
	}
	return fmt.Sprint(v)
}
