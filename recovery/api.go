package recovery

// This file is the engine's public contract, which the simulator (package sim) codes against.
// Names and meanings here are stable: add to them, do not rename or repurpose.

import (
	"errors"
	"math/rand/v2"
	"time"
)

// State is an investigation's durable lifecycle state.
type State uint8

const (
	Pending State = iota
	Running
	Waiting // on an external operation, a backoff timer, an open breaker or a paused budget
	Recovering
	AwaitingHuman
	Completed
	Terminated
)

// Final reports whether no transition may leave s.
func (s State) Final() bool { return s == Completed || s == Terminated }

// Class is a failure class: how a failure is handled depends on it (docs/traces.md lists
// the spellings of `failure_class`).
type Class uint8

const (
	NoFailure Class = iota
	Transient
	UncertainCompletion
	InvalidOutput
	ResourceExhaustion
	PolicyViolation
	NonProgress
)

// EventKind is what happened to an investigation.
type EventKind uint8

const (
	EvStart           EventKind = iota + 1 // pending → running
	EvSend                                 // the agent wants to send an attempt of the current operation on Event.Tool
	EvSucceeded                            // the attempt's reply arrived (waiting → running); validate next
	EvValid                                // the step's result passed in-loop validation; go on
	EvFinished                             // the last step is valid: running → completed
	EvFailed                               // the attempt failed fast: an error reply, or the tool unavailable
	EvTimedOut                             // caller-side timeout: completion uncertain
	EvCrashed                              // the worker died; sent when the lease expires and a new worker takes over
	EvInspected                            // answer to an inspection (Event.Lookup)
	EvInvalid                              // the step's result failed validation
	EvPolicyViolation                      // the agent attempted a forbidden operation (not sent)
	EvBudgetExceeded                       // Event.Resource budget exceeded
	EvSupervisor                           // the supervisor answered a consultation (Event.Suggestion)
	EvHuman                                // a human finished a review (Event.Approved)
	EvTimer                                // the time a Decision asked for (Decision.At) has come
	EvSubagentFailed                       // a subagent of the investigation ended without delivering its work (terminated)
)

// Lookup is the answer to inspecting an operation by its idempotency key.
type Lookup uint8

const (
	LookupCompleted Lookup = iota + 1 // the tool executed it; take the stored result
	LookupRunning                     // still executing; look again later
	LookupNotFound                    // never executed; safe to retry
	LookupFailed                      // the lookup itself is impossible; escalate
)

// Resource names a per-investigation budget.
type Resource uint8

const (
	Tokens Resource = iota + 1
	Compute
	Wall
	Cost // money, in the scenario's currency
)

// Action is what the engine tells its caller to do next.
type Action uint8

const (
	ActNone        Action = iota
	ActSend               // send the attempt now (Event.Tool's guards admitted it)
	ActValidate           // validate the result that just arrived (or was found by inspection)
	ActNextStep           // go on with the next step (a fresh logical operation)
	ActRetry              // send another attempt of the same operation at Decision.At
	ActPark               // wait, without spending an attempt, until Decision.At (open breaker)
	ActInspect            // look the operation up by key at Decision.At
	ActRevise             // start a revision of the step: a new logical operation
	ActBlock              // policy violation: the operation was blocked and recorded
	ActConsult            // ask the supervisor (Decision.Judgement), then send EvSupervisor
	ActEscalate           // queue for a human review, then send EvHuman
	ActPause              // budget exceeded: wait until Decision.At, then EvTimer
	ActReduceScope        // budget exceeded: drop remaining optional steps, finish what is done
	ActComplete           // the investigation completed
	ActTerminate          // the investigation was terminated (Decision.Reason says why)
	ActReplan             // non-progress: the supervisor's revised plan is being tried
	ActRespawn            // a subagent failed: start a replacement for it (Policy.Subagents)
)

// Decider says who took a decision.
type Decider uint8

const (
	ByEngine Decider = iota
	BySupervisor
	ByHuman
	ByPolicy
)

// Event is one observation fed to Engine.Observe. Only the fields its Kind names are read.
type Event struct {
	Kind        EventKind
	Tool        int    // index into the Guards; for EvSend, EvSucceeded, EvFailed, EvTimedOut
	Fingerprint uint64 // the attempted approach; identical failing fingerprints signal non-progress
	Lookup      Lookup
	Resource    Resource
	Suggestion  Suggestion
	Approved    bool
}

