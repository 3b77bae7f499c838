package traces

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Table names one trace table of docs/traces.md.
type Table int

// The trace tables, in the order Tables returns them.
const (
	Runs Table = iota
	Investigations
	Spans
	SpanAttrs
	ToolArgs
	Transitions
	Executions
	Faults
	ToolSamples
	Workers
	numTables
)

var tableNames = [numTables]string{
	Runs:           "runs",
	Investigations: "investigations",
	Spans:          "spans",
	SpanAttrs:      "span_attrs",
	ToolArgs:       "tool_args",
	Transitions:    "transitions",
	Executions:     "executions",
	Faults:         "faults",
	ToolSamples:    "tool_samples",
	Workers:        "workers",
}

// String returns the table's SQL name.
func (t Table) String() string {
	if t < 0 || t >= numTables {
		return fmt.Sprintf("Table(%d)", int(t))
	}
	return tableNames[t]
}

// Tables returns every trace table, runs first.
func Tables() []Table {
	ts := make([]Table, numTables)
	for i := range ts {
		ts[i] = Table(i)
	}
	return ts
}

// Timestamp is the Arrow type of every time column: nanoseconds since the Unix epoch, UTC.
var Timestamp = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

var (
	utf8    = arrow.BinaryTypes.String
	i32     = arrow.PrimitiveTypes.Int32
	i64     = arrow.PrimitiveTypes.Int64
	u64     = arrow.PrimitiveTypes.Uint64
	f64     = arrow.PrimitiveTypes.Float64
	boolean = arrow.FixedWidthTypes.Boolean
)

func req(name string, t arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: t} }
func opt(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// schemas holds the one definition of every table's columns. The DuckDB DDL in package
// analysis (tables.sql) mirrors it; a test there checks that the two agree, and
// testdata/schema.golden makes every change a reviewed diff.
var schemas = [numTables]*arrow.Schema{
	Runs: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		opt("scenario", utf8),
		req("seed", u64),
		opt("config", utf8),
		opt("config_hash", utf8),
		opt("version", utf8),
		req("digest", utf8),
		opt("events", i64),
		req("status", utf8),
		req("wall_seconds", f64),
	}, nil),
	Investigations: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("investigation_id", i64),
		opt("parent_id", i64),
		req("root_id", i64),
		req("depth", i32),
		req("arrived_at", Timestamp),
		opt("ended_at", Timestamp),
		req("final_state", utf8),
		opt("termination_reason", utf8),
		req("steps", i32),
		req("attempts", i32),
		opt("revisions", i32),
		req("escalations", i32),
		req("tokens", i64),
		opt("compute", f64),
		opt("truly_valid", boolean),
		opt("validated", boolean),
		opt("crashes", i32),
		opt("scope", utf8),
	}, nil),
	Spans: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("trace_id", i64),
		req("span_id", i64),
		opt("parent_span_id", i64),
		req("investigation_id", i64),
		req("agent_id", i64),
		req("operation", utf8),
		opt("kind", utf8),
		opt("tool", utf8),
		opt("tool_version", utf8),
		opt("model", utf8),
		opt("op_key", utf8),
		opt("attempt", i32),
		req("start", Timestamp),
		req("end", Timestamp),
		opt("queue_wait", f64),
		req("status", utf8),
		opt("failure_class", utf8),
		opt("fault_id", utf8),
		req("input_tokens", i64),
		req("output_tokens", i64),
		opt("compute", f64),
		opt("input_ref", utf8),
		opt("output_ref", utf8),
		req("caused_by", arrow.ListOfNonNullable(i64)),
		opt("worker", i64),
	}, nil),
	SpanAttrs: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("span_id", i64),
		req("key", utf8),
		req("value", utf8),
	}, nil),
	ToolArgs: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("tool", utf8),
		req("key", utf8),
		req("value", utf8),
	}, nil),
	Transitions: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("investigation_id", i64),
		req("at", Timestamp),
		opt("from_state", utf8),
		req("to_state", utf8),
		opt("event", utf8),
		opt("failure_class", utf8),
		opt("action", utf8),
		opt("decided_by", utf8),
		opt("reason", utf8),
		opt("attempt", i32),
	}, nil),
	Executions: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("tool", utf8),
		req("op_key", utf8),
		req("investigation_id", i64),
		req("execution", i32),
		req("start", Timestamp),
		req("end", Timestamp),
		req("outcome", utf8),
		req("delivered", boolean),
		req("compute", f64),
		opt("side_effects", boolean),
	}, nil),
	Faults: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("fault_id", utf8),
		req("kind", utf8),
		opt("tool", utf8),
		req("start", Timestamp),
		req("end", Timestamp),
		opt("parameters", utf8),
		opt("window_start", Timestamp),
		opt("window_end", Timestamp),
		opt("hits", utf8),
	}, nil),
	ToolSamples: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("tool", utf8),
		req("at", Timestamp),
		req("queued", i32),
		req("in_service", i32),
		req("parked", i32),
		opt("budget_tokens", f64),
		req("breaker_state", utf8),
		req("attempts", i32),
		req("failures", i32),
		req("retries", i32),
	}, nil),
	Workers: arrow.NewSchema([]arrow.Field{
		req("run_id", utf8),
		req("worker", i64),
		req("zone", utf8),
	}, nil),
}

// Schema returns the Arrow schema of a table. The schema is shared: do not modify it.
func Schema(t Table) *arrow.Schema {
	if t < 0 || t >= numTables {
		panic(fmt.Sprintf("traces: no table %d", int(t)))
	}
	return schemas[t]
}
