package scenarios

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// Validate guards scenarios built in Go, which skip the parser's checks.
func TestValidateHandBuilt(t *testing.T) {
	good := func() *Scenario {
		s, err := Parse("v.yaml", []byte(`name: v
tools: {a: {timeout: 1s}, b: {}}
faults: [{kind: lost_response, tool: a, probability: 0.1}]
recovery: {humans: {reviewers: 1, review_time: 1m}}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("a parsed scenario fails Validate: %v", err)
	}
	cases := []struct {
		name  string
		spoil func(s *Scenario)
		key   string
	}{
		{"bad name", func(s *Scenario) { s.Name = "Bad Name" }, "name"},
		{"zero horizon", func(s *Scenario) { s.Horizon = 0 }, "horizon"},
		{"NaN probability", func(s *Scenario) { s.Workload.Behaviour.Stuck = math.NaN() }, "workload.behaviour.stuck"},
		{"mix names a missing tool", func(s *Scenario) { s.Workload.Mix[0].Tool = "zzz" }, "workload.tools.zzz"},
		{"empty mix", func(s *Scenario) { s.Workload.Mix = nil }, "workload.tools"},
		{"lognormal p95 below median", func(s *Scenario) {
			s.Workload.Steps = Dist{Kind: DistLognormal, Median: 5, P95: 4}
		}, "workload.steps.p95"},
		{"stray parameter", func(s *Scenario) { s.Workload.Think = Dist{Kind: DistExponential, Mean: 1, Alpha: 2} }, "workload.think.alpha"},
		{"lost response without timeout", func(s *Scenario) { s.Tools[0].Timeout = 0 }, "faults[0]"},
		{"duplicate tool", func(s *Scenario) { s.Tools[1].Name = "a" }, "tools.a"},
		{"bad jitter", func(s *Scenario) { s.Recovery.Retry.Jitter = "some" }, "recovery.retry.jitter"},
		{"negative lease", func(s *Scenario) { s.Recovery.Lease = -time.Second }, "recovery.lease"},
		{"zero inspection interval", func(s *Scenario) { s.Recovery.Inspection.Interval = 0 }, "recovery.inspection.interval"},
		{"no inspection lookups", func(s *Scenario) { s.Recovery.Inspection.Max = 0 }, "recovery.inspection.max"},
		{"unknown metric", func(s *Scenario) { s.Expect = []Expectation{{Metric: "speed", Op: ">="}} }, "expect.speed"},
		{"fault index", func(s *Scenario) { s.Faults[0].Index = 3 }, "faults[0].index"},
		{"fault tool on a kind without tools", func(s *Scenario) {
			s.Faults = append(s.Faults, Fault{ID: "1", Index: 1, Kind: FaultWorkerCrash, Tool: "a"})
		}, "faults[1].tool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := good()
			c.spoil(s)
			err := s.Validate()
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Validate() = %v, want an ErrorList", err)
			}
			found := false
			for _, e := range list {
				found = found || e.Key == c.key
			}
			if !found {
				t.Errorf("no error for key %s in:\n%v", c.key, err)
			}
			if !strings.HasPrefix(err.Error(), "v.yaml: ") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}
