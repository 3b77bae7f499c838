package scenarios

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/metric"
)

// maxInspections bounds recovery.inspection.max: far beyond any useful polling (at one
// lookup a minute, 69 days), and within the engine's 32-bit counters.
const maxInspections = 100_000

// Validate checks the invariants of a resolved scenario: ranges, references between its
// parts, and the rules that keep a simulation from waiting forever. Parse only returns
// scenarios that pass; a scenario built in Go (a simulator test, say) should call it before
// use. It reports keys but no lines: the resolved form has none.
func (s *Scenario) Validate() error {
	v := &validator{file: s.Source.File}
	v.check(scenarioName.MatchString(s.Name), "name", "%q is not a valid name; want [a-z0-9-]+", s.Name)
	v.dur(s.Horizon, "horizon")

	v.workload(s)
	v.tools(s)
	v.faults(s)
	v.recovery(s)
	v.checks(s)
	v.checkSize(s)
	return v.errs.err()
}

// workload checks the workload section and its references to tools.
func (v *validator) workload(s *Scenario) {
	w := &s.Workload
	v.whole(int64(w.Investigations), "workload.investigations")
	switch w.Arrival.Kind {
	case ArrivalPoisson:
		v.check(finite(w.Arrival.Rate.PerSecond) && w.Arrival.Rate.PerSecond > 0, "workload.arrival.poisson", "rate %v per second; want > 0", w.Arrival.Rate.PerSecond)
	case ArrivalUniform:
		v.dur(w.Arrival.Over, "workload.arrival.uniform")
	case ArrivalAtOnce:
	default:
		v.check(false, "workload.arrival", "unknown kind %q; want poisson, at_once or uniform", w.Arrival.Kind)
	}
	v.dist(w.Steps, "workload.steps", countUnit, 1)
	v.dist(w.Think, "workload.think", durationUnit, 0)
	v.dist(w.Tokens, "workload.tokens", countUnit, 0)
	v.check(len(w.Mix) > 0, "workload.tools", "empty; want at least one tool with a weight > 0")
	for _, m := range w.Mix {
		key := "workload.tools." + m.Tool
		v.check(s.Tool(m.Tool) >= 0, key, "unknown tool %q", m.Tool)
		v.check(finite(m.Weight) && m.Weight > 0, key, "weight %v; want > 0", m.Weight)
	}
	v.prob(w.Subagents.Probability, "workload.subagents.probability")
	v.dist(w.Subagents.Count, "workload.subagents.count", countUnit, 1)
	v.whole(int64(w.Subagents.MaxDepth), "workload.subagents.max_depth")
	v.check(finite(w.TokensGrowth) && w.TokensGrowth >= 0, "workload.tokens.growth", "%v; want a factor > 0", w.TokensGrowth)
	v.whole(int64(w.Workers), "workload.workers")
	if w.Priority != "" {
		v.enum(w.Priority, "workload.priority")
	}
	b := w.Behaviour
	v.prob(b.InvalidOutput, "workload.behaviour.invalid_output")
	v.prob(b.ReviseSuccess, "workload.behaviour.revise_success")
	v.prob(b.PolicyViolation, "workload.behaviour.policy_violation")
	v.prob(b.Stuck, "workload.behaviour.stuck")
	v.prob(b.ValidationMiss, "workload.behaviour.validation_miss")

}

// tools checks each tool's settings.
func (v *validator) tools(s *Scenario) {
	v.check(len(s.Tools) > 0, "tools", "none; want at least one tool")
	seen := map[string]bool{}
	for _, t := range s.Tools {
		key := "tools." + t.Name
		v.check(entityName.MatchString(t.Name), key, "%q is not a valid tool name; want [a-z0-9_-]+", t.Name)
		v.check(!seen[t.Name], key, "tool %q defined twice", t.Name)
		seen[t.Name] = true
		v.dist(t.Latency, key+".latency", durationUnit, 0)
		v.whole(int64(t.Concurrency), key+".concurrency")
		v.whole(int64(t.QueueLimit), key+".queue_limit")
		v.enum(string(t.Idempotency), key+".idempotency")
		v.dur(t.Timeout, key+".timeout")
		v.num(t.Compute, key+".compute")
	}

}

