package scenarios

import (
	"strings"
	"testing"
	"time"
)

const huntFile = `name: t
tools:
  search: {latency: {dist: constant, value: 1s}, timeout: 30s}
hunt:
  faults:
    - {kind: ramp_test, tool: search, for: {min: 1m, max: 5m}, climb: 30s, summit: {min: 1.5, max: 50}}
    - {kind: transient, tool: search, probability: {min: 0.01, max: 0.2}}
    - {kind: outage, for: 2m, at: {min: 1h, max: 2h}}
  at: {min: 5m, max: 30m}
  budget: 10m
  liveness: 15m
`

// A hunt entry takes ranges of any numeric key of its kind, a kind's own parameters
// included, and fixed values of the others; the entries a trial draws are faults of the
// scenario.
func TestHuntBlock(t *testing.T) {
	withRampKind(t)
	s, err := Parse("t.yaml", []byte(huntFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Hunt
	if h == nil || len(h.Faults) != 3 || h.BudgetTime != 10*time.Minute || h.Budget != 0 || h.Liveness != 15*time.Minute || h.MaxFaults != 3 {
		t.Fatalf("hunt = %+v", h)
	}
	ramp := h.Faults[0]
	if p := ramp.Param("summit"); p == nil || p.Kind != TuneNumber || p.Min != 1.5 || p.Max != 50 {
		t.Errorf("summit = %+v; want a number range [1.5, 50]", p)
	}
	if p := ramp.Param("climb"); p == nil || p.Kind != TuneChoice || p.Choices[0] != "30s" {
		t.Errorf("climb = %+v; want the fixed value 30s", p)
	}
	if p := ramp.Param("for"); p == nil || p.Kind != TuneDuration || p.Min != 60 || p.Max != 300 {
		t.Errorf("for = %+v; want a duration range [60, 300] s", p)
	}
	if at := h.AtParam(&h.Faults[2]); at.Min != 3600 || at.Max != 7200 {
		t.Errorf("the outage's own at range = %+v; want [1h, 2h]", at)
	}
	if at := h.AtParam(&ramp); at.Min != 300 || at.Max != 1800 {
		t.Errorf("the block's at range = %+v; want [5m, 30m]", at)
	}
	u := make([]float64, len(ramp.Params))
	for i := range u {
		u[i] = 1
	}
	e := ramp.Entry(u, "7m")
	if e != "{kind: ramp_test, tool: search, for: 5m, climb: 30s, summit: 50, at: 7m}" {
		t.Errorf("Entry = %s", e)
	}
	got, err := s.With(Override{Path: "faults", Value: "[" + e + "]", From: FromHunt}, Override{Path: "hunt", From: FromHunt})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Faults) != 1 || got.Faults[0].At != 7*time.Minute || got.Faults[0].Params.(*rampParams).Peak != 50 || got.Hunt != nil {
		t.Errorf("the trial's faults = %+v, hunt %v", got.Faults, got.Hunt)
	}
	if _, err := Parse("t.yaml", []byte(huntFile), []string{"hunt.max_faults=2", "hunt.at.max=20m"}); err != nil {
		t.Errorf("--set of the block's keys: %v", err)
	}
}

// Each range is checked as the kind's key at both bounds, at its line; the envelope's
// entries cannot be overridden.
func TestHuntErrors(t *testing.T) {
	withRampKind(t)
	for _, c := range []struct{ from, to, want string }{
		{"summit: {min: 1.5, max: 50}", "summit: {min: 0.5, max: 50}", "t.yaml:6: hunt.faults[0].summit: 0.5 is too small"},
		{"summit: {min: 1.5, max: 50}", "summit: {min: 1.5, max: 500}", "t.yaml:6: hunt.faults[0].summit: 500 is too large"},
		{"probability: {min: 0.01, max: 0.2}", "probability: {min: 0.3, max: 0.2}", "t.yaml:7: hunt.faults[1].probability: max 0.2 is below min 0.3"},
		{"{kind: outage, for: 2m", "{kind: outage, rate: 1/h, for: 2m", "t.yaml:8: hunt.faults[2].rate: an outage fault takes no rate"},
		{"{kind: outage, for: 2m", "{kind: outage, tool: nope, for: 2m", `t.yaml:8: hunt.faults[2].tool: unknown tool "nope"`},
		{"{kind: outage, for: 2m", "{kind: outrage, for: 2m", `t.yaml:8: hunt.faults[2].kind: "outrage" is not a fault kind`},
		{"{kind: transient, tool: search, probability: {min: 0.01, max: 0.2}}", "{kind: brownout, tool: search, probability: 0}", "t.yaml:7: hunt.faults[1]: a brownout fault needs for"},
		{"  at: {min: 5m, max: 30m}\n", "", "t.yaml:5: hunt: missing at"},
		{"budget: 10m", "budget: -3", "t.yaml:10: hunt.budget: \"-3\" is not a budget"},
		{"at: {min: 5m, max: 30m}", "at: {min: 30m, max: 29m}", "t.yaml:9: hunt.at: max 29m is below min 30m"},
	} {
		file := strings.Replace(huntFile, c.from, c.to, 1)
		_, err := Parse("t.yaml", []byte(file), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: got %v; want %s", c.from, c.to, err, c.want)
		}
	}
	_, err := Parse("t.yaml", []byte(huntFile), []string{"hunt.faults[0].summit=2"})
	if err == nil || !strings.Contains(err.Error(), "cannot be overridden") {
		t.Errorf("--set of an envelope entry: %v", err)
	}
}

// A hunt's at range may be a single instant, min equal to max: every window then starts
// there. Built in Go, a range whose min is above its max is refused by Validate.
func TestHuntAtOneInstant(t *testing.T) {
	withRampKind(t)
	s, err := Parse("t.yaml", []byte(huntFile), []string{"hunt.at={min: 10m, max: 10m}"})
	if err != nil {
		t.Fatalf("at {min: 10m, max: 10m}: %v; want valid", err)
	}
	ramp := s.Hunt.Faults[0]
	if at := s.Hunt.AtParam(&ramp); at.Min != 600 || at.Max != 600 {
		t.Errorf("the block's at range = %+v; want [10m, 10m]", at)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate of at {min: 10m, max: 10m}: %v; want valid", err)
	}
	s.Hunt.At = HuntSpan{Min: 30 * time.Minute, Max: 29 * time.Minute}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "hunt.at: min 30m above max 29m; want min <= max") {
		t.Errorf("Validate of at {min: 30m, max: 29m}: %v; want hunt.at: min 30m above max 29m", err)
	}
}

