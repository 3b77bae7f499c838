package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// A fault kind lives in one file, sim/fault_<kind>.go, which registers its scenario rule
// here (RegisterFault) beside its behaviour and its record. The decoder (Parse), Validate,
// Correlated, the size model and the JSON Schema all read the registered rules, so this
// package knows no kind by name; a binary has the kinds of the simulator it links (every
// mayday binary links package sim). The keys a kind takes are keys of faultSchema, the key
// tree's fault entry, shared by the kinds that take them (tool, at, for, probability, ...),
// and the kind's own parameters: a struct type whose fields declare their keys with the
// same tags as every other key (keys.go), given as FaultRule.Params. Registering the kind
// adds its parameters' keys to faultSchema, so --set, the JSON Schema, the generator of
// fuzzed files and the key tables know them; the decoder fills a fresh value of the type
// (Fault.Params) with their defaults and the file's values, and Validate checks it.

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
	// Doc says what the fault does, for the kinds table of docs/scenarios.md.
	Doc string
	// Keys are the shared keys it takes besides id and kind (every kind takes those), keys
	// of the key tree's fault entry: tool, at, for, probability, slowdown, rate, factor, share.
	Keys []string
	// Params declares the kind's own keys (KeysOf a struct type, whose fields carry key
	// and doc tags); nil = none. A fault of the kind holds a *T in Fault.Params: the
	// decoder makes it (the declared defaults, then the file's values), and Validate makes
	// one with the defaults for a fault built in Go without it, then checks its bounds.
	Params *Keys
	// Required are the keys among Keys and Params it needs.
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
	// Scenario is the scenario the fault belongs to, for checks of references (a zone of
	// workload.zones).
	Scenario() *Scenario
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
	if err := r.addParams(); err != nil {
		panic("scenarios: fault kind " + string(r.Kind) + ": " + err.Error())
	}
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
	syncHuntFault()
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
		if !slices.Contains(r.keys(), k) {
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

// addParams adds the keys of the kind's parameters to faultSchema. A key already there
// (another kind's parameter of the same name) must have the same kind of value and bounds:
// --set and the JSON Schema read one entry per name.
func (r *FaultRule) addParams() error {
	if r.Params == nil {
		return nil
	}
	for _, k := range r.Params.sch.keys {
		sub := r.Params.sch.sub[k]
		if sub.need || sub.hand {
			return fmt.Errorf("parameter %s: list a required parameter in Required, and decode none by hand", k)
		}
		if slices.Contains(r.Keys, k) {
			return fmt.Errorf("takes %s both as a shared key and as a parameter", k)
		}
		old := faultSchema.sub[k]
		if old == nil {
			faultSchema.keys = append(faultSchema.keys, k)
			faultSchema.sub[k] = sub
			continue
		}
		if old.kind != sub.kind || old.min != sub.min || old.max != sub.max || old.above != sub.above || old.typ != sub.typ {
			return fmt.Errorf("parameter %s is already a fault key of another kind of value (%s); name it differently", k, old.typeText())
		}
	}
	return nil
}

// keys is every key the kind takes besides id and kind: the shared ones, then its
// parameters'.
func (r *FaultRule) keys() []string {
	if r.Params == nil {
		return r.Keys
	}
	return append(slices.Clone(r.Keys), r.Params.sch.keys...)
}

// keySchema is the declaration of key k of the kind: its parameter's, else the shared one.
func (r *FaultRule) keySchema(k string) *schema {
	if r.Params != nil && r.Params.sch.sub[k] != nil {
		return r.Params.sch.sub[k]
	}
	return faultSchema.sub[k]
}

// allowed is every key the kind takes: id, kind and its own.
func (r *FaultRule) allowed() []string { return append([]string{"id", "kind"}, r.keys()...) }

// newParams is a fresh *T of the kind's parameters, holding their declared defaults.
func (r *FaultRule) newParams() reflect.Value {
	p := reflect.New(r.Params.typ)
	fillDefaults(r.Params.sch, p.Elem(), true)
	return p
}

// faultParams decodes the kind's parameters of the fault entry f into fault.Params; it
// reports whether every value was valid.
func (d *decoder) faultParams(f *fields, fault *Fault, r *FaultRule) bool {
	if r.Params == nil {
		return true
	}
	p := r.newParams()
	bad := d.decodeFields(f, r.Params.sch, p.Elem())
	fault.Params = p.Interface()
	return len(bad) == 0
}

// ensureParams gives a fault built in Go the parameters of its kind: a fresh value with the
// defaults when it has none, else the defaults of what it left zero (fillDefaults).
func (f *Fault) ensureParams() {
	r := ruleOf(f.Kind)
	if r == nil || r.Params == nil {
		return
	}
	if f.Params == nil {
		f.Params = r.newParams().Interface()
		return
	}
	if v := reflect.ValueOf(f.Params); v.Type() == reflect.PointerTo(r.Params.typ) && !v.IsNil() {
		fillDefaults(r.Params.sch, v.Elem(), false)
	}
}

// params checks a fault's parameters against the declarations of its kind.
func (v *validator) params(f *Fault, r *FaultRule, key string) {
	if r.Params == nil {
		v.check(f.Params == nil, key, "%s fault takes no parameters of its own; Params holds a %T", withArticle(string(f.Kind)), f.Params)
		return
	}
	pv := reflect.ValueOf(f.Params)
	if !pv.IsValid() || pv.Type() != reflect.PointerTo(r.Params.typ) || pv.IsNil() {
		v.check(false, key, "%s fault's Params is a %T; want a *%s", withArticle(string(f.Kind)), f.Params, r.Params.typ)
		return
	}
	v.block(r.Params.sch, pv.Elem(), key)
}

// MarshalJSON writes the fault's fields, then its kind's parameters by key, in their
// declaration order; a fault without parameters is written as its fields alone.
func (f Fault) MarshalJSON() ([]byte, error) {
	type plain Fault // the fields, without this method
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(plain(f)); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	r := ruleOf(f.Kind)
	if f.Params == nil || r == nil || r.Params == nil {
		return out, nil
	}
	pv := reflect.ValueOf(f.Params)
	if pv.Type() != reflect.PointerTo(r.Params.typ) || pv.IsNil() {
		return nil, fmt.Errorf("scenarios: fault %s: Params is a %T; want a *%s", f.ID, f.Params, r.Params.typ)
	}
	out = out[:len(out)-1]
	for _, k := range r.Params.sch.keys {
		fv := pv.Elem().Field(r.Params.sch.sub[k].field - 1)
		if fv.IsZero() && strings.Contains(r.Params.typ.Field(r.Params.sch.sub[k].field-1).Tag.Get("json"), "omitempty") {
			continue // an optional parameter left out, as the file left it out
		}
		v, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, err
		}
		out = append(append(append(append(out, ',', '"'), k...), '"', ':'), v...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes: the fields, then the kind's parameters by
// key (the declared defaults for those left out).
func (f *Fault) UnmarshalJSON(b []byte) error {
	type plain Fault
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return err
	}
	r := ruleOf(f.Kind)
	if r == nil || r.Params == nil {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p := r.newParams()
	for _, k := range r.Params.sch.keys {
		if v, ok := raw[k]; ok {
			if err := json.Unmarshal(v, p.Elem().Field(r.Params.sch.sub[k].field-1).Addr().Interface()); err != nil {
				return fmt.Errorf("scenarios: fault %s: %s: %w", f.ID, k, err)
			}
		}
	}
	f.Params = p.Interface()
	return nil
}

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
			msgs = append(msgs, fmt.Sprintf("%s on tool %s, which has no timeout: the caller would wait forever; set %s (such as 1h)", f.Kind, t.Name, join(join("tools", t.Name), "timeout")))
		}
	}
	return msgs
}

