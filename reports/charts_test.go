package reports

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var keepCharts = flag.String("charts", "", "write the synthetic test charts into this folder, to look at them")

// syntheticRun builds a run whose shape is known: a fault window from 2h to 2h30m on tool
// "backtest", failures concentrated there, recovery durations 1..n seconds.
func syntheticRun(label string, seed uint64) *Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	const step = 60.0
	const n = 6 * 60 // six hours of minutes
	r := &Run{Label: label, Source: "/runs/" + label, Scenario: "synthetic", Makespan: n * step,
		Seeds: []SeedInfo{{RunID: label + "-s" + "1", Seed: seed, Status: "complete", Digest: "abc"}}}
	states := []string{"pending", "running", "waiting", "recovering", "completed", "terminated"}
	r.States = StateSeries{Step: step, States: states, Counts: make([][]float64, len(states))}
	for j := 0; j < n; j++ {
		t := float64(j+1) * step
		r.States.Times = append(r.States.Times, t)
		outage := t >= 7200 && t < 9000
		vals := []float64{5, 40, 20, 3, float64(j) * 10, float64(j) / 10}
		if outage {
			vals[2], vals[3] = 200, 30
		}
		for i := range states {
			r.States.Counts[i] = append(r.States.Counts[i], vals[i]+float64(rng.IntN(3)))
		}
	}
	r.Faults = []Window{{Label: "2: outage backtest", Tool: "backtest", Start: 7200, End: 9000}}
	for _, tool := range []string{"backtest", "fetch_data"} {
		s := ToolSeries{Tool: tool}
		g := GuardSeries{Tool: tool}
		for j := 0; j < n; j++ {
			t := float64(j) * step
			v := float64(rng.IntN(3))
			if tool == "backtest" && t >= 7200 && t < 9000 {
				v = 150 + float64(rng.IntN(20))
				g.Open = append(g.Open, Window{Start: t, End: t + step})
			}
			s.Times, s.Values = append(s.Times, t), append(s.Values, v)
			g.Times = append(g.Times, t)
			g.Retries = append(g.Retries, v*0.6)
			g.Tokens = append(g.Tokens, 100-v/2)
			g.Failures += int64(v)
		}
		r.Failures = append(r.Failures, s)
		r.Guards = append(r.Guards, g)
	}
	r.Incidents = []Incident{{Tool: "backtest", Start: 7200, End: 9000, FailedAttempts: 4800, Affected: 900, Retries: 2000}}
	// 1000 episodes of i²/100 s; the first 900 recover, the last 100 never do.
	for i := 1; i <= 1000; i++ {
		r.Recovery = append(r.Recovery, float64(i)*float64(i)/100)
		if i <= 900 {
			r.RecoveryCurve = append(r.RecoveryCurve, CurvePoint{Seconds: float64(i) * float64(i) / 100, Share: float64(i) / 1000})
		}
	}
	r.Tools = []ToolStat{
		{Tool: "backtest", Operations: 1000, Attempts: 1400, Amplification: 1.4, Duplicates: 3},
		{Tool: "fetch_data", Operations: 800, Attempts: 820, Amplification: 1.025},
	}
	r.Cost = Cost{Tokens: 42000, Compute: 3600, Wasted: 0.12, Duplicate: 200, Discarded: 100, Incomplete: 132}
	r.Metrics = []Metric{
		{Name: "completion_rate", Value: 0.95, N: 1},
		{Name: "tokens_per_completion", Value: 42000, N: 1},
		{Name: "compute_per_completion", Value: 3600, N: 1},
		{Name: "wasted_compute_ratio", Value: 0.12, N: 1},
	}
	return r
}

