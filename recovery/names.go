package recovery

// Names of the enumerations as they appear in traces (snake_case, stable).

import (
	"fmt"
	"slices"
)

var stateNames = [...]string{
	Pending: "pending", Running: "running", Waiting: "waiting", Recovering: "recovering",
	AwaitingHuman: "awaiting_human", Completed: "completed", Terminated: "terminated",
}

var classNames = [...]string{
	NoFailure: "", Transient: "transient", UncertainCompletion: "uncertain_completion",
	InvalidOutput: "invalid_output", ResourceExhaustion: "resource_exhaustion",
	PolicyViolation: "policy_violation", NonProgress: "non_progress",
}

var eventNames = [...]string{
	0: "", EvStart: "start", EvSend: "send", EvSucceeded: "succeeded", EvValid: "valid",
	EvFinished: "finished", EvFailed: "failed", EvTimedOut: "timed_out", EvCrashed: "crashed",
	EvInspected: "inspected", EvInvalid: "invalid", EvPolicyViolation: "policy_violation",
	EvBudgetExceeded: "budget_exceeded", EvSupervisor: "supervisor", EvHuman: "human",
	EvTimer: "timer", EvSubagentFailed: "subagent_failed",
}

var actionNames = [...]string{
	ActNone: "none", ActSend: "send", ActValidate: "validate", ActNextStep: "next_step",
	ActRetry: "retry", ActPark: "park", ActInspect: "inspect", ActRevise: "revise",
	ActBlock: "block", ActConsult: "consult", ActEscalate: "escalate", ActPause: "pause",
	ActReduceScope: "reduce_scope", ActComplete: "complete", ActTerminate: "terminate",
	ActReplan: "replan", ActRespawn: "respawn",
}

var deciderNames = [...]string{
	ByEngine: "engine", BySupervisor: "supervisor", ByHuman: "human", ByPolicy: "policy",
}

var lookupNames = [...]string{
	0: "", LookupCompleted: "completed", LookupRunning: "running", LookupNotFound: "not_found",
	LookupFailed: "failed",
}

var resourceNames = [...]string{0: "", Tokens: "tokens", Compute: "compute", Wall: "wall", Cost: "cost"}

var pointNames = [...]string{
	0: "", PointInvalidOutput: "invalid_output", PointNonProgress: "non_progress",
	PointRetriesExhausted: "retries_exhausted",
}

var jitterNames = [...]string{
	JitterNone: "none", JitterFull: "full", JitterEqual: "equal", JitterDecorrelated: "decorrelated",
}

var breakerNames = [...]string{
	BreakerClosed: "closed", BreakerOpen: "open", BreakerHalfOpen: "half_open", BreakerOff: "off",
}

func name(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return "unknown"
}

func (s State) String() string        { return name(stateNames[:], int(s)) }
func (c Class) String() string        { return name(classNames[:], int(c)) }
func (k EventKind) String() string    { return name(eventNames[:], int(k)) }
func (a Action) String() string       { return name(actionNames[:], int(a)) }
func (d Decider) String() string      { return name(deciderNames[:], int(d)) }
func (l Lookup) String() string       { return name(lookupNames[:], int(l)) }
func (r Resource) String() string     { return name(resourceNames[:], int(r)) }
func (p Point) String() string        { return name(pointNames[:], int(p)) }
func (j Jitter) String() string       { return name(jitterNames[:], int(j)) }
func (s BreakerState) String() string { return name(breakerNames[:], int(s)) }

// parse looks s up in names; it is used by ParseX helpers for configuration text.
func parse(names []string, s string) (int, bool) {
	for i, n := range names {
		if n == s && n != "" {
			return i, true
		}
	}
	return 0, false
}

// ParseJitter turns "none", "full", "equal" or "decorrelated" into a Jitter.
func ParseJitter(s string) (Jitter, bool) { i, ok := parse(jitterNames[:], s); return Jitter(i), ok }

