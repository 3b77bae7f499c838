package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// TestFaultRegistry checks the registered rules as a whole: the kinds are listed in name
// order, each once, the lists messages and the schema read follow the table, and a rule that
// contradicts itself or the key tree is refused.
func TestFaultRegistry(t *testing.T) {
	if len(faultTable) == 0 {
		t.Fatal("no fault kind registered (the test binary must link package sim)")
	}
	if !slices.IsSortedFunc(faultTable, func(a, b FaultRule) int { return strings.Compare(string(a.Kind), string(b.Kind)) }) {
		t.Error("fault kinds not in name order")
	}
	for i, r := range faultTable {
		if faultKinds[i] != string(r.Kind) || ruleOf(r.Kind) != &faultTable[i] {
			t.Errorf("%s: listed as %s", r.Kind, faultKinds[i])
		}
		if err := r.valid(); err != nil {
			t.Errorf("%s: %v", r.Kind, err)
		}
		if r.Model != slices.Contains(modelFaultKinds, string(r.Kind)) {
			t.Errorf("%s: Model %t, model kinds %v", r.Kind, r.Model, modelFaultKinds)
		}
	}
	if !slices.Equal(faultSchema.sub["kind"].enum, faultKinds) {
		t.Errorf("the key tree's kinds %v, registered %v", faultSchema.sub["kind"].enum, faultKinds)
	}
	if FaultKind("nonsense").Correlated() || ruleOf("nonsense") != nil {
		t.Error("a name that is not a kind has a rule")
	}
	for _, bad := range []FaultRule{
		{Kind: "x", Keys: []string{"colour"}},
		{Kind: "x", Keys: []string{"probability"}, Required: []string{"for"}},
		{Kind: "x", Keys: []string{"probability"}, Model: true},
		{Kind: "x", Keys: []string{"tool", "at", "for"}},
		{Kind: "x", Keys: []string{"tool", "at", "for"}, Window: true},
		{Kind: "Not a name"},
	} {
		if bad.valid() == nil {
			t.Errorf("rule %+v accepted", bad)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a kind registered twice was accepted")
			}
		}()
		RegisterFault(faultTable[0])
	}()
}
