//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
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
// by grid point and seed. Rows keep the database's order (rowid): DuckDB returns a scan in
// insertion order (preserve_insertion_order, on by default), so the queries need no ORDER
// BY, which would have DuckDB sort (and hold) a whole table before the first batch came out.
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
	// The select lists are read before the export takes its connection: a sandboxed handle
	// has one connection, so a query inside conn.Raw would wait for it for ever.
	selects := make(map[string]string, len(tables))
	if sweep {
		for _, table := range tables {
			if selects[table], err = partitionFreeColumns(ctx, db, table); err != nil {
				return err
			}
		}
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
				q := "SELECT * FROM " + ident(table)
				if err := writeParquet(ctx, ar, folder, m, table+".parquet", table, "", q); err != nil {
					return err
				}
				continue
			}
			cols := selects[table]
			for _, r := range runs {
				rel := filepath.Join(table, "point="+hivePoint(r.Point), "seed="+strconv.FormatUint(r.Seed, 10), r.RunID+".parquet")
				q := "SELECT " + cols + " FROM " + ident(table) + " WHERE run_id = " + literal(r.RunID)
				if err := writeParquet(ctx, ar, folder, m, rel, table, r.RunID, q); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// hiveKeys are the partition keys of the sweep layout. A file under point=P/seed=S holds no
// column of either name: readers take them from the path, and a column of the same name
// (runs.seed, a UBIGINT; sweep_params.point) would clash with the partition's type.
var hiveKeys = []string{"point", "seed"}

// partitionFreeColumns is the select list of table without the partition keys.
func partitionFreeColumns(ctx context.Context, db *DB, table string) (string, error) {
	names, err := queryStrings(ctx, db.SQL(),
		"SELECT column_name FROM duckdb_columns() WHERE table_name = $1 AND schema_name = 'main' ORDER BY column_index", table)
	if err != nil {
		return "", fmt.Errorf("export: columns of %s: %w", table, err)
	}
	var cols []string
	for _, c := range names {
		if !slices.Contains(hiveKeys, c) {
			cols = append(cols, ident(c))
		}
	}
	return strings.Join(cols, ", "), nil
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
	raw, err := ar.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("export: reading %s: %w", table, err)
	}
	defer raw.Release()
	rr := utcTimestamps(raw)
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

// utcReader hands on DuckDB's batches with every timestamp marked as UTC. The database's
// TIMESTAMP columns hold UTC instants (simulated time from 2026-01-01T00:00:00Z), but
// DuckDB gives them to Arrow without a time zone, which Parquet writes as a local time
// (isAdjustedToUTC=false); with the zone, readers get instants.
type utcReader struct {
	array.RecordReader
	schema *arrow.Schema
	cur    arrow.RecordBatch
}

func utcTimestamps(rr array.RecordReader) array.RecordReader {
	fields := slices.Clone(rr.Schema().Fields())
	changed := false
	for i, f := range fields {
		if ts, ok := f.Type.(*arrow.TimestampType); ok && ts.TimeZone == "" {
			fields[i].Type = &arrow.TimestampType{Unit: ts.Unit, TimeZone: "UTC"}
			changed = true
		}
	}
	if !changed {
		return rr
	}
	md := rr.Schema().Metadata()
	return &utcReader{RecordReader: rr, schema: arrow.NewSchema(fields, &md)}
}

func (u *utcReader) Schema() *arrow.Schema { return u.schema }

func (u *utcReader) Next() bool {
	if u.cur != nil {
		u.cur.Release()
		u.cur = nil
	}
	if !u.RecordReader.Next() {
		return false
	}
	rec := u.RecordReader.RecordBatch()
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		want := u.schema.Field(i).Type
		if arrow.TypeEqual(c.DataType(), want) {
			c.Retain()
			cols[i] = c
			continue
		}
		d := c.Data()
		nd := array.NewData(want, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		cols[i] = array.MakeFromData(nd)
		nd.Release()
	}
	u.cur = array.NewRecordBatch(u.schema, cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return true
}

func (u *utcReader) RecordBatch() arrow.RecordBatch { return u.cur }

func (u *utcReader) Release() {
	if u.cur != nil {
		u.cur.Release()
		u.cur = nil
	}
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
