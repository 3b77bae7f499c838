//go:build duckdb_arrow

package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// TestMetricsMatchReferenceOnSimulation runs small scenarios through the real simulator,
// loads their records, and compares every metric, incident and recovery episode with the
// reference computed from the same records; the simulator's own counts check the reference
// in turn. research-fleet: 400 investigations arriving over 3 hours, so the backtest outage
// at 2h falls among them. lost-responses without inspection: blind retries after lost
// replies duplicate the notify tool's side effects (idempotency none), and a 40-minute
// horizon leaves investigations in flight.
func TestMetricsMatchReferenceOnSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	cases := []struct {
		scenario string
		seed     uint64
		sets     []string
		check    func(t *testing.T, want refResult, res sim.Result)
	}{
		{"research-fleet", 42, []string{"workload.investigations=400", "workload.arrival={uniform: 3h}"},
			func(t *testing.T, want refResult, res sim.Result) {
				if want.Metrics.Get("retry_amplification") <= 1 || len(want.Incidents) == 0 {
					t.Errorf("want retries and an incident: %+v, %d incidents", want.Metrics, len(want.Incidents))
				}
			}},
		{"shared-outage", 1, []string{"workload.investigations=600"},
			func(t *testing.T, want refResult, res sim.Result) {
				// The breaker parks callers and the budget throttles retries: the outage is
				// still one incident of at least its 30 minutes.
				if len(want.Incidents) != 1 || want.Incidents[0].Minutes() < 30 {
					t.Errorf("want one incident of >= 30 minutes: %+v", want.Incidents)
				}
			}},
		{"research-fleet", 7, []string{"workload.investigations=400", "workload.arrival={uniform: 3h}", "faults[2].tool=model", "faults[2].for=20m"},
			func(t *testing.T, want refResult, res sim.Result) {
				// The outage on the model provider: an incident on the model, and recovery
				// episodes that the model's refusals began.
				model := 0
				for _, e := range want.Episodes {
					if e.Tool == "model" {
						model++
					}
				}
				found := false
				for _, inc := range want.Incidents {
					found = found || inc.Tool == "model" && inc.Minutes() >= 20
				}
				if !found || model == 0 {
					t.Errorf("a model outage: want an incident of >= 20 minutes on the model and model episodes: %+v, %d model episodes", want.Incidents, model)
				}
			}},
		{"lost-responses", 1, []string{"workload.investigations=300", "horizon=40m", "recovery.inspect_before_retry=false"},
			func(t *testing.T, want refResult, res sim.Result) {
				if want.Metrics.Get("duplicate_side_effects") == 0 || res.InFlight+res.AwaitingHuman == 0 {
					t.Errorf("want duplicate side effects and investigations in flight: %+v, %+v", want.Metrics, res)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.scenario, func(t *testing.T) {
			sc, err := scenarios.Load(tc.scenario, tc.sets)
			if err != nil {
				t.Fatal(err)
			}
			var c record.Collector
			res, err := sim.Run(context.Background(), sc, tc.seed, &c, sim.Options{Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Violations) > 0 {
				t.Fatalf("simulation invariants: %v", res.Violations)
			}
			db := openTestDB(t)
			runID := RunID(sc.Name, tc.seed)
			if err := LoadCollector(db, runID, &c, traces.Run{Scenario: sc.Name, Seed: tc.seed, Config: string(sc.JSON()),
				ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
				t.Fatal(err)
			}
			side := map[string]bool{}
			for _, tool := range sc.Tools {
				side[tool.Name] = tool.Idempotency != scenarios.Natural
			}
			want := checkRunRecords(t, db, refRun{ID: runID, Events: res.Events, SideEffects: side}, &c)
			m := want.Metrics
			if m.Get("started") != float64(res.Started) || m.Get("completed") != float64(res.Completed) || m.Get("terminated") != float64(res.Terminated) {
				t.Errorf("reference started/completed/terminated %v/%v/%v, simulator %v/%v/%v",
					m.Get("started"), m.Get("completed"), m.Get("terminated"), res.Started, res.Completed, res.Terminated)
			}
			// makespan, derived from the trace, is the simulator's end of the run (to the
			// microsecond resolution of a TIMESTAMP).
			if d := math.Abs(m.Get("makespan") - float64(res.Makespan)/1e9); d > 1e-6 {
				t.Errorf("makespan %.6f s from the trace, simulator %.9f s", m.Get("makespan"), float64(res.Makespan)/1e9)
			}
			// The lifecycle view ends with the simulator's tally of final states.
			var total, completed, terminated, awaiting int64
			if err := db.SQL().QueryRow(`SELECT pending + running + waiting + recovering + awaiting_human + completed + terminated,
				completed, terminated, awaiting_human FROM lifecycle WHERE run_id = ? AND agent = 'root' ORDER BY minute DESC LIMIT 1`, runID).
				Scan(&total, &completed, &terminated, &awaiting); err != nil {
				t.Fatal(err)
			}
			if total != int64(res.Started) || completed != int64(res.Completed) || terminated != int64(res.Terminated) || awaiting != int64(res.AwaitingHuman) {
				t.Errorf("lifecycle at the end: %d in all states, %d completed, %d terminated, %d awaiting a human; simulator %+v",
					total, completed, terminated, awaiting, res)
			}
			tc.check(t, want, res)
			t.Logf("%d spans, %d executions, %d transitions; %d incidents, %d recovery episodes; %+v",
				len(c.Spans), len(c.Executions), len(c.Transitions), len(want.Incidents), len(want.Episodes), m)
		})
	}
}