// Decision is the engine's answer to one event.
type Decision struct {
	Action    Action
	At        int64 // virtual ns: when to retry, unpark, inspect, resume
	Class     Class
	Reason    string // a short constant, e.g. "retries_exhausted", "policy_violation"
	DecidedBy Decider
	Judgement Judgement // for ActConsult
}

// Point is a judgement point at which the supervisor is consulted.
type Point uint8

const (
	PointInvalidOutput Point = iota + 1
	PointNonProgress
	PointRetriesExhausted
)

// Judgement is what the engine asks the supervisor: which actions it would accept, and the
// trajectory it judges. It carries only what a real platform knows of the investigation.
type Judgement struct {
	Point      Point
	Allowed    []Action // the actions the engine would accept; never nil for ActConsult
	Trajectory Trajectory
}

// Trajectory summarises an investigation's path so far, from its journal: what a
// supervisor would be shown.
type Trajectory struct {
	Steps       int32 // steps whose result was accepted (the current step's index)
	Revision    int32 // revision of the current step
	Attempts    int32 // attempts sent of the current operation
	Sent        int32 // attempts sent in the whole investigation
	Revisions   int32 // revisions spent from the revision budget
	Escalations int32
	// Failures counts the failures handled so far by class (indexed by Class; NoFailure
	// unused).
	Failures [NonProgress + 1]int32
}

// Classes is the number of distinct failure classes in t.
func (t Trajectory) Classes() int {
	n := 0
	for c := Transient; c <= NonProgress; c++ {
		if t.Failures[c] > 0 {
			n++
		}
	}
	return n
}

// Suggestion is a supervisor's answer. Fields other than Action are requests the engine
// checks against its guardrails (and refuses, recording why).
type Suggestion struct {
	Action      Action
	RaiseBudget bool // asks for more revisions, attempts or budget: always refused
	LiftBlock   bool // asks to send a blocked operation: always refused
	// Unavailable: the supervisor gave no answer (its model refused the call: an outage, a
	// rate limit, an error). Action is not read; the engine decides by its own rule, as
	// without a supervisor, and journals why.
	Unavailable bool
}

// Errors of the engine. An illegal transition is refused with a *TransitionError wrapping
// ErrIllegalTransition.
var (
	ErrIllegalTransition = errors.New("recovery: illegal transition")
	ErrFinal             = errors.New("recovery: investigation already ended")
	ErrUnexpectedEvent   = errors.New("recovery: event not expected in this state")
	ErrUnknownTool       = errors.New("recovery: tool index out of range")
	ErrBadJournal        = errors.New("recovery: journal does not replay")
	ErrClock             = errors.New("recovery: time went backwards")
)

// TransitionError is a refused transition.
type TransitionError struct {
	From, To State
	Event    EventKind
}

// Jitter is a backoff jitter mode.
type Jitter uint8

const (
	JitterNone Jitter = iota
	JitterFull
	JitterEqual
	JitterDecorrelated
)

// Exhausted is what happens when an operation's retries are used up.
type Exhausted uint8

const (
	// ExhaustedEscalate queues a human review (terminates without human reviewers).
	ExhaustedEscalate Exhausted = iota
	// ExhaustedTerminate terminates the investigation: it gives up.
	ExhaustedTerminate
	// ExhaustedReduceScope drops the step: the investigation goes on with the next step
	// without its result (ActReduceScope, a new logical operation) and can complete, never
	// at full scope (LostWork).
	ExhaustedReduceScope
)

// OnExhaustion is the resource-exhaustion ladder's policy.
type OnExhaustion uint8

const (
	ExhaustionTerminate OnExhaustion = iota
	ExhaustionPause
	ExhaustionReduceScope
)

// SubagentAction is what an investigation does when one of its subagents fails.
type SubagentAction uint8

const (
	// SubagentReduceScope goes on without the lost work: the investigation's scope is
	// reduced (it can still complete, never at full scope). The zero value.
	SubagentReduceScope SubagentAction = iota
	// SubagentRespawn starts a replacement subagent, at most SubagentPolicy.MaxRespawns
	// times per investigation; then SubagentPolicy.Then applies.
	SubagentRespawn
	// SubagentFail terminates the investigation: its tree cannot deliver.
	SubagentFail
)

// SubagentPolicy decides what a subagent's failure (EvSubagentFailed) does to its parent.
type SubagentPolicy struct {
	OnFailure   SubagentAction
	MaxRespawns int            // with SubagentRespawn: replacements per investigation
	Then        SubagentAction // with SubagentRespawn, once MaxRespawns are spent: reduce scope or fail
}

