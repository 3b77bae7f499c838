//go:build duckdb_arrow

package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"testing"
)

// A chart of a 27-point sweep keeps its legend to MaxLegend entries: the first nine series
// and a pointer; the other 18 are listed, with their colors, for the table under it.
func TestLegendIsCappedAndTheRestListed(t *testing.T) {
	p := newPanel("recovery time", "time", "seconds")
	for i := range 27 {
		p.line(fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", i), []float64{0, 1}, []float64{1, 2},
			color.RGBA{R: uint8(i * 9), G: 0x40, B: 0x80, A: 0xff}, nil)
	}
	c := &Chart{ID: "rt", Title: "Recovery time", Cols: 1, Panels: []*Panel{p}, Width: 800, Height: 300}
	rest := c.LegendRest()
	if len(rest) != 27-(MaxLegend-1) || rest[0].Name != fmt.Sprintf("p%d", MaxLegend-1) {
		t.Fatalf("rest %v: want p%d .. p26", rest, MaxLegend-1)
	}
	if rest[0].Color != fmt.Sprintf("#%02x4080", (MaxLegend-1)*9) {
		t.Errorf("rest[0] color %q", rest[0].Color)
	}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("18 more: see the table below")) || bytes.Contains(svg, []byte(">p26<")) {
		t.Error("the SVG legend is not capped with a pointer to the table")
	}
	small := &Chart{ID: "s", Title: "s", Cols: 1, Panels: []*Panel{newPanel("a", "x", "y")}}
	if small.LegendRest() != nil {
		t.Error("a chart with no series lists a rest")
	}
}

// The header's seeds column says how many seeds a run has, then which.
func TestHeaderShowsTheNumberOfSeeds(t *testing.T) {
	run := func(seeds ...uint64) *Run {
		r := &Run{}
		for _, s := range seeds {
			r.Seeds = append(r.Seeds, SeedInfo{Seed: s})
		}
		return r
	}
	for _, c := range []struct {
		r    *Run
		want string
	}{{run(42), "1 (seed 42)"}, {run(1, 2, 3, 4, 5), "5 (seeds 1–5)"}, {run(1, 4, 9), "3 (seeds 1, 4, 9)"}} {
		if got := runSeeds(c.r); got != c.want {
			t.Errorf("runSeeds = %q, want %q", got, c.want)
		}
	}
}
