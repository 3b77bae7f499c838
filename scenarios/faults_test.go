package scenarios

import (
	"slices"
	"testing"
)

// TestFaultTable checks the table's entries against each other: the flags must agree with
// the keys a kind takes, or Parse, Validate and the JSON Schema would disagree on it.
func TestFaultTable(t *testing.T) {
	seen := map[FaultKind]bool{}
	for _, r := range faultTable {
		if seen[r.kind] {
			t.Errorf("%s: listed twice", r.kind)
		}
		seen[r.kind] = true
		if !slices.Contains(r.allowed, "id") || !slices.Contains(r.allowed, "kind") {
			t.Errorf("%s: takes %v; every kind takes id and kind", r.kind, r.allowed)
		}
		for _, k := range r.required {
			if !slices.Contains(r.allowed, k) {
				t.Errorf("%s: requires %s but does not take it", r.kind, k)
			}
		}
		for _, k := range r.allowed {
			if _, ok := faultSchema.sub[k]; !ok {
				t.Errorf("%s: takes %s, which is not a fault key", r.kind, k)
			}
		}
		if (r.window || r.model || r.timeout) && !slices.Contains(r.allowed, "tool") {
			t.Errorf("%s: hits a tool (window %t, model %t, timeout %t) but takes no tool", r.kind, r.window, r.model, r.timeout)
		}
		if r.window && !slices.Contains(r.required, "for") {
			t.Errorf("%s: a window that does not require for", r.kind)
		}
		if got := r.kind.Correlated(); got != r.window {
			t.Errorf("%s: Correlated() %t, table says %t", r.kind, got, r.window)
		}
	}
	if FaultKind("nonsense").Correlated() || ruleOf("nonsense") != nil {
		t.Error("a name that is not a kind has a rule")
	}
	// The model message pins this order (testdata/parse_capacity_and_money.txt).
	if want := []string{"outage", "brownout", "transient"}; !slices.Equal(modelFaultKinds, want) {
		t.Errorf("model kinds %v; want %v", modelFaultKinds, want)
	}
}
