package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is one figure of a report: a title, one or more panels laid out in a grid, and a
// legend beside each row. Its panels also describe what they draw (Series), so a test, or a
// JSON consumer, can see what the picture holds without parsing it.
type Chart struct {
	ID      string // stable: the HTML anchor and the PNG file name
	Title   string
	Caption string // one or two sentences under the figure: how to read it
	Cols    int    // panels per row
	Panels  []*Panel
	Width   vg.Length
	Height  vg.Length
}

// Panel is one set of axes inside a chart.
type Panel struct {
	Title  string
	XLabel string // with its unit
	YLabel string // with its unit
	Series []Series

	plot   *plot.Plot
	legend []legendEntry
	lines  []*plotter.Line
}

// Series is one drawn data set of a panel and its legend entry.
type Series struct {
	Name string  // legend text
	Kind string  // area, line, window, marker, bar
	Run  string  // the run's name (Run.Name); "" for a series of every run
	Len  int     // data points (samples, windows, bars)
	Max  float64 // the largest value; a window's top, a marker's position
}

type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// Series kinds.
const (
	KindArea   = "area"
	KindLine   = "line"
	KindWindow = "window" // a shaded interval of time
	KindMarker = "marker" // a vertical line at a value
	KindBar    = "bar"
)

// Find returns the panel's series called name, or false.
func (p *Panel) Find(name string) (Series, bool) {
	for _, s := range p.Series {
		if s.Name == name {
			return s, true
		}
	}
	return Series{}, false
}

// Fonts: Liberation Sans ships with gonum plot, so PNGs look the same everywhere; SVGs name
// it first and fall back to the browser's sans-serif.
var (
	sans      = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold  = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
	textColor = color.Gray{Y: 0x20}
)

func textStyle(f font.Font, size vg.Length) text.Style {
	return text.Style{Color: textColor, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// newPanel makes a panel with mayday's plot style: sans-serif text, a light grid.
func newPanel(title, xlabel, ylabel string) *Panel {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle = textStyle(sansBold, 10)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	p.Title.Padding = vg.Points(4)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 9)
		ax.Label.TextStyle.Color = textColor
		ax.Tick.Label.Font = font.From(sans, 8)
		ax.Tick.Label.Color = textColor
		ax.Tick.Marker = niceTicks{}
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe4}
	grid.Horizontal.Color = color.Gray{Y: 0xe4}
	p.Add(grid)
	return &Panel{Title: title, XLabel: xlabel, YLabel: ylabel, plot: p}
}

// add draws a plotter on the panel, records its series and gives it a legend entry.
func (p *Panel) add(s Series, pl plot.Plotter, thumb plot.Thumbnailer) {
	p.plot.Add(pl)
	p.Series = append(p.Series, s)
	if thumb != nil && s.Name != "" {
		p.legend = append(p.legend, legendEntry{s.Name, thumb})
	}
}

// line adds a polyline.
func (p *Panel) line(name, run string, xs, ys []float64, c color.Color, dashes []vg.Length) {
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i] = plotter.XY{X: xs[i], Y: finite(ys[i])}
	}
	l := &plotter.Line{XYs: xy}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.2), Dashes: dashes}
	p.lines = append(p.lines, l)
	p.add(Series{Name: name, Kind: KindLine, Run: run, Len: len(xy), Max: maxOf(ys)}, l, l)
}

// band adds the filled area between two curves sampled at the same xs.
func (p *Panel) band(name, run string, xs, lo, hi []float64, c color.Color) {
	ring := make(plotter.XYs, 0, 2*len(xs))
	for i := range xs {
		ring = append(ring, plotter.XY{X: xs[i], Y: hi[i]})
	}
	for i := len(xs) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: xs[i], Y: lo[i]})
	}
	poly := &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: c}
	height := make([]float64, len(xs))
	for i := range xs {
		height[i] = hi[i] - lo[i]
	}
	p.add(Series{Name: name, Kind: KindArea, Run: run, Len: len(xs), Max: maxOf(height)}, poly, poly)
}

// lastLine is the most recent line added, to adjust its style.
func (p *Panel) lastLine() *plotter.Line { return p.lines[len(p.lines)-1] }

// windows shades intervals [start, end] of x across the y range [ylo, yhi], under one legend
// entry.
func (p *Panel) windows(name, run string, ws [][2]float64, ylo, yhi float64, c color.Color) {
	if len(ws) == 0 {
		return
	}
	ws = mergeWindows(ws)
	rings := make([]plotter.XYs, 0, len(ws))
	for _, w := range ws {
		rings = append(rings, plotter.XYs{{X: w[0], Y: ylo}, {X: w[1], Y: ylo}, {X: w[1], Y: yhi}, {X: w[0], Y: yhi}})
	}
	poly := &plotter.Polygon{XYs: rings, Color: c}
	poly.LineStyle.Width = 0
	p.add(Series{Name: name, Kind: KindWindow, Run: run, Len: len(ws), Max: yhi}, poly, poly)
}

