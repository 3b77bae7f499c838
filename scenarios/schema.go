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
	faultSchema   = leaves("id", "kind", "tool", "probability", "at", "for", "slowdown", "rate", "factor")

	workloadSchema = obj(
		"investigations", leaf,
		"arrival", arrivalSchema,
		"steps", distSchema,
		"think", distSchema,
		"tokens", distSchema,
		"model", leaf,
		"tools", dict("tool", leaf, false),
		"subagents", obj("probability", leaf, "count", distSchema, "max_depth", leaf),
		"behaviour", leaves("invalid_output", "revise_success", "policy_violation", "stuck", "validation_miss"),
	)

	toolSchema = obj(
		"version", leaf,
		"latency", distSchema,
		"concurrency", leaf,
		"idempotency", leaf,
		"timeout", leaf,
		"compute", leaf,
		"arguments", dict("argument", leaf, false),
	)

	recoverySchema = obj(
		"retry", leaves("max_attempts", "initial", "multiplier", "max", "jitter", "on_exhausted"),
		"retry_budget", leaves("ratio", "min_per_second"),
		"breaker", leaves("window", "failure_ratio", "min_calls", "cooldown"),
		"inspect_before_retry", leaf,
		"inspection", leaves("interval", "max"),
		"revisions", leaf,
		"non_progress", leaves("repeats"),
		"budgets", leaves("tokens", "compute", "wall"),
		"on_exhaustion", leaf,
		"lease", leaf,
		"supervisor", leaves("kind", "accuracy", "latency", "tokens"),
		"humans", obj("reviewers", leaf, "review_time", distSchema, "approve", leaf),
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
		"validation", obj("independent", leaves("false_accept", "false_reject")),
		"redact", list(leaf),
		"expect", dict("metric", leaf, false),
		"tolerances", dict("metric", leaf, false),
		"sweep", &schema{noSet: true},
	)
)
