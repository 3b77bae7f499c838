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

// mayday's own export of every example, read as plain GenAI spans, gives back every metric
// spans can carry within the tolerances above.
func TestImportExportAsGenAI(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ctx := context.Background()
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			db, err := Create("")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			runID, _ := simulateExample(t, db, info.Name, 7, "workload.investigations=120")
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
			for _, name := range []string{"episode_recovery_rate", "median_recovery_time", "correlated_failure_share"} {
				w, _ := want.Value(name)
				g, _ := got.Value(name)
				t.Logf("%s: %v simulated, %v read as plain spans", name, w, g)
			}
		})
	}
}
