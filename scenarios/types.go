package scenarios

import (
	"time"

	"github.com/mayday-sim/mayday/recovery"
)

// The types in this file are the resolved form of a scenario file (docs/scenarios.md): every
// default filled in, every reference checked. The simulator reads only these; the YAML
// decoder in parse.go produces them. Field order follows the file format. The key tags
// declare the keys that set each field (keys.go): the decoder, Validate, the defaults, the
// JSON Schema and the key tables of docs/scenarios.md all read them.
//
// Durations are simulated time (time.Duration, integer nanoseconds). Maps of the file format
// (tools, the tool mix, arguments, prices, reviewers' cases, expect, tolerances) become
// slices in name order (canonical.go), so that neither map iteration nor the order of keys
// in the file can reach a simulation; sweep keeps file order.

// Scenario is one parsed, validated scenario with defaults resolved.
type Scenario struct {
	Name        string        `json:"name" key:"name,hand" shown:"required"`
	Description string        `json:"description,omitempty" key:"description" want:"one line of text" doc:"one line, shown by mayday scenarios"`
	Seed        uint64        `json:"seed" key:"seed,hand" shown:"1"`
	Horizon     time.Duration `json:"horizon" key:"horizon,>0,default=30d" doc:"simulated time limit; work still open then is in flight"`
	Workload    Workload      `json:"workload" key:"workload,hand" shown:"see below" want:"a mapping such as {investigations: 1000, arrival: {poisson: 100/h}}"`
	Tools       []Tool        `json:"tools" key:"tools,hand" shown:"required, at least one"`
	Faults      []Fault       `json:"faults,omitempty" key:"faults,hand" shown:"none"`
	Recovery    Recovery      `json:"recovery" key:"recovery,hand" shown:"see below" want:"a mapping such as {retry: {max_attempts: 5}, breaker: {}}"`
	Validation  Validation    `json:"validation,omitzero" key:"validation" shown:"both rates 0" want:"a mapping such as {independent: {false_accept: 0.02, false_reject: 0.01}}" doc:"the independent validator's error rates (below)"`
	// Redact lists extra argument-key patterns (case-insensitive substrings) that are
	// redacted on top of the built-in ones (key, token, secret, password, credential).
	Redact []string      `json:"redact,omitempty" key:"redact,hand"`
	Expect []Expectation `json:"expect,omitempty" key:"expect,hand"`
	// Tolerances holds per-metric tolerances for baseline comparison (`mayday check
	// --baseline`), by metric name.
	Tolerances []Tolerance `json:"tolerances,omitempty" key:"tolerances,hand"`
	Sweep      []SweepAxis `json:"sweep,omitempty" key:"sweep,hand"`
	// Tune is what `mayday tune` searches and optimises (tune.go); nil = no tune block.
	Tune *Tune `json:"tune,omitempty" key:"tune,hand" shown:"none"`
	// Hunt is the envelope of faults `mayday hunt` searches (hunt.go); nil = no hunt block.
	Hunt *Hunt `json:"hunt,omitempty" key:"hunt,hand" shown:"none"`
	// Model is the model provider as a shared, limited service; nil = unlimited, never
	// failing (faults may still name it as `tool: model`).
	Model *ModelService `json:"model,omitempty" key:"model" shown:"unlimited, never failing" want:"a mapping such as {requests_per_minute: 600, tokens_per_minute: 2000000, latency_per_1k_tokens: 400ms, failure: 0.001}" doc:"the model provider as a shared, limited service (below)"`
	// Prices turns usage into money (cost metrics, budgets.cost); nil = unpriced.
	Prices *Prices    `json:"prices,omitempty" key:"prices,hand" shown:"none (unpriced)"`
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
	Investigations int     `json:"investigations" key:"investigations,min=1,max=1099511627776,default=1" doc:"root investigations (one root agent each); subagents come on top"`
	Arrival        Arrival `json:"arrival" key:"arrival,hand" shown:"{at_once: true}"`
	Steps          Dist    `json:"steps" key:"steps,min=1,default=1" doc:"tool steps per investigation"`            // count, >= 1 after rounding
	Think          Dist    `json:"think" key:"think,dur,default=0" doc:"model time before each step (a plan span)"` // duration
	Tokens         Dist    `json:"tokens" key:"tokens,hand,default=0"`                                              // count per model turn
	// TokensGrowth is the factor by which a model turn's tokens grow per step (the context
	// grows): step s (from 0) uses Tokens × TokensGrowth^s. 0 stands for the default, 1.
	TokensGrowth float64   `json:"tokens_growth,omitempty"`
	Model        string    `json:"model,omitempty" key:"model" want:"a model name such as research-model-2" doc:"model name recorded on model turns and supervisor spans"`
	Mix          []Weight  `json:"tools" key:"tools,hand" shown:"every tool, weight 1"` // step mix, by tool name, weights > 0
	Subagents    Subagents `json:"subagents" key:"subagents" want:"a mapping such as {probability: 0.1, count: {dist: uniform, min: 1, max: 3}, max_depth: 2}" shown:"off" doc:"subagent spawning: see below"`
	Behaviour    Behaviour `json:"behaviour" key:"behaviour" want:"a mapping of probabilities such as {invalid_output: 0.05}" shown:"all 0" doc:"probabilities of agent behaviour: see below"`
	// Workers is the number of workers that run investigations (roots and subagents) at
	// once; the rest wait pending in Priority order. 0 = unlimited.
	Workers  int    `json:"workers,omitempty" key:"workers,max=2147483648,of=workers" want:"a whole number of workers >= 0 (0 = unlimited)" doc:"workers that run investigations at once, roots and subagents alike; the others wait pending (below); 0 = unlimited"`
	Priority string `json:"priority,omitempty" key:"priority,enum=fifo|roots_first|subagents_first,default=fifo,unset" want:"a worker priority" doc:"the order in which waiting investigations get a free worker"`
	// Zones places the workers in zones, by name (canonical: name order), each holding its
	// share of them; nil = one zone, DefaultZone, holding every worker.
	Zones []Zone `json:"zones,omitempty" key:"zones,hand" shown:"one zone, default, holding every worker"`
	// HoldWorker lists the lifecycle states in which an investigation keeps its worker
	// while it waits for something outside it (a reply, a timer, a review); in the others it
	// gives the worker back and queues for one again when the wait ends. nil = every state.
	HoldWorker []string `json:"hold_worker,omitempty" key:"hold_worker,hand" shown:"every state"`
}