// The configuration types below carry the scenario keys that set them as struct tags: key
// (the key's name and its rules), doc (what the key means), want (how a message names a
// valid value). The scenario format reads them (package scenarios, keys.go); this package
// only reads the fields. A new setting is a field here, its tag, and its behaviour.

// RetryPolicy bounds the attempts of one logical operation (the scenario's recovery.retry).
type RetryPolicy struct {
	MaxAttempts int           `json:"max_attempts" key:"max_attempts,min=1,max=1000,too=many,default=3" want:"a whole number >= 1 (1 = never retry)" doc:"attempts per logical operation, the first included (1 = never retry)"`
	Initial     time.Duration `json:"initial" key:"initial,default=1s" doc:"the first backoff"`
	Multiplier  float64       `json:"multiplier" key:"multiplier,min=1,default=2" want:"a number >= 1" doc:"growth of the backoff per attempt"`
	Max         time.Duration `json:"max" key:"max,default=1m" doc:"cap of the backoff, at least initial"`
	Jitter      Jitter        `json:"jitter" key:"jitter,default=full" want:"a jitter" doc:"how the backoff is randomised"`
	OnExhausted Exhausted     `json:"on_exhausted" key:"on_exhausted,default=escalate" want:"an exhaustion action" doc:"what happens when the attempts are spent"`
	GiveUp      float64       `json:"give_up,omitempty" key:"give_up,prob" doc:"chance that the agent gives up when an operation's attempts are spent: the investigation is terminated instead of taking on_exhausted"`
}

// Policy is an investigation's recovery configuration; one Policy is shared by many engines.
type Policy struct {
	Retry              RetryPolicy
	InspectBeforeRetry bool
	Revisions          int // revision budget per investigation
	NonProgressRepeats int // 0 = off
	OnExhaustion       OnExhaustion
	PauseFor           time.Duration  // how long ActPause waits before resuming
	HumansAvailable    bool           // false: an escalation terminates
	Supervisor         bool           // consult the supervisor at judgement points
	MaxInspections     int            // lookups of one operation before it counts as unknown; 0 = DefaultMaxInspections
	InspectEvery       time.Duration  // wait between lookups of an operation still running; 0 = DefaultInspectEvery
	Subagents          SubagentPolicy // what a subagent's failure does (zero value: reduce scope)
}

// Inspection defaults: an operation the tool reports as still running is looked up once a
// minute for an hour (60 lookups) before it counts as unknown and goes to a human. Like a
// cloud SDK's waiter (a fixed delay, a bounded number of polls), the spacing is fixed: a
// running job is not a failure, so there is nothing to back off from, and a lookup is a
// cheap read.
const (
	DefaultInspectEvery   = time.Minute
	DefaultMaxInspections = 60
)

// BudgetConfig configures a retry budget (token bucket): the scenario's recovery.retry_budget.
// Its defaults are DefaultBudget.
type BudgetConfig struct {
	// Ratio is the tokens earned per successful first attempt.
	Ratio float64 `json:"ratio" key:"ratio" want:"retries earned per first attempt, a number >= 0" doc:"tokens earned per first attempt"`
	// MinPerSecond is the retries always allowed, per second.
	MinPerSecond float64 `json:"min_per_second" key:"min_per_second" want:"retries per second always allowed, a number >= 0" doc:"the floor: tokens added per second whatever the traffic"`
	// MaxTokens is the most tokens the bucket holds (and starts with); 0 = DefaultBudget's.
	// The scenario format has no key for it.
	MaxTokens float64 `json:"-"`
}

// Default is DefaultBudget: the values of the keys a scenario's retry_budget block omits.
func (BudgetConfig) Default() BudgetConfig { return DefaultBudget }

// BreakerConfig configures a circuit breaker: the scenario's recovery.breaker. Its defaults
// are DefaultBreaker.
type BreakerConfig struct {
	Window       time.Duration `json:"window" key:"window,>0" doc:"the sliding window failures are counted over"`
	FailureRatio float64       `json:"failure_ratio" key:"failure_ratio,prob,>0" zero:"0 would open the breaker on success; want a ratio in (0, 1]" doc:"share of failed attempts in the window that opens the breaker"`
	MinCalls     int           `json:"min_calls" key:"min_calls,min=1,max=2147483648" want:"a whole number >= 1" doc:"attempts in the window before it may open"`
	Cooldown     time.Duration `json:"cooldown" key:"cooldown,>0" doc:"time open before one probe is let through"`
}

// Default is DefaultBreaker: the values of the keys a scenario's breaker block omits.
func (BreakerConfig) Default() BreakerConfig { return DefaultBreaker }

