//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mayday-sim/mayday/fit"
)

// otelFleet is what the fit tests read of analysis/testdata/otel/params.json: the known
// parameters the OpenTelemetry SDK fixtures were drawn from.
type otelFleet struct {
	Fleet struct {
		Name             string  `json:"name"`
		ArrivalPerMinute float64 `json:"arrival_per_minute"`
		Tools            []struct {
			Name               string  `json:"name"`
			MedianSeconds      float64 `json:"median_seconds"`
			ErrorProbability   float64 `json:"error_probability"`
			TimeoutProbability float64 `json:"timeout_probability"`
		} `json:"tools"`
		Outage struct {
			Tool        string  `json:"tool"`
			StartMinute float64 `json:"start_minute"`
			Minutes     float64 `json:"minutes"`
		} `json:"outage"`
		Retry struct {
			MaxAttempts int `json:"max_attempts"`
		} `json:"retry"`
	} `json:"fleet"`
	Files []string `json:"files"`
}

// TestFitRecoversOTelFixtures imports the SDK-made fixtures of both conventions, fits
// them and calibrates each fit against its import. The fixtures are fixed files, so the
// outcome is deterministic; the tolerances are the issue's, and the sample sizes make
// them hold by several standard errors:
//   - latency medians within 15%: the smallest tool sample is about 130 successes of a
//     lognormal with σ ≤ 0.6, whose sample median has a relative standard error of about
//     1.25·σ/√n ≤ 6.6%, so 15% is over 2 standard errors (and the true medians lie well
//     inside: see the test's output on failure).
//   - failure probabilities inside their 95% Wilson intervals. The fixtures draw a timeout
//     first, then an error among the rest: the share of fast failures is
//     (1 − timeout)·error, and the share of timeouts among attempts that did not fail fast
//     is timeout/(timeout + (1 − timeout)(1 − error)).
//   - the outage's start and length within two minutes.
//   - the arrival rate within 15%: 129 arrivals (the smaller fleet) have a relative
//     standard error of 1/√129 = 8.8%; the larger, 276, 6%.
func TestFitRecoversOTelFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("imports")
	}
	data, err := os.ReadFile("../../analysis/testdata/otel/params.json")
	if err != nil {
		t.Fatal(err)
	}
	var fleets []otelFleet
	if err := json.Unmarshal(data, &fleets); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range fleets {
		if f.Fleet.Name != "genai-fleet" && f.Fleet.Name != "openinference-fleet" {
			continue // the tiny fixture is too small to fit
		}
		t.Run(f.Fleet.Name, func(t *testing.T) {
			run := filepath.Join(dir, f.Fleet.Name)
			if _, stderr, code := execMayday(t, "import", filepath.Join("../../analysis/testdata/otel", f.Files[0]), "--out", run, "-q"); code != 0 {
				t.Fatalf("import: exit %d: %s", code, stderr)
			}
			out := filepath.Join(dir, f.Fleet.Name+".yaml")
			if _, stderr, code := execMayday(t, "fit", run, "--out", out); code != 0 {
				t.Fatalf("fit: exit %d: %s", code, stderr)
			}
			sc, _, err := fitScenario(context.Background(), run, "", "")
			if err != nil {
				t.Fatal(err)
			}
			checkOTelFit(t, f, sc)
			// The fitted scenario passes calibrate against the import it was fitted to.
			if stdout, stderr, code := execMayday(t, "calibrate", run, out, "--seeds", "2"); code != 0 {
				t.Errorf("calibrate: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

func checkOTelFit(t *testing.T, f otelFleet, sc fit.Scenario) {
	if got, want := sc.Arrival.Rate.PerSec*60, f.Fleet.ArrivalPerMinute; math.Abs(got/want-1) > 0.15 {
		t.Errorf("arrival %.3g/min, want %.3g within 15%%", got, want)
	}
	for _, want := range f.Fleet.Tools {
		var tf *fit.ToolFit
		for i := range sc.Tools {
			if sc.Tools[i].Name == want.Name {
				tf = &sc.Tools[i]
			}
		}
		if tf == nil || tf.Latency == nil {
			t.Errorf("tool %s: not fitted", want.Name)
			continue
		}
		if m := tf.Latency.MedianOf(); math.Abs(m/want.MedianSeconds-1) > 0.15 {
			t.Errorf("%s: latency median %.4g, want %.4g within 15%%", want.Name, m, want.MedianSeconds)
		}
		pt, pe := want.TimeoutProbability, want.ErrorProbability
		inside(t, want.Name+" transient", tf.Transient.Lo, tf.Transient.Hi, (1-pt)*pe)
		if pt > 0 {
			inside(t, want.Name+" lost_response", tf.Lost.Lo, tf.Lost.Hi, pt/(pt+(1-pt)*(1-pe)))
		}
	}
	var outage *fit.FaultFit
	for i := range sc.Faults {
		if sc.Faults[i].Kind == "outage" && sc.Faults[i].Tool == f.Fleet.Outage.Tool {
			outage = &sc.Faults[i]
		}
	}
	if outage == nil {
		t.Fatalf("no outage of %s among %+v", f.Fleet.Outage.Tool, sc.Faults)
	}
	if d := outage.At/60 - f.Fleet.Outage.StartMinute; math.Abs(d) > 2 {
		t.Errorf("outage at %.2f min, want %.0f within 2", outage.At/60, f.Fleet.Outage.StartMinute)
	}
	if d := outage.For/60 - f.Fleet.Outage.Minutes; math.Abs(d) > 2 {
		t.Errorf("outage for %.2f min, want %.0f within 2", outage.For/60, f.Fleet.Outage.Minutes)
	}
	if sc.Retry.MaxAttempts != f.Fleet.Retry.MaxAttempts {
		t.Errorf("max_attempts %d, want %d", sc.Retry.MaxAttempts, f.Fleet.Retry.MaxAttempts)
	}
}
