//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// BenchmarkEndToEnd is mayday run's storage path against DuckDB's own limit, side by side in
// one benchmark run: each iteration simulates research-fleet into a fresh database file
// (first event to closed file), then has DuckDB copy the very same rows from that file into
// another fresh file (ATTACH, INSERT INTO ... SELECT * per table, one transaction, file
// closed), with DuckDB's default threads, memory limit and write buffer. `e2e/copy` is the
// ratio of the two walls.
func BenchmarkEndToEnd(b *testing.B) {
	s := benchScenario(b)
	dir := b.TempDir()
	ctx := context.Background()
	var e2e, cp, closeT, finT time.Duration
	var rows int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src := filepath.Join(dir, "e2e-"+itoa(i)+".duckdb")
		db, err := Create(src)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		l, err := db.Load(ctx, "bench", traces.ScenarioOptions(s))
		if err != nil {
			b.Fatal(err)
		}
		c := &rowCounter{}
		if _, err := sim.Run(ctx, s, s.Seed, record.Tee{c, l}, sim.Options{}); err != nil {
			b.Fatal(err)
		}
		if err := l.Finish(traces.Run{}); err != nil {
			b.Fatal(err)
		}
		tf := time.Now()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		closeT += time.Since(tf)
		finT += tf.Sub(t0)
		e2e += time.Since(t0)
		rows = c.n

		cp += duckDBCopy(b, src, filepath.Join(dir, "copy-"+itoa(i)+".duckdb"))
	}
	n := float64(b.N)
	b.ReportMetric(e2e.Seconds()/n, "e2e-s")
	b.ReportMetric(cp.Seconds()/n, "copy-s")
	b.ReportMetric(e2e.Seconds()/cp.Seconds(), "e2e/copy")
	b.ReportMetric(float64(rows), "rows/op")
	b.ReportMetric(closeT.Seconds()/n, "close-s")
	b.ReportMetric(finT.Seconds()/n, "load-s")
}

// duckDBCopy is DuckDB's own pace on the rows of the database file src: the wall time of
// copying every trace table into a fresh file dst (copyAllTables, createAsDuckDB) and
// closing it.
func duckDBCopy(b *testing.B, src, dst string) time.Duration {
	b.Helper()
	ctx := context.Background()
	db := createAsDuckDB(b, dst)
	t0 := time.Now()
	if err := copyAllTables(ctx, db, src); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// createAsDuckDB creates a database file at path with the trace tables and DuckDB's own
// settings (memory limit, write buffer) instead of those mayday gives the files it writes:
// the side of a benchmark that stands for DuckDB at its own pace.
func createAsDuckDB(b *testing.B, path string) *DB {
	b.Helper()
	db, err := Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{"RESET memory_limit", "RESET write_buffer_row_group_count", "RESET max_vacuum_tasks"} {
		if _, err := db.SQL().ExecContext(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// copyAllTables copies every trace table of the database at src into dst in one
// transaction: DuckDB's own pace for the rows a run stores.
func copyAllTables(ctx context.Context, dst *DB, src string) error {
	conn, err := dst.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH "+literal(src)+" AS mayday_src (READ_ONLY)"); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, "DETACH mayday_src")
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	for _, t := range traces.Tables() {
		if _, err := conn.ExecContext(ctx, "INSERT INTO "+ident(t.String())+" BY NAME SELECT * FROM mayday_src.main."+ident(t.String())); err != nil {
			conn.ExecContext(ctx, "ROLLBACK")
			return err
		}
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// BenchmarkExecute is what `mayday run` does for one seed of research-fleet, traces and
// metrics (Execute: simulate, load, commit, read the metrics view), into a database file
// (closed, so checkpointed) and, for `run --no-trace`, into an in-memory database: the
// difference is what persisting the trace costs.
func BenchmarkExecute(b *testing.B) {
	for _, mode := range []string{"file", "memory"} {
		b.Run(mode, func(b *testing.B) {
			s := benchScenario(b)
			dir := b.TempDir()
			var cpu cpuTimer
			for i := 0; i < b.N; i++ {
				path := ""
				if mode == "file" {
					path = filepath.Join(dir, "run-"+itoa(i)+".duckdb")
				}
				b.StopTimer()
				db, err := Create(path)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				cpu.start()
				if _, err := Execute(context.Background(), db, Spec{Scenario: s, Seed: s.Seed}); err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				cpu.stop()
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall-s")
			b.ReportMetric(cpu.total.Seconds()/float64(b.N), "cpu-s")
		})
	}
}
