//go:build duckdb_arrow

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/tune"
)

var tuneSecrets = regexp.MustCompile(`TuneCanary|tunecanarytoken`)

// A search that varies secret values (API keys, a bearer token in free text) shows them
// nowhere in plain text: not on stdout (text or JSON), not in tune.json, report.md, tune.svg
// or recommended.set. A search interrupted and resumed from the redacted tune.json maps the
// stored values back and ends where the uninterrupted one does.
func TestTuneRedactsSecrets(t *testing.T) {
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	for _, format := range []string{"text", "json"} {
		out, errOut, code := execMayday(t, "tune", "testdata/tune-secret.yaml", "--out", whole, "--force", "--jobs", "2", "--format", format)
		if code != 0 {
			t.Fatalf("tune: exit %d: %s", code, errOut)
		}
		if m := tuneSecrets.FindString(out + errOut); m != "" {
			t.Errorf("%s output shows %s:\n%s", format, m, out)
		}
		if !strings.Contains(out, "redacted:") {
			t.Errorf("%s output shows no redacted value:\n%s", format, out)
		}
	}
	for _, name := range []string{TuneFile, tuneReportFile, tuneChartFile, tuneSetFile} {
		b, err := os.ReadFile(filepath.Join(whole, name))
		if err != nil {
			t.Fatal(err)
		}
		if m := tuneSecrets.FindString(string(b)); m != "" {
			t.Errorf("%s shows %s", name, m)
		}
	}
	// recommended.yaml is the scenario to run: it holds the recommended key, as its source does.
	if b, _ := os.ReadFile(filepath.Join(whole, tunePatchFile)); !tuneSecrets.Match(b) {
		t.Errorf("recommended.yaml lost the recommended key:\n%s", b)
	}
	ctx := cancelAfterRuns(t, 3)
	if _, errOut, code := execMaydayCtx(t, ctx, "tune", "testdata/tune-secret.yaml", "--out", part, "--jobs", "1", "-q"); code != 130 {
		t.Fatalf("interrupted tune: exit %d: %s", code, errOut)
	}
	testHookRunDone = nil
	if _, errOut, code := execMayday(t, "tune", "--resume", part, "-q"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	for _, name := range []string{TuneFile, tuneSetFile, tunePatchFile, tuneReportFile} {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, _ := os.ReadFile(filepath.Join(part, name))
		if string(a) != string(b) {
			t.Errorf("%s differs between the whole and the resumed search:\n%s\n---\n%s", name, a, b)
		}
	}
}

// --resume refuses a tune.json mayday did not write (edited to name another file as its
// source) before reading anything it names, and no error shows another file's contents.
func TestTuneResumeRefusesEditedState(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "t")
	if _, errOut, code := execMayday(t, "tune", "testdata/tune.yaml", "--out", dir, "-q", "--budget", "4"); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	private := filepath.Join(root, "private.txt")
	os.WriteFile(private, []byte("PRIVATE-CONTENT-line-one: {\n"), 0o600)
	b, _ := os.ReadFile(filepath.Join(dir, TuneFile))
	edited := regexp.MustCompile(`"source": "[^"]*"`).ReplaceAll(b, []byte(`"source": "`+private+`"`))
	if string(edited) == string(b) {
		t.Fatal("no source in tune.json")
	}
	os.WriteFile(filepath.Join(dir, TuneFile), edited, 0o644)
	out, errOut, code := execMayday(t, "tune", "--resume", dir)
	if code != 2 || !strings.Contains(errOut, "not a tune folder as mayday wrote it") {
		t.Errorf("edited tune.json: exit %d: %s", code, errOut)
	}
	if strings.Contains(out+errOut, "PRIVATE-CONTENT") {
		t.Errorf("an error shows the file tune.json names:\n%s", out+errOut)
	}
}

// tune's report.md writes choice values and keys as text: a value with a pipe splits no
// cell, <script> stands escaped, a newline breaks no row.
func TestTuneReportEscapesChoices(t *testing.T) {
	choices := []string{"a|b", "<script>alert(1)</script>", "x\n| evil |"}
	f := &tuneFile{Scenario: "s", Tune: scenarios.Tune{Vary: []scenarios.TuneParam{{Path: "tools.a.version", Kind: scenarios.TuneChoice, Choices: choices}},
		Maximize: "completion_rate", Confidence: 0.95}}
	for i, v := range choices {
		c := &tune.Candidate{ID: i, Status: tune.StatusFeasible, Seeds: 2, Intervals: map[string]tune.Interval{}}
		f.Candidates = append(f.Candidates, tuneCandidate{Candidate: c, Values: []string{v}})
	}
	rec := f.Candidates[0]
	f.Recommend = &rec
	var b strings.Builder
	writeTuneReport(&b, f)
	out := b.String()
	if strings.Contains(out, "<script") || strings.Contains(out, "| evil |") {
		t.Errorf("report.md holds raw markup:\n%s", out)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| #") {
			continue
		}
		rows++
		// # | key | seeds | status | goal: 6 borders
		if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 6 {
			t.Errorf("row has %d cell borders, want 6: %s", n, line)
		}
	}
	if rows != len(choices) {
		t.Errorf("%d candidate rows, want %d:\n%s", rows, len(choices), out)
	}
}
