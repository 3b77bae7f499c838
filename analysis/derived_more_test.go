//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// The tool_stats, lifecycle and costs rows package compute calculates from the record
// stream are the views' of the same names: these tests send a run's records into a
// database and into the Go accumulators at once, and hold every row and column equal to
// `SELECT * FROM <view>`, NULL for NULL, floats within computeRelTol (sums of floats are
// added in another order than DuckDB's; see computeRelTol).

// derivedMore are the accumulators of one run.
type derivedMore struct {
	stats *compute.ToolStats
	life  *compute.Lifecycle
	costs *compute.Costs
}

func (d derivedMore) sink() record.Sink { return record.Tee{d.stats, d.life, d.costs} }

// newDerivedMore returns the accumulators of a run of s, priced and redacted as its trace
// is stored.
func newDerivedMore(t failer, s *scenarios.Scenario) derivedMore {
	t.Helper()
	_, co := sinkOptions(t, s)
	return derivedMore{compute.NewToolStats(compute.ToolStatsOptions{}), compute.NewLifecycle(compute.TimeOf(0)),
		compute.NewCosts(compute.CostsOptions{Prices: co.Prices, Redact: co.Redact})}
}

// oracleMore is the oracle's rows of tool_stats, lifecycle and costs of one run.
type oracleMore struct {
	stats []compute.ToolStat
	life  []compute.LifecycleRow
	costs []compute.Cost
}

// The orders of the oracle's rows the accumulators' rows come in.
const (
	toolStatsOrder = "tool NULLS LAST"
	lifecycleOrder = "minute, agent"
)

// compareDerivedMore fails t on every row and column where the accumulators' rows differ from
// the views' for runID, and returns how many rows of each it compared.
func compareDerivedMore(t failer, db *DB, runID string, d derivedMore) (stats, life, costs int) {
	t.Helper()
	readyOracle(t, db)
	return compareDerivedMoreWith(t, db, runID, d, oracleMore{
		queryRows[compute.ToolStat](t, db, "SELECT * FROM oracle_tool_stats WHERE run_id = $1 ORDER BY "+toolStatsOrder, runID),
		queryRows[compute.LifecycleRow](t, db, "SELECT * FROM oracle_lifecycle WHERE run_id = $1 ORDER BY "+lifecycleOrder, runID),
		queryRows[compute.Cost](t, db, "SELECT * FROM oracle_costs WHERE run_id = $1", runID)})
}

// compareDerivedMoreRuns is compareDerivedMore of every run of more, with one query of each
// oracle view for them all (see compareComputedRuns); it returns the rows compared over all.
func compareDerivedMoreRuns(t failer, db *DB, ids []string, more map[string]derivedMore) (stats, life, costs int) {
	t.Helper()
	readyOracle(t, db)
	o := map[string]*oracleMore{}
	at := func(id string) *oracleMore {
		if o[id] == nil {
			o[id] = &oracleMore{}
		}
		return o[id]
	}
	for _, r := range queryRows[compute.ToolStat](t, db, "SELECT * FROM oracle_tool_stats ORDER BY run_id, "+toolStatsOrder) {
		at(r.RunID).stats = append(at(r.RunID).stats, r)
	}
	for _, r := range queryRows[compute.LifecycleRow](t, db, "SELECT * FROM oracle_lifecycle ORDER BY run_id, "+lifecycleOrder) {
		at(r.RunID).life = append(at(r.RunID).life, r)
	}
	for _, r := range queryRows[compute.Cost](t, db, "SELECT * FROM oracle_costs ORDER BY run_id") {
		at(r.RunID).costs = append(at(r.RunID).costs, r)
	}
	for _, id := range ids {
		a, b, c := compareDerivedMoreWith(t, db, id, more[id], *at(id))
		stats, life, costs = stats+a, life+b, costs+c
	}
	return stats, life, costs
}

// readyOracle defines the oracle views on db once and makes sure its derived tables are
// stored (a run loaded without them has them computed from its records now).
func readyOracle(t failer, db *DB) {
	t.Helper()
	if tb, ok := t.(testing.TB); ok {
		if _, done := oracleDefined.LoadOrStore(db, true); !done {
			defineOracle(tb, db)
		}
	}
	if err := db.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// compareDerivedMoreWith compares the accumulators' rows of runID with the oracle's o.
func compareDerivedMoreWith(t failer, db *DB, runID string, d derivedMore, o oracleMore) (stats, life, costs int) {
	t.Helper()
	incidents := queryRows[compute.Incident](t, db, "SELECT * FROM incidents WHERE run_id = $1 ORDER BY incident", runID)
	episodes := queryRows[compute.Episode](t, db, "SELECT * FROM recovery_episodes WHERE run_id = $1", runID)
	ts := d.stats.Rows(runID, incidents, episodes)
	compareTable(t, runID, "tool_stats", ts, o.stats)
	lc := d.life.Rows(runID)
	compareTable(t, runID, "lifecycle", lc, o.life)
	co := d.costs.Rows(runID)
	compareTable(t, runID, "costs", co, o.costs)
	return len(ts), len(lc), len(co)
}

// compareTable fails t on each row count or column where got differs from want.
func compareTable[T any](t failer, runID, table string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows of %s computed in Go, %d in the view", runID, len(got), table, len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := reflect.ValueOf(got[i]), reflect.ValueOf(want[i])
		for j := range g.NumField() {
			if !sameColumn(g.Field(j), w.Field(j)) {
				t.Errorf("%s: %s row %d (%v): %s = %v computed in Go, %v in the view", runID, table, i, w.Field(1),
					g.Type().Field(j).Tag.Get("db"), g.Field(j), w.Field(j))
			}
		}
	}
}

