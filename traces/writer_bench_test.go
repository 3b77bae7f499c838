package traces

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mayday-sim/mayday/traces/tracetest"
)

// BenchmarkWriter measures records → redacted, digested Arrow batches (batches released at
// once), in rows of all tables per second.
func BenchmarkWriter(b *testing.B) {
	c := tracetest.Synthetic(100_000, 1)
	rows := tracetest.Rows(c)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w, err := NewWriter("bench", Options{}, func(_ Table, rec arrow.RecordBatch) error { rec.Release(); return nil })
		if err != nil {
			b.Fatal(err)
		}
		c.Replay(w)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows), "rows/op")
}
