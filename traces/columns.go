package traces

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// The typed builders of each table, bound once by column name so that the hot path appends
// without interface calls or type switches, and a renamed column fails at construction.

func fieldIndex(t Table, name string) int {
	idx := schemas[t].FieldIndices(name)
	if len(idx) != 1 {
		panic(fmt.Sprintf("traces: table %s has no column %q", t, name))
	}
	return idx[0]
}

func field[B array.Builder](b *array.RecordBuilder, name string) B {
	idx := b.Schema().FieldIndices(name)
	if len(idx) != 1 {
		panic(fmt.Sprintf("traces: schema has no column %q", name))
	}
	f, ok := b.Field(idx[0]).(B)
	if !ok {
		panic(fmt.Sprintf("traces: column %q is %s, built by %T", name, b.Schema().Field(idx[0]).Type, b.Field(idx[0])))
	}
	return f
}

func str(b *array.RecordBuilder, name string) *array.StringBuilder {
	return field[*array.StringBuilder](b, name)
}
func i32b(b *array.RecordBuilder, name string) *array.Int32Builder {
	return field[*array.Int32Builder](b, name)
}
func i64b(b *array.RecordBuilder, name string) *array.Int64Builder {
	return field[*array.Int64Builder](b, name)
}
func f64b(b *array.RecordBuilder, name string) *array.Float64Builder {
	return field[*array.Float64Builder](b, name)
}
func boolb(b *array.RecordBuilder, name string) *array.BooleanBuilder {
	return field[*array.BooleanBuilder](b, name)
}
func tsb(b *array.RecordBuilder, name string) *array.TimestampBuilder {
	return field[*array.TimestampBuilder](b, name)
}

type invCols struct {
	runID                                   *array.StringBuilder
	id, parent, root                        *array.Int64Builder
	depth                                   *array.Int32Builder
	arrived, ended                          *array.TimestampBuilder
	final, reason                           *array.StringBuilder
	steps, attempts, revisions, escalations *array.Int32Builder
	tokens                                  *array.Int64Builder
	compute                                 *array.Float64Builder
	trulyValid, validated                   *array.BooleanBuilder
	crashes                                 *array.Int32Builder
	scope                                   *array.StringBuilder
}

func (c *invCols) bind(b *array.RecordBuilder) {
	*c = invCols{
		runID: str(b, "run_id"), id: i64b(b, "investigation_id"), parent: i64b(b, "parent_id"),
		root: i64b(b, "root_id"), depth: i32b(b, "depth"),
		arrived: tsb(b, "arrived_at"), ended: tsb(b, "ended_at"),
		final: str(b, "final_state"), reason: str(b, "termination_reason"),
		steps: i32b(b, "steps"), attempts: i32b(b, "attempts"), revisions: i32b(b, "revisions"),
		escalations: i32b(b, "escalations"), tokens: i64b(b, "tokens"), compute: f64b(b, "compute"),
		trulyValid: boolb(b, "truly_valid"), validated: boolb(b, "validated"), crashes: i32b(b, "crashes"),
		scope: str(b, "scope"),
	}
}

type spanCols struct {
	runID                           *array.StringBuilder
	trace, span, parent, inv, agent *array.Int64Builder
	operation, kind, tool           *array.StringBuilder
	toolVersion, model, opKey       *array.StringBuilder
	attempt                         *array.Int32Builder
	start, end                      *array.TimestampBuilder
	queueWait                       *array.Float64Builder
	status, failureClass, faultID   *array.StringBuilder
	inTokens, outTokens             *array.Int64Builder
	compute                         *array.Float64Builder
	inRef, outRef                   *array.StringBuilder
	causedBy                        *array.ListBuilder
	causedByV                       *array.Int64Builder
	worker                          *array.Int64Builder
}

func (c *spanCols) bind(b *array.RecordBuilder) {
	*c = spanCols{
		runID: str(b, "run_id"), trace: i64b(b, "trace_id"), span: i64b(b, "span_id"),
		parent: i64b(b, "parent_span_id"), inv: i64b(b, "investigation_id"), agent: i64b(b, "agent_id"),
		operation: str(b, "operation"), kind: str(b, "kind"), tool: str(b, "tool"), toolVersion: str(b, "tool_version"),
		model: str(b, "model"), opKey: str(b, "op_key"), attempt: i32b(b, "attempt"),
		start: tsb(b, "start"), end: tsb(b, "end"), queueWait: f64b(b, "queue_wait"),
		status: str(b, "status"), failureClass: str(b, "failure_class"), faultID: str(b, "fault_id"),
		inTokens: i64b(b, "input_tokens"), outTokens: i64b(b, "output_tokens"), compute: f64b(b, "compute"),
		inRef: str(b, "input_ref"), outRef: str(b, "output_ref"),
		causedBy: field[*array.ListBuilder](b, "caused_by"), worker: i64b(b, "worker"),
	}
	c.causedByV = c.causedBy.ValueBuilder().(*array.Int64Builder)
}

