package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mayday-sim/mayday/metric"
)

// Parse parses and validates a scenario file. name is how errors and SourceInfo.File name the
// file; sets are `path=value` overrides (`--set`), applied before decoding so their values
// are checked like file content. The error, when not nil, is an ErrorList.
func Parse(name string, data []byte, sets []string) (*Scenario, error) {
	ovs, err := ParseSets(name, sets)
	if err != nil {
		return nil, err
	}
	return ParseOverrides(name, data, ovs)
}

// ParseOverrides is Parse with overrides already parsed (a sweep point from Expand, or
// ParseSets' result). They apply in order; a later one wins over an earlier one.
func ParseOverrides(name string, data []byte, ovs []Override) (*Scenario, error) {
	return parse(name, data, ovs)
}

func parse(name string, data []byte, ovs []Override) (*Scenario, error) {
	root, err := parseYAML(name, data)
	if err != nil {
		return nil, err.(ErrorList).err() // scrubbed like every other list
	}
	d := newDecoder(name)
	sweeping := false
	for _, o := range ovs {
		if e := d.apply(&root, o, nil); e != nil {
			d.errs = append(d.errs, e)
		}
		sweeping = sweeping || o.From == FromSweep || o.From == FromTune
	}
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	s, sweep := d.scenario(root)
	var tuned []valueSource
	s.Tune, tuned = d.tune(root, s.Prices != nil)
	s.Hunt = d.hunt(root, s)
	// A sweep point is a valid scenario only if each of its values is; checking each value
	// once on its own (not every point of the grid) finds every bad one in linear time. A
	// scenario loaded for one point skips this: its base was checked with the file.
	if !sweeping {
		d.checkSweep(root, s.Sweep, sweep)
		d.checkTune(root, s.Tune, tuned)
	}
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	// The one validate-and-default step every scenario meets (Validate), here with the
	// lines of the file: it adds the rules across keys the decoder does not see, such as
	// the size model (size.go), which bounds what the run would cost.
	if err := s.validate(name, root); err != nil {
		return nil, err
	}
	canonical(s)
	s.Source = SourceInfo{File: name, Data: bytes.Clone(data), Overrides: append([]Override(nil), ovs...)}
	return s, nil
}

var yamlLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// parseYAML reads exactly one YAML document whose root is a mapping.
func parseYAML(name string, data []byte) (root *yaml.Node, err error) {
	// The parser is third-party code fed user input; a panic in it is reported as a
	// malformed file rather than taking the program down.
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, ErrorList{{File: name, Msg: fmt.Sprintf("invalid YAML: the parser failed (%v)", r)}}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrorList{{File: name, Msg: "the file is empty; want a mapping with at least name and tools"}}
		}
		return nil, ErrorList{yamlError(name, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, ErrorList{{File: name, Line: extra.Line, Column: extra.Column, Msg: "a second YAML document; want one scenario per file"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, ErrorList{yamlError(name, err)}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, ErrorList{{File: name, Msg: "the file is empty; want a mapping with at least name and tools"}}
	}
	root = doc.Content[0]
	if deref(root) == nil || deref(root).Kind != yaml.MappingNode {
		n := root
		if isNull(deref(root)) {
			return nil, ErrorList{{File: name, Line: n.Line, Msg: "the file is empty; want a mapping with at least name and tools"}}
		}
		return nil, ErrorList{{File: name, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("the file holds %s; want a mapping with at least name and tools", describe(deref(n)))}}
	}
	return deref(root), nil
}

func yamlError(name string, err error) *Error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{File: name, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// scenario decodes the whole file. It also returns the value nodes of each sweep axis, for
// checkSweep.
func (d *decoder) scenario(root *yaml.Node) (*Scenario, []valueSource) {
	s := defaultScenario()
	f := d.fields("", root, rootSchema, "a scenario")

	if n := f.get("name"); n == nil {
		d.fail(root, "name", "missing; want a name of lowercase letters, digits and dashes, such as research-fleet")
	} else if v, ok := d.text(n, "name", "a name such as research-fleet"); ok {
		if scenarioName.MatchString(v) {
			s.Name = v
		} else {
			d.fail(n, "name", "%q is not a valid name; want lowercase letters, digits and dashes ([a-z0-9-]+), such as research-fleet", v)
		}
	}
	if n := f.get("seed"); n != nil {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
			d.fail(n, "seed", "%s is negative; want a whole number >= 0", n.Value)
		} else if d.scalar(n, "seed", "a whole number >= 0") {
			// A whole number written as a float (1.0, 1e3) is that number, as for every
			// whole-number key: JSON, and so the JSON Schema, cannot tell 1.0 from 1.
			var v uint64
			var f float64
			switch {
			case n.ShortTag() == "!!int" && n.Decode(&v) == nil:
				s.Seed = v
			case n.ShortTag() == "!!float" && n.Decode(&f) == nil && f == math.Trunc(f) && f >= 0 && f <= 1<<53:
				s.Seed = uint64(f)
			default:
				d.fail(n, "seed", "%s is not a whole number >= 0 that fits in 64 bits; want such as 42", describe(n))
			}
		}
	}
	// description, horizon, validation and model, by their declarations.
	d.decodeFields(f, rootSchema, reflect.ValueOf(s).Elem())

	// Tools first: the mix and the faults refer to them.
	s.Tools = d.tools(f.get("tools"), root)
	d.workload(f.get("workload"), s)
	s.Faults = d.faults(f.get("faults"), s.Tools)
	d.recovery(f.get("recovery"), &s.Recovery)
	s.Prices = d.prices(f.get("prices"), s)
	if s.Recovery.Budgets.Cost > 0 && s.Prices == nil {
		d.fail(f.get("recovery"), "recovery.budgets.cost", "a cost budget needs prices; add prices: {models: ..., tools: ...}")
	}
	s.Redact = d.redact(f.get("redact"))
	s.Expect = d.expect(f.get("expect"), s.Prices != nil)
	s.Tolerances = d.tolerances(f.get("tolerances"))
	var sweep []valueSource
	s.Sweep, sweep = d.sweep(f.get("sweep"))
	return s, sweep
}

func toolNames(tools []Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// toolRef checks that n names one of tools.
func (d *decoder) toolRef(n *yaml.Node, key string, name string, tools []Tool) bool {
	names := toolNames(tools)
	if contains(names, name) {
		return true
	}
	hint := didYouMean(name, names)
	if len(names) == 0 {
		d.fail(n, key, "unknown tool %q; the file defines no tools", name)
		return false
	}
	d.fail(n, key, "unknown tool %q%s; want one of %s", name, hint, strings.Join(names, ", "))
	d.suggest(closest(name, names))
	return false
}

func (d *decoder) arrival(n *yaml.Node, key string) (Arrival, bool) {
	const want = "one of {poisson: 200/h}, {at_once: true}, {uniform: 2h} or {piecewise: [{rate: 100/h, for: 1h}, {rate: 300/h}]}"
	f := d.fields(key, n, arrivalSchema, want)
	if f.node == nil {
		return Arrival{}, false
	}
	if len(f.order) != 1 {
		if len(f.order) == 0 {
			d.fail(f.at(), key, "empty; want %s", want)
		} else {
			d.fail(f.at(), key, "%s given together; want exactly %s", andList(f.order), want)
		}
		return Arrival{}, false
	}
	k := f.order[0]
	v := f.get(k)
	if v == nil {
		d.fail(f.keys[k], f.key(k), "no value; want %s", want)
		return Arrival{}, false
	}
	switch k {
	case "poisson":
		r, ok := d.rate(v, f.key(k), arrivalSchema.sub["poisson"].above)
		return Arrival{Kind: ArrivalPoisson, Rate: r}, ok
	case "uniform":
		dur, ok := d.duration(v, f.key(k))
		return Arrival{Kind: ArrivalUniform, Over: dur}, ok
	case "piecewise":
		pieces, ok := d.pieces(v, f.key(k))
		return Arrival{Kind: ArrivalPiecewise, Pieces: pieces}, ok
	default: // at_once
		b, ok := d.boolean(v, f.key(k))
		if ok && !b {
			d.fail(v, f.key(k), "false is not an arrival process; want at_once: true, or {poisson: ...} or {uniform: ...}")
			return Arrival{}, false
		}
		return Arrival{Kind: ArrivalAtOnce}, ok
	}
}

// pieces reads a piecewise arrival rate: a non-empty list of {rate, for}, every piece
// but the last with a for > 0, the last without one (it lasts until every root has
// arrived) and with a rate > 0 (else the last roots would never arrive).
func (d *decoder) pieces(n *yaml.Node, key string) ([]Piece, bool) {
	const want = "a list of stretches such as [{rate: 100/h, for: 1h}, {rate: 300/h}]"
	n = deref(n)
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.fail(n, key, "%s; want %s", map[bool]string{true: "an empty list", false: describe(n) + " is not a list"}[n.Kind == yaml.SequenceNode], want)
		return nil, false
	}
	ok := true
	pieces := make([]Piece, len(n.Content))
	for i, item := range n.Content {
		pk := fmt.Sprintf("%s[%d]", key, i)
		last := i == len(n.Content)-1
		f := d.fields(pk, item, arrivalSchema.sub["piecewise"].elem, "a stretch such as {rate: 100/h, for: 1h}")
		if f.node == nil {
			if isNull(deref(item)) {
				d.fail(item, pk, "empty; want a stretch such as {rate: 100/h, for: 1h}")
			}
			ok = false
			continue
		}
		if rn := f.get("rate"); rn == nil {
			d.fail(f.at(), pk, "missing rate; want rate: RATE such as 100/h")
			ok = false
		} else if r, good := d.rate(rn, f.key("rate"), last); good {
			pieces[i].Rate = r
		} else {
			ok = false
		}
		fn := f.get("for")
		switch {
		case fn == nil && !last:
			d.fail(f.at(), pk, "missing for; want for: DURATION such as 1h (only the last stretch has none)")
			ok = false
		case fn != nil && last:
			d.fail(f.keys["for"], f.key("for"), "the last stretch lasts until every root has arrived; remove for")
			ok = false
		case fn != nil:
			dur, good := d.durationAtLeast(fn, f.key("for"), true)
			pieces[i].For, ok = dur, ok && good
		}
	}
	return pieces, ok
}

func (d *decoder) mix(n *yaml.Node, key string, tools []Tool) []Weight {
	const want = "a mapping of tool names to weights > 0, such as {backtest: 0.5, fetch_data: 0.5}"
	f := d.fields(key, n, nil, want)
	if f.node == nil {
		return defaultMix(tools)
	}
	if len(f.order) == 0 {
		d.fail(n, key, "no tools; want %s", want)
		return defaultMix(tools)
	}
	var mix []Weight
	for _, name := range f.order {
		if !d.toolRef(f.keys[name], f.key(name), name, tools) {
			continue
		}
		v := f.get(name)
		if v == nil {
			d.fail(f.keys[name], f.key(name), "no weight; want a number > 0")
			continue
		}
		w, ok := d.number(v, f.key(name), "a weight > 0")
		if !ok {
			continue
		}
		if w <= 0 {
			d.fail(v, f.key(name), "weight %s is not positive; want a number > 0 (leave the tool out to never use it)", v.Value)
			continue
		}
		mix = append(mix, Weight{Tool: name, Weight: w})
	}
	return mix
}

var faultID = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func (d *decoder) faults(n *yaml.Node, tools []Tool) []Fault {
	const want = "a list of faults such as [{kind: transient, tool: search, probability: 0.01}]"
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, "faults", "%s is not a list; want %s", describe(n), want)
		return nil
	}
	var faults []Fault
	ids := map[string]*yaml.Node{}
	for i, item := range n.Content {
		key := fmt.Sprintf("faults[%d]", i)
		f := d.fields(key, item, faultSchema, "a fault such as {kind: transient, tool: search, probability: 0.01}")
		if f.node == nil {
			if isNull(deref(item)) {
				d.fail(item, key, "empty; want a fault such as {kind: transient, tool: search, probability: 0.01}")
			}
			continue
		}
		fault := Fault{ID: strconv.Itoa(i), Index: i}
		kn := f.get("kind")
		if kn == nil {
			d.fail(f.at(), key, "missing kind; want kind: %s", orList(faultKinds))
			continue
		}
		k, ok := d.enum(kn, f.key("kind"), "a fault kind", faultKinds)
		if !ok {
			continue
		}
		fault.Kind = FaultKind(k)
		rule := ruleOf(fault.Kind)
		allowed, required := rule.allowed(), rule.Required
		good := true
		for _, p := range f.order {
			if !contains(allowed, p) {
				d.fail(f.keys[p], f.key(p), "%s fault takes no %s; it takes %s", withArticle(k), p, andList(allowed))
				good = false
			}
		}
		for _, p := range required {
			if f.get(p) == nil {
				d.fail(f.at(), key, "%s fault needs %s", withArticle(k), p)
				good = false
			}
		}
		if v := f.get("id"); v != nil {
			if s, ok := d.text(v, f.key("id"), "an id such as backtest-outage"); ok {
				if !faultID.MatchString(s) {
					d.fail(v, f.key("id"), "%q is not a valid id; want letters, digits, _, . and - only", s)
					good = false
				} else {
					fault.ID = s
				}
			} else {
				good = false
			}
		}
		if v := f.get("tool"); v != nil {
			good = d.faultTool(v, f.key("tool"), &fault, tools) && good
		}
		if rule.Preset != nil {
			rule.Preset(&fault)
		}
		good = d.faultValues(f, &fault) && good
		good = d.faultParams(f, &fault, rule) && good
		if !good {
			continue
		}
		if rule.Decoded != nil {
			if msg := rule.Decoded(&fault); msg != "" {
				d.fail(f.at(), key, "%s", msg)
				continue
			}
		}
		if rule.Timeout {
			at := f.keys["tool"]
			if at == nil {
				at = f.at()
			}
			for _, msg := range waitsForever(&fault, tools, d.badTimeout) {
				d.fail(at, key, "%s", msg)
				good = false
			}
		}
		if first, dup := ids[fault.ID]; dup {
			d.fail(f.at(), key, "id %q is already used by the fault at line %d; want unique ids", fault.ID, first.Line)
			continue
		}
		ids[fault.ID] = f.at()
		if good {
			faults = append(faults, fault)
		}
	}
	return faults
}

