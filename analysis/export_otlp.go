//go:build duckdb_arrow

package analysis

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mayday-sim/mayday/traces"
)

// OTLP export: each run becomes one resource (its scenario, seed and run id), each root
// investigation one trace, each row of spans one OTLP span. The mapping is documented in
// docs/export.md; this file is its one implementation.

// OTLPTraceID is the OTLP trace id of root investigation root in run runID: the first 16
// bytes of SHA-256("mayday/trace/<run_id>/<root>"). Ids derive from the run id, so the
// traces of different runs (seeds, sweep points) never collide, and the same run exports to
// the same ids every time.
func OTLPTraceID(runID string, root int64) []byte {
	return derivedID("mayday/trace/"+runID+"/"+strconv.FormatInt(root, 10), 16)
}

// OTLPSpanID is the OTLP span id of span spanID of run runID: the first 8 bytes of
// SHA-256("mayday/span/<run_id>/<span_id>").
func OTLPSpanID(runID string, spanID int64) []byte {
	return derivedID("mayday/span/"+runID+"/"+strconv.FormatInt(spanID, 10), 8)
}

func derivedID(s string, n int) []byte {
	h := sha256.Sum256([]byte(s))
	id := h[:n]
	if !slices.ContainsFunc(id, func(b byte) bool { return b != 0 }) {
		id[n-1] = 1 // an all-zero id is invalid in OTLP; 2^-64 likely, but cheap to rule out
	}
	return id
}

// otlpRun is what every span of one run needs from the runs row.
type otlpRun struct {
	info       RunInfo
	version    string
	digest     string
	configHash string
	status     string
	idem       map[string]string               // tool -> idempotency, from the resolved scenario
	model      string                          // the workload's model, for model turns that name none
	args       map[string][]*commonpb.KeyValue // tool -> its recorded arguments (tool_args)
	config     string                          // runs.config, carried for mayday import
	events     sql.NullInt64                   // runs.events
	runRecords []*commonpb.KeyValue            // faults and tool samples, on the run's first file
}

// exportOTLP writes the spans of each run, one resource per run, in files of whole traces.
func exportOTLP(ctx context.Context, db *DB, folder *Folder, runs []RunInfo, opts ExportOptions, m *Manifest) error {
	// The chunks' queries are small: on one DuckDB thread they cost less CPU than spread
	// over several, and the encoding goroutine has the other core.
	var threads int64
	if err := db.SQL().QueryRowContext(ctx, "SELECT current_setting('threads')").Scan(&threads); err == nil && threads > 1 {
		if _, err := db.SQL().ExecContext(ctx, "SET threads = 1"); err == nil {
			defer db.SQL().ExecContext(context.Background(), "SET threads = "+strconv.FormatInt(threads, 10))
		}
	}
	for _, r := range runs {
		run, err := readOTLPRun(ctx, db, r)
		if err != nil {
			return err
		}
		w := &otlpWriter{folder: folder, m: m, run: run, opts: opts,
			resource: otlpResource(run),
			scope:    &commonpb.InstrumentationScope{Name: "mayday", Version: opts.Version}}
		if err := w.spans(ctx, db); err != nil {
			return err
		}
	}
	return nil
}

// readOTLPRun reads what every span of the run needs: the runs row, the scenario's tools,
// the recorded tool arguments, and the faults and tool samples (small tables).
func readOTLPRun(ctx context.Context, db *DB, r RunInfo) (*otlpRun, error) {
	run := &otlpRun{info: r, idem: map[string]string{}, args: map[string][]*commonpb.KeyValue{}}
	// An imported run has no configuration hash, digest or version of a simulation (NULL).
	var version, digest, hash, config, status sql.NullString
	err := db.SQL().QueryRowContext(ctx,
		"SELECT version, digest, config_hash, config, status, events FROM runs WHERE run_id = $1", r.RunID).
		Scan(&version, &digest, &hash, &config, &status, &run.events)
	if err != nil {
		return nil, fmt.Errorf("export: run %s: %w", r.RunID, err)
	}
	run.version, run.digest, run.configHash, run.config, run.status = version.String, digest.String, hash.String, config.String, status.String
	if run.runRecords, err = readRunRecords(ctx, db, r.RunID); err != nil {
		return nil, err
	}
	if s, ok := parseRunConfig(config.String); config.Valid && ok {
		run.model = s.Workload.Model
		for _, t := range s.Tools {
			run.idem[t.Name] = t.Idempotency
		}
	}
	if err := readToolArgs(ctx, db, run); err != nil {
		return nil, fmt.Errorf("export: run %s: %w", r.RunID, err)
	}
	return run, nil
}

