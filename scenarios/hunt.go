package scenarios

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The hunt block: the envelope of faults `mayday hunt` draws its trials from. Each entry
// names a fault kind and, for each key of that kind, a fixed value (as a fault entry writes
// it) or, for a numeric key (a whole number, number, probability, duration or rate), a range
// {min: A, max: B}. Any key of the fault entry of the key tree is accepted, the shared ones
// and every kind's own parameters (FaultRule.Params), so a kind registered later is hunted
// with no edit here. Like tune, the block belongs to a command, not to a run; unlike the
// envelope's entries, its scalar keys can be overridden (--set hunt.max_faults=2).

// FromHunt marks an override made by hunt (a trial's faults and workload), for messages.
const FromHunt = "hunt"

// DefaultHuntBudget is the runs a hunt spends searching when neither hunt.budget nor
// --budget says.
const DefaultHuntBudget = 100

// Hunt is the hunt block.
type Hunt struct {
	Faults     []HuntFault   `json:"faults" key:"faults,hand" shown:"required"`
	At         HuntSpan      `json:"at" key:"at" shown:"required" want:"a range such as {min: 5m, max: 30m}" doc:"where the windows of the envelope's window faults may start, as {min: A, max: B}; an entry's own at range replaces it"`
	MaxFaults  int           `json:"max_faults" key:"max_faults,min=1,max=16,too=many,of=faults,default=3" doc:"faults a trial draws at most, beside the scenario's own"`
	Budget     int           `json:"budget,omitempty" key:"budget,hand" shown:"100 runs"`
	BudgetTime time.Duration `json:"budget_time,omitempty"` // wall time instead of runs
	Liveness   time.Duration `json:"liveness,omitempty" key:"liveness" doc:"after the last fault window ends, goodput must be back within this time (goodput_recovery_time); 0: the expectations alone"`
	Shrink     int           `json:"shrink" key:"shrink,max=100000,default=80" doc:"runs the shrinking of a violation may spend at most"`
}

// HuntSpan is a range of durations.
type HuntSpan struct {
	Min time.Duration `json:"min" key:"min" doc:"the earliest start"`
	Max time.Duration `json:"max" key:"max" doc:"the latest start"`
}

// HuntFault is one entry of the envelope: a fault kind and how each of its keys is drawn.
// Params lists the keys the entry gives, in file order, each as a TuneParam whose Path is
// the fault key: a range (TuneInt, TuneNumber, TuneDuration, TuneRate) or a fixed value
// (TuneChoice with one choice, the value's YAML text). Line is where the entry is written.
type HuntFault struct {
	Kind   FaultKind   `json:"kind"`
	Params []TuneParam `json:"params"`
	Line   int         `json:"-"`
}

// Param is the entry's parameter for fault key k, or nil.
func (h *HuntFault) Param(k string) *TuneParam {
	for i := range h.Params {
		if h.Params[i].Path == k {
			return &h.Params[i]
		}
	}
	return nil
}

// Window reports whether the entry's kind acts during a window [at, at+for).
func (h *HuntFault) Window() bool {
	r := ruleOf(h.Kind)
	return r != nil && r.Window
}

