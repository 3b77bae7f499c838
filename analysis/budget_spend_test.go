//go:build duckdb_arrow

package analysis

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// budgetFleet has a cost budget that binds, priced tokens, calls and compute, retries of a
// flaky tool whose timeout is shorter than many of its executions (cancel_on_timeout), a
// model supervisor and revisions of invalid results.
const budgetFleet = `
name: budget-at-every-spend
seed: 1
workload:
  investigations: 300
  arrival: {poisson: 1/s}
  steps: {dist: uniform, min: 2, max: 8}
  tokens: {dist: constant, value: 800}
  model: m
  behaviour: {invalid_output: 0.2, revise_success: 0.7}
tools:
  api: {latency: {dist: exponential, mean: 3s}, timeout: 4s, cancel_on_timeout: true, idempotency: natural, compute: 2}
faults:
  - {id: flaky, kind: transient, tool: api, probability: 0.3}
recovery:
  retry: {max_attempts: 5, initial: 1s, max: 10s}
  revisions: 2
  budgets: {cost: 0.03}
  supervisor: {kind: model, accuracy: 0.8, latency: 5s, tokens: 1500}
prices:
  models: {m: {input: 0.002, output: 0.006}}
  tools:
    api: {call: 0.002, compute_second: 0.001}
`

// TestBudgetAtEverySpendFromTables: read back from the trace tables, no investigation's
// cost (the costs view's rules: tokens of plan and supervise spans, the call price of every
// attempt sent, the compute of every execution) exceeds its budget by more than its largest
// single spend, whether the tool cancels timed-out work or lets it run (then executions
// outlive their attempts and bill after them: their whole compute was committed when their
// attempts were sent). An attempt's spend is its call plus the compute of the execution it
// started; every execution was started by one attempt, so the largest such spend is the
// call plus the investigation's largest execution.
func TestBudgetAtEverySpendFromTables(t *testing.T) {
	for _, cancel := range []bool{true, false} {
		t.Run(fmt.Sprintf("cancel_on_timeout=%t", cancel), func(t *testing.T) {
			text := strings.Replace(budgetFleet, "cancel_on_timeout: true", fmt.Sprintf("cancel_on_timeout: %t", cancel), 1)
			budgetFromTables(t, text)
		})
	}
}

func budgetFromTables(t *testing.T, text string) {
	sc, err := scenarios.Parse("budget.yaml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	if err != nil || len(res.Violations) > 0 {
		t.Fatalf("run: %v %v", err, res.Violations)
	}
	db := openTestDB(t)
	id := RunID(sc.Name, 1)
	if err := LoadCollector(db, id, &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	var over, crossed, n int64
	var total, view float64
	if err := db.SQL().QueryRow(`
WITH tok AS (
    SELECT investigation_id, (coalesce(input_tokens, 0) * 0.002 + coalesce(output_tokens, 0) * 0.006) / 1000 AS cost
    FROM spans WHERE operation IN ('plan', 'supervise')
), calls AS (
    SELECT investigation_id, count(*) * 0.002 AS cost
    FROM spans WHERE operation = 'execute_tool' AND status <> 'blocked' GROUP BY investigation_id
), execs AS (
    SELECT investigation_id, sum(compute) * 0.001 AS cost, max(compute) * 0.001 AS largest
    FROM executions GROUP BY investigation_id
), inv AS (
    SELECT i.investigation_id,
           coalesce((SELECT sum(cost) FROM tok WHERE tok.investigation_id = i.investigation_id), 0)
             + coalesce(c.cost, 0) + coalesce(x.cost, 0) AS cost,
           greatest(coalesce((SELECT max(cost) FROM tok WHERE tok.investigation_id = i.investigation_id), 0),
                    CASE WHEN c.cost > 0 THEN 0.002 + coalesce(x.largest, 0) ELSE coalesce(x.largest, 0) END) AS largest
    FROM investigations i
    LEFT JOIN calls c USING (investigation_id)
    LEFT JOIN execs x USING (investigation_id)
)
SELECT count(*) FILTER (WHERE cost > 0.03 + largest + 1e-12),
       count(*) FILTER (WHERE cost > 0.03),
       count(*),
       sum(cost),
       (SELECT cost FROM costs)
FROM inv`).Scan(&over, &crossed, &n, &total, &view); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d investigations, %d crossed the budget of 0.03, %d by more than one spend", n, crossed, over)
	if over != 0 || crossed < 20 {
		t.Errorf("%d of %d investigations overshot their budget by more than one spend; %d crossed it (want some)", over, n, crossed)
	}
	// The costs view counts what the budget counts: their totals agree (to float rounding
	// of a few thousand terms).
	if math.Abs(total-view) > 1e-9*total {
		t.Errorf("the investigations' spends sum to %.9f, the costs view says %.9f", total, view)
	}
}
