//go:build duckdb_arrow

package analysis

import (
	"context"
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
	s, spans := fleetSpans(b)
	benchLoads(b, traces.ScenarioOptions(s), func(sink record.Sink) int {
		spans.Replay(sink)
		return len(spans.Spans)
	})
}

// fleetSpans returns research-fleet as shipped and the spans of its run.
func fleetSpans(b *testing.B) (*scenarios.Scenario, *record.Collector) {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		b.Fatal(err)
	}
	all, err := fleetRecords()
	if err != nil {
		b.Fatal(err)
	}
	return s, &record.Collector{Spans: all.Spans}
}

// BenchmarkSpanInsert is DuckDB's side of BenchmarkSpanIngest alone: research-fleet's spans
// as ready-made Arrow batches of every table they fill (built before the timer starts),
// inserted as the loader does (registered view, INSERT ... SELECT, one transaction, one
// DuckDB thread), then the file closed; in span rows per second.
func BenchmarkSpanInsert(b *testing.B) {
	s, spans := fleetSpans(b)
	benchArrowInsert(b, spans, traces.ScenarioOptions(s), len(spans.Spans))
}
