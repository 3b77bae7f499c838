package reports

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	ttemplate "text/template"

	"github.com/mayday-sim/mayday/metric"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

// File names inside a report folder.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
)

// PNGDPI is the resolution of the Markdown report's charts: a 10-inch chart is 960 pixels wide.
const PNGDPI = 96

// Report is the report of one or more runs: their data, and the charts drawn from it.
type Report struct {
	Title   string
	Version string
	Runs    []*Run
	Charts  []*Chart
}

// New draws the charts of runs. version names the mayday that made the report.
func New(runs []*Run, version string) *Report {
	var names []string
	for _, r := range runs {
		if !slices.Contains(names, r.Scenario) {
			names = append(names, r.Scenario)
		}
	}
	title := "mayday report: " + strings.Join(names, ", ")
	switch {
	case len(runs) > 4:
		title += fmt.Sprintf(" (%d runs)", len(runs))
	case len(runs) > 1:
		var keys []string
		for _, r := range runs {
			keys = append(keys, r.Name())
		}
		title += " (" + strings.Join(keys, " vs ") + ")"
	}
	return &Report{Title: title, Version: version, Runs: runs, Charts: Charts(runs)}
}

// Files says where a written report went.
type Files struct {
	Dir      string   `json:"dir"`
	HTML     string   `json:"html"`
	Markdown string   `json:"markdown"`
	Images   []string `json:"images"` // the Markdown report's PNG charts, beside it
}

// Write writes report.html (self-contained: charts inline as SVG, styles inline), report.md
// and one PNG per chart into dir, creating it if needed.
func (r *Report) Write(dir string) (Files, error) {
	f := Files{Dir: dir, HTML: filepath.Join(dir, HTMLFile), Markdown: filepath.Join(dir, MarkdownFile)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, fmt.Errorf("report folder %s: %w", dir, err)
	}
	svgs, pngs, err := r.render()
	if err != nil {
		return f, err
	}
	images := map[string]string{}
	for i, c := range r.Charts {
		name := c.ID + ".png"
		if err := os.WriteFile(filepath.Join(dir, name), pngs[i], 0o644); err != nil {
			return f, fmt.Errorf("report: %w", err)
		}
		images[c.ID] = name
		f.Images = append(f.Images, filepath.Join(dir, name))
	}
	var html bytes.Buffer
	if err := r.html(&html, svgs); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.HTML, html.Bytes(), 0o644); err != nil {
		return f, fmt.Errorf("report: %w", err)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md, images); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.Markdown, md.Bytes(), 0o644); err != nil {
		return f, fmt.Errorf("report: %w", err)
	}
	return f, nil
}

