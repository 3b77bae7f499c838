//go:build duckdb_arrow

package reports

import (
	"strings"
	"testing"
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
