package scenarios

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The embedded examples: the default, one per failure class of docs/scenarios.md, worker
// crashes, and a fleet that competes for capacity.
var wantExamples = []string{
	"budget-exhaustion", "capacity-crunch", "invalid-configs", "lost-responses", "policy-violations",
	"research-fleet", "retry-storm", "runaway-loops", "shared-outage", "transient-errors", "worker-crashes",
}

func TestEmbeddedExamples(t *testing.T) {
	list := List()
	var names []string
	for _, info := range list {
		names = append(names, info.Name)
	}
	if !reflect.DeepEqual(names, wantExamples) {
		t.Errorf("List() = %q, want %q", names, wantExamples)
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("List() is not sorted: %q", names)
	}
	for _, info := range list {
		t.Run(info.Name, func(t *testing.T) {
			s, err := Load(info.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != info.Name || info.File != info.Name+".yaml" {
				t.Errorf("file %s holds scenario %q", info.File, s.Name)
			}
			if info.Description == "" || info.Description != s.Description {
				t.Errorf("description %q, want the scenario's non-empty one %q", info.Description, s.Description)
			}
			if !s.Source.Embedded || s.Source.File != "embedded:"+info.Name {
				t.Errorf("source = %+v, want embedded:%s", s.Source, info.Name)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if len(s.Expect) == 0 {
				t.Error("no expect block")
			}
			if info.Name != Default && s.Workload.Investigations > 5000 {
				t.Errorf("%d investigations; a single-failure example should stay small", s.Workload.Investigations)
			}
			// JSON is stable: decoding and encoding again gives the same bytes.
			var back Scenario
			if err := json.Unmarshal(s.JSON(), &back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.JSON(), s.JSON()) {
				t.Errorf("JSON does not survive a round trip:\n%s\n%s", s.JSON(), back.JSON())
			}
			again, _ := Load(info.Name, nil)
			if again.Hash() != s.Hash() || len(s.Hash()) != 64 {
				t.Errorf("hash %q then %q", s.Hash(), again.Hash())
			}
		})
	}
	def, _ := Load(Default, nil)
	if def.Workload.Investigations != 10000 || len(def.Sweep) == 0 || len(def.Faults) < 8 {
		t.Errorf("%s: %d investigations, %d sweep axes, %d faults; want the big fleet with a sweep and many faults",
			Default, def.Workload.Investigations, len(def.Sweep), len(def.Faults))
	}
	for i, f := range def.Faults {
		if ruleOf(f.Kind) == nil {
			t.Errorf("%s: faults[%d] is of kind %q, which no kind registered", Default, i, f.Kind)
		}
	}
}

// The lost-responses example shows duplicates only where idempotency is missing: its notify
// tool is `none`, its backtest `keyed`, and it retries blindly (no inspection before retry),
// so the tool's own idempotency is all that stands between a retry and a second execution.
func TestLostResponsesShape(t *testing.T) {
	s, err := Load("lost-responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Tools[s.Tool("notify")].Idempotency; got != None {
		t.Errorf("notify idempotency %q, want none", got)
	}
	if got := s.Tools[s.Tool("backtest")].Idempotency; got != Keyed {
		t.Errorf("backtest idempotency %q, want keyed", got)
	}
	if s.Recovery.InspectBeforeRetry {
		t.Error("inspect_before_retry is on; the example is about blind retries")
	}
}

// An example that expects no duplicate side effects must make that structurally true: a
// keyed tool executes a key once and a natural one has no side effect, so no tool may be
// `none`.
func TestNoDuplicateExpectationsAreStructural(t *testing.T) {
	for _, info := range List() {
		s, _ := Load(info.Name, nil)
		for _, e := range s.Expect {
			if e.Metric != "duplicate_side_effects" || e.Op != "==" || e.Value != 0 {
				continue
			}
			for _, tool := range s.Tools {
				if tool.Idempotency == None {
					t.Errorf("%s expects no duplicates but tool %s has idempotency none", info.Name, tool.Name)
				}
			}
		}
	}
}

func TestLoadFileAndNames(t *testing.T) {
	data, ok := Embedded("shared-outage")
	if !ok {
		t.Fatal("shared-outage is not embedded")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "outage.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromName, _ := Load("shared-outage", nil)
	if fromFile.Source.File != path || fromFile.Source.Embedded {
		t.Errorf("source = %+v, want the path, not embedded", fromFile.Source)
	}
	if fromFile.Hash() != fromName.Hash() {
		t.Error("the same text loaded from a file and by name hashes differently")
	}

	for _, c := range []struct{ ref, want string }{
		{"reserch-fleet", `reserch-fleet: no such file or embedded scenario (did you mean research-fleet?); want a scenario file or one of: ` + strings.Join(wantExamples, ", ")},
		{filepath.Join(dir, "missing.yaml"), filepath.Join(dir, "missing.yaml") + `: no such file; want a scenario file or one of the embedded scenarios: ` + strings.Join(wantExamples, ", ")},
		{dir, dir + `: is a folder; want a scenario file or one of the embedded scenarios: ` + strings.Join(wantExamples, ", ")},
	} {
		_, err := Load(c.ref, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("Load(%q) error\n got %v\nwant %s", c.ref, err, c.want)
		}
	}
	for _, bad := range []string{"../research-fleet", "research-fleet.yaml", "", "Research-Fleet"} {
		if _, ok := Embedded(bad); ok {
			t.Errorf("Embedded(%q) found something", bad)
		}
	}
}