// Entry is the fault entry of the envelope with each key at u[i] of its range (the order of
// Params; a fixed value ignores its u), as flow YAML: the text a trial's faults list holds.
// at, when the kind is a window and the entry gives no at range, is the window's start.
func (h *HuntFault) Entry(u []float64, at string) string {
	parts := []string{"kind: " + string(h.Kind)}
	for i, p := range h.Params {
		parts = append(parts, p.Path+": "+p.Value(u[i]))
	}
	if h.Window() && h.Param("at") == nil && at != "" {
		parts = append(parts, "at: "+at)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// AtParam is the range the entry's windows start in: its own at range, else the block's.
func (h *Hunt) AtParam(f *HuntFault) TuneParam {
	if p := f.Param("at"); p != nil {
		return *p
	}
	return TuneParam{Path: "at", Kind: TuneDuration, Min: h.At.Min.Seconds(), Max: h.At.Max.Seconds()}
}

// huntFaultSchema is an entry of hunt.faults: the keys of the fault entry (faultSchema)
// but id, a numeric one as a range. RegisterFault keeps it in step with faultSchema.
var huntFaultSchema = obj("a fault kind and its keys: a fixed value, or {min: A, max: B} for a whole number, number, probability, duration or rate")

// syncHuntFault rebuilds huntFaultSchema's keys from faultSchema's.
func syncHuntFault() {
	huntFaultSchema.keys = huntFaultSchema.keys[:0]
	huntFaultSchema.sub = map[string]*schema{}
	for _, k := range faultSchema.keys {
		if k == "id" {
			continue
		}
		sub := faultSchema.sub[k]
		if _, ok := tuneKinds[sub.kind]; ok {
			one := withDoc(sub, "")
			one.field, one.def, one.shown = 0, reflect.Value{}, ""
			r := obj(sub.doc+"; in a hunt, a value or {min: A, max: B}", "min", needed(withDoc(one, "the least value")), "max", needed(withDoc(one, "the largest value")))
			r.want, r.rangeOf = "a value or {min: A, max: B}", one
			sub = r
		}
		huntFaultSchema.keys = append(huntFaultSchema.keys, k)
		huntFaultSchema.sub[k] = sub
	}
}

var huntSchema = func() *schema {
	faults := list(huntFaultSchema, "the envelope: fault kinds and the ranges of their keys; each trial draws some of them")
	faults.noSet = true
	s := declare(reflect.TypeFor[Hunt](), "the envelope of faults mayday hunt searches (below)",
		"faults", faults,
		"budget", text("runs (a whole number >= 1) or wall time (a duration) the search may spend; --budget overrides it"))
	s.noGen = true // a search is a command's business, not a run's
	return s
}()

const huntWant = "a mapping such as {faults: [{kind: outage, tool: search, for: {min: 10s, max: 2m}}], at: {min: 5m, max: 30m}, budget: 80}"

// hunt decodes the hunt block of the scenario s (its tools and faults decoded already).
func (d *decoder) hunt(root *yaml.Node, s *Scenario) *Hunt {
	n := mapValue(root, "hunt")
	if n == nil || isNull(deref(n)) {
		return nil
	}
	h := &Hunt{}
	sch := rootSchema.sub["hunt"]
	fillDefaults(sch, reflect.ValueOf(h).Elem(), true)
	sch.want = huntWant
	f, _ := d.decodeBlock("hunt", n, sch, reflect.ValueOf(h).Elem())
	if f.node == nil {
		return nil
	}
	if f.get("at") == nil {
		d.fail(f.at(), "hunt", "missing at; want at: {min: A, max: B}, where fault windows may start, such as {min: 5m, max: 30m}")
	} else if h.At.Max < h.At.Min {
		d.fail(f.get("at"), "hunt.at", "max %s is below min %s; want min <= max", fmtDuration(h.At.Max), fmtDuration(h.At.Min))
	}
	if v := f.get("budget"); v != nil {
		b, err := ParseTuneBudget(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			d.fail(v, "hunt.budget", "%s is not a budget; want a number of runs >= 1 such as 80, or a duration such as 10m", describe(v))
		} else {
			h.Budget, h.BudgetTime = b.Budget, b.BudgetTime
		}
	}
	v := f.get("faults")
	if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		at := v
		if at == nil {
			at = f.at()
		}
		d.fail(at, "hunt.faults", "want a non-empty list of fault kinds and ranges, such as [{kind: outage, tool: search, for: {min: 10s, max: 2m}}]")
		return h
	}
	for i, item := range v.Content {
		if hf, ok := d.huntFault(fmt.Sprintf("hunt.faults[%d]", i), item, h, s); ok {
			h.Faults = append(h.Faults, hf)
		}
	}
	return h
}

// huntFault decodes one entry of the envelope, then checks it as faults of the scenario: once
// with every range at its min, once at its max, each value at its line.
func (d *decoder) huntFault(key string, item *yaml.Node, h *Hunt, s *Scenario) (HuntFault, bool) {
	f := d.fields(key, item, huntFaultSchema, "a fault kind and ranges, such as {kind: brownout, tool: search, for: {min: 30s, max: 4m}, slowdown: {min: 1.2, max: 6}}")
	if f.node == nil {
		return HuntFault{}, false
	}
	kn := f.get("kind")
	if kn == nil {
		d.fail(f.at(), key, "missing kind; want kind: %s", orList(faultKinds))
		return HuntFault{}, false
	}
	k, ok := d.enum(kn, key+".kind", "a fault kind", faultKinds)
	if !ok {
		return HuntFault{}, false
	}
	hf := HuntFault{Kind: FaultKind(k), Line: f.at().Line}
	at := f.at()
	probes := [2]*yaml.Node{{Kind: yaml.MappingNode, Line: at.Line, Column: at.Column}, {Kind: yaml.MappingNode, Line: at.Line, Column: at.Column}}
	good := true
	for _, p := range f.order {
		v := f.get(p)
		for j := range probes {
			probes[j].Content = append(probes[j].Content, f.keys[p], v)
		}
		if p == "kind" || v == nil {
			continue
		}
		sub := huntFaultSchema.sub[p]
		if sub.rangeOf == nil || deref(v).Kind != yaml.MappingNode {
			hf.Params = append(hf.Params, TuneParam{Path: p, Kind: TuneChoice, Choices: []string{valueText(v)}})
			continue
		}
		tp, vals, ok := d.tuneRange(p, f.key(p), v, ruleAtFault(p))
		if !ok {
			good = false
			continue
		}
		hf.Params = append(hf.Params, tp)
		for j := range probes {
			probes[j].Content[len(probes[j].Content)-1] = vals[j]
		}
	}
	if !good {
		return hf, false
	}
	if hf.Window() && hf.Param("at") == nil {
		for j, start := range [2]time.Duration{h.At.Min, h.At.Max} {
			probes[j].Content = append(probes[j].Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "at"},
				&yaml.Node{Kind: yaml.ScalarNode, Value: fmtDuration(start), Line: at.Line, Column: at.Column})
		}
	}
	return hf, d.probeFaults(key, probes[:], s)
}

