// Package record holds the plain Go records a simulation emits (one type per trace table of
// docs/traces.md) and the Sink interface they are sent through. It has no dependencies, so
// the simulator, the Arrow trace writer and tests can all share it without linking Arrow.
//
// Times are simulated nanoseconds since the simulation epoch (2026-01-01T00:00:00Z); the
// trace writer turns them into timestamps. A sink receives pointers it must not retain: the
// simulator reuses them, including the backing arrays of slices (CausedBy, Attrs).
package record

// Epoch is simulated time 0 as Unix nanoseconds: 2026-01-01T00:00:00Z.
const Epoch int64 = 1767225600 * 1e9

// Sink receives the records of one run in emission order.
type Sink interface {
	Investigation(*Investigation)
	Span(*Span)
	Transition(*Transition)
	Execution(*Execution)
	Fault(*Fault)
	Sample(*Sample)
	Worker(*Worker)
}

// OpKey is the idempotency key of one logical operation: every attempt of the operation
// carries the same key. A revision of a step is a new logical operation.
type OpKey struct {
	Investigation int64
	Step          int32
	Revision      int32
}

// Operation names a span's kind of work (OpenTelemetry GenAI style, plus mayday's own).
type Operation string

const (
	OpInvokeAgent Operation = "invoke_agent"
	OpExecuteTool Operation = "execute_tool"
	OpInspect     Operation = "inspect"
	OpSupervise   Operation = "supervise"
	OpHumanReview Operation = "human_review"
	OpValidate    Operation = "validate"
	OpPlan        Operation = "plan"
	// OpTakeover is a crashed worker's investigation taken over: the span runs from the
	// instant the worker died (the sign of trouble) to its lease's expiry (when the fleet
	// knew).
	OpTakeover Operation = "takeover"
)

// Status is a span's outcome.
type Status string

const (
	StatusOK      Status = "ok"
	StatusError   Status = "error"
	StatusTimeout Status = "timeout"
	StatusBlocked Status = "blocked"
	StatusInvalid Status = "invalid"
	StatusUnset   Status = "unset" // an operation still open when the run ended (OpenTelemetry's "unset")
)

// Attr is one span attribute; values of secret-looking keys are redacted by the trace writer.
type Attr struct {
	Key   string
	Value string
}

// Span is one operation: an agent invocation, a tool attempt, an inspection, a supervisor
// consultation, a human review, a validation or a plan.
type Span struct {
	TraceID         int64 // root investigation id
	SpanID          uint64
	ParentSpanID    uint64 // 0 = none
	InvestigationID int64
	AgentID         int64
	Operation       Operation
	Tool            string
	ToolVersion     string
	Model           string
	HasKey          bool // OpKey is set (tool attempts and inspections)
	OpKey           OpKey
	Attempt         int32
	Start, End      int64
	QueueWait       int64 // ns
	Status          Status
	FailureClass    string // "" = none
	FaultID         string // "" = none
	InputTokens     int64
	OutputTokens    int64
	Compute         float64 // compute-unit seconds
	InputRef        string
	OutputRef       string
	CausedBy        []uint64 // span ids whose output this operation used
	Attrs           []Attr
	// Worker is the worker the investigation held when the operation ended (for a takeover,
	// the worker that died), 1, 2, ...; 0 = none: workers unlimited, the investigation held
	// none then, or an invoke_agent span, which no one worker runs.
	Worker int64
}

// Worker is one worker of a limited fleet (workload.workers) and its zone, written when the
// worker is first needed.
type Worker struct {
	Worker int64 // 1, 2, ...
	Zone   string
}

// Investigation is one agent's investigation, written once when it ends or at the horizon.
type Investigation struct {
	InvestigationID   int64
	ParentID          int64 // 0 = root
	RootID            int64
	Depth             int32
	ArrivedAt         int64
	Ended             bool // false = in flight at the horizon; EndedAt is then meaningless
	EndedAt           int64
	FinalState        string // lifecycle state at the end (completed, terminated, awaiting_human, ...)
	TerminationReason string // "" unless terminated
	Steps             int32
	Attempts          int32
	Revisions         int32
	Escalations       int32
	Tokens            int64
	Compute           float64
	TrulyValid        bool // ground truth: the result is correct
	Validated         bool // the result passes independent validation
	Crashes           int32
	Scope             string // ScopeFull ("" is read as full) or ScopeReduced
}

// Investigation scopes: reduced when the recovery engine dropped the remaining optional
// steps (on_exhaustion reduce_scope), a step whose attempts ran out (retry.on_exhausted
// reduce_scope), or a subagent's work, so the investigation finished with less than its plan.
const (
	ScopeFull    = "full"
	ScopeReduced = "reduced"
)

// Transition is one durable lifecycle change (a journal record of the recovery engine).
type Transition struct {
	InvestigationID int64
	At              int64
	From, To        string
	Event           string
	FailureClass    string
	Action          string
	DecidedBy       string // engine | supervisor | human | policy
	Reason          string
	Attempt         int32
}

// Execution is tool-side ground truth: one real execution of an operation at a tool.
type Execution struct {
	Tool            string
	OpKey           OpKey
	InvestigationID int64
	Execution       int32 // 1 for the first execution of this key at this tool, 2 for a duplicate, ...
	Start, End      int64
	Outcome         string // ok | lost (the work was done, its reply was lost)
	Delivered       bool   // the result reached the investigation
	Compute         float64
	SideEffects     bool // the tool has side effects (idempotency keyed or none), so a duplicate counts
}

// Fault is one injected fault as configured (windows have Start/End; others span the run).
type Fault struct {
	FaultID    string
	Kind       string
	Tool       string
	Start, End int64
	Parameters string // JSON object
	// Window: the kind acts during [Start, End) only (an outage, a brownout, a zone crash);
	// otherwise Start and End span the run.
	Window bool
	// Hits is what the fault strikes: HitsCalls, HitsInvestigations or HitsWorkers.
	Hits string
}

// What a fault strikes (Fault.Hits).
const (
	HitsCalls          = "calls"          // attempts at a tool, or model calls
	HitsInvestigations = "investigations" // investigations as they start
	HitsWorkers        = "workers"        // the workers running investigations
)

// Sample is a periodic snapshot of one tool's queue and fleet guards (for charts).
type Sample struct {
	Tool         string
	At           int64
	Queued       int32 // waiting in the tool's FIFO queue
	InService    int32
	Parked       int32   // operations waiting on an open breaker
	BudgetTokens float64 // retry-budget tokens; -1 when the budget is off
	BreakerState string  // closed | open | half_open | off
	Attempts     int32   // attempts sent since the previous sample
	Failures     int32   // failed attempts since the previous sample
	Retries      int32   // retries sent since the previous sample
}

// Discard drops every record; for benchmarks.
type Discard struct{}

func (Discard) Investigation(*Investigation) {}
func (Discard) Span(*Span)                   {}
func (Discard) Transition(*Transition)       {}
func (Discard) Execution(*Execution)         {}
func (Discard) Fault(*Fault)                 {}
func (Discard) Sample(*Sample)               {}
func (Discard) Worker(*Worker)               {}

var _ Sink = Discard{}
