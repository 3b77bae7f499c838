//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/mayday-sim/mayday/fit"
)

// fitOrigin is the instant a fitted scenario's time 0 stands for, as seconds of simulated
// time: 0 when the run's first root arrived within a day after the simulated epoch (a
// simulated run, or an import that kept the epoch), else the first root's arrival (an
// import in wall-clock time), so fault windows and arrivals are times since the run began.
const fitOrigin = `(SELECT CASE WHEN min(sim_seconds($1, arrived_at)) BETWEEN 0 AND 86400 THEN 0
        ELSE coalesce(min(sim_seconds($1, arrived_at)), 0) END
     FROM investigations WHERE run_id = $1 AND parent_id IS NULL)`

// FitInput reads what package fit needs of one run from its trace tables and views: only
// what a trace carries (arrivals, steps, model turns, attempts, lookups, human reviews,
// incidents, metrics), never the fault table or tool-side executions, so an imported run
// is read like a simulated one.
func (db *DB) FitInput(parent context.Context, runID string) (obs fit.Observed, err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	var n int
	if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE run_id = $1", runID).Scan(&n); err != nil {
		return obs, fmt.Errorf("analysis: reading run %s for fitting: %w", runID, err)
	}
	if n == 0 {
		return obs, db.noRun(ctx, runID)
	}
	obs.Name = runID
	q := fitQueries{ctx: ctx, db: db.SQL(), run: runID}
	q.floats(&obs.Arrivals, `SELECT sim_seconds($1, arrived_at) - `+fitOrigin+` FROM investigations
        WHERE run_id = $1 AND parent_id IS NULL ORDER BY arrived_at, investigation_id`)
	q.floats(&obs.Steps, `SELECT steps FROM investigations WHERE run_id = $1 AND final_state = 'completed'
        AND coalesce(scope, 'full') = 'full' AND steps > 0 ORDER BY investigation_id`)
	q.floats(&obs.Spawns, `SELECT count(*) FROM investigations WHERE run_id = $1 AND parent_id IS NOT NULL
        GROUP BY parent_id, arrived_at ORDER BY parent_id, arrived_at`)
	q.ints(`SELECT coalesce(max(depth), 0), coalesce(max(steps), 0) FROM investigations WHERE run_id = $1`, &obs.MaxDepth, &obs.MaxSteps)
	// Only agents above the deepest level spawn (max_depth), so only their steps were chances.
	q.ints(`SELECT count(*) FROM spans s JOIN investigations i
            ON i.run_id = s.run_id AND i.investigation_id = s.investigation_id
        WHERE s.run_id = $1 AND s.operation = 'execute_tool' AND s.attempt = 1 AND s.status <> 'blocked'
          AND (s.op_key IS NULL OR s.op_key LIKE '%/0')
          AND (i.depth < (SELECT max(depth) FROM investigations WHERE run_id = $1)
               OR NOT EXISTS (SELECT 1 FROM investigations WHERE run_id = $1 AND parent_id IS NOT NULL))`, &obs.StepsTried)
	var inspections int
	q.ints(`SELECT count(*) FROM spans WHERE run_id = $1 AND operation = 'inspect'`, &inspections)
	obs.Inspections = inspections > 0
	q.ints(`SELECT count(*) FROM transitions WHERE run_id = $1 AND action = 'escalate'`, &obs.Escalations)
	q.turns(&obs)
	q.tools(&obs)
	q.incidents(&obs)
	q.humans(&obs)
	// Only the episodes a tool's failure began (failed, timed out): those are what a
	// fitted scenario's faults make. Invalid outputs, crashes and the breaker's refusals
	// come from what fit leaves at its defaults.
	q.floats(&obs.Recoveries, `SELECT seconds FROM recovery_episodes WHERE run_id = $1 AND outcome = 'recovered'
        AND first_kind IN ('failed', 'timed_out') ORDER BY seconds`)
	q.episodes(&obs)
	if q.err != nil {
		return obs, fmt.Errorf("analysis: reading run %s for fitting: %w", runID, memoryHint(q.err))
	}
	m, err := db.Metrics(ctx, runID)
	if err != nil {
		return obs, err
	}
	obs.Metrics = map[string]float64{}
	for _, name := range MetricNames {
		v, ok := m.Value(name)
		if !ok {
			v = math.NaN()
		}
		obs.Metrics[name] = v
	}
	return obs, nil
}

