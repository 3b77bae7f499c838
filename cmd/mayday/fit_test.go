//go:build duckdb_arrow

package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// knownRun simulates testdata/fit-known.yaml (1500 roots at 600/h; search lognormal median
// 2s with 3% fast failures and 1% lost replies; backtest exponential mean 30s with 5% fast
// failures and an outage from 60m for 15m) into dir and returns its folder.
func knownRun(t *testing.T, dir string) string {
	t.Helper()
	run := filepath.Join(dir, "known")
	if _, stderr, code := execMayday(t, "run", "testdata/fit-known.yaml", "--out", run, "-q"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	return run
}

// TestFitRecoversKnownParameters fits the simulated run of known parameters and checks
// the fitted scenario against them. The tolerances, and why a pass is not luck:
//   - latency medians within 15%: search has about 7300 successes (lognormal σ = 0.84), so
//     its sample median's relative standard error is about 1.25·σ/√n = 1.2%; backtest about
//     2900 (exponential), 1/(ln 2·√n) = 2.6%. 15% is over 5 standard errors.
//   - the arrival rate within 15%: 1500 Poisson arrivals, relative standard error
//     1/√1500 = 2.6%, so 15% is 5.8 standard errors.
//   - failure probabilities inside their 95% Wilson intervals (the claim of the intervals).
//     The seed is fixed, so the outcome is deterministic; a change of the simulator that
//     moved a draw would put a true value outside one of the four with probability about
//     1 − 0.95^4, and the test then says which.
//   - the outage's start and length within two minutes: the window is refined to the
//     attempts, so its error is half a gap between attempts at backtest (about 10s at
//     this load).
func TestFitRecoversKnownParameters(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	dir := t.TempDir()
	run := knownRun(t, dir)
	out := filepath.Join(dir, "fitted.yaml")
	if _, stderr, code := execMayday(t, "fit", run, "--out", out); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	sc, err := scenarios.Load(out, nil)
	if err != nil {
		t.Fatalf("the fitted scenario does not load: %v", err)
	}
	fs, _, err := fitScenario(context.Background(), run, "", "")
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string, got, want, rel float64) {
		if math.Abs(got/want-1) > rel {
			t.Errorf("%s = %.4g, want %.4g within %.0f%%", what, got, want, 100*rel)
		}
	}
	within("arrival rate /h", sc.Workload.Arrival.Rate.PerSecond*3600, 600, 0.15)
	for _, tf := range fs.Tools {
		switch tf.Name {
		case "search":
			within("search latency median", tf.Latency.MedianOf(), 2, 0.15)
			inside(t, "search transient", tf.Transient.Lo, tf.Transient.Hi, 0.03)
			inside(t, "search lost_response", tf.Lost.Lo, tf.Lost.Hi, 0.01)
		case "backtest":
			within("backtest latency median", tf.Latency.MedianOf(), 30*math.Ln2, 0.15)
			inside(t, "backtest transient", tf.Transient.Lo, tf.Transient.Hi, 0.05)
		}
	}
	var outage *scenarios.Fault
	for i := range sc.Faults {
		if sc.Faults[i].Kind == "outage" {
			outage = &sc.Faults[i]
		}
	}
	if outage == nil || outage.Tool != "backtest" {
		t.Fatalf("no backtest outage in the fitted faults: %+v", sc.Faults)
	}
	if d := outage.At.Minutes() - 60; math.Abs(d) > 2 {
		t.Errorf("outage starts at %v, want 60m within 2m", outage.At)
	}
	if d := outage.For.Minutes() - 15; math.Abs(d) > 2 {
		t.Errorf("outage lasts %v, want 15m within 2m", outage.For)
	}
	if sc.Recovery.Retry.MaxAttempts != 4 {
		t.Errorf("max_attempts %d, want 4", sc.Recovery.Retry.MaxAttempts)
	}
	calibrateFitted(t, dir, run, out)
}

