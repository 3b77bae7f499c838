package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mayday-sim/mayday/metric"
)

// maxInspections bounds recovery.inspection.max: far beyond any useful polling (at one
// lookup a minute, 69 days), and within the engine's 32-bit counters.
const maxInspections = 100_000

// Validate is the one step that makes a scenario built in Go ready to run, and the check
// every scenario meets: it fills in the defaults of what the value leaves zero where zero
// is not a valid setting (a new key's field, an omitted block's required values: the
// declared default, as a file that omits the key gets), then checks the invariants:
// ranges, references between its parts, and the rules that keep a simulation from waiting
// forever. Parse returns only scenarios that pass, with every default already in place;
// sim.Run calls it once on every scenario it runs. It reports keys but no lines: the
// resolved form has none.
func (s *Scenario) Validate() error { return s.validate(s.Source.File, nil) }

// validate is Validate, naming file; with the file's YAML root, each problem gets the line
// of its key (or of the mapping that would hold it).
func (s *Scenario) validate(file string, root *yaml.Node) error {
	s.ensureDefaults()
	v := &validator{file: file}
	v.check(scenarioName.MatchString(s.Name), "name", "%q is not a valid name; want [a-z0-9-]+", s.Name)
	// Every declared key of the scenario, the workload and the recovery section.
	v.block(rootSchema, reflect.ValueOf(s).Elem(), "")

	v.workload(s)
	v.tools(s)
	v.faults(s)
	v.recovery(s)
	v.checks(s)
	v.hunt(s.Hunt)
	v.checkSize(s)
	if len(v.errs) == 0 {
		v.huntProbes(s)
	}
	if len(v.errs) == 0 {
		// What the checks above read is finite by now; a Go-built scenario may still hold
		// NaN or an infinity in a field its kinds leave unused (a fault's factor, a tune
		// block), which would make JSON() fail.
		v.finiteNumbers(reflect.ValueOf(s).Elem(), "")
	}
	if root != nil {
		v.errs.place(root)
	}
	return v.errs.err()
}

// workload checks the keys of the workload decoded by hand and its references to tools.
func (v *validator) workload(s *Scenario) {
	w := &s.Workload
	switch w.Arrival.Kind {
	case ArrivalPoisson:
		v.check(finite(w.Arrival.Rate.PerSecond) && w.Arrival.Rate.PerSecond > 0, "workload.arrival.poisson", "rate %v per second; want > 0", w.Arrival.Rate.PerSecond)
	case ArrivalUniform:
		v.dur(w.Arrival.Over, "workload.arrival.uniform")
	case ArrivalPiecewise:
		v.pieces(w.Arrival.Pieces)
	case ArrivalAtOnce:
	default:
		v.check(false, "workload.arrival", "unknown kind %q; want poisson, at_once, uniform or piecewise", w.Arrival.Kind)
	}
	v.dist(w.Tokens, "workload.tokens", countUnit, 0)
	v.check(len(w.Mix) > 0, "workload.tools", "empty; want at least one tool with a weight > 0")
	for _, m := range w.Mix {
		key := "workload.tools." + m.Tool
		v.check(s.Tool(m.Tool) >= 0, key, "unknown tool %q", m.Tool)
		v.check(finite(m.Weight) && m.Weight > 0, key, "weight %v; want > 0", m.Weight)
	}
	v.check(finite(w.TokensGrowth) && w.TokensGrowth >= 0, "workload.tokens.growth", "%v; want a factor > 0", w.TokensGrowth)
	v.zones(w.Zones)
	for i, st := range w.HoldWorker {
		key := fmt.Sprintf("workload.hold_worker[%d]", i)
		v.check(contains(HoldStates, st), key, "%q is not a state an investigation waits in; want %s", st, orList(HoldStates))
		v.check(!contains(w.HoldWorker[:i], st), key, "%s is listed twice; want each state once", st)
	}
}

// zoneShareSlack is how far the shares of workload.zones may sum from 1: room for shares
// written as decimals (three zones of 0.333333333333 each).
const zoneShareSlack = 1e-9

// zones checks workload.zones: valid, distinct names, shares in (0, 1] that sum to 1.
func (v *validator) zones(zs []Zone) {
	sum := 0.0
	seen := map[string]bool{}
	for _, z := range zs {
		key := "workload.zones." + z.Name
		v.check(entityName.MatchString(z.Name), key, "%q is not a valid zone name; want [a-z0-9_-]+", z.Name)
		v.check(!seen[z.Name], key, "zone %q declared twice", z.Name)
		seen[z.Name] = true
		v.check(finite(z.Share) && z.Share > 0 && z.Share <= 1, key, "share %v; want a share of the workers in (0, 1]", z.Share)
		sum += z.Share
	}
	if len(zs) > 0 {
		v.check(math.Abs(sum-1) <= zoneShareSlack, "workload.zones", "the shares sum to %v; want 1, every worker in one zone", sum)
	}
}

