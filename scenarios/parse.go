package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
		sweeping = sweeping || o.From == FromSweep
	}
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	s, sweep := d.scenario(root)
	// A sweep point is a valid scenario only if each of its values is; checking each value
	// once on its own (not every point of the grid) finds every bad one in linear time. A
	// scenario loaded for one point skips this: its base was checked with the file.
	if !sweeping {
		d.checkSweep(root, s.Sweep, sweep)
	}
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	// The size model (size.go) bounds what the run would cost, across keys.
	v := &validator{file: name}
	v.checkSize(s)
	v.errs.place(root)
	if err := v.errs.err(); err != nil {
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
func (d *decoder) scenario(root *yaml.Node) (*Scenario, []sweepSource) {
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
	if n := f.get("description"); n != nil {
		if v, ok := d.text(n, "description", "one line of text"); ok {
			s.Description = v
		}
	}
	if n := f.get("seed"); n != nil {
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
			d.fail(n, "seed", "%s is negative; want a whole number >= 0", n.Value)
		} else if d.scalar(n, "seed", "a whole number >= 0") {
			var v uint64
			if n.ShortTag() != "!!int" || n.Decode(&v) != nil {
				d.fail(n, "seed", "%s is not a whole number >= 0 that fits in 64 bits; want such as 42", describe(n))
			} else {
				s.Seed = v
			}
		}
	}
	if n := f.get("horizon"); n != nil {
		if v, ok := d.duration(n, "horizon"); ok {
			s.Horizon = v
		}
	}

	// Tools first: the mix and the faults refer to them.
	s.Tools = d.tools(f.get("tools"), root)
	d.workload(f.get("workload"), s)
	s.Faults = d.faults(f.get("faults"), s.Tools)
	d.recovery(f.get("recovery"), &s.Recovery)
	d.validation(f.get("validation"), &s.Validation)
	s.Model = d.modelService(f.get("model"))
	s.Prices = d.prices(f.get("prices"), s)
	if s.Recovery.Budgets.Cost > 0 && s.Prices == nil {
		d.fail(f.get("recovery"), "recovery.budgets.cost", "a cost budget needs prices; add prices: {models: ..., tools: ...}")
	}
	s.Redact = d.redact(f.get("redact"))
	s.Expect = d.expect(f.get("expect"), s.Prices != nil)
	s.Tolerances = d.tolerances(f.get("tolerances"))
	var sweep []sweepSource
	s.Sweep, sweep = d.sweep(f.get("sweep"))
	return s, sweep
}

// validation reads {independent: {false_accept: p, false_reject: p}}.
func (d *decoder) validation(n *yaml.Node, v *Validation) {
	if n == nil {
		return
	}
	const want = "a mapping such as {independent: {false_accept: 0.02, false_reject: 0.01}}"
	f := d.fields("validation", n, rootSchema.sub["validation"], want)
	in := f.get("independent")
	if in == nil {
		return
	}
	sub := d.fields(f.key("independent"), in, rootSchema.sub["validation"].sub["independent"], "a mapping of probabilities such as {false_accept: 0.02}")
	for _, p := range []struct {
		key string
		dst *float64
	}{
		{"false_accept", &v.Independent.FalseAccept},
		{"false_reject", &v.Independent.FalseReject},
	} {
		if x := sub.get(p.key); x != nil {
			if pr, ok := d.prob(x, sub.key(p.key)); ok {
				*p.dst = pr
			}
		}
	}
}

