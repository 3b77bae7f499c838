//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// Reading back a run of mayday's own OTLP export (docs/export.md): the spans' mayday.*
// attributes give every column, the events of the invoke_agent spans the investigations,
// transitions and executions, the resource the run, its faults and tool samples
// (export_otlp_records.go). Every table a metric reads is rebuilt row for row.

// native is one mayday export run being rebuilt.
type native struct {
	r      *inRun
	ids    map[string]uint64 // trace id + span id (hex) -> mayday span id
	rootOf map[int64]int64   // investigation -> its root
	c      record.Collector
}

func importNative(ctx context.Context, db *DB, r *inRun, opts ImportOptions) (ImportedRun, error) {
	res := r.resource
	run := traces.Run{RunID: r.id, Scenario: res["mayday.scenario"].GetStringValue(), Seed: seedOf(res["mayday.seed"]),
		Config: res["mayday.config"].GetStringValue(), ConfigHash: res["mayday.config_hash"].GetStringValue(),
		Version: res["service.version"].GetStringValue(), Events: res["mayday.events"].GetIntValue(),
		Status: res["mayday.run.status"].GetStringValue()}
	parts, err := r.parts()
	if err != nil {
		return ImportedRun{}, err
	}
	ir := ImportedRun{RunID: r.id, Scenario: run.Scenario, Native: true, Conventions: map[string]int64{}, Parts: len(parts),
		TimeZero: time.Unix(0, record.Epoch).UTC()}
	// The derived tables and metrics row are computed as the run loads, from the records
	// as stored, in replay's order (import_derive.go).
	stored := newNativeOrder(run.Config)
	// Each part's records are rebuilt and loaded in turn, each table's rows in their
	// exported order within the part (a run that holds its spans is one part), each rebuilt
	// while the one before it is sent to the load (eachPartAhead).
	send := func(sink record.Sink) error {
		return eachPartAhead(ctx, r, parts, opts.Conventions, &ir, func(first bool, in *inRun) (*record.Collector, error) {
			c, err := nativeRecords(in, first)
			if err != nil {
				return nil, err
			}
			ir.Investigations += len(c.Investigations)
			in.release() // the records are all the load needs (see importRun)
			return c, nil
		}, func(c *record.Collector) {
			c.Replay(sink)
			stored.flush()
		})
	}
	events := run.Events
	if _, ok := res["mayday.events"]; !ok {
		run.NoEvents, events = true, 0 // stored NULL: none
	}
	hooks := loadHooks{
		start:     func(l *Load) { l.w.Stored(stored) },
		done:      func(*Load) error { return stored.finish(r.id, nil, events) },
		committed: func() error { return stored.store(ctx, db, r.id) },
	}
	if err := loadRecords(ctx, db, r.id, opts, false, hooks, func() traces.Run { return run }, send); err != nil {
		return ImportedRun{}, err
	}
	if importDerived != nil {
		importDerived(r.id, !stored.off)
	}
	return ir, nil
}

// nativeRecords rebuilds the records of r's spans (a whole run, or a part of one holding
// whole traces), and the run's faults and tool samples when withRun.
func nativeRecords(r *inRun, withRun bool) (*record.Collector, error) {
	n := &native{r: r, ids: map[string]uint64{}, rootOf: map[int64]int64{}}
	for _, s := range r.spans {
		id, ok := s.num("mayday.span_id")
		if !ok {
			return nil, fmt.Errorf("run %s: span %q of a mayday export has no mayday.span_id: %w", r.id, s.name, ErrBadTraceInput)
		}
		n.ids[s.key] = uint64(id)
	}
	n.events()
	n.c.Spans = make([]record.Span, 0, len(r.spans))
	spanRows := make([]int64, 0, len(r.spans))
	for _, s := range r.spans {
		n.c.Spans = append(n.c.Spans, n.span(s))
		row, _ := s.num("mayday.row")
		spanRows = append(spanRows, row)
	}
	sortByRow(n.c.Spans, spanRows)
	if withRun {
		n.runRecords()
	}
	return &n.c, nil
}

