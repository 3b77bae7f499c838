//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql/driver"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

func TestProbeSpans(t *testing.T) {
	c := tracetest.Synthetic(100_000, 1)
	var recs []arrow.RecordBatch
	w, _ := traces.NewWriter("bench", traces.Options{}, func(t traces.Table, rec arrow.RecordBatch) error {
		if t == traces.Spans {
			recs = append(recs, rec)
		} else {
			rec.Release()
		}
		return nil
	})
	c.Replay(w)
	w.Close()
	ctx := context.Background()
	db, _ := Create("")
	defer db.Close()
	conn, _ := db.SQL().Conn(ctx)
	defer conn.Close()
	conn.Raw(func(dc any) error {
		ar, _ := duckdb.NewArrowFromConn(dc.(driver.Conn))
		_ = dc.(driver.ExecerContext)
		for _, q := range []string{
			"INSERT INTO spans BY NAME SELECT * FROM pv",
			"SET threads = 1",
			"INSERT INTO spans BY NAME SELECT * FROM pv",
			"INSERT INTO spans BY NAME SELECT * FROM pv",
			"SET threads = 2",
			"INSERT INTO spans BY NAME SELECT * FROM pv",
		} {
			s := time.Now()
			var n int64
			for _, rec := range recs {
				rr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
				rel, err := ar.RegisterView(rr, "pv")
				if err != nil {
					t.Fatal(err)
				}
				rr.Release()
				rows, err := dc.(driver.QueryerContext).QueryContext(ctx, q, nil)
				if err != nil {
					t.Fatal(q, err)
				}
				dest := make([]driver.Value, len(rows.Columns()))
				for rows.Next(dest) == nil {
					if n == 0 {
						t.Log(dest[len(dest)-1])
					}
				}
				rows.Close()
				rel()
				n += rec.NumRows()
			}
			d := time.Since(s)
			t.Logf("%-80s %8.0f rows/s", q, float64(n)/d.Seconds())
		}
		return nil
	})
}