// TestChartsSeries checks that every chart is built, in order, with the series its data
// implies, for one run and for an overlay of two.
func TestChartsSeries(t *testing.T) {
	a, b := syntheticRun("a", 1), syntheticRun("b", 2)
	for _, runs := range [][]*Run{{a}, {a, b}} {
		charts := Charts(runs)
		var ids []string
		for _, c := range charts {
			ids = append(ids, c.ID)
			if c.Title == "" || c.Empty() {
				t.Errorf("%d runs: chart %s: title %q, empty %v", len(runs), c.ID, c.Title, c.Empty())
			}
			for _, p := range c.Panels {
				if p.YLabel == "" {
					t.Errorf("chart %s panel %q: no y label", c.ID, p.Title)
				}
			}
		}
		if !slices.Equal(ids, ChartIDs) {
			t.Fatalf("chart ids %v, want %v", ids, ChartIDs)
		}
		byID := map[string]*Chart{}
		for _, c := range charts {
			byID[c.ID] = c
		}
		multi := len(runs) > 1
		name := func(r *Run, s string) string {
			if multi {
				return r.Label + " · " + s
			}
			return s
		}
		// The lifecycle chart: two panels per run, the states with data as areas.
		st := byID[ChartStates]
		if len(st.Panels) != 2*len(runs) {
			t.Fatalf("states: %d panels, want %d", len(st.Panels), 2*len(runs))
		}
		for ri, r := range runs {
			active, ended := st.Panels[2*ri], st.Panels[2*ri+1]
			if multi && active.Title != r.Name()+": in progress" {
				t.Errorf("states panel %d: title %q, want the run's name", 2*ri, active.Title)
			}
			for _, s := range []string{"pending", "running", "waiting", "recovering"} {
				expectSeries(t, active, s, KindArea)
			}
			for _, s := range []string{"completed", "terminated"} {
				expectSeries(t, ended, s, KindArea)
			}
			expectSeries(t, active, "fault 2: outage backtest", KindWindow) // a row per run: no prefix
		}
		for _, r := range runs {
			fp := byID[ChartFailures].Panels[0]
			expectSeries(t, fp, name(r, "backtest"), KindLine)
			expectSeries(t, fp, name(r, "fetch_data"), KindLine)
			expectSeries(t, fp, name(r, "incidents: backtest"), KindWindow)
			gp := byID[ChartGuards].Panels
			expectSeries(t, gp[0], name(r, "backtest"), KindLine)
			expectSeries(t, gp[0], name(r, "breaker open: backtest"), KindWindow)
			expectSeries(t, gp[1], name(r, "fetch_data"), KindLine)
			rp := byID[ChartRecovery].Panels[0]
			expectSeries(t, rp, name(r, "recovered"), KindLine)
			// Half of the episodes had recovered at the 500th, 500²/100 s; the curve stops at
			// 90%, so the p95 is never reached.
			expectSeries(t, rp, name(r, "median "+seconds(2500)+" s"), KindMarker)
			expectSeries(t, rp, name(r, "p95 never"), KindMarker)
		}
		if got := len(byID[ChartTools].Panels[0].Series); got != len(runs)+1 { // + the grid's absence: bars only
			// one bar series per run; the grid is not a series
			if got != len(runs) {
				t.Errorf("tools: %d bar series, want %d", got, len(runs))
			}
		}
		expectSeries(t, byID[ChartCost].Panels[0], "tokens", KindBar)
		expectSeries(t, byID[ChartCost].Panels[1], "useful", KindBar)
		expectSeries(t, byID[ChartCost].Panels[1], "wasted: duplicate executions", KindBar)
	}
}

func expectSeries(t *testing.T, p *Panel, name, kind string) {
	t.Helper()
	s, ok := p.Find(name)
	if !ok {
		var have []string
		for _, s := range p.Series {
			have = append(have, s.Name)
		}
		t.Errorf("panel %q: no series %q; have %q", p.Title, name, have)
		return
	}
	if s.Kind != kind || s.Len == 0 {
		t.Errorf("panel %q series %q: kind %s with %d points, want kind %s with data", p.Title, name, s.Kind, s.Len, kind)
	}
	if s.Kind != KindMarker && s.Max <= 0 {
		t.Errorf("panel %q series %q: all values zero", p.Title, name)
	}
}