// faultValues reads a fault's numeric keys into fault; it reports whether all were valid.
func (d *decoder) faultValues(f *fields, fault *Fault) bool {
	good := true
	if v := f.get("probability"); v != nil {
		if x, ok := d.prob(v, f.key("probability")); ok {
			fault.Probability = x
		} else {
			good = false
		}
	}
	if v := f.get("at"); v != nil {
		if x, ok := d.duration(v, f.key("at")); ok {
			fault.At = x
		} else {
			good = false
		}
	}
	if v := f.get("for"); v != nil {
		if x, ok := d.duration(v, f.key("for")); ok {
			fault.For = x
		} else {
			good = false
		}
	}
	if v := f.get("slowdown"); v != nil {
		if x, ok := d.numberAt(v, f.key("slowdown"), "a latency factor >= 1"); ok {
			fault.Slowdown = x
		} else {
			good = false
		}
	}
	if v := f.get("rate"); v != nil {
		if r, ok := d.rate(v, f.key("rate"), false); ok {
			fault.Rate = r
		} else {
			good = false
		}
	}
	if v := f.get("factor"); v != nil {
		if x, ok := d.numberAt(v, f.key("factor"), "a token factor >= 1"); ok {
			fault.Factor = x
		} else {
			good = false
		}
	}
	if v := f.get("share"); v != nil {
		if x, ok := d.prob(v, f.key("share")); ok && x > 0 {
			fault.Share = x
		} else {
			if ok {
				d.fail(v, f.key("share"), "share 0 crashes nothing; want a share of the workers in (0, 1]")
			}
			good = false
		}
	}
	return good
}

