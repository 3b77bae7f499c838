package scenarios

import (
	"strings"
	"testing"
)

const foundFile = `name: t
tools:
  search: {latency: {dist: constant, value: 1s}, timeout: 30s}
faults:
  - {kind: outage, tool: search, at: 10m, for: 2m}
  - {kind: transient, tool: search, probability: 0.1}
sweep:
  recovery.retry.max_attempts: [2, 3]
hunt:
  faults:
    - {kind: outage, tool: search, for: {min: 1m, max: 5m}}
  at: {min: 5m, max: 30m}
  budget: 10
tune:
  vary: {recovery.retry.max_attempts: {min: 1, max: 5}}
  maximize: completion_rate
expect:
  completion_rate: ">= 0.5"
`

// The faults list as its file writes it after the overrides; a scenario built in Go has no
// text to read them from.
func TestFaultEntries(t *testing.T) {
	s, err := Parse("t.yaml", []byte(foundFile), []string{"faults[1].probability=0.25"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.FaultEntries()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"kind": "outage", "tool": "search", "at": "10m", "for": "2m"}`, `{"kind": "transient", "tool": "search", "probability": 0.25}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("FaultEntries = %q, want %q", got, want)
	}
	// Each entry is an override of faults as it stands.
	if back, err := s.With(Override{Path: "faults", Value: "[" + strings.Join(got, ", ") + "]"}); err != nil || len(back.Faults) != 2 || back.Faults[1].Probability != 0.25 {
		t.Errorf("the entries as an override: %v", err)
	}
	none, err := Parse("t.yaml", []byte(strings.Split(foundFile, "faults:\n  - {kind: outage, tool: search, at")[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := none.FaultEntries(); err != nil || len(got) != 0 {
		t.Errorf("no faults: %q, %v", got, err)
	}
	if _, err := (&Scenario{Name: "go"}).FaultEntries(); err == nil || !strings.Contains(err.Error(), "no source text") {
		t.Errorf("a scenario without source: %v", err)
	}
}

// What hunt writes: the overrides applied, the blocks of commands gone wherever they stand,
// every other block kept, and the result a valid scenario.
func TestFound(t *testing.T) {
	out, err := Found("t.yaml", []byte(foundFile), []Override{{Path: "faults", Value: "[{kind: outage, tool: search, at: 7m, for: 90s}]", From: FromHunt}})
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, gone := range []string{"hunt:", "tune:", "sweep:", "transient"} {
		if strings.Contains(text, gone) {
			t.Errorf("Found kept %q:\n%s", gone, text)
		}
	}
	for _, kept := range []string{"name: t", "search:", "at: 7m", "for: 90s", "expect:", "completion_rate"} {
		if !strings.Contains(text, kept) {
			t.Errorf("Found lost %q:\n%s", kept, text)
		}
	}
	s, err := Parse("found.yaml", out, nil)
	if err != nil || len(s.Faults) != 1 || s.Hunt != nil || s.Tune != nil || s.Sweep != nil {
		t.Errorf("the found scenario: %+v, %v", s, err)
	}
	// Blocks of commands at the end and next to each other are all removed.
	tail := "name: t\ntools:\n  a: {latency: 1s, timeout: 30s}\ntune:\n  vary: {recovery.retry.max_attempts: {min: 1, max: 5}}\n  maximize: completion_rate\nsweep:\n  recovery.retry.max_attempts: [2, 3]\n"
	if out, err := Found("t.yaml", []byte(tail), nil); err != nil || strings.Contains(string(out), "tune") || strings.Contains(string(out), "sweep") {
		t.Errorf("trailing blocks: %s, %v", out, err)
	}
	if _, err := Found("t.yaml", []byte(foundFile), []Override{{Path: "faults", Value: "[{kind: outage, tool: nope, for: 1m}]", From: FromHunt}}); err == nil {
		t.Error("Found accepted a fault of an unknown tool")
	}
	if _, err := Found("t.yaml", []byte(foundFile), []Override{{Path: "no.such.key", Value: "1", From: FromHunt}}); err == nil {
		t.Error("Found accepted an override of an unknown key")
	}
}
