package scenarios

import "time"

// The types in this file are the resolved form of a scenario file (docs/scenarios.md): every
// default filled in, every reference checked. The simulator reads only these; the YAML
// decoder in parse.go produces them. Field order follows the file format.
//
// Durations are simulated time (time.Duration, integer nanoseconds). Maps of the file format
// (tools, the tool mix, arguments, expect, sweep) become slices in file order, so that no map
// iteration order can reach a simulation.

// Scenario is one parsed, validated scenario with defaults resolved.
type Scenario struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Seed        uint64        `json:"seed"`
	Horizon     time.Duration `json:"horizon"`
	Workload    Workload      `json:"workload"`
	Tools       []Tool        `json:"tools"`
	Faults      []Fault       `json:"faults,omitempty"`
	Recovery    Recovery      `json:"recovery"`
	Validation  Validation    `json:"validation,omitzero"`
	// Redact lists extra argument-key patterns (case-insensitive substrings) that are
	// redacted on top of the built-in ones (key, token, secret, password, credential).
	Redact []string      `json:"redact,omitempty"`
	Expect []Expectation `json:"expect,omitempty"`
	// Tolerances holds per-metric tolerances for baseline comparison (`mayday check
	// --baseline`), in file order.
	Tolerances []Tolerance `json:"tolerances,omitempty"`
	Sweep      []SweepAxis `json:"sweep,omitempty"`
	// Model is the model provider as a shared, limited service; nil = unlimited, never
	// failing (faults may still name it as `tool: model`).
	Model *ModelService `json:"model,omitempty"`
	// Prices turns usage into money (cost metrics, budgets.cost); nil = unpriced.
	Prices *Prices    `json:"prices,omitempty"`
	Source SourceInfo `json:"-"`
}

// SourceInfo says where a scenario came from, for error messages and for re-parsing it with
// more overrides (Scenario.With).
type SourceInfo struct {
	File      string // path, or "embedded:NAME"
	Embedded  bool
	Data      []byte     // the file's text
	Overrides []Override // the overrides applied to Data, in order
}

// Tool returns the index of the named tool in s.Tools, or -1.
func (s *Scenario) Tool(name string) int {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return i
		}
	}
	return -1
}

// Workload describes the root investigations and how their agents behave.
type Workload struct {
	Investigations int     `json:"investigations"`
	Arrival        Arrival `json:"arrival"`
	Steps          Dist    `json:"steps"`  // count, >= 1 after rounding
	Think          Dist    `json:"think"`  // duration
	Tokens         Dist    `json:"tokens"` // count per model turn
	// TokensGrowth is the factor by which a model turn's tokens grow per step (the context
	// grows): step s (from 0) uses Tokens × TokensGrowth^s. 0 stands for the default, 1.
	TokensGrowth float64   `json:"tokens_growth,omitempty"`
	Model        string    `json:"model,omitempty"`
	Mix          []Weight  `json:"tools"` // step mix, file order, weights > 0
	Subagents    Subagents `json:"subagents"`
	Behaviour    Behaviour `json:"behaviour"`
	// Workers is the number of workers that run investigations (roots and subagents) at
	// once; the rest wait pending in Priority order. 0 = unlimited.
	Workers  int    `json:"workers,omitempty"`
	Priority string `json:"priority,omitempty"` // fifo (default) | roots_first | subagents_first
}

// Worker queue priorities (workload.priority).
const (
	PriorityFIFO           = "fifo"
	PriorityRootsFirst     = "roots_first"
	PrioritySubagentsFirst = "subagents_first"
)

// ArrivalKind is how root investigations arrive.
type ArrivalKind string

const (
	ArrivalPoisson ArrivalKind = "poisson" // exponential gaps at Rate
	ArrivalAtOnce  ArrivalKind = "at_once" // all at time 0
	ArrivalUniform ArrivalKind = "uniform" // uniformly spread over [0, Over)
)

// Arrival is the arrival process of root investigations.
type Arrival struct {
	Kind ArrivalKind   `json:"kind"`
	Rate Rate          `json:"rate,omitzero"`  // poisson
	Over time.Duration `json:"over,omitempty"` // uniform
}

// Rate is events per second, parsed from `N/unit` (`50/m`, `1/24h`).
type Rate struct {
	PerSecond float64 `json:"per_second"`
}

