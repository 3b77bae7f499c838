//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

func TestProbeInsert(t *testing.T) {
	c := tracetest.Synthetic(100_000, 1)
	type batch struct {
		t   traces.Table
		rec arrow.RecordBatch
	}
	var batches []batch
	w, _ := traces.NewWriter("bench", traces.Options{}, func(t traces.Table, rec arrow.RecordBatch) error {
		batches = append(batches, batch{t, rec})
		return nil
	})
	c.Replay(w)
	w.Close()
	ctx := context.Background()
	for _, mode := range []string{"mem", "mem-noattrs", "mem-nolist", "mem-nostrings"} {
		path := filepath.Join(t.TempDir(), "p.duckdb")
		if mode[:3] == "mem" {
			path = ""
		}
		db, _ := Create(path)
		conn, _ := db.SQL().Conn(ctx)
		per := map[traces.Table]time.Duration{}
		rows := map[traces.Table]int64{}
		var commit time.Duration
		conn.Raw(func(dc any) error {
			ar, _ := duckdb.NewArrowFromConn(dc.(driver.Conn))
			ex := dc.(driver.ExecerContext)
			exec := func(q string, args []driver.NamedValue) error { _, err := ex.ExecContext(ctx, q, args); return err }
			if mode != "file-notx" {
				exec("BEGIN TRANSACTION", nil)
			}
			for _, bt := range batches {
				bt.rec.Retain()
				s := time.Now()
				var err error
				if bt.t == traces.Spans && mode != "mem" {
					ex := map[string]string{"mem-noattrs": "attrs", "mem-nolist": "caused_by, attrs", "mem-nostrings": "caused_by, attrs, run_id, operation, tool, tool_version, model, op_key, status, failure_class, fault_id, input_ref, output_ref"}[mode]
					rr, _ := array.NewRecordReader(bt.rec.Schema(), []arrow.RecordBatch{bt.rec})
					bt.rec.Release()
					rel, _ := ar.RegisterView(rr, "pv")
					rr.Release()
					err = exec("INSERT INTO spans BY NAME SELECT * EXCLUDE ("+ex+") FROM pv", nil)
					rel()
				} else {
					err = insert(ar, exec, bt.t, bt.rec)
				}
				if err != nil {
					t.Fatal(err)
				}
				per[bt.t] += time.Since(s)
				rows[bt.t] += bt.rec.NumRows()
			}
			s := time.Now()
			if mode != "file-notx" {
				exec("COMMIT", nil)
			}
			commit = time.Since(s)
			return nil
		})
		conn.Close()
		s := time.Now()
		db.Close()
		t.Logf("%s: commit %v close %v", mode, commit, time.Since(s))
		for tb, d := range per {
			t.Logf("  %s: %d rows in %v = %.0f rows/s", tb, rows[tb], d, float64(rows[tb])/d.Seconds())
		}
	}
}
