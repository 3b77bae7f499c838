// Package scenarios reads mayday scenario files (docs/scenarios.md): it parses the YAML,
// applies `--set` overrides and sweep points, checks everything, fills in defaults and
// returns a resolved *Scenario, the only form the simulator reads.
//
// # Contract
//
//   - Parse, ParseOverrides, Load and LoadOverrides return either a scenario that passes
//     Validate (their last step is Validate's) or an ErrorList holding every problem found, each an *Error naming the file,
//     line, dotted key (workload.arrival.poisson, faults[2].for) and what would be valid.
//   - Checking is strict: unknown keys (with the closest known key suggested), wrong types,
//     negative durations, probabilities outside [0, 1], weights <= 0, unknown tools or
//     metrics, distributions with missing or extra parameters, a lognormal whose p95 is not
//     above its median, malformed durations and rates, and a lost_response or hang fault on
//     a tool without a timeout (the caller would wait forever) are all errors.
//   - The resolved scenario holds no maps: the file's maps (tools, the tool mix, arguments,
//     prices, reviewers' cases, expect, tolerances) become slices in name order, whatever
//     the order of their keys in the file (YAML mappings are unordered), so JSON() is the
//     same bytes for the same scenario, Hash() (SHA-256 of JSON) identifies it, and a run
//     does not depend on key order. Only sweep keeps file order (it orders the grid).
//   - Overrides (Override, ParseSet, Expand, Scenario.With) change the YAML tree before
//     decoding, so an overridden value meets exactly the checks a value in the file meets.
//     Paths are those of `sweep`: recovery.retry.max_attempts, faults[2].for,
//     tools.backtest.concurrency. A path may add a key the file omits, but a tool or list
//     item that does not exist is an error naming the closest valid key.
//   - A sweep (`sweep:` in the file) expands with Expand into points in file order, the last
//     axis varying fastest; each value of each axis is checked when the file is parsed.
//   - Each key is declared once, by struct tags on the Go field it sets (keys.go): its
//     kind, bounds, enum, default, description and message text. The recovery engine's
//     own configuration types (recovery.RetryPolicy, BudgetConfig, BreakerConfig) are the
//     retry, retry_budget and breaker blocks and carry their keys; their defaults are the
//     engine's (DefaultBudget, DefaultBreaker, through their Default methods). The key tree
//     (schema.go) is built from the declarations, with the few keys decoded by hand (the
//     arrival process, the step mix, the supervisor, the reviewers' per-class values, a
//     subagent's failure policy, faults, prices, checks); the decoder reports file errors
//     with line and key from it, Validate checks a resolved scenario against the same
//     entries, JSONSchema publishes them and KeyTable writes the key tables of
//     docs/scenarios.md. Rules across keys (retry max >= initial, a lost_response or hang
//     fault needs a timeout) are one function each, called by both. KeysOf declares the
//     keys of another struct (a fault kind's typed parameters) the same way.
//   - One validate-and-default step: Validate fills what a scenario built in Go left zero,
//     where zero is not a valid setting of the key, with the declared default (a key whose
//     zero is a setting, such as inspect_before_retry: false or retry.initial: 0, keeps
//     it), then checks. Parse ends with the same step; sim.Run calls it once; neither sim
//     nor recovery re-checks or clamps a scenario rule. Defaults() is the scenario with
//     every default, for a scenario built in Go to start from.
//   - The error cases are datadriven files in testdata/*.txt: a `parse [set=PATH=VALUE]`
//     directive, the YAML, `----`, every error in order (regenerate with -update, the flag
//     that also rewrites docs/scenario.schema.json and the key tables).
//   - The examples in this folder (*.yaml) are embedded: List, Embedded, and Load, which
//     takes a file path or an example's name (an existing file of that name wins).
//
// # Values
//
// Durations are Go syntax plus d for days: 90s, 2h30m, 1.5d; a bare 0 is zero. Rates are
// N/unit: 50/m, 100/h, 1/24h. Distributions are {dist: constant, value: X},
// {dist: exponential, mean: X}, {dist: uniform, min: X, max: Y},
// {dist: lognormal, median: X, p95: Y} or {dist: pareto, min: X, alpha: A}; their parameters
// are durations for latency, think and review_time (stored in nanoseconds) and numbers for
// steps, tokens and count. A single value X is shorthand for {dist: constant, value: X}.
// budgets.compute is compute-unit seconds, written as a number or a duration (10h = 36000).
// Expectations are ">= X", "<= X", "== X", "> X", "< X" or "between A and B"; for
// median_recovery_time, p95_recovery_time and makespan (seconds) X may be a duration.
//
// # Names and faults
//
// A scenario name is [a-z0-9-]+. A tool name is any UTF-8 text of at most MaxNameLen bytes
// without control characters (CheckToolName); in a path (tools.fetch_data.timeout) a key
// that is not a plain word is written in double quotes: tools."mcp.github.create_issue".timeout. Each fault kind registers its own rule (RegisterFault) from
// its file in package sim, sim/fault_<kind>.go: the shared keys it takes besides id and
// kind, its own parameters (FaultRule.Params, a struct whose fields carry key tags; a
// fault holds them in Fault.Params), those it requires, whether it is a window, whether it
// may name the model and whether the tools it hits need a timeout. The kinds table and the
// fault key table of docs/scenarios.md are generated from the registered rules.
//
// # Defaults
//
// Whatever a scenario omits is off or unlimited, except where listed here (the key
// declarations hold every one of them; docs/scenarios.md lists them by key):
//
//	seed                        1
//	horizon                     30d
//	workload.investigations     1
//	workload.arrival            {at_once: true}
//	workload.steps              constant 1
//	workload.think              constant 0
//	workload.tokens             constant 0; growth 1 (no growth per step)
//	workload.model              "" (none recorded)
//	workload.tools (the mix)    every tool, weight 1 each
//	workload.subagents          off (probability 0); a given block defaults count to
//	                            constant 1 and max_depth to 1
//	workload.behaviour.*        0
//	workload.workers            0 = unlimited: every investigation starts on arrival
//	workload.priority           fifo
//	tools.T.version             ""
//	tools.T.latency             constant 0
//	tools.T.concurrency         0 = unlimited servers
//	tools.T.idempotency         none (the safe assumption: every attempt executes)
//	tools.T.timeout             0 = none (then lost_response and hang are refused)
//	tools.T.compute             1.0 compute units per second of service
//	tools.T.queue_limit         0 = unbounded queue, nothing shed
//	faults                      none; fault ids default to their index ("0", "1", ...);
//	                            a fault without tool hits every tool (kinds that take one);
//	                            brownout slowdown 1 (at least probability or slowdown needed)
//	recovery.retry              max_attempts 3, initial 1s, multiplier 2, max 1m,
//	                            jitter full, on_exhausted escalate
//	recovery.retry_budget       off; a given block: ratio 0.1, min_per_second 1
//	recovery.breaker            off; a given block: window 1m, failure_ratio 0.5,
//	                            min_calls 20, cooldown 2m
//	recovery.inspect_before_retry  true
//	recovery.inspection         interval 1m, max 60: with inspect_before_retry, an
//	                            operation a lookup finds still running is looked up
//	                            again every interval (fixed, no backoff: a running job
//	                            is not a failure) and escalated as unknown after max
//	                            lookups, an hour by default; interval > 0, max 1 to
//	                            100000; a given block fills the key it omits
//	recovery.revisions          0
//	recovery.non_progress       off; a given block: repeats 3
//	recovery.budgets            0 = unlimited tokens, compute, wall time and cost
//	recovery.on_exhaustion      terminate (only reached when a budget is set)
//	recovery.lease              5m
//	recovery.supervisor         {kind: rules}; kind model requires accuracy, and its
//	                            latency and tokens default to 0; no difficulty
//	recovery.humans             off (escalations terminate); a given block requires
//	                            reviewers, and review_time when reviewers > 0; approve 1;
//	                            approve and review_time the same for every failure class
//	recovery.subagents          on_failure reduce_scope; on_failure respawn alone is
//	                            {action: respawn, max: 1, then: reduce_scope}
//	model                       unlimited: no rate limits, no latency per token, failure 0
//	prices                      none (money metrics undefined); a given block: currency
//	                            USD, every price 0
//	redact                      none beyond the built-in key, token, secret, password,
//	                            credential (patterns are case-insensitive substrings,
//	                            stored lower-case)
//	expect, tolerances, sweep   none
//
// A block written as `{}` is switched on with its defaults; an absent or null block stays
// off. An override with an empty value (`--set recovery.breaker=`) switches a block off.
package scenarios
