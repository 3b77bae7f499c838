//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/sim/record"
)

// replay sends the stored records of run runID to sink in an order the simulator could
// have written them: the faults and the tools' samples first, then investigation by
// investigation (in id order) its spans (by end, then span id) and transitions (by time, then
// the order stored), then its row; then the executions, in the order stored. Times are sent
// as nanoseconds since origin (Unix microseconds: the run's time 0, run_origin_us), so that
// a run that does not start at simulated time 0 (an import) counts its minutes from its own
// start, as the clock macros do. This is how every run that was not simulated into the
// database (an import, a merged run, a run an older version stored) has its derived tables
// computed, by the same code as a simulated run's.
func replay(ctx context.Context, q *sql.DB, runID string, origin int64, sink record.Sink) error {
	conn, err := q.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		ar, _, err := arrowOn(ctx, dc)
		if err != nil {
			return err
		}
		rp := &replayer{ctx: ctx, ar: ar, runID: runID, origin: origin, sink: sink}
		for _, step := range []func() error{rp.faults, rp.samples, rp.investigations, rp.executions} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
}

// replayer reads one run's records through one connection, as Arrow batches.
type replayer struct {
	ctx    context.Context
	ar     *duckdb.Arrow
	runID  string
	origin int64
	sink   record.Sink
}

