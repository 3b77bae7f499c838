package sim

import (
	"slices"
	"strings"
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

// faultYAML is a valid entry of each kind, without a tool; {tool} is where one goes.
var faultYAML = map[scenarios.FaultKind]string{
	scenarios.FaultTransient:     "{kind: transient{tool}, probability: 0.1}",
	scenarios.FaultLostResponse:  "{kind: lost_response{tool}, probability: 0.1}",
	scenarios.FaultOutage:        "{kind: outage{tool}, at: 1h, for: 10m}",
	scenarios.FaultBrownout:      "{kind: brownout{tool}, at: 1h, for: 10m, probability: 0.1, slowdown: 2}",
	scenarios.FaultHang:          "{kind: hang{tool}, at: 1h, for: 10m}",
	scenarios.FaultWorkerCrash:   "{kind: worker_crash{tool}, rate: 1/h}",
	scenarios.FaultInvalidConfig: "{kind: invalid_config{tool}, probability: 0.1}",
	scenarios.FaultBudgetSpike:   "{kind: budget_spike{tool}, probability: 0.1, factor: 2}",
	scenarios.FaultZoneCrash:     "{kind: zone_crash{tool}, at: 1h, for: 10m, share: 0.5}",
}

// TestFaultKindsAgreeWithScenarioRules checks the kinds' behaviour against the scenario
// rules, so that neither can drift: a fault may name the model exactly when its kind has a
// model hook, and a tool without a timeout is refused exactly for the kinds that need one.
func TestFaultKindsAgreeWithScenarioRules(t *testing.T) {
	if len(faultYAML) != len(faultKinds) {
		t.Fatalf("faultYAML has %d kinds, %d are registered", len(faultYAML), len(faultKinds))
	}
	for k, y := range faultYAML {
		fk := faultKinds[k]
		onModel := strings.Replace(y, "{tool}", ", tool: model", 1)
		_, err := scenarios.Load("capacity-crunch", []string{"faults=[" + onModel + "]"})
		if (err == nil) != (fk.model != nil) {
			t.Errorf("%s on the model: scenario error %v, but model hook present = %t", k, err, fk.model != nil)
		}
		onTool := strings.Replace(y, "{tool}", "", 1)
		if fk.attempt != nil {
			onTool = strings.Replace(y, "{tool}", ", tool: fetch_data", 1)
		}
		_, err = scenarios.Load("capacity-crunch", []string{"tools.fetch_data.timeout=0", "faults=[" + onTool + "]"})
		if (err != nil) != fk.needsTimeout {
			t.Errorf("%s on a tool without timeout: scenario error %v, but needsTimeout = %t", k, err, fk.needsTimeout)
		}
		if err == nil {
			sc, _ := scenarios.Load("capacity-crunch", []string{"tools.fetch_data.timeout=0", "faults=[" + onTool + "]"})
			if _, err := buildFaults(sc, 1); err != nil {
				t.Errorf("%s: the scenario accepts it, buildFaults says %v", k, err)
			}
		}
	}
}
