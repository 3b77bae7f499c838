//go:build duckdb_arrow

package reports

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/scenarios"
)

// smallOutage is shared-outage shrunk to run in a second: 400 investigations arriving over
// about 16 minutes, with the backtest outage moved to minute 5 so that it hits them.
var smallOutage = []string{
	"workload.investigations=400",
	"faults[0].at=5m",
	"faults[0].for=10m",
}

// runFolder simulates scenario ref with sets, seeds seed..seed+n-1, into a new run folder
// through the real pipeline (scenarios.Load, analysis.Create, pipeline.Execute).
func runFolder(t testing.TB, ref string, sets []string, seed uint64, n int) string {
	t.Helper()
	s, err := scenarios.Load(ref, sets)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := analysis.Create(filepath.Join(dir, analysis.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := pipeline.Execute(context.Background(), db, pipeline.Spec{Scenario: s, Seed: seed + uint64(i), Version: "test"}); err != nil {
			db.Close()
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReport renders reports of two small runs of the same outage, with and without the
// fleet guards (the simulations are the slow part, so the subtests share them).
func TestReport(t *testing.T) {
	a := runFolder(t, "shared-outage", smallOutage, 1, 1)
	b := runFolder(t, "shared-outage", append(slices.Clone(smallOutage), "recovery.breaker=", "recovery.retry_budget="), 1, 1)
	t.Run("OfARun", func(t *testing.T) { testReportOfARun(t, a) })
	t.Run("SelfContained", func(t *testing.T) { testReportSelfContained(t, a, b) })
	t.Run("Overlay", func(t *testing.T) { testReportOverlay(t, a, b) })
	t.Run("Deterministic", func(t *testing.T) { testReportDeterministic(t, a) })
}

// viewMetrics reads the metrics view of every run in the database at dir with plain SQL,
// column by column, independently of the report's own loading.
func viewMetrics(t *testing.T, dir string) map[string]map[string]*float64 {
	t.Helper()
	db, err := analysis.Open(filepath.Join(dir, analysis.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.SQL().Query("SELECT * EXCLUDE (termination_reasons) FROM metrics ORDER BY run_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]map[string]*float64{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		run := map[string]*float64{}
		for i, c := range cols {
			if c == "run_id" {
				continue
			}
			run[c] = number(t, c, vals[i])
		}
		out[vals[slices.Index(cols, "run_id")].(string)] = run
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func number(t *testing.T, col string, v any) *float64 {
	var f float64
	switch x := v.(type) {
	case nil:
		return nil
	case float64:
		f = x
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case uint64:
		f = float64(x)
	default:
		t.Fatalf("metrics.%s: unexpected type %T", col, v)
	}
	return &f
}

var metricCellRE = regexp.MustCompile(`<td class="num" data-run="([^"]*)" data-metric="([^"]*)" data-value="([^"]*)">([^<]*)`)

type cell struct{ run, metric, data, text string }

func metricCells(page []byte) []cell {
	var out []cell
	for _, m := range metricCellRE.FindAllSubmatch(page, -1) {
		out = append(out, cell{html.UnescapeString(string(m[1])), string(m[2]), string(m[3]), strings.TrimSpace(html.UnescapeString(string(m[4])))})
	}
	return out
}

func writeReport(t *testing.T, sources ...string) (*Report, Files, []byte) {
	t.Helper()
	runs, err := Load(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	r := New(runs, "test")
	files, err := r.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(files.HTML)
	if err != nil {
		t.Fatal(err)
	}
	return r, files, page
}

// testReportOfARun renders the report of a real (small) run and checks each chart is present
// with the series the run implies and data in them, and that every number of the metrics
// table is the metrics view's.
func testReportOfARun(t *testing.T, dir string) {
	r, files, page := writeReport(t, dir)
	if len(r.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(r.Runs))
	}
	run := r.Runs[0]
	id := run.Seeds[0].RunID
	if id != "shared-outage-s1" {
		t.Errorf("run id %q", id)
	}

	// Every chart, in the page, inline.
	for _, c := range r.Charts {
		fig := regexp.MustCompile(`(?s)<figure id="figure-` + c.ID + `" data-chart="` + c.ID + `">\s*<svg .*?</svg>`).Find(page)
		if fig == nil {
			t.Errorf("chart %s: no inline SVG figure in the HTML", c.ID)
			continue
		}
		if !bytes.Contains(fig, []byte(html.EscapeString(c.Title))) {
			t.Errorf("chart %s: the SVG lacks its title", c.ID)
		}
		for _, p := range c.Panels {
			for _, e := range p.legend {
				if !bytes.Contains(fig, []byte(escapeXML(e.name))) {
					t.Errorf("chart %s: the SVG lacks legend entry %q", c.ID, e.name)
				}
			}
			if p.XLabel != "" && !bytes.Contains(fig, []byte(escapeXML(p.XLabel))) || !bytes.Contains(fig, []byte(escapeXML(p.YLabel))) {
				t.Errorf("chart %s: the SVG lacks an axis label of %q", c.ID, p.Title)
			}
		}
	}
	byID := map[string]*Chart{}
	for _, c := range r.Charts {
		byID[c.ID] = c
	}

	// The expected series, from what the scenario does: an outage of backtest, a breaker
	// and a retry budget on both tools, most investigations completing.
	views := viewMetrics(t, dir)[id]
	states := byID[ChartStates].Panels
	expectSeries(t, states[0], "running", KindArea)
	expectSeries(t, states[0], "fault backtest-outage: outage backtest", KindWindow)
	expectSeries(t, states[1], "completed", KindArea)
	fails := byID[ChartFailures].Panels[0]
	expectSeries(t, fails, "backtest", KindLine)
	expectSeries(t, fails, "incidents: backtest", KindWindow)
	guards := byID[ChartGuards].Panels
	if len(guards) != 2 {
		t.Fatalf("retries chart: %d panels, want retries and budget tokens", len(guards))
	}
	expectSeries(t, guards[0], "backtest", KindLine)
	expectSeries(t, guards[1], "backtest", KindLine)
	rec := byID[ChartRecovery].Panels[0]
	expectSeries(t, rec, "recovered", KindLine)
	// The median and p95 marked on the chart are the metrics view's, printed as the chart
	// prints seconds ("never" where the view has NULL).
	for name, m := range map[string]string{"median": "median_recovery_time", "p95": "p95_recovery_time"} {
		label := name + " never"
		if v := views[m]; v != nil {
			label = name + " " + seconds(*v) + " s"
		}
		expectSeries(t, rec, label, KindMarker)
	}
	// The curve ends at the share of episodes recovered, or above it when some were still
	// open at the horizon (the estimate counts a censored episode's chance to recover).
	if s, _ := rec.Find("recovered"); s.Max > 1+1e-9 || s.Max < *views["episode_recovery_rate"]-1e-9 {
		t.Errorf("recovery curve ends at %v, want between the share of episodes recovered %v and 1", s.Max, *views["episode_recovery_rate"])
	}
	tools := byID[ChartTools].Panels
	for _, p := range tools {
		if len(p.Series) != 1 || p.Series[0].Kind != KindBar || p.Series[0].Len != len(run.Tools) {
			t.Errorf("tools chart %q: series %+v, want one bar per tool (%d)", p.Title, p.Series, len(run.Tools))
		}
	}
	if s := tools[0].Series[0]; s.Max < 1 {
		t.Errorf("retry amplification bars: max %v, want >= 1", s.Max)
	}
	cost := byID[ChartCost].Panels
	expectSeries(t, cost[0], "tokens", KindBar)
	expectSeries(t, cost[1], "useful", KindBar)
	// The cost chart's parts add up to the metrics view's compute per completion.
	k := run.Cost
	if k.Tokens != *views["tokens_per_completion"] || k.Compute != *views["compute_per_completion"] {
		t.Errorf("cost chart: %v tokens, %v compute; metrics view %v, %v", k.Tokens, k.Compute, *views["tokens_per_completion"], *views["compute_per_completion"])
	}
	wasted := k.Duplicate + k.Discarded + k.Incomplete
	if got, want := wasted/k.Compute, *views["wasted_compute_ratio"]; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost chart: wasted parts are %v of compute, metrics view %v", got, want)
	}

	// The chart data agree with the tables they come from: the lifecycle's last sample
	// counts every root as completed, terminated or still open; the recovery curve gives
	// the view's median.
	last := func(state string) float64 {
		c := run.States.Counts[slices.Index(run.States.States, state)]
		return c[len(c)-1]
	}
	total := 0.0
	for _, st := range run.States.States {
		total += last(st)
	}
	if total != *views["started"] || last("completed") != *views["completed"] {
		t.Errorf("lifecycle at the end: %v investigations, %v completed; metrics: %v started, %v completed",
			total, last("completed"), *views["started"], *views["completed"])
	}
	if got, want := curveQuantile(run.RecoveryCurve, 0.5), views["median_recovery_time"]; (want == nil) != math.IsNaN(got) || want != nil && got != *want {
		t.Errorf("median of the loaded recovery curve %v, metrics view %v", got, want)
	}

	// Every number of the metrics table is the view's.
	cells := metricCells(page)
	if len(cells) != len(analysis.MetricNames) {
		t.Errorf("metrics table has %d cells, want %d (one per metric)", len(cells), len(analysis.MetricNames))
	}
	seen := map[string]bool{}
	for _, c := range cells {
		seen[c.metric] = true
		want, ok := views[c.metric]
		if !ok {
			t.Errorf("metrics table row %q is not a column of the metrics view", c.metric)
			continue
		}
		if want == nil {
			if c.data != "" || c.text != "n/a" {
				t.Errorf("%s: view NULL, table %q (%q)", c.metric, c.data, c.text)
			}
			continue
		}
		got, err := strconv.ParseFloat(c.data, 64)
		if err != nil || got != *want {
			t.Errorf("%s: table value %q, view %v", c.metric, c.data, *want)
		}
		if c.text != Format(c.metric, *want) {
			t.Errorf("%s: table shows %q, want %q", c.metric, c.text, Format(c.metric, *want))
		}
	}
	for name := range views {
		if !seen[name] {
			t.Errorf("metrics view column %s is missing from the table", name)
		}
	}

	// The Markdown report shows the same numbers and links every PNG beside it.
	md, err := os.ReadFile(files.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if !bytes.Contains(md, []byte("| "+c.metric+" | "+c.text+" |")) {
			t.Errorf("Markdown lacks the row %s = %s", c.metric, c.text)
		}
	}
	for _, img := range files.Images {
		if !bytes.Contains(md, []byte("]("+filepath.Base(img)+")")) {
			t.Errorf("Markdown does not link %s", img)
		}
	}

	// Tables: the incidents view's rows, the slowest recoveries with their investigations.
	if len(run.Incidents) == 0 || !bytes.Contains(page, []byte("<td>backtest</td>")) {
		t.Errorf("no backtest incident in the report")
	}
	if len(run.Slowest) != min(slowest, len(run.Recovery)) || run.Slowest[0].Seconds != run.Recovery[len(run.Recovery)-1] {
		t.Errorf("slowest recoveries: %d rows, first %v s; longest episode %v s", len(run.Slowest), run.Slowest[0].Seconds, run.Recovery[len(run.Recovery)-1])
	}
	if !bytes.Contains(page, []byte(fmt.Sprintf("investigation_id = %d", run.Slowest[0].InvestigationID))) {
		t.Errorf("no span query for the slowest recovery's investigation")
	}
}

// testReportSelfContained checks that the HTML of real runs references nothing outside the
// file: no URL, no src, no stylesheet, font or script to fetch.
func testReportSelfContained(t *testing.T, a, b string) {
	_, _, page := writeReport(t, a, b)
	checkSelfContained(t, page)
	if !bytes.Contains(page, []byte("<style>")) || bytes.Count(page, []byte("<svg")) != len(ChartIDs) {
		t.Errorf("the page does not inline its styles and %d charts", len(ChartIDs))
	}
}

// testReportOverlay renders two runs (with and without the fleet guards) and checks that the
// charts overlay them under their labels and the metrics table has a column per run.
func testReportOverlay(t *testing.T, a, b string) {
	r, _, page := writeReport(t, a, b)
	if len(r.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(r.Runs))
	}
	la, lb := r.Runs[0].Name(), r.Runs[1].Name()
	if la == lb {
		t.Fatalf("both runs are labelled %q", la)
	}
	byID := map[string]*Chart{}
	for _, c := range r.Charts {
		byID[c.ID] = c
	}
	if n := len(byID[ChartStates].Panels); n != 4 {
		t.Errorf("lifecycle chart: %d panels, want 2 per run", n)
	}
	for _, l := range []string{la, lb} {
		expectSeries(t, byID[ChartFailures].Panels[0], l+" · backtest", KindLine)
		expectSeries(t, byID[ChartRecovery].Panels[0], l+" · recovered", KindLine)
		expectSeries(t, byID[ChartTools].Panels[0], l, KindBar)
	}
	// Without the retry budget the second run has no token series.
	if _, ok := byID[ChartGuards].Panels[1].Find(lb + " · backtest"); ok {
		t.Errorf("retry-budget tokens drawn for %s, which runs without a budget", lb)
	}
	views := map[string]map[string]*float64{}
	for _, run := range r.Runs {
		views[run.Name()] = viewMetrics(t, run.Source)[run.Seeds[0].RunID]
	}
	perRun := map[string]int{}
	for _, c := range metricCells(page) {
		perRun[c.run]++
		want := views[c.run][c.metric]
		if want != nil && c.data != strconv.FormatFloat(*want, 'g', -1, 64) {
			t.Errorf("%s %s: table %q, view %v", c.run, c.metric, c.data, *want)
		}
	}
	if perRun[la] != len(analysis.MetricNames) || perRun[lb] != len(analysis.MetricNames) {
		t.Errorf("metric cells per run: %v", perRun)
	}
}

// TestReportSeeds checks the metrics table of a folder with several seeds: each cell is the
// mean of the seeds' metrics view values with the interval run, check and sweep print
// (MetricCI), not a narrower one of its own.
func TestReportSeeds(t *testing.T) {
	dir := runFolder(t, "shared-outage", []string{"workload.investigations=150", "faults[0].at=2m", "faults[0].for=5m"}, 7, 3)
	r, _, page := writeReport(t, dir)
	if len(r.Runs) != 1 || len(r.Runs[0].Seeds) != 3 {
		t.Fatalf("want one run of 3 seeds, got %d runs", len(r.Runs))
	}
	views := viewMetrics(t, dir)
	for _, c := range metricCells(page) {
		var vals []float64
		for _, s := range r.Runs[0].Seeds {
			if v := views[s.RunID][c.metric]; v != nil {
				vals = append(vals, *v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		mean, lo, hi := MetricCI(c.metric, vals, 7)
		if c.data != strconv.FormatFloat(mean, 'g', -1, 64) {
			t.Errorf("%s: table %s, mean of the seeds %v", c.metric, c.data, mean)
		}
		wantRange := "[" + Format(c.metric, lo) + ", " + Format(c.metric, hi) + "]"
		if !bytes.Contains(page, []byte(`data-metric="`+c.metric+`" data-value="`+c.data+`">`+html.EscapeString(Format(c.metric, mean))+` <span class="ci">`+wantRange)) {
			t.Errorf("%s: no interval %s in the table", c.metric, wantRange)
		}
	}
}

// testReportDeterministic: the same run gives the same report, byte for byte.
func testReportDeterministic(t *testing.T, a string) {
	_, f1, p1 := writeReport(t, a)
	_, f2, p2 := writeReport(t, a)
	if !bytes.Equal(p1, p2) {
		t.Errorf("two reports of the same run differ")
	}
	for i := range f1.Images {
		b1, _ := os.ReadFile(f1.Images[i])
		b2, _ := os.ReadFile(f2.Images[i])
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s differs between two reports of the same run", filepath.Base(f1.Images[i]))
		}
	}
}

func TestReportConfidence(t *testing.T) {
	if reportConfidence != int(math.Round(Confidence*100)) {
		t.Errorf("the report prints %d%% intervals, the summaries %v", reportConfidence, Confidence)
	}
}

// BenchmarkReport measures loading and rendering the report of the small run.
func BenchmarkReport(b *testing.B) {
	dir := runFolder(b, "shared-outage", smallOutage, 1, 1)
	out := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(context.Background(), []string{dir}, out, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReportLabels: runs are named by what tells them apart: folders by the shortest path
// suffix that differs, sweep points by the values that differ between points.
func TestReportLabels(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "before", "run"), filepath.Join(root, "after", "run")
	runs := []*Run{{Source: a, Seeds: []SeedInfo{{RunID: "x-s1"}}}, {Source: b, Seeds: []SeedInfo{{RunID: "x-s1"}}}}
	labelRuns(runs, []string{a, b})
	if runs[0].Label != "before/run" || runs[1].Label != "after/run" {
		t.Errorf("labels %q, %q; want before/run, after/run", runs[0].Label, runs[1].Label)
	}

	point := func(p int, params ...string) []storedRun {
		return []storedRun{{point: p, params: params}}
	}
	got := pointLabels([][]storedRun{
		point(0, "recovery.retry.max_attempts=1", "faults[0].at=5m"),
		point(1, "recovery.retry.max_attempts=5", "faults[0].at=5m"),
	})
	if want := []string{"p0 recovery.retry.max_attempts=1", "p1 recovery.retry.max_attempts=5"}; !slices.Equal(got, want) {
		t.Errorf("point labels %q, want %q", got, want)
	}

	long := []*Run{
		{Source: root, Point: "p0", Label: "p0 recovery.retry.max_attempts=1", Seeds: []SeedInfo{{RunID: "a"}}},
		{Source: root, Point: "p1", Label: "p1 recovery.retry.max_attempts=5", Seeds: []SeedInfo{{RunID: "b"}}},
	}
	labelRuns(long, []string{root})
	if long[0].Name() != "p0" || long[1].Name() != "p1" || long[0].Label != "p0 recovery.retry.max_attempts=1" {
		t.Errorf("sweep runs named %q (%q), %q; want p0 and p1 keys for the long labels", long[0].Name(), long[0].Label, long[1].Name())
	}
}
