//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql/driver"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

var modes = strings.Split(os.Getenv("PROBE_MODES"), ",")

func TestProbeInsert(t *testing.T) {
	c := tracetest.Synthetic(100_000, 1)
	rows := tracetest.Rows(c)
	ctx := context.Background()
	for _, mode := range modes {
		type batch struct {
			t   traces.Table
			rec arrow.RecordBatch
		}
		var batches []batch
		bs := 0
		switch mode {
		case "batch122880":
			bs = 122880
		case "batch16384":
			bs = 16384
		}
		w, _ := traces.NewWriter("bench", traces.Options{BatchRows: bs}, func(t traces.Table, rec arrow.RecordBatch) error {
			batches = append(batches, batch{t, rec})
			return nil
		})
		c.Replay(w)
		w.Close()
		path := filepath.Join(t.TempDir(), "p.duckdb")
		if mode == "mem" {
			path = ""
		}
		db, _ := Create(path)
		conn, _ := db.SQL().Conn(ctx)
		conn.ExecContext(ctx, "SET threads = 1")
		switch mode {
		case "uncompressed":
			conn.ExecContext(ctx, "SET force_compression = 'uncompressed'")
		case "noorder":
			conn.ExecContext(ctx, "SET preserve_insertion_order = false")
		case "flush":
			conn.ExecContext(ctx, "SET allocator_flush_threshold = '4GB'")
		}
		cpu0 := processCPU()
		t0 := time.Now()
		conn.Raw(func(dc any) error {
			ar, _ := duckdb.NewArrowFromConn(dc.(driver.Conn))
			ex := dc.(driver.ExecerContext)
			exec := func(q string, args []driver.NamedValue) error { _, err := ex.ExecContext(ctx, q, args); return err }
			exec("BEGIN TRANSACTION", nil)
			for _, bt := range batches {
				if err := insert(ar, exec, bt.t, bt.rec); err != nil {
					t.Fatal(err)
				}
			}
			exec("COMMIT", nil)
			return nil
		})
		conn.Close()
		ins := processCPU() - cpu0
		db.Close()
		cpu := processCPU() - cpu0
		t.Logf("%-14s insert+commit %5.0f k rows/cpu-s; with close %5.0f k rows/cpu-s; wall %v", mode, float64(rows)/ins.Seconds()/1e3, float64(rows)/cpu.Seconds()/1e3, time.Since(t0).Round(time.Millisecond))
	}
}