// faults checks each fault against its kind and the tools it names.
func (v *validator) faults(s *Scenario) {
	ids := map[string]bool{}
	for i, f := range s.Faults {
		key := fmt.Sprintf("faults[%d]", i)
		v.check(f.Index == i, key+".index", "%d; want %d, its position", f.Index, i)
		v.check(f.ID != "" && faultID.MatchString(f.ID), key+".id", "%q; want letters, digits, _, . and -", f.ID)
		v.check(!ids[f.ID], key+".id", "%q is used twice; want unique ids", f.ID)
		ids[f.ID] = true
		rule := ruleOf(f.Kind)
		if rule == nil {
			v.check(false, key+".kind", "%q is not a fault kind; want %s", f.Kind, orList(faultKinds))
			continue
		}
		if f.Tool != "" {
			v.check(contains(rule.Keys, "tool"), key+".tool", "%s fault takes no tool", withArticle(string(f.Kind)))
			v.check(s.Tool(f.Tool) >= 0 || f.Tool == ModelTool && rule.Model,
				key+".tool", "unknown tool %q", f.Tool)
		}
		v.prob(f.Probability, key+".probability")
		v.dur(f.At, key+".at")
		if contains(rule.Required, "for") {
			v.dur(f.For, key+".for")
		} else {
			v.check(f.For >= 0, key+".for", "%v; want >= 0", f.For)
		}
		if rule.Check != nil {
			rule.Check(faultCheck{v}, &f, key)
		}
		for _, msg := range waitsForever(&f, s.Tools, nil) {
			v.check(false, key, "%s", msg)
		}
	}

}

// recovery checks the recovery section.
func (v *validator) recovery(s *Scenario) {
	r := &s.Recovery
	rt := r.Retry
	v.whole(int64(rt.MaxAttempts), "recovery.retry.max_attempts")
	v.dur(rt.Initial, "recovery.retry.initial")
	v.num(rt.Multiplier, "recovery.retry.multiplier")
	if msg := rt.maxBelowInitial(); msg != "" {
		v.check(false, "recovery.retry.max", "%s", msg)
	}
	v.enum(rt.Jitter, "recovery.retry.jitter")
	v.enum(rt.OnExhausted, "recovery.retry.on_exhausted")
	if rb := r.RetryBudget; rb != nil {
		v.num(rb.Ratio, "recovery.retry_budget.ratio")
		v.num(rb.MinPerSecond, "recovery.retry_budget.min_per_second")
	}
	if br := r.Breaker; br != nil {
		v.dur(br.Window, "recovery.breaker.window")
		v.check(br.FailureRatio > 0 && br.FailureRatio <= 1, "recovery.breaker.failure_ratio", "%v; want a ratio in (0, 1]", br.FailureRatio)
		v.whole(int64(br.MinCalls), "recovery.breaker.min_calls")
		v.dur(br.Cooldown, "recovery.breaker.cooldown")
	}
	v.dur(r.Inspection.Interval, "recovery.inspection.interval")
	v.whole(int64(r.Inspection.Max), "recovery.inspection.max")
	v.whole(int64(r.Revisions), "recovery.revisions")
	if np := r.NonProgress; np != nil {
		v.whole(int64(np.Repeats), "recovery.non_progress.repeats")
	}
	v.whole(r.Budgets.Tokens, "recovery.budgets.tokens")
	v.check(finite(r.Budgets.Compute) && r.Budgets.Compute >= 0, "recovery.budgets.compute", "%v; want >= 0", r.Budgets.Compute)
	v.dur(r.Budgets.Wall, "recovery.budgets.wall")
	v.num(r.Budgets.Cost, "recovery.budgets.cost")
	v.modelAndPrices(s)
	v.enum(r.OnExhaustion, "recovery.on_exhaustion")
	v.subagents(&r.Subagents.OnFailure)
	v.dur(r.Lease, "recovery.lease")
	sv := r.Supervisor
	v.enum(sv.Kind, "recovery.supervisor.kind")
	v.prob(sv.Accuracy, "recovery.supervisor.accuracy")
	v.dur(sv.Latency, "recovery.supervisor.latency")
	v.whole(int64(sv.Tokens), "recovery.supervisor.tokens")
	if h := r.Humans; h != nil {
		v.whole(int64(h.Reviewers), "recovery.humans.reviewers")
		v.dist(h.ReviewTime, "recovery.humans.review_time", durationUnit, 0)
		v.prob(h.Approve, "recovery.humans.approve")
	}
	v.judges(r)

}