// query runs q with args.
func (rp *replayer) query(q string, args ...any) (*arrowRows, error) {
	rr, err := rp.ar.QueryContext(rp.ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return newArrowRows(rr), nil
}

// each runs q and calls row on each row of its result; what names the rows for errors.
func (rp *replayer) each(what, q string, row func(r *arrowRows), args ...any) error {
	rows, err := rp.query(q, args...)
	if err != nil {
		return fmt.Errorf("reading the %s: %w", what, err)
	}
	defer rows.close()
	for rows.next() {
		row(rows)
	}
	if err := rows.err(); err != nil {
		return fmt.Errorf("reading the %s: %w", what, err)
	}
	return nil
}

// count is the integer a query of one row and one column returns.
func (rp *replayer) count(what, q string, args ...any) (n int64, err error) {
	err = rp.each(what, q, func(r *arrowRows) { n = r.int(0) }, args...)
	return n, err
}

// ns is the SQL of a TIMESTAMP column as nanoseconds since the origin ($2).
func ns(col string) string { return "(epoch_us(" + col + ") - $2) * 1000" }

func (rp *replayer) faults() error {
	return rp.each("faults", `SELECT coalesce(fault_id, ''), coalesce(kind, ''), coalesce(tool, ''),
		coalesce(`+ns(`"start"`)+`, 0), coalesce(`+ns(`"end"`)+`, 0), coalesce(parameters, ''),
		window_start IS NOT NULL, coalesce(`+ns("window_start")+`, 0), coalesce(`+ns("window_end")+`, 0), coalesce(hits, '')
		FROM faults WHERE run_id = $1 ORDER BY rowid`, func(r *arrowRows) {
		f := record.Fault{FaultID: r.str(0), Kind: r.str(1), Tool: r.str(2), Start: r.int(3), End: r.int(4),
			Parameters: r.str(5), Window: r.bool(6), Hits: r.str(9)}
		if f.Window {
			f.Start, f.End = r.int(7), r.int(8)
		}
		rp.sink.Fault(&f)
	}, rp.runID, rp.origin)
}

func (rp *replayer) samples() error {
	return rp.each("tool samples", `SELECT coalesce(tool, ''), `+ns(`"at"`)+`, coalesce(queued, 0), coalesce(in_service, 0),
		coalesce(parked, 0), coalesce(budget_tokens, -1), coalesce(breaker_state, 'off'),
		coalesce(attempts, 0), coalesce(failures, 0), coalesce(retries, 0)
		FROM tool_samples WHERE run_id = $1 AND "at" IS NOT NULL ORDER BY rowid`, func(r *arrowRows) {
		s := record.Sample{Tool: r.str(0), At: r.int(1), Queued: int32(r.int(2)), InService: int32(r.int(3)),
			Parked: int32(r.int(4)), BudgetTokens: r.float(5), BreakerState: r.str(6), Attempts: int32(r.int(7)),
			Failures: int32(r.int(8)), Retries: int32(r.int(9))}
		rp.sink.Sample(&s)
	}, rp.runID, rp.origin)
}

func (rp *replayer) executions() error {
	return rp.each("executions", `SELECT coalesce(tool, ''), coalesce(op_key, ''), coalesce(investigation_id, 0),
		coalesce(execution, 0), coalesce(`+ns(`"start"`)+`, 0), coalesce(`+ns(`"end"`)+`, 0), coalesce(outcome, ''),
		coalesce(delivered, false), coalesce(compute, 0), coalesce(side_effects, false)
		FROM executions WHERE run_id = $1 ORDER BY rowid`, func(r *arrowRows) {
		e := record.Execution{Tool: r.str(0), InvestigationID: r.int(2), Execution: int32(r.int(3)), Start: r.int(4),
			End: r.int(5), Outcome: r.str(6), Delivered: r.bool(7), Compute: r.float(8), SideEffects: r.bool(9)}
		e.OpKey, _ = parseOpKey(r.str(1))
		rp.sink.Execution(&e)
	}, rp.runID, rp.origin)
}

// refusalKeys are compute.RefusalAttrs as a SQL list: the attributes of a failed span the
// incident rule reads to tell a capacity refusal.
var refusalKeys = func() string {
	keys := make([]string, len(compute.RefusalAttrs))
	for i, k := range compute.RefusalAttrs {
		keys[i] = literal(k)
	}
	return strings.Join(keys, ", ")
}()

// replayRows is about how many spans and transitions replay reads at a time (a chunk of
// whole investigations, in id order): the records of a chunk are held at once, so a run of
// any size replays in bounded memory. At research-fleet's 80 records an investigation, a
// chunk is some 2,500 investigations; each chunk reads the three tables once (a database
// opened with Open reads through one connection, so one after another).
const replayRows = 200_000

// replayInvestigations sends the spans, transitions and rows of the run's investigations,
// investigation by investigation, about replayRows records at a time.
func (rp *replayer) investigations() error {
	type chunk struct{ from, to int64 }
	var chunks []chunk
	rows := int64(0)
	err := rp.each("investigation ids", `SELECT id, CAST(sum(n) AS BIGINT) FROM (
		SELECT investigation_id AS id, 0 AS n FROM investigations WHERE run_id = $1
		UNION ALL SELECT investigation_id, 1 FROM spans WHERE run_id = $1
		UNION ALL SELECT investigation_id, 1 FROM transitions WHERE run_id = $1)
		WHERE id IS NOT NULL GROUP BY id ORDER BY id`, func(r *arrowRows) {
		id, n := r.int(0), r.int(1)
		if len(chunks) == 0 || rows > 0 && rows+n > replayRows {
			chunks, rows = append(chunks, chunk{from: id}), 0
		}
		chunks[len(chunks)-1].to = id
		rows += n
	}, rp.runID)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if err := rp.investigationRange(c.from, c.to); err != nil {
			return err
		}
	}
	return nil
}

// investigationRange replays the investigations whose ids are in [from, to], to included.
func (rp *replayer) investigationRange(from, to int64) error {
	spans, err := rp.spans(from, to)
	if err != nil {
		return err
	}
	return rp.rest(from, to, spans)
}

