//go:build duckdb_arrow

package analysis

import (
	"database/sql"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/mayday-sim/mayday/sim/record"
)

// refGoodputRow is one row of the goodput view, computed from the records by the
// definitions at the top of testdata/oracle/10_goodput.sql.
type refGoodputRow struct {
	minute, start, valid int64
	firstFault, faultEnd int64 // µs; -1 without a window
	baseline, sd         float64
	hasBaseline          bool
	threshold            float64 // 0 without a baseline
	window               int64   // valid results of this minute and the next 4; -1 past the end
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
	firstArrival, lastArrival := int64(math.MaxInt64), int64(-1)
	for _, inv := range c.Investigations {
		if inv.ParentID == 0 {
			firstArrival = min(firstArrival, minuteOf(inv.ArrivedAt))
			lastArrival = max(lastArrival, minuteOf(inv.ArrivedAt))
		}
	}
	// The steady state: the second half of the minutes from the first arrival to the first
	// window, at least 5 of them.
	var steady []float64
	if win && lastArrival >= 0 {
		faultMinute := first / 60_000_000
		for m := firstArrival + (faultMinute-firstArrival+1)/2; m < faultMinute; m++ {
			if m >= 0 && m < minutes {
				steady = append(steady, float64(valid[m]))
			}
		}
	}
	rows := make([]refGoodputRow, minutes)
	for m := range rows {
		r := refGoodputRow{minute: int64(m), start: int64(m) * 60_000_000, valid: valid[m], firstFault: first, faultEnd: last,
			arrivalsContinue: int64(m) <= lastArrival, window: -1}
		if m+4 < len(valid) {
			r.window = 0
			for _, v := range valid[m : m+5] {
				r.window += v
			}
		}
		if len(steady) >= 5 {
			r.baseline, r.sd = stat.MeanStdDev(steady, nil)
			r.hasBaseline = true
			r.threshold = 4.5*r.baseline - 2.326*math.Sqrt(5)*r.sd
			r.recovered = r.window >= 0 && float64(r.window) >= r.threshold
		}
		rows[m] = r
	}
	return rows
}

// compareGoodput checks every row of the goodput view of a run against refGoodputRows.
func compareGoodput(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT minute, start, valid_results, first_fault_at, fault_end_at, baseline, baseline_sd,
		coalesce(window_results, -1), threshold, recovered, arrivals_continue FROM goodput WHERE run_id = ? ORDER BY minute`, runID)
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
		var base, sd, threshold sql.NullFloat64
		var rec sql.NullBool
		if err := rows.Scan(&g.minute, &start, &g.valid, &first, &end, &base, &sd, &g.window, &threshold, &rec, &g.arrivalsContinue); err != nil {
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
		g.baseline, g.sd, g.hasBaseline = base.Float64, sd.Float64, base.Valid
		g.threshold = threshold.Float64
		if threshold.Valid != (base.Valid && sd.Valid) {
			t.Errorf("goodput %s minute %d: threshold %v with baseline %v and sd %v", runID, g.minute, threshold, base, sd)
		}
		g.recovered = rec.Valid && rec.Bool
		if base.Valid && g.window >= 0 && !rec.Valid {
			t.Errorf("goodput %s minute %d: recovered %v with baseline %v and a window", runID, g.minute, rec, base)
		}
		if n >= len(want) {
			t.Fatalf("goodput %s: more than the %d minutes of the run", runID, len(want))
		}
		w := want[n]
		if !g.hasBaseline {
			g.baseline, g.sd = w.baseline, w.sd
		}
		if math.Abs(g.baseline-w.baseline) <= 1e-9*math.Abs(w.baseline) {
			g.baseline = w.baseline
		}
		if math.Abs(g.sd-w.sd) <= 1e-9*math.Max(1, math.Abs(w.sd)) {
			g.sd = w.sd
		}
		if math.Abs(g.threshold-w.threshold) <= 1e-9*math.Max(1, math.Abs(w.threshold)) {
			g.threshold = w.threshold
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