// checks checks redaction, expectations, tolerances and sweep axes.
func (v *validator) checks(s *Scenario) {
	for i, p := range s.Redact {
		v.check(p != "", fmt.Sprintf("redact[%d]", i), "empty pattern")
	}
	for _, e := range s.Expect {
		key := "expect." + e.Metric
		v.check(IsMetric(e.Metric), key, "unknown metric %q", e.Metric)
		v.check(contains([]string{">=", "<=", "==", ">", "<", "between"}, e.Op), key, "unknown operator %q", e.Op)
		v.check(finite(e.Value) && finite(e.Upper), key, "bounds must be finite numbers")
		v.check(e.Op != "between" || e.Upper >= e.Value, key, "between %v and %v: want A <= B", e.Value, e.Upper)
		v.check(s.Prices != nil || !metric.NeedsPrices(e.Metric), key, "%s is money and the scenario has no prices: it is undefined in every run", e.Metric)
	}
	for _, t := range s.Tolerances {
		key := "tolerances." + t.Metric
		v.check(IsMetric(t.Metric), key, "unknown metric %q", t.Metric)
		v.check(finite(t.Value) && t.Value >= 0, key, "%v; want >= 0", t.Value)
	}
	for _, a := range s.Sweep {
		_, ok := parsePath(a.Path)
		v.check(ok, "sweep."+a.Path, "not a path")
		v.check(len(a.Values) > 0, "sweep."+a.Path, "no values")
	}
}

type validator struct {
	file string
	errs ErrorList
}

