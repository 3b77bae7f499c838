//go:build duckdb_arrow

package analysis

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// carriedMetrics are the metrics that plain GenAI spans carry, with how far the import of
// mayday's own export, read as a trace from elsewhere (--conventions genai), may be from
// the simulated run's (docs/import.md, "mayday's own fleet as plain spans"). An absolute
// tolerance; 0 means exactly.
var carriedMetrics = []struct {
	name string
	tol  float64
}{
	{"started", 0}, {"completed", 0}, {"terminated", 0},
	{"completion_rate", 0}, {"terminated_rate", 0}, {"human_intervention_rate", 0},
	{"tokens_per_completion", 0}, {"makespan", 1e-3}, {"peak_backlog", 0},
	{"retry_amplification", 0.015},
}

// recoveredByRetries are the examples whose failures are recovered by retries alone
// (no invalid outputs and revisions, lookups, parks behind a breaker, policy blocks or
// crash takeovers, which plain spans do not carry): read as plain spans, their recovery
// episodes come back, the rate within 0.02 and the median time within 5%, and the
// correlated failure share within 0.05 (the plain reading does not see throttled calls).
var recoveredByRetries = map[string]bool{"budget-exhaustion": true, "capacity-crunch": true, "lost-responses": true,
	"retry-storm": true, "shared-outage": true, "transient-errors": true}

// mayday's own export of every example, read as plain GenAI spans, gives back every metric
// spans can carry within the tolerances above.
func TestImportExportAsGenAI(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ctx := context.Background()
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			db, runID := exampleDB(t, info.Name, 120)
			out := filepath.Join(t.TempDir(), "otlp")
			if _, err := Export(ctx, db, out, ExportOptions{Format: FormatOTLP}); err != nil {
				t.Fatal(err)
			}
			back, res := importInto(t, []string{out}, ImportOptions{Conventions: ConvGenAI, RunID: "plain"})
			if len(res.Runs) != 1 || res.Runs[0].Native {
				t.Fatalf("imported %+v, want one run of plain spans", res.Runs)
			}
			want, err := db.Metrics(ctx, runID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := back.Metrics(ctx, "plain")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range carriedMetrics {
				w, wok := want.Value(m.name)
				g, gok := got.Value(m.name)
				if wok != gok || math.Abs(w-g) > m.tol {
					t.Errorf("%s: %v (%v) read as plain spans, %v (%v) simulated; tolerance %v", m.name, g, gok, w, wok, m.tol)
				}
			}
			if !recoveredByRetries[info.Name] {
				return
			}
			for _, m := range []struct {
				name     string
				tol, rel float64
			}{{"episode_recovery_rate", 0.02, 0}, {"median_recovery_time", 0, 0.05}, {"correlated_failure_share", 0.05, 0}} {
				w, _ := want.Value(m.name)
				g, _ := got.Value(m.name)
				if math.IsNaN(w) != math.IsNaN(g) || math.Abs(w-g) > m.tol+m.rel*math.Abs(w) {
					t.Errorf("%s: %v read as plain spans, %v simulated", m.name, g, w)
				}
			}
		})
	}
}
