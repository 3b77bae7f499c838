package scenarios

import "reflect"

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
	named bool
	noSet bool // overrides may not touch this subtree
	noGen bool // the generator of fuzzed files leaves this subtree out
	// rangeOf: a mapping {min, max} of values of this kind, or one such value (hunt ranges)
	rangeOf *schema
	entity  string // what a free key names, for messages: "tool", "metric"

	// What JSONSchema publishes about the value.
	kind    valueKind
	doc     string
	enum    []string // kindEnum: the valid words
	min     float64  // kindInt, kindNumber: the least valid value
	max     float64  // kindInt: the largest valid value, when > 0
	above   bool     // kindNumber: strictly above min; kindDuration, kindRate: > 0
	signed  bool     // kindNumber: any finite number, min ignored
	pattern string   // kindText: a regular expression the text must match
	keyEnum []string // a map with free keys: the valid keys, when they are a fixed set
	keyPat  string   // a map with free keys: a pattern the keys must match
	keyMax  int      // and their most bytes (0: any)
	one     bool     // a mapping that holds exactly one of its keys
	// need: the key must be given whenever its mapping is (the generator of fuzzed files
	// always writes it).
	need bool

	// A declared key (keys.go): the field it sets and its rules beyond the above.
	field    int           // 1 + the index of the field in its struct; 0: not a declared field
	typ      reflect.Type  // a block of declared keys: its struct type
	ptr      bool          // the block is behind a pointer: off when absent
	hand     bool          // decoded and checked by hand, not by the declaration
	def      reflect.Value // the default; invalid: none (the zero value)
	want     string        // how a message names a valid value; "": generated
	zero     string        // the message for a 0 that above refuses; "": generated
	too, of  string        // a whole number above max is "too TOO; want at most N OF"
	enumType bool          // an enum of a type with MarshalText (its zero is a word)
	unset    bool          // zero stands for the default, which readers apply
	shown    string        // the default as the key tables show it, where it is not a value
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

// shown gives a key decoded by hand the default the key tables show.
func shown(base *schema, def string) *schema {
	s := *base
	s.shown = def
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
	supervisorKinds   = []string{"rules", "model"}
	subagentActions   = []string{SubagentReduceScope, SubagentRespawn, SubagentFail}
	subagentFallbacks = []string{SubagentReduceScope, SubagentFail}
)

