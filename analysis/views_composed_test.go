//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestComposedMetricsEqualsViews: metrics_recomputed as one statement (composedView) gives the
// rows the view files give read view by view, on the synthetic reference runs and two
// small simulations (crashes, parks and throttles, a shared outage): the same columns, the
// same values, floats to within the last bits (a sum may add its terms in another order).
func TestComposedMetricsEqualsViews(t *testing.T) {
	db := openTestDB(t)
	for _, c := range []viewCase{referenceCase(), simulatedCase("worker-crashes", []string{"workload.investigations=60"}),
		simulatedCase("shared-outage", []string{"workload.investigations=150", "workload.arrival={uniform: 2h}"})} {
		c.load(t, db)
	}
	files := viewSQL()
	composed := composedView(files, recomputedView)
	for _, v := range []string{"metrics_measured"} {
		if !strings.Contains(composed, "\n"+v+" AS (\n") {
			t.Errorf("metrics_recomputed as one statement does not hold %s", v)
		}
	}
	for _, v := range []string{"span_attributes", "tool_stats", "lifecycle"} {
		if strings.Contains(composed, "\n"+v+" AS (\n") || strings.Contains(composed, "WITH "+v+" AS (") {
			t.Errorf("metrics_recomputed as one statement holds %s, which it does not read", v)
		}
	}
	var byName string
	for _, f := range files {
		if f.view == recomputedView {
			byName = "CREATE VIEW metrics_by_name AS " + viewQuery(f)
		}
	}
	if _, err := db.SQL().Exec(byName); err != nil {
		t.Fatal(err)
	}
	cols, want, err := db.Query(t.Context(), "SELECT * FROM metrics_by_name ORDER BY run_id")
	if err != nil {
		t.Fatal(err)
	}
	gotCols, got, err := db.Query(t.Context(), "SELECT * FROM metrics_recomputed ORDER BY run_id")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cols) != fmt.Sprint(gotCols) {
		t.Fatalf("columns %v, want %v", gotCols, cols)
	}
	if len(got) != len(want) || len(want) != 5 {
		t.Fatalf("%d rows, want %d (5 runs)", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			w, g := want[i][j], got[i][j]
			if wf, ok := w.(float64); ok {
				if gf, ok := g.(float64); ok && math.Abs(wf-gf) <= 1e-12*math.Max(1, math.Max(math.Abs(wf), math.Abs(gf))) {
					continue
				}
			}
			if fmt.Sprint(w) != fmt.Sprint(g) {
				t.Errorf("run %v, %s: %v, want %v", want[i][0], cols[j], g, w)
			}
		}
	}
}

// TestComposedViewReadsByName: a view read but not among the files given (the mutation
// harness's table in its place) is read by name, and one of them is inlined.
func TestComposedViewReadsByName(t *testing.T) {
	files := viewSQL()
	var later []viewFile
	for _, f := range files {
		if f.name >= "views/06" {
			later = append(later, f)
		}
	}
	got := composedView(later, recomputedView)
	if strings.Contains(got, " disruptions AS (") || strings.Contains(got, "\ncalls AS (") {
		t.Errorf("disruptions or calls inlined although not among the files:\n%.400s", got)
	}
	if !strings.Contains(got, "WITH execution_costs AS ") {
		t.Errorf("execution_costs not the first view inlined:\n%.400s", got)
	}
}