// fitQueries runs the queries of one run, keeping the first error.
type fitQueries struct {
	ctx context.Context
	db  *sql.DB
	run string
	err error
}

// each runs query with the run id as $1 and scans every row into dest.
func (q *fitQueries) each(query string, row func(*sql.Rows) error) {
	if q.err != nil {
		return
	}
	rows, err := q.db.QueryContext(q.ctx, query, q.run)
	if err != nil {
		q.err = err
		return
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			q.err = err
			return
		}
	}
	q.err = rows.Err()
}

func (q *fitQueries) floats(dst *[]float64, query string) {
	q.each(query, func(r *sql.Rows) error {
		var v sql.NullFloat64
		if err := r.Scan(&v); err != nil {
			return err
		}
		if v.Valid {
			*dst = append(*dst, v.Float64)
		}
		return nil
	})
}

func (q *fitQueries) ints(query string, dst ...*int) {
	q.each(query, func(r *sql.Rows) error {
		args := make([]any, len(dst))
		for i, d := range dst {
			args[i] = d
		}
		return r.Scan(args...)
	})
}

// turns reads the successful model turns; a turn's index is its rank within its
// investigation (from 0), the step it prepares.
func (q *fitQueries) turns(obs *fit.Observed) {
	// A turn's answer is in by the first tool call of its investigation that begins while
	// the turn's span is still open (Mastra keeps it open while the tools it asked for run).
	q.each(`WITH turns AS (
            SELECT span_id, investigation_id, start, "end", (coalesce(input_tokens, 0) + coalesce(output_tokens, 0))::DOUBLE AS tokens
            FROM spans WHERE run_id = $1 AND operation = 'plan' AND kind = 'model_turn' AND status = 'ok'),
        answered AS (
            SELECT m.span_id, min(t.start) AS at
            FROM turns m JOIN spans t ON t.run_id = $1 AND t.investigation_id = m.investigation_id
                AND t.operation = 'execute_tool' AND t.start > m.start AND t.start < m."end"
            GROUP BY m.span_id)
        SELECT (row_number() OVER (PARTITION BY investigation_id ORDER BY start, span_id) - 1)::INTEGER,
            sim_seconds($1, coalesce(a.at, m."end")) - sim_seconds($1, m.start), m.tokens
        FROM turns m LEFT JOIN answered a USING (span_id)
        ORDER BY investigation_id, start, span_id`, func(r *sql.Rows) error {
		var t fit.Turn
		if err := r.Scan(&t.Index, &t.Seconds, &t.Tokens); err != nil {
			return err
		}
		obs.Turns = append(obs.Turns, t)
		return nil
	})
}

