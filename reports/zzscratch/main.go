// Temporary: validates reports/sql against analysis/views with sim output. Deleted after use.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
)

const ddl = `
CREATE TABLE runs (run_id VARCHAR, scenario VARCHAR, seed UBIGINT, config VARCHAR, config_hash VARCHAR, version VARCHAR, digest VARCHAR, events BIGINT, status VARCHAR, wall_seconds DOUBLE);
CREATE TABLE investigations (run_id VARCHAR, investigation_id BIGINT, parent_id BIGINT, root_id BIGINT, depth INTEGER, arrived_at TIMESTAMP, ended_at TIMESTAMP, final_state VARCHAR, termination_reason VARCHAR, steps INTEGER, attempts INTEGER, revisions INTEGER, escalations INTEGER, tokens BIGINT, compute DOUBLE, truly_valid BOOLEAN, validated BOOLEAN, crashes INTEGER);
CREATE TABLE spans (run_id VARCHAR, trace_id BIGINT, span_id UBIGINT, parent_span_id UBIGINT, investigation_id BIGINT, agent_id BIGINT, operation VARCHAR, tool VARCHAR, tool_version VARCHAR, model VARCHAR, op_key VARCHAR, attempt INTEGER, start TIMESTAMP, "end" TIMESTAMP, queue_wait DOUBLE, status VARCHAR, failure_class VARCHAR, fault_id VARCHAR, input_tokens BIGINT, output_tokens BIGINT, compute DOUBLE);
CREATE TABLE transitions (run_id VARCHAR, investigation_id BIGINT, at TIMESTAMP, from_state VARCHAR, to_state VARCHAR, event VARCHAR, failure_class VARCHAR, action VARCHAR, decided_by VARCHAR, reason VARCHAR, attempt INTEGER);
CREATE TABLE executions (run_id VARCHAR, tool VARCHAR, op_key VARCHAR, investigation_id BIGINT, execution INTEGER, start TIMESTAMP, "end" TIMESTAMP, outcome VARCHAR, delivered BOOLEAN, compute DOUBLE, side_effects BOOLEAN);
CREATE TABLE faults (run_id VARCHAR, fault_id VARCHAR, kind VARCHAR, tool VARCHAR, start TIMESTAMP, "end" TIMESTAMP, parameters VARCHAR);
CREATE TABLE tool_samples (run_id VARCHAR, tool VARCHAR, "at" TIMESTAMP, queued INTEGER, in_service INTEGER, parked INTEGER, budget_tokens DOUBLE, breaker_state VARCHAR, attempts INTEGER, failures INTEGER, retries INTEGER);
`

func ts(ns int64) time.Time { return time.Unix(0, record.Epoch+ns).UTC() }
func key(k record.OpKey) string { return fmt.Sprintf("%d/%d/%d", k.Investigation, k.Step, k.Revision) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	sets := os.Args[2:]
	sc, err := scenarios.Load(os.Args[1], sets)
	must(err)
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	must(err)
	fmt.Printf("%+v spans %d trans %d samples %d faults %d\n", res, len(c.Spans), len(c.Transitions), len(c.Samples), len(c.Faults))
	db, err := sql.Open("duckdb", "")
	must(err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(ddl)
	must(err)
	tx, _ := db.Begin()
	ex := func(q string, args ...any) { _, err := tx.Exec(q, args...); must(err) }
	run := "r1"
	ex(`INSERT INTO runs VALUES (?, ?, 1, ?, 'h', 'v', 'd', ?, 'complete', 0)`, run, sc.Name, string(sc.JSON()), res.Events)
	for _, i := range c.Investigations {
		var end any
		if i.Ended {
			end = ts(i.EndedAt)
		}
		ex(`INSERT INTO investigations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, run, i.InvestigationID, i.ParentID, i.RootID, i.Depth, ts(i.ArrivedAt), end, i.FinalState, i.TerminationReason, i.Steps, i.Attempts, i.Revisions, i.Escalations, i.Tokens, i.Compute, i.TrulyValid, i.Validated, i.Crashes)
	}
	for _, s := range c.Spans {
		var k any
		if s.HasKey {
			k = key(s.OpKey)
		}
		ex(`INSERT INTO spans VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, run, s.TraceID, s.SpanID, s.ParentSpanID, s.InvestigationID, s.AgentID, string(s.Operation), s.Tool, s.ToolVersion, s.Model, k, s.Attempt, ts(s.Start), ts(s.End), float64(s.QueueWait)/1e9, string(s.Status), s.FailureClass, s.FaultID, s.InputTokens, s.OutputTokens, s.Compute)
	}
	for _, t := range c.Transitions {
		ex(`INSERT INTO transitions VALUES (?,?,?,?,?,?,?,?,?,?,?)`, run, t.InvestigationID, ts(t.At), t.From, t.To, t.Event, t.FailureClass, t.Action, t.DecidedBy, t.Reason, t.Attempt)
	}
	for _, e := range c.Executions {
		ex(`INSERT INTO executions VALUES (?,?,?,?,?,?,?,?,?,?,?)`, run, e.Tool, key(e.OpKey), e.InvestigationID, e.Execution, ts(e.Start), ts(e.End), e.Outcome, e.Delivered, e.Compute, e.SideEffects)
	}
	for _, f := range c.Faults {
		ex(`INSERT INTO faults VALUES (?,?,?,?,?,?,?)`, run, f.FaultID, f.Kind, f.Tool, ts(f.Start), ts(f.End), f.Parameters)
	}
	for _, s := range c.Samples {
		ex(`INSERT INTO tool_samples VALUES (?,?,?,?,?,?,?,?,?,?,?)`, run, s.Tool, ts(s.At), s.Queued, s.InService, s.Parked, s.BudgetTokens, s.BreakerState, s.Attempts, s.Failures, s.Retries)
	}
	must(tx.Commit())
	views, _ := filepath.Glob("analysis/views/*.sql")
	sort.Strings(views)
	for _, v := range views {
		b, _ := os.ReadFile(v)
		_, err := db.Exec(string(b))
		must(err)
	}
	qs, _ := filepath.Glob("reports/sql/*.sql")
	for _, q := range qs {
		b, _ := os.ReadFile(q)
		var args []any
		if strings.Contains(string(b), "$1") {
			args = []any{run}
		}
		start := time.Now()
		rows, err := db.Query(string(b), args...)
		if err != nil {
			fmt.Printf("== %s: ERROR %v\n", q, err)
			continue
		}
		cols, _ := rows.Columns()
		n := 0
		var first [][]any
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			must(rows.Scan(ptrs...))
			if n < 4 {
				first = append(first, vals)
			}
			n++
		}
		must(rows.Err())
		fmt.Printf("== %s: %d rows in %v; cols %v\n", q, n, time.Since(start).Round(time.Millisecond), cols)
		for _, f := range first {
			fmt.Printf("   %v\n", f)
		}
	}
	for _, q := range []string{
		"SELECT decided_by, event, action, reason, from_state, to_state, count(*) FROM transitions WHERE from_state = to_state GROUP BY ALL ORDER BY 7 DESC LIMIT 20",
		"SELECT breaker_state, count(*), min(budget_tokens), max(budget_tokens) FROM tool_samples GROUP BY ALL",
		"SELECT tool, count(*), min(at), max(at) FROM tool_samples GROUP BY ALL",
	} {
		rows, err := db.Query(q)
		must(err)
		cols, _ := rows.Columns()
		fmt.Println("==", q)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			must(rows.Scan(ptrs...))
			fmt.Println("  ", vals)
		}
	}
}