// readToolArgs reads the run's tool_args, in the order recorded: the attributes of every
// execute_tool span of the tool that keeps no arguments of its own.
func readToolArgs(ctx context.Context, db *DB, run *otlpRun) error {
	rows, err := db.SQL().QueryContext(ctx, "SELECT tool, key, value FROM tool_args WHERE run_id = $1 ORDER BY rowid", run.info.RunID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tool, key, value string
		if err := rows.Scan(&tool, &key, &value); err != nil {
			return err
		}
		run.args[tool] = append(run.args[tool], kvString("mayday.attr."+traces.ArgPrefix+key, value))
	}
	return rows.Err()
}

func otlpResource(run *otlpRun) *resourcepb.Resource {
	attrs := []*commonpb.KeyValue{
		kvString("service.name", "mayday"),
		kvString("service.version", run.version),
		kvString("mayday.run_id", run.info.RunID),
		kvString("mayday.scenario", run.info.Scenario),
		kvSeed("mayday.seed", run.info.Seed),
		kvString("mayday.run.status", run.status),
		kvString("mayday.digest", run.digest),
	}
	if run.configHash != "" { // NULL in an imported run: left out
		attrs = append(attrs, kvString("mayday.config_hash", run.configHash))
	}
	if run.config != "" {
		attrs = append(attrs, kvString("mayday.config", run.config))
	}
	if run.events.Valid {
		attrs = append(attrs, kvInt("mayday.events", run.events.Int64))
	}
	if run.info.Point >= 0 {
		attrs = append(attrs, kvInt("mayday.sweep.point", int64(run.info.Point)))
		for _, p := range run.info.Params {
			attrs = append(attrs, kvTyped("mayday.sweep."+p.Path, p.Value))
		}
	}
	return &resourcepb.Resource{Attributes: attrs}
}

// otlpWriter turns the spans of one run into files of whole traces.
type otlpWriter struct {
	folder   *Folder
	m        *Manifest
	run      *otlpRun
	opts     ExportOptions
	resource *resourcepb.Resource
	scope    *commonpb.InstrumentationScope
	files    int       // begun so far; owned by the encoding goroutine
	file     *otlpFile // the file being written
	rel      string    // its path in the folder
	// causeTraces is the trace of each cause of the chunk being read (readCauseTraces);
	// owned by the reading goroutine.
	causeTraces map[int64]int64
	rows        []spanRow // the chunk's rows, kept for the next chunk's
}

// exportFileWritten, when set (by tests), is called after each data file is written.
var exportFileWritten func(rel string)

// GenAIProvider is the gen_ai.provider.name of every GenAI span: the model is simulated.
const GenAIProvider = "mayday.simulated"

// genAIOperation is the GenAI semantic conventions' operation of a span, "" for the
// operations the conventions do not cover (validate, inspect, human_review, a configuration
// change): a model turn (plan) or a supervisor's consultation of the model is a chat.
func genAIOperation(r *spanRow) string {
	switch r.operation {
	case "invoke_agent", "execute_tool":
		return r.operation
	case "plan":
		if r.kind.String != "config_change" {
			return "chat"
		}
	case "supervise":
		if r.model.Valid || r.inTokens != 0 || r.outTokens != 0 {
			return "chat"
		}
	}
	return ""
}

// spanModel is the model a span called: its own, else the workload's.
func (w *otlpWriter) spanModel(r *spanRow) string {
	if r.model.Valid {
		return r.model.String
	}
	return w.run.model
}

