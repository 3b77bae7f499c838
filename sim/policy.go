package sim

import (
	"fmt"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
)

// pauseFor is how long an investigation paused by an exhausted budget waits before it
// resumes with a renewed allotment. The scenario format has no key for it; an hour is the
// order of a budget period.
const pauseFor = time.Hour

// Policy maps a scenario's recovery section to the engine's configuration. It is the only
// place where scenario spellings become engine values, and it reads them with the engine's
// own parsers (recovery.ParseJitter and the like), so a spelling the engine does not know is
// an error, never a silent default. The ranges were checked once by scenarios.Validate.
func Policy(r *scenarios.Recovery) (recovery.Policy, error) {
	oe, ok := recovery.ParseOnExhaustion(r.OnExhaustion)
	if !ok {
		return recovery.Policy{}, fmt.Errorf("on_exhaustion %q is not a policy the engine knows", r.OnExhaustion)
	}
	p := recovery.Policy{
		Retry:              r.Retry,
		InspectBeforeRetry: r.InspectBeforeRetry,
		// A scenario built in Go may leave the block zero: the engine then takes its own
		// defaults, the same as the file format's.
		InspectEvery:    r.Inspection.Interval,
		MaxInspections:  r.Inspection.Max,
		Revisions:       r.Revisions,
		PauseFor:        pauseFor,
		HumansAvailable: r.Humans != nil && r.Humans.Reviewers > 0,
		Supervisor:      r.Supervisor.Kind == "model",
		OnExhaustion:    oe,
	}
	if r.NonProgress != nil {
		p.NonProgressRepeats = r.NonProgress.Repeats
	}
	sp, err := subagentPolicy(&r.Subagents.OnFailure)
	if err != nil {
		return recovery.Policy{}, err
	}
	p.Subagents = sp
	return p, nil
}

// subagentPolicy maps recovery.subagents.on_failure; an empty action (a scenario built in
// Go) is reduce_scope, the default.
func subagentPolicy(sf *scenarios.SubagentFailure) (recovery.SubagentPolicy, error) {
	word := func(s, key string) (recovery.SubagentAction, error) {
		if s == "" {
			return recovery.SubagentReduceScope, nil
		}
		a, ok := recovery.ParseSubagentAction(s)
		if !ok {
			return 0, fmt.Errorf("subagents.on_failure.%s %q is not a subagent policy the engine knows", key, s)
		}
		return a, nil
	}
	on, err := word(sf.Action, "action")
	if err != nil {
		return recovery.SubagentPolicy{}, err
	}
	then, err := word(sf.Then, "then")
	if err != nil {
		return recovery.SubagentPolicy{}, err
	}
	return recovery.SubagentPolicy{OnFailure: on, MaxRespawns: sf.Max, Then: then}, nil
}

// guards builds the fleet guards: one per tool, and one for the model provider (the index
// past the last tool) when it is active.
func guards(s *scenarios.Scenario, model bool) *recovery.Guards {
	n := len(s.Tools)
	if model {
		n++
	}
	// The scenario's blocks are the engine's own configuration types.
	return recovery.NewGuards(n, s.Recovery.RetryBudget, s.Recovery.Breaker)
}
