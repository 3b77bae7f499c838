package scenarios

// The key tree of the file format. The decoder reads its key lists (so an unknown key gets
// the same suggestions everywhere) and overrides walk it (so `--set` accepts a path the file
// does not spell out yet, such as recovery.breaker.cooldown, but no path the format lacks).

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
}

var leaf = &schema{}

// obj builds a mapping with fixed keys from name, subtree pairs.
func obj(pairs ...any) *schema {
	s := &schema{sub: map[string]*schema{}}
	for i := 0; i < len(pairs); i += 2 {
		k := pairs[i].(string)
		s.keys = append(s.keys, k)
		s.sub[k] = pairs[i+1].(*schema)
	}
	return s
}

// leaves builds a mapping whose fixed keys all hold scalars.
func leaves(keys ...string) *schema {
	pairs := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, leaf)
	}
	return obj(pairs...)
}

func dict(entity string, elem *schema, named bool) *schema {
	return &schema{elem: elem, named: named, entity: entity}
}

func list(elem *schema) *schema { return &schema{elem: elem, seq: true} }

var (
	distSchema    = leaves("dist", "value", "mean", "min", "max", "median", "p95", "alpha")
	arrivalSchema = leaves("poisson", "at_once", "uniform")
	// review_time: a distribution, or {default: DIST, CLASS: DIST, ...}.
	reviewTimeSchema = obj("dist", leaf, "value", leaf, "mean", leaf, "min", leaf, "max", leaf, "median", leaf,
		"p95", leaf, "alpha", leaf, "default", distSchema, "transient", distSchema, "uncertain_completion", distSchema,
		"invalid_output", distSchema, "resource_exhaustion", distSchema, "policy_violation", distSchema, "non_progress", distSchema)
	tokensSchema = leaves("dist", "value", "mean", "min", "max", "median", "p95", "alpha", "growth")
	faultSchema  = leaves("id", "kind", "tool", "probability", "at", "for", "slowdown", "rate", "factor", "share")

	workloadSchema = obj(
		"investigations", leaf,
		"arrival", arrivalSchema,
		"steps", distSchema,
		"think", distSchema,
		"tokens", tokensSchema,
		"model", leaf,
		"tools", dict("tool", leaf, false),
		"subagents", obj("probability", leaf, "count", distSchema, "max_depth", leaf),
		"behaviour", leaves("invalid_output", "revise_success", "policy_violation", "stuck", "validation_miss"),
		"workers", leaf,
		"priority", leaf,
	)

	toolSchema = obj(
		"version", leaf,
		"latency", distSchema,
		"concurrency", leaf,
		"idempotency", leaf,
		"timeout", leaf,
		"compute", leaf,
		"arguments", dict("argument", leaf, false),
		"queue_limit", leaf,
	)

	recoverySchema = obj(
		"retry", leaves("max_attempts", "initial", "multiplier", "max", "jitter", "on_exhausted"),
		"retry_budget", leaves("ratio", "min_per_second"),
		"breaker", leaves("window", "failure_ratio", "min_calls", "cooldown"),
		"inspect_before_retry", leaf,
		"inspection", leaves("interval", "max"),
		"revisions", leaf,
		"non_progress", leaves("repeats"),
		"budgets", leaves("tokens", "compute", "wall", "cost"),
		"on_exhaustion", leaf,
		"lease", leaf,
		"supervisor", obj("kind", leaf, "accuracy", leaf, "latency", leaf, "tokens", leaf,
			"difficulty", leaves("per_attempt", "per_class", "per_step", "floor")),
		"humans", obj("reviewers", leaf, "review_time", reviewTimeSchema, "approve", leaf),
	)

	rootSchema = obj(
		"name", leaf,
		"description", leaf,
		"seed", leaf,
		"horizon", leaf,
		"workload", workloadSchema,
		"tools", dict("tool", toolSchema, true),
		"faults", list(faultSchema),
		"recovery", recoverySchema,
		"redact", list(leaf),
		"expect", dict("metric", leaf, false),
		"tolerances", dict("metric", leaf, false),
		"sweep", &schema{noSet: true},
		"model", leaves("requests_per_minute", "tokens_per_minute", "latency_per_1k_tokens", "failure"),
		"prices", obj(
			"currency", leaf,
			"models", dict("model", leaves("input", "output"), false),
			"tools", dict("tool", leaves("call", "compute_second"), false),
		),
	)
)
