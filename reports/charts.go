package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Chart IDs, in the order a report shows them.
const (
	ChartStates   = "states"
	ChartFailures = "failures"
	ChartGuards   = "retries"
	ChartRecovery = "recovery"
	ChartTools    = "tools"
	ChartCost     = "cost"
)

// ChartIDs lists every chart of a report, in order.
var ChartIDs = []string{ChartStates, ChartFailures, ChartGuards, ChartRecovery, ChartTools, ChartCost}

// Charts draws every chart of a report from its runs. With several runs, each chart overlays
// them (the lifecycle chart, whose areas are stacked, gets one row of panels per run instead).
func Charts(runs []*Run) []*Chart {
	tu := timeUnitFor(runs)
	tools := toolOrder(runs)
	return []*Chart{
		statesChart(runs, tu),
		failuresChart(runs, tu, tools),
		guardsChart(runs, tu, tools),
		recoveryChart(runs),
		toolsChart(runs, tools),
		costChart(runs),
	}
}

// timeUnit is the unit of a report's time axes, minutes for runs up to three hours, else
// hours; end is where every time axis ends, in that unit: the longest run's end.
type timeUnit struct {
	name    string
	seconds float64
	end     float64
}

func timeUnitFor(runs []*Run) timeUnit {
	longest := 0.0
	for _, r := range runs {
		longest = max(longest, r.Makespan)
		if n := len(r.States.Times); n > 0 {
			longest = max(longest, r.States.Times[n-1])
		}
	}
	u := timeUnit{"h", 3600, 0}
	if longest <= 3*3600 {
		u = timeUnit{"min", 60, 0}
	}
	u.end = longest / u.seconds
	if u.end == 0 {
		u.end = 1
	}
	return u
}

// axis makes p's x axis the report's time axis.
func (u timeUnit) axis(p *Panel) { p.plot.X.Min, p.plot.X.Max = 0, u.end }

func (u timeUnit) label() string { return "simulated time (" + u.name + ")" }

func (u timeUnit) scale(ts []float64) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t / u.seconds
	}
	return out
}

// Colours: a qualitative palette for tools and runs; fixed colours for lifecycle states so that
// "waiting" is the same blue in every report.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
}

func paletteColor(i int) color.RGBA { return palette[i%len(palette)] }

func translucent(c color.RGBA, alpha uint8) color.Color {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: alpha}
}

// Lifecycle states: those in progress, and the final ones (docs/architecture.md).
var (
	activeStates = []string{"pending", "running", "waiting", "recovering", "awaiting_human"}
	finalStates  = []string{"completed", "terminated"}
	stateColors  = map[string]color.RGBA{
		"pending":        {199, 199, 199, 255},
		"running":        {44, 160, 44, 255},
		"waiting":        {31, 119, 180, 255},
		"recovering":     {255, 127, 14, 255},
		"awaiting_human": {148, 103, 189, 255},
		"completed":      {152, 223, 138, 255},
		"terminated":     {214, 39, 40, 255},
	}
)

// runDashes tells overlaid runs apart when colour already encodes the tool.
var runDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

func dashes(run int) []vg.Length { return runDashes[run%len(runDashes)] }

// named prefixes a legend entry with the run's label when a report holds several runs.
func named(runs []*Run, r *Run, name string) string {
	if len(runs) == 1 {
		return name
	}
	if name == "" {
		return r.Name()
	}
	return r.Name() + " · " + name
}

// toolStyle is how a tool's line of run ri looks: with one run, colour tells the tools
// apart; with several, colour tells the runs apart (what a comparison is about) and the
// dash pattern the tools.
func toolStyle(runs []*Run, ri int, tools []string, tool string) (color.RGBA, []vg.Length) {
	if len(runs) == 1 {
		return toolColor(tools, tool), nil
	}
	return paletteColor(ri), dashes(max(0, slices.Index(tools, tool)))
}