// Zone is one zone of the workers: its name and its share of them.
type Zone struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`
}

// DefaultZone is the name of the one zone of a workload that declares none.
const DefaultZone = "default"

// HoldStates are the lifecycle states workload.hold_worker may name: the states in which an
// investigation waits for something while it may hold a worker.
var HoldStates = []string{"running", "waiting", "recovering", "awaiting_human"}

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
	// ArrivalPiecewise is a Poisson process whose rate changes: Pieces in order, the last
	// lasting until every root has arrived.
	ArrivalPiecewise ArrivalKind = "piecewise"
)

// Arrival is the arrival process of root investigations.
type Arrival struct {
	Kind   ArrivalKind   `json:"kind"`
	Rate   Rate          `json:"rate,omitzero"`    // poisson
	Over   time.Duration `json:"over,omitempty"`   // uniform
	Pieces []Piece       `json:"pieces,omitempty"` // piecewise
}

// Piece is one stretch of a piecewise arrival rate.
type Piece struct {
	Rate Rate          `json:"rate"`
	For  time.Duration `json:"for,omitempty"` // 0 on the last piece: until every root has arrived
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
	Probability float64 `json:"probability" key:"probability,prob" doc:"per step, on the step's first try: the agent spawns subagents"`
	Count       Dist    `json:"count" key:"count,min=1,default=1" doc:"subagents per spawn"` // children per spawn, >= 1 after rounding
	MaxDepth    int     `json:"max_depth" key:"max_depth,max=64,too=deep,default=1" doc:"agents at a depth below this may spawn (roots are depth 0)"`
}

// Behaviour holds the agents' own failure probabilities.
type Behaviour struct {
	InvalidOutput   float64 `json:"invalid_output" key:"invalid_output,prob" doc:"per step: the result fails validation (recovery class invalid_output)"`
	ReviseSuccess   float64 `json:"revise_success" key:"revise_success,prob" doc:"a revision of an invalid step produces a valid result"`
	PolicyViolation float64 `json:"policy_violation" key:"policy_violation,prob" doc:"per step, on its first try: the agent attempts a forbidden operation, which is blocked before it is sent"`
	Stuck           float64 `json:"stuck" key:"stuck,prob" doc:"per investigation: from a random step on, it repeats one failing approach (see recovery.non_progress)"`
	ValidationMiss  float64 `json:"validation_miss" key:"validation_miss,prob" doc:"the agent's own validation passes a result that is in fact wrong"`
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
	Version     string        `json:"version,omitempty" key:"version" want:"a version such as \"3.2\"" doc:"recorded on spans as tool_version (version: 3.2 is the text \"3.2\")"`
	Latency     Dist          `json:"latency" key:"latency,dur,default=0" doc:"service time of one execution"`
	Concurrency int           `json:"concurrency,omitempty" key:"concurrency,max=2147483648,of=servers" want:"a whole number of servers >= 0 (0 = unlimited)" doc:"servers; requests beyond them wait in FIFO order (0 = unlimited)"`
	Idempotency Idempotency   `json:"idempotency" key:"idempotency,enum=keyed|natural|none,default=none" want:"an idempotency" doc:"how the tool treats repeated attempts of one logical operation (below)"`
	Timeout     time.Duration `json:"timeout,omitempty" key:"timeout" doc:"caller-side limit of one attempt, counted from when it is sent (queueing included); 0 = none"`
	Compute     float64       `json:"compute" key:"compute,default=1" want:"compute units per second of service, a number >= 0" doc:"compute units per second of service time"`
	Arguments   []Argument    `json:"arguments,omitempty" key:"arguments,hand" shown:"none"`
	// QueueLimit bounds the FIFO queue in front of the servers: an attempt that finds it
	// full is refused at once (an overload error). 0 = unbounded.
	QueueLimit int `json:"queue_limit,omitempty" key:"queue_limit,max=2147483648" want:"a whole number of waiting attempts >= 0 (0 = unbounded)" doc:"load shedding: an attempt that finds all servers busy and this many attempts already waiting is refused at once (below); 0 = unbounded"`
	// CancelOnTimeout: when the caller's attempt times out, the tool stops its execution
	// (or drops it from the queue) and bills compute only until then.
	CancelOnTimeout bool `json:"cancel_on_timeout,omitempty" key:"cancel_on_timeout" doc:"when the caller's attempt times out, the tool stops its execution (or drops it from the queue) and bills compute only until then (below); false: the work runs to its end"`
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
	// Params holds the kind's own parameters (FaultRule.Params): a *T of the kind's type,
	// or nil for a kind without. The scenario's JSON writes its keys after the fields above.
	Params any `json:"-"`
}

// Recovery is the policy under test: the recovery engine's configuration.
type Recovery struct {
	Retry              Retry            `json:"retry" key:"retry" want:"a mapping such as {max_attempts: 5, initial: 1s, multiplier: 2, max: 5m, jitter: full}" shown:"always on; see below" doc:"retries with backoff"`
	RetryBudget        *RetryBudget     `json:"retry_budget,omitempty" key:"retry_budget" want:"a mapping such as {ratio: 0.1, min_per_second: 1}" doc:"a fleet-wide retry budget; {} turns it on with defaults"`
	Breaker            *Breaker         `json:"breaker,omitempty" key:"breaker" want:"a mapping such as {window: 1m, failure_ratio: 0.5, min_calls: 20, cooldown: 2m}" doc:"a circuit breaker per tool; {} turns it on with defaults"`
	InspectBeforeRetry bool             `json:"inspect_before_retry" key:"inspect_before_retry,default=true" doc:"look up an operation whose reply was lost before retrying it"`
	Inspection         Inspection       `json:"inspection" key:"inspection" want:"a mapping such as {interval: 1m, max: 60}" doc:"lookups of an operation in an unknown state"`
	Revisions          int              `json:"revisions" key:"revisions,max=1000,too=many" doc:"revisions of a step whose result failed validation"`
	NonProgress        *NonProgress     `json:"non_progress,omitempty" key:"non_progress" want:"a mapping such as {repeats: 3}" doc:"detection of an investigation that repeats a failing approach"`
	Budgets            Budgets          `json:"budgets" key:"budgets" want:"a mapping such as {tokens: 2000000, compute: 10h, wall: 24h}" shown:"unlimited" doc:"per-investigation budgets"`
	OnExhaustion       string           `json:"on_exhaustion" key:"on_exhaustion,enum=pause|reduce_scope|terminate,default=terminate" want:"an exhaustion policy" doc:"what a spent budget does"`
	Lease              time.Duration    `json:"lease" key:"lease,>0,default=5m" doc:"how long a crashed worker's investigation waits before another takes over (below)"`
	Supervisor         Supervisor       `json:"supervisor" key:"supervisor,hand" shown:"{kind: rules}" want:"{kind: rules} or {kind: model, accuracy: 0.9, latency: 30s, tokens: 4000}"`
	Humans             *Humans          `json:"humans,omitempty" key:"humans,hand" shown:"off when absent: escalations terminate" want:"a mapping such as {reviewers: 5, review_time: {dist: lognormal, median: 20m, p95: 2h}, approve: 0.8}"` // nil = no humans
	Subagents          SubagentRecovery `json:"subagents" key:"subagents,hand" shown:"{on_failure: reduce_scope}"`
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

// Retry is the per-operation retry policy: the engine's own type, whose tags declare its keys.
type Retry = recovery.RetryPolicy

// Inspection is how an operation that a lookup reports as still running is polled (with
// inspect_before_retry): a lookup every Interval, and after Max lookups that still find it
// running, an escalation.
type Inspection struct {
	Interval time.Duration `json:"interval" key:"interval,>0,default=1m" doc:"time between two lookups (fixed, no jitter)"`
	Max      int           `json:"max" key:"max,min=1,max=100000,too=many,default=60" want:"a whole number of lookups >= 1" doc:"lookups that still find it running before it is escalated as unknown (inspection_unresolved)"`
}

// RetryBudget is the per-tool, fleet-wide retry token bucket: the engine's own type, whose
// tags declare its keys and whose Default holds their defaults.
type RetryBudget = recovery.BudgetConfig

// Breaker is the per-tool circuit breaker: the engine's own type, whose tags declare its
// keys and whose Default holds their defaults.
type Breaker = recovery.BreakerConfig

// NonProgress configures stuck detection.
type NonProgress struct {
	Repeats int `json:"repeats" key:"repeats,min=1,max=1000,too=many,default=3" doc:"consecutive failing operations with the same approach before it counts as stuck"`
}

// Budgets are per investigation; zero means unlimited.
type Budgets struct {
	Tokens  int64         `json:"tokens,omitempty" key:"tokens" want:"a whole number of tokens >= 0 (0 = unlimited)" doc:"tokens the investigation may use; 0 = unlimited"`
	Compute float64       `json:"compute,omitempty" key:"compute,compute" doc:"compute-unit seconds of tool executions; a duration is read as seconds (10h = 36000)"` // compute-unit seconds (10h = 36000)
	Wall    time.Duration `json:"wall,omitempty" key:"wall" doc:"simulated time since the investigation arrived"`
	Cost    float64       `json:"cost,omitempty" key:"cost" want:"an amount of money >= 0 in the currency of prices (0 = unlimited)" doc:"money the investigation may spend, in the currency of prices (which it requires): its model tokens, tool calls and compute at the price table; 0 = unlimited"`
}

// ModelTool is the name by which a fault's `tool` names the model provider.
const ModelTool = "model"

// ModelService is the model provider every model turn calls: rate limits (token buckets
// holding one minute's worth, starting full), a latency that grows with a turn's tokens, and
// a failure probability. Zero values mean unlimited / none.
type ModelService struct {
	RequestsPerMinute  float64       `json:"requests_per_minute,omitempty" key:"requests_per_minute" want:"calls per minute >= 0 (0 = unlimited)" doc:"rate limit on calls: a token bucket holding one minute's worth, starting full; 0 = unlimited"`
	TokensPerMinute    float64       `json:"tokens_per_minute,omitempty" key:"tokens_per_minute" want:"tokens per minute >= 0 (0 = unlimited)" doc:"rate limit on tokens, the same way; a call needs its tokens (at most a full bucket; a bigger turn waits for a full bucket and leaves it in debt); 0 = unlimited"`
	LatencyPer1kTokens time.Duration `json:"latency_per_1k_tokens,omitempty" key:"latency_per_1k_tokens" doc:"added to a turn's workload.think time per 1000 tokens of the turn"`
	Failure            float64       `json:"failure,omitempty" key:"failure,prob" doc:"an admitted call fails anyway (error = model_error)"`
}

// Prices is the price table: per model, per 1000 input and output tokens; per tool, per
// attempt sent and per compute-unit second of execution. Entries are in name order.
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
	Kind     string        `json:"kind" key:"kind,enum=rules|model,default=rules" want:"a supervisor kind" doc:"rules: the engine takes its own default at once and no supervisor is consulted; model: a model is asked"`
	Accuracy float64       `json:"accuracy,omitempty" key:"accuracy,prob" shown:"required for model" doc:"chance the model picks the right action"`
	Latency  time.Duration `json:"latency,omitempty" key:"latency" doc:"time a consultation takes"`
	Tokens   int64         `json:"tokens,omitempty" key:"tokens" want:"a whole number of tokens >= 0" doc:"tokens a consultation costs the investigation"`
	// Difficulty makes a model supervisor's accuracy depend on the trajectory it judges;
	// nil = the same accuracy whatever the case.
	Difficulty *Difficulty `json:"difficulty,omitempty" key:"difficulty" want:"a mapping such as {per_attempt: 0.05, per_class: 0.1, per_step: 0, floor: 0.5}" shown:"none (the same accuracy for every case)" doc:"how the case lowers the accuracy (below)"`
}

// Difficulty is how a case's trajectory lowers a model supervisor's accuracy:
// accuracy − per_attempt·(attempts − 1) − per_class·(classes − 1) − per_step·steps, with
// attempts those sent of the operation judged, classes the distinct failure classes in the
// investigation so far, steps those done; clamped to [floor, 1]. Negative rates raise it.
type Difficulty struct {
	PerAttempt float64 `json:"per_attempt,omitempty" key:"per_attempt,signed" want:"accuracy lost per unit, a number (negative gains)" doc:"accuracy lost per attempt beyond the first: long retry histories are harder to judge"`
	PerClass   float64 `json:"per_class,omitempty" key:"per_class,signed" want:"accuracy lost per unit, a number (negative gains)" doc:"accuracy lost per failure class beyond the first: mixed failures confuse"`
	PerStep    float64 `json:"per_step,omitempty" key:"per_step,signed" want:"accuracy lost per unit, a number (negative gains)" doc:"accuracy lost per step done (negative: more context helps)"`
	Floor      float64 `json:"floor,omitempty" key:"floor,prob" doc:"the accuracy never falls below this"`
}

// FailureClasses are the failure classes an escalation may be about, as the engine names
// them; humans.approve and humans.review_time may be given per class.
var FailureClasses = []string{"transient", "uncertain_completion", "invalid_output", "resource_exhaustion", "policy_violation", "non_progress"}

// Humans is the reviewer pool that works escalations in FIFO order.
type Humans struct {
	Reviewers  int     `json:"reviewers" key:"reviewers,need,max=2147483648,too=many" want:"a whole number >= 0 (0 = escalations terminate)" doc:"reviewers working at once; 0 = nobody, so an escalation terminates"`
	ReviewTime Dist    `json:"review_time" key:"review_time,hand,default=0" shown:"required when reviewers > 0"` // duration; the default for every case
	Approve    float64 `json:"approve" key:"approve,hand,default=1"`                                             // the default for every case
	// ByClass overrides approve and review_time for escalations of one failure class
	// (FailureClasses), by class name.
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
	Independent IndependentValidation `json:"independent,omitzero" key:"independent" want:"a mapping of probabilities such as {false_accept: 0.02}" doc:"the independent validator that sets investigations.validated"`
}

// IndependentValidation holds the independent validator's error rates (probabilities).
type IndependentValidation struct {
	FalseAccept float64 `json:"false_accept,omitempty" key:"false_accept,prob" doc:"a wrong result passes validation"`
	FalseReject float64 `json:"false_reject,omitempty" key:"false_reject,prob" doc:"a right result is rejected"`
}