// calibrateFitted: calibrate passes the fitted scenario against the run it was fitted to
// and writes the report section; it fails (exit 1) a clearly wrong scenario, the known one
// with search five times slower and no outage, naming the metrics that are off.
func calibrateFitted(t *testing.T, dir, run, fitted string) {
	rep := filepath.Join(dir, "calibration")
	stdout, stderr, code := execMayday(t, "calibrate", run, fitted, "--seeds", "2", "--out", rep)
	if code != 0 || !strings.Contains(stdout, "PASS") {
		t.Errorf("calibrate on the fitted scenario: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, f := range []string{"calibration.md", "calibration.html", "calibration.png"} {
		if st, err := os.Stat(filepath.Join(rep, f)); err != nil || st.Size() == 0 {
			t.Errorf("report section: %s missing or empty (%v)", f, err)
		}
	}
	known, err := os.ReadFile("testdata/fit-known.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(string(known), "median: 2s, p95: 8s", "median: 10s, p95: 40s", 1)
	wrong = strings.Replace(wrong, "  - {id: bt-down, kind: outage, tool: backtest, at: 60m, for: 15m}\n", "", 1)
	if wrong == string(known) {
		t.Fatal("the wrong scenario is the known one")
	}
	wf := filepath.Join(dir, "wrong.yaml")
	if err := os.WriteFile(wf, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code = execMayday(t, "calibrate", run, wf, "--seeds", "1")
	if code != 1 {
		t.Errorf("calibrate on a wrong scenario: exit %d, want 1\n%s", code, stdout)
	}
	for _, want := range []string{"latency_ks search", "incidents backtest"} {
		line := ""
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, want) {
				line = l
			}
		}
		if !strings.HasSuffix(line, "FAIL") {
			t.Errorf("%s should fail against the wrong scenario: %q", want, line)
		}
	}
	if _, stderr, code := execMayday(t, "calibrate", run, filepath.Join(dir, "missing.yaml")); code != 2 {
		t.Errorf("calibrate with a missing scenario: exit %d, want 2: %s", code, stderr)
	}
}

func inside(t *testing.T, what string, lo, hi, want float64) {
	t.Helper()
	if want < lo || want > hi {
		t.Errorf("%s: 95%% interval [%.4g, %.4g] misses the true %.4g", what, lo, hi, want)
	}
}

func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := execMayday(t, "fit", filepath.Join(dir, "nothing")); code != 2 || !strings.Contains(stderr, "no run folder") {
		t.Errorf("missing run: exit %d, %q; want 2 naming it", code, stderr)
	}
	out := filepath.Join(dir, "exists.yaml")
	if err := os.WriteFile(out, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := execMayday(t, "fit", dir, "--out", out); code != 2 {
		t.Errorf("existing --out: exit %d, %q; want 2", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "x" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, stderr, code := execMayday(t, "fit", dir, "--name", "Bad Name"); code != 2 || !strings.Contains(stderr, "--name") {
		t.Errorf("bad --name: exit %d, %q; want 2 naming --name", code, stderr)
	}
}

// TestFitRealToolNames: a run whose tools are named as real fleets name them (capitals,
// dots, a slash and a space) fits to a file that loads back naming the same tools, that
// --set addresses with a quoted name, and that calibrate passes against the run. With --out
// fit prints one line; -q prints nothing.
func TestFitRealToolNames(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "names")
	if _, stderr, code := execMayday(t, "run", "testdata/fit-names.yaml", "--out", run, "-q"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "fitted.yaml")
	stdout, stderr, code := execMayday(t, "fit", run, "--out", out)
	if code != 0 || !strings.HasPrefix(stdout, "wrote "+out) {
		t.Fatalf("fit: exit %d, stdout %q: %s", code, stdout, stderr)
	}
	if stdout, _, code := execMayday(t, "fit", run, "--out", out, "--force", "-q"); code != 0 || stdout != "" {
		t.Errorf("fit -q: exit %d, stdout %q; want nothing", code, stdout)
	}
	sc, err := scenarios.Load(out, []string{`tools."mcp.github.create_issue".timeout=45s`})
	if err != nil {
		t.Fatalf("the fitted scenario does not load: %v", err)
	}
	var names []string
	for _, tl := range sc.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"Bash", "WebSearch", "mcp.github.create_issue", "web search/v2"}; strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("tools %q, want %q", names, want)
	}
	if got := sc.Tools[sc.Tool("mcp.github.create_issue")].Timeout.Seconds(); got != 45 {
		t.Errorf("--set of the quoted name: timeout %vs, want 45s", got)
	}
	if stdout, stderr, code := execMayday(t, "calibrate", run, out, "--seeds", "3"); code != 0 {
		t.Errorf("calibrate: exit %d\n%s%s", code, stdout, stderr)
	}
}
