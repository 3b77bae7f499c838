package traces

import (
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mayday-sim/mayday/traces/tracetest"
)

// processCPU is the CPU time of the whole process: on a shared machine it says more about
// the writer than wall time, which includes the neighbours.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriter measures records → redacted, digested Arrow batches (batches released at
// once), in rows of all tables per second of wall and of CPU time.
func BenchmarkWriter(b *testing.B) {
	c := tracetest.Synthetic(100_000, 1)
	rows := tracetest.Rows(c)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
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
	cpu := processCPU() - cpu0
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(rows), "rows/op")
}
