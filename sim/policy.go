package sim

import (
	"encoding"
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
// scenarios.Recovery whose name is that of a recovery.Policy field is copied by name: as it
// is when the types are the same (a setting the engine reads as the file writes it:
// inspect_before_retry, revisions), or parsed when the file's field is a word and the
// engine's type reads words (UnmarshalText: on_exhaustion). A new plain engine setting
// needs no line here. What is left are the settings the file spells differently from the
// engine. The ranges were checked once by scenarios.Validate.
func Policy(r *scenarios.Recovery) (recovery.Policy, error) {
	var p recovery.Policy
	if err := copyByName(&p, r); err != nil {
		return recovery.Policy{}, err
	}
	p.InspectEvery, p.MaxInspections = r.Inspection.Interval, r.Inspection.Max
	p.PauseFor = pauseFor
	p.HumansAvailable = r.Humans != nil && r.Humans.Reviewers > 0
	p.Supervisor = r.Supervisor.Kind == "model"
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

// copyByName sets each field of the policy p from the field of r with the same name: of
// the same type, or a word that the policy field's type parses.
func copyByName(p *recovery.Policy, r *scenarios.Recovery) error {
	dst, src := reflect.ValueOf(p).Elem(), reflect.ValueOf(r).Elem()
	for i := range dst.NumField() {
		f := dst.Type().Field(i)
		sf, ok := src.Type().FieldByName(f.Name)
		switch {
		case !ok:
		case sf.Type == f.Type:
			dst.Field(i).Set(src.FieldByIndex(sf.Index))
		case sf.Type.Kind() == reflect.String && reflect.PointerTo(f.Type).Implements(textUnmarshaler):
			word := src.FieldByIndex(sf.Index).String()
			if err := dst.Field(i).Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(word)); err != nil {
				return fmt.Errorf("%s %q is not a setting the engine knows: %w", f.Name, word, err)
			}
		}
	}
	return nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

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
