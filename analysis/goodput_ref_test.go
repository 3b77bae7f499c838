//go:build duckdb_arrow

package analysis

import (
	"database/sql"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/sim/record"
)

// refGoodputRow is one row of the goodput view, computed from the records by the
// definitions at the top of views/10_goodput.sql.
type refGoodputRow struct {
	minute, start, valid int64
	firstFault, faultEnd int64 // µs; -1 without a window
	baseline             float64
	hasBaseline          bool
	recovered            bool
	arrivalsContinue     bool
}

func refGoodputRows(c *record.Collector) []refGoodputRow {
	end := tsMicros(runEnd(c))
	minutes := end/60_000_000 + 1
	valid := make([]int64, minutes)
	for i := range c.Spans {
		if s := &c.Spans[i]; s.Operation == record.OpValidate && s.Status == record.StatusOK {
			valid[minuteOf(s.End)]++
		}
	}
	first, last, win := refWindows(c)
	if !win {
		first, last = -1, -1
	}
	var pre []float64
	for m, start := int64(0), int64(-1); win && m < first/60_000_000 && m < minutes; m++ {
		if start < 0 && valid[m] > 0 {
			start = m
		}
		if start >= 0 {
			pre = append(pre, float64(valid[m]))
		}
	}
	slices.Sort(pre)
	lastArrival := int64(-1)
	for _, inv := range c.Investigations {
		if inv.ParentID == 0 {
			lastArrival = max(lastArrival, minuteOf(inv.ArrivedAt))
		}
	}
	rows := make([]refGoodputRow, minutes)
	for m := range rows {
		r := refGoodputRow{minute: int64(m), start: int64(m) * 60_000_000, valid: valid[m], firstFault: first, faultEnd: last,
			arrivalsContinue: int64(m) <= lastArrival}
		if len(pre) > 0 {
			r.baseline, r.hasBaseline = quantile7(pre, 0.5), true
			r.recovered = float64(valid[m]) >= 0.9*r.baseline
		}
		rows[m] = r
	}
	return rows
}

// compareGoodput checks every row of the goodput view of a run against refGoodputRows.
func compareGoodput(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT minute, start, valid_results, first_fault_at, fault_end_at, baseline, recovered,
		arrivals_continue FROM goodput WHERE run_id = ? ORDER BY minute`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := refGoodputRows(c)
	n := 0
	for rows.Next() {
		var g refGoodputRow
		var start time.Time
		var first, end sql.NullTime
		var base sql.NullFloat64
		var rec sql.NullBool
		if err := rows.Scan(&g.minute, &start, &g.valid, &first, &end, &base, &rec, &g.arrivalsContinue); err != nil {
			t.Fatal(err)
		}
		g.start = start.UnixMicro() - epochMicros
		g.firstFault, g.faultEnd = -1, -1
		if first.Valid {
			g.firstFault = first.Time.UnixMicro() - epochMicros
		}
		if end.Valid {
			g.faultEnd = end.Time.UnixMicro() - epochMicros
		}
		g.baseline, g.hasBaseline = base.Float64, base.Valid
		g.recovered = rec.Valid && rec.Bool
		if rec.Valid != base.Valid {
			t.Errorf("goodput %s minute %d: recovered %v with baseline %v", runID, g.minute, rec, base)
		}
		if n >= len(want) {
			t.Fatalf("goodput %s: more than the %d minutes of the run", runID, len(want))
		}
		w := want[n]
		if !g.hasBaseline {
			g.baseline = w.baseline
		}
		if math.Abs(g.baseline-w.baseline) <= 1e-9*math.Abs(w.baseline) {
			g.baseline = w.baseline
		}
		if g != w {
			t.Fatalf("goodput %s minute %d:\n view %+v\n  ref %+v", runID, n, g, w)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Errorf("goodput %s: %d minutes, the run has %d", runID, n, len(want))
	}
}
