package scenarios

// The key tree of the file format. The decoder reads its key lists (so an unknown key gets
// the same suggestions everywhere), overrides walk it (so `--set` accepts a path the file
// does not spell out yet, such as recovery.breaker.cooldown, but no path the format lacks),
// and JSONSchema turns it into the schema editors use. Each value's kind, enum and bounds
// live here next to its description, so the published schema describes what the decoder
// accepts; the enums are the very lists the decoder checks against.

type schema struct {
	keys []string           // fixed keys, in the order the format documents them
	sub  map[string]*schema // their subtrees
	elem *schema            // entries of a map with free keys, or items of a list
	seq  bool               // a list: elem describes its items
	// named: the free keys of this map must already exist in the file when an override
	// names one (a misspelt tool name must not create a new tool).
	named  bool
	noSet  bool   // overrides may not touch this subtree
	entity string // what a free key names, for messages: "tool", "metric"

	// What JSONSchema publishes about the value.
	kind    valueKind
	doc     string
	enum    []string // kindEnum: the valid words
	min     float64  // kindInt, kindNumber: the least valid value
	max     float64  // kindInt: the largest valid value, when > 0
	above   bool     // kindNumber: strictly above min; kindDuration: > 0
	signed  bool     // kindNumber: any finite number, min ignored
	pattern string   // kindText: a regular expression the text must match
	keyEnum []string // a map with free keys: the valid keys, when they are a fixed set
	keyPat  string   // a map with free keys: a pattern the keys must match
	one     bool     // a mapping that holds exactly one of its keys
	// need: the key must be given whenever its mapping is (the generator of fuzzed files
	// always writes it).
	need bool
}

// valueKind is what a value of the file is, as the decoder reads it.
type valueKind uint8

const (
	kindAny            valueKind = iota // not described: anything
	kindMap                             // a mapping: keys/sub, or free keys with elem
	kindList                            // a list of elem
	kindText                            // a single value read as text (`version: 3.2` is "3.2")
	kindInt                             // a whole number
	kindNumber                          // a finite number
	kindProb                            // a number in [0, 1]
	kindBool                            // true or false
	kindDuration                        // Go duration syntax plus d, or a bare 0
	kindRate                            // N/unit
	kindEnum                            // one of enum
	kindDurDist                         // a distribution of durations
	kindCountDist                       // a distribution of counts
	kindCheck                           // an expectation such as ">= 0.95"
	kindCompute                         // compute-unit seconds: a number or a duration
	kindProbByClass                     // a probability, or {default: P, CLASS: P, ...}
	kindDurDistByClass                  // a distribution of durations, or {default: DIST, CLASS: DIST, ...}
	kindActionOrMap                     // a word of enum, or a mapping of keys/sub ({action: WORD, ...})
)

// leaf is a value the tree does not describe; JSONSchema accepts anything there, and a test
// refuses any leaf left undescribed.
var leaf = &schema{}

func val(k valueKind, doc string) *schema { return &schema{kind: k, doc: doc} }

func duration(doc string) *schema { return val(kindDuration, doc) }

// positive is a duration that must be > 0; the decoder and Validate both read it here.
func positive(doc string) *schema { return &schema{kind: kindDuration, above: true, doc: doc} }
func prob(doc string) *schema     { return val(kindProb, doc) }
func text(doc string) *schema     { return val(kindText, doc) }
func durDist(doc string) *schema {
	return &schema{keys: distSchema.keys, sub: distSchema.sub, kind: kindDurDist, doc: doc}
}
func countDist(doc string) *schema {
	return &schema{keys: distSchema.keys, sub: distSchema.sub, kind: kindCountDist, doc: doc}
}
func integer(min, max float64, doc string) *schema {
	return &schema{kind: kindInt, min: min, max: max, doc: doc}
}
func number(min float64, above bool, doc string) *schema {
	return &schema{kind: kindNumber, min: min, above: above, doc: doc}
}
func signedNumber(doc string) *schema {
	return &schema{kind: kindNumber, signed: true, doc: doc}
}
func enum(options []string, doc string) *schema {
	return &schema{kind: kindEnum, enum: options, doc: doc}
}

// actionOrMap is a word of options, or a mapping of the fixed keys pairs whose action key
// takes the same words.
func actionOrMap(options []string, doc string, pairs ...any) *schema {
	s := obj(doc, pairs...)
	s.kind, s.enum = kindActionOrMap, options
	return s
}

// withKeys adds fixed keys (name, subtree pairs) to a copy of base, such as growth beside a
// distribution's parameters.
func withKeys(base *schema, pairs ...any) *schema {
	s := *base
	s.keys = append([]string(nil), base.keys...)
	s.sub = make(map[string]*schema, len(base.sub)+len(pairs)/2)
	for k, v := range base.sub {
		s.sub[k] = v
	}
	for i := 0; i < len(pairs); i += 2 {
		k := pairs[i].(string)
		s.keys = append(s.keys, k)
		s.sub[k] = pairs[i+1].(*schema)
	}
	return &s
}