// span maps one row to an OTLP span; records are the carried rows of the chunk's
// investigations, by investigation.
func (w *otlpWriter) span(r *spanRow, traceID []byte, records map[int64][]*tracepb.Span_Event) *tracepb.Span {
	run := w.run
	op := genAIOperation(r)
	s := &tracepb.Span{
		TraceId:           traceID,
		SpanId:            OTLPSpanID(run.info.RunID, r.span),
		Name:              spanName(r, op, w.spanModel(r), run.info.Scenario),
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: unixNano(r.start),
		EndTimeUnixNano:   unixNano(r.end),
		Attributes:        w.attributes(r, op),
		Status:            spanStatus(r),
	}
	if r.operation == "inspect" {
		s.Kind = tracepb.Span_SPAN_KIND_CLIENT // a lookup in a service outside the agent
	}
	if ev, ok := records[r.inv.Int64]; ok && r.inv.Valid && r.operation == "invoke_agent" {
		s.Events = ev
		delete(records, r.inv.Int64) // on the investigation's first invoke_agent span only
	}
	if r.parent.Valid {
		s.ParentSpanId = OTLPSpanID(run.info.RunID, r.parent.Int64)
	}
	causes, _ := r.causedBy.([]any)
	for _, c := range causes {
		id, ok := c.(int64)
		if !ok {
			continue
		}
		trace, ok := w.causeTraces[id]
		if !ok {
			trace = r.trace // a cause not in the run: linked in the span's own trace
		}
		s.Links = append(s.Links, &tracepb.Span_Link{
			TraceId:    OTLPTraceID(run.info.RunID, trace),
			SpanId:     OTLPSpanID(run.info.RunID, id),
			Attributes: []*commonpb.KeyValue{kvString("mayday.link", "caused_by")},
		})
	}
	return s
}

// spanName follows the GenAI conventions: "chat <model>", "execute_tool <tool>",
// "invoke_agent <agent name>"; other operations are "<operation> <tool>" or "<operation>".
func spanName(r *spanRow, op, model, agent string) string {
	switch {
	case op == "chat" && model != "":
		return "chat " + model
	case op == "chat":
		return "chat"
	case op == "invoke_agent":
		return op + " " + agent
	case r.tool.Valid:
		return r.operation + " " + r.tool.String
	}
	return r.operation
}

func spanStatus(r *spanRow) *tracepb.Status {
	switch r.status {
	case "ok":
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	case "", "unset":
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_UNSET}
	}
	msg := r.status
	if r.failure.Valid {
		msg += ": " + r.failure.String
	}
	return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: msg}
}

// attributes are the GenAI conventions' attributes (on the spans the conventions cover),
// then mayday's own under mayday.*, each of its type (int, double, bool, string).
func (w *otlpWriter) attributes(r *spanRow, op string) []*commonpb.KeyValue {
	a := w.genAIAttributes(r, op)
	if r.failure.Valid {
		a = append(a, kvString("error.type", r.failure.String))
	} else if r.status != "ok" && r.status != "" && r.status != "unset" {
		a = append(a, kvString("error.type", r.status))
	}
	a = append(a,
		kvString("mayday.operation", r.operation),
		kvString("mayday.status", r.status),
		kvInt("mayday.span_id", r.span))
	if r.inv.Valid {
		a = append(a, kvInt("mayday.investigation_id", r.inv.Int64))
	}
	if r.agent.Valid {
		a = append(a, kvInt("mayday.agent_id", r.agent.Int64))
	}
	a = append(a, kvInt("mayday.row", r.row))
	// Zero is the common value of both (absent means 0), and a span's bytes count at scale.
	// NULL (an imported run: a trace does not record them) is left out too.
	if r.compute.Valid && r.compute.Float64 != 0 {
		a = append(a, kvDouble("mayday.compute", r.compute.Float64))
	}
	if r.queueWait.Valid && r.queueWait.Float64 != 0 {
		a = append(a, kvDouble("mayday.queue_wait", r.queueWait.Float64))
	}
	if op == "" && (r.inTokens != 0 || r.outTokens != 0) {
		a = append(a, kvInt("mayday.input_tokens", r.inTokens), kvInt("mayday.output_tokens", r.outTokens))
	}
	a = optString(a, "mayday.tool", r.tool, op != "execute_tool")
	a = optString(a, "mayday.failure_class", r.failure, true)
	a = optString(a, "mayday.fault_id", r.fault, true)
	a = optString(a, "mayday.op_key", r.opKey, true)
	if r.attempt.Valid {
		a = append(a, kvInt("mayday.attempt", int64(r.attempt.Int32)))
	}
	if idem, ok := w.run.idem[r.tool.String]; ok && r.tool.Valid {
		a = append(a, kvString("mayday.idempotency", idem))
	}
	a = optString(a, "mayday.tool_version", r.toolVersion, true)
	a = optString(a, "mayday.model", r.model, true)
	a = optString(a, "mayday.input_ref", r.inputRef, true)
	a = optString(a, "mayday.output_ref", r.outRef, true)
	if r.worker.Valid {
		a = append(a, kvInt("mayday.worker", r.worker.Int64))
	}
	a = optString(a, "mayday.zone", r.zone, true)
	return w.spanAttrs(a, r)
}

