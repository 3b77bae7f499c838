//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/internal/fixturetruth"
)

// libraryTruth is what the test reads of a real-library fixture's truth.json: the fleet's
// retry policy, its services (the keys of per_service), its runs and their operations.
type libraryTruth struct {
	Params struct {
		MaxAttempts    int     `json:"max_attempts"`
		PAbortOnGiveUp float64 `json:"p_abort_on_give_up"`
	} `json:"params"`
	PerService map[string]json.RawMessage `json:"per_service"`
	Runs       []struct {
		RunID   string `json:"run_id"`
		Service string `json:"service"`
		Outcome string `json:"outcome"` // completed or failed
	} `json:"runs"`
	Operations []struct {
		OpID     string `json:"op_id"`
		RunID    string `json:"run_id"`
		Attempts int    `json:"attempts"`
		Outcome  string `json:"outcome"` // succeeded, recovered, refused or gave_up
	} `json:"operations"`
}

// exhausted counts, for one service, the operations whose attempts ran out (outcome
// gave_up after max_attempts attempts) by what their run did next: it gave up (the run
// failed) or went on (the run completed without the step).
//
// An exhausted operation that a trace reads as going on into the next one (its retries:
// fixturetruth.Continued) is not an exhaustion the trace shows: the one it goes on into
// is counted in its place, when it ran out in turn.
func (tr *libraryTruth) exhausted(service string, continued map[string]string) (gaveUp, wentOn int) {
	goesOn := map[string]bool{}
	for _, prev := range continued {
		goesOn[prev] = true
	}
	outcome := map[string]string{}
	for _, r := range tr.Runs {
		if r.Service == service {
			outcome[r.RunID] = r.Outcome
		}
	}
	for _, o := range tr.Operations {
		if o.Outcome != "gave_up" || o.Attempts < tr.Params.MaxAttempts || goesOn[o.OpID] {
			continue
		}
		switch outcome[o.RunID] {
		case "failed":
			gaveUp++
		case "completed":
			wentOn++
		}
	}
	return gaveUp, wentOn
}

