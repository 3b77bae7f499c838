//go:build duckdb_arrow

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/tune"
)

// tuneSummary is tune.json of a search's result.
func tuneSummary(opts *tuneOptions, in *tuneInputs, r *tune.Result) *tuneFile {
	f := &tuneFile{Scenario: in.base.Name, Source: opts.Scenario, Sets: opts.Sets, ConfigHash: in.base.Hash(),
		Seed: in.seed, Version: version, Tune: in.t, Complete: r.Complete, Verdict: r.Verdict,
		Runs: r.Spent, Rounds: r.Rounds, RunnerUp: r.RunnerUp, Tied: r.Tied}
	if in.prev != nil {
		f.Source, f.Sets = in.prev.Source, in.prev.Sets
		if opts.Scenario != "" {
			f.Source = opts.Scenario
		}
	}
	byID := map[int]tuneCandidate{}
	for _, c := range r.Candidates {
		tc := tuneCandidate{Candidate: c, Values: c.Values}
		for j, m := range c.Runs {
			tc.Runs = append(tc.Runs, tuneRunMetrics{Seed: in.seed + uint64(j), Metrics: finiteOnly(m)})
		}
		byID[c.ID] = tc
		f.Candidates = append(f.Candidates, tc)
	}
	if r.Recommended != nil {
		rec := byID[r.Recommended.ID]
		rec.Runs = nil // listed under candidates
		f.Recommend = &rec
	}
	for _, id := range r.Front {
		c := byID[id]
		c.Runs = nil
		f.Front = append(f.Front, c)
	}
	return f
}

