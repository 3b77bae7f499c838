//go:build duckdb_arrow

package analysis

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// arrowRows walks the rows of a query's result read as Arrow batches (duckdb.Arrow), a row
// at a time, with typed reads of its columns: several times cheaper per value than
// database/sql's Scan, which converts each value on its own.
type arrowRows struct {
	rr   array.RecordReader
	cols []arrow.Array
	row  int
	n    int
	// interned holds one copy of each short string read (tool, status, class names repeat
	// row after row), so the records do not each hold their own: a copy, as the batch's
	// memory is let go, within the import's bounds (maxInternLen, maxInterned).
	interned map[string]string
}

func newArrowRows(rr array.RecordReader) *arrowRows {
	return &arrowRows{rr: rr, row: -1, interned: map[string]string{}}
}

// next moves to the next row; false at the end (then err says whether the read failed).
func (r *arrowRows) next() bool {
	r.row++
	for r.row >= r.n {
		if !r.rr.Next() {
			r.cols, r.n = nil, 0
			return false
		}
		rec := r.rr.RecordBatch()
		r.cols, r.n, r.row = rec.Columns(), int(rec.NumRows()), 0
	}
	return true
}

func (r *arrowRows) err() error { return r.rr.Err() }

func (r *arrowRows) close() { r.rr.Release() }

// null reports whether column i of the row is NULL.
func (r *arrowRows) null(i int) bool { return r.cols[i].IsNull(r.row) }

// int is an integer column's value (0 when NULL).
func (r *arrowRows) int(i int) int64 {
	switch a := r.cols[i].(type) {
	case *array.Int64:
		return a.Value(r.row)
	case *array.Int32:
		return int64(a.Value(r.row))
	case *array.Int16:
		return int64(a.Value(r.row))
	case *array.Int8:
		return int64(a.Value(r.row))
	case *array.Uint64:
		return int64(a.Value(r.row))
	case *array.Uint32:
		return int64(a.Value(r.row))
	case *array.Uint16:
		return int64(a.Value(r.row))
	case *array.Uint8:
		return int64(a.Value(r.row))
	}
	panic("analysis: column " + r.cols[i].DataType().String() + " read as an integer")
}

func (r *arrowRows) float(i int) float64 {
	switch a := r.cols[i].(type) {
	case *array.Float64:
		return a.Value(r.row)
	case *array.Float32:
		return float64(a.Value(r.row))
	}
	return float64(r.int(i))
}

func (r *arrowRows) bool(i int) bool {
	if a, ok := r.cols[i].(*array.Boolean); ok {
		return a.Value(r.row)
	}
	panic("analysis: column " + r.cols[i].DataType().String() + " read as a boolean")
}

// str is a text column's value ("" when NULL), a copy the batch does not hold.
func (r *arrowRows) str(i int) string {
	col, row := r.cols[i], r.row
	if d, ok := col.(*array.Dictionary); ok { // an ENUM column (tables.sql): the text is its dictionary's
		if d.IsNull(row) {
			return ""
		}
		col, row = d.Dictionary(), d.GetValueIndex(row)
	}
	var v string
	switch a := col.(type) {
	case *array.String:
		v = a.Value(row)
	case *array.LargeString:
		v = a.Value(row)
	case *array.StringView:
		v = a.Value(row)
	default:
		panic("analysis: column " + r.cols[i].DataType().String() + " read as text")
	}
	if len(v) > maxInternLen {
		return strings.Clone(v)
	}
	if s, ok := r.interned[v]; ok {
		return s
	}
	s := strings.Clone(v)
	if len(r.interned) < maxInterned {
		r.interned[s] = s
	}
	return s
}