// TestCalibrateLibraryFixtures imports every real-library fixture of
// analysis/testdata/libraries service by service, fits each service's run and requires
// calibrate to pass the fitted scenario against the import, with 4 seeds (t(0.975; 3) =
// 3.18 in the prediction interval: 2 seeds would make it 12.7 and let almost anything
// pass). The fixtures are fixed files and the simulation is deterministic, so the outcome
// is too.
//
// Each fleet retries a failed tool up to params.max_attempts attempts, then the run gives
// up (terminated) with probability p_abort_on_give_up or goes on without the tool; fit
// must read those attempts (not the largest attempt number, which operations the import
// joins can double) and what runs did after them: on_exhausted reduce_scope with give_up
// the share of truth.json's exhausted operations whose run then failed (within two
// operations moved either way: the fit counts what the trace shows, which may join or
// split an operation the truth counts once), terminate when none went on.
//
// adk cannot show a run that gave up: ADK JS 2.0 sets no error status on any span, so a
// failed run reads completed and its last attempt a success, its gave-up episode
// recovered (docs/import.md). When the import holds no terminated investigation, the
// truth's gave-up operations are not in the trace, and the test compares with what the
// trace can show: its went-on operations alone (reduce_scope).
//
// openllmetry cannot show any of this: OpenLLMetry 0.27.0 never ends the span of a tool
// call that throws, so no failed attempt reaches the file (truth.json counts them) and
// no fit can see a retry or a give-up. There the test checks what can be checked: calibrate
// passes on what the file holds (successes, latencies, model turns, arrivals), and the fit
// reads no retry (max_attempts 1) and no exhaustion rather than inventing one.
func TestCalibrateLibraryFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("imports")
	}
	const root = "../../analysis/testdata/libraries"
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fixtures := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		fixtures++
		folder := filepath.Join(root, e.Name())
		data, err := os.ReadFile(filepath.Join(folder, "truth.json"))
		if err != nil {
			t.Fatal(err)
		}
		var truth libraryTruth
		if err := json.Unmarshal(data, &truth); err != nil {
			t.Fatalf("%s: %v", folder, err)
		}
		traces, err := filepath.Glob(filepath.Join(folder, "traces.*"))
		if err != nil || len(traces) != 1 {
			t.Fatalf("%s: want one traces.* file, got %v (%v)", folder, traces, err)
		}
		var services []string
		for s := range truth.PerService {
			services = append(services, s)
		}
		slices.Sort(services)
		if len(services) == 0 {
			t.Fatalf("%s: truth.json names no service", folder)
		}
		for _, svc := range services {
			t.Run(e.Name()+"/"+svc, func(t *testing.T) {
				run := filepath.Join(dir, e.Name()+"-"+svc)
				if _, stderr, code := execMayday(t, "import", traces[0], "--service", svc, "--out", run, "-q"); code != 0 {
					t.Fatalf("import: exit %d: %s", code, stderr)
				}
				out := run + ".yaml"
				if _, stderr, code := execMayday(t, "fit", run, "--out", out, "-q"); code != 0 {
					t.Fatalf("fit: exit %d: %s", code, stderr)
				}
				sc, _, err := fitScenario(context.Background(), run, "", "")
				if err != nil {
					t.Fatal(err)
				}
				x := sc.Retry.Exhaust
				noFailedSpans := e.Name() == "openllmetry"
				switch {
				case noFailedSpans:
					if sc.Retry.MaxAttempts != 1 || x.Exhausted != 0 || x.OnExhausted != "" {
						t.Errorf("no failed attempt is in the file, yet the fit read a retry: %+v", sc.Retry)
					}
				default:
					if sc.Retry.MaxAttempts != truth.Params.MaxAttempts {
						t.Errorf("max_attempts %d (largest attempt number %d), want the fleet's %d; %+v",
							sc.Retry.MaxAttempts, sc.Retry.Largest, truth.Params.MaxAttempts, x)
					}
					records, err := fixturetruth.Parse(data)
					if err != nil {
						t.Fatal(err)
					}
					continued, err := records.Continued(svc)
					if err != nil {
						t.Fatal(err)
					}
					gaveUp, wentOn := truth.exhausted(svc, continued)
					hidden := observedTerminated(t, run) == 0
					t.Logf("truth: %d exhausted operations gave up, %d went on (gave-ups hidden by the trace: %t); fit: %+v",
						gaveUp, wentOn, hidden, x)
					if hidden {
						gaveUp = 0
					}
					// Some went on: reduce_scope, with give_up the share that gave up; the
					// trace may join or split an operation the truth counts once, so the
					// share may be that of two operations moved to either side.
					want, lo, hi := "terminate", 0.0, 0.0
					if n := gaveUp + wentOn; wentOn > 0 {
						want = "reduce_scope"
						lo = float64(max(gaveUp-2, 0)) / float64(n+2)
						hi = float64(gaveUp+2) / float64(max(n-2, 1))
					}
					if x.OnExhausted != want || x.GiveUp < lo || x.GiveUp > hi {
						t.Errorf("exhaustion %+v, want %s with give_up in [%.3f, %.3f] (truth: %d gave up, %d went on)",
							x, want, lo, hi, gaveUp, wentOn)
					}
					// The fleet gives up with probability p_abort_on_give_up (0.5) after each
					// exhaustion of a run that has not given up: with 11 or more exhaustions
					// per service both outcomes show unless 0.5^11 < 0.001 happened. A trace
					// that shows no terminated investigation cannot show the first.
					if x.WentOn == 0 && wentOn > 0 || x.GaveUp == 0 && gaveUp > 0 {
						t.Errorf("exhaustion %+v, want runs that gave up and runs that went on (truth: %d gave up, %d went on)", x, gaveUp, wentOn)
					}
				}
				stdout, stderr, code := execMayday(t, "calibrate", run, out, "--seeds", "4")
				if code != 0 {
					t.Errorf("calibrate: exit %d\n%s%s", code, stdout, stderr)
				}
			})
		}
	}
	if fixtures == 0 {
		t.Fatalf("no fixture under %s", root)
	}
}

// observedTerminated is the imported run's terminated_rate: 0 when its trace shows no
// investigation that gave up.
func observedTerminated(t *testing.T, run string) float64 {
	t.Helper()
	obs, err := observe(context.Background(), run, "")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := obs.Metrics["terminated_rate"]
	if !ok {
		t.Fatalf("%s: the run has no terminated_rate", run)
	}
	return r
}
