//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
)

// BenchmarkMetricsView times `SELECT * FROM metrics` on one stored run, the query `mayday
// query RUN "SELECT * FROM metrics"`, `report`, `check` and `compare` of a stored run ask:
// research-fleet at 10,000 investigations (about 1.09 million rows) and the M/M/8 peer
// model (200,000 customers, about 3 million rows). The run is simulated and stored once
// (Execute, as `mayday run -o` does, into a file), and the file opened as `mayday query`
// opens it (Open: read only, sandboxed); each iteration then reads the view: metrics (the
// rows stored with the run) and metrics_recomputed (recomputed from the trace). It reports
// the median wall of one query (view-s), the stored rows of the nine trace tables and the
// median per million of them (s-per-Mrows), the figure issue 23's target of well under 0.2
// s per million rows is about (docs/performance.md).
func BenchmarkMetricsView(b *testing.B) {
	for _, c := range []struct {
		name string
		load func(b *testing.B) *scenarios.Scenario
	}{
		{"research-fleet-10k", benchScenario},
		{"mm8", func(b *testing.B) *scenarios.Scenario {
			s, err := scenarios.Load(mm8File, nil)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s := c.load(b)
			path := filepath.Join(b.TempDir(), DBFile)
			w, err := Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Execute(ctx, w, Spec{Scenario: s, Seed: s.Seed}); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			db, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			rows := storedRows(b, db)
			// metrics reads the row stored with the run.
			for _, view := range []string{"metrics"} {
				b.Run(view, func(b *testing.B) {
					var walls []float64
					for b.Loop() {
						t0 := time.Now()
						_, got, err := db.Query(ctx, "SELECT * FROM "+view)
						walls = append(walls, time.Since(t0).Seconds())
						if err != nil {
							b.Fatal(err)
						}
						if len(got) != 1 {
							b.Fatalf("%s: %d rows, want the run's one", view, len(got))
						}
					}
					slices.Sort(walls)
					med := walls[len(walls)/2]
					if len(walls)%2 == 0 {
						med = (walls[len(walls)/2-1] + med) / 2
					}
					b.ReportMetric(med, "view-s")
					b.ReportMetric(float64(rows), "rows")
					b.ReportMetric(med/(float64(rows)/1e6), "s-per-Mrows")
				})
			}
		})
	}
}

// storedRows counts the rows of the trace tables of db (all but runs).
func storedRows(b *testing.B, db *DB) int64 {
	b.Helper()
	var n int64
	for _, t := range traces.Tables() {
		if t == traces.Runs {
			continue
		}
		_, rows, err := db.Query(context.Background(), "SELECT count(*) FROM "+t.String())
		if err != nil {
			b.Fatal(err)
		}
		n += rows[0][0].(int64)
	}
	return n
}
