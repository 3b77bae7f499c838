//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/traces"
)

// parquetRowGroup is the rows per Parquet row group: DuckDB's own row-group size, so a
// reader scans the files with the same parallelism as the database.
const parquetRowGroup = 122_880

// exportParquet writes every trace table (and sweep_params, in a sweep) with arrow-go's
// Parquet writer, zstd-compressed. A database of one run, or of several runs that are not a
// sweep, gives one file per table (<table>.parquet); a sweep gives a hive layout,
// <table>/point=<p>/seed=<s>/<run_id>.parquet, one file per run, so that readers can prune
// by grid point and seed. Rows keep the database's order (rowid).
func exportParquet(ctx context.Context, db *DB, folder *Folder, runs []RunInfo, m *Manifest) error {
	tables := make([]string, 0, len(traces.Tables())+1)
	for _, t := range traces.Tables() {
		tables = append(tables, t.String())
	}
	sweep, err := hasTable(ctx, db, "sweep_params")
	if err != nil {
		return err
	}
	if sweep {
		tables = append(tables, "sweep_params")
	}
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		for _, table := range tables {
			if !sweep {
				q := "SELECT * FROM " + ident(table) + " ORDER BY rowid"
				if err := writeParquet(ctx, ar, folder, m, table+".parquet", table, "", q); err != nil {
					return err
				}
				continue
			}
			for _, r := range runs {
				rel := filepath.Join(table, "point="+hivePoint(r.Point), "seed="+strconv.FormatUint(r.Seed, 10), r.RunID+".parquet")
				q := "SELECT * FROM " + ident(table) + " WHERE run_id = " + literal(r.RunID) + " ORDER BY rowid"
				if err := writeParquet(ctx, ar, folder, m, rel, table, r.RunID, q); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// hivePoint names a run's grid point in the hive layout; a run without one (merged in from
// outside a sweep) gets the partition value readers take as NULL.
func hivePoint(p int) string {
	if p < 0 {
		return "__HIVE_DEFAULT_PARTITION__"
	}
	return strconv.Itoa(p)
}

// writeParquet streams the result of q through DuckDB's Arrow interface into the Parquet
// file rel; batches are buffered into row groups of parquetRowGroup rows.
func writeParquet(ctx context.Context, ar *duckdb.Arrow, folder *Folder, m *Manifest, rel, table, run, q string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path := folder.Path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	rr, err := ar.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("export: reading %s: %w", table, err)
	}
	defer rr.Release()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(parquetRowGroup),
		parquet.WithCreatedBy("mayday"),
	)
	fw, err := pqarrow.NewFileWriter(rr.Schema(), f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return fmt.Errorf("export: %s: %w", rel, err)
	}
	// From here on the Parquet writer owns f: its Close closes the file.
	rows, err := copyBatches(ctx, rr, fw)
	if cerr := fw.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export: writing %s: %w", rel, err)
	}
	if err := m.addFile(folder, rel, table, run, rows); err != nil {
		return err
	}
	if exportFileWritten != nil {
		exportFileWritten(rel)
	}
	return nil
}

func copyBatches(ctx context.Context, rr array.RecordReader, fw *pqarrow.FileWriter) (int64, error) {
	var rows int64
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		rec := rr.RecordBatch()
		if err := fw.WriteBuffered(rec); err != nil {
			return rows, err
		}
		rows += rec.NumRows()
	}
	return rows, rr.Err()
}
