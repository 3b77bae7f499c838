package sim

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// TestFaultKindsRegistered checks every registered kind against itself: its scenario rule
// is the one package scenarios decodes by, it has a hook (or it would do nothing), a hook
// on model calls exactly when its rule lets it name the model, and its record's window is
// its rule's.
func TestFaultKindsRegistered(t *testing.T) {
	if len(faultKinds) == 0 {
		t.Fatal("no fault kind registered")
	}
	for _, k := range slices.Sorted(maps.Keys(faultKinds)) {
		fk := faultKinds[k]
		if r, ok := k.Rule(); !ok || r.Kind != k {
			t.Errorf("%s: scenarios has rule %+v (%t)", k, r, ok)
		}
		if fk.attempt == nil && fk.model == nil && fk.investigation == nil && fk.worker == nil &&
			fk.begin == nil && fk.end == nil && !fk.unreachable {
			t.Errorf("%s: no hook: the fault would do nothing", k)
		}
		if (fk.model != nil) != fk.rule.Model {
			t.Errorf("%s: model hook %t, but the rule says Model %t", k, fk.model != nil, fk.rule.Model)
		}
		if (fk.begin != nil || fk.end != nil) && !fk.rule.Window {
			t.Errorf("%s: hooks at a window's edges, but not a window", k)
		}
		if k.Correlated() && fk.hits() != "calls" {
			t.Errorf("%s: a window on a tool that hits %s", k, fk.hits())
		}
	}
}

func TestUnknownFaultKind(t *testing.T) {
	sc := &scenarios.Scenario{Faults: []scenarios.Fault{{Kind: "meteor"}}}
	_, err := buildFaults(sc, 1)
	if err == nil || err.Error() == "" {
		t.Fatalf("buildFaults accepted an unknown kind: %v", err)
	}
	if e, ok := err.(*Error); !ok || e.Key != "faults[0].kind" {
		t.Errorf("error %v, want key faults[0].kind", err)
	}
}

// sampleValue is a valid value of each fault key but tool, to write an entry of any kind.
var sampleValue = map[string]string{
	"at": "1h", "for": "10m", "probability": "0.1", "slowdown": "2", "rate": "1/h", "factor": "2", "share": "0.5",
}

// faultEntry writes a valid entry of kind k from its rule, with tool (if not "") when the
// kind takes one.
func faultEntry(t *testing.T, k scenarios.FaultKind, tool string) string {
	r, _ := k.Rule()
	parts := []string{"kind: " + string(k)}
	for _, key := range r.Keys {
		switch v, ok := sampleValue[key]; {
		case key == "tool":
			if tool != "" {
				parts = append(parts, "tool: "+tool)
			}
		case !ok:
			t.Fatalf("%s takes %s: add a sample value to sampleValue", k, key)
		default:
			parts = append(parts, key+": "+v)
		}
	}
	for _, key := range r.Required { // the kind's own required keys
		if !slices.Contains(r.Keys, key) {
			parts = append(parts, key+": "+r.Params.Example(key))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// TestFaultKindsAgreeWithScenarioRules checks the kinds' behaviour against the scenario
// rules the decoder applies, so that neither can drift: a fault may name the model exactly
// when its kind has a model hook, and a tool without a timeout is refused exactly for the
// kinds whose rule says so; what the decoder accepts, buildFaults builds.
func TestFaultKindsAgreeWithScenarioRules(t *testing.T) {
	for _, k := range slices.Sorted(maps.Keys(faultKinds)) {
		fk := faultKinds[k]
		takesTool := slices.Contains(fk.rule.Keys, "tool")
		if takesTool {
			_, err := scenarios.Load("capacity-crunch", []string{"faults=[" + faultEntry(t, k, "model") + "]"})
			if (err == nil) != (fk.model != nil) {
				t.Errorf("%s on the model: scenario error %v, but model hook present = %t", k, err, fk.model != nil)
			}
		}
		tool := ""
		if fk.attempt != nil {
			tool = "fetch_data"
		}
		set := []string{"tools.fetch_data.timeout=0", "faults=[" + faultEntry(t, k, tool) + "]"}
		sc, err := scenarios.Load("capacity-crunch", set)
		if (err != nil) != fk.rule.Timeout {
			t.Errorf("%s on a tool without timeout: scenario error %v, but Timeout = %t", k, err, fk.rule.Timeout)
		}
		if err == nil {
			if _, err := buildFaults(sc, 1); err != nil {
				t.Errorf("%s: the scenario accepts it, buildFaults says %v", k, err)
			}
		}
	}
}
