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