// mergeWindows sorts intervals and joins those that touch or overlap, so that minute-long
// samples of one outage shade as one band.
func mergeWindows(ws [][2]float64) [][2]float64 {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]float64
	for _, w := range ws {
		w[1] = max(w[1], w[0])
		if n := len(out); n > 0 && w[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// marker draws a vertical line at x over [ylo, yhi].
func (p *Panel) marker(name, run string, x, ylo, yhi float64, c color.Color, dashes []vg.Length) {
	l := &plotter.Line{XYs: plotter.XYs{{X: x, Y: ylo}, {X: x, Y: yhi}}}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: dashes}
	p.add(Series{Name: name, Kind: KindMarker, Run: run, Len: 1, Max: x}, l, l)
}

// label writes text centred above data coordinates (x, y), shifted right by dx.
func (p *Panel) label(x, y float64, s string, dx vg.Length) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{s}})
	if err != nil {
		return
	}
	l.TextStyle[0] = textStyle(sans, 8)
	l.TextStyle[0].XAlign = draw.XCenter
	l.TextStyle[0].YAlign = draw.YBottom
	l.Offset = vg.Point{X: dx, Y: vg.Points(1)}
	p.plot.Add(l)
}

// Layout sizes, in points.
const (
	chartWidth = 10 * vg.Inch
	rowHeight  = 2.8 * vg.Inch
	titleSize  = 12
	legendSize = 8.5
	legendPad  = 2.5 // between legend entries
	chartPad   = 8
)

// draw renders the chart on dc: a title on top, the panels aligned in a grid, and each row's
// legend to the right of it (outside the axes, so it never hides data).
func (c *Chart) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	ts := textStyle(sansBold, titleSize)
	ts.XAlign = draw.XLeft
	ts.YAlign = draw.YTop
	dc.FillText(ts, vg.Point{X: dc.Min.X + chartPad, Y: dc.Max.Y - chartPad}, c.Title)
	body := dc
	body.Max.Y -= ts.Height(c.Title) + 2*chartPad
	body.Min.Y += chartPad
	body.Min.X += chartPad

	ls := textStyle(sans, legendSize)
	rows := c.rows()
	legends := make([]plot.Legend, len(rows))
	var legendW vg.Length
	for r, row := range rows {
		leg := plot.NewLegend()
		leg.TextStyle = ls
		leg.Top, leg.Left = true, true
		leg.ThumbnailWidth = vg.Points(18)
		leg.Padding = legendPad
		entries := rowLegend(row)
		if len(entries) > MaxLegend {
			rest := len(entries) - (MaxLegend - 1)
			entries = append(entries[:MaxLegend-1:MaxLegend-1], legendEntry{fmt.Sprintf("%d more: see the table below", rest), blankThumb{}})
		}
		for _, e := range entries {
			leg.Add(e.name, e.thumb)
			legendW = max(legendW, ls.Width(e.name)+leg.ThumbnailWidth+2*chartPad)
		}
		legends[r] = leg
	}
	legendW = min(legendW, (body.Max.X-body.Min.X)*0.4)

	area := body
	area.Max.X -= legendW
	grid := make([][]*plot.Plot, len(rows))
	for r, row := range rows {
		grid[r] = make([]*plot.Plot, len(row))
		for i, p := range row {
			grid[r][i] = p.plot
		}
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: c.cols(), PadX: vg.Points(18), PadY: vg.Points(14)}
	canvases := plot.Align(grid, tiles, area)
	for r, row := range rows {
		for i, p := range row {
			p.plot.Draw(canvases[r][i])
		}
		lc := canvases[r][0]
		lc.Min.X = area.Max.X + chartPad/2
		lc.Max.X = body.Max.X
		lc.Max.Y -= vg.Points(16) // level with the top of the axes, below the panel title
		legends[r].Draw(lc)
	}
}

// MaxLegend is the most entries a row's legend shows; past it, the legend shows the first
// MaxLegend−1 and a pointer to the table under the figure (LegendRest), which lists the rest:
// a sweep of 27 points would otherwise draw a legend taller than the chart.
const MaxLegend = 10

