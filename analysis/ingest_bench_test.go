//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

const benchSpans = 200_000

// BenchmarkIngest measures the whole pipeline, records → redacted Arrow batches → DuckDB
// file (closed, so checkpointed), in rows of all tables per second. Creating the empty
// database is not timed.
func BenchmarkIngest(b *testing.B) {
	c := tracetest.Synthetic(benchSpans, 1)
	rows := tracetest.Rows(c)
	dir := b.TempDir()
	var cpu cpuTimer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Create(filepath.Join(dir, "ingest-"+itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		l, err := db.Load(context.Background(), "bench", traces.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c.Replay(l)
		if err := l.Finish(traces.Run{}); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
	}
	reportRows(b, rows, cpu)
}

// BenchmarkDuckDBArrowInsert is DuckDB's side alone, for comparison with BenchmarkIngest:
// the same rows as ready-made Arrow batches (built before the timer starts), inserted the
// way the loader does (register view, INSERT ... SELECT, one transaction) on the calling
// goroutine, then the file closed.
func BenchmarkDuckDBArrowInsert(b *testing.B) {
	c := tracetest.Synthetic(benchSpans, 1)
	rows := tracetest.Rows(c)
	type batch struct {
		t   traces.Table
		rec arrow.RecordBatch
	}
	var batches []batch
	w, err := traces.NewWriter("bench", traces.Options{}, func(t traces.Table, rec arrow.RecordBatch) error {
		batches = append(batches, batch{t, rec})
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	c.Replay(w)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, bt := range batches {
			bt.rec.Release()
		}
	}()
	dir := b.TempDir()
	ctx := context.Background()
	var cpu cpuTimer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Create(filepath.Join(dir, "arrow-"+itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		conn, err := db.SQL().Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "SET threads = 1"); err != nil { // as Load does
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		err = conn.Raw(func(dc any) error {
			ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
			if err != nil {
				return err
			}
			ex := dc.(driver.ExecerContext)
			exec := func(q string, args []driver.NamedValue) error { _, err := ex.ExecContext(ctx, q, args); return err }
			if err := exec("BEGIN TRANSACTION", nil); err != nil {
				return err
			}
			for _, bt := range batches {
				bt.rec.Retain() // insert releases one reference
				if err := insert(ar, exec, bt.t, bt.rec); err != nil {
					return err
				}
			}
			return exec("COMMIT", nil)
		})
		if err != nil {
			b.Fatal(err)
		}
		conn.Close()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
	}
	reportRows(b, rows, cpu)
}

// cpuTimer adds up the CPU time of the whole process (every goroutine and DuckDB thread)
// over the timed sections: on a shared machine wall time says more about the neighbours.
type cpuTimer struct{ t0, total time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (c *cpuTimer) start() { c.t0 = processCPU() }
func (c *cpuTimer) stop()  { c.total += processCPU() - c.t0 }

// reportRows reports rows per second of wall time and per second of CPU time.
func reportRows(b *testing.B, rows int, cpu cpuTimer) {
	n := float64(rows) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(n/cpu.total.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(rows), "rows/op")
}

func itoa(i int) string {
	return string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
}

// rowCounter counts the records a simulation emits.
type rowCounter struct{ n int64 }

func (c *rowCounter) Investigation(*record.Investigation) { c.n++ }
func (c *rowCounter) Span(*record.Span)                   { c.n++ }
func (c *rowCounter) Transition(*record.Transition)       { c.n++ }
func (c *rowCounter) Execution(*record.Execution)         { c.n++ }
func (c *rowCounter) Fault(*record.Fault)                 { c.n++ }
func (c *rowCounter) Sample(*record.Sample)               { c.n++ }

// benchScenario is the research-fleet example cut to 2,000 investigations.
func benchScenario(b *testing.B) *scenarios.Scenario {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		b.Fatal(err)
	}
	s.Workload.Investigations = 2_000
	return s
}

// BenchmarkSimulate is the simulator alone (records counted, then dropped): the rate a
// trace pipeline must keep up with.
func BenchmarkSimulate(b *testing.B) {
	s := benchScenario(b)
	var rows int64
	var cpu cpuTimer
	for i := 0; i < b.N; i++ {
		c := &rowCounter{}
		cpu.start()
		if _, err := sim.Run(context.Background(), s, s.Seed, c, sim.Options{}); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
		rows = c.n
	}
	reportRows(b, int(rows), cpu)
}

// BenchmarkSimulateIngest is mayday run's pipeline end to end: the simulator feeding a Load
// (writer on the simulator's goroutine, DuckDB on the loader's), the file closed.
func BenchmarkSimulateIngest(b *testing.B) {
	s := benchScenario(b)
	dir := b.TempDir()
	var rows int64
	var cpu cpuTimer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Create(filepath.Join(dir, "sim-"+itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		l, err := db.Load(context.Background(), "bench", ScenarioOptions(s))
		if err != nil {
			b.Fatal(err)
		}
		c := &rowCounter{}
		if _, err := sim.Run(context.Background(), s, s.Seed, record.Tee{c, l}, sim.Options{}); err != nil {
			b.Fatal(err)
		}
		if err := l.Finish(traces.Run{}); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
		rows = c.n
	}
	reportRows(b, int(rows), cpu)
}
