//go:build duckdb_arrow

package analysis

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/metric/compute"
)

// The derived tables are computed once, in Go (package metric/compute), and stored. The
// SQL in testdata/oracle is a second computation of the same tables, written for the tests
// only and kept independent of the Go: each file defines the view of one table, under the
// name oracle_<table>. These helpers define them on a test database and hold every stored
// table equal to its oracle, row for row and column for column.

//go:embed testdata/oracle/*.sql
var oracleFiles embed.FS

// oracleTables lists the tables testdata/oracle defines, in file order.
func oracleSQL(t failer) (names []string, stmts []string) {
	t.Helper()
	entries, err := fs.Glob(oracleFiles, "testdata/oracle/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(entries)
	var texts []string
	for _, e := range entries {
		b, err := oracleFiles.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
		names = append(names, viewName(string(b)))
	}
	for _, text := range texts {
		for _, n := range names {
			text = regexp.MustCompile(`(?i)\b(VIEW|FROM|JOIN)\s+`+n+`\b`).ReplaceAllString(text, "${1} oracle_"+n)
		}
		stmts = append(stmts, text)
	}
	return names, stmts
}

// defineOracle defines the oracle views on db and returns the tables they stand for.
func defineOracle(t failer, db *DB) []string {
	t.Helper()
	names, stmts := oracleSQL(t)
	for i, q := range stmts {
		if _, err := db.SQL().ExecContext(context.Background(), q); err != nil {
			t.Fatalf("oracle %s: %v", names[i], err)
		}
	}
	return names
}

// oracleOn defines the oracle views on db once.
func oracleOn(t failer, db *DB) {
	t.Helper()
	if _, done := oracleDefined.LoadOrStore(db, true); !done {
		defineOracle(t, db)
	}
}

// sortedRows returns query's rows, ordered by every column.
func sortedRows(t failer, db *DB, query string, args ...any) ([]string, [][]any) {
	t.Helper()
	rows, err := db.SQL().QueryContext(context.Background(), query+" ORDER BY ALL", args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, out
}

// sameValue compares a stored value with the oracle's: numbers of any type by value (floats
// within computeRelTol, see compute_test.go), times by instant, lists element by element.
func sameStored(got, want any) bool {
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	if g, ok := number(got); ok {
		w, ok := number(want)
		return ok && sameMetric(g, w)
	}
	switch g := got.(type) {
	case time.Time:
		w, ok := want.(time.Time)
		return ok && g.Equal(w)
	case []any:
		w, ok := want.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range g {
			if !sameStored(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return 0, false
}

// compareDerived fails t on every difference between run runID's stored derived tables and
// the oracle's.
func compareDerived(t failer, db *DB, runID string, tables []string) {
	t.Helper()
	for _, name := range tables {
		cols, got := sortedRows(t, db, "SELECT * FROM "+name+" WHERE run_id = ?", runID)
		wcols, want := sortedRows(t, db, "SELECT * FROM oracle_"+name+" WHERE run_id = ?", runID)
		compareStored(t, runID, name, cols, wcols, got, want)
	}
}

// compareDerivedRuns is compareDerived of every run of ids, with one query of each table
// and of its oracle for them all (rows of runs not in ids are not compared).
func compareDerivedRuns(t failer, db *DB, ids []string, tables []string) {
	t.Helper()
	for _, name := range tables {
		cols, got := sortedRows(t, db, "SELECT * FROM "+name)
		wcols, want := sortedRows(t, db, "SELECT * FROM oracle_"+name)
		g, w := byRun(t, name, cols, got), byRun(t, "oracle_"+name, wcols, want)
		for _, id := range ids {
			compareStored(t, id, name, cols, wcols, g[id], w[id])
		}
	}
}

// byRun groups rows by their run_id column, keeping their order.
func byRun(t failer, table string, cols []string, rows [][]any) map[string][][]any {
	t.Helper()
	k := slices.Index(cols, "run_id")
	if k < 0 {
		t.Fatalf("%s has no run_id column: %v", table, cols)
	}
	out := map[string][][]any{}
	for _, r := range rows {
		id := fmt.Sprint(r[k])
		out[id] = append(out[id], r)
	}
	return out
}

// compareStored fails t on every difference between the rows got of run runID's stored table
// name and the oracle's want, both ordered by every column.
func compareStored(t failer, runID, name string, cols, wcols []string, got, want [][]any) {
	t.Helper()
	if !slices.Equal(cols, wcols) {
		t.Errorf("%s %s: columns %v stored, %v in the oracle", runID, name, cols, wcols)
		return
	}
	if len(got) != len(want) {
		t.Errorf("%s %s: %d rows stored, %d in the oracle", runID, name, len(got), len(want))
		return
	}
	bad := 0
	for i := range got {
		for j := range cols {
			if !sameStored(got[i][j], want[i][j]) && bad < 5 {
				bad++
				t.Errorf("%s %s row %d: %s = %v stored, %v in the oracle", runID, name, i, cols[j], got[i][j], want[i][j])
			}
		}
	}
}

// sameTables fails t when the tables a replay of the stored records computes differ from
// those computed while the run was simulated.
func sameTables(t failer, runID string, live, replayed compute.Tables) {
	t.Helper()
	same := func(name string, a, b reflect.Value) {
		if a.Len() != b.Len() {
			t.Errorf("%s %s: %d rows live, %d replayed", runID, name, a.Len(), b.Len())
			return
		}
		key := func(v reflect.Value) []string {
			var out []string
			for r := range v.Len() {
				out = append(out, fmt.Sprintf("%v", v.Index(r).Interface()))
			}
			slices.Sort(out)
			return out
		}
		ka, kb := key(a), key(b)
		for r := range ka {
			if ka[r] != kb[r] && !closeText(ka[r], kb[r]) {
				t.Errorf("%s %s: live %s, replayed %s", runID, name, ka[r], kb[r])
				break
			}
		}
	}
	// recovery_episodes is made a range at a time: compared as all its rows.
	same("Episodes", reflect.ValueOf(allEpisodes(&live)), reflect.ValueOf(allEpisodes(&replayed)))
	lv, rv := reflect.ValueOf(live), reflect.ValueOf(replayed)
	for i := range lv.NumField() {
		if f := lv.Type().Field(i); f.IsExported() {
			same(f.Name, lv.Field(i), rv.Field(i))
		}
	}
}

// allEpisodes is every row of t's recovery_episodes.
func allEpisodes(t *compute.Tables) []compute.Episode {
	n := t.EpisodeCount()
	return t.EpisodeRange(make([]compute.Episode, 0, n), 0, n)
}

// closeText compares two rows printed with %v field by field, numbers within
// computeRelTol (a queue wait stored as seconds and read back as nanoseconds may move the
// last bits).
func closeText(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] == fb[i] {
			continue
		}
		var x, y float64
		if _, err := fmt.Sscan(strings.Trim(fa[i], "{}[]"), &x); err != nil {
			return false
		}
		if _, err := fmt.Sscan(strings.Trim(fb[i], "{}[]"), &y); err != nil {
			return false
		}
		if !sameMetric(x, y) || math.IsNaN(x) != math.IsNaN(y) {
			return false
		}
	}
	return true
}

// oracleMetrics returns run runID's metrics row as the oracle computes it in SQL
// (testdata/oracle/11_metrics.sql and 12_metrics_recomputed.sql); the oracle views must be
// defined on db (defineOracle).
func oracleMetrics(db *DB, runID string) (Metrics, error) {
	all, err := db.queryMetrics(context.Background(), "oracle_metrics_recomputed", " WHERE run_id = ?", runID)
	if err != nil {
		return Metrics{}, err
	}
	if len(all) == 0 {
		return Metrics{}, fmt.Errorf("no oracle metrics row for %s", runID)
	}
	return all[0], nil
}

// heldToOracle is every table the oracle computes a second time: the derived tables, and
// run_clock, the view that reads the stored makespan where the oracle scans every record.
func heldToOracle() []string {
	return append(derivedTableNames(), "run_clock")
}
