//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// execMayday runs the command line with args as main would, returning what it printed and
// its exit code.
func execMayday(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(args)
	err := runRoot(context.Background(), root)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// junitDoc is the part of a JUnit file the tests read.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s does not parse as XML: %v\n%s", path, err, b)
	}
	return doc
}

// failedCases counts <failure> elements, independently of the totals the file states.
func (d junitDoc) failedCases() int {
	n := 0
	for _, s := range d.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				n++
			}
		}
	}
	return n
}

// testdata/retried.yaml retries a flaky keyed tool five times: its three expectations hold.
func TestCheckPassesWhenExpectationsHold(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "report.xml")
	out, errOut, code := execMayday(t, "check", "testdata/retried.yaml", "--junit", junit)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "PASS retried  completion_rate >= 0.5: measured") {
		t.Errorf("stdout lacks the passing check:\n%s", out)
	}
	doc := readJUnit(t, junit)
	if doc.Tests != 3 || doc.Failures != 0 || doc.failedCases() != 0 {
		t.Errorf("JUnit: %d tests, %d failures (%d <failure>); want 3, 0", doc.Tests, doc.Failures, doc.failedCases())
	}
}

// testdata/no-retry.yaml gives the same flaky tool one attempt: about 0.8^4.5 ≈ 37% of
// investigations complete, so `completion_rate >= 0.9` fails while `duplicate_side_effects
// == 0` holds.
func TestCheckFailsOnViolatedExpectation(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "report.xml")
	out, errOut, code := execMayday(t, "check", "testdata/no-retry.yaml", "testdata/retried.yaml", "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"FAIL no-retry  completion_rate >= 0.9: measured 0.", "testdata/no-retry.yaml:24", "PASS no-retry  duplicate_side_effects == 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "check failed: 1 of 5 checks") {
		t.Errorf("stderr lacks the failure count:\n%s", errOut)
	}
	doc := readJUnit(t, junit)
	if doc.Tests != 5 || doc.Failures != 1 || doc.failedCases() != 1 || len(doc.Suites) != 2 {
		t.Fatalf("JUnit: %d tests, %d failures (%d <failure>), %d suites; want 5, 1, 2", doc.Tests, doc.Failures, doc.failedCases(), len(doc.Suites))
	}
	c := doc.Suites[0].Cases[0]
	if doc.Suites[0].Name != "no-retry" || c.Name != "completion_rate >= 0.9" || c.Failure == nil || !strings.Contains(c.Failure.Message, "measured") {
		t.Errorf("first case %+v of suite %s: want the failed completion_rate check with its measured value", c, doc.Suites[0].Name)
	}
}