// events gathers the investigations, transitions and executions the spans' events carry
// (nativeRows), each table in its exported order.
func (n *native) events() {
	var invs, trans, execs int
	for _, s := range n.r.spans {
		if s.rows != nil {
			invs, trans, execs = invs+len(s.rows.invs), trans+len(s.rows.trans), execs+len(s.rows.execs)
		}
	}
	n.c.Investigations = make([]record.Investigation, 0, invs)
	n.c.Transitions = make([]record.Transition, 0, trans)
	n.c.Executions = make([]record.Execution, 0, execs)
	invRows, transRows, execRows := make([]int64, 0, invs), make([]int64, 0, trans), make([]int64, 0, execs)
	for _, s := range n.r.spans {
		if s.rows == nil {
			continue
		}
		for _, inv := range s.rows.invs {
			n.rootOf[inv.InvestigationID] = inv.RootID
		}
		n.c.Investigations = append(n.c.Investigations, s.rows.invs...)
		invRows = append(invRows, s.rows.invRows...)
		n.c.Transitions = append(n.c.Transitions, s.rows.trans...)
		transRows = append(transRows, s.rows.transRows...)
		n.c.Executions = append(n.c.Executions, s.rows.execs...)
		execRows = append(execRows, s.rows.execRows...)
	}
	sortByRow(n.c.Investigations, invRows)
	sortByRow(n.c.Transitions, transRows)
	sortByRow(n.c.Executions, execRows)
}

// runRecords rebuilds the faults, tool samples and workers from the resource.
func (n *native) runRecords() {
	for _, row := range n.r.resource["mayday.workers"].GetArrayValue().GetValues() {
		v := rowValues{row.GetKvlistValue().GetValues(), asIs}
		n.c.Workers = append(n.c.Workers, record.Worker{Worker: v.int("worker"), Zone: v.str("zone")})
	}
	for _, row := range n.r.resource["mayday.faults"].GetArrayValue().GetValues() {
		v := rowValues{row.GetKvlistValue().GetValues(), asIs}
		window := v.has("window_start")
		n.c.Faults = append(n.c.Faults, record.Fault{FaultID: v.str("fault_id"), Kind: v.str("kind"), Tool: v.str("tool"),
			Start: v.time("start"), End: v.time("end"), Parameters: v.str("parameters"), Window: window, Hits: v.str("hits")})
	}
	for _, row := range n.r.resource["mayday.tool_samples"].GetArrayValue().GetValues() {
		v := rowValues{row.GetKvlistValue().GetValues(), asIs}
		budget := -1.0
		if v.has("budget_tokens") {
			budget = v.float("budget_tokens")
		}
		n.c.Samples = append(n.c.Samples, record.Sample{Tool: v.str("tool"), At: v.time("at"), Queued: int32(v.int("queued")),
			InService: int32(v.int("in_service")), Parked: int32(v.int("parked")), BudgetTokens: budget,
			BreakerState: v.str("breaker_state"), Attempts: int32(v.int("attempts")), Failures: int32(v.int("failures")),
			Retries: int32(v.int("retries"))})
	}
}

