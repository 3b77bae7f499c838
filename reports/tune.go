package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TunePoint is one candidate of a search on a panel of TuneChart: its value of the panel's
// key (a choice's index for a list of choices) and its goal's mean and interval.
type TunePoint struct {
	X, Mean, Lo, Hi float64
	Status          string // recommended, feasible, infeasible or any other status
}

// TunePanel is one varied key of a search and its candidates.
type TunePanel struct {
	Key    string
	Points []TunePoint
}

// Colours of TuneChart's point groups, in legend order.
var tuneGroups = []struct {
	status, name string
	c            color.RGBA
}{
	{"recommended", "recommended", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
	{"feasible", "feasible", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
	{"infeasible", "infeasible", color.RGBA{R: 0xaa, G: 0xaa, B: 0xaa, A: 0xff}},
	{"", "other (unsure, dropped, tied)", color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
}

// TuneChart draws a search's goal against each varied key, one panel per key: a point per
// candidate at its mean with its interval as a vertical bar, coloured by what the search
// found (recommended, feasible, infeasible, other).
func TuneChart(goal string, panels []TunePanel) *Chart {
	c := &Chart{ID: "tune", Title: goal + " against each varied key", Cols: min(2, max(1, len(panels))),
		Caption: "Each point is a candidate at its mean over its seeds; the bar is its interval."}
	for _, tp := range panels {
		p := newPanel(tp.Key, tp.Key, goal)
		for _, g := range tuneGroups {
			var xys plotter.XYs
			var errs plotter.YErrors
			for _, pt := range tp.Points {
				if tuneGroup(pt.Status) != g.status || math.IsNaN(pt.Mean) {
					continue
				}
				xys = append(xys, plotter.XY{X: pt.X, Y: pt.Mean})
				lo, hi := pt.Lo, pt.Hi
				if math.IsNaN(lo) {
					lo, hi = pt.Mean, pt.Mean
				}
				errs = append(errs, struct{ Low, High float64 }{pt.Mean - lo, hi - pt.Mean})
			}
			if len(xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				continue
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: g.c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			bars, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{xys, errs})
			if err == nil {
				bars.LineStyle.Color = g.c
				p.plot.Add(bars)
			}
			p.add(Series{Name: g.name, Kind: "point", Len: len(xys), Max: maxOf(ysOf(xys))}, sc, sc)
		}
		padX(p, tp.Points)
		c.Panels = append(c.Panels, p)
	}
	if len(c.Panels) == 0 {
		c.Caption = fmt.Sprintf("No candidate measured %s.", goal)
	}
	return c
}

func tuneGroup(status string) string {
	switch status {
	case "recommended", "feasible", "infeasible":
		return status
	}
	return ""
}

func ysOf(xys plotter.XYs) []float64 {
	out := make([]float64, len(xys))
	for i, p := range xys {
		out[i] = p.Y
	}
	return out
}

// padX widens the x axis by 5% on each side (half a unit when every point has one x), so
// that points at the ends of a range are not cut by the frame.
func padX(p *Panel, pts []TunePoint) {
	if len(pts) == 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
	}
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.5
	}
	p.plot.X.Min, p.plot.X.Max = lo-pad, hi+pad
}