var (
	distSchema = obj("a distribution",
		"dist", enum(distKinds, "the family"),
		"value", leaf, "mean", leaf, "min", leaf, "max", leaf, "median", leaf, "p95", leaf, "alpha", leaf)
	arrivalSchema = func() *schema {
		s := obj("how root investigations arrive: exactly one of {poisson: RATE} (rate > 0), {at_once: true}, {uniform: DURATION} (> 0) or {piecewise: [{rate: RATE, for: DURATION}, ..., {rate: RATE}]}: a Poisson process, all at time 0, spread uniformly over [0, duration), or a Poisson process whose rate changes (below)",
			"poisson", &schema{kind: kindRate, above: true, doc: "a Poisson process of this rate > 0, such as 1000/h"},
			"at_once", val(kindBool, "true: all at time 0"),
			"uniform", positive("spread uniformly over [0, this duration > 0)"),
			"piecewise", list(obj("one stretch of the arrival rate",
				"rate", val(kindRate, "arrivals per unit of time in this stretch, >= 0 (> 0 in the last)"),
				"for", positive("the stretch's length, > 0; the last piece has none: it lasts until every root has arrived")),
				"a Poisson process whose rate changes: stretches in order, the last without for"))
		s.one = true
		return s
	}()
	faultSchema = obj("a fault to inject; the keys it takes depend on its kind",
		"id", shown(text("a unique id (letters, digits, _, . and -); default its position in the list"), "its index"),
		"kind", shown(enum(nil, "what fails"), "required"), // the registered kinds (RegisterFault)
		"tool", shown(text("the tool it hits; default every tool"), "every tool"), // RegisterFault names the model's kinds
		"probability", prob("per attempt (transient, lost_response, brownout) or per investigation (invalid_config, budget_spike)"),
		"at", duration("start of the window, in simulated time since the start (default 0)"),
		"for", shown(positive("length of the window, > 0"), "required"),
		"slowdown", shown(number(1, false, "brownout: factor >= 1 on the service time of attempts that do not fail"), "1"),
		"rate", shown(val(kindRate, "worker_crash: crashes per running investigation, such as 1/24h"), "required"),
		"factor", shown(number(1, false, "budget_spike: factor >= 1 on the tokens of every model turn"), "required"),
		"share", shown(number(0, true, "zone_crash: share in (0, 1] of the running workers that die at `at`"), "required"),
		// RegisterFault adds the keys of every kind's own parameters (FaultRule.Params).
	)

	workloadSchema = declare(reflect.TypeFor[Workload](), "the investigations and how the agents behave",
		"arrival", arrivalSchema,
		"tokens", withKeys(countDist("tokens per model turn (recorded as ¾ input, ¼ output); a mapping may add growth (below)"),
			"growth", shown(number(0, true, "factor > 0 on a turn's tokens per step done: step n costs tokens x growth^n"), "1")),
		"tools", dict("tool", number(0, true, "the tool's weight in the step mix, > 0"), false,
			"the step mix: each step's tool is drawn with these weights; a tool left out is never used by a step"),
		"zones", func() *schema {
			share := &schema{kind: kindProb, above: true, doc: "the zone's share of the workers, in (0, 1]; the shares sum to 1"}
			z := dict("zone", share, false,
				"the zones of the workers (with limited workers): each holds its share of them, rounded to whole workers; a zone_crash may name one (below)")
			z.keyPat = entityName.String()
			return z
		}(),
		"hold_worker", list(enum(HoldStates, "a lifecycle state"),
			"the states in which a waiting investigation keeps its worker; in the others it gives the worker back and queues for one again when the wait ends (below)"),
	)

	toolSchema = func() *schema {
		s := declare(reflect.TypeFor[Tool](), "a service the agents call",
			"arguments", dict("argument", text("recorded on every attempt's span as arg.NAME, after redaction"), false,
				"recorded on every attempt's span as arg.NAME, after redaction"))
		s.want = "a tool such as {latency: {dist: exponential, mean: 2s}, timeout: 30s}"
		return s
	}()

	recoverySchema = declare(reflect.TypeFor[Recovery](), "the recovery policy under test",
		"supervisor", declare(reflect.TypeFor[Supervisor](), "who decides escalations (below)"),
		"humans", declare(reflect.TypeFor[Humans](), "human reviewers for escalations (below)",
			"review_time", needed(byClass(kindDurDistByClass, "time one review takes: a distribution, or {default: DIST, CLASS: DIST} per failure class")),
			"approve", byClass(kindProbByClass, "chance a review approves: a probability, or {default: P, CLASS: P} per failure class")),
		"subagents", obj("what a subagent's failure does to its parent (below)",
			"on_failure", actionOrMap(subagentActions,
				"reduce_scope (the parent goes on without the lost work, never at full scope), respawn (a replacement, once, then reduce_scope) or fail (the parent is terminated); or {action: respawn, max: N, then: reduce_scope | fail}",
				"action", enum(subagentActions, "what a failed subagent does to its parent"),
				"max", integer(0, 1000, "respawn: replacement subagents per parent investigation (default 1)"),
				"then", enum(subagentFallbacks, "respawn: what a failure does once max replacements are spent (default reduce_scope)"))),
	)

	rootSchema = func() *schema {
		s := declare(reflect.TypeFor[Scenario](), "a mayday scenario: a fleet of agents, its tools, the faults to inject and the recovery policy under test",
			"name", &schema{kind: kindText, need: true, pattern: scenarioName.String(), doc: "the scenario's name; run folders and run ids are built from it"},
			"seed", integer(0, 0, "the seed of a run, a whole number that fits in 64 bits; --seed overrides it"),
			"workload", workloadSchema,
			"tools", needed(dict("tool", toolSchema, true, "the services the agents call, by name")),
			"faults", list(faultSchema, "failures to inject"),
			"recovery", recoverySchema,
			"redact", list(text("a case-insensitive argument-key pattern"), "extra argument-key patterns to redact in traces"),
			"expect", dict("metric", val(kindCheck, `a check such as ">= 0.95", "== 0", "<= 45m" or "between A and B"`), false,
				"regression checks for mayday check, by metric"),
			"tolerances", dict("metric", number(0, false, "absolute tolerance in the metric's unit, >= 0"), false,
				"absolute tolerances for mayday check --baseline, by metric"),
			"sweep", &schema{noSet: true, kind: kindMap, doc: "a parameter grid for mayday sweep: paths (as --set takes them) to non-empty lists of values"},
			"tune", tuneSchema,
			"hunt", huntSchema,
			"prices", obj("what tokens and tool use cost in money, for the money metrics and budgets.cost (below)",
				"currency", shown(text("the currency code of every price, such as USD"), "USD"),
				"models", dict("model", obj("prices of one model",
					"input", number(0, false, "per 1000 input tokens"),
					"output", number(0, false, "per 1000 output tokens")), false, "prices per model"),
				"tools", dict("tool", obj("prices of one tool",
					"call", number(0, false, "per attempt sent"),
					"compute_second", number(0, false, "per compute-unit second")), false, "prices per tool")),
		)
		s.sub["tools"].keyPat, s.sub["tools"].keyMax = toolNamePattern, MaxNameLen
		s.sub["expect"].keyEnum = Metrics
		s.sub["tolerances"].keyEnum = Metrics
		return s
	}()
)