// probeFaults decodes the entries probes as the scenario's faults would be, and reports
// their problems under key.
func (d *decoder) probeFaults(key string, probes []*yaml.Node, s *Scenario) bool {
	seen := map[string]bool{}
	good := true
	for _, p := range probes {
		pd := newDecoder(d.file)
		pd.badTimeout = d.badTimeout
		pd.faults(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{p}}, s.Tools)
		for _, e := range pd.errs {
			e.Key = key + strings.TrimPrefix(e.Key, "faults[0]")
			if id := fmt.Sprint(e.Line, e.Column, e.Key, e.Msg); !seen[id] {
				seen[id] = true
				d.errs = append(d.errs, e)
			}
			good = false
		}
	}
	return good
}

// ruleAtFault is the declaration of fault key k.
func ruleAtFault(k string) *schema { return faultSchema.sub[k] }

// checkHunt is Validate's check of the hunt block's ranges and kinds (the decoder checks a
// file's entries against the scenario itself).
func (v *validator) hunt(h *Hunt) {
	if h == nil {
		return
	}
	v.check(h.At.Min <= h.At.Max, "hunt.at", "min %s above max %s; want min <= max", fmtDuration(h.At.Min), fmtDuration(h.At.Max))
	v.check(h.Budget >= 0 && h.BudgetTime >= 0, "hunt.budget", "negative; want runs >= 1 or a duration")
	v.check(len(h.Faults) > 0, "hunt.faults", "empty; want at least one fault kind")
	for i, f := range h.Faults {
		key := fmt.Sprintf("hunt.faults[%d]", i)
		if ruleOf(f.Kind) == nil {
			v.check(false, key+".kind", "%q is not a fault kind; want %s", f.Kind, orList(faultKinds))
			continue
		}
		for _, p := range f.Params {
			pk := key + "." + p.Path
			v.check(huntFaultSchema.sub[p.Path] != nil, pk, "%s is not a fault key", p.Path)
			if p.Kind == TuneChoice {
				v.check(len(p.Choices) == 1, pk, "%d values; want one", len(p.Choices))
			} else {
				v.check(Finite(p.Min) && Finite(p.Max) && p.Min <= p.Max, pk, "range [%v, %v]; want finite min <= max", p.Min, p.Max)
			}
		}
	}
}