// byClass is a value given once, or per failure class with a default: the keys default and
// every class of FailureClasses, each holding a probability or a distribution as k says.
func byClass(k valueKind, doc string) *schema {
	one := prob("for this failure class")
	if k == kindDurDistByClass {
		one = durDist("for this failure class")
	}
	pairs := []any{"default", withDoc(one, "for every failure class not named")}
	for _, c := range FailureClasses {
		pairs = append(pairs, c, one)
	}
	s := obj(doc, pairs...)
	s.kind = k
	return s
}

// needed marks a key that must be given whenever its mapping is.
func needed(base *schema) *schema {
	s := *base
	s.need = true
	return &s
}

func withDoc(base *schema, doc string) *schema {
	s := *base
	s.doc = doc
	return &s
}

// leaves builds a mapping whose fixed keys hold values the tree does not describe further.
func leaves(keys ...string) *schema {
	pairs := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, leaf)
	}
	return obj("", pairs...)
}

// obj builds a mapping with fixed keys from name, subtree pairs.
func obj(doc string, pairs ...any) *schema {
	s := &schema{sub: map[string]*schema{}, kind: kindMap, doc: doc}
	for i := 0; i < len(pairs); i += 2 {
		k := pairs[i].(string)
		s.keys = append(s.keys, k)
		s.sub[k] = pairs[i+1].(*schema)
	}
	return s
}

func dict(entity string, elem *schema, named bool, doc string) *schema {
	return &schema{elem: elem, named: named, entity: entity, kind: kindMap, doc: doc}
}

func list(elem *schema, doc string) *schema {
	return &schema{elem: elem, seq: true, kind: kindList, doc: doc}
}

// The enums the decoder checks values against.
var (
	idempotencies      = []string{string(Keyed), string(Natural), string(None)}
	jitters            = []string{"none", "full", "equal", "decorrelated"}
	retryExhausted     = []string{"escalate", "terminate"}
	exhaustionPolicies = []string{"pause", "reduce_scope", "terminate"}
	supervisorKinds    = []string{"rules", "model"}
	subagentActions    = []string{SubagentReduceScope, SubagentRespawn, SubagentFail}
	subagentFallbacks  = []string{SubagentReduceScope, SubagentFail}
	priorities         = []string{PriorityFIFO, PriorityRootsFirst, PrioritySubagentsFirst}
)