// render draws every chart as SVG and PNG, one chart per goroutine: each chart is
// independent and drawing is deterministic, so the output does not depend on scheduling.
func (r *Report) render() (svgs [][]byte, pngs [][]byte, err error) {
	svgs = make([][]byte, len(r.Charts))
	pngs = make([][]byte, len(r.Charts))
	errs := make([]error, len(r.Charts))
	var wg sync.WaitGroup
	for i, c := range r.Charts {
		wg.Go(func() {
			if svgs[i], errs[i] = c.SVG(); errs[i] != nil {
				return
			}
			pngs[i], errs[i] = c.PNG(PNGDPI)
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, nil, e
		}
	}
	return svgs, pngs, nil
}

// WriteHTML writes the self-contained HTML report.
func (r *Report) WriteHTML(w io.Writer) error {
	svgs := make([][]byte, len(r.Charts))
	for i, c := range r.Charts {
		b, err := c.SVG()
		if err != nil {
			return err
		}
		svgs[i] = b
	}
	return r.html(w, svgs)
}

func (r *Report) html(w io.Writer, svgs [][]byte) error {
	inline := map[string]template.HTML{}
	for i, c := range r.Charts {
		inline[c.ID] = inlineSVG(svgs[i], c.Title)
	}
	funcs := template.FuncMap{
		"svg": func(c *Chart) template.HTML { return inline[c.ID] },
	}
	for k, v := range commonFuncs {
		funcs[k] = v
	}
	t, err := template.New("report.html.tmpl").Funcs(funcs).ParseFS(templateFiles, "templates/report.html.tmpl")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	return t.Execute(w, r.view())
}

// WriteMarkdown writes the Markdown report; images maps a chart ID to the path of its PNG,
// relative to the Markdown file.
func (r *Report) WriteMarkdown(w io.Writer, images map[string]string) error {
	funcs := ttemplate.FuncMap{
		"image": func(c *Chart) string { return images[c.ID] },
		"cell":  mdCell,
		"code":  mdCode,
		"fence": mdFence,
	}
	for k, v := range commonFuncs {
		funcs[k] = v
	}
	t, err := ttemplate.New("report.md.tmpl").Funcs(funcs).ParseFS(templateFiles, "templates/report.md.tmpl")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	return t.Execute(w, r.view())
}

var svgProlog = regexp.MustCompile(`(?s)^.*?<svg\b`)

// inlineSVG turns a standalone SVG document into an element for an HTML5 page: no XML
// prolog, and no namespace attributes (an HTML parser places <svg> in the SVG namespace by
// itself), so the page names no URL at all.
func inlineSVG(doc []byte, title string) template.HTML {
	s := svgProlog.ReplaceAllString(string(doc), "<svg")
	s = strings.Replace(s, `xmlns="http://www.w3.org/2000/svg"`, "", 1)
	s = strings.Replace(s, `xmlns:xlink="http://www.w3.org/1999/xlink"`, "", 1)
	s = strings.Replace(s, "<svg", `<svg role="img" aria-label="`+template.HTMLEscapeString(title)+`"`, 1)
	return template.HTML(s)
}

// view is what the templates see.
type view struct {
	*Report
	Multi, MultiSeed bool
	Confidence       int
	ChartRunsNote    string
	MetricRows       []metricRow
	Incidents        []incidentRow
	ToolRows         []toolRow
	Terminations     []terminationRow
	Refusals         []refusalRow
	Slowest          []episodeRow
	SpanQuery        string
}

type metricRow struct {
	Name  string
	Help  string
	Cells []metricCell
}

type metricCell struct {
	Metric
	Run  string
	Data string // the exact value, for machines: shortest round-trip form, "" when undefined
}

type incidentRow struct {
	Run string
	Incident
}

type toolRow struct {
	Run string
	ToolStat
}

type terminationRow struct {
	Run   string
	Key   string
	N     int64
	Share float64
}

type refusalRow struct {
	Run string
	Refusal
}

type episodeRow struct {
	Run string
	Episode
}

// ReportConfidence is the level of the intervals the metrics table shows, in percent; it
// matches the summaries' (Confidence in summary.go, which needs the database build).
const reportConfidence = 95

func (r *Report) view() view {
	v := view{Report: r, Multi: len(r.Runs) > 1, MultiSeed: multiSeed(r.Runs), Confidence: reportConfidence}
	if v.MultiSeed {
		v.ChartRunsNote = "Each run is drawn from its first seed."
	}
	var names []string
	for _, run := range r.Runs {
		for _, m := range run.Metrics {
			if !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
	}
	for _, name := range names {
		row := metricRow{Name: name, Help: metricHelp(name)}
		for _, run := range r.Runs {
			cell := metricCell{Run: run.Name(), Metric: Metric{Name: name, Value: math.NaN(), Text: "n/a"}}
			for _, m := range run.Metrics {
				if m.Name == name {
					cell.Metric = m
				}
			}
			if !math.IsNaN(cell.Value) {
				cell.Data = strconv.FormatFloat(cell.Value, 'g', -1, 64)
			}
			row.Cells = append(row.Cells, cell)
		}
		v.MetricRows = append(v.MetricRows, row)
	}
	for _, run := range r.Runs {
		for _, in := range run.Incidents {
			v.Incidents = append(v.Incidents, incidentRow{run.Name(), in})
		}
		for _, t := range run.Tools {
			v.ToolRows = append(v.ToolRows, toolRow{run.Name(), t})
		}
		started := run.value("started") * float64(len(run.Seeds))
		for _, t := range run.Terminations {
			v.Terminations = append(v.Terminations, terminationRow{run.Name(), t.Key, t.N, float64(t.N) / started})
		}
		for _, x := range run.Refusals {
			v.Refusals = append(v.Refusals, refusalRow{run.Name(), x})
		}
		for _, e := range run.Slowest {
			v.Slowest = append(v.Slowest, episodeRow{run.Name(), e})
		}
		if v.SpanQuery == "" && len(run.Slowest) > 0 && len(run.Seeds) > 0 {
			v.SpanQuery = fmt.Sprintf(`mayday query %s "SELECT start, \"end\", operation, tool, attempt, status, failure_class, fault_id FROM spans WHERE run_id = '%s' AND investigation_id = %d ORDER BY start, span_id"`,
				shellQuote(run.Source), run.Seeds[0].RunID, run.Slowest[0].InvestigationID)
		}
	}
	return v
}

// metricHelp explains a metric in a line, from the table of package metric.
func metricHelp(name string) string {
	m, _ := metric.Lookup(name)
	return m.Help
}

// commonFuncs format values for both templates.
var commonFuncs = map[string]any{
	"clock":   clock,
	"minutes": func(a, b float64) string { return strconv.FormatFloat(math.Round((b-a)/60), 'f', 0, 64) },
	"secs":    seconds,
	"ratio": func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return strconv.FormatFloat(v, 'f', 3, 64)
	},
	"pct": func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "n/a"
		}
		return strconv.FormatFloat(100*v, 'f', 2, 64) + "%"
	},
	"seedList": runSeeds,
	"status": func(r *Run) string {
		for _, sd := range r.Seeds {
			if sd.Status != "complete" {
				return sd.Status
			}
		}
		return "complete"
	},
}

