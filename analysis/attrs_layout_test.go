//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

// Merge copies every trace table, span_attrs and tool_args included: the merged database
// holds each table's rows of the run, and span_attributes gives back the same attributes.
func TestMergeKeepsAttributeTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.duckdb")
	db, err := Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := LoadCollector(db, "synth", tracetest.Synthetic(2000, 9), traces.Run{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, tb := range traces.Tables() {
		want[tb.String()] = query(t, db, "SELECT count(*) FROM "+tb.String())[0][0].(int64)
	}
	if want["span_attrs"] == 0 || want["tool_args"] == 0 {
		t.Fatalf("the source has %d span_attrs and %d tool_args rows: the test shows nothing", want["span_attrs"], want["tool_args"])
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dst, err := Create(filepath.Join(dir, "dst.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := Merge(ctx, dst, []string{src}); err != nil {
		t.Fatal(err)
	}
	for name, n := range want {
		if got := query(t, dst, "SELECT count(*) FROM "+name)[0][0].(int64); got != n {
			t.Errorf("%s: %d rows after the merge, %d in the source", name, got, n)
		}
	}
	// Synthetic's tool attempts carry their tool's two arguments, given back on each one.
	attempts := query(t, dst, "SELECT count(*) FROM spans WHERE operation = 'execute_tool'")[0][0].(int64)
	q := "SELECT count(*) FROM span_attributes WHERE key IN ('arg.strategy', 'arg.api_key')"
	if got := query(t, dst, q)[0][0].(int64); got != 2*attempts {
		t.Errorf("%d argument attributes after the merge, want 2 per attempt (%d)", got, 2*attempts)
	}
}

// span_attributes gives back exactly the attributes each span was recorded with, whichever
// table holds them: hand-built spans covering the recorded set, differing arguments, none
// (the marker), blocked attempts, a second kind and arguments outside execute_tool.
func TestSpanAttributesView(t *testing.T) { runViewCase(t, spanAttributesCase()) }

// spanAttributesCase: the spans of spanAttributesBuilt in run "attrs", next to a run
// "attrs-other" whose backtest has other arguments (a span takes its own run's).
func spanAttributesCase() viewCase {
	c := spanAttributesBuilt()
	other := &record.Collector{}
	other.Span(&record.Span{SpanID: 3, Operation: record.OpExecuteTool, Tool: "backtest", Status: record.StatusOK,
		Attrs: []record.Attr{{Key: "arg.strategy", Value: "z"}, {Key: "arg.region", Value: "asia"}}})
	for _, id := range []uint64{4, 5} { // span 5 of "attrs" keeps arguments of its own; this one does not
		other.Span(&record.Span{SpanID: id, Operation: record.OpExecuteTool, Tool: "backtest", Status: record.StatusOK,
			Attrs: []record.Attr{{Key: "arg.strategy", Value: "z"}, {Key: "arg.region", Value: "asia"}}})
	}
	return viewCase{name: "span attributes", load: func(t testing.TB, db *DB) {
		if err := LoadCollector(db, "attrs", c, traces.Run{}); err != nil {
			t.Fatal(err)
		}
		if err := LoadCollector(db, "attrs-other", other, traces.Run{}); err != nil {
			t.Fatal(err)
		}
	}, check: func(t testing.TB, db *DB) {
		checkSpanAttributes(t, db, c, "attrs", 2)
		checkSpanAttributes(t, db, other, "attrs-other", 2)
	}}
}

func spanAttributesBuilt() *record.Collector {
	args := func(strategy string) []record.Attr {
		return []record.Attr{{Key: "arg.strategy", Value: strategy}, {Key: "arg.region", Value: "eu"}}
	}
	c := &record.Collector{}
	span := func(id uint64, op record.Operation, tool string, st record.Status, attrs ...record.Attr) {
		c.Span(&record.Span{SpanID: id, Operation: op, Tool: tool, Status: st, Attrs: attrs})
	}
	span(1, record.OpPlan, "", record.StatusOK, record.Attr{Key: "kind", Value: "model_turn"}, record.Attr{Key: "error", Value: "rate_limited"})
	span(2, record.OpExecuteTool, "backtest", record.StatusBlocked, record.Attr{Key: "violation", Value: "unauthorized_access"})
	span(3, record.OpExecuteTool, "backtest", record.StatusOK, append([]record.Attr{{Key: "answered_from", Value: "record"}}, args("m")...)...)
	span(4, record.OpExecuteTool, "backtest", record.StatusError, args("m")...)
	span(5, record.OpExecuteTool, "backtest", record.StatusOK, args("other")...)
	span(6, record.OpExecuteTool, "backtest", record.StatusTimeout)
	span(7, record.OpExecuteTool, "backtest", record.StatusBlocked)
	span(8, record.OpInspect, "backtest", record.StatusOK, args("m")...)
	span(9, record.OpPlan, "", record.StatusOK, record.Attr{Key: "kind", Value: "a"}, record.Attr{Key: "kind", Value: "b"})
	span(10, record.OpExecuteTool, "fetch", record.StatusOK)
	span(11, record.OpExecuteTool, "fetch", record.StatusOK, record.Attr{Key: "arg.region", Value: "us"})
	span(12, record.OpInspect, "backtest", record.StatusOK) // an inspection takes no arguments
	return c
}

// checkSpanAttributes compares run's span_attributes with c's attributes, and counts the
// run's stored tool arguments (run is a plain name, quoted as is).
func checkSpanAttributes(t testing.TB, db *DB, c *record.Collector, run string, args int64) {
	var want [][]any
	for _, s := range c.Spans {
		for _, a := range s.Attrs {
			want = append(want, []any{int64(s.SpanID), a.Key, a.Value})
		}
	}
	slices.SortFunc(want, func(a, b []any) int {
		return cmp.Or(cmp.Compare(a[0].(int64), b[0].(int64)), cmp.Compare(a[1].(string), b[1].(string)), cmp.Compare(a[2].(string), b[2].(string)))
	})
	got := query(t, db, "SELECT span_id, key, value FROM span_attributes WHERE run_id = '"+run+"' ORDER BY span_id, key, value")
	compareRows(t, "span_attributes of "+run, got, want, "span_id, key, value")
	// The arguments are stored once per tool ("attrs": backtest's two from span 3, fetch's
	// none from span 10).
	if n := query(t, db, "SELECT count(*) FROM tool_args WHERE run_id = '"+run+"'")[0][0].(int64); n != args {
		t.Errorf("%s: %d tool_args rows, want %d", run, n, args)
	}
}
