package sim

import (
	"fmt"
	"reflect"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
)

// pauseFor is how long an investigation paused by an exhausted budget waits before it
// resumes with a renewed allotment. The scenario format has no key for it; an hour is the
// order of a budget period.
const pauseFor = time.Hour

// Policy maps a scenario's recovery section to the engine's configuration. The retry,
// retry_budget and breaker blocks are the engine's own types, and every other field of
// scenarios.Recovery whose name and type are those of a recovery.Policy field (a setting
// the engine reads as the file writes it: inspect_before_retry, revisions) is copied by
// name, so a new plain engine setting needs no line here. What is left are the settings the
// file spells differently from the engine. The ranges were checked once by
// scenarios.Validate.
func Policy(r *scenarios.Recovery) (recovery.Policy, error) {
	oe, ok := recovery.ParseOnExhaustion(r.OnExhaustion)
	if !ok {
		return recovery.Policy{}, fmt.Errorf("on_exhaustion %q is not a policy the engine knows", r.OnExhaustion)
	}
	var p recovery.Policy
	copyByName(&p, r)
	p.InspectEvery, p.MaxInspections = r.Inspection.Interval, r.Inspection.Max
	p.PauseFor = pauseFor
	p.HumansAvailable = r.Humans != nil && r.Humans.Reviewers > 0
	p.Supervisor = r.Supervisor.Kind == "model"
	p.OnExhaustion = oe
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

// copyByName sets each field of the policy p from the field of r with the same name and
// type.
func copyByName(p *recovery.Policy, r *scenarios.Recovery) {
	dst, src := reflect.ValueOf(p).Elem(), reflect.ValueOf(r).Elem()
	for i := range dst.NumField() {
		f := dst.Type().Field(i)
		if sf, ok := src.Type().FieldByName(f.Name); ok && sf.Type == f.Type {
			dst.Field(i).Set(src.FieldByIndex(sf.Index))
		}
	}
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