// spans reads the spans of the investigations whose ids are in [from, to].
func (rp *replayer) spans(from, to int64) ([]record.Span, error) {
	// Counted first: a slice of records grown by appending copies every span it holds at
	// each growth (an import of 128,000 spans spent half a second of its replay there).
	n, err := rp.count("spans", "SELECT count(*) FROM spans WHERE run_id = $1 AND investigation_id >= $2 AND investigation_id <= $3",
		rp.runID, from, to)
	if err != nil {
		return nil, err
	}
	spans := make([]record.Span, 0, n)
	err = rp.each("spans", `SELECT investigation_id,
		coalesce(trace_id, 0), span_id, coalesce(parent_span_id, 0), coalesce(agent_id, 0), coalesce(operation, ''),
		kind, coalesce(tool, ''), coalesce(tool_version, ''), coalesce(model, ''), op_key, coalesce(attempt, 0),
		coalesce(`+ns(`"start"`)+`, 0), coalesce(`+ns(`"end"`)+`, 0), CAST(round(coalesce(queue_wait, 0) * 1e9) AS BIGINT),
		coalesce(status, ''), coalesce(failure_class, ''), coalesce(fault_id, ''),
		coalesce(input_tokens, 0), coalesce(output_tokens, 0), coalesce(compute, 0), coalesce(input_ref, ''),
		coalesce(output_ref, ''), coalesce(array_to_string(caused_by, ','), ''), coalesce(worker, 0),
		CASE WHEN status IN ('error', 'timeout') THEN (SELECT string_agg(a.key || '=' || a.value, chr(10) ORDER BY a.key)
			FROM span_attrs a WHERE a.run_id = $1 AND a.span_id = s.span_id
			AND a.key IN (`+refusalKeys+`)) END
		FROM spans s WHERE run_id = $1 AND investigation_id >= $3 AND investigation_id <= $4
		ORDER BY investigation_id, "end", span_id`, func(r *arrowRows) {
		// ids are stored as BIGINT: a uint64 past 2^63 reads negative, and back
		sp := record.Span{InvestigationID: r.int(0), TraceID: r.int(1), SpanID: uint64(r.int(2)), ParentSpanID: uint64(r.int(3)),
			AgentID: r.int(4), Operation: record.Operation(r.str(5)), Tool: r.str(7), ToolVersion: r.str(8), Model: r.str(9),
			Attempt: int32(r.int(11)), Start: r.int(12), End: r.int(13), QueueWait: r.int(14), Status: record.Status(r.str(15)),
			FailureClass: r.str(16), FaultID: r.str(17), InputTokens: r.int(18), OutputTokens: r.int(19), Compute: r.float(20),
			InputRef: r.str(21), OutputRef: r.str(22), Worker: r.int(24)}
		if !r.null(6) {
			sp.Attrs = []record.Attr{{Key: "kind", Value: r.str(6)}}
		}
		if !r.null(25) {
			// The attributes that say a failure was a refusal for capacity.
			sp.Attrs = appendRefusalAttrs(sp.Attrs, r.str(25))
		}
		if !r.null(10) {
			sp.OpKey, sp.HasKey = parseOpKey(r.str(10))
		}
		if causedBy := r.str(23); causedBy != "" {
			for f := range strings.SplitSeq(causedBy, ",") {
				if id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil {
					sp.CausedBy = append(sp.CausedBy, uint64(id))
				}
			}
		}
		spans = append(spans, sp)
	}, rp.runID, rp.origin, from, to)
	return spans, err
}

