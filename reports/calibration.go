package reports

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot/vg"

	"github.com/mayday-sim/mayday/fit"
)

// CalibrationChart overlays, per tool, the observed and the simulated distributions of
// success latency (empirical distribution functions, up to the 99th percentile of both).
func CalibrationChart(c fit.Calibration) *Chart {
	ch := &Chart{ID: "calibration-latency", Title: "Success latency: observed and simulated",
		Caption: "The empirical distribution function of each tool's success latency in the observed run (solid) and pooled over the scenario's simulated runs (dashed); the largest vertical gap is the KS distance.",
		Cols:    min(2, max(1, len(c.Latency))), Width: 16 * vg.Centimeter}
	for _, l := range c.Latency {
		p := newPanel(l.Tool, "latency (s)", "share of successes ≤ x")
		top := 0.0
		for _, xs := range [][]float64{l.Observed, l.Simulated} {
			if len(xs) > 0 {
				top = math.Max(top, stat.Quantile(0.99, stat.Empirical, xs, nil))
			}
		}
		for i, s := range []struct {
			name string
			xs   []float64
		}{{"observed", l.Observed}, {"simulated", l.Simulated}} {
			xs, ys := ecdf(s.xs, top)
			if len(xs) == 0 {
				continue
			}
			var dash []vg.Length
			if i == 1 {
				dash = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.line(s.name, s.name, xs, ys, paletteColor(i), dash)
		}
		ch.Panels = append(ch.Panels, p)
	}
	ch.Height = vg.Length(len(ch.rows())) * 6 * vg.Centimeter
	return ch
}

// ecdf samples the empirical distribution function of sorted xs at up to 200 points up to
// top.
func ecdf(xs []float64, top float64) (x, y []float64) {
	n := len(xs)
	if n == 0 {
		return nil, nil
	}
	step := max(1, n/200)
	for i := 0; i < n; i += step {
		if xs[i] > top {
			break
		}
		x = append(x, xs[i])
		y = append(y, float64(i+1)/float64(n))
	}
	return x, y
}

func calFmt(v float64) string {
	if math.IsNaN(v) {
		return "undefined"
	}
	return fmt.Sprintf("%.4g", v)
}

func verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// WriteCalibrationText prints one line per check and the overall verdict.
func WriteCalibrationText(w io.Writer, c fit.Calibration) error {
	fmt.Fprintf(w, "calibration of run %s against %d simulated runs\n", c.Run, c.Seeds)
	fmt.Fprintf(w, "%-34s %12s %12s %25s %16s  %s\n", "metric", "observed", "simulated", "passes in", "tolerance", "verdict")
	for _, ch := range c.Checks {
		fmt.Fprintf(w, "%-34s %12s %12s %25s %16s  %s\n", ch.Name(), calFmt(ch.Observed), calFmt(ch.Simulated),
			"["+calFmt(ch.Lo)+", "+calFmt(ch.Hi)+"]", ch.Tolerance, verdict(ch.Pass))
	}
	n := len(c.Failed())
	if n == 0 {
		_, err := fmt.Fprintf(w, "PASS: every one of %d metrics is within its tolerance\n", len(c.Checks))
		return err
	}
	_, err := fmt.Fprintf(w, "FAIL: %d of %d metrics outside their tolerance\n", n, len(c.Checks))
	return err
}

// WriteCalibrationJSON writes the checks and the verdict as JSON (undefined values as null).
func WriteCalibrationJSON(w io.Writer, c fit.Calibration) error {
	type check struct {
		Metric    string   `json:"metric"`
		Tool      string   `json:"tool,omitempty"`
		Observed  *float64 `json:"observed"`
		Simulated *float64 `json:"simulated"`
		Lo        *float64 `json:"lo"`
		Hi        *float64 `json:"hi"`
		Tolerance string   `json:"tolerance"`
		Pass      bool     `json:"pass"`
	}
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	out := struct {
		Run    string  `json:"run"`
		Seeds  int     `json:"seeds"`
		Pass   bool    `json:"pass"`
		Checks []check `json:"checks"`
	}{Run: c.Run, Seeds: c.Seeds, Pass: c.Pass()}
	for _, ch := range c.Checks {
		out.Checks = append(out.Checks, check{ch.Metric, ch.Tool, num(ch.Observed), num(ch.Simulated), num(ch.Lo), num(ch.Hi), ch.Tolerance, ch.Pass})
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(out)
}

// WriteCalibrationMarkdown writes the calibration section of a report: the table of checks
// and the chart, linked as png (a file the caller writes beside it).
func WriteCalibrationMarkdown(w io.Writer, c fit.Calibration, png string) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "## Calibration\n\nRun %s beside %d simulated runs of the scenario: **%s**.\n\n", MarkdownCode(c.Run), c.Seeds, strings.ToLower(verdict(c.Pass())))
	b.WriteString("| metric | observed | simulated | passes in | tolerance | verdict |\n|---|---|---|---|---|---|\n")
	for _, ch := range c.Checks {
		// The tool name is the imported trace's: text, never markup.
		fmt.Fprintf(b, "| %s | %s | %s | [%s, %s] | %s | %s |\n", MarkdownText(ch.Name()), calFmt(ch.Observed), calFmt(ch.Simulated),
			calFmt(ch.Lo), calFmt(ch.Hi), MarkdownText(ch.Tolerance), verdict(ch.Pass))
	}
	if png != "" {
		fmt.Fprintf(b, "\n![Success latency: observed and simulated](%s)\n", png)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCalibrationHTML writes the calibration section as a standalone HTML page with the
// chart inline (SVG).
func WriteCalibrationHTML(w io.Writer, c fit.Calibration, svg []byte) error {
	b := &strings.Builder{}
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>mayday calibration</title>")
	b.WriteString("<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}td:first-child{text-align:left}.FAIL{color:#b00;font-weight:bold}</style></head><body>")
	fmt.Fprintf(b, "<h2>Calibration</h2><p>Run <code>%s</code> beside %d simulated runs of the scenario: <b>%s</b>.</p>",
		html.EscapeString(c.Run), c.Seeds, strings.ToLower(verdict(c.Pass())))
	b.WriteString("<table><tr><th>metric</th><th>observed</th><th>simulated</th><th>passes in</th><th>tolerance</th><th>verdict</th></tr>")
	for _, ch := range c.Checks {
		v := verdict(ch.Pass)
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>[%s, %s]</td><td>%s</td><td class=\"%s\">%s</td></tr>",
			html.EscapeString(ch.Name()), calFmt(ch.Observed), calFmt(ch.Simulated), calFmt(ch.Lo), calFmt(ch.Hi),
			html.EscapeString(ch.Tolerance), v, v)
	}
	b.WriteString("</table>")
	if len(svg) > 0 {
		fmt.Fprintf(b, "<figure><img alt=\"Success latency: observed and simulated\" src=\"data:image/svg+xml;base64,%s\"><figcaption>%s</figcaption></figure>",
			base64.StdEncoding.EncodeToString(svg), html.EscapeString(CalibrationChart(c).Caption))
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