type spanAttrCols struct {
	runID      *array.StringBuilder
	span       *array.Int64Builder
	key, value *array.StringBuilder
}

type toolArgCols struct {
	runID, tool, key, value *array.StringBuilder
}

func (c *spanAttrCols) bind(b *array.RecordBuilder) {
	*c = spanAttrCols{runID: str(b, "run_id"), span: i64b(b, "span_id"), key: str(b, "key"), value: str(b, "value")}
}

func (c *toolArgCols) bind(b *array.RecordBuilder) {
	*c = toolArgCols{runID: str(b, "run_id"), tool: str(b, "tool"), key: str(b, "key"), value: str(b, "value")}
}

type trCols struct {
	runID                                 *array.StringBuilder
	inv                                   *array.Int64Builder
	at                                    *array.TimestampBuilder
	from, to, event, failureClass, action *array.StringBuilder
	decidedBy, reason                     *array.StringBuilder
	attempt                               *array.Int32Builder
}

func (c *trCols) bind(b *array.RecordBuilder) {
	*c = trCols{
		runID: str(b, "run_id"), inv: i64b(b, "investigation_id"), at: tsb(b, "at"),
		from: str(b, "from_state"), to: str(b, "to_state"), event: str(b, "event"),
		failureClass: str(b, "failure_class"), action: str(b, "action"),
		decidedBy: str(b, "decided_by"), reason: str(b, "reason"), attempt: i32b(b, "attempt"),
	}
}

type exCols struct {
	runID, tool, opKey *array.StringBuilder
	inv                *array.Int64Builder
	execution          *array.Int32Builder
	start, end         *array.TimestampBuilder
	outcome            *array.StringBuilder
	delivered          *array.BooleanBuilder
	compute            *array.Float64Builder
	sideEffects        *array.BooleanBuilder
}

func (c *exCols) bind(b *array.RecordBuilder) {
	*c = exCols{
		runID: str(b, "run_id"), tool: str(b, "tool"), opKey: str(b, "op_key"),
		inv: i64b(b, "investigation_id"), execution: i32b(b, "execution"),
		start: tsb(b, "start"), end: tsb(b, "end"), outcome: str(b, "outcome"),
		delivered: boolb(b, "delivered"), compute: f64b(b, "compute"),
		sideEffects: boolb(b, "side_effects"),
	}
}

type faultCols struct {
	runID, id, kind, tool        *array.StringBuilder
	start, end, winStart, winEnd *array.TimestampBuilder
	params, hits                 *array.StringBuilder
}

func (c *faultCols) bind(b *array.RecordBuilder) {
	*c = faultCols{
		runID: str(b, "run_id"), id: str(b, "fault_id"), kind: str(b, "kind"), tool: str(b, "tool"),
		start: tsb(b, "start"), end: tsb(b, "end"), params: str(b, "parameters"),
		winStart: tsb(b, "window_start"), winEnd: tsb(b, "window_end"), hits: str(b, "hits"),
	}
}

type sampCols struct {
	runID, tool                 *array.StringBuilder
	at                          *array.TimestampBuilder
	queued, inService, parked   *array.Int32Builder
	budget                      *array.Float64Builder
	breaker                     *array.StringBuilder
	attempts, failures, retries *array.Int32Builder
}

func (c *sampCols) bind(b *array.RecordBuilder) {
	*c = sampCols{
		runID: str(b, "run_id"), tool: str(b, "tool"), at: tsb(b, "at"),
		queued: i32b(b, "queued"), inService: i32b(b, "in_service"), parked: i32b(b, "parked"),
		budget: f64b(b, "budget_tokens"), breaker: str(b, "breaker_state"),
		attempts: i32b(b, "attempts"), failures: i32b(b, "failures"), retries: i32b(b, "retries"),
	}
}

type workerCols struct {
	runID  *array.StringBuilder
	worker *array.Int64Builder
	zone   *array.StringBuilder
}

func (c *workerCols) bind(b *array.RecordBuilder) {
	*c = workerCols{runID: str(b, "run_id"), worker: i64b(b, "worker"), zone: str(b, "zone")}
}
