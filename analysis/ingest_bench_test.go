//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strconv"
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
	benchLoads(b, traces.Options{}, func(sink record.Sink) int {
		c.Replay(sink)
		return rows
	})
}

// benchLoads times, per iteration, one load into a fresh database file (creating the file
// is not timed): feed sends the records and returns how many it sent, then the load is
// committed and the file closed. It reports rows per second of wall and of CPU time.
func benchLoads(b *testing.B, opts traces.Options, feed func(record.Sink) int) {
	dir := b.TempDir()
	var rows int
	var cpu cpuTimer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Create(filepath.Join(dir, "load-"+itoa(i)+".duckdb"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu.start()
		rows = loadRun(b, db, opts, feed)
		cpu.stop()
	}
	reportRows(b, rows, cpu)
}

// loadRun loads the records feed sends into db as the run "bench", commits it and closes
// db; it returns what feed returns.
func loadRun(b *testing.B, db *DB, opts traces.Options, feed func(record.Sink) int) int {
	b.Helper()
	l, err := db.Load(context.Background(), "bench", opts)
	if err != nil {
		b.Fatal(err)
	}
	n := feed(l)
	if err := l.Finish(traces.Run{}); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

// simulateTo runs s into sink and returns how many records it sent.
func simulateTo(b *testing.B, s *scenarios.Scenario, sink record.Sink) int {
	b.Helper()
	c := &rowCounter{}
	if _, err := sim.Run(context.Background(), s, s.Seed, record.Tee{c, sink}, sim.Options{}); err != nil {
		b.Fatal(err)
	}
	return int(c.n)
}

// BenchmarkDuckDBArrowInsert is DuckDB's side alone, for comparison with BenchmarkIngest:
// the same rows as ready-made Arrow batches (built before the timer starts), inserted the
// way the loader does (register view, INSERT ... SELECT, one transaction) on the calling
// goroutine, then the file closed.
func BenchmarkDuckDBArrowInsert(b *testing.B) {
	c := tracetest.Synthetic(benchSpans, 1)
	benchArrowInsert(b, c, traces.Options{}, tracetest.Rows(c))
}

// benchArrowInsert times DuckDB's side of a load alone: the records of c as ready-made Arrow
// batches (built before the timer starts), inserted the way the loader does (register view,
// INSERT ... SELECT, one transaction) on the calling goroutine, then the file closed; rows
// per second of wall and CPU time, counting rows.
func benchArrowInsert(b *testing.B, c *record.Collector, opts traces.Options, rows int) {
	type batch struct {
		t   traces.Table
		rec arrow.RecordBatch
	}
	var batches []batch
	w, err := traces.NewWriter("bench", opts, func(t traces.Table, rec arrow.RecordBatch) error {
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
		db, conn := benchConn(b, ctx, filepath.Join(dir, "arrow-"+itoa(i)+".duckdb"))
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

// benchConn creates a database at path and returns one connection to it with DuckDB on one
// thread, as Load runs it, for the benchmarks that insert on their own.
func benchConn(b *testing.B, ctx context.Context, path string) (*DB, *sql.Conn) {
	b.Helper()
	db, err := Create(path)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET threads = 1"); err != nil {
		b.Fatal(err)
	}
	return db, conn
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
func (c *rowCounter) Worker(*record.Worker)               { c.n++ }

// benchScenario is the research-fleet example at its shipped size, 10,000 investigations.
func benchScenario(b *testing.B) *scenarios.Scenario {
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		b.Fatal(err)
	}
	s.Workload.Investigations = 10_000 // the reference size: research-fleet as shipped
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
	benchLoads(b, traces.ScenarioOptions(s), func(sink record.Sink) int { return simulateTo(b, s, sink) })
}

// BenchmarkDuckDBAppender is DuckDB's row-wise bulk path for the same rows: duckdb-go's
// Appender, one per table, converting each record to driver values on the way (no Arrow,
// no redaction, no digest), one transaction, then the file closed.
func BenchmarkDuckDBAppender(b *testing.B) {
	c := tracetest.Synthetic(benchSpans, 1)
	rows := tracetest.Rows(c)
	dir := b.TempDir()
	ctx := context.Background()
	ts := func(ns int64) time.Time { return time.Unix(0, record.Epoch+ns).UTC() }
	opt := func(s string) driver.Value {
		if s == "" {
			return nil
		}
		return s
	}
	key := func(k record.OpKey) string {
		return strconv.FormatInt(k.Investigation, 10) + "/" + strconv.Itoa(int(k.Step)) + "/" + strconv.Itoa(int(k.Revision))
	}
	var cpu cpuTimer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, conn := benchConn(b, ctx, filepath.Join(dir, "appender-"+itoa(i)+".duckdb"))
		b.StartTimer()
		cpu.start()
		err := conn.Raw(func(dc any) error {
			ex := dc.(driver.ExecerContext)
			if _, err := ex.ExecContext(ctx, "BEGIN TRANSACTION", nil); err != nil {
				return err
			}
			appendAll := func(table string, n int, row func(i int) []driver.Value) error {
				a, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", table)
				if err != nil {
					return err
				}
				for i := 0; i < n; i++ {
					if err := a.AppendRow(row(i)...); err != nil {
						a.Close()
						return err
					}
				}
				return a.Close()
			}
			err := appendAll("spans", len(c.Spans), func(i int) []driver.Value {
				s := &c.Spans[i]
				var parent, opKey, attempt driver.Value
				if s.ParentSpanID != 0 {
					parent = int64(s.ParentSpanID)
				}
				if s.HasKey {
					opKey = key(s.OpKey)
				}
				if s.Attempt != 0 {
					attempt = s.Attempt
				}
				caused := make([]int64, len(s.CausedBy))
				for j, id := range s.CausedBy {
					caused[j] = int64(id)
				}
				var kind driver.Value // the other attributes (span_attrs, tool_args) are not appended
				for _, a := range s.Attrs {
					if a.Key == "kind" {
						kind = a.Value
						break
					}
				}
				return []driver.Value{"bench", s.TraceID, int64(s.SpanID), parent, s.InvestigationID, s.AgentID, string(s.Operation), kind,
					opt(s.Tool), opt(s.ToolVersion), opt(s.Model), opKey, attempt, ts(s.Start), ts(s.End), float64(s.QueueWait) / 1e9,
					string(s.Status), opt(s.FailureClass), opt(s.FaultID), s.InputTokens, s.OutputTokens, s.Compute,
					opt(s.InputRef), opt(s.OutputRef), caused}
			})
			if err == nil {
				err = appendAll("transitions", len(c.Transitions), func(i int) []driver.Value {
					r := &c.Transitions[i]
					return []driver.Value{"bench", r.InvestigationID, ts(r.At), opt(r.From), r.To, opt(r.Event), opt(r.FailureClass),
						opt(r.Action), opt(r.DecidedBy), opt(r.Reason), r.Attempt}
				})
			}
			if err == nil {
				err = appendAll("executions", len(c.Executions), func(i int) []driver.Value {
					r := &c.Executions[i]
					return []driver.Value{"bench", r.Tool, key(r.OpKey), r.InvestigationID, r.Execution, ts(r.Start), ts(r.End),
						r.Outcome, r.Delivered, r.Compute, nil}
				})
			}
			if err == nil {
				err = appendAll("investigations", len(c.Investigations), func(i int) []driver.Value {
					r := &c.Investigations[i]
					var parent, ended driver.Value
					if r.ParentID != 0 {
						parent = r.ParentID
					}
					if r.Ended {
						ended = ts(r.EndedAt)
					}
					return []driver.Value{"bench", r.InvestigationID, parent, r.RootID, r.Depth, ts(r.ArrivedAt), ended, r.FinalState,
						opt(r.TerminationReason), r.Steps, r.Attempts, r.Revisions, r.Escalations, r.Tokens, r.Compute,
						r.TrulyValid, r.Validated, r.Crashes, scopeOf(r)}
				})
			}
			if err == nil {
				err = appendAll("faults", len(c.Faults), func(i int) []driver.Value {
					r := &c.Faults[i]
					return []driver.Value{"bench", r.FaultID, r.Kind, opt(r.Tool), ts(r.Start), ts(r.End), opt(r.Parameters)}
				})
			}
			if err == nil {
				err = appendAll("tool_samples", len(c.Samples), func(i int) []driver.Value {
					r := &c.Samples[i]
					return []driver.Value{"bench", r.Tool, ts(r.At), r.Queued, r.InService, r.Parked, r.BudgetTokens, r.BreakerState,
						r.Attempts, r.Failures, r.Retries}
				})
			}
			if err != nil {
				return err
			}
			_, err = ex.ExecContext(ctx, "COMMIT", nil)
			return err
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

func scopeOf(r *record.Investigation) string {
	if r.Scope == "" {
		return record.ScopeFull
	}
	return r.Scope
}
