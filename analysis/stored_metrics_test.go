//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/traces"
)

// The metrics view reads the row stored with each run (run_metrics); metrics_recomputed
// recomputes it from the trace. These tests store a row unlike the trace's (made up), so
// that which of the two a read gives shows, and damage the stored rows in the ways a file
// can be damaged: a reader must then recompute, and a writer repair them.

// madeUp is a metrics row no trace gives: counts 1, 2, 3, ..., other metrics i + 0.25,
// correct_completion_rate undefined, goodput_recovered 1 (the definition stores it as
// DECIMAL(2,1)), and termination reasons whose names need quoting.
func madeUp(t *testing.T, runID string) Metrics {
	t.Helper()
	vals := make([]float64, len(MetricNames))
	for i, name := range MetricNames {
		switch {
		case name == "correct_completion_rate":
			vals[i] = math.NaN()
		case name == "goodput_recovered":
			vals[i] = 1
		case metric.All[i].Unit == metric.Count:
			vals[i] = float64(i + 1)
		default:
			vals[i] = float64(i) + 0.25
		}
	}
	m, err := NewMetrics(runID, vals, map[string]int64{`it's "odd"`: 3, "budget": 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loadMadeUp simulates spec into db and stores made as its metrics row.
func loadMadeUp(t *testing.T, db *DB, spec Spec, made Metrics) {
	t.Helper()
	s := spec.Scenario
	load, err := db.Load(t.Context(), spec.RunID, traces.ScenarioOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(t.Context(), s, spec.Seed, load, sim.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	load.SetMetrics(made)
	load.SetTables(compute.Tables{}) // stored as the run's own: no recomputation replaces it
	if err := load.Finish(traces.Run{RunID: spec.RunID, Scenario: s.Name, Seed: spec.Seed, Config: string(s.JSON()),
		ConfigHash: s.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
}

// sameMetrics fails t unless got and want hold the same values (NaN for NaN), reasons and
// currency, exactly.
func sameMetrics(t *testing.T, what string, got, want Metrics) {
	t.Helper()
	for _, name := range MetricNames {
		g, gok := got.Value(name)
		w, wok := want.Value(name)
		if gok != wok || (gok && g != w) {
			t.Errorf("%s: %s = %v (defined %v), want %v (defined %v)", what, name, g, gok, w, wok)
		}
	}
	if !maps.Equal(got.TerminationReasons, want.TerminationReasons) || got.Currency != want.Currency {
		t.Errorf("%s: reasons %v currency %q, want %v %q", what, got.TerminationReasons, got.Currency, want.TerminationReasons, want.Currency)
	}
}

// storedPair writes a database file with two runs: specs[0] with the row metrics_recomputed
// gives it, specs[1] with made (madeUp), then runs damage (unless "") on it before closing.
// The undamaged file is made once (storedPairTemplate) and copied to path.
func storedPair(t *testing.T, path string, damage string) (specs []Spec, made Metrics) {
	t.Helper()
	tpl := &storedPairTemplate
	tpl.once.Do(func() {
		dir, err := os.MkdirTemp("", "mayday-stored-pair-")
		if err != nil {
			t.Fatal(err)
		}
		atExit(func() { os.RemoveAll(dir) })
		tpl.path = filepath.Join(dir, DBFile)
		tpl.specs = batchSpecs(t)[:2]
		db, err := Create(tpl.path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Execute(t.Context(), db, tpl.specs[0]); err != nil {
			t.Fatal(err)
		}
		tpl.made = madeUp(t, tpl.specs[1].RunID)
		loadMadeUp(t, db, tpl.specs[1], tpl.made)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		tpl.done = true
	})
	if !tpl.done {
		t.Fatal("the stored pair was not made (see the test that made it first)")
	}
	// Each caller damages a copy of its own.
	b, err := os.ReadFile(tpl.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if damage != "" {
		c, err := duckdb.NewConnector(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw := sql.OpenDB(c)
		if _, err := raw.ExecContext(t.Context(), damage); err != nil {
			t.Fatal(err)
		}
		if err := raw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return slices.Clone(tpl.specs), tpl.made
}

// storedPairTemplate is the file storedPair copies, made once.
var storedPairTemplate struct {
	once  sync.Once
	path  string
	specs []Spec
	made  Metrics
	done  bool
}

// The row a run is stored with is the metrics view's, for the writer and for a reader, and
// metrics_recomputed still recomputes the trace's.
func TestMetricsViewReadsTheStoredRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBFile)
	specs, made := storedPair(t, path, "")
	for _, open := range []struct {
		name string
		open func(string) (*DB, error)
	}{{"read-only", Open}, {"for writing", OpenWrite}} {
		db, err := open.open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Metrics(t.Context(), specs[1].RunID)
		if err != nil {
			t.Fatal(err)
		}
		sameMetrics(t, open.name, got, made)
		re, err := db.RecomputeMetrics(t.Context(), specs[1].RunID)
		if err != nil {
			t.Fatal(err)
		}
		if re.Get("completion_rate") == made.Get("completion_rate") || re.Get("started") == made.Get("started") {
			t.Errorf("%s: metrics_recomputed gives the stored row (%v started), not the trace's", open.name, re.Get("started"))
		}
		_, rows, err := db.Query(t.Context(), "SELECT run_id, termination_reasons FROM metrics ORDER BY run_id")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Errorf("%s: %d rows in metrics, want 2", open.name, len(rows))
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A reader of a file whose stored rows do not fit (a run without its row, a run with two, a
// column missing or of another type, the table missing: a file an older version wrote, or
// damaged) reads the
// metrics recomputed from the trace, of every run; a writer opening it repairs the rows, so
// that a reader then reads them stored again.
func TestStoredRowsThatDoNotFitAreRecomputed(t *testing.T) {
	for _, c := range []struct {
		name, damage string
		keepsMadeUp  bool // the repair leaves the made-up row, which fits its run
	}{
		{"a run without its row", "DELETE FROM run_metrics WHERE completion_rate = 0.25", false},
		{"a run with two rows", "INSERT INTO run_metrics SELECT * FROM run_metrics WHERE completion_rate = 0.25", false},
		{"a row of no run", "INSERT INTO run_metrics SELECT * REPLACE ('gone' AS run_id) FROM run_metrics WHERE completion_rate = 0.25", true},
		{"a column missing", "ALTER TABLE run_metrics DROP COLUMN peak_backlog", false},
		{"a column of text", "ALTER TABLE run_metrics ALTER started TYPE VARCHAR", false},
		{"reasons of text", "ALTER TABLE run_metrics ALTER termination_reasons TYPE VARCHAR", false},
		{"no table", "DROP VIEW metrics; DROP TABLE run_metrics; CREATE VIEW metrics AS SELECT * FROM runs", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if metric.Index("completion_rate") != 0 {
				t.Fatal("madeUp's completion_rate is no longer 0.25 (its index, 0, + 0.25): fix the damage's WHERE")
			}
			path := filepath.Join(t.TempDir(), DBFile)
			specs, made := storedPair(t, path, c.damage)
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			all, err := db.AllMetrics(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || all[0].RunID != specs[0].RunID || all[1].RunID != specs[1].RunID {
				t.Fatalf("metrics of %d runs, want the 2 of the file", len(all))
			}
			for _, m := range all {
				re, err := db.RecomputeMetrics(t.Context(), m.RunID)
				if err != nil {
					t.Fatal(err)
				}
				sameMetrics(t, "read-only, "+m.RunID, m, re)
			}
			db.Close()
			// So does a handle opened for a statement that reads metrics (mayday query).
			q := "SELECT run_id, started, completion_rate FROM metrics ORDER BY run_id"
			db, err = OpenLimited(path, Limits{Statement: q})
			if err != nil {
				t.Fatal(err)
			}
			_, rows, err := db.Query(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || rows[1][1] != int64(all[1].Get("started")) {
				t.Errorf("%s on its own handle: %v; want the 2 runs, %v started in %s", q, rows, all[1].Get("started"), specs[1].RunID)
			}
			db.Close()
			// A writer repairs the rows; a reader then reads rows that fit.
			w, err := OpenWrite(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var stored bool
			if err := db.SQL().QueryRowContext(t.Context(),
				"SELECT sql LIKE '%FROM run_metrics%' FROM duckdb_views() WHERE view_name = 'metrics' AND database_name = 'memory'").Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if !stored {
				t.Errorf("after a writer opened the file, the reader's metrics view still recomputes")
			}
			for _, id := range []string{specs[0].RunID, specs[1].RunID} {
				got, err := db.Metrics(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				re, err := db.RecomputeMetrics(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if id == made.RunID && c.keepsMadeUp {
					re = made
				}
				// The rows that did not fit are stored again, from the trace.
				sameMetrics(t, "repaired, "+id, got, re)
			}
			if made.RunID != specs[1].RunID {
				t.Fatal("madeUp stored under another run id")
			}
		})
	}
}

// Merge does not copy a source's stored rows: the target's are recomputed from the trace it
// copied.
func TestMergeRecomputesTheStoredRows(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.duckdb")
	specs, made := storedPair(t, src, "")
	dst, err := Create(filepath.Join(dir, "dst.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := Merge(context.Background(), dst, []string{src}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dst.SQL().QueryRow("SELECT count(*) FROM run_metrics").Scan(&n); err != nil || n != 2 {
		t.Fatalf("run_metrics holds %d rows after the merge (%v), want 2", n, err)
	}
	got, err := dst.Metrics(t.Context(), specs[1].RunID)
	if err != nil {
		t.Fatal(err)
	}
	re, err := dst.RecomputeMetrics(t.Context(), specs[1].RunID)
	if err != nil {
		t.Fatal(err)
	}
	sameMetrics(t, "merged", got, re)
	if got.Get("started") == made.Get("started") {
		t.Errorf("the merged run kept the source's made-up row")
	}
}