// Weight is one entry of the tool mix.
type Weight struct {
	Tool   string  `json:"tool"`
	Weight float64 `json:"weight"`
}

// Subagents configures how agents spawn child agents.
type Subagents struct {
	Probability float64 `json:"probability"` // per step
	Count       Dist    `json:"count"`       // children per spawn, >= 1 after rounding
	MaxDepth    int     `json:"max_depth"`
}

// Behaviour holds the agents' own failure probabilities.
type Behaviour struct {
	InvalidOutput   float64 `json:"invalid_output"`
	ReviseSuccess   float64 `json:"revise_success"`
	PolicyViolation float64 `json:"policy_violation"`
	Stuck           float64 `json:"stuck"`
	ValidationMiss  float64 `json:"validation_miss"`
}

// DistKind names a distribution family.
type DistKind string

const (
	DistConstant    DistKind = "constant"    // Value
	DistExponential DistKind = "exponential" // Mean
	DistUniform     DistKind = "uniform"     // Min, Max
	DistLognormal   DistKind = "lognormal"   // Median, P95
	DistPareto      DistKind = "pareto"      // Min, Alpha
)

// Dist is a distribution. Its parameters are in the field's unit: nanoseconds for duration
// fields (latency, think, review_time), plain numbers for count fields (steps, tokens).
// Unused parameters are zero.
type Dist struct {
	Kind   DistKind `json:"dist"`
	Value  float64  `json:"value,omitempty"`
	Mean   float64  `json:"mean,omitempty"`
	Min    float64  `json:"min,omitempty"`
	Max    float64  `json:"max,omitempty"`
	Median float64  `json:"median,omitempty"`
	P95    float64  `json:"p95,omitempty"`
	Alpha  float64  `json:"alpha,omitempty"`
}

// Idempotency is how a tool treats repeated attempts of one logical operation.
type Idempotency string

const (
	Keyed   Idempotency = "keyed"   // executes a key once; repeats and lookups answered from its record
	Natural Idempotency = "natural" // safe to repeat (reads); no side effect
	None    Idempotency = "none"    // every attempt executes again
)

// Tool is a simulated service.
type Tool struct {
	Name        string        `json:"name"`
	Version     string        `json:"version,omitempty"`
	Latency     Dist          `json:"latency"`               // service time, duration
	Concurrency int           `json:"concurrency,omitempty"` // servers; 0 = unlimited
	Idempotency Idempotency   `json:"idempotency"`
	Timeout     time.Duration `json:"timeout,omitempty"` // caller-side, per attempt; 0 = none
	Compute     float64       `json:"compute"`           // compute units per second of service
	Arguments   []Argument    `json:"arguments,omitempty"`
	// QueueLimit bounds the FIFO queue in front of the servers: an attempt that finds it
	// full is refused at once (an overload error). 0 = unbounded.
	QueueLimit int `json:"queue_limit,omitempty"`
}

// Argument is one recorded tool argument (redacted before it reaches a trace).
type Argument struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Fault is one injected fault. ID is the `id:` given in the file, or its index as a string.
type Fault struct {
	ID          string        `json:"id"`
	Index       int           `json:"index"`
	Kind        FaultKind     `json:"kind"`
	Tool        string        `json:"tool,omitempty"` // "" = every tool, where the kind allows
	Probability float64       `json:"probability,omitempty"`
	At          time.Duration `json:"at,omitempty"`
	For         time.Duration `json:"for,omitempty"`
	Slowdown    float64       `json:"slowdown,omitempty"`
	Rate        Rate          `json:"rate,omitzero"`
	Factor      float64       `json:"factor,omitempty"`
	Share       float64       `json:"share,omitempty"` // zone_crash: share of the workers in the zone
}

