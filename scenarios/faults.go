package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A fault kind lives in one file, sim/fault_<kind>.go, which registers its scenario rule
// here (RegisterFault) beside its behaviour and its record. The decoder (Parse), Validate,
// Correlated, the size model and the JSON Schema all read the registered rules, so this
// package knows no kind by name; a binary has the kinds of the simulator it links (every
// mayday binary links package sim). The keys a kind takes are keys of faultSchema, the key
// tree's fault entry: each key has one spelling and one value kind for every kind.

// FaultKind names an injected fault.
type FaultKind string

// The kinds the simulator registers, named here for scenarios built in Go.
const (
	FaultTransient     FaultKind = "transient"      // uncorrelated: the attempt fails fast
	FaultLostResponse  FaultKind = "lost_response"  // uncorrelated: work done, reply lost
	FaultInvalidConfig FaultKind = "invalid_config" // per investigation, permanent
	FaultBudgetSpike   FaultKind = "budget_spike"   // per investigation: tokens x Factor
	FaultWorkerCrash   FaultKind = "worker_crash"   // per running investigation at Rate
	FaultOutage        FaultKind = "outage"         // window: every attempt fails fast
	FaultBrownout      FaultKind = "brownout"       // window: Probability of fast error, Slowdown x latency
	FaultHang          FaultKind = "hang"           // window: accepted, never answered
	FaultZoneCrash     FaultKind = "zone_crash"     // at At: Share of running workers die; the zone's workers are gone For
)

// FaultRule is the scenario rule of one fault kind.
type FaultRule struct {
	Kind FaultKind
	// Keys are the keys it takes besides id and kind (every kind takes those), keys of
	// the key tree's fault entry: tool, at, for, probability, slowdown, rate, factor, share.
	Keys []string
	// Required are the keys among Keys it needs.
	Required []string
	// Window: it acts during [at, at+for) (it takes at and needs for); otherwise over the
	// whole run. A window on a tool is correlated: it hits every caller of the tool.
	Window bool
	// Model: its tool may be the model provider (ModelTool).
	Model bool
	// Timeout: it never answers some attempts, so every tool it hits needs a timeout.
	Timeout bool
	// Preset sets values the kind defaults before the file's keys are read; nil = none.
	Preset func(f *Fault)
	// Decoded is the rule on a decoded fault as a whole, for Parse: the problem, or "".
	Decoded func(f *Fault) string
	// Check is Validate's check of the kind's own values; nil = none.
	Check func(c FaultChecker, f *Fault, key string)
	// Size is the kind's part of the size model (EstimateEvents).
	Size FaultSize
}

// FaultSize is what a fault adds to the size model; the zero value adds nothing.
type FaultSize struct {
	// Takeovers is how often each running investigation's worker is lost to the fault over
	// horizon nanoseconds (each loss is a takeover, and the investigation's events again).
	Takeovers func(f *Fault, horizon float64) float64
	// Hangs: attempts during the window are never answered, only looked up.
	Hangs bool
	// Slowdown is the largest factor the fault puts on a tool's service time.
	Slowdown func(f *Fault) float64
}

// FaultChecker is what a kind's Check reports problems to.
type FaultChecker interface {
	// Check reports the problem (format, args) at key unless ok.
	Check(ok bool, key, format string, args ...any)
	// Number reports a value that is not a finite number.
	Number(x float64, key string)
}

// faultTable holds the registered kinds in name order, the order messages and the JSON
// Schema list them.
var faultTable []FaultRule

// faultKinds is every kind's name, in table order; modelFaultKinds are the kinds whose
// tool may be the model provider: its windows first, then the others, each in table order.
var faultKinds, modelFaultKinds []string