// FaultEntries are the entries of the scenario's own faults list, each as flow YAML (the
// text an override of faults takes), as its source file writes them after its overrides.
func (s *Scenario) FaultEntries() ([]string, error) {
	if s.Source.Data == nil {
		return nil, &Error{File: s.Source.File, Msg: "the scenario has no source text; load it with Load or Parse"}
	}
	root, _, err := withOverrides(s.Source.File, s.Source.Data, s.Source.Overrides)
	if err != nil {
		return nil, err
	}
	n := nodeAt(root, "faults")
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, nil
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		out = append(out, valueText(item))
	}
	return out, nil
}

// Found is the scenario text data with the overrides applied and without the blocks of
// commands (hunt, tune, sweep): what `mayday hunt` writes as the scenario it found. The
// result is checked like any scenario.
func Found(name string, data []byte, ovs []Override) ([]byte, error) {
	root, _, err := withOverrides(name, data, ovs)
	if err != nil {
		return nil, err
	}
	root = cow(root)
	for i := 0; i+1 < len(root.Content); {
		if k := root.Content[i].Value; k == "hunt" || k == "tune" || k == "sweep" {
			root.Content = append(root.Content[:i], root.Content[i+2:]...)
			continue
		}
		i += 2
	}
	out, err := encodeYAML(root)
	if err != nil {
		return nil, err
	}
	if _, err := Parse(name, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// huntProbes checks each entry of the envelope as a trial holds it: with every range at its
// min, and again at its max, as one more fault of the scenario, through the checks any fault
// meets (its kind's own bounds, the size model, the event model). A range a kind refuses at
// run time (a slowdown up to 1e300) is refused here, naming the entry's key, instead of
// refusing most of the hunt's trials. Only the problems the probe adds are reported: the
// scenario's own are reported once, by its own checks.
func (v *validator) huntProbes(s *Scenario) {
	h := s.Hunt
	if h == nil {
		return
	}
	base := &validator{file: v.file}
	base.checkSize(s)
	known := map[string]bool{}
	for _, e := range base.errs {
		known[e.Key+"\x00"+e.Msg] = true
	}
	for i, f := range h.Faults {
		if ruleOf(f.Kind) == nil {
			continue
		}
		key := fmt.Sprintf("hunt.faults[%d]", i)
		seen := map[string]bool{}
		for _, end := range []struct {
			u    float64
			at   time.Duration
			name string
		}{{0, h.At.Min, "min"}, {1, h.At.Max, "max"}} {
			u := make([]float64, len(f.Params))
			for j := range u {
				u[j] = end.u
			}
			var n yaml.Node
			if err := yaml.Unmarshal([]byte("["+f.Entry(u, fmtDuration(end.at))+"]"), &n); err != nil || len(n.Content) == 0 {
				continue // a Go-built entry whose values are not YAML: its own checks say so
			}
			d := newDecoder(v.file)
			fs := d.faults(n.Content[0], s.Tools)
			probe := fmt.Sprintf("faults[%d]", len(s.Faults))
			report := func(k, msg string) {
				k = key + strings.TrimPrefix(strings.TrimPrefix(k, "faults[0]"), probe)
				if !seen[k+msg] { // once, at the first end that shows it
					seen[k+msg] = true
					v.check(false, k, "%s (with every range of the entry at its %s; narrow the range to what the kind accepts)", msg, end.name)
				}
			}
			if len(d.errs) > 0 || len(fs) != 1 {
				for _, e := range d.errs {
					report(e.Key, e.Msg)
				}
				continue
			}
			trial := *s
			trial.Hunt, trial.Tune, trial.Sweep = nil, nil, nil
			fs[0].Index, fs[0].ID = len(s.Faults), "hunt-probe"
			trial.Faults = append(append([]Fault(nil), s.Faults...), fs[0])
			tv := &validator{file: v.file}
			tv.faults(&trial)
			tv.checkSize(&trial)
			for _, e := range tv.errs {
				own := strings.HasPrefix(e.Key, "faults[") && !strings.HasPrefix(e.Key, probe)
				if own || known[e.Key+"\x00"+e.Msg] {
					continue
				}
				if !strings.HasPrefix(e.Key, probe) {
					e.Msg = e.Key + ": " + e.Msg
					e.Key = ""
				}
				report(e.Key, e.Msg)
			}
		}
	}
}
