package sim

import (
	"slices"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// TestFaultKindsRegistered checks that every fault kind a scenario may name has its
// behaviour registered, and that the kinds' own flags agree with the scenario rules: a
// window on a tool is exactly a correlated kind, and every attempt or model hook is
// reachable only through a kind that says so.
func TestFaultKindsRegistered(t *testing.T) {
	kinds := []scenarios.FaultKind{
		scenarios.FaultTransient, scenarios.FaultLostResponse, scenarios.FaultInvalidConfig,
		scenarios.FaultBudgetSpike, scenarios.FaultWorkerCrash, scenarios.FaultOutage,
		scenarios.FaultBrownout, scenarios.FaultHang, scenarios.FaultZoneCrash,
	}
	if len(faultKinds) != len(kinds) {
		t.Errorf("%d fault kinds registered, want %d", len(faultKinds), len(kinds))
	}
	var windows []string
	for _, k := range kinds {
		fk := faultKinds[k]
		if fk == nil {
			t.Errorf("fault kind %s has no behaviour registered", k)
			continue
		}
		if fk.toolWindow != k.Correlated() {
			t.Errorf("%s: toolWindow %t, but Correlated() is %t", k, fk.toolWindow, k.Correlated())
		}
		if fk.toolWindow && !fk.window {
			t.Errorf("%s: a window on a tool must be a window", k)
		}
		if fk.attempt == nil && fk.model == nil && fk.investigation == nil && fk.worker == nil &&
			fk.begin == nil && fk.end == nil && !fk.unreachable {
			t.Errorf("%s: no hook: the fault would do nothing", k)
		}
		if k.Correlated() {
			windows = append(windows, string(k))
		}
	}
	slices.Sort(windows)
	if got := ToolWindowKinds(); !slices.Equal(got, windows) {
		t.Errorf("ToolWindowKinds() = %v, want %v", got, windows)
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
