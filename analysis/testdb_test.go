//go:build duckdb_arrow

package analysis

import (
	"encoding/json"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
)

// openTestDB creates an in-memory database with the trace tables and the views.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// synthConfig is the resolved-scenario JSON of a synthetic run: only its tools matter, so
// that the load knows which of them have side effects.
func synthConfig(s *synth) string {
	var sc scenarios.Scenario
	for _, tool := range s.tools {
		idem := scenarios.Natural
		if tool.sideEffects {
			idem = scenarios.Keyed
		}
		sc.Tools = append(sc.Tools, scenarios.Tool{Name: tool.name, Idempotency: idem})
	}
	b, err := json.Marshal(&sc)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// loadSynth loads a synthetic run through the same path as a simulation's records.
func loadSynth(t testing.TB, db *DB, runID string, s *synth, events int64) refRun {
	t.Helper()
	run := traces.Run{RunID: runID, Scenario: "synthetic", Events: events, Config: synthConfig(s), Status: traces.StatusComplete}
	if err := LoadCollector(db, runID, &s.c, run); err != nil {
		t.Fatal(err)
	}
	side := map[string]bool{}
	for _, tool := range s.tools {
		side[tool.name] = tool.sideEffects
	}
	return refRun{ID: runID, Events: events, SideEffects: side}
}
