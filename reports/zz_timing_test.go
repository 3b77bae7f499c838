//go:build duckdb_arrow

package reports

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
)

func TestZZTiming(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		t0 := time.Now()
		db, err := analysis.Open("/tmp/rf/mayday.duckdb")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("open %v", time.Since(t0))
		q := db.SQL()
		id := "research-fleet-s42"
		r := &Run{}
		t1 := time.Now()
		db.AllMetrics(ctx)
		t.Logf("metrics %v", time.Since(t1))
		for _, s := range []struct {
			n string
			f func(context.Context, *sql.DB, string, *Run) error
		}{{"states", loadStates}, {"faults", loadFaults}, {"failures", loadFailures}, {"incidents", loadIncidents}, {"guards", loadGuards}, {"episodes", loadEpisodes}, {"tools", loadTools}, {"refusals", loadRefusals}, {"waste", loadWaste}} {
			t2 := time.Now()
			if err := s.f(ctx, q, id, r); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %v", s.n, time.Since(t2))
		}
		db.Close()
		t.Logf("total %v", time.Since(t0))
		runs, _ := Load(ctx, []string{"/tmp/rf"})
		t3 := time.Now()
		New(runs, "x").Write(t.TempDir())
		t.Logf("render+write %v", time.Since(t3))
	}
}
