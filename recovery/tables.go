package recovery

import "time"

// edges are the legal lifecycle transitions (the lifecycle of docs/architecture.md on the seven states; see
// doc.go for what takes each one). Final states have none.
var edges = [...]uint8{
	Pending:       1 << Running,
	Running:       1<<Waiting | 1<<Recovering | 1<<Completed,
	Waiting:       1<<Running | 1<<Recovering,
	Recovering:    1<<Running | 1<<Waiting | 1<<AwaitingHuman | 1<<Terminated,
	AwaitingHuman: 1<<Running | 1<<Terminated,
	Completed:     0,
	Terminated:    0,
}

// legal reports whether from → to is an edge of the state machine.
func legal(from, to State) bool {
	return int(from) < len(edges) && to <= Terminated && edges[from]&(1<<to) != 0
}

// Legal reports whether from → to is an edge of the state machine.
func Legal(from, to State) bool { return legal(from, to) }

const noState = State(255)

// nominal is the state an event leads to by its nature; an event whose nominal edge is
// illegal from the current state is refused with a *TransitionError.
var nominal = [...]State{
	0: noState, EvStart: Running, EvSend: Waiting, EvSucceeded: Running, EvValid: noState,
	EvFinished: Completed, EvFailed: Recovering, EvTimedOut: Recovering, EvCrashed: Recovering,
	EvInspected: Recovering, EvInvalid: Recovering, EvPolicyViolation: Recovering,
	EvBudgetExceeded: Recovering, EvSupervisor: noState, EvHuman: Running, EvTimer: Running,
	EvSubagentFailed: noState,
}

func evs(ks ...EventKind) uint32 {
	var m uint32
	for _, k := range ks {
		m |= 1 << k
	}
	return m
}

// accept is, per phase, the events the engine waits for.
var accept = [...]uint32{
	phNone:     0,
	phWork:     evs(EvSend, EvTimer, EvPolicyViolation, EvBudgetExceeded, EvCrashed, EvFinished, EvSubagentFailed),
	phValidate: evs(EvValid, EvInvalid, EvFinished, EvBudgetExceeded, EvCrashed, EvSubagentFailed),
	phInflight: evs(EvSucceeded, EvFailed, EvTimedOut, EvBudgetExceeded, EvCrashed, EvSubagentFailed),
	phBackoff:  evs(EvSend, EvTimer, EvBudgetExceeded, EvCrashed, EvSubagentFailed),
	phParked:   evs(EvSend, EvTimer, EvBudgetExceeded, EvCrashed, EvSubagentFailed),
	phInspect:  evs(EvInspected, EvBudgetExceeded, EvCrashed, EvSubagentFailed),
	phPaused:   evs(EvTimer, EvBudgetExceeded, EvCrashed, EvSubagentFailed),
	phDecide:   0,
	phConsult:  evs(EvSupervisor, EvCrashed, EvSubagentFailed),
}

var phaseNames = [...]string{
	phNone: "", phWork: " (working)", phValidate: " (validating)", phInflight: " (attempt out)",
	phBackoff: " (backoff)", phParked: " (parked)", phInspect: " (inspecting)",
	phPaused: " (paused)", phDecide: " (deciding)", phConsult: " (consulting)",
}

// Reasons: short constants carried by decisions and journal records.
const (
	ReasonStarted              = "started"
	ReasonAttemptSent          = "attempt_sent"
	ReasonBackoffElapsed       = "backoff_elapsed"
	ReasonUnparked             = "unparked"
	ReasonBreakerOpen          = "breaker_open"
	ReasonThrottled            = "retry_throttled"
	ReasonReply                = "reply"
	ReasonValid                = "valid"
	ReasonFinished             = "finished"
	ReasonFailed               = "failed"
	ReasonTimedOut             = "timed_out"
	ReasonBackoff              = "backoff"
	ReasonRetry                = "retry"
	ReasonInspectBeforeRetry   = "inspect_before_retry"
	ReasonStillRunning         = "still_running"
	ReasonInspectedCompleted   = "inspected_completed"
	ReasonInspectedRunning     = "inspected_running"
	ReasonInspectedNotFound    = "inspected_not_found"
	ReasonLookupFailed         = "lookup_failed"
	ReasonInspectionUnresolved = "inspection_unresolved"
	ReasonRetriesExhausted     = "retries_exhausted"
	ReasonInvalidOutput        = "invalid_output"
	ReasonRevisionsExhausted   = "revisions_exhausted"
	ReasonNonProgress          = "non_progress"
	ReasonPolicyViolation      = "policy_violation"
	ReasonBudgetExceeded       = "budget_exceeded"
	ReasonResumed              = "resumed"
	ReasonResumedUncertain     = "resumed_uncertain"
	ReasonWorkerCrashed        = "worker_crashed"
	ReasonAwaitingHuman        = "awaiting_human"
	ReasonApproved             = "approved"
	ReasonRejected             = "rejected"
	ReasonSubagentFailed       = "subagent_failed"
	ReasonRespawnsSpent        = "respawns_spent"

	// Refusals of a supervisor suggestion, one per guardrail.
	ReasonRefusedLiftBlock   = "refused_lift_block"   // a block is never lifted
	ReasonRefusedRaiseBudget = "refused_raise_budget" // no budget is raised by a supervisor
	ReasonRefusedRetry       = "refused_retry"        // retrying what the policy forbids
	ReasonRefusedNotAllowed  = "refused_not_allowed"  // not among Judgement.Allowed

	// The supervisor gave no answer (Suggestion.Unavailable): the engine's rule decided.
	ReasonSupervisorUnavailable = "supervisor_unavailable"
)

var lookupReasons = [...]string{
	0: "", LookupCompleted: ReasonInspectedCompleted, LookupRunning: ReasonInspectedRunning,
	LookupNotFound: ReasonInspectedNotFound, LookupFailed: ReasonLookupFailed,
}

var pointReasons = [...]string{
	0: "", PointInvalidOutput: ReasonRevisionsExhausted, PointNonProgress: ReasonNonProgress,
	PointRetriesExhausted: ReasonRetriesExhausted,
}

// What the supervisor may choose at each judgement point. Static, so a consultation
// allocates nothing; callers must not modify them.
var (
	allowedInvalid         = []Action{ActEscalate, ActTerminate}
	allowedExhausted       = []Action{ActEscalate, ActTerminate}
	allowedExhaustedRevise = []Action{ActEscalate, ActTerminate, ActRevise}
	// With on_exhausted reduce_scope.
	allowedExhaustedReduce       = []Action{ActEscalate, ActTerminate, ActReduceScope}
	allowedExhaustedReduceRevise = []Action{ActEscalate, ActTerminate, ActRevise, ActReduceScope}
	allowedNonProgress           = []Action{ActReplan, ActTerminate}
)

const (
	// defaultPause is how long ActPause waits when Policy.PauseFor is 0.
	defaultPause = time.Hour
	// defaultThrottleDelay is how long a throttled retry waits when the policy has no delay
	// and the budget no floor.
	defaultThrottleDelay = int64(time.Second)
	// noCap bounds delays when RetryPolicy.Max is 0, far from int64 overflow.
	noCap = int64(1) << 60
)
