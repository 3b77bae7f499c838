//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// fleetRecords holds the records of research-fleet at 10,000 investigations, simulated once
// per test binary: the span layouts of docs/traces.md are measured on the attributes the
// simulator really emits, not on synthetic ones.
var fleetRecords = sync.OnceValues(func() (*record.Collector, error) {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		return nil, err
	}
	s.Workload.Investigations = 10_000
	c := &record.Collector{}
	if _, err := sim.Run(context.Background(), s, s.Seed, c, sim.Options{}); err != nil {
		return nil, err
	}
	return c, nil
})

// BenchmarkSpanIngest is the span ingest cost of the trace layout: research-fleet's spans
// alone (about 290k rows, with their attributes) replayed into a Load, committed and the
// file closed, in span rows per second. Simulating the run is not timed.
func BenchmarkSpanIngest(b *testing.B) {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		b.Fatal(err)
	}
	all, err := fleetRecords()
	if err != nil {
		b.Fatal(err)
	}
	spans := &record.Collector{Spans: all.Spans}
	dir := b.TempDir()
	var cpu cpuTimer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Create(filepath.Join(dir, "spans-"+itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		l, err := db.Load(context.Background(), "bench", ScenarioOptions(s))
		if err != nil {
			b.Fatal(err)
		}
		spans.Replay(l)
		if err := l.Finish(traces.Run{}); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
	}
	reportRows(b, len(spans.Spans), cpu)
}

// BenchmarkSpanInsert is DuckDB's side of BenchmarkSpanIngest alone: research-fleet's spans
// as ready-made Arrow batches of every table they fill (built before the timer starts),
// inserted as the loader does (registered view, INSERT ... SELECT, one transaction, one
// DuckDB thread), then the file closed; in span rows per second.
func BenchmarkSpanInsert(b *testing.B) {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		b.Fatal(err)
	}
	all, err := fleetRecords()
	if err != nil {
		b.Fatal(err)
	}
	spans := &record.Collector{Spans: all.Spans}
	benchArrowInsert(b, spans, ScenarioOptions(s), len(spans.Spans))
}