// With seeds, a failure shows its interval; completion ≈ 0.37 against a bound of 0.9 is so
// far off that the whole interval fails.
func TestCheckSeedsShowIntervalAndJSON(t *testing.T) {
	out, errOut, code := execMayday(t, "check", "testdata/no-retry.yaml", "--seeds", "3", "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, errOut)
	}
	var rep struct {
		Pass      bool `json:"pass"`
		Failures  int  `json:"failures"`
		Scenarios []struct {
			Seeds        int `json:"seeds"`
			Expectations []struct {
				Metric     string   `json:"metric"`
				Value      *float64 `json:"value"`
				Lo         *float64 `json:"lo"`
				Hi         *float64 `json:"hi"`
				Pass       bool     `json:"pass"`
				Regression bool     `json:"regression"`
				Message    string   `json:"message"`
			} `json:"expectations"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--format json: %v\n%s", err, out)
	}
	e := rep.Scenarios[0].Expectations[0]
	if rep.Pass || rep.Failures != 1 || rep.Scenarios[0].Seeds != 3 || e.Metric != "completion_rate" || e.Pass {
		t.Fatalf("report %+v: want one failed completion_rate check over 3 seeds", rep)
	}
	if e.Lo == nil || e.Hi == nil || !(*e.Lo <= *e.Value && *e.Value <= *e.Hi) || !e.Regression {
		t.Errorf("completion_rate %v [%v, %v] regression=%v: want an interval around the mean, wholly below 0.9", e.Value, e.Lo, e.Hi, e.Regression)
	}
	if !strings.Contains(e.Message, "mean of 3 seeds") || !strings.Contains(e.Message, "regression") {
		t.Errorf("message %q lacks the seeds and the verdict", e.Message)
	}
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	badMetric := filepath.Join(dir, "bad.yaml")
	data, err := os.ReadFile("testdata/retried.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badMetric, bytes.Replace(data, []byte("completion_rate: \">= 0.5\""), []byte("completion: \">= 0.5\""), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "no-such-scenario"}, "no such file or embedded scenario"},
		{[]string{"check", badMetric}, "unknown metric \"completion\""},
		{[]string{"check", "testdata/retried.yaml", "--seeds", "0"}, "--seeds 0"},
		{[]string{"check"}, "--all"},
		{[]string{"check", "testdata/retried.yaml", "--baseline", filepath.Join(dir, "none.json")}, "--update-baseline"},
		{[]string{"check", "testdata/retried.yaml", "--format", "xml"}, "--format"},
	} {
		_, errOut, code := execMayday(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// A baseline recorded from five attempts holds against itself and fails when retries drop
// to two: completion falls from nearly 1 to about 0.85 (each step fails twice with
// probability 0.04), far beyond 5%, while the scenario's own expectations still hold.
func TestCheckBaseline(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.json")
	if out, errOut, code := execMayday(t, "check", "testdata/retried.yaml", "--baseline", base, "--update-baseline"); code != 0 {
		t.Fatalf("--update-baseline: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(base); err != nil {
		t.Fatalf("--update-baseline wrote nothing: %v", err)
	}
	if out, errOut, code := execMayday(t, "check", "testdata/retried.yaml", "--baseline", base); code != 0 {
		t.Fatalf("against its own baseline: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	junit := filepath.Join(dir, "j.xml")
	out, errOut, code := execMayday(t, "check", "testdata/retried.yaml", "--baseline", base,
		"--set", "recovery.retry.max_attempts=2", "--junit", junit)
	if code != 1 {
		t.Fatalf("worse than the baseline: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "FAIL retried  baseline completion_rate:") || !strings.Contains(out, "worse beyond the tolerance") {
		t.Errorf("stdout lacks the baseline failure:\n%s", out)
	}
	if strings.Contains(out, "FAIL retried  completion_rate >=") {
		t.Errorf("the expectation completion_rate >= 0.5 should still hold:\n%s", out)
	}
	if !strings.Contains(out, "config hash differs") {
		t.Errorf("stdout does not note that the scenario changed since the baseline:\n%s", out)
	}
	doc := readJUnit(t, junit)
	if doc.Failures == 0 || doc.Failures != doc.failedCases() {
		t.Errorf("JUnit: %d failures, %d <failure>; want the baseline failures counted", doc.Failures, doc.failedCases())
	}
	// Several scenarios take a folder of <scenario>.json.
	folder := filepath.Join(dir, "baselines")
	if _, errOut, code := execMayday(t, "check", "testdata/retried.yaml", "testdata/no-retry.yaml", "--baseline", folder, "--update-baseline", "-q"); code != 1 {
		t.Fatalf("two scenarios, baseline folder: exit %d, want 1 (no-retry fails its expectation)\n%s", code, errOut)
	}
	for _, name := range []string{"retried.json", "no-retry.json"} {
		if _, err := os.Stat(filepath.Join(folder, name)); err != nil {
			t.Errorf("baseline folder lacks %s: %v", name, err)
		}
	}
}

// --out keeps one run folder per scenario with its database and summary.
func TestCheckOutKeepsRunFolders(t *testing.T) {
	dir := t.TempDir()
	if out, errOut, code := execMayday(t, "check", "testdata/retried.yaml", "--seeds", "2", "--out", dir, "-q"); code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q (want 0 and nothing with -q)\n%s", code, out, errOut)
	}
	for _, f := range []string{"mayday.duckdb", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, "retried-s1-n2", f)); err != nil {
			t.Errorf("run folder lacks %s: %v", f, err)
		}
	}
	out, errOut, code := execMayday(t, "query", filepath.Join(dir, "retried-s1-n2"), "SELECT count(*) AS n FROM runs", "--format", "csv")
	if code != 0 || !strings.Contains(out, "n\n2\n") {
		t.Errorf("query of the kept folder: exit %d, %q, %s; want 2 runs", code, out, errOut)
	}
}