// genAIAttributes are the gen_ai.* attributes of a span of GenAI operation op (none for "").
func (w *otlpWriter) genAIAttributes(r *spanRow, op string) []*commonpb.KeyValue {
	if op == "" {
		return nil
	}
	a := []*commonpb.KeyValue{kvString("gen_ai.operation.name", op)}
	if op == "execute_tool" {
		if r.tool.Valid {
			a = append(a, kvString("gen_ai.tool.name", r.tool.String))
		}
		// The call the agent asked for: every attempt of one logical operation (the
		// recovery engine's retries) carries its id, as the GenAI conventions mean it.
		if r.opKey.Valid {
			a = append(a, kvString("gen_ai.tool.call.id", r.opKey.String))
		}
		return a
	}
	a = append(a, kvString("gen_ai.provider.name", GenAIProvider))
	if op == "invoke_agent" {
		if r.agent.Valid {
			a = append(a, kvString("gen_ai.agent.id", strconv.FormatInt(r.agent.Int64, 10)))
		}
		a = append(a, kvString("gen_ai.agent.name", w.run.info.Scenario))
	}
	if m := w.spanModel(r); m != "" {
		a = append(a, kvString("gen_ai.request.model", m))
	}
	if op == "chat" || r.inTokens != 0 || r.outTokens != 0 {
		a = append(a, kvInt("gen_ai.usage.input_tokens", r.inTokens), kvInt("gen_ai.usage.output_tokens", r.outTokens))
	}
	return a
}

// spanAttrs appends the span's recorded attributes as mayday.attr.<key>: kind, its
// span_attrs rows in order, then, for an execute_tool span that was sent (not blocked) and
// keeps no arguments of its own, its tool's recorded arguments. The simulator records them in that order.
func (w *otlpWriter) spanAttrs(a []*commonpb.KeyValue, r *spanRow) []*commonpb.KeyValue {
	if r.kind.Valid {
		a = append(a, kvString("mayday.attr.kind", r.kind.String))
	}
	own := false
	for _, at := range r.attrs {
		if strings.HasPrefix(at.key, traces.ArgPrefix) {
			own = true
			if at.key == traces.OwnArgsMarker {
				continue
			}
		}
		a = append(a, kvAttr("mayday.attr."+at.key, at.key, at.value))
	}
	if !own && r.operation == "execute_tool" && r.status != "blocked" && r.tool.Valid {
		a = append(a, w.run.args[r.tool.String]...)
	}
	return a
}

func optString(a []*commonpb.KeyValue, key string, v sql.NullString, keep bool) []*commonpb.KeyValue {
	if !v.Valid || !keep {
		return a
	}
	return append(a, kvString(key, v.String))
}

// boolAttrs are the span attributes the simulator records as booleans ("true", "false"):
// they are exported as OTLP booleans.
var boolAttrs = map[string]bool{"approved": true, "config_valid": true, "correct": true}

// kvAttr exports a recorded span attribute with its type: a boolean attribute as a bool
// (unless redaction replaced its value), any other as the text it is.
func kvAttr(k, key, v string) *commonpb.KeyValue {
	if boolAttrs[key] {
		if b, err := strconv.ParseBool(v); err == nil {
			return kvBool(k, b)
		}
	}
	return kvString(k, v)
}

// kvTyped exports a value written as text (a sweep grid value) with the type it reads as:
// true or false as a bool, a whole number as an int, a number as a double, when the text is
// exactly how that value prints; anything else (5m, 0.10, a name) as a string.
func kvTyped(k, v string) *commonpb.KeyValue {
	if v == "true" || v == "false" {
		return kvBool(k, v == "true")
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(i, 10) == v {
		return kvInt(k, i)
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && strconv.FormatFloat(f, 'g', -1, 64) == v && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return kvDouble(k, f)
	}
	return kvString(k, v)
}

func kvBool(k string, v bool) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}

func kvString(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func kvInt(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func kvDouble(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

// kvSeed stores a seed as an integer attribute; the rare seed past int64 as its decimal text.
func kvSeed(k string, seed uint64) *commonpb.KeyValue {
	if seed > math.MaxInt64 {
		return kvString(k, strconv.FormatUint(seed, 10))
	}
	return kvInt(k, int64(seed))
}
