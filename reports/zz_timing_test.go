//go:build duckdb_arrow

package reports

import (
	"context"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
)

func TestZZTiming(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	db, err := analysis.Open("/tmp/rf/mayday.duckdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("open %v", time.Since(t0))
	q := db.SQL()
	id := "research-fleet-s42"
	t1 := time.Now()
	m, _ := db.Metrics(ctx, id)
	t.Logf("metrics %v", time.Since(t1))
	r := &Run{}
	for name, f := range map[string]func(context.Context, any, string, *Run) error{} {
		_ = name
		_ = f
	}
	steps := []struct {
		n string
		f func() error
	}{
		{"cost", func() error { return loadCost(ctx, q, id, m, r) }},
		{"states", func() error { return loadStates(ctx, q, id, r) }},
		{"faults", func() error { return loadFaults(ctx, q, id, r) }},
		{"failures", func() error { return loadFailures(ctx, q, id, r) }},
		{"incidents", func() error { return loadIncidents(ctx, q, id, r) }},
		{"guards", func() error { return loadGuards(ctx, q, id, r) }},
		{"episodes", func() error { return loadEpisodes(ctx, q, id, r) }},
		{"tools", func() error { return loadTools(ctx, q, id, r) }},
		{"refusals", func() error { return loadRefusals(ctx, q, id, r) }},
	}
	for _, s := range steps {
		t2 := time.Now()
		if err := s.f(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %v", s.n, time.Since(t2))
	}
	db.Close()
	runs, _ := Load(ctx, []string{"/tmp/rf"})
	t3 := time.Now()
	rep := New(runs, "x")
	t.Logf("charts %v", time.Since(t3))
	t4 := time.Now()
	for _, c := range rep.Charts {
		t5 := time.Now()
		c.SVG()
		t6 := time.Now()
		c.PNG(96)
		t.Logf("%s svg %v png %v", c.ID, t6.Sub(t5), time.Since(t6))
	}
	t.Logf("render %v", time.Since(t4))
}
