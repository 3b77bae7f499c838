//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// loadSynthRun loads a synthetic run with every trace table non-empty.
func loadSynthRun(t *testing.T, db *DB, runID string, seed uint64) {
	t.Helper()
	s := synthMixed(seed, 60, true)
	s.c.Fault(&record.Fault{FaultID: "outage-backtest", Kind: "outage", Tool: "backtest", Start: 40 * minute, End: 45 * minute, Parameters: `{}`, Window: true, Hits: record.HitsCalls})
	s.c.Sample(&record.Sample{Tool: "backtest", At: minute, Queued: 3, InService: 2, BudgetTokens: -1, BreakerState: "off", Attempts: 5})
	s.c.Worker(&record.Worker{Worker: 1, Zone: "a"}) // fills workers
	s.c.Worker(&record.Worker{Worker: 2, Zone: "b"})
	for i := range s.c.Spans {
		if sp := &s.c.Spans[i]; sp.Operation == record.OpExecuteTool {
			sp.Attrs = append(sp.Attrs, record.Attr{Key: "arg.region", Value: "eu"}) // fills tool_args
			sp.Worker = int64(1 + i%2)
		}
	}
	run := traces.Run{RunID: runID, Scenario: "synthetic", Seed: seed, Config: synthConfig(s), ConfigHash: "h", Events: 1}
	if err := LoadCollector(db, runID, &s.c, run); err != nil {
		t.Fatal(err)
	}
}

// tableSum is a table's row count and an order-independent checksum of its rows: the sum of
// a hash of every column of each row, so one changed value anywhere changes it.
func tableSum(t *testing.T, db *DB, from string, cols []string) (rows, sum string) {
	t.Helper()
	q := fmt.Sprintf("SELECT count(*)::VARCHAR, coalesce(sum(hash(%s)::HUGEINT), 0)::VARCHAR FROM %s", strings.Join(cols, ", "), from)
	if err := db.SQL().QueryRow(q).Scan(&rows, &sum); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows, sum
}

func exportColumns(table string) []string {
	if table == "sweep_params" {
		return []string{"run_id", "point", "path", "value"}
	}
	for _, tb := range traces.Tables() {
		if tb.String() == table {
			var cols []string
			for _, f := range traces.Schema(tb).Fields() {
				cols = append(cols, ident(f.Name))
			}
			return cols
		}
	}
	panic("no table " + table)
}

// checkRoundTrip compares every table with what DuckDB reads back from the Parquet files.
func checkRoundTrip(t *testing.T, db *DB, tables []string, source func(table string) string) {
	t.Helper()
	for _, table := range tables {
		cols := exportColumns(table)
		for i, c := range cols {
			if _, ok := storedEnums()[table+"."+strings.Trim(c, `"`)]; ok {
				cols[i] = c + "::VARCHAR" // written to Parquet as its text, which hashes apart from the ENUM value
			}
		}
		n, sum := tableSum(t, db, ident(table), cols)
		pn, psum := tableSum(t, db, source(table), cols)
		if n == "0" {
			t.Errorf("%s: empty, so the round trip proves nothing", table)
		}
		if n != pn || sum != psum {
			t.Errorf("%s: database %s rows (checksum %s), Parquet %s rows (checksum %s)", table, n, sum, pn, psum)
		}
	}
}

func traceTables() []string {
	var ts []string
	for _, t := range traces.Tables() {
		ts = append(ts, t.String())
	}
	return ts
}