// toolOrder lists every tool seen in any run, sorted, so a tool keeps its colour across charts.
func toolOrder(runs []*Run) []string {
	var tools []string
	add := func(t string) {
		if t != "" && !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	for _, r := range runs {
		for _, s := range r.Tools {
			add(s.Tool)
		}
		for _, s := range r.Failures {
			add(s.Tool)
		}
		for _, g := range r.Guards {
			add(g.Tool)
		}
	}
	slices.Sort(tools)
	return tools
}

func toolColor(tools []string, tool string) color.RGBA {
	return paletteColor(max(0, slices.Index(tools, tool)))
}

// statesChart stacks the investigations in each lifecycle state over time: those in progress
// in one panel, the cumulative completed and terminated in another, so the few hundred agents
// piling up in an outage are not flattened by ten thousand finished ones.
func statesChart(runs []*Run, tu timeUnit) *Chart {
	c := &Chart{
		ID:    ChartStates,
		Title: "Investigations by lifecycle state",
		Caption: "Root investigations in each lifecycle state at the end of each simulated minute, stacked. " +
			"Shaded bands are injected fault windows.",
		Cols: 2,
	}
	for _, r := range runs {
		xs := tu.scale(r.States.Times)
		for _, group := range []struct {
			title  string
			states []string
		}{{"in progress", activeStates}, {"ended (cumulative)", finalStates}} {
			title := group.title
			if len(runs) > 1 {
				title = r.Name() + ": " + title
			}
			p := newPanel(title, tu.label(), "investigations")
			lo := make([]float64, len(xs))
			var bands []func()
			for _, st := range statesIn(r.States, group.states, group.states[0] == "pending") {
				counts := r.States.Counts[slices.Index(r.States.States, st)]
				if maxOf(counts) == 0 {
					continue
				}
				hi := make([]float64, len(xs))
				for j := range xs {
					hi[j] = lo[j] + counts[j]
				}
				col, ok := stateColors[st]
				if !ok {
					col = paletteColor(slices.Index(r.States.States, st))
				}
				bandLo := lo
				bands = append(bands, func() { p.band(st, r.Name(), xs, bandLo, hi, col) })
				lo = hi
			}
			// Fault windows go under the areas, so they read as a background.
			top := math.Max(1, maxOf(lo)) * 1.05
			faultWindows(p, r, tu, top)
			for _, b := range bands {
				b()
			}
			p.plot.Y.Min, p.plot.Y.Max = 0, top
			tu.axis(p) // one time axis for every run, so their rows line up
			c.Panels = append(c.Panels, p)
		}
	}
	return c
}

// statesIn lists the states of s that belong to want, in want's order; with others set, states
// the report does not know (a newer simulator's) are appended so they still show.
func statesIn(s StateSeries, want []string, others bool) []string {
	var out []string
	for _, st := range want {
		if slices.Contains(s.States, st) {
			out = append(out, st)
		}
	}
	if others {
		for _, st := range s.States {
			if !slices.Contains(activeStates, st) && !slices.Contains(finalStates, st) {
				out = append(out, st)
			}
		}
	}
	return out
}

// faultWindows shades each injected fault window of r, one legend entry per fault.
// Each run has its own row of panels, so the entries need no run prefix.
func faultWindows(p *Panel, r *Run, tu timeUnit, top float64) {
	for i, f := range r.Faults {
		col := translucent(color.RGBA{214, 39, 40, 255}, 0x22+uint8(i%3)*0x10)
		p.windows("fault "+f.Label, r.Name(), [][2]float64{{f.Start / tu.seconds, f.End / tu.seconds}}, 0, top, col)
	}
}

// maxOverlaid is the most lines a failed-attempts chart overlays in one panel. Past it (a
// sweep of 6 points over 3 tools draws 18) the lines cannot be told apart, and the chart
// becomes small multiples: a panel per run on shared axes.
const maxOverlaid = 8

// failuresChart draws failed attempts per tool per minute, with the detected incidents shaded:
// the runs overlaid in one panel, or, past maxOverlaid lines, one panel per run.
func failuresChart(runs []*Run, tu timeUnit, tools []string) *Chart {
	c := &Chart{
		ID:    ChartFailures,
		Title: "Failed tool attempts per minute",
		Caption: "Failed attempts (errors and timeouts) per tool in each simulated minute. Shaded: incidents, " +
			"minutes whose failures are far above the tool's own baseline, with the breaker-open and throttled time around them.",
	}
	top, lines := 1.0, 0
	for _, r := range runs {
		for _, s := range r.Failures {
			top = max(top, maxOf(s.Values))
		}
		lines += len(r.Failures)
	}
	top *= 1.05
	if len(runs) > 1 && lines > maxOverlaid {
		failuresPanels(c, runs, tu, tools, top)
		c.Caption += fmt.Sprintf(" One panel per run, on the same axes: %d lines overlaid could not be told apart.", lines)
		return c
	}
	p := newPanel("", tu.label(), "failed attempts / min")
	for ri, r := range runs {
		for _, tool := range tools {
			col, _ := toolStyle(runs, ri, tools, tool)
			p.windows(named(runs, r, "incidents: "+tool), r.Name(), incidentWindows(r, tu, tool), 0, top, translucent(col, 0x30))
		}
	}
	for ri, r := range runs {
		for _, s := range r.Failures {
			col, dash := toolStyle(runs, ri, tools, s.Tool)
			p.line(named(runs, r, s.Tool), r.Name(), tu.scale(s.Times), s.Values, col, dash)
		}
	}
	p.plot.Y.Min, p.plot.Y.Max = 0, top
	tu.axis(p)
	c.Panels = []*Panel{p}
	if c.Empty() {
		c.Caption += " No attempt failed."
		p.label(tu.end/2, top/2, "no failed attempt", 0)
	}
	return c
}

// failuresPanels draws the failed attempts as small multiples: a panel per run, titled with
// its name, each tool in its own colour in every panel (so the legend names tools only), on
// one time axis and one y range, so that the panels compare at a glance.
func failuresPanels(c *Chart, runs []*Run, tu timeUnit, tools []string, top float64) {
	c.Cols = 3
	if len(runs) <= 4 {
		c.Cols = 2
	}
	for _, r := range runs {
		p := newPanel(r.Name(), tu.label(), "failed attempts / min")
		for _, tool := range tools {
			p.windows("incidents: "+tool, r.Name(), incidentWindows(r, tu, tool), 0, top, translucent(toolColor(tools, tool), 0x30))
		}
		for _, s := range r.Failures {
			p.line(s.Tool, r.Name(), tu.scale(s.Times), s.Values, toolColor(tools, s.Tool), nil)
		}
		p.plot.Y.Min, p.plot.Y.Max = 0, top
		tu.axis(p)
		c.Panels = append(c.Panels, p)
	}
}

// incidentWindows are the incidents of tool in run r, in the chart's time unit.
func incidentWindows(r *Run, tu timeUnit, tool string) [][2]float64 {
	var ws [][2]float64
	for _, in := range r.Incidents {
		if in.Tool == tool {
			ws = append(ws, [2]float64{in.Start / tu.seconds, in.End / tu.seconds})
		}
	}
	return ws
}

// guardsChart draws, for the tools that failed, the retries sent per minute (with the breaker's
// open intervals shaded) and the retry budget's tokens.
func guardsChart(runs []*Run, tu timeUnit, tools []string) *Chart {
	c := &Chart{
		ID:    ChartGuards,
		Title: "Retries and the retry budget",
		Caption: "For each tool with failed attempts: retries sent per simulated minute (shaded while its circuit " +
			"breaker was open), and the tokens left in its fleet-wide retry budget.",
	}
	retries := newPanel("retries sent", tu.label(), "retries / min")
	tokens := newPanel("retry-budget tokens", tu.label(), "tokens")
	top := 1.0
	budget, guards := false, false
	for _, r := range runs {
		for _, g := range r.Guards {
			top = max(top, maxOf(g.Retries))
			budget = budget || len(g.Tokens) > 0
			guards = true
		}
	}
	top *= 1.05
	for ri, r := range runs {
		for _, g := range r.Guards {
			var ws [][2]float64
			for _, w := range g.Open {
				ws = append(ws, [2]float64{w.Start / tu.seconds, w.End / tu.seconds})
			}
			col, _ := toolStyle(runs, ri, tools, g.Tool)
			retries.windows(named(runs, r, "breaker open: "+g.Tool), r.Name(), ws, 0, top, translucent(col, 0x28))
		}
	}
	for ri, r := range runs {
		for _, g := range r.Guards {
			xs := tu.scale(g.Times)
			col, dash := toolStyle(runs, ri, tools, g.Tool)
			retries.line(named(runs, r, g.Tool), r.Name(), xs, g.Retries, col, dash)
			if len(g.Tokens) > 0 {
				tokens.line(named(runs, r, g.Tool), r.Name(), xs, g.Tokens, col, dash)
			}
		}
	}
	retries.plot.Y.Min, retries.plot.Y.Max = 0, top
	tu.axis(retries)
	tu.axis(tokens)
	tokens.plot.Y.Min = 0
	c.Panels = []*Panel{retries}
	switch {
	case budget:
		c.Panels = append(c.Panels, tokens)
	case guards:
		c.Caption += " The retry budget is off."
	case failedAttempts(runs):
		// Tools failed, but no run has the per-minute tool samples (an imported trace
		// records no breaker or retry budget): there is nothing to draw, not nothing failed.
		c.Caption += " The runs record no per-minute retry samples (a trace carries no breaker or budget state): see the failures chart."
		retries.label(tu.end/2, top/2, "no retry samples", 0)
	default:
		c.Caption += " No tool had a failed attempt."
		retries.label(tu.end/2, top/2, "no failed attempt", 0)
	}
	return c
}

// failedAttempts reports whether a tool of some run had a failed attempt.
func failedAttempts(runs []*Run) bool {
	for _, r := range runs {
		for _, f := range r.Failures {
			if maxOf(f.Values) > 0 {
				return true
			}
		}
	}
	return false
}

// recoveryChart draws each run's recovery curve (the share of all episodes recovered by x
// seconds) with its median and p95, the times the curve reaches 50% and 95%.
func recoveryChart(runs []*Run) *Chart {
	c := &Chart{
		ID:    ChartRecovery,
		Title: "Recovery time",
		Caption: "Share of all recovery episodes (from a step's first sign of trouble) recovered within x " +
			"seconds: an episode whose investigation ended without a valid result never recovers, one " +
			"still open at the horizon is censored. Dashed: median, dotted: p95; a curve that stays " +
			"below a level never reaches it.",
	}
	p := newPanel("", "recovery time (s)", "share of episodes recovered")
	lowest, highest := math.Inf(1), 0.0
	for _, r := range runs {
		for _, d := range r.Recovery {
			if d > 0 {
				lowest = min(lowest, d)
			}
			highest = max(highest, d)
		}
	}
	// A log axis shows seconds-long retries and hour-long outages together; it needs positive
	// values, so durations of zero are drawn at the shortest positive one.
	logx := highest > 0 && !math.IsInf(lowest, 1) && highest/lowest >= 50
	floor := lowest
	for ri, r := range runs {
		if len(r.RecoveryCurve) == 0 {
			continue
		}
		xs, ys := curvePoints(r.RecoveryCurve, highest, 400)
		if logx {
			for i := range xs {
				xs[i] = max(xs[i], floor)
			}
		}
		col := paletteColor(ri)
		p.line(named(runs, r, "recovered"), r.Name(), xs, ys, col, nil)
		p.lastLine().StepStyle = plotter.PostStep
		for _, m := range []struct {
			name string
			q    float64
			dash []vg.Length
		}{{"median", 0.5, []vg.Length{vg.Points(5), vg.Points(3)}}, {"p95", 0.95, []vg.Length{vg.Points(1.5), vg.Points(2)}}} {
			v := curveQuantile(r.RecoveryCurve, m.q)
			if math.IsNaN(v) {
				p.marker(named(runs, r, m.name+" never"), r.Name(), highest, m.q, m.q, col, m.dash)
				continue
			}
			x := v
			if logx {
				x = max(x, floor)
			}
			p.marker(named(runs, r, fmt.Sprintf("%s %s s", m.name, seconds(v))), r.Name(), x, 0, 1, col, m.dash)
		}
	}
	if logx {
		p.plot.X.Scale = plot.LogScale{}
		p.plot.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.plot.X.Min, p.plot.X.Max = floor, highest
	} else {
		p.plot.X.Min = 0
	}
	p.plot.Y.Min, p.plot.Y.Max = 0, 1
	c.Panels = []*Panel{p}
	if c.Empty() {
		c.Caption += " No operation failed, so there was nothing to recover."
		p.plot.X.Max = 1
		p.label(0.5, 0.5, "no recovery episode", 0)
	}
	return c
}

// curvePoints returns at most about n steps of a recovery curve, starting at 0 at its
// first length and carried flat to end, always keeping its last step.
func curvePoints(curve []CurvePoint, end float64, n int) (xs, ys []float64) {
	xs, ys = []float64{curve[0].Seconds}, []float64{0}
	step := max(1, len(curve)/n)
	for i := 0; i < len(curve); i += step {
		xs = append(xs, curve[i].Seconds)
		ys = append(ys, curve[i].Share)
	}
	last := curve[len(curve)-1]
	if xs[len(xs)-1] != last.Seconds {
		xs, ys = append(xs, last.Seconds), append(ys, last.Share)
	}
	if end > last.Seconds {
		xs, ys = append(xs, end), append(ys, last.Share)
	}
	return xs, ys
}

// curveQuantile is the first length at which the curve reaches q (to within 1e-9), the
// definition of the metrics view's median and p95_recovery_time; NaN when it never does.
func curveQuantile(curve []CurvePoint, q float64) float64 {
	for _, p := range curve {
		if p.Share >= q-1e-9 {
			return p.Seconds
		}
	}
	return math.NaN()
}

// cdf returns at most about n points of the empirical CDF of sorted: its first value at 0,
// then every step-th order statistic at its share, always keeping the last.
func cdf(sorted []float64, n int) (xs, ys []float64) {
	xs, ys = []float64{sorted[0]}, []float64{0}
	step := max(1, len(sorted)/n)
	for i := 0; i < len(sorted); i += step {
		xs = append(xs, sorted[i])
		ys = append(ys, float64(i+1)/float64(len(sorted)))
	}
	if last := len(sorted) - 1; len(xs) == 0 || xs[len(xs)-1] != sorted[last] || ys[len(ys)-1] != 1 {
		xs = append(xs, sorted[last])
		ys = append(ys, 1)
	}
	return xs, ys
}

// quantile is the q-quantile of sorted with linear interpolation between order statistics,
// the definition of DuckDB's quantile_cont.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

func seconds(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// toolsChart draws retry amplification and duplicate side effects per tool, one bar per run.
func toolsChart(runs []*Run, tools []string) *Chart {
	c := &Chart{
		ID:    ChartTools,
		Title: "Retry amplification and duplicate side effects per tool",
		Caption: "Left: attempts sent per logical operation (1 = no retries). Right: executions beyond the " +
			"first of one operation at tools with side effects.",
		Cols: 2,
	}
	amp := newPanel("retry amplification", "tool", "attempts / logical operation")
	dup := newPanel("duplicate side effects", "tool", "duplicate executions")
	// A panel's axes are about 300 points wide: each tool gets a slot, which its runs'
	// bars share, with a gap between tools.
	width := vg.Points(min(40, 0.8*300/float64(max(1, len(tools)))/float64(max(1, len(runs)))))
	for ri, r := range runs {
		a := make(plotter.Values, len(tools))
		d := make(plotter.Values, len(tools))
		for i, t := range tools {
			for _, s := range r.Tools {
				if s.Tool == t {
					a[i], d[i] = finite(s.Amplification), float64(s.Duplicates)
				}
			}
		}
		off := width * (vg.Length(ri) - vg.Length(len(runs)-1)/2)
		for _, panel := range []struct {
			p  *Panel
			vs plotter.Values
		}{{amp, a}, {dup, d}} {
			b, err := plotter.NewBarChart(panel.vs, width)
			if err != nil {
				continue
			}
			b.Color = paletteColor(ri)
			b.LineStyle.Width = 0
			b.Offset = off
			panel.p.add(Series{Name: r.Name(), Kind: KindBar, Run: r.Name(), Len: len(panel.vs), Max: maxOf(panel.vs)}, b, b)
			for i, v := range panel.vs {
				if len(runs) > 3 {
					break // values of many bars would overlap; the tables list them
				}
				text := strconv.FormatFloat(v, 'f', 0, 64)
				if panel.p == amp {
					text = strconv.FormatFloat(v, 'f', 3, 64)
				}
				panel.p.label(float64(i), v, text, off)
			}
		}
	}
	for _, p := range []*Panel{amp, dup} {
		p.plot.X.Min, p.plot.X.Max = -0.5, float64(len(tools))-0.5
		if len(tools) == 0 {
			p.plot.X.Max = 0.5
			p.label(0, 0.5, "no tool was called", 0)
		} else {
			p.plot.NominalX(tools...)
		}
		p.plot.Y.Min = 0
		p.plot.Y.Max = headroom(maxSeries(p))
		p.plot.X.Label.Text = ""
	}
	if len(runs) == 1 {
		// One run: the bars need no legend; name the run in the caption instead.
		amp.legend, dup.legend = nil, nil
	}
	c.Panels = []*Panel{amp, dup}
	return c
}

// costChart draws tokens and compute per completed investigation, the compute split into
// the useful part and the wasted parts by why they were wasted.
func costChart(runs []*Run) *Chart {
	c := &Chart{
		ID:    ChartCost,
		Title: "Cost per completed investigation",
		Caption: "Tokens of every investigation and compute of every tool execution, per completed root " +
			"investigation. Wasted compute, by the first reason that applies: duplicate executions, " +
			"discarded results, work for investigations that did not complete.",
		Cols: 2,
	}
	tok := newPanel("tokens", "", "tokens / completed investigation")
	cmp := newPanel("compute", "", "compute-unit s / completed investigation")
	labels := make([]string, len(runs))
	tokens := make(plotter.Values, len(runs))
	parts := []struct {
		name string
		col  color.RGBA
		vs   plotter.Values
	}{
		{"useful", color.RGBA{44, 160, 44, 255}, make(plotter.Values, len(runs))},
		{"wasted: duplicate executions", color.RGBA{214, 39, 40, 255}, make(plotter.Values, len(runs))},
		{"wasted: discarded results", color.RGBA{255, 127, 14, 255}, make(plotter.Values, len(runs))},
		{"wasted: did not complete", color.RGBA{148, 103, 189, 255}, make(plotter.Values, len(runs))},
	}
	totals := make([]float64, len(runs))
	for i, r := range runs {
		labels[i] = r.Name()
		tokens[i] = finite(r.Cost.Tokens)
		k := r.Cost
		parts[1].vs[i], parts[2].vs[i], parts[3].vs[i] = finite(k.Duplicate), finite(k.Discarded), finite(k.Incomplete)
		parts[0].vs[i] = max(0, finite(k.Compute)-parts[1].vs[i]-parts[2].vs[i]-parts[3].vs[i])
		totals[i] = finite(k.Compute)
	}
	width := vg.Points(min(60, 0.7*300/float64(max(1, len(runs)))))
	if b, err := plotter.NewBarChart(tokens, width); err == nil {
		b.Color = paletteColor(0)
		b.LineStyle.Width = 0
		tok.add(Series{Name: "tokens", Kind: KindBar, Len: len(tokens), Max: maxOf(tokens)}, b, nil)
	}
	var below *plotter.BarChart
	for _, part := range parts {
		b, err := plotter.NewBarChart(part.vs, width)
		if err != nil {
			continue
		}
		b.Color = part.col
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		cmp.add(Series{Name: part.name, Kind: KindBar, Len: len(part.vs), Max: maxOf(part.vs)}, b, b)
	}
	for i, r := range runs {
		if len(runs) > 4 {
			break // labels of many bars would overlap; the metrics table lists the values
		}
		tok.label(float64(i), tokens[i], fmt.Sprintf("%.0f", tokens[i]), 0)
		cmp.label(float64(i), totals[i], wastedText(r.Cost.Wasted), 0)
	}
	// Head room above the bars for their value labels.
	tok.plot.Y.Max = headroom(maxOf(tokens))
	cmp.plot.Y.Max = headroom(maxOf(totals))
	for _, p := range []*Panel{tok, cmp} {
		p.plot.NominalX(labels...)
		p.plot.X.Min, p.plot.X.Max = -0.5, float64(len(runs))-0.5
		p.plot.Y.Min = 0
	}
	c.Panels = []*Panel{tok, cmp}
	return c
}

func wastedText(share float64) string {
	if math.IsNaN(share) {
		return "wasted: n/a"
	}
	return fmt.Sprintf("%.1f%% wasted", 100*share)
}

func maxSeries(p *Panel) float64 {
	m := 0.0
	for _, s := range p.Series {
		m = max(m, s.Max)
	}
	return m
}

func headroom(top float64) float64 {
	if top <= 0 {
		return 1
	}
	return 1.15 * top
}

func sum(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

func multiSeed(runs []*Run) bool {
	for _, r := range runs {
		if len(r.Seeds) > 1 {
			return true
		}
	}
	return false
}

// value is a metric of the run's table (the mean over seeds when there are several), NaN when
// absent or undefined.
func (r *Run) value(name string) float64 {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return math.NaN()
}
