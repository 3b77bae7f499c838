package compute_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/examples/*.txt")

// exampleRuns are the simulated runs whose rows testdata/examples/*.txt pin: every embedded
// example, small, and runs that reach the corners (an outage on the model provider, work in
// flight at the horizon, no inspection before a retry). They are the runs of package
// analysis's TestComputedMetricsEqualViewsOnExamples, which holds the Sink's row equal to
// the SQL views' on each (all but the last): after `go test ./metric/compute -update`, that test says whether
// the new rows are the views' (a change here that it does not confirm is a bug).
func exampleRuns() []struct {
	name string
	sets []string
} {
	var runs []struct {
		name string
		sets []string
	}
	for _, info := range scenarios.List() {
		runs = append(runs, struct {
			name string
			sets []string
		}{info.Name, []string{"workload.investigations=150"}})
	}
	for _, r := range [][]string{
		{"research-fleet", "workload.investigations=400", "workload.arrival={uniform: 3h}"},
		{"research-fleet", "workload.investigations=400", "workload.arrival={uniform: 3h}", "faults[2].tool=model", "faults[2].for=20m"},
		{"shared-outage", "workload.investigations=600"},
		{"lost-responses", "workload.investigations=300", "horizon=40m", "recovery.inspect_before_retry=false"},
		// Long enough for a steady state before the outage: the only run here whose goodput
		// metrics are defined (package analysis checks them on this run at full size too).
		{"shared-outage", "workload.investigations=2000"},
	} {
		runs = append(runs, struct {
			name string
			sets []string
		}{r[0], r[1:]})
	}
	return runs
}

// rowText writes every metric of r, one a line, exactly (the shortest decimal that reads
// back as the same float), then the termination reasons and the currency.
func rowText(r compute.Row) string {
	var b strings.Builder
	for i, m := range metric.All {
		fmt.Fprintf(&b, "%s %s\n", m.Name, strconv.FormatFloat(r.Values[i], 'g', -1, 64))
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range r.TerminationReasons {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "terminated %q %d\n", k, r.TerminationReasons[k])
	}
	fmt.Fprintf(&b, "currency %q\n", r.Currency)
	return b.String()
}

// TestRowsOfExamples pins the row of each example run, one file a run, so that a change to
// the arithmetic shows as the metrics it moves.
func TestRowsOfExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	for i, r := range exampleRuns() {
		s, err := scenarios.Load(r.name, r.sets)
		if err != nil {
			t.Fatal(err)
		}
		prices, err := compute.StoredPrices(string(s.JSON()))
		if err != nil {
			t.Fatal(err)
		}
		sink := compute.New(compute.Options{Prices: prices, Guards: compute.GuardsOf(s), Investigations: s.Workload.Investigations})
		res, err := sim.Run(context.Background(), s, s.Seed+uint64(i), sink, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		row, err := sink.Finish(res.Events)
		if err != nil {
			t.Fatalf("%s %v: %v", r.name, r.sets, err)
		}
		got := fmt.Sprintf("# %s %s, seed %d\n", r.name, strings.Join(r.sets, " "), s.Seed+uint64(i)) + rowText(row)
		path := filepath.Join("testdata", "examples", fmt.Sprintf("%02d-%s.txt", i, r.name))
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./metric/compute -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("%s: the row differs from %s:\n%s", r.name, path, lineDiff(string(want), got))
		}
	}
}

// lineDiff lists the lines of want and got that differ, by position.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "  want %s\n   got %s\n", a, c)
		}
	}
	return b.String()
}