// An envelope range that passes the decoder's checks of each value but that the kind or the
// size model refuses in a trial (a brownout's slowdown up to 1e300, beyond MaxFactor) is
// refused by validation, naming the entry's key and its line, not at run time trial by
// trial. A range within the bounds passes.
func TestHuntEnvelopeWithinKindBounds(t *testing.T) {
	withRampKind(t)
	const brownout = "{kind: transient, tool: search, probability: {min: 0.01, max: 0.2}}"
	for _, c := range []struct{ to, want string }{
		{"{kind: brownout, tool: search, for: {min: 30s, max: 3m}, slowdown: {min: 1.2, max: 1e300}}", "t.yaml:7: hunt.faults[1].slowdown: 1e+300; want at most 1e+06"},
		{"{kind: brownout, tool: search, for: {min: 30s, max: 3m}, slowdown: {min: 1.2, max: 2e6}}", "hunt.faults[1].slowdown: 2e+06; want at most"},
	} {
		_, err := Parse("t.yaml", []byte(strings.Replace(huntFile, brownout, c.to, 1)), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "at its max") {
			t.Errorf("%s: got %v; want %s", c.to, err, c.want)
		}
	}
	ok := strings.Replace(huntFile, brownout, "{kind: brownout, tool: search, for: {min: 30s, max: 3m}, slowdown: {min: 1.2, max: 1e6}}", 1)
	if _, err := Parse("t.yaml", []byte(ok), nil); err != nil {
		t.Errorf("slowdown up to MaxFactor: %v", err)
	}
}