// sameColumn compares two values of a column: floats within computeRelTol, the Null types
// NULL for NULL, everything else exactly.
func sameColumn(g, w reflect.Value) bool {
	switch v := g.Interface().(type) {
	case float64:
		return sameMetric(v, w.Float())
	case compute.NullFloat:
		o := w.Interface().(compute.NullFloat)
		return v.Valid == o.Valid && (!v.Valid || sameMetric(v.V, o.V))
	}
	return reflect.DeepEqual(g.Interface(), w.Interface())
}

// queryRows reads the rows of q into row type T (compute's tables: a field per column, in
// order, tagged with the column's name), failing t when a column is not the field's.
func queryRows[T any](t failer, db *DB, q string, args ...any) []T {
	t.Helper()
	rows, err := db.SQL().QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[T]()
	if len(cols) != typ.NumField() {
		t.Fatalf("%s: %d columns, %s has %d fields", q, len(cols), typ, typ.NumField())
	}
	for i, c := range cols {
		if tag := typ.Field(i).Tag.Get("db"); tag != c {
			t.Fatalf("%s: column %d is %s, field %s of %s is tagged %q", q, i, c, typ.Field(i).Name, typ, tag)
		}
	}
	var out []T
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var v T
		rv := reflect.ValueOf(&v).Elem()
		for i := range vals {
			if err := setColumn(rv.Field(i), vals[i]); err != nil {
				t.Fatalf("%s: column %s: %v", q, cols[i], err)
			}
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// setColumn sets field f to the value v the driver scanned.
func setColumn(f reflect.Value, v any) error {
	typ := f.Type()
	if typ.Kind() == reflect.Struct && typ.NumField() == 2 && typ.Field(1).Name == "Valid" {
		if v == nil {
			f.SetZero()
			return nil
		}
		f.Field(1).SetBool(true)
		return setColumn(f.Field(0), v)
	}
	if v == nil {
		return fmt.Errorf("NULL for a %s", typ)
	}
	switch {
	case typ == reflect.TypeFor[compute.Time]():
		tm, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("%T for a TIMESTAMP", v)
		}
		f.SetInt(tm.UnixMicro())
	case typ.Kind() == reflect.Int64:
		switch x := v.(type) {
		case int64:
			f.SetInt(x)
		case int32:
			f.SetInt(int64(x))
		case *big.Int:
			if !x.IsInt64() {
				return fmt.Errorf("%s out of BIGINT", x)
			}
			f.SetInt(x.Int64())
		default:
			return fmt.Errorf("%T for a BIGINT", v)
		}
	case typ.Kind() == reflect.Float64:
		x, ok := v.(float64)
		if !ok {
			return fmt.Errorf("%T for a DOUBLE", v)
		}
		f.SetFloat(x)
	case typ.Kind() == reflect.String:
		x, ok := v.(string)
		if !ok {
			return fmt.Errorf("%T for a VARCHAR", v)
		}
		f.SetString(x)
	case typ.Kind() == reflect.Bool:
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%T for a BOOLEAN", v)
		}
		f.SetBool(x)
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.String:
		xs, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%T for a VARCHAR[]", v)
		}
		ss := make([]string, len(xs))
		for i, x := range xs {
			if ss[i], ok = x.(string); !ok {
				return fmt.Errorf("%T in a VARCHAR[]", x)
			}
		}
		f.Set(reflect.ValueOf(ss))
	default:
		return fmt.Errorf("no mapping for a %s", typ)
	}
	return nil
}

// TestDerivedMoreEqualViewsOnExamples: every embedded example, small, and runs that reach
// the corners (an outage on the model provider, work in flight at the horizon, no
// inspection before a retry).
func TestDerivedMoreEqualViewsOnExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	// The runs of TestComputedMetricsEqualViewsOnExamples, which include those corners.
	ex := simulatedExamples(t)
	stats, life, priced := compareDerivedMoreRuns(t, ex.db, ex.ids, ex.more)
	runs := ex.ids
	// The comparison must have compared something of each table.
	if stats == 0 || life == 0 || priced == 0 {
		t.Errorf("compared %d tool_stats rows, %d lifecycle rows, %d costs rows over %d runs", stats, life, priced, len(runs))
	}
}

// TestDerivedMoreEqualViewsOnImports: the runs imported from the library fixtures, whose
// clock starts at their first span (not the simulated epoch) and whose queue waits are
// unknown.
func TestDerivedMoreEqualViewsOnImports(t *testing.T) {
	collected := map[string]*record.Collector{}
	importTee = func(runID string) record.Sink {
		c := &record.Collector{}
		collected[runID] = c
		return c
	}
	defer func() { importTee = nil }()
	for _, dir := range libraryFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			truth := readTruth(t, dir)
			db, res := importInto(t, []string{filepath.Join(dir, truth.File)}, ImportOptions{})
			for _, run := range res.Runs {
				c := collected[run.RunID]
				if c == nil {
					t.Fatalf("run %s: no records", run.RunID)
				}
				d := derivedMore{compute.NewToolStats(compute.ToolStatsOptions{UnknownQueueWait: !run.Native}),
					compute.NewLifecycle(compute.Time(run.TimeZero.UnixMicro())), compute.NewCosts(compute.CostsOptions{})}
				c.Replay(d.sink())
				stats, life, _ := compareDerivedMore(t, db, run.RunID, d)
				if stats == 0 || life == 0 {
					t.Errorf("run %s: compared %d tool_stats and %d lifecycle rows", run.RunID, stats, life)
				}
			}
		})
	}
}