func finiteOnly(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// recommendedSets is the recommendation as --set arguments, in the tune block's order.
func recommendedSets(t scenarios.Tune, rec *tuneCandidate) []scenarios.Override {
	ovs := make([]scenarios.Override, len(t.Vary))
	for i, p := range t.Vary {
		ovs[i] = scenarios.Override{Path: p.Path, Value: rec.Values[i], From: scenarios.FromSet}
	}
	return ovs
}

// writeTuneFolder writes tune.json, the recommendation as --set lines and as a scenario,
// and the report into the staged folder.
//
// f holds the values as they ran; only recommended.yaml (the scenario, which holds what its
// source holds) keeps them: tune.json, recommended.set, the chart and the report show them
// redacted (tuneRedactor), a secret's line in recommended.set as a comment.
func writeTuneFolder(folder *analysis.Folder, in *tuneInputs, f *tuneFile) error {
	red := tuneRedactor(in.base)
	shown := redactTuneFile(f, red)
	if err := writeTuneJSON(folder.Path(TuneFile), shown); err != nil {
		return internal(err)
	}
	if f.Recommend != nil && f.Complete {
		ovs := recommendedSets(in.t, f.Recommend)
		var b strings.Builder
		for _, o := range ovs {
			if r := red(o.Path, o.Value); r != o.Value {
				fmt.Fprintf(&b, "# --set %s=%s: a secret, shown redacted; %s holds its value\n", o.Path, r, tunePatchFile)
				continue
			}
			fmt.Fprintf(&b, "--set %s\n", shellQuote(o.String()))
		}
		if err := os.WriteFile(folder.Path(tuneSetFile), []byte(b.String()), 0o644); err != nil {
			return internal(err)
		}
		patched, err := scenarios.Patch(in.base.Source.File, in.base.Source.Data, append(append([]scenarios.Override(nil), in.base.Source.Overrides...), ovs...))
		if err != nil {
			return internal(fmt.Errorf("the recommended scenario: %w", err))
		}
		if err := os.WriteFile(folder.Path(tunePatchFile), patched, 0o644); err != nil {
			return internal(err)
		}
	}
	svg, err := tuneChart(shown).SVG()
	if err != nil {
		return internal(err)
	}
	if err := os.WriteFile(folder.Path(tuneChartFile), svg, 0o644); err != nil {
		return internal(err)
	}
	var b strings.Builder
	writeTuneReport(&b, shown)
	return internal(os.WriteFile(folder.Path(tuneReportFile), []byte(b.String()), 0o644))
}

// tuneChart is the goal against each varied key, every measured candidate with its interval.
func tuneChart(f *tuneFile) *reports.Chart {
	goal, _ := f.Tune.Objective()
	var panels []reports.TunePanel
	for i, p := range f.Tune.Vary {
		tp := reports.TunePanel{Key: p.Path}
		if p.Kind == scenarios.TuneChoice {
			tp.Key += " (choice " + strings.Join(indexed(p.Choices), ", ") + ")"
		}
		for _, c := range f.Candidates {
			x, ok := p.Number(c.Values[i])
			iv, measured := c.Intervals[goal]
			if !ok || !measured || c.Seeds == 0 {
				continue
			}
			tp.Points = append(tp.Points, reports.TunePoint{X: x, Mean: iv.Mean, Lo: iv.Lo, Hi: iv.Hi, Status: c.Status})
		}
		panels = append(panels, tp)
	}
	return reports.TuneChart(goal, panels)
}

func indexed(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%d = %s", i, x)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-=/[]:", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// goalText is "maximize M subject to A, B".
func goalText(t scenarios.Tune) string {
	g, higher := t.Objective()
	s := "minimize " + g
	if higher {
		s = "maximize " + g
	}
	var cs []string
	for _, e := range t.SubjectTo {
		cs = append(cs, e.String())
	}
	if len(cs) > 0 {
		s += " subject to " + strings.Join(cs, ", ")
	}
	return s
}

func ivText(iv tune.Interval) string {
	if math.IsNaN(iv.Lo) {
		return fmt.Sprintf("%.4g", iv.Mean)
	}
	return fmt.Sprintf("%.4g [%.4g, %.4g]", iv.Mean, iv.Lo, iv.Hi)
}

func paramsText(t scenarios.Tune, values []string) string {
	parts := make([]string, len(t.Vary))
	for i, p := range t.Vary {
		parts[i] = p.Path + "=" + values[i]
	}
	return strings.Join(parts, " ")
}

var verdictText = map[string]string{
	tune.VerdictBest:       "significantly better than every other feasible candidate",
	tune.VerdictTie:        "a tie: not significantly better than",
	tune.VerdictOnly:       "the only feasible candidate",
	tune.VerdictInfeasible: "no candidate meets the constraints",
	tune.VerdictUnsettled:  "the budget ran out before any candidate was shown to meet the constraints",
	tune.VerdictNone:       "nothing was measured",
}

// writeTuneText prints the recommendation for a person.
func writeTuneText(w io.Writer, f *tuneFile, dir string) {
	fmt.Fprintf(w, "tune %s: %s\n", f.Scenario, goalText(f.Tune))
	fmt.Fprintf(w, "%d runs, %d candidates, %d rounds, %.0f%% intervals\n", f.Runs, len(f.Candidates), f.Rounds, 100*f.Tune.Confidence)
	if f.Recommend == nil {
		fmt.Fprintf(w, "no recommendation: %s\n", verdictText[f.Verdict])
		return
	}
	rec := f.Recommend
	fmt.Fprintf(w, "recommended: %s\n", paramsText(f.Tune, rec.Values))
	for _, m := range tune.Metrics(f.Tune) {
		fmt.Fprintf(w, "  %-24s %s\n", m, ivText(rec.Intervals[m]))
	}
	v := verdictText[f.Verdict]
	if f.Verdict == tune.VerdictTie {
		var ids []string
		for _, id := range f.Tied {
			ids = append(ids, fmt.Sprintf("#%d (%s)", id, paramsText(f.Tune, f.Candidates[id].Values)))
		}
		v += " " + strings.Join(ids, ", ")
	}
	fmt.Fprintln(w, v)
	if f.RunnerUp != nil && f.Verdict != tune.VerdictTie {
		g, _ := f.Tune.Objective()
		fmt.Fprintf(w, "runner-up #%d (%s): %s better by %s\n", f.RunnerUp.Candidate,
			paramsText(f.Tune, f.Candidates[f.RunnerUp.Candidate].Values), g, ivText(f.RunnerUp.Diff))
	}
	fmt.Fprintf(w, "wrote %s: %s, %s, %s, %s, %s\n", dir, TuneFile, tuneSetFile, tunePatchFile, tuneReportFile, tuneChartFile)
}

// writeTuneReport writes report.md: the goal, the verdict and every candidate.
func writeTuneReport(w io.Writer, f *tuneFile) {
	fmt.Fprintf(w, "# tune %s\n\n%s; %d runs, %d candidates, %d rounds, %.0f%% intervals (Student's t over seeds, paired by seed for differences).\n\n",
		reports.MarkdownText(f.Scenario), reports.MarkdownText(goalText(f.Tune)), f.Runs, len(f.Candidates), f.Rounds, 100*f.Tune.Confidence)
	if !f.Complete {
		fmt.Fprintf(w, "**Interrupted**: resume with `mayday tune --resume DIR`.\n\n")
	}
	fmt.Fprintf(w, "![%s against each varied key](%s)\n\n", func() string { g, _ := f.Tune.Objective(); return g }(), tuneChartFile)
	if f.Recommend != nil {
		fmt.Fprintf(w, "**Recommended** (#%d): %s, %s.\n\n", f.Recommend.ID, reports.MarkdownCode(paramsText(f.Tune, f.Recommend.Values)), verdictText[f.Verdict])
	} else {
		fmt.Fprintf(w, "**No recommendation**: %s.\n\n", verdictText[f.Verdict])
	}
	metrics := tune.Metrics(f.Tune)
	fmt.Fprintf(w, "| # | %s | seeds | status | %s |\n|", strings.Join(paths(f.Tune), " | "), strings.Join(metrics, " | "))
	for range len(f.Tune.Vary) + len(metrics) + 3 {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	order := slices.Clone(f.Candidates)
	slices.SortStableFunc(order, func(a, b tuneCandidate) int { return rankStatus(a.Status) - rankStatus(b.Status) })
	for _, c := range order {
		// Choice values are the scenario's text, never markup: `a|b` stays in its cell.
		cells := []string{fmt.Sprint(c.ID)}
		for _, v := range c.Values {
			cells = append(cells, reports.MarkdownText(v))
		}
		cells = append(cells, fmt.Sprint(c.Seeds), c.Status)
		for _, m := range metrics {
			cells = append(cells, ivText(c.Intervals[m]))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

func paths(t scenarios.Tune) []string {
	out := make([]string, len(t.Vary))
	for i, p := range t.Vary {
		out[i] = reports.MarkdownCode(p.Path)
	}
	return out
}

func rankStatus(s string) int {
	return slices.Index([]string{tune.StatusRecommended, tune.StatusTied, tune.StatusFeasible, tune.StatusHeld, tune.StatusUnsure, tune.StatusInfeasible, tune.StatusDropped}, s)
}