// BreakerState is a circuit breaker's state.
type BreakerState uint8

const (
	BreakerClosed BreakerState = iota
	BreakerOpen
	BreakerHalfOpen
	BreakerOff // the tool has no breaker (Guards.Breaker answers this when it is off)
)

// Env is what a call to Observe may use besides the event: the random stream of the
// investigation and the fleet guards shared by all investigations.
type Env struct {
	Rand   *rand.Rand
	Guards *Guards
}

// JournalRecord is one durable state change; an engine is rebuilt from its records alone.
type JournalRecord struct {
	At        int64
	From, To  State
	Event     EventKind
	Class     Class
	Action    Action
	DecidedBy Decider
	Reason    string // audit text only: replay never reads it
	Attempt   int32
	Step      int32
	Revision  int32
	Tool      int32
	Note      bool // no state change: From == To (refusals, audit records)

	// What replay needs besides the state, each in its own field (zero when it does not
	// apply), so that no decision depends on the audit text in Reason.
	Wake        int64    // into waiting (ActRetry, ActPark, ActInspect, ActPause) or a re-parking note: when it ends
	Gen         uint32   // ActSend: the breaker generation the attempt was admitted in
	Fingerprint uint64   // a failure into recovering (EvFailed, EvTimedOut, EvInvalid): the agent's fingerprint
	Point       Point    // a consultation note: the judgement point asked about
	Lookup      Lookup   // EvInspected into recovering: what the lookup said
	Resource    Resource // EvBudgetExceeded into recovering: the budget exceeded
	Breaker     bool     // ActPark: parked on the tool's open breaker (false: on the retry budget)
	Backoff     bool     // ActRetry: Wake - At is a delay drawn by the backoff policy
	Resumed     bool     // a takeover re-arming a wait decided before the crash: it charges nothing
	RaiseBudget bool     // a refusal note: the suggestion asked for more budget
	LiftBlock   bool     // a refusal note: the suggestion asked to lift a block
	Unavailable bool     // a supervisor note: no answer came (not a refusal)
}

// Journal receives every journal record as it is made, in order. Records with Note set
// change no state (a refused supervisor suggestion, the audit record of a blocked operation);
// all others are transitions From → To along a legal edge.
type Journal interface {
	Append(id int64, r *JournalRecord)
}

// The rest of the contract, implemented in engine.go and guards.go:
//
//	func New(id int64, p *Policy, j Journal) *Engine          // state Pending
//	func Replay(id int64, p *Policy, records []JournalRecord) (*Engine, error)
//	func (e *Engine) Observe(now int64, ev Event, env Env) (Decision, error)
//	func (e *Engine) State() State
//	func (e *Engine) Attempt() int                          // attempts sent of the current operation
//	func (e *Engine) Op() (step, revision int32)            // the current logical operation
//	func (e *Engine) Escalations() int
//	func (e *Engine) Revisions() int
//
//	func NewGuards(tools int, b *BudgetConfig, c *BreakerConfig) *Guards // nil config = that guard off
//	func (g *Guards) Tokens(tool int, now int64) float64    // -1 when the budget is off
//	func (g *Guards) Breaker(tool int, now int64) BreakerState
//	func (g *Guards) Parked(tool int) int                   // operations now parked on its breaker
//
// Added since (engine.go, guards.go, tables.go, names.go):
//
//	func (e *Engine) SetJournal(j Journal)                  // where a replayed engine's records go
//	func (e *Engine) Refusals() int                         // supervisor suggestions refused
//	func (e *Engine) Tool() int                             // tool of the operation's last attempt
//	func (e *Engine) Blocked() bool                         // the current operation was blocked
//	func (g *Guards) Tools() int
//	func (g *Guards) Clone() *Guards                        // an independent copy (what-if runs)
//	func Legal(from, to State) bool                         // the edge table of doc.go
//	var DefaultBudget, DefaultBreaker                       // recommended guard settings
//	func ParseJitter, ParseExhausted, ParseOnExhaustion     // scenario spellings
//	String() on every enumeration (trace spellings); Reason* constants for Decision.Reason
//	Policy.InspectEvery, DefaultInspectEvery, DefaultMaxInspections  // polling a running operation
//	Policy.Subagents, EvSubagentFailed, ActRespawn, ParseSubagentAction  // a subagent's failure
//	func (e *Engine) Respawns() int                         // replacement subagents started
//	func (e *Engine) LostWork() bool                        // a subagent's work or a step was lost (reduced scope)
//	ExhaustedReduceScope, func (e *Engine) Dropped() int   // steps dropped when their attempts ran out
