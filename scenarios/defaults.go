package scenarios

import (
	"reflect"
	"time"
)

// The defaults of the file format are declared with its keys (keys.go: the default= of a
// key tag, or the Default method of an engine type such as recovery.BreakerConfig);
// doc.go and docs/scenarios.md list them for users. The rule: what a scenario omits is off
// or unlimited, except the few settings a real recovery policy always has (retry,
// inspection and its polling, lease) and a finite horizon. What is left here is the
// defaults of keys decoded by hand.

// DefaultSeed is the seed of a scenario that names none (--seed overrides either).
const DefaultSeed uint64 = 1

// DefaultHorizon is the simulated time limit of a scenario that names none: the declared
// default of horizon.
var DefaultHorizon = time.Duration(rootSchema.sub["horizon"].def.Int())

// Defaults is the resolved scenario before any key of a file is read: the one set of
// defaults, for a scenario built in Go (a simulator test, say) to start from. It has no
// name and no tools; Validate says what it still lacks.
func Defaults() *Scenario { return defaultScenario() }

// defaultScenario is the resolved scenario before any key of the file is read. Tools and the
// tool mix are filled in by defaultTool and defaultMix once the file's tools are known.
func defaultScenario() *Scenario {
	s := &Scenario{Seed: DefaultSeed}
	fillDefaults(rootSchema, reflect.ValueOf(s).Elem(), true)
	s.Workload.Arrival = Arrival{Kind: ArrivalAtOnce}
	s.Recovery.Subagents = SubagentRecovery{OnFailure: SubagentFailure{Action: SubagentReduceScope}}
	return s
}

// ensureDefaults fills what a scenario built in Go left zero where zero is not a valid
// value (keys.go, fillDefaults): the one defaulting step before Validate's checks. A
// scenario decoded from a file has every default already and is not written.
func (s *Scenario) ensureDefaults() {
	fillDefaults(rootSchema, reflect.ValueOf(s).Elem(), false)
	for i := range s.Tools {
		fillDefaults(toolSchema, reflect.ValueOf(&s.Tools[i]).Elem(), false)
	}
	for i := range s.Faults {
		s.Faults[i].ensureParams()
	}
	if s.Workload.Arrival.Kind == "" {
		s.Workload.Arrival = Arrival{Kind: ArrivalAtOnce}
	}
	if len(s.Workload.Mix) == 0 {
		s.Workload.Mix = defaultMix(s.Tools)
	}
}

// defaultTool is a tool with every declared default: no latency, unlimited servers, no
// timeout, and idempotency none, the safe assumption about a tool nobody described.
func defaultTool(name string) Tool {
	t := Tool{Name: name}
	fillDefaults(toolSchema, reflect.ValueOf(&t).Elem(), true)
	return t
}

// defaultMix weighs every tool equally.
func defaultMix(tools []Tool) []Weight {
	mix := make([]Weight, len(tools))
	for i, t := range tools {
		mix[i] = Weight{Tool: t.Name, Weight: 1}
	}
	return mix
}

// defaultRespawn is on_failure: respawn, or {action: respawn} without the rest: one
// replacement per parent, then the parent goes on with a reduced scope.
func defaultRespawn() SubagentFailure {
	return SubagentFailure{Action: SubagentRespawn, Max: 1, Then: SubagentReduceScope}
}