var (
	distSchema = obj("a distribution",
		"dist", enum(distKinds, "the family"),
		"value", leaf, "mean", leaf, "min", leaf, "max", leaf, "median", leaf, "p95", leaf, "alpha", leaf)
	arrivalSchema = func() *schema {
		s := obj("how root investigations arrive: exactly one of poisson, at_once or uniform (default {at_once: true})",
			"poisson", val(kindRate, "a Poisson process of this rate > 0, such as 1000/h"),
			"at_once", val(kindBool, "true: all at time 0"),
			"uniform", positive("spread uniformly over [0, this duration > 0)"))
		s.one = true
		return s
	}()
	faultSchema = obj("a fault to inject; the keys it takes depend on its kind",
		"id", text("a unique id (letters, digits, _, . and -); default its position in the list"),
		"kind", enum(nil, "what fails"), // the registered kinds (RegisterFault)
		"tool", text("the tool it hits; default every tool"), // RegisterFault names the model's kinds
		"probability", prob("per attempt (transient, lost_response, brownout) or per investigation (invalid_config, budget_spike)"),
		"at", duration("start of the window, in simulated time since the start (default 0)"),
		"for", positive("length of the window, > 0"),
		"slowdown", number(1, false, "brownout: factor >= 1 on the service time of attempts that do not fail"),
		"rate", val(kindRate, "worker_crash: crashes per running investigation, such as 1/24h"),
		"factor", number(1, false, "budget_spike: factor >= 1 on the tokens of every model turn"),
		"share", number(0, true, "zone_crash: share in (0, 1] of the running workers that die at `at`"),
	)

	workloadSchema = obj("the investigations and how the agents behave",
		"investigations", integer(1, 1<<40, "root investigations (one root agent each); subagents come on top"),
		"arrival", arrivalSchema,
		"steps", countDist("tool steps per investigation, >= 1 (default constant 1)"),
		"think", durDist("model time before each step (default constant 0)"),
		"tokens", withKeys(countDist("tokens per model turn (default constant 0); a mapping may add growth"),
			"growth", number(0, true, "factor > 0 on a turn's tokens per step done: step n costs tokens x growth^n (default 1)")),
		"model", text("model name recorded on model turns and supervisor spans"),
		"tools", dict("tool", number(0, true, "the tool's weight in the step mix, > 0"), false,
			"the step mix: each step's tool is drawn with these weights (default every tool, weight 1)"),
		"subagents", obj("subagent spawning (default off)",
			"probability", prob("per step, on its first try: the agent spawns subagents"),
			"count", countDist("subagents per spawn, >= 1 (default constant 1)"),
			"max_depth", integer(0, 64, "agents at a depth below this may spawn; roots are depth 0 (default 1)")),
		"behaviour", obj("probabilities of agent behaviour (default all 0)",
			"invalid_output", prob("per step: the result fails validation"),
			"revise_success", prob("a revision of an invalid step produces a valid result"),
			"policy_violation", prob("per step, on its first try: the agent attempts a forbidden operation"),
			"stuck", prob("per investigation: from a random step on, it repeats one failing approach"),
			"validation_miss", prob("the agent's own validation passes a result that is in fact wrong")),
		"workers", integer(0, 1<<31, "workers that run investigations and subagents; the rest wait pending (default 0 = unlimited)"),
		"priority", enum(priorities, "which pending work gets a free worker first (default fifo)"),
	)

	toolSchema = obj("a service the agents call",
		"version", text("recorded on spans as tool_version"),
		"latency", durDist("service time of one execution (default constant 0)"),
		"concurrency", integer(0, 1<<31, "servers; requests beyond them wait in FIFO order (default 0 = unlimited)"),
		"idempotency", enum(idempotencies, "how the tool treats repeated attempts of one logical operation (default none)"),
		"timeout", duration("caller-side limit of one attempt, queueing included (default 0 = none)"),
		"compute", number(0, false, "compute units per second of service time (default 1)"),
		"arguments", dict("argument", text("recorded on every attempt's span as arg.NAME, after redaction"), false,
			"arguments recorded on every attempt's span"),
		"queue_limit", integer(0, 1<<31, "attempts that may wait for a server; one more is refused at once as overloaded (default 0 = unbounded)"),
	)

	recoverySchema = obj("the recovery policy under test",
		"retry", obj("retries with backoff (always on)",
			"max_attempts", integer(1, 1000, "attempts per logical operation, the first included; 1 = never retry (default 3)"),
			"initial", duration("the first backoff (default 1s)"),
			"multiplier", number(1, false, "growth of the backoff per attempt, >= 1 (default 2)"),
			"max", duration("cap of the backoff, >= initial (default 1m)"),
			"jitter", enum(jitters, "how the backoff is randomised (default full)"),
			"on_exhausted", enum(retryExhausted, "what happens when the attempts are spent (default escalate)")),
		"retry_budget", obj("a fleet-wide retry budget (off when absent; {} turns it on with defaults)",
			"ratio", number(0, false, "tokens earned per first attempt (default 0.1)"),
			"min_per_second", number(0, false, "tokens added per second whatever the traffic (default 1)")),
		"breaker", obj("a circuit breaker per tool (off when absent; {} turns it on with defaults)",
			"window", positive("the window failures are counted over, > 0 (default 1m)"),
			"failure_ratio", number(0, true, "share of failed calls in (0, 1] that opens the breaker (default 0.5)"),
			"min_calls", integer(1, 1<<31, "calls in the window before it may open (default 20)"),
			"cooldown", positive("time open before a trial call, > 0 (default 2m)")),
		"inspect_before_retry", val(kindBool, "look up an operation whose reply was lost before retrying it (default true)"),
		"inspection", obj("lookups of an operation in an unknown state",
			"interval", positive("time between two lookups, > 0 (default 1m)"),
			"max", integer(1, maxInspections, "lookups that still find it running before it is escalated (default 60)")),
		"revisions", integer(0, 1000, "revisions of a step whose result failed validation (default 0)"),
		"non_progress", obj("detection of an investigation that repeats a failing approach (off when absent)",
			"repeats", integer(1, 1000, "consecutive failing operations with the same approach before it counts as stuck (default 3)")),
		"budgets", obj("per-investigation budgets (default unlimited)",
			"tokens", integer(0, 0, "tokens the investigation may use; 0 = unlimited"),
			"compute", val(kindCompute, "compute-unit seconds of tool executions: a number, or a duration read as seconds"),
			"wall", duration("simulated time since the investigation arrived"),
			"cost", number(0, false, "money the investigation may spend, in the currency of prices; 0 = unlimited (needs prices)")),
		"on_exhaustion", enum(exhaustionPolicies, "what a spent budget does (default terminate)"),
		"lease", positive("how long a crashed worker's investigation waits before another takes over, > 0 (default 5m)"),
		"supervisor", obj("who decides escalations (default {kind: rules})",
			"kind", enum(supervisorKinds, "rules: the engine's own default at once; model: a model is asked"),
			"accuracy", prob("model: chance the model picks the right action (required for model)"),
			"latency", duration("model: time per decision"),
			"tokens", integer(0, 0, "model: tokens per decision"),
			"difficulty", obj("model: how much harder cases lower the accuracy (default none)",
				"per_attempt", signedNumber("accuracy lost per attempt of the operation beyond the first (negative: gained)"),
				"per_class", signedNumber("accuracy lost per distinct failure class in the trajectory beyond the first (negative: gained)"),
				"per_step", signedNumber("accuracy lost per step done (negative: gained)"),
				"floor", prob("the accuracy never drops below this"))),
		"humans", obj("human reviewers for escalations (off when absent: escalations terminate)",
			"reviewers", needed(integer(0, 1<<31, "reviewers working in parallel; 0 = escalations terminate (required)")),
			"review_time", needed(byClass(kindDurDistByClass, "time one review takes (required when reviewers > 0): a distribution, or {default: DIST, CLASS: DIST} per failure class")),
			"approve", byClass(kindProbByClass, "chance a review approves: a probability, or {default: P, CLASS: P} per failure class (default 1)")),
		"subagents", obj("what a subagent's failure does to its parent (default {on_failure: reduce_scope})",
			"on_failure", actionOrMap(subagentActions,
				"reduce_scope (the parent goes on without the lost work, never at full scope), respawn (a replacement, once, then reduce_scope) or fail (the parent is terminated); or {action: respawn, max: N, then: reduce_scope | fail}",
				"action", enum(subagentActions, "what a failed subagent does to its parent"),
				"max", integer(0, 1000, "respawn: replacement subagents per parent investigation (default 1)"),
				"then", enum(subagentFallbacks, "respawn: what a failure does once max replacements are spent (default reduce_scope)"))),
	)

	rootSchema = func() *schema {
		s := obj("a mayday scenario: a fleet of agents, its tools, the faults to inject and the recovery policy under test",
			"name", &schema{kind: kindText, need: true, pattern: scenarioName.String(), doc: "the scenario's name; run folders and run ids are built from it"},
			"description", text("one line, shown by mayday scenarios"),
			"seed", integer(0, 0, "the seed of a run, a whole number that fits in 64 bits; --seed overrides it (default 1)"),
			"horizon", positive("simulated time limit, > 0; work still open then is in flight (default 30d)"),
			"workload", workloadSchema,
			"tools", needed(dict("tool", toolSchema, true, "the services the agents call, by name (required, at least one)")),
			"faults", list(faultSchema, "failures to inject"),
			"recovery", recoverySchema,
			"validation", obj("how the independent validator errs (default: never)",
				"independent", obj("the independent validator that sets investigations.validated",
					"false_accept", prob("chance it passes a result that is truly wrong (default 0)"),
					"false_reject", prob("chance it rejects a result that is truly valid (default 0)"))),
			"redact", list(text("a case-insensitive argument-key pattern"), "extra argument-key patterns to redact in traces"),
			"expect", dict("metric", val(kindCheck, `a check such as ">= 0.95", "== 0", "<= 45m" or "between A and B"`), false,
				"regression checks for mayday check, by metric"),
			"tolerances", dict("metric", number(0, false, "absolute tolerance in the metric's unit, >= 0"), false,
				"absolute tolerances for mayday check --baseline, by metric"),
			"sweep", &schema{noSet: true, kind: kindMap, doc: "a parameter grid for mayday sweep: paths (as --set takes them) to non-empty lists of values"},
			"model", obj("the model provider, a service all agents share (default unlimited, never failing)",
				"requests_per_minute", number(0, false, "model calls admitted per minute; 0 = unlimited"),
				"tokens_per_minute", number(0, false, "tokens admitted per minute; 0 = unlimited"),
				"latency_per_1k_tokens", duration("time a model turn takes per 1000 tokens, on top of think time"),
				"failure", prob("chance a model call fails fast (transient)")),
			"prices", obj("prices for the money metrics and budgets.cost (default none)",
				"currency", text("the currency code of every price, such as USD"),
				"models", dict("model", obj("prices of one model",
					"input", number(0, false, "per 1000 input tokens"),
					"output", number(0, false, "per 1000 output tokens")), false, "prices per model"),
				"tools", dict("tool", obj("prices of one tool",
					"call", number(0, false, "per attempt sent"),
					"compute_second", number(0, false, "per compute-unit second")), false, "prices per tool")),
		)
		s.sub["tools"].keyPat = entityName.String()
		s.sub["expect"].keyEnum = Metrics
		s.sub["tolerances"].keyEnum = Metrics
		return s
	}()
)