// Recovery is the policy under test: the recovery engine's configuration.
type Recovery struct {
	Retry              Retry            `json:"retry"`
	RetryBudget        *RetryBudget     `json:"retry_budget,omitempty"` // nil = off
	Breaker            *Breaker         `json:"breaker,omitempty"`      // nil = off
	InspectBeforeRetry bool             `json:"inspect_before_retry"`
	Inspection         Inspection       `json:"inspection"`
	Revisions          int              `json:"revisions"`
	NonProgress        *NonProgress     `json:"non_progress,omitempty"` // nil = off
	Budgets            Budgets          `json:"budgets"`
	OnExhaustion       string           `json:"on_exhaustion"` // pause | reduce_scope | terminate
	Lease              time.Duration    `json:"lease"`
	Supervisor         Supervisor       `json:"supervisor"`
	Humans             *Humans          `json:"humans,omitempty"` // nil = no humans
	Subagents          SubagentRecovery `json:"subagents"`
}

// Subagent failure policies (recovery.subagents.on_failure).
const (
	SubagentReduceScope = "reduce_scope"
	SubagentRespawn     = "respawn"
	SubagentFail        = "fail"
)

// SubagentRecovery is what a subagent's failure does to its parent.
type SubagentRecovery struct {
	OnFailure SubagentFailure `json:"on_failure"`
}

// SubagentFailure is the policy for a failed (terminated) subagent: Action reduce_scope (the
// parent goes on without that work and cannot complete at full scope), respawn (start a
// replacement, at most Max times per parent, then Then), or fail (terminate the parent).
type SubagentFailure struct {
	Action string `json:"action"`         // reduce_scope | respawn | fail
	Max    int    `json:"max,omitempty"`  // respawn: replacements per parent investigation
	Then   string `json:"then,omitempty"` // respawn: once Max are spent: reduce_scope | fail
}

// Retry is the per-operation retry policy.
type Retry struct {
	MaxAttempts int           `json:"max_attempts"`
	Initial     time.Duration `json:"initial"`
	Multiplier  float64       `json:"multiplier"`
	Max         time.Duration `json:"max"`
	Jitter      string        `json:"jitter"`       // none | full | equal | decorrelated
	OnExhausted string        `json:"on_exhausted"` // escalate | terminate
}

// Inspection is how an operation that a lookup reports as still running is polled (with
// inspect_before_retry): a lookup every Interval, and after Max lookups that still find it
// running, an escalation.
type Inspection struct {
	Interval time.Duration `json:"interval"`
	Max      int           `json:"max"`
}

// RetryBudget is the per-tool, fleet-wide retry token bucket.
type RetryBudget struct {
	Ratio        float64 `json:"ratio"`
	MinPerSecond float64 `json:"min_per_second"`
}

// Breaker is the per-tool circuit breaker.
type Breaker struct {
	Window       time.Duration `json:"window"`
	FailureRatio float64       `json:"failure_ratio"`
	MinCalls     int           `json:"min_calls"`
	Cooldown     time.Duration `json:"cooldown"`
}

// NonProgress configures stuck detection.
type NonProgress struct {
	Repeats int `json:"repeats"`
}

// Budgets are per investigation; zero means unlimited.
type Budgets struct {
	Tokens  int64         `json:"tokens,omitempty"`
	Compute float64       `json:"compute,omitempty"` // compute-unit seconds (`10h` = 36000)
	Wall    time.Duration `json:"wall,omitempty"`
	Cost    float64       `json:"cost,omitempty"` // in Prices.Currency
}

// ModelTool is the name by which a fault's `tool` names the model provider.
const ModelTool = "model"

// ModelService is the model provider every model turn calls: rate limits (token buckets
// holding one minute's worth, starting full), a latency that grows with a turn's tokens, and
// a failure probability. Zero values mean unlimited / none.
type ModelService struct {
	RequestsPerMinute  float64       `json:"requests_per_minute,omitempty"`
	TokensPerMinute    float64       `json:"tokens_per_minute,omitempty"`
	LatencyPer1kTokens time.Duration `json:"latency_per_1k_tokens,omitempty"`
	Failure            float64       `json:"failure,omitempty"`
}

// Prices is the price table: per model, per 1000 input and output tokens; per tool, per
// attempt sent and per compute-unit second of execution. Entries are in file order.
type Prices struct {
	Currency string       `json:"currency"`
	Models   []ModelPrice `json:"models,omitempty"`
	Tools    []ToolPrice  `json:"tools,omitempty"`
}