// tools checks each tool's settings.
func (v *validator) tools(s *Scenario) {
	v.check(len(s.Tools) > 0, "tools", "none; want at least one tool")
	seen := map[string]bool{}
	for i := range s.Tools {
		t := &s.Tools[i]
		key := join("tools", t.Name)
		if err := CheckToolName(t.Name); err != nil {
			v.check(false, key, "%v", err)
		}
		v.check(!seen[t.Name], key, "tool %q defined twice", t.Name)
		seen[t.Name] = true
		v.block(toolSchema, reflect.ValueOf(t).Elem(), key)
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
		v.params(&f, rule, key)
		if rule.Check != nil {
			rule.Check(faultCheck{v, s}, &f, key)
		}
		for _, msg := range waitsForever(&f, s.Tools, nil) {
			v.check(false, key, "%s", msg)
		}
	}

}

// recovery checks the rules of the recovery section across keys and its keys decoded by
// hand.
func (v *validator) recovery(s *Scenario) {
	r := &s.Recovery
	if msg := maxBelowInitial(&r.Retry); msg != "" {
		v.check(false, "recovery.retry.max", "%s", msg)
	}
	v.modelAndPrices(s)
	v.subagents(&r.Subagents.OnFailure)
	if h := r.Humans; h != nil {
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

// whole checks a whole number against the bounds of its key in the key tree, the bounds the
// decoder and the JSON Schema use.
func (v *validator) whole(x int64, key string) { v.wholeIn(x, key, ruleAt(key)) }

// wholeIn checks a whole number against the bounds of sch.
func (v *validator) wholeIn(x int64, key string, sch *schema) {
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
func maxBelowInitial(rt *Retry) string {
	if rt.Max >= rt.Initial {
		return ""
	}
	return fmt.Sprintf("max %s is below initial %s; want max >= initial", fmtDuration(rt.Max), fmtDuration(rt.Initial))
}

// num checks a finite number against its key in the key tree: >= its least value, or above
// it where the tree says so (the rule the decoder applies to the file).
func (v *validator) num(x float64, key string) { v.numIn(x, key, ruleAt(key)) }

// numIn checks a finite number against the bounds of sch.
func (v *validator) numIn(x float64, key string, sch *schema) {
	if sch.signed {
		v.check(finite(x), key, "%v; want a finite number", x)
		return
	}
	if sch.above {
		v.check(finite(x) && x > sch.min, key, "%v; want a number > %v", x, sch.min)
	} else {
		v.check(finite(x) && x >= sch.min, key, "%v; want a number >= %v", x, sch.min)
	}
	if sch.max > 0 {
		v.check(!(x > sch.max), key, "%v; want at most %v", x, sch.max)
	}
}

// dur checks a duration against its key in the key tree: > 0 where the tree says so (the
// rule the decoder applies to the file), else >= 0.
func (v *validator) dur(x time.Duration, key string) { v.durIn(x, key, ruleAt(key).above) }

// durIn checks a duration: > 0 when above, else >= 0.
func (v *validator) durIn(x time.Duration, key string, above bool) {
	if above {
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
	if sch := resolve(rootSchema, keySegments(key)); sch != nil {
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

// finiteNumbers reports every NaN or infinite float in x, a part of the resolved scenario
// at key (its JSON path: field names as runs.config spells them, list items by index).
func (v *validator) finiteNumbers(x reflect.Value, key string) {
	switch x.Kind() {
	case reflect.Float32, reflect.Float64:
		v.check(finite(x.Float()), key, "%v; want a finite number", x.Float())
	case reflect.Pointer, reflect.Interface:
		if !x.IsNil() {
			v.finiteNumbers(x.Elem(), key)
		}
	case reflect.Slice, reflect.Array:
		for i := range x.Len() {
			v.finiteNumbers(x.Index(i), fmt.Sprintf("%s[%d]", key, i))
		}
	case reflect.Struct:
		t := x.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-" && f.Type.Kind() != reflect.Interface:
				continue // not part of the scenario's JSON (its source)
			case name == "-" || f.Anonymous:
				name = key // a fault's own parameters: their keys sit beside the fault's
			case name == "":
				name = join(key, f.Name)
			default:
				name = join(key, name)
			}
			v.finiteNumbers(x.Field(i), name)
		}
	}
}

// modelAndPrices checks the model provider, the cost budget and the price table.
func (v *validator) modelAndPrices(s *Scenario) {
	v.check(s.Recovery.Budgets.Cost == 0 || s.Prices != nil, "recovery.budgets.cost", "a cost budget needs prices")
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

// pieces checks a piecewise arrival rate built in Go as the decoder checks a file's.
func (v *validator) pieces(ps []Piece) {
	v.check(len(ps) > 0, "workload.arrival.piecewise", "no stretch; want at least one {rate: RATE}")
	for i, p := range ps {
		key := fmt.Sprintf("workload.arrival.piecewise[%d]", i)
		last := i == len(ps)-1
		v.check(finite(p.Rate.PerSecond) && p.Rate.PerSecond >= 0 && (!last || p.Rate.PerSecond > 0), key+".rate",
			"rate %v per second; want >= 0 (> 0 in the last stretch)", p.Rate.PerSecond)
		if last {
			v.check(p.For == 0, key+".for", "the last stretch lasts until every root has arrived; want no for")
		} else {
			v.check(p.For > 0, key+".for", "%v; want a duration > 0", p.For)
		}
	}
}
