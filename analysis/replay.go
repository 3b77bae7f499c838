//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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
	if err := replayFaults(ctx, q, runID, origin, sink); err != nil {
		return err
	}
	if err := replaySamples(ctx, q, runID, origin, sink); err != nil {
		return err
	}
	if err := replayInvestigations(ctx, q, runID, origin, sink); err != nil {
		return err
	}
	return replayExecutions(ctx, q, runID, origin, sink)
}

// ns is the SQL of a TIMESTAMP column as nanoseconds since the origin ($2).
func ns(col string) string { return "(epoch_us(" + col + ") - $2) * 1000" }

func replayFaults(ctx context.Context, q *sql.DB, runID string, origin int64, sink record.Sink) error {
	rows, err := q.QueryContext(ctx, `SELECT coalesce(fault_id, ''), coalesce(kind, ''), coalesce(tool, ''),
		coalesce(`+ns(`"start"`)+`, 0), coalesce(`+ns(`"end"`)+`, 0), coalesce(parameters, ''),
		window_start IS NOT NULL, coalesce(`+ns("window_start")+`, 0), coalesce(`+ns("window_end")+`, 0), coalesce(hits, '')
		FROM faults WHERE run_id = $1 ORDER BY rowid`, runID, origin)
	if err != nil {
		return fmt.Errorf("reading the faults: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f record.Fault
		var ws, we int64
		if err := rows.Scan(&f.FaultID, &f.Kind, &f.Tool, &f.Start, &f.End, &f.Parameters, &f.Window, &ws, &we, &f.Hits); err != nil {
			return fmt.Errorf("reading the faults: %w", err)
		}
		if f.Window {
			f.Start, f.End = ws, we
		}
		sink.Fault(&f)
	}
	return rows.Err()
}

func replaySamples(ctx context.Context, q *sql.DB, runID string, origin int64, sink record.Sink) error {
	rows, err := q.QueryContext(ctx, `SELECT coalesce(tool, ''), `+ns(`"at"`)+`, coalesce(queued, 0), coalesce(in_service, 0),
		coalesce(parked, 0), coalesce(budget_tokens, -1), coalesce(breaker_state, 'off'),
		coalesce(attempts, 0), coalesce(failures, 0), coalesce(retries, 0)
		FROM tool_samples WHERE run_id = $1 AND "at" IS NOT NULL ORDER BY rowid`, runID, origin)
	if err != nil {
		return fmt.Errorf("reading the tool samples: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s record.Sample
		if err := rows.Scan(&s.Tool, &s.At, &s.Queued, &s.InService, &s.Parked, &s.BudgetTokens, &s.BreakerState,
			&s.Attempts, &s.Failures, &s.Retries); err != nil {
			return fmt.Errorf("reading the tool samples: %w", err)
		}
		sink.Sample(&s)
	}
	return rows.Err()
}

func replayExecutions(ctx context.Context, q *sql.DB, runID string, origin int64, sink record.Sink) error {
	rows, err := q.QueryContext(ctx, `SELECT coalesce(tool, ''), coalesce(op_key, ''), coalesce(investigation_id, 0),
		coalesce(execution, 0), coalesce(`+ns(`"start"`)+`, 0), coalesce(`+ns(`"end"`)+`, 0), coalesce(outcome, ''),
		coalesce(delivered, false), coalesce(compute, 0), coalesce(side_effects, false)
		FROM executions WHERE run_id = $1 ORDER BY rowid`, runID, origin)
	if err != nil {
		return fmt.Errorf("reading the executions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e record.Execution
		var key string
		if err := rows.Scan(&e.Tool, &key, &e.InvestigationID, &e.Execution, &e.Start, &e.End, &e.Outcome,
			&e.Delivered, &e.Compute, &e.SideEffects); err != nil {
			return fmt.Errorf("reading the executions: %w", err)
		}
		e.OpKey, _ = parseOpKey(key)
		sink.Execution(&e)
	}
	return rows.Err()
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

// replayChunk is how many investigation ids replay reads at a time: the records of that
// many investigations are held at once (a database opened with Open reads through one
// connection, so the three tables are read one after another, a chunk at a time).
const replayChunk = 20_000

// replayInvestigations sends the spans, transitions and rows of the run's investigations,
// investigation by investigation, replayChunk investigations at a time (whatever their ids).
func replayInvestigations(ctx context.Context, q *sql.DB, runID string, origin int64, sink record.Sink) error {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT id FROM (
		SELECT investigation_id AS id FROM investigations WHERE run_id = $1
		UNION ALL SELECT investigation_id FROM spans WHERE run_id = $1
		UNION ALL SELECT investigation_id FROM transitions WHERE run_id = $1)
		WHERE id IS NOT NULL ORDER BY id`, runID)
	if err != nil {
		return fmt.Errorf("reading the investigation ids: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("reading the investigation ids: %w", err)
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("reading the investigation ids: %w", err)
	}
	for i := 0; i < len(ids); i += replayChunk {
		last := ids[min(i+replayChunk, len(ids))-1]
		if err := replayRange(ctx, q, runID, origin, ids[i], last, sink); err != nil {
			return err
		}
	}
	return nil
}

// replayRange replays the investigations whose ids are in [from, to], to included.
func replayRange(ctx context.Context, q *sql.DB, runID string, origin, from, to int64, sink record.Sink) error {
	spans, err := readSpans(ctx, q, runID, origin, from, to)
	if err != nil {
		return err
	}
	return replayRest(ctx, q, runID, origin, from, to, spans, sink)
}

// readSpans reads the spans of the investigations whose ids are in [from, to].
func readSpans(ctx context.Context, q *sql.DB, runID string, origin, from, to int64) ([]record.Span, error) {
	// Counted first: a slice of records grown by appending copies every span it holds at
	// each growth (an import of 128,000 spans spent half a second of its replay there).
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM spans WHERE run_id = $1 AND investigation_id >= $2 AND investigation_id <= $3",
		runID, from, to).Scan(&n); err != nil {
		return nil, fmt.Errorf("counting the spans: %w", err)
	}
	spans := make([]record.Span, 0, n)
	rows, err := q.QueryContext(ctx, `SELECT investigation_id,
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
		ORDER BY investigation_id, "end", span_id`, runID, origin, from, to)
	if err != nil {
		return nil, fmt.Errorf("reading the spans: %w", err)
	}
	for rows.Next() {
		var sp record.Span
		var kind, key, errAttrs sql.NullString
		var causedBy string
		var spanID, parentID int64 // ids are stored as BIGINT: a uint64 past 2^63 reads negative
		if err := rows.Scan(&sp.InvestigationID, &sp.TraceID, &spanID, &parentID, &sp.AgentID, &sp.Operation, &kind,
			&sp.Tool, &sp.ToolVersion, &sp.Model, &key, &sp.Attempt, &sp.Start, &sp.End, &sp.QueueWait, &sp.Status,
			&sp.FailureClass, &sp.FaultID, &sp.InputTokens, &sp.OutputTokens, &sp.Compute, &sp.InputRef,
			&sp.OutputRef, &causedBy, &sp.Worker, &errAttrs); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading the spans: %w", err)
		}
		sp.SpanID, sp.ParentSpanID = uint64(spanID), uint64(parentID)
		if kind.Valid {
			sp.Attrs = []record.Attr{{Key: "kind", Value: kind.String}}
		}
		if errAttrs.Valid {
			// The attributes that say a failure was a refusal for capacity.
			for _, kv := range strings.Split(errAttrs.String, "\n") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					sp.Attrs = append(sp.Attrs, record.Attr{Key: k, Value: v})
				}
			}
		}
		if key.Valid {
			sp.OpKey, sp.HasKey = parseOpKey(key.String)
		}
		if causedBy != "" {
			for _, f := range strings.Split(causedBy, ",") {
				if id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64); err == nil {
					sp.CausedBy = append(sp.CausedBy, uint64(id))
				}
			}
		}
		spans = append(spans, sp)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("reading the spans: %w", err)
	}
	return spans, nil
}

// replayRest reads the transitions and rows of the investigations whose ids are in
// [from, to] and sends them, with their spans, investigation by investigation.
func replayRest(ctx context.Context, q *sql.DB, runID string, origin, from, to int64, spans []record.Span, sink record.Sink) error {
	var nt, ni int // counted first, as readSpans does
	if err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM transitions WHERE run_id = $1 AND investigation_id >= $2 AND investigation_id <= $3),
		(SELECT count(*) FROM investigations WHERE run_id = $1 AND investigation_id >= $2 AND investigation_id <= $3)`,
		runID, from, to).Scan(&nt, &ni); err != nil {
		return fmt.Errorf("counting the transitions and investigations: %w", err)
	}
	trans := make([]record.Transition, 0, nt)
	rows, err := q.QueryContext(ctx, `SELECT investigation_id, `+ns(`"at"`)+`,
		coalesce(from_state, ''), coalesce(to_state, ''), coalesce(event, ''), coalesce(failure_class, ''),
		coalesce(action, ''), coalesce(decided_by, ''), coalesce(reason, ''), coalesce(attempt, 0)
		FROM transitions WHERE run_id = $1 AND "at" IS NOT NULL AND investigation_id >= $3 AND investigation_id <= $4
		ORDER BY investigation_id, "at", rowid`, runID, origin, from, to)
	if err != nil {
		return fmt.Errorf("reading the transitions: %w", err)
	}
	for rows.Next() {
		var tr record.Transition
		if err := rows.Scan(&tr.InvestigationID, &tr.At, &tr.From, &tr.To, &tr.Event, &tr.FailureClass, &tr.Action,
			&tr.DecidedBy, &tr.Reason, &tr.Attempt); err != nil {
			rows.Close()
			return fmt.Errorf("reading the transitions: %w", err)
		}
		trans = append(trans, tr)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("reading the transitions: %w", err)
	}
	invs := make([]record.Investigation, 0, ni)
	rows, err = q.QueryContext(ctx, `SELECT investigation_id, coalesce(parent_id, 0), coalesce(root_id, 0), coalesce(depth, 0),
		coalesce(`+ns("arrived_at")+`, 0), ended_at IS NOT NULL, coalesce(`+ns("ended_at")+`, 0),
		coalesce(final_state, ''), coalesce(termination_reason, ''), coalesce(steps, 0), coalesce(attempts, 0),
		coalesce(revisions, 0), coalesce(escalations, 0), coalesce(tokens, 0), coalesce(compute, 0),
		coalesce(truly_valid, false), coalesce(validated, false), coalesce(crashes, 0), coalesce(scope, '')
		FROM investigations WHERE run_id = $1 AND investigation_id >= $3 AND investigation_id <= $4
		ORDER BY investigation_id`, runID, origin, from, to)
	if err != nil {
		return fmt.Errorf("reading the investigations: %w", err)
	}
	for rows.Next() {
		var in record.Investigation
		if err := rows.Scan(&in.InvestigationID, &in.ParentID, &in.RootID, &in.Depth, &in.ArrivedAt, &in.Ended, &in.EndedAt,
			&in.FinalState, &in.TerminationReason, &in.Steps, &in.Attempts, &in.Revisions, &in.Escalations,
			&in.Tokens, &in.Compute, &in.TrulyValid, &in.Validated, &in.Crashes, &in.Scope); err != nil {
			rows.Close()
			return fmt.Errorf("reading the investigations: %w", err)
		}
		invs = append(invs, in)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("reading the investigations: %w", err)
	}
	// Merge: each investigation's spans, then its transitions, then its row.
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
	return nil
}
