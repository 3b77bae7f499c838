//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

type compareJSON struct {
	Paired  bool    `json:"paired"`
	Each    float64 `json:"interval_confidence"`
	M       int     `json:"metrics_compared"`
	Metrics []struct {
		Metric      string   `json:"metric"`
		Diff        *float64 `json:"diff"`
		Lo          *float64 `json:"lo"`
		Hi          *float64 `json:"hi"`
		Verdict     string   `json:"verdict"`
		Significant bool     `json:"significant"`
		Better      string   `json:"better"`
	} `json:"metrics"`
}

func compareOut(t *testing.T, args ...string) compareJSON {
	t.Helper()
	out, errOut, code := execMayday(t, append([]string{"compare", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("compare %v: exit %d\n%s", args, code, errOut)
	}
	var c compareJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("compare JSON: %v\n%s", err, out)
	}
	return c
}

func runFolder(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, errOut, code := execMayday(t, append([]string{"run", "testdata/retried.yaml", "--out", dir, "-q"}, args...)...); code != 0 {
		t.Fatalf("run %v: exit %d\n%s", args, code, errOut)
	}
	return dir
}

// One attempt against five under 20% transient failures: completion drops from nearly 1 to
// about 0.37, a difference of some 13 standard deviations of one seed's completion rate over
// 100 investigations, so compare marks it with five seeds per side even at the Bonferroni
// level. Two runs of one policy on different seeds differ only by noise: with the family-wise
// error held at 5%, no metric is marked (these seeds are fixed, so the test is
// deterministic; a mark here would mean the intervals are too narrow).
func TestCompare(t *testing.T) {
	tmp := t.TempDir()
	one := runFolder(t, filepath.Join(tmp, "one"), "--seeds", "5", "--set", "recovery.retry.max_attempts=1")
	five := runFolder(t, filepath.Join(tmp, "five"), "--seeds", "5")
	oneAgain := runFolder(t, filepath.Join(tmp, "one-again"), "--seeds", "5", "--seed", "101", "--set", "recovery.retry.max_attempts=1")

	differ := compareOut(t, one, five)
	if !differ.Paired || differ.M < 10 || math.Abs(differ.Each-(1-0.05/float64(differ.M))) > 1e-12 {
		t.Errorf("paired=%v, %d metrics at %v: want paired seeds and each interval at 1-0.05/M", differ.Paired, differ.M, differ.Each)
	}
	found := false
	for _, m := range differ.Metrics {
		if m.Metric == "completion_rate" {
			found = true
			if !m.Significant || m.Better != "b" || *m.Lo <= 0 {
				t.Errorf("completion_rate, 1 vs 5 attempts: %+v; want marked, B better, interval above 0", m)
			}
		}
	}
	if !found {
		t.Fatal("completion_rate not compared")
	}

	same := compareOut(t, one, oneAgain)
	if same.Paired {
		t.Errorf("seeds 1..5 and 101..105 must not be paired")
	}
	for _, m := range same.Metrics {
		if m.Significant {
			t.Errorf("same policy, other seeds: %s marked (%+v)", m.Metric, m)
		}
	}

	// The text output names the correction and marks the difference.
	out, _, code := execMayday(t, "compare", one, five)
	if code != 0 || !strings.Contains(out, "Bonferroni over") || !strings.Contains(out, "* B better") {
		t.Errorf("text output (exit %d) lacks the correction or the mark:\n%s", code, out)
	}
}

// A sweep database holds several configurations: compare needs a point per side.
func TestCompareSweepPoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	if _, errOut, code := execMayday(t, "sweep", "testdata/sweep.yaml", "--seeds", "3", "--out", dir, "-q"); code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, errOut)
	}
	_, errOut, code := execMayday(t, "compare", dir, dir)
	if code != 2 || !strings.Contains(errOut, "--point-a") {
		t.Errorf("compare of a sweep without points: exit %d, %q; want 2 and a hint to --point-a", code, errOut)
	}
	// One metric only: a family of one, at 95%.
	c := compareOut(t, dir, dir, "--point-a", "0", "--point-b", "2", "--metrics", "completion_rate")
	if len(c.Metrics) != 1 || c.M != 1 || c.Each != 0.95 {
		t.Fatalf("--metrics completion_rate: %d metrics, family %d at %v; want 1, 1, 0.95", len(c.Metrics), c.M, c.Each)
	}
	if m := c.Metrics[0]; !m.Significant || m.Better != "b" {
		t.Errorf("completion_rate, max_attempts 1 vs 5 over 3 paired seeds: %+v; want B better", m)
	}
	if _, errOut, code := execMayday(t, "compare", dir, dir, "--point-a", "7", "--point-b", "0"); code != 2 || !strings.Contains(errOut, "0, 1, 2") {
		t.Errorf("--point-a 7: exit %d, %q; want 2 listing the points", code, errOut)
	}
}
