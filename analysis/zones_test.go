//go:build duckdb_arrow

package analysis

import (
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// TestZoneCrashInTables: capacity-crunch (40 workers) with zones a (30 workers) and b (10)
// and its zone crash naming zone b (1h for 30m). Read back from DuckDB through spans.worker
// and workers: every investigation the crash took down died on a worker of zone b, each on
// its own worker, no more than b's 10; no operation other than those takeovers ran on a
// worker of b inside the window; b's workers work again after it; the workers table holds
// every worker once, in its zone; and the counts agree with the simulator's records.
func TestZoneCrashInTables(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	db := openTestDB(t)
	runID, c := simulateExample(t, db, "capacity-crunch", 1,
		"workload.zones={a: 0.75, b: 0.25}",
		"faults=[{id: zone-b, kind: zone_crash, at: 1h, for: 30m, zone: b}]")
	takeovers := 0
	for i := range c.Spans {
		if sp := &c.Spans[i]; sp.Operation == record.OpTakeover && sp.FaultID == "zone-b" {
			takeovers++
		}
	}
	var victims, victimWorkers, outsideB, inWindow, afterB, workers, inB, dupes int64
	q := func(sql string, dst ...any) {
		t.Helper()
		if err := db.SQL().QueryRow(sql, runID).Scan(dst...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	q(`SELECT count(*), count(DISTINCT s.worker), count(*) FILTER (WHERE w.zone IS DISTINCT FROM 'b')
		FROM spans s LEFT JOIN workers w ON w.run_id = s.run_id AND w.worker = s.worker
		WHERE s.run_id = ? AND s.operation = 'takeover' AND s.fault_id = 'zone-b'`, &victims, &victimWorkers, &outsideB)
	q(`SELECT count(*) FILTER (WHERE s.operation <> 'takeover' AND s."end" > TIMESTAMP '2026-01-01 01:00:00'
			AND s.start < TIMESTAMP '2026-01-01 01:30:00'),
		  count(*) FILTER (WHERE s.start >= TIMESTAMP '2026-01-01 01:30:00')
		FROM spans s JOIN workers w ON w.run_id = s.run_id AND w.worker = s.worker
		WHERE s.run_id = ? AND w.zone = 'b'`, &inWindow, &afterB)
	q(`SELECT count(*), count(*) FILTER (WHERE zone = 'b'), count(*) - count(DISTINCT worker)
		FROM workers WHERE run_id = ?`, &workers, &inB, &dupes)
	t.Logf("zone b: %d investigations crashed on %d workers; %d operations on b after the window; %d workers (%d in b)",
		victims, victimWorkers, afterB, workers, inB)
	if victims == 0 || victims != int64(takeovers) || victimWorkers != victims || victims > 10 || outsideB != 0 {
		t.Errorf("%d takeovers by zone-b (simulator: %d) on %d workers, %d outside zone b; want some, as many, each on its own worker of b (at most 10)",
			victims, takeovers, victimWorkers, outsideB)
	}
	if inWindow != 0 || afterB == 0 {
		t.Errorf("%d operations on zone b's workers inside the window, %d after; want none inside and some after", inWindow, afterB)
	}
	if workers != 40 || inB != 10 || dupes != 0 {
		t.Errorf("workers: %d rows, %d in b, %d repeated; want 40, 10, 0", workers, inB, dupes)
	}
	// Unlimited workers: spans.worker is NULL everywhere and workers is empty.
	runID, _ = simulateExample(t, db, "capacity-crunch", 2, "workload.workers=0")
	var named, rows int64
	q(`SELECT count(worker) FROM spans WHERE run_id = ?`, &named)
	q(`SELECT count(*) FROM workers WHERE run_id = ?`, &rows)
	if named != 0 || rows != 0 {
		t.Errorf("unlimited workers: %d spans name a worker, %d workers rows; want none", named, rows)
	}
}
