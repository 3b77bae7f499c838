//go:build duckdb_arrow && scratch

package analysis

// Temporary stand-in for db.go/ingest.go, used only with -tags scratch until they exist.

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/sim/record"
)

type DB struct{ db *sql.DB }

func (d *DB) SQL() *sql.DB { return d.db }

const scratchDDL = `
CREATE TABLE runs (run_id VARCHAR, scenario VARCHAR, seed UBIGINT, config VARCHAR, config_hash VARCHAR, version VARCHAR, digest VARCHAR, events BIGINT, status VARCHAR, wall_seconds DOUBLE, makespan DOUBLE);
CREATE TABLE investigations (run_id VARCHAR, investigation_id BIGINT, parent_id BIGINT, root_id BIGINT, depth INTEGER, arrived_at TIMESTAMP, ended_at TIMESTAMP, final_state VARCHAR, termination_reason VARCHAR, steps INTEGER, attempts INTEGER, revisions INTEGER, escalations INTEGER, tokens BIGINT, compute DOUBLE, truly_valid BOOLEAN, validated BOOLEAN, crashes INTEGER);
CREATE TABLE spans (run_id VARCHAR, trace_id BIGINT, span_id UBIGINT, parent_span_id UBIGINT, investigation_id BIGINT, agent_id BIGINT, operation VARCHAR, tool VARCHAR, tool_version VARCHAR, model VARCHAR, op_key VARCHAR, attempt INTEGER, start TIMESTAMP, "end" TIMESTAMP, queue_wait DOUBLE, status VARCHAR, failure_class VARCHAR, fault_id VARCHAR, input_tokens BIGINT, output_tokens BIGINT, compute DOUBLE);
CREATE TABLE transitions (run_id VARCHAR, investigation_id BIGINT, "at" TIMESTAMP, from_state VARCHAR, to_state VARCHAR, event VARCHAR, failure_class VARCHAR, action VARCHAR, decided_by VARCHAR, reason VARCHAR, attempt INTEGER);
CREATE TABLE executions (run_id VARCHAR, tool VARCHAR, op_key VARCHAR, investigation_id BIGINT, execution INTEGER, start TIMESTAMP, "end" TIMESTAMP, outcome VARCHAR, delivered BOOLEAN, compute DOUBLE, side_effects BOOLEAN);
CREATE TABLE faults (run_id VARCHAR, fault_id VARCHAR, kind VARCHAR, tool VARCHAR, start TIMESTAMP, "end" TIMESTAMP, parameters VARCHAR);
CREATE TABLE tool_samples (run_id VARCHAR, tool VARCHAR, "at" TIMESTAMP, queued INTEGER, in_service INTEGER, parked INTEGER, budget_tokens DOUBLE, breaker_state VARCHAR, attempts INTEGER, failures INTEGER, retries INTEGER);
`

func scratchCreate(path string) (*DB, error) {
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(scratchDDL); err != nil {
		return nil, err
	}
	return &DB{db}, nil
}

func ts(ns int64) time.Time { return time.Unix(0, record.Epoch+ns).UTC() }

func nullTS(ok bool, ns int64) any {
	if !ok {
		return nil
	}
	return ts(ns)
}

func key(k record.OpKey) string { return fmt.Sprintf("%d/%d/%d", k.Investigation, k.Step, k.Revision) }

func scratchLoad(db *DB, runID string, c *record.Collector, events, makespan int64) error {
	ctx := context.Background()
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ex := func(q string, args ...any) {
		if err == nil {
			_, err = tx.Exec(q, args...)
		}
	}
	ex(`INSERT INTO runs VALUES (?, 's', 1, '{}', 'h', 'v', 'd', ?, 'complete', 0, ?)`, runID, events, float64(makespan)/1e9)
	for _, i := range c.Investigations {
		ex(`INSERT INTO investigations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, runID, i.InvestigationID, i.ParentID, i.RootID, i.Depth, ts(i.ArrivedAt), nullTS(i.Ended, i.EndedAt), i.FinalState, i.TerminationReason, i.Steps, i.Attempts, i.Revisions, i.Escalations, i.Tokens, i.Compute, i.TrulyValid, i.Validated, i.Crashes)
	}
	for _, s := range c.Spans {
		var k any
		if s.HasKey {
			k = key(s.OpKey)
		}
		ex(`INSERT INTO spans VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, runID, s.TraceID, s.SpanID, s.ParentSpanID, s.InvestigationID, s.AgentID, string(s.Operation), s.Tool, s.ToolVersion, s.Model, k, s.Attempt, ts(s.Start), ts(s.End), float64(s.QueueWait)/1e9, string(s.Status), s.FailureClass, s.FaultID, s.InputTokens, s.OutputTokens, s.Compute)
	}
	for _, t := range c.Transitions {
		ex(`INSERT INTO transitions VALUES (?,?,?,?,?,?,?,?,?,?,?)`, runID, t.InvestigationID, ts(t.At), t.From, t.To, t.Event, t.FailureClass, t.Action, t.DecidedBy, t.Reason, t.Attempt)
	}
	for _, e := range c.Executions {
		ex(`INSERT INTO executions VALUES (?,?,?,?,?,?,?,?,?,?,?)`, runID, e.Tool, key(e.OpKey), e.InvestigationID, e.Execution, ts(e.Start), ts(e.End), e.Outcome, e.Delivered, e.Compute, e.SideEffects)
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

func openTestDB(t testing.TB) *DB {
	db, err := scratchCreate("")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateViews(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.db.Close() })
	return db
}

func loadSynth(t testing.TB, db *DB, runID string, s *synth, events int64) refRun {
	run := refRun{ID: runID, Events: events, Makespan: s.end}
	if err := scratchLoad(db, runID, &s.c, events, s.makespan); err != nil {
		t.Fatal(err)
	}
	return run
}