// faultCheck is Validate as a FaultChecker.
type faultCheck struct {
	v *validator
	s *Scenario
}

func (c faultCheck) Scenario() *Scenario { return c.s }

func (c faultCheck) Check(ok bool, key, format string, args ...any) {
	c.v.check(ok, key, format, args...)
}
func (c faultCheck) Number(x float64, key string) { c.v.num(x, key) }

// Finite reports whether x is a finite number, for a kind's Check.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// FailureParams are the parameters of the kinds whose calls fail fast (transient, outage,
// brownout): how the failed call failed. A real dependency fails in ways a caller tells
// apart (a refused connection, an HTTP 503, a reset); the simulator still treats every fast
// failure as transient, and records the fault's error on each call it fails as the span's
// error.type attribute, the OpenTelemetry name, for traces and fit to read.
type FailureParams struct {
	Error string `json:",omitempty" key:"error" want:"an error type such as connection_refused, connection_reset or http_503" doc:"how each call the fault fails, fails: the failed span's error.type (connection_refused, connection_reset, http_503, ...; letters, digits and _ . : / -, at most 64); absent: the span has none"`
}

// FailureKeys declares FailureParams, for the kinds that take them (FaultRule.Params).
var FailureKeys = func() *Keys {
	k := KeysOf[FailureParams]("how a failed call fails")
	k.sch.sub["error"].pattern = errorTypePattern.String()
	return k
}()

// errorTypePattern is what an error type may be: a short word such as an OpenTelemetry
// error.type (http_503, connection_refused, java.net.ConnectException).
var errorTypePattern = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,64}$`)

// CheckFailure is the Check of a kind that takes FailureParams: the error type's shape.
func CheckFailure(c FaultChecker, f *Fault, key string) {
	p, ok := f.Params.(*FailureParams)
	if !ok || p == nil || p.Error == "" {
		return
	}
	c.Check(errorTypePattern.MatchString(p.Error), key+".error", "%q is not an error type; want a word of letters, digits and _ . : / - (at most 64), such as connection_refused or http_503", p.Error)
}

// ErrorType is the error type of fault f (FailureParams.Error), "" when it has none.
func (f *Fault) ErrorType() string {
	if p, ok := f.Params.(*FailureParams); ok && p != nil {
		return p.Error
	}
	return ""
}
