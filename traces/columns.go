package traces

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// The columns of each table (cols.go), bound once by column name so that the hot path
// appends without interface calls or type switches, and a renamed column fails at
// construction.

type (
	i32Col = fixedCol[int32]
	i64Col = fixedCol[int64]
	u64Col = fixedCol[uint64]
	f64Col = fixedCol[float64]
	tsCol  = fixedCol[arrow.Timestamp]
)

// named is a column and the name of its field in the table's schema.
type named struct {
	name string
	col  column
}

// inOrder returns table t's columns in the order of its schema; a column the schema lacks,
// or a field without a column, panics.
func inOrder(t Table, cols ...named) []column {
	fields := schemas[t].Fields()
	if len(cols) != len(fields) {
		panic(fmt.Sprintf("traces: table %s has %d columns, the writer binds %d", t, len(fields), len(cols)))
	}
	out := make([]column, len(fields))
	for _, c := range cols {
		i := fieldIndex(t, c.name)
		if out[i] != nil {
			panic(fmt.Sprintf("traces: column %s.%s bound twice", t, c.name))
		}
		out[i] = c.col
	}
	return out
}

func fieldIndex(t Table, name string) int {
	idx := schemas[t].FieldIndices(name)
	if len(idx) != 1 {
		panic(fmt.Sprintf("traces: table %s has no column %q", t, name))
	}
	return idx[0]
}

type invCols struct {
	runID                                   strCol
	id, parent, root                        i64Col
	depth                                   i32Col
	arrived, ended                          tsCol
	final, reason                           strCol
	steps, attempts, revisions, escalations i32Col
	tokens                                  i64Col
	compute                                 f64Col
	trulyValid, validated                   boolCol
	crashes                                 i32Col
	scope                                   strCol
}

func (c *invCols) bind() []column {
	return inOrder(Investigations,
		named{"run_id", &c.runID}, named{"investigation_id", &c.id},
		named{"parent_id", &c.parent}, named{"root_id", &c.root}, named{"depth", &c.depth},
		named{"arrived_at", &c.arrived}, named{"ended_at", &c.ended},
		named{"final_state", &c.final}, named{"termination_reason", &c.reason},
		named{"steps", &c.steps}, named{"attempts", &c.attempts},
		named{"revisions", &c.revisions}, named{"escalations", &c.escalations},
		named{"tokens", &c.tokens}, named{"compute", &c.compute},
		named{"truly_valid", &c.trulyValid}, named{"validated", &c.validated},
		named{"crashes", &c.crashes}, named{"scope", &c.scope},
	)
}

type spanCols struct {
	runID                           strCol
	trace, span, parent, inv, agent i64Col
	operation, kind, tool           strCol
	toolVersion, model, opKey       strCol
	attempt                         i32Col
	start, end                      tsCol
	queueWait                       f64Col
	status, failureClass, faultID   strCol
	inTokens, outTokens             i64Col
	compute                         f64Col
	inRef, outRef                   strCol
	causedBy                        i64ListCol
	worker                          i64Col
}

func (c *spanCols) bind() []column {
	return inOrder(Spans,
		named{"run_id", &c.runID}, named{"trace_id", &c.trace}, named{"span_id", &c.span},
		named{"parent_span_id", &c.parent}, named{"investigation_id", &c.inv},
		named{"agent_id", &c.agent}, named{"operation", &c.operation}, named{"kind", &c.kind},
		named{"tool", &c.tool}, named{"tool_version", &c.toolVersion}, named{"model", &c.model},
		named{"op_key", &c.opKey}, named{"attempt", &c.attempt}, named{"start", &c.start},
		named{"end", &c.end}, named{"queue_wait", &c.queueWait}, named{"status", &c.status},
		named{"failure_class", &c.failureClass}, named{"fault_id", &c.faultID},
		named{"input_tokens", &c.inTokens}, named{"output_tokens", &c.outTokens},
		named{"compute", &c.compute}, named{"input_ref", &c.inRef},
		named{"output_ref", &c.outRef}, named{"caused_by", &c.causedBy},
		named{"worker", &c.worker},
	)
}

