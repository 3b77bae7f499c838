//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// What an OTLP export carries beyond the spans, so that mayday import rebuilds every table
// a metric reads: each investigation's row, its lifecycle transitions and its tools'
// executions as events of its invoke_agent span (mayday.investigation, mayday.transition,
// mayday.execution), and the run's faults, tool samples and workers as resource attributes
// of the run's first file (mayday.faults, mayday.tool_samples, mayday.workers: arrays of
// key-value lists). Each row is the table's columns under their names; a timestamp is an
// int of Unix nanoseconds, a NULL is left out; mayday.row is the row's place in its table
// (its rowid), so that an import stores the rows in the same order (sums of doubles depend
// on it).

// otlpRecordTables are the tables carried as events, with their event name and the column
// that places the event in time.
var otlpRecordTables = []struct{ table, event, at string }{
	{"investigations", "mayday.investigation", "arrived_at"},
	{"transitions", "mayday.transition", "at"},
	{"executions", "mayday.execution", "start"},
}

// readRecordEvents reads the rows of the investigations, transitions and executions of the
// chunk's investigations (those with a span in it) as span events, by investigation, in the
// order they were stored.
func readRecordEvents(ctx context.Context, db *DB, runID string, c traceChunk) (map[int64][]*tracepb.Span_Event, error) {
	out := map[int64][]*tracepb.Span_Event{}
	if !c.invLo.Valid {
		return out, nil
	}
	for _, t := range otlpRecordTables {
		q := "SELECT rowid, * EXCLUDE (run_id) FROM " + ident(t.table) +
			" WHERE run_id = $1 AND investigation_id BETWEEN $4 AND $5" +
			" AND investigation_id IN (SELECT investigation_id FROM spans WHERE run_id = $1 AND " + c.filter("") + ")" +
			" ORDER BY rowid"
		err := eachRow(ctx, db, t.table, runID, q, []any{runID, c.lo, c.hi, c.invLo.Int64, c.invHi.Int64},
			[]string{"investigation_id", t.at}, func(kvs []*commonpb.KeyValue, vals []any) {
				inv, _ := vals[0].(int64)
				at, _ := vals[1].(time.Time)
				out[inv] = append(out[inv], &tracepb.Span_Event{Name: t.event, TimeUnixNano: uint64(at.UnixNano()), Attributes: kvs})
			})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// carriedTables are the run's tables an export carries as resource attributes, by key.
var carriedTables = []struct{ table, key string }{
	{"faults", "mayday.faults"}, {"tool_samples", "mayday.tool_samples"}, {"workers", "mayday.workers"},
}

// isCarried reports whether key is the resource attribute of a carried table.
func isCarried(key string) bool {
	return slices.ContainsFunc(carriedTables, func(t struct{ table, key string }) bool { return t.key == key })
}

// readRunRecords returns the run's carried tables as resource attributes.
func readRunRecords(ctx context.Context, db *DB, runID string) ([]*commonpb.KeyValue, error) {
	var attrs []*commonpb.KeyValue
	for _, t := range carriedTables {
		var rows []*commonpb.AnyValue
		q := "SELECT rowid, * EXCLUDE (run_id) FROM " + ident(t.table) + " WHERE run_id = $1 ORDER BY rowid"
		err := eachRow(ctx, db, t.table, runID, q, []any{runID}, nil, func(kvs []*commonpb.KeyValue, _ []any) {
			rows = append(rows, &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}})
		})
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, &commonpb.KeyValue{Key: t.key, Value: &commonpb.AnyValue{
			Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: rows}}}})
	}
	return attrs, nil
}

// eachRow calls fn with each row of q (its rowid, then the table's columns) as attributes,
// mayday.row being the rowid, and the values of the columns named in want, in its order
// (nil for a column q does not have).
func eachRow(ctx context.Context, db *DB, table, runID, q string, args []any, want []string, fn func([]*commonpb.KeyValue, []any)) error {
	rows, err := db.SQL().QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("export: %s of %s: %w", table, runID, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	wantAt := make([]int, len(want))
	for i, name := range want {
		wantAt[i] = slices.Index(cols[1:], name) + 1 // 0: not there
	}
	wanted := make([]any, len(want))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("export: %s of %s: %w", table, runID, err)
		}
		kvs := make([]*commonpb.KeyValue, 0, len(cols))
		row, _ := vals[0].(int64)
		kvs = append(kvs, kvInt("mayday.row", row))
		for i, c := range cols[1:] {
			if kv := columnKV(c, vals[i+1]); kv != nil {
				kvs = append(kvs, kv)
			}
		}
		for i, at := range wantAt {
			wanted[i] = nil
			if at > 0 {
				wanted[i] = vals[at]
			}
		}
		fn(kvs, wanted)
	}
	return rows.Err()
}

// columnKV is one column's value as an attribute; nil for NULL.
func columnKV(col string, v any) *commonpb.KeyValue {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		return kvInt(col, x.UnixNano())
	case int64:
		return kvInt(col, x)
	case int32:
		return kvInt(col, int64(x))
	case uint64:
		return kvInt(col, int64(x))
	case float64:
		return kvDouble(col, x)
	case bool:
		return kvBool(col, x)
	case string:
		return kvString(col, x)
	case sql.NullString:
		return kvString(col, x.String)
	}
	return kvString(col, fmt.Sprint(v))
}
