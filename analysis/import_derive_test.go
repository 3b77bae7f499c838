//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
)

// An imported run's derived tables and metrics row, computed as it loads (storedOrder), are
// exactly those that replaying its stored records computes, on every library fixture, held
// in memory and built in parts of a few hundred spans.
func TestImportDerivesAsReplay(t *testing.T) {
	inputs := map[string][]string{}
	for _, dir := range libraryFixtures(t) {
		inputs[filepath.Base(dir)] = []string{filepath.Join(dir, readTruth(t, dir).File)}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range inputs {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		for _, parts := range []int64{0, 300} {
			t.Run(fmt.Sprintf("%s/parts-%d", name, parts), func(t *testing.T) {
				if parts > 0 {
					withSpillSpans(t, parts)
				}
				asLoaded := map[string]bool{}
				importDerived = func(runID string, loaded bool) { asLoaded[runID] = loaded }
				t.Cleanup(func() { importDerived = nil })
				db, res := importInto(t, inputs[name], ImportOptions{})
				ctx := context.Background()
				for _, run := range res.Runs {
					if !asLoaded[run.RunID] {
						t.Errorf("run %s: its derived tables were left to replay", run.RunID)
						continue
					}
					got := derivedRows(t, db, run.RunID)
					if _, err := db.SQL().Exec("DELETE FROM "+derivedRuns+" WHERE run_id = ?", run.RunID); err != nil {
						t.Fatal(err)
					}
					if err := db.deriveMissing(ctx); err != nil {
						t.Fatal(err)
					}
					want := derivedRows(t, db, run.RunID)
					for table, rows := range want {
						if len(rows) == 0 && table != storedMetrics {
							continue
						}
						if !slices.Equal(got[table], rows) {
							t.Errorf("run %s, %s: as loaded %d rows, replayed %d; first difference:\n%s", run.RunID, table,
								len(got[table]), len(rows), firstDifference(got[table], rows))
						}
					}
				}
			})
		}
	}
}

// derivedRows is every row of run runID in run_metrics and each derived table, as text,
// in order.
func derivedRows(t *testing.T, db *DB, runID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, name := range append([]string{storedMetrics}, derivedTableNames()...) {
		_, rows := sortedRows(t, db, "SELECT * FROM "+name+" WHERE run_id = ?", runID)
		for _, r := range rows {
			out[name] = append(out[name], fmt.Sprint(r...))
		}
	}
	return out
}

// firstDifference shows the first row where a and b differ.
func firstDifference(a, b []string) string {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	row := func(rows []string) string {
		if i < len(rows) {
			return rows[i]
		}
		return "(none)"
	}
	return "as loaded: " + row(a) + "\nreplayed:  " + row(b)
}

// GOGC is raised while any import runs and set back when the last one ends, whatever the
// order they end in.
func TestImportGCNests(t *testing.T) {
	gogc := func() int { v := debug.SetGCPercent(100); debug.SetGCPercent(v); return v }
	before := gogc()
	a := raiseImportGC()
	b := raiseImportGC()
	if got := gogc(); got != importGCPercent {
		t.Fatalf("GOGC %d while two imports run, want %d", got, importGCPercent)
	}
	a()
	a() // a second call does nothing
	if got := gogc(); got != importGCPercent {
		t.Fatalf("GOGC %d while one import still runs, want %d", got, importGCPercent)
	}
	b()
	if got := gogc(); got != before {
		t.Fatalf("GOGC %d after every import ended, want %d as before", got, before)
	}
}