// subagentFailure reads recovery.subagents.on_failure: a word (respawn meaning one
// replacement, then reduce_scope), or {action: WORD, max: N, then: WORD} where max and then
// belong to respawn only.
func (d *decoder) subagentFailure(n *yaml.Node, key string, sf *SubagentFailure) {
	sch := recoverySchema.sub["subagents"].sub["on_failure"]
	if m := deref(n); m.Kind != yaml.MappingNode {
		if isNull(m) {
			return
		}
		if a, ok := d.enum(n, key, "a subagent failure policy", subagentActions); ok {
			*sf = SubagentFailure{Action: a}
			if a == SubagentRespawn {
				*sf = defaultRespawn()
			}
		}
		return
	}
	f := d.fields(key, n, sch, "reduce_scope, respawn, fail, or a mapping such as {action: respawn, max: 2, then: fail}")
	v := f.get("action")
	if v == nil {
		d.fail(f.at(), key, "the mapping needs action; want action: reduce_scope, respawn or fail")
		return
	}
	a, ok := d.enum(v, f.key("action"), "a subagent failure policy", subagentActions)
	if !ok {
		return
	}
	out := SubagentFailure{Action: a}
	if a == SubagentRespawn {
		out = defaultRespawn()
	} else {
		for _, k := range []string{"max", "then"} {
			if x := f.get(k); x != nil {
				d.fail(x, f.key(k), "only action respawn takes %s; this one is %s", k, a)
			}
		}
	}
	if x := f.get("max"); x != nil && a == SubagentRespawn {
		if c, ok := d.integer(x, f.key("max"), "a whole number of replacements >= 0"); ok {
			if _, hi := bounds(f.key("max")); c > hi {
				d.fail(x, f.key("max"), "%d is too many; want at most %d", c, hi)
			} else {
				out.Max = int(c)
			}
		}
	}
	if x := f.get("then"); x != nil && a == SubagentRespawn {
		if s, ok := d.enum(x, f.key("then"), "what a failure does once the respawns are spent", subagentFallbacks); ok {
			out.Then = s
		}
	}
	*sf = out
}

