package sim

import (
	"context"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// BenchmarkResearchFleet runs the full research-fleet example (10,000 investigations) into
// record.Discard: the whole agent, tool, fault and recovery model, without trace writing.
func BenchmarkResearchFleet(b *testing.B) {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		b.Fatal(err)
	}
	s.Workload.Investigations = 10_000
	b.ReportAllocs()
	var events int64
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Run(context.Background(), s, s.Seed, record.Discard{}, Options{})
		wall += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		events += res.Events
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/run")
}
