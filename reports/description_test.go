//go:build duckdb_arrow

package reports

import (
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
)

// stored is a scenario as a run stores it: its JSON is runs.config, redacted by the trace
// writer (research-fleet's tool arguments hold an api_key).
type stored struct{ *scenarios.Scenario }

func (s *stored) JSON() []byte {
	opts := traces.ScenarioOptions(s.Scenario)
	return []byte(traces.NewRedactor(opts.RedactKey, opts.Redact, opts.Secrets).JSON(string(s.Scenario.JSON())))
}

// A description written for an example's values says what a run changed in them; one the
// run did not change, or the user's own, is shown as it is.
func TestHonestDescription(t *testing.T) {
	load := func(name string, sets ...string) *stored {
		t.Helper()
		s, err := scenarios.Load(name, sets)
		if err != nil {
			t.Fatal(err)
		}
		return &stored{s}
	}
	plain := load("research-fleet")
	if !strings.Contains(plain.Description, "10,000") {
		t.Fatalf("the example's description no longer quotes its size: %q", plain.Description)
	}
	if string(plain.JSON()) == string(plain.Scenario.JSON()) {
		t.Fatal("research-fleet's stored config redacts nothing: the test no longer checks that a redacted value is no override")
	}
	if got := honestDescription(plain.Name, plain.Description, string(plain.JSON())); got != plain.Description {
		t.Errorf("unchanged example: %q, want its description as it is", got)
	}
	small := load("research-fleet", "workload.investigations=300")
	got := honestDescription(small.Name, small.Description, string(small.JSON()))
	if want := plain.Description + " (description as written; overridden: workload.investigations=300)"; got != want {
		t.Errorf("overridden example:\n got %q\nwant %q", got, want)
	}
	// Several overrides, listed by path, at most maxOverridesShown of them.
	many := load("research-fleet", "workload.investigations=300", "horizon=2h", "seed=7",
		"recovery.retry.max_attempts=7", "workload.workers=3", "tools.backtest.compute=2")
	got = honestDescription(many.Name, many.Description, string(many.JSON()))
	for _, want := range []string{"horizon=2h", "recovery.retry.max_attempts=7", "seed=7", "tools.backtest.compute=2", "and 2 more"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %s", got, want)
		}
	}
	// The user's own description, or a scenario that is no example: nothing to compare with.
	if got := honestDescription(small.Name, "my fleet", string(small.JSON())); got != "my fleet" {
		t.Errorf("own description: %q", got)
	}
	if got := honestDescription("my-fleet", plain.Description, string(small.JSON())); got != plain.Description {
		t.Errorf("not an example: %q", got)
	}
	if got := honestDescription(small.Name, small.Description, "not json"); got != small.Description {
		t.Errorf("unreadable config: %q", got)
	}
}