func (d *decoder) redact(n *yaml.Node) []string {
	const want = "a list of argument-key patterns such as [account, ssn]"
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, "redact", "%s is not a list; want %s", describe(n), want)
		return nil
	}
	var out []string
	for i, item := range n.Content {
		key := fmt.Sprintf("redact[%d]", i)
		item = deref(item)
		if isNull(item) {
			d.fail(n, key, "empty; want a pattern such as account")
			continue
		}
		s, ok := d.text(item, key, "a pattern such as account")
		if !ok {
			continue
		}
		if strings.TrimSpace(s) == "" {
			d.fail(item, key, "empty pattern; want a pattern such as account")
			continue
		}
		// Patterns match case-insensitively; storing them lower-case saves every reader the fold.
		out = append(out, strings.ToLower(strings.TrimSpace(s)))
	}
	return out
}

func (d *decoder) metricKey(kn *yaml.Node, key, m string) bool {
	if IsMetric(m) {
		return true
	}
	hint := didYouMean(m, Metrics)
	d.fail(kn, key, "unknown metric %q%s; want one of %s", m, hint, strings.Join(Metrics, ", "))
	d.suggest(closest(m, Metrics))
	return false
}

func (d *decoder) expect(n *yaml.Node, priced bool) []Expectation {
	const want = `a mapping of metrics to checks, such as {completion_rate: ">= 0.95"}`
	f := d.fields("expect", n, nil, want)
	var out []Expectation
	for _, m := range f.order {
		key := f.key(m)
		if !d.metricKey(f.keys[m], key, m) {
			continue
		}
		v := f.get(m)
		if v == nil {
			d.fail(f.keys[m], key, "no check; want %s", expectSyntax)
			continue
		}
		if v.Kind != yaml.ScalarNode {
			d.fail(v, key, "%s is not a check; want %s", describe(v), expectSyntax)
			continue
		}
		if isNumberTag(v) {
			d.fail(v, key, "%s is a bare number; want a comparison such as \">= %s\" or \"== %s\"", v.Value, v.Value, v.Value)
			continue
		}
		e, msg := ParseExpectation(m, v.Value)
		if msg != "" {
			d.fail(v, key, "%s", msg)
			continue
		}
		if !priced && metric.NeedsPrices(m) {
			d.fail(f.keys[m], key, "%s is money and the scenario has no prices, so it is undefined (n/a) in every run and this "+
				"expectation could never hold; add prices: {models: ..., tools: ...} or remove it", m)
			continue
		}
		e.Line = v.Line
		out = append(out, e)
	}
	return out
}

