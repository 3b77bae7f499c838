package hunt

import (
	"fmt"
	"strings"

	"github.com/mayday-sim/mayday/scenarios"
)

// FoundFile is the shrunk scenario of r.Found (FoundFileOf).
func FoundFile(base *scenarios.Scenario, r *Result) ([]byte, error) {
	return FoundFileOf(base, r, r.Found)
}

// FoundFileOf is the shrunk scenario of f, one of r's findings: the scenario base with the
// found trial's faults, workload, horizon and seed, without its hunt block, under a name of
// its own, with the liveness expectation when the violation is one; a comment at its top
// says what was found and what shrinking removed. The file is checked like any scenario.
func FoundFileOf(base *scenarios.Scenario, r *Result, f *Found) ([]byte, error) {
	if f == nil {
		return nil, fmt.Errorf("hunt: nothing was found")
	}
	ovs := append(append([]scenarios.Override(nil), base.Source.Overrides...), f.Overrides...)
	data, err := scenarios.Found(base.Source.File, base.Source.Data, ovs)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Found by mayday hunt in %s (hunt seed %d, trial %d): a %s violation.\n", base.Source.File, r.Seed, f.Trial, f.Violation.Kind)
	fmt.Fprintf(&b, "#   %s\n", oneLine(f.Violation.Message))
	fmt.Fprintf(&b, "# Shrunk from %d faults, %d investigations, horizon %s to %d, %d, %s", f.Before.Faults, f.Before.Investigations, f.Before.Horizon,
		f.After.Faults, f.After.Investigations, f.After.Horizon)
	if !f.Complete {
		b.WriteString(" (shrinking stopped early: interrupted or out of runs)")
	}
	if len(f.Removed) == 0 {
		b.WriteString("; nothing could be removed.\n")
	} else {
		b.WriteString(" by:\n")
		for _, step := range f.Removed {
			fmt.Fprintf(&b, "#   - %s\n", oneLine(step))
		}
	}
	switch f.Violation.Kind {
	case Invariant:
		b.WriteString("# mayday check on this file fails the run (exit 3): the simulator breaks an invariant.\n")
	default:
		fmt.Fprintf(&b, "# mayday check on this file fails (exit 1) on %s, seed %s.\n", f.Violation.Metric, seedOf(f.Overrides))
	}
	return []byte(b.String() + string(data)), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func seedOf(ovs []scenarios.Override) string {
	for _, o := range ovs {
		if o.Path == "seed" {
			return o.Value
		}
	}
	return "?"
}