// span rebuilds one row of spans.
func (n *native) span(s *inSpan) record.Span {
	v := spanAttrs(s.attrs)
	inv := v.int("mayday.investigation_id")
	sp := record.Span{TraceID: inv, SpanID: n.ids[s.key], ParentSpanID: n.ids[s.parent], InvestigationID: inv,
		AgentID: v.int("mayday.agent_id"), Operation: record.Operation(v.str("mayday.operation")),
		Tool: cmpOr(v.str("mayday.tool"), v.str("gen_ai.tool.name")), ToolVersion: v.str("mayday.tool_version"),
		Model: v.str("mayday.model"), Attempt: int32(v.int("mayday.attempt")),
		Start: s.start - record.Epoch, End: s.end - record.Epoch,
		QueueWait: int64(math.Round(v.float("mayday.queue_wait") * 1e9)), Status: record.Status(v.str("mayday.status")),
		FailureClass: v.str("mayday.failure_class"), FaultID: v.str("mayday.fault_id"),
		InputTokens:  cmpOr(v.int("gen_ai.usage.input_tokens"), v.int("mayday.input_tokens")),
		OutputTokens: cmpOr(v.int("gen_ai.usage.output_tokens"), v.int("mayday.output_tokens")),
		Compute:      v.float("mayday.compute"), InputRef: v.str("mayday.input_ref"), OutputRef: v.str("mayday.output_ref"),
		Worker: v.int("mayday.worker")}
	if root, ok := n.rootOf[inv]; ok {
		sp.TraceID = root
	}
	if key, ok := parseOpKey(v.str("mayday.op_key")); ok {
		sp.HasKey, sp.OpKey = true, key
	}
	for _, l := range s.links {
		if id, ok := n.ids[l.key]; ok {
			sp.CausedBy = append(sp.CausedBy, id)
		}
	}
	for _, kv := range s.attrs {
		if k, ok := strings.CutPrefix(kv.key, "mayday.attr."); ok {
			sp.Attrs = append(sp.Attrs, record.Attr{Key: k, Value: kv.val.text()})
		}
	}
	return sp
}

// sortByRow puts records in the order of their rows in the exported table (stable, so an
// export without mayday.row keeps the order read).
func sortByRow[T any](recs []T, rows []int64) {
	if slices.IsSorted(rows) {
		return
	}
	idx := make([]int32, len(recs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(rows[a], rows[b]) })
	permute(recs, idx)
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// parseOpKey reads "<investigation>/<step>/<revision>".
func parseOpKey(s string) (record.OpKey, bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return record.OpKey{}, false
	}
	i, e1 := strconv.ParseInt(parts[0], 10, 64)
	st, e2 := strconv.ParseInt(parts[1], 10, 32)
	rv, e3 := strconv.ParseInt(parts[2], 10, 32)
	if e1 != nil || e2 != nil || e3 != nil {
		return record.OpKey{}, false
	}
	return record.OpKey{Investigation: i, Step: int32(st), Revision: int32(rv)}, true
}

func seedOf(v *commonpb.AnyValue) uint64 {
	if s := v.GetStringValue(); s != "" {
		n, _ := strconv.ParseUint(s, 10, 64)
		return n
	}
	return uint64(v.GetIntValue())
}

// spanAttrs is a span's (or event's) attributes read by key, the last of a key, as
// rowValues reads protobuf values. It is the list itself, searched from its end: a span or
// event of an export has a dozen attributes and is asked for about as many, and the search
// cost a fifth of what a map made for each (built, then read) did.
type spanAttrs []spanAttr

// get is the value of the last attribute named k, or nil.
func (m spanAttrs) get(k string) *attrValue {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].key == k {
			return &m[i].val
		}
	}
	return nil
}

func (m spanAttrs) has(k string) bool { return m.get(k) != nil }

func (m spanAttrs) bool(k string) bool {
	if v := m.get(k); v != nil {
		return v.bool()
	}
	return false
}

// time is a timestamp column (Unix nanoseconds) as simulated time.
func (m spanAttrs) time(k string) int64 { return m.int(k) - record.Epoch }

func (m spanAttrs) str(k string) string {
	if v := m.get(k); v != nil {
		return v.str()
	}
	return ""
}

func (m spanAttrs) int(k string) int64 {
	if v := m.get(k); v != nil {
		return v.int()
	}
	return 0
}

func (m spanAttrs) float(k string) float64 {
	if v := m.get(k); v != nil {
		return v.float()
	}
	return 0
}