// clock prints seconds of simulated time as [Nd ]hh:mm:ss.
func clock(t float64) string {
	if math.IsNaN(t) {
		return "n/a"
	}
	s := int64(math.Round(t))
	d, s := s/86400, s%86400
	out := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if d > 0 {
		out = fmt.Sprintf("%dd %s", d, out)
	}
	return out
}

// mdCell makes a value read from a database safe as text in Markdown, in or out of a table
// cell: every character Markdown or the HTML it allows could read as markup is escaped, so a
// tool name, a currency or a run label prints as the text it is.
func mdCell(s string) string {
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "!", `\!`, "*", `\*`, "_", `\_`, "`", "\\`",
	"#", `\#`, "~", `\~`,
)

// MarkdownText is mdCell for the other packages that write Markdown (tune's report.md):
// text mayday did not write (a tool name, a choice of a tune block) prints as the text it is,
// in or out of a table cell.
func MarkdownText(s string) string { return mdCell(s) }

// MarkdownCode is s as an inline code span that shows s as it is, on one line: the span's
// fence is one backtick longer than the longest run of backticks in s (CommonMark), a pipe
// is escaped so a table cell holds it, and line breaks become spaces.
func MarkdownCode(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ", "|", `\|`).Replace(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdFence is s as a fenced code block: the fence is longer than any run of backticks in s,
// so nothing in s can close it.
func mdFence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + s + "\n" + fence
}

// mdCode makes a value safe inside a Markdown code span (`...`) in a table cell: a code
// span shows backslashes as they are, so a backtick, which would end it, becomes a quote.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runSeeds is a run's number of seeds and which they are: "1 (seed 42)", "5 (seeds 1–5)",
// "3 (seeds 1, 4, 9)".
func runSeeds(r *Run) string {
	n := len(r.Seeds)
	if n == 0 {
		return "0"
	}
	if n == 1 {
		return "1 (seed " + strconv.FormatUint(r.Seeds[0].Seed, 10) + ")"
	}
	consecutive := true
	var s []string
	for i, sd := range r.Seeds {
		s = append(s, strconv.FormatUint(sd.Seed, 10))
		if i > 0 && sd.Seed != r.Seeds[i-1].Seed+1 {
			consecutive = false
		}
	}
	if consecutive {
		return fmt.Sprintf("%d (seeds %d–%d)", n, r.Seeds[0].Seed, r.Seeds[n-1].Seed)
	}
	return fmt.Sprintf("%d (seeds %s)", n, strings.Join(s, ", "))
}