// MarshalText is the scenario spelling of j; an unknown value is an error.
func (j Jitter) MarshalText() ([]byte, error) { return text(jitterNames[:], int(j)) }

// UnmarshalText reads a scenario spelling (ParseJitter).
func (j *Jitter) UnmarshalText(b []byte) error {
	v, ok := ParseJitter(string(b))
	if !ok {
		return fmt.Errorf("recovery: %q is not a jitter", b)
	}
	*j = v
	return nil
}

var exhaustedNames = [...]string{
	ExhaustedEscalate: "escalate", ExhaustedTerminate: "terminate", ExhaustedReduceScope: "reduce_scope",
}

func (e Exhausted) String() string { return name(exhaustedNames[:], int(e)) }

// MarshalText is the scenario spelling of e; an unknown value is an error.
func (e Exhausted) MarshalText() ([]byte, error) { return text(exhaustedNames[:], int(e)) }

// UnmarshalText reads a scenario spelling (ParseExhausted).
func (e *Exhausted) UnmarshalText(b []byte) error {
	v, ok := ParseExhausted(string(b))
	if !ok {
		return fmt.Errorf("recovery: %q is not an exhaustion action", b)
	}
	*e = v
	return nil
}

// text is the name of value i, or an error when it has none.
func text(names []string, i int) ([]byte, error) {
	if i < 0 || i >= len(names) || names[i] == "" {
		return nil, fmt.Errorf("recovery: no name for value %d", i)
	}
	return []byte(names[i]), nil
}

// ParseExhausted turns "escalate", "terminate" or "reduce_scope" into an Exhausted.
func ParseExhausted(s string) (Exhausted, bool) {
	i, ok := parse(exhaustedNames[:], s)
	return Exhausted(i), ok
}

var subagentActionNames = [...]string{
	SubagentReduceScope: "reduce_scope", SubagentRespawn: "respawn", SubagentFail: "fail",
}

func (a SubagentAction) String() string { return name(subagentActionNames[:], int(a)) }

// ParseSubagentAction turns "reduce_scope", "respawn" or "fail" into a SubagentAction.
func ParseSubagentAction(s string) (SubagentAction, bool) {
	i, ok := parse(subagentActionNames[:], s)
	return SubagentAction(i), ok
}

var onExhaustionNames = [...]string{
	ExhaustionTerminate: "terminate", ExhaustionPause: "pause", ExhaustionReduceScope: "reduce_scope",
}

func (o OnExhaustion) String() string { return name(onExhaustionNames[:], int(o)) }

// ParseOnExhaustion turns "terminate", "pause" or "reduce_scope" into an OnExhaustion.
func ParseOnExhaustion(s string) (OnExhaustion, bool) {
	i, ok := parse(onExhaustionNames[:], s)
	return OnExhaustion(i), ok
}

// MarshalText is the scenario spelling of o; an unknown value is an error.
func (o OnExhaustion) MarshalText() ([]byte, error) { return text(onExhaustionNames[:], int(o)) }

// UnmarshalText reads a scenario spelling (ParseOnExhaustion).
func (o *OnExhaustion) UnmarshalText(b []byte) error {
	v, ok := ParseOnExhaustion(string(b))
	if !ok {
		return fmt.Errorf("recovery: %q is not an exhaustion policy", b)
	}
	*o = v
	return nil
}

// Vocabulary is every name the enumerations that traces store take: the values a trace's
// state, failure class, event, action and decider columns can hold ("" for none, "unknown"
// for a value past the enumeration, which String gives).
type Vocabulary struct {
	States, Classes, Events, Actions, Deciders []string
}

// Names returns the vocabulary, each list in declaration order.
func Names() Vocabulary {
	with := func(names []string) []string { return append(slices.Clone(names), "unknown") }
	return Vocabulary{States: with(stateNames[:]), Classes: with(classNames[:]), Events: with(eventNames[:]),
		Actions: with(actionNames[:]), Deciders: with(deciderNames[:])}
}
