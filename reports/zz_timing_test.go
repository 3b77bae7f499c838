//go:build duckdb_arrow

package reports

import (
	"context"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
)

func TestZZTiming(t *testing.T) {
	db, err := analysis.Open("/tmp/rf/mayday.duckdb")
	if err != nil {
		t.Fatal(err)
	}
	q := db.SQL()
	for _, s := range []string{
		"SELECT count(*) FROM attempts WHERE run_id = 'research-fleet-s42'",
		"SELECT count(*) FROM tool_minutes WHERE run_id = 'research-fleet-s42'",
		"SELECT count(*) FROM recovery_episodes WHERE run_id = 'research-fleet-s42'",
		"SELECT count(*) FROM execution_costs WHERE run_id = 'research-fleet-s42'",
		"SELECT count(*) FROM incidents WHERE run_id = 'research-fleet-s42'",
		"SELECT count(*) FROM lifecycle WHERE run_id = 'research-fleet-s42'",
		"SELECT * FROM metrics WHERE run_id = 'research-fleet-s42'",
		"SELECT * FROM tool_stats WHERE run_id = 'research-fleet-s42'",
		"SELECT tool, operations, attempts, amplification, duplicate_side_effects FROM tool_stats WHERE run_id = 'research-fleet-s42'",
		"SELECT count(*) FROM spans",
		"SELECT count(*) FROM transitions",
	} {
		best := time.Hour
		for range 3 {
			t0 := time.Now()
			rows, err := q.Query(s)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
			}
			rows.Close()
			best = min(best, time.Since(t0))
		}
		t.Logf("%6.0f ms  %s", best.Seconds()*1000, s)
	}
	db.Close()
	for range 3 {
		t0 := time.Now()
		if _, err := Load(context.Background(), []string{"/tmp/rf"}); err != nil {
			t.Fatal(err)
		}
		runs, _ := Load(context.Background(), []string{"/tmp/rf"})
		t1 := time.Now()
		rep := New(runs, "x")
		_, err := rep.Write(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Load+Load %v, New+Write %v", t1.Sub(t0), time.Since(t1))
	}
}