// tools reads every sent attempt at a tool (not the model provider), by tool and start,
// and each tool's lookups.
func (q *fitQueries) tools(obs *fit.Observed) {
	q.each(`SELECT tool, sim_seconds($1, start) - `+fitOrigin+`,
            sim_seconds($1, "end") - sim_seconds($1, start) - coalesce(queue_wait, 0),
            sim_seconds($1, "end") - sim_seconds($1, start), status, coalesce(failure_class, ''),
            coalesce(op_key, ''), coalesce(attempt, 1)
        FROM attempts WHERE run_id = $1 AND tool IS NOT NULL
        ORDER BY tool, start, span_id`, func(r *sql.Rows) error {
		var tool string
		var a fit.Attempt
		if err := r.Scan(&tool, &a.Start, &a.Seconds, &a.Wall, &a.Status, &a.Class, &a.Op, &a.Attempt); err != nil {
			return err
		}
		if a.Status == fit.StatusError && a.Class == "uncertain_completion" {
			return nil // the caller's worker crashed: no fact about the tool
		}
		if n := len(obs.Tools); n == 0 || obs.Tools[n-1].Name != tool {
			obs.Tools = append(obs.Tools, fit.ToolObs{Name: tool})
		}
		t := &obs.Tools[len(obs.Tools)-1]
		t.Attempts = append(t.Attempts, a)
		return nil
	})
	q.each(`SELECT s.tool, count(*) FILTER (WHERE a.value = 'completed'), count(*) FILTER (WHERE a.value = 'not_found')
        FROM spans s JOIN span_attrs a ON a.run_id = s.run_id AND a.span_id = s.span_id AND a.key = 'lookup'
        WHERE s.run_id = $1 AND s.operation = 'inspect' GROUP BY s.tool ORDER BY s.tool`, func(r *sql.Rows) error {
		var tool string
		var found, notFound int
		if err := r.Scan(&tool, &found, &notFound); err != nil {
			return err
		}
		for i := range obs.Tools {
			if obs.Tools[i].Name == tool {
				obs.Tools[i].Found, obs.Tools[i].NotFound = found, notFound
			}
		}
		return nil
	})
}

// episodes reads the recovery episodes; an episode's tool is kept only when a tool's
// failure (failed, timed out) began it, not the model provider's.
func (q *fitQueries) episodes(obs *fit.Observed) {
	q.each(`SELECT CASE WHEN first_kind IN ('failed', 'timed_out')
                AND tool IN (SELECT tool FROM attempts WHERE run_id = $1 AND tool IS NOT NULL) THEN tool ELSE '' END,
            coalesce(failed_attempts, 0)::INTEGER, outcome, coalesce(ended_as, ''), investigation_id
        FROM recovery_episodes WHERE run_id = $1 ORDER BY step_key`, func(r *sql.Rows) error {
		var e fit.Episode
		if err := r.Scan(&e.Tool, &e.Failed, &e.Outcome, &e.EndedAs, &e.Investigation); err != nil {
			return err
		}
		obs.Episodes = append(obs.Episodes, e)
		return nil
	})
}

func (q *fitQueries) incidents(obs *fit.Observed) {
	q.each(`SELECT tool, sim_seconds($1, start) - `+fitOrigin+`, sim_seconds($1, "end") - `+fitOrigin+`
        FROM incidents WHERE run_id = $1 AND tool <> 'model' ORDER BY start, tool`, func(r *sql.Rows) error {
		var in fit.Incident
		if err := r.Scan(&in.Tool, &in.Start, &in.End); err != nil {
			return err
		}
		obs.Incidents = append(obs.Incidents, in)
		return nil
	})
}

// humans reads the human reviews: approved by their approved attribute (a simulated run's,
// and mayday's own export read back), else by what the investigation did at the review's
// end: back to running (approved) or not (an imported review, whose decision the import
// read from its span: docs/import.md). A review with neither counts as rejected.
func (q *fitQueries) humans(obs *fit.Observed) {
	q.each(`SELECT sim_seconds($1, s.start) - `+fitOrigin+`, sim_seconds($1, s."end") - sim_seconds($1, s.start),
            coalesce(a.value, (SELECT CAST(bool_or(t.to_state = 'running') AS VARCHAR) FROM transitions t
                WHERE t.run_id = s.run_id AND t.investigation_id = s.investigation_id AND t.event = 'human_decision'
                AND t."at" = s."end"), 'false')
        FROM spans s LEFT JOIN span_attrs a ON a.run_id = s.run_id AND a.span_id = s.span_id AND a.key = 'approved'
        WHERE s.run_id = $1 AND s.operation = 'human_review' ORDER BY s.start, s.span_id`, func(r *sql.Rows) error {
		var h fit.Review
		var ok string
		if err := r.Scan(&h.Start, &h.Seconds, &ok); err != nil {
			return err
		}
		h.Approved = strings.EqualFold(ok, "true")
		obs.Humans = append(obs.Humans, h)
		return nil
	})
}
