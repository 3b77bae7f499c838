//go:build duckdb_arrow

package reports

import (
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/fit"
)

// Text read from a database (a currency, a tool name, a run label) prints in report.md as
// the text it is: no raw HTML, no link or image, no table cell split, no line break.
func TestMarkdownEscapesDatabaseText(t *testing.T) {
	hostile := "EUR<img src=x onerror=alert(1)>|![x](http://example.invalid/t.png)\n# title `code` *b* _i_ [l](u)"
	got := mdCell(hostile)
	for _, bad := range []string{"<", ">", "\n", "![", "](", "\n#"} {
		if strings.Contains(got, bad) {
			t.Errorf("mdCell(%q) = %q: holds %q", hostile, got, bad)
		}
	}
	if strings.Count(got, "|") != strings.Count(got, `\|`) {
		t.Errorf("mdCell left a bare | that splits the cell: %q", got)
	}
	code := mdCode("a`b|c\nd")
	if strings.Contains(code, "`") || strings.Contains(code, "\n") || strings.Count(code, "|") != strings.Count(code, `\|`) {
		t.Errorf("mdCode = %q: a backtick, newline or bare | would end the code span or the cell", code)
	}
}

// A code span and a fenced block hold any text, backticks included, on its own terms:
// nothing in the text closes them early, and a code span stays on one line and in its cell.
func TestMarkdownCodeAndFence(t *testing.T) {
	for _, s := range []string{"plain", "a`b", "a``b```c", "`", "x|y\nz"} {
		code := MarkdownCode(s)
		fence := code[:strings.IndexFunc(code, func(r rune) bool { return r != '`' })]
		inner := strings.TrimSuffix(strings.TrimPrefix(code, fence), fence)
		if strings.Contains(inner, fence) || strings.Contains(code, "\n") || strings.Count(code, "|") != strings.Count(code, `\|`) {
			t.Errorf("MarkdownCode(%q) = %q: its fence %q recurs inside, or a newline or bare | escapes it", s, code, fence)
		}
		block := mdFence(s)
		open := block[:strings.IndexByte(block, '\n')]
		body := strings.TrimSuffix(strings.TrimPrefix(block, open+"\n"), "\n"+open)
		if len(open) < 3 || strings.Contains(body, open) || body != s {
			t.Errorf("mdFence(%q) = %q: the fence %q recurs inside or the body changed", s, block, open)
		}
	}
}

// calibration.md writes an imported tool name and the run id as text: a hostile name splits
// no table cell, opens no HTML tag and breaks no line.
func TestCalibrationMarkdownEscapes(t *testing.T) {
	cal := fit.Calibration{Run: "run`1|x", Seeds: 3, Checks: []fit.Check{
		{Metric: "latency_ks", Tool: "a|b<script>alert(1)</script>\n| evil | row |", Tolerance: "±10%", Pass: true},
	}}
	var b strings.Builder
	if err := WriteCalibrationMarkdown(&b, cal, ""); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script") || strings.Contains(out, "| evil |") {
		t.Errorf("calibration.md holds raw markup:\n%s", out)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| latency\\_ks") {
			continue
		}
		rows++
		if cells := strings.Count(line, "|") - strings.Count(line, `\|`); cells != 7 {
			t.Errorf("the tool's row has %d cell borders, want 7: %s", cells, line)
		}
	}
	if rows != 1 {
		t.Errorf("%d rows for the tool, want 1:\n%s", rows, out)
	}
}
