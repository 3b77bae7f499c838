//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
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
				derivedAsReplay(t, inputs[name])
			})
		}
	}
}

// The same of runs of mayday's own export read back: every embedded example (cut to 60
// investigations, with its faults, tool samples, executions and subagents), held in memory
// and built in parts of a few hundred spans, where a part's subagents have greater ids than
// the next part's roots and its executions are held to the end.
func TestNativeImportDerivesAsReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	for _, info := range scenarios.List() {
		db, _ := exampleDB(t, info.Name, 60)
		out := filepath.Join(t.TempDir(), "otlp")
		if _, err := Export(context.Background(), db, out, ExportOptions{Format: FormatOTLP, ChunkSpans: 2000}); err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int64{0, 300} {
			t.Run(fmt.Sprintf("%s/parts-%d", info.Name, parts), func(t *testing.T) {
				if parts > 0 {
					withSpillSpans(t, parts)
				}
				derivedAsReplay(t, []string{out})
			})
		}
	}
}

// derivedAsReplay imports inputs and fails t unless every run's derived tables and metrics
// row were computed as it loaded, and equal, row for row, those replay computes.
func derivedAsReplay(t *testing.T, inputs []string) {
	t.Helper()
	asLoaded := map[string]bool{}
	importDerived = func(runID string, loaded bool) { asLoaded[runID] = loaded }
	t.Cleanup(func() { importDerived = nil })
	db, res := importInto(t, inputs, ImportOptions{})
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

// A native run's investigations are sent in id order across parts: an id is sent once
// every smaller one has been, the rest held; a part holding an id at or below one sent
// leaves the run to replay.
func TestNativeOrderSendsInIDOrder(t *testing.T) {
	part := func(o *storedOrder, ids ...int64) {
		for _, id := range ids {
			o.Span(&record.Span{InvestigationID: id, SpanID: uint64(id)})
			o.Investigation(&record.Investigation{InvestigationID: id, RootID: id})
		}
		o.flush()
	}
	held := func(o *storedOrder) []int64 { return slices.Sorted(maps.Keys(o.pending)) }
	o := newNativeOrder("{}")
	part(o, 1, 4, 7)
	if o.last != 1 || !slices.Equal(held(o), []int64{4, 7}) || o.heldRecords != 4 {
		t.Fatalf("after ids 1, 4, 7: sent up to %d, holding %v (%d records); want 1 sent, 4 and 7 held (4 records)", o.last, held(o), o.heldRecords)
	}
	part(o, 5, 2, 3)
	if o.last != 5 || !slices.Equal(held(o), []int64{7}) {
		t.Fatalf("after ids 2, 3, 5: sent up to %d, holding %v; want 1-5 sent, 7 held", o.last, held(o))
	}
	part(o, 6)
	if o.last != 7 || len(held(o)) != 0 || o.heldRecords != 0 || o.off {
		t.Fatalf("after id 6: sent up to %d, holding %v, off %v; want all sent", o.last, held(o), o.off)
	}
	part(o, 3)
	if !o.off {
		t.Fatal("a part holding an id below those sent did not leave the run to replay")
	}
	o = newNativeOrder("{}")
	part(o, 1, math.MaxInt64)
	if !o.off {
		t.Fatal("an investigation id of 2^63-1, which no id follows, did not leave the run to replay")
	}
	if o := newNativeOrder(`{"import": {"time_zero_us": 1}}`); !o.off {
		t.Fatal("a run whose config names an import's time 0 was not left to replay")
	}
}