func (v *validator) check(ok bool, key, format string, args ...any) {
	if !ok {
		v.errs = append(v.errs, &Error{File: v.file, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) prob(p float64, key string) {
	v.check(p >= 0 && p <= 1, key, "%v is not a probability; want a number in [0, 1]", p)
}

// enum checks a word against the enum of its key in the key tree, the list the decoder
// and the JSON Schema use.
func (v *validator) enum(s, key string) {
	options := ruleAt(key).enum
	v.check(contains(options, s), key, "%q; want %s", s, orList(options))
}

// whole checks a whole number against the bounds of its key in the key tree, the bounds the
// decoder and the JSON Schema use.
func (v *validator) whole(x int64, key string) {
	sch := ruleAt(key)
	lo, hi := int64(sch.min), int64(sch.max)
	switch {
	case hi > 0:
		v.check(x >= lo && x <= hi, key, "%d; want %d to %d", x, lo, hi)
	default:
		v.check(x >= lo, key, "%d; want >= %d", x, lo)
	}
}

// maxBelowInitial is the rule that the backoff's cap is not below its first step, for Parse
// (with the line) and Validate alike; "" when it holds.
func (rt *Retry) maxBelowInitial() string {
	if rt.Max >= rt.Initial {
		return ""
	}
	return fmt.Sprintf("max %s is below initial %s; want max >= initial", fmtDuration(rt.Max), fmtDuration(rt.Initial))
}

// num checks a finite number against its key in the key tree: >= its least value, or above
// it where the tree says so (the rule the decoder applies to the file).
func (v *validator) num(x float64, key string) {
	sch := ruleAt(key)
	if sch.above {
		v.check(finite(x) && x > sch.min, key, "%v; want a number > %v", x, sch.min)
	} else {
		v.check(finite(x) && x >= sch.min, key, "%v; want a number >= %v", x, sch.min)
	}
}

// dur checks a duration against its key in the key tree: > 0 where the tree says so (the
// rule the decoder applies to the file), else >= 0.
func (v *validator) dur(x time.Duration, key string) {
	if ruleAt(key).above {
		v.check(x > 0, key, "%v; want a duration > 0", x)
	} else {
		v.check(x >= 0, key, "%v; want a duration >= 0", x)
	}
}

// bounds are the least and largest whole number the key tree allows at key (largest 0: none).
func bounds(key string) (lo, hi int64) {
	sch := ruleAt(key)
	return int64(sch.min), int64(sch.max)
}

// ruleAt is the key tree's entry for a resolved key such as tools.search.timeout or
// faults[2].for. A free key (a tool's name) may hold dots in a scenario built in Go, which
// Validate reports separately; a key the tree lacks gets leaf, no rule (TestRuleKeys checks
// that every key this package asks for is in the tree).
func ruleAt(key string) *schema {
	if sch := resolve(rootSchema, strings.Split(key, ".")); sch != nil {
		return sch
	}
	return leaf
}

// resolve walks segs down from sch; nil when they lead nowhere.
func resolve(sch *schema, segs []string) *schema {
	if len(segs) == 0 {
		return sch
	}
	k := segs[0]
	if name, items, ok := strings.Cut(k, "["); ok && sch.sub != nil && sch.sub[name] != nil && sch.sub[name].seq {
		s := sch.sub[name]
		for range strings.Split(items, "[") { // one step into the items per index
			if s = s.elem; s == nil {
				return nil
			}
		}
		return resolve(s, segs[1:])
	}
	if sch.sub != nil && sch.sub[k] != nil {
		if r := resolve(sch.sub[k], segs[1:]); r != nil {
			return r
		}
	}
	if sch.elem != nil && !sch.seq {
		// A free key such as a tool's name: it may span several segments.
		for i := 1; i <= len(segs); i++ {
			if r := resolve(sch.elem, segs[i:]); r != nil {
				return r
			}
		}
	}
	return nil
}

// dist checks a distribution's parameters; min is the least value a constant count may take.
func (v *validator) dist(d Dist, key string, u unit, min float64) {
	show := func(x float64) string {
		if u == durationUnit {
			return time.Duration(x).String()
		}
		return fmtNumber(x)
	}
	params := distParams(d.Kind)
	if params == nil {
		v.check(false, key+".dist", "%q; want %s", d.Kind, orList(distKinds))
		return
	}
	for _, p := range distSchema.keys[1:] { // every parameter name, in a fixed order
		x := d.param(p)
		if contains(params, p) {
			v.check(finite(x) && x >= 0, key+"."+p, "%s; want a finite value >= 0", show(x))
		} else {
			v.check(x == 0, key+"."+p, "%s distribution takes no %s", withArticle(string(d.Kind)), p)
		}
	}
	if d.Kind == DistConstant {
		v.check(d.Value >= min, key+".value", "%s; want >= %s", show(d.Value), show(min))
	}
	shown := func(p string) string {
		if p == "alpha" { // a plain number, whatever the field's unit
			return fmt.Sprint(d.Alpha)
		}
		return show(d.param(p))
	}
	for _, r := range d.problems() {
		v.check(false, key+"."+r.param, "%s", r.valueMsg(shown))
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// modelAndPrices checks the model provider, the cost budget and the price table.
func (v *validator) modelAndPrices(s *Scenario) {
	v.check(s.Recovery.Budgets.Cost == 0 || s.Prices != nil, "recovery.budgets.cost", "a cost budget needs prices")
	if m := s.Model; m != nil {
		v.num(m.RequestsPerMinute, "model.requests_per_minute")
		v.num(m.TokensPerMinute, "model.tokens_per_minute")
		v.dur(m.LatencyPer1kTokens, "model.latency_per_1k_tokens")
		v.prob(m.Failure, "model.failure")
	}
	p := s.Prices
	if p == nil {
		return
	}
	for _, m := range p.Models {
		key := "prices.models." + m.Model
		v.check(m.Model == s.Workload.Model, key, "unknown model %q; the workload's model is %q", m.Model, s.Workload.Model)
		v.check(finite(m.Input) && m.Input >= 0 && finite(m.Output) && m.Output >= 0, key, "prices %v, %v; want >= 0", m.Input, m.Output)
	}
	for _, t := range p.Tools {
		key := "prices.tools." + t.Tool
		v.check(s.Tool(t.Tool) >= 0, key, "unknown tool %q", t.Tool)
		v.check(finite(t.Call) && t.Call >= 0 && finite(t.ComputeSecond) && t.ComputeSecond >= 0, key, "prices %v, %v; want >= 0", t.Call, t.ComputeSecond)
	}
}

// judges checks the case-dependent parts of the supervisor and the reviewers.
func (v *validator) judges(r *Recovery) {
	if h := r.Humans; h != nil {
		for _, c := range h.ByClass {
			v.check(contains(FailureClasses, c.Class), "recovery.humans", "unknown failure class %q; want one of %s", c.Class, strings.Join(FailureClasses, ", "))
			if c.Approve != nil {
				v.prob(*c.Approve, "recovery.humans.approve."+c.Class)
			}
			if c.ReviewTime != nil {
				v.dist(*c.ReviewTime, "recovery.humans.review_time."+c.Class, durationUnit, 0)
			}
		}
	}
	if df := r.Supervisor.Difficulty; df != nil {
		v.check(finite(df.PerAttempt) && finite(df.PerClass) && finite(df.PerStep), "recovery.supervisor.difficulty", "rates must be finite numbers")
		v.prob(df.Floor, "recovery.supervisor.difficulty.floor")
	}
}

// Enum is the list of words the file format accepts at a key such as recovery.retry.jitter
// (nil when the key is not an enum), for packages that map the words to their own values.
func Enum(key string) []string { return append([]string(nil), ruleAt(key).enum...) }

// subagents checks recovery.subagents.on_failure: an action; max and then only with respawn.
func (v *validator) subagents(sf *SubagentFailure) {
	const key = "recovery.subagents.on_failure"
	// A scenario built in Go may leave the policy zero: reduce_scope, the default.
	v.check(sf.Action == "" || contains(subagentActions, sf.Action), key+".action", "%q; want %s", sf.Action, orList(subagentActions))
	if sf.Action != SubagentRespawn {
		v.check(sf.Max == 0 && sf.Then == "", key, "max %d and then %q; only action respawn takes them", sf.Max, sf.Then)
		return
	}
	v.whole(int64(sf.Max), key+".max")
	v.check(contains(subagentFallbacks, sf.Then), key+".then", "%q; want %s", sf.Then, orList(subagentFallbacks))
}
