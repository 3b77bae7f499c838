//go:build duckdb_arrow

package analysis

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/metric/detect"
	"github.com/mayday-sim/mayday/sim/record"
)

// refGoodputRow is one row of the goodput table, computed from the records by the
// definitions at the top of testdata/oracle/10_goodput.sql: the valid results (validate
// spans with status ok) of each minute by the minute of their end, the first fault window's
// start and the last one's end, and whether roots still arrived.
type refGoodputRow struct {
	minute, start, valid int64
	firstFault, faultEnd int64 // µs; -1 without a window
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
	lastArrival := int64(-1)
	for _, inv := range c.Investigations {
		if inv.ParentID == 0 {
			lastArrival = max(lastArrival, minuteOf(inv.ArrivedAt))
		}
	}
	rows := make([]refGoodputRow, minutes)
	for m := range rows {
		rows[m] = refGoodputRow{minute: int64(m), start: int64(m) * 60_000_000, valid: valid[m], firstFault: first, faultEnd: last,
			arrivalsContinue: int64(m) <= lastArrival}
	}
	return rows
}

// compareGoodput checks every row of the goodput table of a run against refGoodputRows.
func compareGoodput(t testing.TB, db *DB, runID string, c *record.Collector) {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT minute, start, valid_results, first_fault_at, fault_end_at, arrivals_continue
		FROM goodput WHERE run_id = ? ORDER BY minute`, runID)
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
		if err := rows.Scan(&g.minute, &start, &g.valid, &first, &end, &g.arrivalsContinue); err != nil {
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
		if first.Valid != end.Valid {
			t.Errorf("goodput %s minute %d: first_fault_at %v with fault_end_at %v", runID, g.minute, first, end)
		}
		if n >= len(want) {
			t.Fatalf("goodput %s: more than the %d minutes of the run", runID, len(want))
		}
		if w := want[n]; g != w {
			t.Fatalf("goodput %s minute %d:\n table %+v\n   ref %+v", runID, n, g, w)
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

// refGoodputInstants is what the goodput rule reads, built from the records: the instants
// (µs) of the valid results (the end of each validate span with status ok), sorted; the
// first and last root arrivals; the fault windows with a duration. ok is false without a
// root.
func refGoodputInstants(c *record.Collector) (valid []int64, firstArrival, lastArrival int64, windows []detect.Window, ok bool) {
	for i := range c.Spans {
		if s := &c.Spans[i]; s.Operation == record.OpValidate && s.Status == record.StatusOK {
			valid = append(valid, tsMicros(s.End))
		}
	}
	slices.Sort(valid)
	for _, inv := range c.Investigations {
		if inv.ParentID != 0 {
			continue
		}
		if at := tsMicros(inv.ArrivedAt); !ok || at < firstArrival {
			firstArrival = at
		}
		if at := tsMicros(inv.ArrivedAt); !ok || at > lastArrival {
			lastArrival = at
		}
		ok = true
	}
	for _, f := range c.Faults {
		if f.Window && f.End > f.Start {
			windows = append(windows, detect.Window{Start: tsMicros(f.Start), End: tsMicros(f.End)})
		}
	}
	return valid, firstArrival, lastArrival, windows, ok
}

// refGoodputRecovery is goodput_recovery_time (s) and goodput_recovered: the rule of
// detect.GoodputRecovery (whose own tests hold it to its definition) on the instants
// refGoodputInstants builds from the records. Both NaN when nothing can be tested;
// recovered 0 (time NaN) when windows were tested and none was back.
func refGoodputRecovery(c *record.Collector) (seconds, recovered float64) {
	valid, first, last, windows, ok := refGoodputInstants(c)
	if !ok {
		return math.NaN(), math.NaN()
	}
	g, err := detect.GoodputRecovery(valid, first, last, windows)
	switch {
	case err != nil:
		panic(fmt.Sprintf("reference: the goodput rule: %v", err))
	case g.Recovered:
		return float64(g.Time) / 1e6, 1
	case g.Tested:
		return math.NaN(), 0
	}
	return math.NaN(), math.NaN()
}