type spanAttrCols struct {
	runID      strCol
	span       i64Col
	key, value strCol
}

type toolArgCols struct {
	runID, tool, key, value strCol
}

func (c *spanAttrCols) bind() []column {
	return inOrder(SpanAttrs,
		named{"run_id", &c.runID}, named{"span_id", &c.span}, named{"key", &c.key},
		named{"value", &c.value},
	)
}

func (c *toolArgCols) bind() []column {
	return inOrder(ToolArgs,
		named{"run_id", &c.runID}, named{"tool", &c.tool}, named{"key", &c.key},
		named{"value", &c.value},
	)
}

type trCols struct {
	runID                                 strCol
	inv                                   i64Col
	at                                    tsCol
	from, to, event, failureClass, action strCol
	decidedBy, reason                     strCol
	attempt                               i32Col
}

func (c *trCols) bind() []column {
	return inOrder(Transitions,
		named{"run_id", &c.runID}, named{"investigation_id", &c.inv}, named{"at", &c.at},
		named{"from_state", &c.from}, named{"to_state", &c.to}, named{"event", &c.event},
		named{"failure_class", &c.failureClass}, named{"action", &c.action},
		named{"decided_by", &c.decidedBy}, named{"reason", &c.reason},
		named{"attempt", &c.attempt},
	)
}

type exCols struct {
	runID, tool, opKey strCol
	inv                i64Col
	execution          i32Col
	start, end         tsCol
	outcome            strCol
	delivered          boolCol
	compute            f64Col
	sideEffects        boolCol
}

func (c *exCols) bind() []column {
	return inOrder(Executions,
		named{"run_id", &c.runID}, named{"tool", &c.tool}, named{"op_key", &c.opKey},
		named{"investigation_id", &c.inv}, named{"execution", &c.execution},
		named{"start", &c.start}, named{"end", &c.end}, named{"outcome", &c.outcome},
		named{"delivered", &c.delivered}, named{"compute", &c.compute},
		named{"side_effects", &c.sideEffects},
	)
}

type faultCols struct {
	runID, id, kind, tool        strCol
	start, end, winStart, winEnd tsCol
	params, hits                 strCol
}

func (c *faultCols) bind() []column {
	return inOrder(Faults,
		named{"run_id", &c.runID}, named{"fault_id", &c.id}, named{"kind", &c.kind},
		named{"tool", &c.tool}, named{"start", &c.start}, named{"end", &c.end},
		named{"parameters", &c.params}, named{"window_start", &c.winStart},
		named{"window_end", &c.winEnd}, named{"hits", &c.hits},
	)
}

type sampCols struct {
	runID, tool                 strCol
	at                          tsCol
	queued, inService, parked   i32Col
	budget                      f64Col
	breaker                     strCol
	attempts, failures, retries i32Col
}

func (c *sampCols) bind() []column {
	return inOrder(ToolSamples,
		named{"run_id", &c.runID}, named{"tool", &c.tool}, named{"at", &c.at},
		named{"queued", &c.queued}, named{"in_service", &c.inService},
		named{"parked", &c.parked}, named{"budget_tokens", &c.budget},
		named{"breaker_state", &c.breaker}, named{"attempts", &c.attempts},
		named{"failures", &c.failures}, named{"retries", &c.retries},
	)
}

type workerCols struct {
	runID  strCol
	worker i64Col
	zone   strCol
}

func (c *workerCols) bind() []column {
	return inOrder(Workers,
		named{"run_id", &c.runID}, named{"worker", &c.worker}, named{"zone", &c.zone},
	)
}

type runCols struct {
	runID, scenario, config, configHash, version, digest, status strCol
	seed                                                         u64Col
	events                                                       i64Col
	wall                                                         f64Col
}

func (c *runCols) bind() []column {
	return inOrder(Runs,
		named{"run_id", &c.runID}, named{"scenario", &c.scenario}, named{"seed", &c.seed},
		named{"config", &c.config}, named{"config_hash", &c.configHash},
		named{"version", &c.version}, named{"digest", &c.digest}, named{"events", &c.events},
		named{"status", &c.status}, named{"wall_seconds", &c.wall},
	)
}