func (d *decoder) tolerances(n *yaml.Node) []Tolerance {
	f := d.fields("tolerances", n, nil, "a mapping of metrics to tolerances, such as {completion_rate: 0.02}")
	var out []Tolerance
	for _, m := range f.order {
		key := f.key(m)
		if !d.metricKey(f.keys[m], key, m) {
			continue
		}
		v := f.get(m)
		if v == nil {
			d.fail(f.keys[m], key, "no tolerance; want a number >= 0")
			continue
		}
		if x, ok := d.atLeast(v, key, 0, false, "a tolerance >= 0 in the metric's unit"); ok {
			out = append(out, Tolerance{Metric: m, Value: x})
		}
	}
	return out
}

// valueSource is where one sweep axis or varied tune key is written: its key, and the value
// nodes checkInPlace tries one at a time (a sweep's values; a tune range's min and max, or
// each choice).
type valueSource struct {
	key  *yaml.Node
	vals []*yaml.Node
}

func (d *decoder) sweep(n *yaml.Node) ([]SweepAxis, []valueSource) {
	f := d.fields("sweep", n, nil, "a mapping of paths to lists of values, such as {recovery.retry.max_attempts: [1, 3, 5]}")
	f.paths = true
	var axes []SweepAxis
	var srcs []valueSource
	for _, p := range f.order {
		key := f.key(p)
		v := f.get(p)
		if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			at := v
			if at == nil {
				at = f.keys[p]
			}
			d.fail(at, key, "want a non-empty list of values, such as [1, 3, 5]")
			continue
		}
		axis := SweepAxis{Path: p}
		var vals []*yaml.Node
		for _, item := range v.Content {
			item = deref(item)
			if item == nil {
				d.fail(v, key, "an alias that does not resolve; want a list of values")
				continue
			}
			axis.Values = append(axis.Values, valueText(item))
			vals = append(vals, item)
		}
		axes = append(axes, axis)
		srcs = append(srcs, valueSource{key: f.keys[p], vals: vals})
	}
	return axes, srcs
}

// prices decodes the price table. Model names must be the workload's model, tool names
// tools of the file.
func (d *decoder) prices(n *yaml.Node, s *Scenario) *Prices {
	if n == nil {
		return nil
	}
	const want = "a mapping such as {currency: USD, models: {m: {input: 0.003, output: 0.015}}, tools: {search: {call: 0.001}}}"
	f := d.fields("prices", n, rootSchema.sub["prices"], want)
	if f.node == nil {
		return nil
	}
	p := &Prices{Currency: "USD"}
	if v := f.get("currency"); v != nil {
		if c, ok := d.text(v, f.key("currency"), "a currency code such as USD"); ok {
			p.Currency = c
		}
	}
	price := func(n *yaml.Node, key string) float64 {
		x, _ := d.atLeast(n, key, 0, false, "a price >= 0")
		return x
	}
	if v := f.get("models"); v != nil {
		mf := d.fields(f.key("models"), v, nil, "a mapping of model names to {input, output} prices per 1000 tokens")
		for _, name := range mf.order {
			if name != s.Workload.Model {
				d.fail(mf.keys[name], mf.key(name), "unknown model %q; the workload's model is %q (workload.model)", name, s.Workload.Model)
				continue
			}
			e := d.fields(mf.key(name), mf.vals[name], rootSchema.sub["prices"].sub["models"].elem, "a mapping such as {input: 0.003, output: 0.015}")
			mp := ModelPrice{Model: name}
			if x := e.get("input"); x != nil {
				mp.Input = price(x, e.key("input"))
			}
			if x := e.get("output"); x != nil {
				mp.Output = price(x, e.key("output"))
			}
			p.Models = append(p.Models, mp)
		}
	}
	if v := f.get("tools"); v != nil {
		tf := d.fields(f.key("tools"), v, nil, "a mapping of tool names to {call, compute_second} prices")
		for _, name := range tf.order {
			if !d.toolRef(tf.keys[name], tf.key(name), name, s.Tools) {
				continue
			}
			e := d.fields(tf.key(name), tf.vals[name], rootSchema.sub["prices"].sub["tools"].elem, "a mapping such as {call: 0.001, compute_second: 0.0001}")
			tp := ToolPrice{Tool: name}
			if x := e.get("call"); x != nil {
				tp.Call = price(x, e.key("call"))
			}
			if x := e.get("compute_second"); x != nil {
				tp.ComputeSecond = price(x, e.key("compute_second"))
			}
			p.Tools = append(p.Tools, tp)
		}
	}
	return p
}

