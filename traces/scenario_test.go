package traces

import (
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

func secretScenario() *scenarios.Scenario {
	return &scenarios.Scenario{
		Redact: []string{"passphrase"},
		Tools: []scenarios.Tool{{Name: "fetch", Arguments: []scenarios.Argument{
			{Key: "api_key", Value: "tool-secret-1"},
			{Key: "query", Value: "not a secret"},
			{Key: "token", Value: ""},
			{Key: "passphrase", Value: "tool-secret-2"},
		}}},
		Sweep: []scenarios.SweepAxis{
			{Path: "tools.fetch.arguments.api_key", Values: []string{"sweep-secret-1", ""}},
			{Path: "workload.investigations", Values: []string{"10", "20"}},
			{Path: "password", Values: []string{"sweep-secret-2"}},
		},
	}
}

// TestScenarioOptions: the secrets a run must never store are the values of the tools'
// arguments under secret-looking keys (the built-in ones and the scenario's own redact
// patterns) and the values of sweep axes whose path ends in such a key, empty values left
// out; the scenario's patterns pass through.
func TestScenarioOptions(t *testing.T) {
	opts := ScenarioOptions(secretScenario())
	want := []string{"tool-secret-1", "tool-secret-2", "sweep-secret-1", "sweep-secret-2"}
	if !slices.Equal(opts.Secrets, want) {
		t.Errorf("secrets %q, want %q", opts.Secrets, want)
	}
	if !slices.Equal(opts.Redact, []string{"passphrase"}) {
		t.Errorf("redact %q", opts.Redact)
	}
}

// TestParamRedactor: a swept value under a secret-looking last key is replaced by its hash,
// whatever comes before; every other value is redacted as free text, which removes the
// scenario's known secrets and leaves the rest alone. Only the last key of the path counts:
// api_key.note is a note.
func TestParamRedactor(t *testing.T) {
	s := secretScenario()
	red := ParamRedactor(s)
	opts := ScenarioOptions(s)
	h := NewRedactor(nil, opts.Redact, opts.Secrets)
	for _, path := range []string{"tools.fetch.arguments.api_key", "password", "x.passphrase"} {
		if got, want := red(path, "sweep-secret-1"), h.Hash("sweep-secret-1"); got != want || strings.Contains(got, "secret") {
			t.Errorf("%s: %q, want the hash %q", path, got, want)
		}
	}
	for _, path := range []string{"workload.investigations", "api_key.note", "note"} {
		if got := red(path, "20"); got != "20" {
			t.Errorf("%s=20: %q, want it unchanged", path, got)
		}
	}
	if got := red("workload.name", "run with tool-secret-2 inside"); strings.Contains(got, "tool-secret-2") || !strings.HasPrefix(got, "run with ") {
		t.Errorf("a known secret in a free value: %q", got)
	}
}

// TestParamRedactorLastKeyOnly: only the last key of a swept path is matched against the
// patterns, so a scenario's pattern that contains a dot can never match across keys: the
// pattern ".note" matches no key, neither that of notes.note nor that of .note.
func TestParamRedactorLastKeyOnly(t *testing.T) {
	s := &scenarios.Scenario{Redact: []string{".note"}}
	red := ParamRedactor(s)
	for _, path := range []string{"notes.note", ".note", "note"} {
		if got := red(path, "20"); got != "20" {
			t.Errorf("%s=20: %q, want it unchanged", path, got)
		}
	}
}