// rowLegend is the legend entries of a row of panels, each name once, in order.
func rowLegend(row []*Panel) []legendEntry {
	var out []legendEntry
	seen := map[string]bool{}
	for _, p := range row {
		for _, e := range p.legend {
			if !seen[e.name] {
				seen[e.name] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// LegendItem is a series left out of a chart's legend, with the color it is drawn in.
type LegendItem struct {
	Name  string
	Color string // #rrggbb, "" when the series has no single color
}

// LegendRest lists the series the legend leaves out (see MaxLegend), for a table under
// the figure; nil when every series is in the legend.
func (c *Chart) LegendRest() []LegendItem {
	var out []LegendItem
	for _, row := range c.rows() {
		entries := rowLegend(row)
		if len(entries) <= MaxLegend {
			continue
		}
		for _, e := range entries[MaxLegend-1:] {
			out = append(out, LegendItem{Name: e.name, Color: thumbColor(e.thumb)})
		}
	}
	return out
}

func thumbColor(t plot.Thumbnailer) string {
	var c color.Color
	switch x := t.(type) {
	case *plotter.Line:
		c = x.LineStyle.Color
		if c == nil {
			c = x.FillColor
		}
	case *plotter.Polygon:
		c = x.Color
	}
	if c == nil {
		return ""
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// blankThumb draws nothing: the legend's pointer to the table has no swatch.
type blankThumb struct{}

func (blankThumb) Thumbnail(*draw.Canvas) {}

func (c *Chart) cols() int { return max(1, c.Cols) }

// rows groups the panels into rows of Cols; a short last row is padded with empty plots,
// which Align requires.
func (c *Chart) rows() [][]*Panel {
	n := c.cols()
	var rows [][]*Panel
	for i := 0; i < len(c.Panels); i += n {
		row := c.Panels[i:min(i+n, len(c.Panels))]
		for len(row) < n {
			row = append(row[:len(row):len(row)], blankPanel())
		}
		rows = append(rows, row)
	}
	return rows
}

func blankPanel() *Panel {
	p := plot.New()
	p.HideAxes()
	return &Panel{plot: p}
}

func (c *Chart) size() (w, h vg.Length) {
	w, h = c.Width, c.Height
	if w == 0 {
		w = chartWidth
	}
	if h == 0 {
		// Rows grow to fit their legend: an overlay of many runs lists many entries.
		row := rowHeight
		for _, r := range c.rows() {
			row = max(row, vg.Length(legendEntries(r))*(legendSize+legendPad+0.5)+40)
		}
		h = row*vg.Length(len(c.rows())) + 30
	}
	return w, h
}

// legendEntries counts the distinct legend entries of a row of panels.
func legendEntries(row []*Panel) int {
	seen := map[string]bool{}
	for _, p := range row {
		for _, e := range p.legend {
			seen[e.name] = true
		}
	}
	return len(seen)
}

// SVG renders the chart as a standalone SVG document. Fonts are named, not embedded: every
// browser substitutes a sans-serif face.
func (c *Chart) SVG() ([]byte, error) {
	w, h := c.size()
	cv := vgsvg.New(w, h)
	if err := c.render(draw.New(cv)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.ID, err)
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")), nil
}

// PNG renders the chart as a PNG image at dpi dots per inch.
func (c *Chart) PNG(dpi int) ([]byte, error) {
	w, h := c.size()
	cv := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	if err := c.render(draw.New(cv)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.ID, err)
	}
	return buf.Bytes(), nil
}

// render draws the chart, turning a panic of the plotting library (it panics on impossible
// ranges, such as a log axis over non-positive values) into an error naming the chart.
func (c *Chart) render(dc draw.Canvas) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart %s: drawing failed: %v", c.ID, r)
		}
	}()
	c.draw(dc)
	return nil
}

// Empty reports whether no panel of the chart has data to show.
func (c *Chart) Empty() bool {
	for _, p := range c.Panels {
		for _, s := range p.Series {
			if s.Len > 0 && s.Kind != KindWindow {
				return false
			}
		}
	}
	return true
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		if v > m && !math.IsInf(v, 0) {
			m = v
		}
	}
	return m
}

// slug makes a string safe for an id or file name.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// niceTicks places about five labelled ticks at round steps (1, 2, 2.5 or 5 × 10^k) with
// unlabelled ticks between them, and prints labels with no more decimals than the step needs.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo, 0)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step, minors := mag, 5
	for _, m := range []struct {
		f float64
		n int
	}{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}, {10, 5}} {
		if raw <= m.f*mag*1.0001 {
			step, minors = m.f*mag, m.n
			break
		}
	}
	decimals := 0
	for decimals < 12 && math.Abs(step*math.Pow(10, float64(decimals))-math.Round(step*math.Pow(10, float64(decimals)))) > 1e-6 {
		decimals++
	}
	var ticks []plot.Tick
	minor := step / float64(minors)
	first := math.Ceil(lo/minor-1e-9) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > hi+minor*1e-6 {
			break
		}
		k := math.Round(v / minor)
		v = k * minor // no accumulated rounding error in labels
		t := plot.Tick{Value: v}
		if int64(k)%int64(minors) == 0 {
			t.Label = tickLabel(v, decimals)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func tickLabel(v float64, decimals int) string {
	if math.Abs(v) >= 1e7 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