func (d *decoder) tools(n *yaml.Node, root *yaml.Node) []Tool {
	const example = "tools: {search: {latency: {dist: exponential, mean: 2s}, timeout: 30s}}"
	if n == nil {
		d.fail(root, "tools", "missing; want at least one tool, such as %s", example)
		return nil
	}
	f := d.fields("tools", n, nil, "a mapping of tool names to tools, such as "+example)
	if f.node != nil && len(f.order) == 0 {
		d.fail(n, "tools", "no tools; want at least one, such as %s", example)
	}
	var tools []Tool
	for _, name := range f.order {
		key := f.key(name)
		if !entityName.MatchString(name) {
			// Still decoded, so references to it do not add errors of their own.
			d.fail(f.keys[name], key, "%q is not a valid tool name; want lowercase letters, digits, _ and - ([a-z0-9_-]+)", name)
		}
		t := defaultTool(name)
		tf := d.fields(key, f.vals[name], toolSchema, "a tool such as {latency: {dist: exponential, mean: 2s}, timeout: 30s}")
		if v := tf.get("version"); v != nil {
			if s, ok := d.text(v, tf.key("version"), `a version such as "3.2"`); ok {
				t.Version = s
			}
		}
		if v := tf.get("latency"); v != nil {
			if dist, ok := d.dist(v, tf.key("latency"), durationUnit); ok {
				t.Latency = dist
			}
		}
		if v := tf.get("concurrency"); v != nil {
			if c, ok := d.integer(v, tf.key("concurrency"), "a whole number of servers >= 0 (0 = unlimited)"); ok {
				if _, hi := bounds(tf.key("concurrency")); c > hi {
					d.fail(v, tf.key("concurrency"), "%d is too large; want at most %d servers", c, hi)
				} else {
					t.Concurrency = int(c)
				}
			}
		}
		if v := tf.get("idempotency"); v != nil {
			if s, ok := d.enum(v, tf.key("idempotency"), "an idempotency", idempotencies); ok {
				t.Idempotency = Idempotency(s)
			}
		}
		if v := tf.get("timeout"); v != nil {
			if dur, ok := d.duration(v, tf.key("timeout")); ok {
				t.Timeout = dur
			} else {
				d.badTimeout[name] = true
			}
		}
		if v := tf.get("compute"); v != nil {
			if c, ok := d.numberAt(v, tf.key("compute"), "compute units per second of service, a number >= 0"); ok {
				t.Compute = c
			}
		}
		if v := tf.get("queue_limit"); v != nil {
			if c, ok := d.integer(v, tf.key("queue_limit"), "a whole number of waiting attempts >= 0 (0 = unbounded)"); ok {
				if _, hi := bounds(tf.key("queue_limit")); c > hi {
					d.fail(v, tf.key("queue_limit"), "%d is too large; want at most %d", c, hi)
				} else {
					t.QueueLimit = int(c)
				}
			}
		}
		if v := tf.get("arguments"); v != nil {
			af := d.fields(tf.key("arguments"), v, nil, "a mapping of argument names to values, such as {strategy: momentum}")
			for _, k := range af.order {
				an := af.get(k)
				if an == nil {
					t.Arguments = append(t.Arguments, Argument{Key: k})
					continue
				}
				if s, ok := d.text(an, af.key(k), "a single value"); ok {
					t.Arguments = append(t.Arguments, Argument{Key: k, Value: s})
				}
			}
		}
		tools = append(tools, t)
	}
	return tools
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

func (d *decoder) workload(n *yaml.Node, s *Scenario) {
	w := &s.Workload
	f := d.fields("workload", n, workloadSchema, "a mapping such as {investigations: 1000, arrival: {poisson: 100/h}}")
	if v := f.get("investigations"); v != nil {
		if c, ok := d.integer(v, f.key("investigations"), "a whole number >= 1"); ok {
			if c > 1<<40 {
				d.fail(v, f.key("investigations"), "%d is too large; want at most %d", c, int64(1)<<40)
			} else {
				w.Investigations = int(c)
			}
		}
	}
	if v := f.get("arrival"); v != nil {
		if a, ok := d.arrival(v, f.key("arrival")); ok {
			w.Arrival = a
		}
	}
	if v := f.get("steps"); v != nil {
		if dist, ok := d.countDist(v, f.key("steps"), 1); ok {
			w.Steps = dist
		}
	}
	if v := f.get("think"); v != nil {
		if dist, ok := d.dist(v, f.key("think"), durationUnit); ok {
			w.Think = dist
		}
	}
	if v := f.get("tokens"); v != nil {
		v = d.tokensGrowth(v, f.key("tokens"), w)
		if dist, ok := d.dist(v, f.key("tokens"), countUnit); ok {
			w.Tokens = dist
		}
	}
	if v := f.get("model"); v != nil {
		if m, ok := d.text(v, f.key("model"), "a model name such as research-model-2"); ok {
			w.Model = m
		}
	}
	w.Mix = defaultMix(s.Tools)
	if v := f.get("tools"); v != nil {
		w.Mix = d.mix(v, f.key("tools"), s.Tools)
	}
	if v := f.get("subagents"); v != nil {
		sf := d.fields(f.key("subagents"), v, workloadSchema.sub["subagents"], "a mapping such as {probability: 0.1, count: {dist: uniform, min: 1, max: 3}, max_depth: 2}")
		if p := sf.get("probability"); p != nil {
			if x, ok := d.prob(p, sf.key("probability")); ok {
				w.Subagents.Probability = x
			}
		}
		if c := sf.get("count"); c != nil {
			if dist, ok := d.countDist(c, sf.key("count"), 1); ok {
				w.Subagents.Count = dist
			}
		}
		if m := sf.get("max_depth"); m != nil {
			if x, ok := d.integer(m, sf.key("max_depth"), "a whole number >= 0"); ok {
				if x > 64 {
					d.fail(m, sf.key("max_depth"), "%d is too deep; want at most 64", x)
				} else {
					w.Subagents.MaxDepth = int(x)
				}
			}
		}
	}
	d.workers(f, w)
	if v := f.get("behaviour"); v != nil {
		bf := d.fields(f.key("behaviour"), v, workloadSchema.sub["behaviour"], "a mapping of probabilities such as {invalid_output: 0.05}")
		b := &w.Behaviour
		for _, p := range []struct {
			key string
			dst *float64
		}{
			{"invalid_output", &b.InvalidOutput},
			{"revise_success", &b.ReviseSuccess},
			{"policy_violation", &b.PolicyViolation},
			{"stuck", &b.Stuck},
			{"validation_miss", &b.ValidationMiss},
		} {
			if n := bf.get(p.key); n != nil {
				if x, ok := d.prob(n, bf.key(p.key)); ok {
					*p.dst = x
				}
			}
		}
	}
}

func (d *decoder) arrival(n *yaml.Node, key string) (Arrival, bool) {
	const want = "one of {poisson: 200/h}, {at_once: true} or {uniform: 2h}"
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
		r, ok := d.rate(v, f.key(k), true)
		return Arrival{Kind: ArrivalPoisson, Rate: r}, ok
	case "uniform":
		dur, ok := d.duration(v, f.key(k))
		return Arrival{Kind: ArrivalUniform, Over: dur}, ok
	default: // at_once
		b, ok := d.boolean(v, f.key(k))
		if ok && !b {
			d.fail(v, f.key(k), "false is not an arrival process; want at_once: true, or {poisson: ...} or {uniform: ...}")
			return Arrival{}, false
		}
		return Arrival{Kind: ArrivalAtOnce}, ok
	}
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

func (d *decoder) recovery(n *yaml.Node, r *Recovery) {
	f := d.fields("recovery", n, recoverySchema, "a mapping such as {retry: {max_attempts: 5}, breaker: {}}")

	if v := f.get("retry"); v != nil {
		d.retry(v, f.key("retry"), &r.Retry)
	}
	// A block given as `{}` is switched on with its defaults; only an absent or null key
	// leaves it off.
	if v := f.get("retry_budget"); v != nil {
		d.retryBudget(v, f.key("retry_budget"), r)
	}
	if v := f.get("breaker"); v != nil {
		d.breaker(v, f.key("breaker"), r)
	}
	if v := f.get("inspect_before_retry"); v != nil {
		if b, ok := d.boolean(v, f.key("inspect_before_retry")); ok {
			r.InspectBeforeRetry = b
		}
	}
	if v := f.get("inspection"); v != nil {
		d.inspection(v, f.key("inspection"), &r.Inspection)
	}
	if v := f.get("revisions"); v != nil {
		if c, ok := d.integer(v, f.key("revisions"), "a whole number >= 0"); ok {
			if _, hi := bounds(f.key("revisions")); c > hi {
				d.fail(v, f.key("revisions"), "%d is too many; want at most %d", c, hi)
			} else {
				r.Revisions = int(c)
			}
		}
	}
	if v := f.get("non_progress"); v != nil {
		d.nonProgress(v, f.key("non_progress"), r)
	}
	if v := f.get("budgets"); v != nil {
		d.budgets(v, f.key("budgets"), &r.Budgets)
	}
	if v := f.get("on_exhaustion"); v != nil {
		if s, ok := d.enum(v, f.key("on_exhaustion"), "an exhaustion policy", exhaustionPolicies); ok {
			r.OnExhaustion = s
		}
	}
	if v := f.get("lease"); v != nil {
		if dur, ok := d.duration(v, f.key("lease")); ok {
			r.Lease = dur
		}
	}
	if v := f.get("supervisor"); v != nil {
		d.supervisor(v, f.key("supervisor"), &r.Supervisor)
	}
	if v := f.get("humans"); v != nil {
		d.humans(v, f.key("humans"), r)
	}
	if v := f.get("subagents"); v != nil {
		sf := d.fields(f.key("subagents"), v, recoverySchema.sub["subagents"], "a mapping such as {on_failure: {action: respawn, max: 2, then: fail}}")
		if x := sf.get("on_failure"); x != nil {
			d.subagentFailure(x, sf.key("on_failure"), &r.Subagents.OnFailure)
		}
	}
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

// retry reads recovery.retry into rt, which holds the defaults.
func (d *decoder) retry(v *yaml.Node, key string, rt *Retry) {
	rf := d.fields(key, v, recoverySchema.sub["retry"], "a mapping such as {max_attempts: 5, initial: 1s, multiplier: 2, max: 5m, jitter: full}")
	if x := rf.get("max_attempts"); x != nil {
		if c, ok := d.integer(x, rf.key("max_attempts"), "a whole number >= 1 (1 = never retry)"); ok {
			if _, hi := bounds(rf.key("max_attempts")); c > hi {
				d.fail(x, rf.key("max_attempts"), "%d is too many; want at most %d", c, hi)
			} else {
				rt.MaxAttempts = int(c)
			}
		}
	}
	if x := rf.get("initial"); x != nil {
		if dur, ok := d.duration(x, rf.key("initial")); ok {
			rt.Initial = dur
		}
	}
	if x := rf.get("multiplier"); x != nil {
		if m, ok := d.numberAt(x, rf.key("multiplier"), "a number >= 1"); ok {
			rt.Multiplier = m
		}
	}
	if x := rf.get("max"); x != nil {
		if dur, ok := d.duration(x, rf.key("max")); ok {
			rt.Max = dur
		}
	}
	if msg := rt.maxBelowInitial(); msg != "" {
		at := rf.get("max")
		if at == nil {
			at = rf.get("initial")
		}
		d.fail(at, rf.key("max"), "%s", msg)
	}
	if x := rf.get("jitter"); x != nil {
		if s, ok := d.enum(x, rf.key("jitter"), "a jitter", jitters); ok {
			rt.Jitter = s
		}
	}
	if x := rf.get("on_exhausted"); x != nil {
		if s, ok := d.enum(x, rf.key("on_exhausted"), "an exhaustion action", retryExhausted); ok {
			rt.OnExhausted = s
		}
	}
}

// retryBudget switches on the fleet retry budget, filling the keys it omits from the defaults.
func (d *decoder) retryBudget(v *yaml.Node, key string, r *Recovery) {
	rb := defaultRetryBudget()
	bf := d.fields(key, v, recoverySchema.sub["retry_budget"], "a mapping such as {ratio: 0.1, min_per_second: 1}")
	if x := bf.get("ratio"); x != nil {
		if c, ok := d.numberAt(x, bf.key("ratio"), "retries earned per first attempt, a number >= 0"); ok {
			rb.Ratio = c
		}
	}
	if x := bf.get("min_per_second"); x != nil {
		if c, ok := d.numberAt(x, bf.key("min_per_second"), "retries per second always allowed, a number >= 0"); ok {
			rb.MinPerSecond = c
		}
	}
	r.RetryBudget = &rb
}

// breaker switches the circuit breaker on, filling the keys it omits from the defaults.
func (d *decoder) breaker(v *yaml.Node, key string, r *Recovery) {
	br := defaultBreaker()
	bf := d.fields(key, v, recoverySchema.sub["breaker"], "a mapping such as {window: 1m, failure_ratio: 0.5, min_calls: 20, cooldown: 2m}")
	if x := bf.get("window"); x != nil {
		if dur, ok := d.duration(x, bf.key("window")); ok {
			br.Window = dur
		}
	}
	if x := bf.get("failure_ratio"); x != nil {
		if p, ok := d.prob(x, bf.key("failure_ratio")); ok {
			if p == 0 {
				d.fail(x, bf.key("failure_ratio"), "0 would open the breaker on success; want a ratio in (0, 1]")
			} else {
				br.FailureRatio = p
			}
		}
	}
	if x := bf.get("min_calls"); x != nil {
		if c, ok := d.integer(x, bf.key("min_calls"), "a whole number >= 1"); ok {
			if _, hi := bounds(bf.key("min_calls")); c > hi {
				d.fail(x, bf.key("min_calls"), "%d is too large; want at most %d", c, hi)
			} else {
				br.MinCalls = int(c)
			}
		}
	}
	if x := bf.get("cooldown"); x != nil {
		if dur, ok := d.duration(x, bf.key("cooldown")); ok {
			br.Cooldown = dur
		}
	}
	r.Breaker = &br
}

// inspection reads how a running operation is polled.
func (d *decoder) inspection(v *yaml.Node, key string, in *Inspection) {
	nf := d.fields(key, v, recoverySchema.sub["inspection"], "a mapping such as {interval: 1m, max: 60}")
	if x := nf.get("interval"); x != nil {
		if dur, ok := d.duration(x, nf.key("interval")); ok {
			in.Interval = dur
		}
	}
	if x := nf.get("max"); x != nil {
		if c, ok := d.integer(x, nf.key("max"), "a whole number of lookups >= 1"); ok {
			if _, hi := bounds(nf.key("max")); c > hi {
				d.fail(x, nf.key("max"), "%d is too many; want at most %d", c, hi)
			} else {
				in.Max = int(c)
			}
		}
	}
}

// nonProgress switches on the detection of repeated identical steps.
func (d *decoder) nonProgress(v *yaml.Node, key string, r *Recovery) {
	np := defaultNonProgress()
	nf := d.fields(key, v, recoverySchema.sub["non_progress"], "a mapping such as {repeats: 3}")
	if x := nf.get("repeats"); x != nil {
		if c, ok := d.integer(x, nf.key("repeats"), "a whole number >= 1"); ok {
			if _, hi := bounds(nf.key("repeats")); c > hi {
				d.fail(x, nf.key("repeats"), "%d is too many; want at most %d", c, hi)
			} else {
				np.Repeats = int(c)
			}
		}
	}
	r.NonProgress = &np
}

// budgets reads the per-investigation resource limits (0 = unlimited).
func (d *decoder) budgets(v *yaml.Node, key string, b *Budgets) {
	bf := d.fields(key, v, recoverySchema.sub["budgets"], "a mapping such as {tokens: 2000000, compute: 10h, wall: 24h}")
	if x := bf.get("tokens"); x != nil {
		if c, ok := d.integer(x, bf.key("tokens"), "a whole number of tokens >= 0 (0 = unlimited)"); ok {
			b.Tokens = c
		}
	}
	if x := bf.get("compute"); x != nil {
		// Compute-unit seconds, written as a number or as a duration (10h = 36000).
		if x.Kind == yaml.ScalarNode && isNumberTag(x) {
			if c, ok := d.numberAt(x, bf.key("compute"), "compute-unit seconds >= 0, as a number or a duration such as 10h"); ok {
				b.Compute = c
			}
		} else if dur, ok := d.durationAtLeast(x, bf.key("compute"), false); ok {
			b.Compute = dur.Seconds()
		}
	}
	if x := bf.get("wall"); x != nil {
		if dur, ok := d.duration(x, bf.key("wall")); ok {
			b.Wall = dur
		}
	}
	if x := bf.get("cost"); x != nil {
		if c, ok := d.numberAt(x, bf.key("cost"), "an amount of money >= 0 in the currency of prices (0 = unlimited)"); ok {
			b.Cost = c
		}
	}
}

// humans switches on human review; reviewers (and, with reviewers, review_time) are required.
func (d *decoder) humans(v *yaml.Node, key string, r *Recovery) {
	h := defaultHumans()
	hf := d.fields(key, v, recoverySchema.sub["humans"], "a mapping such as {reviewers: 5, review_time: {dist: lognormal, median: 20m, p95: 2h}, approve: 0.8}")
	rv := hf.get("reviewers")
	if hf.node == nil {
		// Not a mapping: already reported.
	} else if rv == nil {
		d.fail(hf.at(), key, "missing reviewers; want reviewers: N (0 = escalations terminate)")
	} else if c, ok := d.integer(rv, hf.key("reviewers"), "a whole number >= 0 (0 = escalations terminate)"); ok {
		if _, hi := bounds(hf.key("reviewers")); c > hi {
			d.fail(rv, hf.key("reviewers"), "%d is too many; want at most %d", c, hi)
		} else {
			h.Reviewers = int(c)
		}
	}
	if x := hf.get("review_time"); x != nil {
		d.reviewTime(x, hf.key("review_time"), &h)
	} else if h.Reviewers > 0 && hf.node != nil {
		d.fail(hf.at(), key, "missing review_time; want a distribution such as {dist: lognormal, median: 20m, p95: 2h}")
	}
	if x := hf.get("approve"); x != nil {
		d.approve(x, hf.key("approve"), &h)
	}
	r.Humans = &h
}

func (d *decoder) supervisor(n *yaml.Node, key string, s *Supervisor) {
	f := d.fields(key, n, recoverySchema.sub["supervisor"], "{kind: rules} or {kind: model, accuracy: 0.9, latency: 30s, tokens: 4000}")
	if f.node == nil {
		return
	}
	kind := "rules"
	if v := f.get("kind"); v != nil {
		k, ok := d.enum(v, f.key("kind"), "a supervisor kind", supervisorKinds)
		if !ok {
			return
		}
		kind = k
	}
	s.Kind = kind
	if kind == "rules" {
		for _, k := range f.order {
			if k != "kind" {
				d.fail(f.keys[k], f.key(k), "only a model supervisor takes %s; this one is kind rules", k)
			}
		}
		return
	}
	if v := f.get("accuracy"); v == nil {
		d.fail(f.at(), key, "a model supervisor needs accuracy; want accuracy: a probability such as 0.9")
	} else if p, ok := d.prob(v, f.key("accuracy")); ok {
		s.Accuracy = p
	}
	if v := f.get("latency"); v != nil {
		if dur, ok := d.duration(v, f.key("latency")); ok {
			s.Latency = dur
		}
	}
	if v := f.get("tokens"); v != nil {
		if c, ok := d.integer(v, f.key("tokens"), "a whole number of tokens >= 0"); ok {
			s.Tokens = c
		}
	}
	if v := f.get("difficulty"); v != nil {
		df := d.fields(f.key("difficulty"), v, recoverySchema.sub["supervisor"].sub["difficulty"], "a mapping such as {per_attempt: 0.05, per_class: 0.1, per_step: 0, floor: 0.5}")
		if df.node != nil {
			dif := &Difficulty{}
			for _, p := range []struct {
				key string
				dst *float64
			}{{"per_attempt", &dif.PerAttempt}, {"per_class", &dif.PerClass}, {"per_step", &dif.PerStep}} {
				if x := df.get(p.key); x != nil {
					if n, ok := d.number(x, df.key(p.key), "accuracy lost per unit, a number (negative gains)"); ok {
						*p.dst = n
					}
				}
			}
			if x := df.get("floor"); x != nil {
				if p, ok := d.prob(x, df.key("floor")); ok {
					dif.Floor = p
				}
			}
			if *dif != (Difficulty{}) {
				s.Difficulty = dif
			}
		}
	}
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

// sweepSource is where one sweep axis is written: its key and its value nodes.
type sweepSource struct {
	key  *yaml.Node
	vals []*yaml.Node
}

func (d *decoder) sweep(n *yaml.Node) ([]SweepAxis, []sweepSource) {
	f := d.fields("sweep", n, nil, "a mapping of paths to lists of values, such as {recovery.retry.max_attempts: [1, 3, 5]}")
	var axes []SweepAxis
	var srcs []sweepSource
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
		srcs = append(srcs, sweepSource{key: f.keys[p], vals: vals})
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

// modelService decodes the top-level model block.
func (d *decoder) modelService(n *yaml.Node) *ModelService {
	if n == nil {
		return nil
	}
	f := d.fields("model", n, rootSchema.sub["model"], "a mapping such as {requests_per_minute: 600, tokens_per_minute: 2000000, latency_per_1k_tokens: 400ms, failure: 0.001}")
	if f.node == nil {
		return nil
	}
	m := &ModelService{}
	if v := f.get("requests_per_minute"); v != nil {
		m.RequestsPerMinute, _ = d.numberAt(v, f.key("requests_per_minute"), "calls per minute >= 0 (0 = unlimited)")
	}
	if v := f.get("tokens_per_minute"); v != nil {
		m.TokensPerMinute, _ = d.numberAt(v, f.key("tokens_per_minute"), "tokens per minute >= 0 (0 = unlimited)")
	}
	if v := f.get("latency_per_1k_tokens"); v != nil {
		m.LatencyPer1kTokens, _ = d.duration(v, f.key("latency_per_1k_tokens"))
	}
	if v := f.get("failure"); v != nil {
		m.Failure, _ = d.prob(v, f.key("failure"))
	}
	return m
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

// workers reads workload.workers and workload.priority.
func (d *decoder) workers(f *fields, w *Workload) {
	if v := f.get("workers"); v != nil {
		if c, ok := d.integer(v, f.key("workers"), "a whole number of workers >= 0 (0 = unlimited)"); ok {
			if _, hi := bounds(f.key("workers")); c > hi {
				d.fail(v, f.key("workers"), "%d is too large; want at most %d workers", c, hi)
			} else {
				w.Workers = int(c)
			}
		}
	}
	if v := f.get("priority"); v != nil {
		if p, ok := d.enum(v, f.key("priority"), "a worker priority", priorities); ok {
			w.Priority = p
		}
	}
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