func TestExportParquetRoundTrip(t *testing.T) {
	db := openTestDB(t)
	loadSynthRun(t, db, "synth-s1", 1)
	loadSynthRun(t, db, "synth-s2", 2)
	out := filepath.Join(t.TempDir(), "pq")
	m, err := Export(context.Background(), db, out, ExportOptions{Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != len(traces.Tables()) {
		t.Errorf("%d files, want one per table (%d)", len(m.Files), len(traces.Tables()))
	}
	checkRoundTrip(t, db, traceTables(), func(table string) string {
		return "read_parquet(" + literal(filepath.Join(out, table+".parquet")) + ")"
	})
	// zstd, as documented.
	var codecs string
	q := "SELECT string_agg(DISTINCT compression, ',') FROM parquet_metadata(" + literal(filepath.Join(out, "spans.parquet")) + ")"
	if err := db.SQL().QueryRow(q).Scan(&codecs); err != nil || codecs != "ZSTD" {
		t.Errorf("spans.parquet compression %q (%v), want ZSTD", codecs, err)
	}
}

func TestExportParquetSweepHive(t *testing.T) {
	db := openTestDB(t)
	var params []SweepParam
	for point := range 2 {
		for _, seed := range []uint64{5, 6} {
			id := SweepRunID("grid", point, seed)
			loadSynthRun(t, db, id, seed+uint64(10*point))
			params = append(params, SweepParam{RunID: id, Point: point, Path: "recovery.retry.max_attempts", Value: fmt.Sprint(3 + point)})
		}
	}
	// The runs' seeds are 5, 6, 15, 16, so a wrong partition shows in the paths.
	if err := WriteSweepParams(context.Background(), db, params); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pq")
	m, err := Export(context.Background(), db, out, ExportOptions{Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	tables := append(traceTables(), "sweep_params")
	if want := len(tables) * 4; len(m.Files) != want {
		t.Errorf("%d files, want %d (a file per table and run)", len(m.Files), want)
	}
	for _, p := range []string{"spans/point=0/seed=5/grid-p0-s5.parquet", "spans/point=1/seed=16/grid-p1-s6.parquet", "sweep_params/point=1/seed=15/grid-p1-s5.parquet"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("hive layout: %v", err)
		}
	}
	// The partition keys come from the paths alone, typed as the database has them.
	glob := func(table string) string {
		return "read_parquet(" + literal(filepath.Join(out, table, "*", "*", "*.parquet")) +
			", hive_partitioning = true, hive_types = {'point': INTEGER, 'seed': UBIGINT})"
	}
	checkRoundTrip(t, db, tables, glob)
	// Every row sits in the partition of its own run's point and seed.
	var misplaced int
	q := "SELECT count(*) FROM " + glob("transitions") + " x JOIN sweep_params p ON p.run_id = x.run_id JOIN runs r ON r.run_id = x.run_id " +
		"WHERE x.point::INTEGER <> p.point OR x.seed::UBIGINT <> r.seed"
	if err := db.SQL().QueryRow(q).Scan(&misplaced); err != nil || misplaced != 0 {
		t.Errorf("%d rows in another run's partition (%v)", misplaced, err)
	}
	checkHiveFilesWithArrow(t, out, tables)
	// DuckDB's own hive detection, without hive_types, reads the dataset too: no file has a
	// column that clashes with a partition key.
	var n int
	if err := db.SQL().QueryRow("SELECT count(DISTINCT seed) FROM read_parquet(" +
		literal(filepath.Join(out, "runs", "*", "*", "*.parquet")) + ", hive_partitioning = true)").Scan(&n); err != nil || n != 4 {
		t.Errorf("runs read with hive partitioning: %d seeds (%v), want 4", n, err)
	}
}

// checkHiveFilesWithArrow reads every file of the sweep dataset with arrow-go's Parquet
// reader, as a dataset reader does: per table one schema in every file (so the files merge),
// no column named like a partition key, every timestamp an instant in UTC (Arrow zone UTC,
// Parquet isAdjustedToUTC), and the partition keys taken from the path.
func checkHiveFilesWithArrow(t *testing.T, out string, tables []string) {
	t.Helper()
	timestamps := 0
	for _, table := range tables {
		files, _ := filepath.Glob(filepath.Join(out, table, "point=*", "seed=*", "*.parquet"))
		if len(files) != 4 {
			t.Errorf("%s: %d files, want 4", table, len(files))
		}
		var first *arrow.Schema
		for _, f := range files {
			rel, _ := filepath.Rel(filepath.Join(out, table), f)
			parts := strings.Split(rel, string(filepath.Separator))
			if len(parts) != 3 || !strings.HasPrefix(parts[0], "point=") || !strings.HasPrefix(parts[1], "seed=") {
				t.Errorf("%s: not a point=/seed= path", rel)
			}
			sch, n := readArrowParquet(t, f)
			if n == 0 && table != "tool_args" {
				t.Errorf("%s: no rows", f)
			}
			for _, fld := range sch.Fields() {
				if slices.Contains(hiveKeys, fld.Name) {
					t.Errorf("%s: column %q duplicates a partition key", rel, fld.Name)
				}
				if ts, ok := fld.Type.(*arrow.TimestampType); ok {
					timestamps++
					if ts.TimeZone != "UTC" {
						t.Errorf("%s: %s is %s, want a UTC instant", rel, fld.Name, ts)
					}
				}
			}
			if first == nil {
				first = sch
			} else if !first.Equal(sch) {
				t.Errorf("%s: %s's files have different schemas:\n%s\n%s", f, table, first, sch)
			}
		}
	}
	if timestamps == 0 {
		t.Error("no timestamp column was read; the UTC check proved nothing")
	}
}

// readArrowParquet reads one file with pqarrow; it also checks the Parquet logical type of
// each timestamp column.
func readArrowParquet(t *testing.T, path string) (*arrow.Schema, int64) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	for i := range rdr.MetaData().Schema.NumColumns() {
		col := rdr.MetaData().Schema.Column(i)
		if ts, ok := col.LogicalType().(*schema.TimestampLogicalType); ok && !ts.IsAdjustedToUTC() {
			t.Errorf("%s: column %s has isAdjustedToUTC=false", path, col.Name())
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	return tbl.Schema(), tbl.NumRows()
}