// RegisterFault adds a fault kind's scenario rule. The simulator's kinds call it from their
// init functions; it panics on a rule that contradicts itself or the key tree.
func RegisterFault(r FaultRule) {
	if err := r.valid(); err != nil {
		panic("scenarios: fault kind " + string(r.Kind) + ": " + err.Error())
	}
	i, found := slices.BinarySearchFunc(faultTable, r.Kind, func(x FaultRule, k FaultKind) int { return strings.Compare(string(x.Kind), string(k)) })
	if found {
		panic("scenarios: fault kind " + string(r.Kind) + " registered twice")
	}
	faultTable = slices.Insert(faultTable, i, r)
	var windows, others []string
	faultKinds = faultKinds[:0]
	for _, r := range faultTable {
		faultKinds = append(faultKinds, string(r.Kind))
		switch {
		case r.Model && r.Window:
			windows = append(windows, string(r.Kind))
		case r.Model:
			others = append(others, string(r.Kind))
		}
	}
	modelFaultKinds = append(windows, others...)
	faultSchema.sub["kind"].enum = faultKinds
	faultSchema.sub["tool"].doc = "the tool it hits (a name under tools, or model for the model provider: " +
		strings.Join(modelFaultKinds, ", ") + "); default every tool"
}

// valid checks the rule against itself and the key tree.
func (r *FaultRule) valid() error {
	if r.Kind == "" || strings.ToLower(string(r.Kind)) != string(r.Kind) || strings.ContainsAny(string(r.Kind), " ,") {
		return fmt.Errorf("want a lower-case name without spaces or commas")
	}
	for _, k := range r.Keys {
		if _, ok := faultSchema.sub[k]; !ok || k == "id" || k == "kind" {
			return fmt.Errorf("takes %s, which is not a fault key (want %s)", k, strings.Join(faultSchema.keys[2:], ", "))
		}
	}
	for _, k := range r.Required {
		if !slices.Contains(r.Keys, k) {
			return fmt.Errorf("requires %s but does not take it", k)
		}
	}
	if (r.Model || r.Timeout) && !slices.Contains(r.Keys, "tool") {
		return fmt.Errorf("hits a tool (model %t, timeout %t) but takes no tool", r.Model, r.Timeout)
	}
	if r.Window != slices.Contains(r.Keys, "at") || r.Window != slices.Contains(r.Required, "for") {
		return fmt.Errorf("window %t: a window takes at and needs for, and only a window does", r.Window)
	}
	return nil
}

// allowed is every key the kind takes: id, kind and its own.
func (r *FaultRule) allowed() []string { return append([]string{"id", "kind"}, r.Keys...) }

// ruleOf is the rule of kind k, or nil for a name that is not a registered fault kind.
func ruleOf(k FaultKind) *FaultRule {
	i, found := slices.BinarySearchFunc(faultTable, k, func(x FaultRule, k FaultKind) int { return strings.Compare(string(x.Kind), string(k)) })
	if !found {
		return nil
	}
	return &faultTable[i]
}

// Rule returns the scenario rule of kind k, false for a name no kind registered.
func (k FaultKind) Rule() (FaultRule, bool) {
	if r := ruleOf(k); r != nil {
		return *r, true
	}
	return FaultRule{}, false
}

// Correlated reports whether the fault is a time window that hits every caller of a tool.
func (k FaultKind) Correlated() bool {
	r := ruleOf(k)
	return r != nil && r.Window && slices.Contains(r.Keys, "tool")
}

// mayNameModel reports whether a fault of kind k may name the model provider as its tool.
func (k FaultKind) mayNameModel() bool {
	r := ruleOf(k)
	return r != nil && r.Model
}

// waitsForever is the rule that a lost_response or hang fault needs a timeout on every tool it
// applies to: an attempt that is never answered is only noticed by the caller's timeout.
// Tools in skip already have a reported bad timeout. Parse and Validate both use it.
func waitsForever(f *Fault, tools []Tool, skip map[string]bool) []string {
	if r := ruleOf(f.Kind); r == nil || !r.Timeout {
		return nil
	}
	var msgs []string
	for _, t := range tools {
		if (f.Tool == "" || f.Tool == t.Name) && t.Timeout <= 0 && !skip[t.Name] {
			msgs = append(msgs, fmt.Sprintf("%s on tool %s, which has no timeout: the caller would wait forever; set tools.%s.timeout (such as 1h)", f.Kind, t.Name, t.Name))
		}
	}
	return msgs
}

// faultCheck is Validate as a FaultChecker.
type faultCheck struct{ v *validator }

func (c faultCheck) Check(ok bool, key, format string, args ...any) {
	c.v.check(ok, key, format, args...)
}
func (c faultCheck) Number(x float64, key string) { c.v.num(x, key) }

// Finite reports whether x is a finite number, for a kind's Check.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
