package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// externalRef finds anything in a page that would make a browser fetch something: a URL
// scheme, a protocol-relative URL, a src or href that is not an in-page anchor, a CSS
// import or url(), or an element that loads content.
var externalRef = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`https?:`, `ftp:`, `file:`, `//[a-z0-9.-]+\.[a-z]{2,}`,
	`\bsrc\s*=`, `\bhref\s*=\s*["']?[^"'#\s>]`, `xlink:href`, `\bsrcset\s*=`,
	`@import`, `url\(`, `@font-face`,
	`<script`, `<link\b`, `<img\b`, `<iframe`, `<object`, `<embed`, `<video`, `<audio`, `<source`,
}, "|"))

// checkSelfContained fails t for every external reference in page, quoting its context.
func checkSelfContained(t *testing.T, page []byte) {
	t.Helper()
	for _, loc := range externalRef.FindAllIndex(page, 20) {
		lo, hi := max(0, loc[0]-40), min(len(page), loc[1]+40)
		t.Errorf("external reference %q in %q", page[loc[0]:loc[1]], page[lo:hi])
	}
}

// TestExternalRefPattern proves the checker catches what it must, so that a clean result
// from it means something.
func TestExternalRefPattern(t *testing.T) {
	for _, bad := range []string{
		`<script src="app.js"></script>`, `<img src=chart.png>`, `<a href="https://example.com">`,
		`<link rel=stylesheet href="s.css">`, `style="background: url(x.png)"`, `@import "x.css";`,
		`<svg xmlns="http://www.w3.org/2000/svg">`, `<use xlink:href="#a"/>`, `<a href=//cdn.example.org/x>`,
	} {
		if !externalRef.MatchString(bad) {
			t.Errorf("not caught: %s", bad)
		}
	}
	for _, ok := range []string{`<a href="#metrics">`, `<svg role="img" viewBox="0 0 1 1">`, `<td data-value="0.5">`} {
		if externalRef.MatchString(ok) {
			t.Errorf("flagged although in-page: %s", ok)
		}
	}
}

// TestWriteSynthetic writes a two-run report from synthetic data and checks the files: the
// HTML is self-contained and inlines every chart, the Markdown links every PNG beside it.
func TestWriteSynthetic(t *testing.T) {
	a, b := syntheticRun("a", 1), syntheticRun("b", 2)
	b.Slowest = []Episode{{InvestigationID: 7, RootID: 7, Tool: "backtest", OpKey: "7/1/0", Start: 7200, Seconds: 1800, Outcome: "recovered", FailedAttempts: 5}}
	r := New([]*Run{a, b}, "test")
	dir := t.TempDir()
	files, err := r.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(files.HTML)
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, page)
	var direct bytes.Buffer
	if err := r.WriteHTML(&direct); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(direct.Bytes(), page) {
		t.Errorf("WriteHTML and Write produce different pages")
	}
	if n := bytes.Count(page, []byte("<svg")); n != len(ChartIDs) {
		t.Errorf("%d inline SVGs, want %d", n, len(ChartIDs))
	}
	for _, id := range ChartIDs {
		if !bytes.Contains(page, []byte(`data-chart="`+id+`"`)) {
			t.Errorf("HTML lacks chart %s", id)
		}
	}
	if !bytes.Contains(page, []byte("mayday query /runs/b")) {
		t.Errorf("HTML lacks the span query of the slowest recovery")
	}
	md, err := os.ReadFile(files.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	if len(files.Images) != len(ChartIDs) {
		t.Fatalf("%d images, want %d", len(files.Images), len(ChartIDs))
	}
	for _, img := range files.Images {
		if filepath.Dir(img) != dir {
			t.Errorf("image %s not beside the Markdown file", img)
		}
		if !bytes.Contains(md, []byte("]("+filepath.Base(img)+")")) {
			t.Errorf("Markdown does not link %s", filepath.Base(img))
		}
		if st, err := os.Stat(img); err != nil || st.Size() == 0 {
			t.Errorf("image %s: %v", img, err)
		}
	}
	if t.Failed() {
		t.Logf("report left in %s", dir)
	}
}

// TestWriteEmptyRun: a run in which nothing failed (or nothing happened at all) still gets
// every chart, each saying what is missing rather than failing to draw.
func TestWriteEmptyRun(t *testing.T) {
	r := New([]*Run{{Label: "quiet", Scenario: "quiet", Seeds: []SeedInfo{{RunID: "quiet-s1", Seed: 1, Status: "complete"}}}}, "test")
	files, err := r.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(files.HTML)
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, page)
	for _, want := range []string{"No attempt failed.", "No tool had a failed attempt.", "nothing to recover", "No incident was detected."} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the report of an empty run does not say %q", want)
		}
	}
}