// rest reads the transitions and rows of the investigations whose ids are in [from, to]
// and sends them, with their spans, investigation by investigation.
func (rp *replayer) rest(from, to int64, spans []record.Span) error {
	nt, err := rp.count("transitions", "SELECT count(*) FROM transitions WHERE run_id = $1 AND investigation_id >= $2 AND investigation_id <= $3",
		rp.runID, from, to)
	if err != nil {
		return err
	}
	trans := make([]record.Transition, 0, nt)
	err = rp.each("transitions", `SELECT investigation_id, `+ns(`"at"`)+`,
		coalesce(from_state, ''), coalesce(to_state, ''), coalesce(event, ''), coalesce(failure_class, ''),
		coalesce(action, ''), coalesce(decided_by, ''), coalesce(reason, ''), coalesce(attempt, 0)
		FROM transitions WHERE run_id = $1 AND "at" IS NOT NULL AND investigation_id >= $3 AND investigation_id <= $4
		ORDER BY investigation_id, "at", rowid`, func(r *arrowRows) {
		trans = append(trans, record.Transition{InvestigationID: r.int(0), At: r.int(1), From: r.str(2), To: r.str(3),
			Event: r.str(4), FailureClass: r.str(5), Action: r.str(6), DecidedBy: r.str(7), Reason: r.str(8), Attempt: int32(r.int(9))})
	}, rp.runID, rp.origin, from, to)
	if err != nil {
		return err
	}
	ni, err := rp.count("investigations", "SELECT count(*) FROM investigations WHERE run_id = $1 AND investigation_id >= $2 AND investigation_id <= $3",
		rp.runID, from, to)
	if err != nil {
		return err
	}
	invs := make([]record.Investigation, 0, ni)
	err = rp.each("investigations", `SELECT investigation_id, coalesce(parent_id, 0), coalesce(root_id, 0), coalesce(depth, 0),
		coalesce(`+ns("arrived_at")+`, 0), ended_at IS NOT NULL, coalesce(`+ns("ended_at")+`, 0),
		coalesce(final_state, ''), coalesce(termination_reason, ''), coalesce(steps, 0), coalesce(attempts, 0),
		coalesce(revisions, 0), coalesce(escalations, 0), coalesce(tokens, 0), coalesce(compute, 0),
		coalesce(truly_valid, false), coalesce(validated, false), coalesce(crashes, 0), coalesce(scope, '')
		FROM investigations WHERE run_id = $1 AND investigation_id >= $3 AND investigation_id <= $4
		ORDER BY investigation_id`, func(r *arrowRows) {
		invs = append(invs, record.Investigation{InvestigationID: r.int(0), ParentID: r.int(1), RootID: r.int(2),
			Depth: int32(r.int(3)), ArrivedAt: r.int(4), Ended: r.bool(5), EndedAt: r.int(6), FinalState: r.str(7),
			TerminationReason: r.str(8), Steps: int32(r.int(9)), Attempts: int32(r.int(10)), Revisions: int32(r.int(11)),
			Escalations: int32(r.int(12)), Tokens: r.int(13), Compute: r.float(14), TrulyValid: r.bool(15),
			Validated: r.bool(16), Crashes: int32(r.int(17)), Scope: r.str(18)})
	}, rp.runID, rp.origin, from, to)
	if err != nil {
		return err
	}
	sendByInvestigation(rp.sink, spans, trans, invs)
	return nil
}

// appendRefusalAttrs appends to attrs the attributes of joined, a failed span's attributes
// named in compute.RefusalAttrs as the spans query joins them: key=value, one a line.
func appendRefusalAttrs(attrs []record.Attr, joined string) []record.Attr {
	for kv := range strings.SplitSeq(joined, "\n") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			attrs = append(attrs, record.Attr{Key: k, Value: v})
		}
	}
	return attrs
}

// sendByInvestigation sends records to sink investigation by investigation, in id order:
// each one's spans, then its transitions, then its row. Each list is sorted by
// investigation id (and within one, in the order to send).
func sendByInvestigation(sink record.Sink, spans []record.Span, trans []record.Transition, invs []record.Investigation) {
	i, j, k := 0, 0, 0
	for i < len(spans) || j < len(trans) || k < len(invs) {
		id := int64(math.MaxInt64)
		if i < len(spans) {
			id = min(id, spans[i].InvestigationID)
		}
		if j < len(trans) {
			id = min(id, trans[j].InvestigationID)
		}
		if k < len(invs) {
			id = min(id, invs[k].InvestigationID)
		}
		for ; i < len(spans) && spans[i].InvestigationID == id; i++ {
			sink.Span(&spans[i])
		}
		for ; j < len(trans) && trans[j].InvestigationID == id; j++ {
			sink.Transition(&trans[j])
		}
		for ; k < len(invs) && invs[k].InvestigationID == id; k++ {
			sink.Investigation(&invs[k])
		}
	}
}
