package scenarios

import (
	"fmt"
	"slices"
)

// The scenario rule of every fault kind lives here, in faultTable: its keys, its flags and its
// value checks. The decoder (Parse), Validate, Correlated and the JSON Schema all read the
// table, so adding a fault kind touches its sim/fault_<kind>.go (the behaviour), one entry
// below, and docs/scenarios.md.

// FaultKind names an injected fault.
type FaultKind string

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

// faultRule is the scenario rule of one fault kind.
type faultRule struct {
	kind     FaultKind
	allowed  []string // the keys it takes
	required []string // the keys it needs
	window   bool     // a time window that hits every caller of its tool (Correlated)
	model    bool     // its tool may be the model provider (ModelTool)
	timeout  bool     // never answers some attempts, so every tool it hits needs a timeout
	// preset sets values the kind defaults before the file's keys are read; nil = none.
	preset func(f *Fault)
	// decoded is the rule on a decoded fault as a whole, for Parse: the problem, or "".
	decoded func(f *Fault) string
	// check is Validate's check of the kind's own values; nil = none.
	check func(c faultChecker, f *Fault, key string)
}

// faultChecker is what a kind's check needs from Validate. It is an interface so that the
// table's initialisation does not depend on the key tree, which lists the kinds.
type faultChecker interface {
	check(ok bool, key, format string, args ...any)
	num(x float64, key string)
}

// faultTable holds every fault kind, in the order messages and the JSON Schema list them.
var faultTable = []faultRule{
	{kind: FaultTransient, allowed: []string{"id", "kind", "tool", "probability"}, required: []string{"probability"},
		model: true},
	{kind: FaultLostResponse, allowed: []string{"id", "kind", "tool", "probability"}, required: []string{"probability"},
		timeout: true},
	{kind: FaultOutage, allowed: []string{"id", "kind", "tool", "at", "for"}, required: []string{"for"},
		window: true, model: true},
	{kind: FaultBrownout, allowed: []string{"id", "kind", "tool", "at", "for", "probability", "slowdown"}, required: []string{"for"},
		window: true, model: true,
		preset: func(f *Fault) { f.Slowdown = 1 },
		decoded: func(f *Fault) string {
			if f.Probability == 0 && f.Slowdown == 1 {
				return "a brownout with probability 0 and slowdown 1 does nothing; want probability > 0 or slowdown > 1"
			}
			return ""
		},
		check: func(c faultChecker, f *Fault, key string) { c.num(f.Slowdown, key+".slowdown") }},
	{kind: FaultHang, allowed: []string{"id", "kind", "tool", "at", "for"}, required: []string{"for"},
		window: true, timeout: true},
	{kind: FaultWorkerCrash, allowed: []string{"id", "kind", "rate"}, required: []string{"rate"},
		check: func(c faultChecker, f *Fault, key string) {
			c.check(finite(f.Rate.PerSecond) && f.Rate.PerSecond >= 0, key+".rate", "%v per second; want >= 0", f.Rate.PerSecond)
		}},
	{kind: FaultInvalidConfig, allowed: []string{"id", "kind", "probability"}, required: []string{"probability"}},
	{kind: FaultBudgetSpike, allowed: []string{"id", "kind", "probability", "factor"}, required: []string{"probability", "factor"},
		check: func(c faultChecker, f *Fault, key string) { c.num(f.Factor, key+".factor") }},
	{kind: FaultZoneCrash, allowed: []string{"id", "kind", "at", "for", "share"}, required: []string{"for", "share"},
		check: func(c faultChecker, f *Fault, key string) {
			c.check(finite(f.Share) && f.Share > 0 && f.Share <= 1, key+".share", "%v; want a share in (0, 1]", f.Share)
		}},
}

// faultKinds is every kind's name, in table order.
var faultKinds = func() []string {
	names := make([]string, len(faultTable))
	for i, r := range faultTable {
		names[i] = string(r.kind)
	}
	return names
}()

// modelFaultKinds are the kinds whose tool may be the model provider: its windows first, then
// the per-attempt kinds, each in table order.
var modelFaultKinds = func() []string {
	var windows, others []string
	for _, r := range faultTable {
		switch {
		case r.model && r.window:
			windows = append(windows, string(r.kind))
		case r.model:
			others = append(others, string(r.kind))
		}
	}
	return append(windows, others...)
}()

// ruleOf is the rule of kind k, or nil for a name that is not a fault kind.
func ruleOf(k FaultKind) *faultRule {
	i := slices.IndexFunc(faultTable, func(r faultRule) bool { return r.kind == k })
	if i < 0 {
		return nil
	}
	return &faultTable[i]
}

// Correlated reports whether the fault is a time window that hits every caller of a tool.
func (k FaultKind) Correlated() bool {
	r := ruleOf(k)
	return r != nil && r.window
}

// mayNameModel reports whether a fault of kind k may name the model provider as its tool.
func (k FaultKind) mayNameModel() bool {
	r := ruleOf(k)
	return r != nil && r.model
}

// waitsForever is the rule that a lost_response or hang fault needs a timeout on every tool it
// applies to: an attempt that is never answered is only noticed by the caller's timeout.
// Tools in skip already have a reported bad timeout. Parse and Validate both use it.
func waitsForever(f *Fault, tools []Tool, skip map[string]bool) []string {
	if r := ruleOf(f.Kind); r == nil || !r.timeout {
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