// TestChartRender renders every chart to SVG and PNG and checks the legend text reaches the
// SVG and the PNG decodes at the expected size.
func TestChartRender(t *testing.T) {
	runs := []*Run{syntheticRun("a", 1), syntheticRun("b", 2)}
	for _, c := range Charts(runs) {
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || !bytes.Contains(svg, []byte("</svg>")) {
			t.Errorf("chart %s: not an SVG document", c.ID)
		}
		for _, text := range []string{c.Title} {
			if !bytes.Contains(svg, []byte(escapeXML(text))) {
				t.Errorf("chart %s: SVG lacks %q", c.ID, text)
			}
		}
		for _, p := range c.Panels {
			for _, e := range p.legend {
				if !bytes.Contains(svg, []byte(escapeXML(e.name))) {
					t.Errorf("chart %s: SVG lacks the legend entry %q", c.ID, e.name)
				}
			}
		}
		const dpi = 60
		b, err := c.PNG(dpi)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("chart %s: %v", c.ID, err)
		}
		w, h := c.size()
		if got, want := img.Bounds().Dx(), int(math.Ceil(w.Points()/72*dpi)); got != want {
			t.Errorf("chart %s: PNG %d px wide, want %d", c.ID, got, want)
		}
		_ = h
		if *keepCharts != "" {
			if err := os.WriteFile(filepath.Join(*keepCharts, c.ID+".svg"), svg, 0o644); err != nil {
				t.Fatal(err)
			}
			b, _ := c.PNG(96)
			if err := os.WriteFile(filepath.Join(*keepCharts, c.ID+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// A sweep's failed attempts overlay at most maxOverlaid lines; past that, each run gets a
// panel of its own on shared axes, tools in the same colours in every panel, and the legend
// names the tools once instead of every run's tools.
func TestFailuresSmallMultiples(t *testing.T) {
	var runs []*Run
	for i := range 6 {
		runs = append(runs, syntheticRun(fmt.Sprintf("p%d", i), uint64(i+1)))
	}
	tu, tools := timeUnitFor(runs), toolOrder(runs)
	// 4 runs of 2 tools: 8 lines, overlaid.
	if c := failuresChart(runs[:4], tu, tools); len(c.Panels) != 1 {
		t.Errorf("4 runs: %d panels, want one overlay", len(c.Panels))
	}
	c := failuresChart(runs, tu, tools)
	if len(c.Panels) != len(runs) || c.Cols != 3 {
		t.Fatalf("6 runs: %d panels in %d columns, want 6 in 3", len(c.Panels), c.Cols)
	}
	if !strings.Contains(c.Caption, "One panel per run") {
		t.Errorf("caption %q does not say how to read the panels", c.Caption)
	}
	for i, p := range c.Panels {
		if p.Title != runs[i].Name() {
			t.Errorf("panel %d: title %q, want %q", i, p.Title, runs[i].Name())
		}
		if p.plot.Y.Max != c.Panels[0].plot.Y.Max || p.plot.X.Max != c.Panels[0].plot.X.Max || p.plot.Y.Min != 0 {
			t.Errorf("panel %d: axes [0, %v] x [%v, %v], not the first panel's", i, p.plot.X.Max, p.plot.Y.Min, p.plot.Y.Max)
		}
		expectSeries(t, p, "backtest", KindLine)
		expectSeries(t, p, "fetch_data", KindLine)
		expectSeries(t, p, "incidents: backtest", KindWindow)
		if got, want := legendColor(p, "backtest"), legendColor(c.Panels[0], "backtest"); got != want || got == "" {
			t.Errorf("panel %d: backtest drawn in %q, in %q in the first panel", i, got, want)
		}
	}
	for _, row := range c.rows() {
		if n := legendEntries(row); n > 2*len(tools) {
			t.Errorf("a row's legend has %d entries, want the tools' lines and incidents only", n)
		}
	}
	if c.LegendRest() != nil {
		t.Error("small multiples need no table of the legend's rest")
	}
	if _, err := c.SVG(); err != nil {
		t.Fatal(err)
	}
}

// legendColor is the colour of the legend entry name of p, "" when there is none.
func legendColor(p *Panel, name string) string {
	for _, e := range p.legend {
		if e.name == name {
			return thumbColor(e.thumb)
		}
	}
	return ""
}

// The retries chart says why it is empty: a run whose tools never failed, against a run
// whose tools failed but which has no per-minute tool samples (an imported trace), whose
// caption must not claim that nothing failed.
func TestGuardsChartWithoutSamples(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(r *Run)
		want, not string
	}{
		{"samples", func(r *Run) {}, "retries sent per simulated minute", "no per-minute"},
		{"failures without samples", func(r *Run) { r.Guards = nil }, "no per-minute retry samples", "No tool had a failed attempt"},
		{"nothing failed", func(r *Run) {
			r.Guards = nil
			for i := range r.Failures {
				clear(r.Failures[i].Values)
			}
		}, "No tool had a failed attempt", "no per-minute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := syntheticRun("a", 1)
			tc.edit(r)
			runs := []*Run{r}
			c := guardsChart(runs, timeUnitFor(runs), toolOrder(runs))
			if !strings.Contains(c.Caption, tc.want) || strings.Contains(c.Caption, tc.not) {
				t.Errorf("caption %q: want %q in it and not %q", c.Caption, tc.want, tc.not)
			}
			if tc.name == "samples" && (len(c.Panels) != 2 || strings.Contains(c.Caption, "No tool had")) {
				t.Errorf("with samples and a budget: %d panels, caption %q", len(c.Panels), c.Caption)
			}
		})
	}
}