// tokensGrowth reads workload.tokens.growth and returns the distribution's node without it.
func (d *decoder) tokensGrowth(n *yaml.Node, key string, w *Workload) *yaml.Node {
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		return n
	}
	rest := *m
	rest.Content = nil
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if !contains(workloadSchema.sub["tokens"].keys, k) {
			// Reported here, so the hint lists growth too.
			d.fail(m.Content[i], key+"."+k, "unknown key %q%s; want one of %s", k, didYouMean(k, workloadSchema.sub["tokens"].keys), strings.Join(workloadSchema.sub["tokens"].keys, ", "))
			continue
		}
		if k != "growth" {
			rest.Content = append(rest.Content, m.Content[i], m.Content[i+1])
			continue
		}
		if isNull(deref(m.Content[i+1])) {
			continue
		}
		if g, ok := d.atLeast(m.Content[i+1], key+".growth", 0, true, "a factor per step > 0 (1 = no growth)"); ok && g != 1 {
			w.TokensGrowth = g
		}
	}
	return &rest
}

// humanCase returns h's entry for class, adding it.
func humanCase(h *Humans, class string) *HumanCase {
	if c := h.Case(class); c != nil {
		return c
	}
	h.ByClass = append(h.ByClass, HumanCase{Class: class})
	return &h.ByClass[len(h.ByClass)-1]
}

// classFields reads a {default: X, CLASS: X, ...} mapping, calling fn for each key.
func (d *decoder) classFields(n *yaml.Node, key, want string, fn func(class string, v *yaml.Node, key string)) {
	keys := append([]string{"default"}, FailureClasses...)
	f := d.fields(key, n, leaves(keys...), want)
	for _, k := range f.order {
		if v := f.get(k); v != nil {
			fn(k, v, f.key(k))
		}
	}
}

// approve reads humans.approve: a probability, or one per failure class with a default.
func (d *decoder) approve(n *yaml.Node, key string, h *Humans) {
	if deref(n).Kind != yaml.MappingNode {
		if p, ok := d.prob(n, key); ok {
			h.Approve = p
		}
		return
	}
	d.classFields(n, key, "a probability, or a mapping such as {default: 0.8, policy_violation: 0.02}", func(class string, v *yaml.Node, k string) {
		p, ok := d.prob(v, k)
		switch {
		case !ok:
		case class == "default":
			h.Approve = p
		default:
			humanCase(h, class).Approve = &p
		}
	})
}

// reviewTime reads humans.review_time: a distribution, or one per failure class with a
// default.
func (d *decoder) reviewTime(n *yaml.Node, key string, h *Humans) {
	m := deref(n)
	perClass := false
	if m.Kind == yaml.MappingNode {
		for i := 0; i < len(m.Content); i += 2 {
			if k := m.Content[i].Value; k == "default" || contains(FailureClasses, k) {
				perClass = true
			}
		}
	}
	if !perClass {
		if dist, ok := d.dist(n, key, durationUnit); ok {
			h.ReviewTime = dist
		}
		return
	}
	d.classFields(n, key, "a distribution, or a mapping such as {default: {dist: exponential, mean: 20m}, policy_violation: 2h}", func(class string, v *yaml.Node, k string) {
		dist, ok := d.dist(v, k, durationUnit)
		switch {
		case !ok:
		case class == "default":
			h.ReviewTime = dist
		default:
			humanCase(h, class).ReviewTime = &dist
		}
	})
}

// faultTool reads a fault's tool: one of tools, or the model provider (ModelTool) for the
// kinds that can hit it.
func (d *decoder) faultTool(v *yaml.Node, key string, fault *Fault, tools []Tool) bool {
	s, ok := d.text(v, key, "a tool name")
	switch {
	case ok && s == ModelTool && !contains(toolNames(tools), s):
		// The model provider: it can be down, brown out or fail now and then.
		if !fault.Kind.mayNameModel() {
			d.fail(v, key, "%s fault cannot name the model; the model takes %s faults", withArticle(string(fault.Kind)), andList(modelFaultKinds))
			return false
		}
		fault.Tool = s
		return true
	case ok && d.toolRef(v, key, s, tools):
		fault.Tool = s
		return true
	}
	return false
}