// ModelPrice is the price of one model's tokens, per 1000.
type ModelPrice struct {
	Model  string  `json:"model"`
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// ToolPrice is the price of one tool's use.
type ToolPrice struct {
	Tool          string  `json:"tool"`
	Call          float64 `json:"call"`
	ComputeSecond float64 `json:"compute_second"`
}

// Model returns the price of model name, or nil.
func (p *Prices) Model(name string) *ModelPrice {
	if p == nil {
		return nil
	}
	for i := range p.Models {
		if p.Models[i].Model == name {
			return &p.Models[i]
		}
	}
	return nil
}

// Tool returns the price of tool name, or nil.
func (p *Prices) Tool(name string) *ToolPrice {
	if p == nil {
		return nil
	}
	for i := range p.Tools {
		if p.Tools[i].Tool == name {
			return &p.Tools[i]
		}
	}
	return nil
}

// Supervisor is consulted at judgement points.
type Supervisor struct {
	Kind     string        `json:"kind"` // rules | model
	Accuracy float64       `json:"accuracy,omitempty"`
	Latency  time.Duration `json:"latency,omitempty"`
	Tokens   int64         `json:"tokens,omitempty"`
	// Difficulty makes a model supervisor's accuracy depend on the trajectory it judges;
	// nil = the same accuracy whatever the case.
	Difficulty *Difficulty `json:"difficulty,omitempty"`
}

// Difficulty is how a case's trajectory lowers a model supervisor's accuracy:
// accuracy − per_attempt·(attempts − 1) − per_class·(classes − 1) − per_step·steps, with
// attempts those sent of the operation judged, classes the distinct failure classes in the
// investigation so far, steps those done; clamped to [floor, 1]. Negative rates raise it.
type Difficulty struct {
	PerAttempt float64 `json:"per_attempt,omitempty"`
	PerClass   float64 `json:"per_class,omitempty"`
	PerStep    float64 `json:"per_step,omitempty"`
	Floor      float64 `json:"floor,omitempty"`
}

// FailureClasses are the failure classes an escalation may be about, as the engine names
// them; humans.approve and humans.review_time may be given per class.
var FailureClasses = []string{"transient", "uncertain_completion", "invalid_output", "resource_exhaustion", "policy_violation", "non_progress"}

// Humans is the reviewer pool that works escalations in FIFO order.
type Humans struct {
	Reviewers  int     `json:"reviewers"`
	ReviewTime Dist    `json:"review_time"` // duration; the default for every case
	Approve    float64 `json:"approve"`     // the default for every case
	// ByClass overrides approve and review_time for escalations of one failure class
	// (FailureClasses), in file order.
	ByClass []HumanCase `json:"by_class,omitempty"`
}

// HumanCase is how reviewers treat the escalations of one failure class; nil = the default.
type HumanCase struct {
	Class      string   `json:"class"`
	Approve    *float64 `json:"approve,omitempty"`
	ReviewTime *Dist    `json:"review_time,omitempty"`
}

// Case returns the entry for class, or nil.
func (h *Humans) Case(class string) *HumanCase {
	for i := range h.ByClass {
		if h.ByClass[i].Class == class {
			return &h.ByClass[i]
		}
	}
	return nil
}

// Expectation is one regression check of `expect`, e.g. `completion_rate: ">= 0.95"`.
type Expectation struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"` // >=, <=, >, <, ==, between
	Value  float64 `json:"value"`
	Upper  float64 `json:"upper,omitempty"` // for between: Value <= x <= Upper
	Text   string  `json:"text"`            // as written, for messages
	// Line is where the expectation is written. It stays out of the JSON so that moving
	// it in the file does not change the scenario's hash.
	Line int `json:"-"`
}

// Tolerance is a per-metric tolerance for baseline comparison.
type Tolerance struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// SweepAxis is one parameter of a sweep grid: a path into the file and its values.
type SweepAxis struct {
	Path   string   `json:"path"`
	Values []string `json:"values"`
}

// Validation describes the independent validator that sets investigations.validated for a
// completed investigation. It is a check, not the ground truth (truly_valid): it passes a
// wrong result with probability FalseAccept and rejects a right one with FalseReject.
type Validation struct {
	Independent IndependentValidation `json:"independent,omitzero"`
}

// IndependentValidation holds the independent validator's error rates (probabilities).
type IndependentValidation struct {
	FalseAccept float64 `json:"false_accept,omitempty"`
	FalseReject float64 `json:"false_reject,omitempty"`
}
