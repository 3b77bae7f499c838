package scenarios

import (
	"fmt"
	"reflect"
	"slices"

	"go.yaml.in/yaml/v3"
)

// The blocks of the file: each is decoded from its declared keys (keys.go); what is left
// here is the keys decoded by hand (a tool's arguments, the arrival process, the step mix,
// the supervisor's rules-or-model split, the reviewers' per-class values, a subagent's
// failure policy) and the rules across keys.

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
		if err := CheckToolName(name); err != nil {
			// Still decoded, so references to it do not add errors of their own.
			d.fail(f.keys[name], key, "%v", err)
		}
		t := defaultTool(name)
		tf, bad := d.decodeBlock(key, f.vals[name], toolSchema, reflect.ValueOf(&t).Elem())
		if contains(bad, "timeout") {
			d.badTimeout[name] = true
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

func (d *decoder) workload(n *yaml.Node, s *Scenario) {
	w := &s.Workload
	f, _ := d.decodeBlock("workload", n, rootSchema.sub["workload"], reflect.ValueOf(w).Elem())
	if v := f.get("arrival"); v != nil {
		if a, ok := d.arrival(v, f.key("arrival")); ok {
			w.Arrival = a
		}
	}
	if v := f.get("tokens"); v != nil {
		v = d.tokensGrowth(v, f.key("tokens"), w)
		if dist, ok := d.dist(v, f.key("tokens"), countUnit); ok {
			w.Tokens = dist
		}
	}
	w.Mix = defaultMix(s.Tools)
	if v := f.get("tools"); v != nil {
		w.Mix = d.mix(v, f.key("tools"), s.Tools)
	}
	if v := f.get("zones"); v != nil {
		w.Zones = d.zones(v, f.key("zones"))
	}
	if v := f.get("hold_worker"); v != nil {
		w.HoldWorker = d.holdWorker(v, f.key("hold_worker"))
	}
}

// zones reads workload.zones: zone names to shares in (0, 1]. That the shares sum to 1 is
// Validate's rule (zoneShares), with the line of the mapping.
func (d *decoder) zones(n *yaml.Node, key string) []Zone {
	const want = "a mapping of zone names to shares of the workers, such as {a: 0.5, b: 0.25, c: 0.25}"
	f := d.fields(key, n, nil, want)
	if f.node == nil {
		return nil
	}
	if len(f.order) == 0 {
		d.fail(n, key, "no zones; want %s (leave zones out for one zone)", want)
		return nil
	}
	var zones []Zone
	for _, name := range f.order {
		if !entityName.MatchString(name) {
			d.fail(f.keys[name], f.key(name), "%q is not a valid zone name; want lowercase letters, digits, _ and - ([a-z0-9_-]+)", name)
			continue
		}
		v := f.get(name)
		if v == nil {
			d.fail(f.keys[name], f.key(name), "no share; want a share of the workers in (0, 1]")
			continue
		}
		x, ok := d.prob(v, f.key(name))
		if ok && x == 0 {
			d.fail(v, f.key(name), "share 0 holds no workers; want a share in (0, 1] (leave the zone out instead)")
			continue
		}
		if ok {
			zones = append(zones, Zone{Name: name, Share: x})
		}
	}
	return zones
}

// holdWorker reads workload.hold_worker: a non-empty list of distinct states of HoldStates.
func (d *decoder) holdWorker(n *yaml.Node, key string) []string {
	want := "a list of states such as [running, recovering]: " + orList(HoldStates)
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.fail(n, key, "%s is not a list; want %s", describe(n), want)
		return nil
	}
	if len(n.Content) == 0 {
		d.fail(n, key, "empty; want at least one state, %s (leave hold_worker out to hold the worker in every state)", want)
		return nil
	}
	var out []string
	for i, item := range n.Content {
		k := fmt.Sprintf("%s[%d]", key, i)
		st, ok := d.enum(deref(item), k, "a lifecycle state", HoldStates)
		if !ok {
			continue
		}
		if slices.Contains(out, st) {
			d.fail(item, k, "%s is listed twice; want each state once", st)
			continue
		}
		out = append(out, st)
	}
	return out
}

func (d *decoder) recovery(n *yaml.Node, r *Recovery) {
	f, _ := d.decodeBlock("recovery", n, rootSchema.sub["recovery"], reflect.ValueOf(r).Elem())
	if v := f.get("retry"); v != nil {
		if msg := maxBelowInitial(&r.Retry); msg != "" {
			at := lookup(v, "max")
			if at == nil {
				at = lookup(v, "initial")
			}
			d.fail(at, f.key("retry")+".max", "%s", msg)
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

// humans switches on human review; reviewers (and, with reviewers, review_time) are required.
func (d *decoder) humans(v *yaml.Node, key string, r *Recovery) {
	sch := recoverySchema.sub["humans"]
	var h Humans
	fillDefaults(sch, reflect.ValueOf(&h).Elem(), true)
	hf := d.fields(key, v, sch, sch.want)
	rv := hf.get("reviewers")
	if hf.node == nil {
		// Not a mapping: already reported.
	} else if rv == nil {
		d.fail(hf.at(), key, "missing reviewers; want reviewers: N (0 = escalations terminate)")
	} else {
		d.leaf(rv, hf.key("reviewers"), sch.sub["reviewers"], reflect.ValueOf(&h.Reviewers).Elem())
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

// supervisor reads {kind: rules}, or a model supervisor, which alone takes the other keys
// and needs accuracy.
func (d *decoder) supervisor(n *yaml.Node, key string, s *Supervisor) {
	sch := recoverySchema.sub["supervisor"]
	f := d.fields(key, n, sch, sch.want)
	if f.node == nil {
		return
	}
	kind := "rules"
	if v := f.get("kind"); v != nil {
		if !d.leaf(v, f.key("kind"), sch.sub["kind"], reflect.ValueOf(&kind).Elem()) {
			return
		}
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
	if f.get("accuracy") == nil {
		d.fail(f.at(), key, "a model supervisor needs accuracy; want accuracy: a probability such as 0.9")
	}
	d.decodeFields(f, sch, reflect.ValueOf(s).Elem())
	if s.Difficulty != nil && *s.Difficulty == (Difficulty{}) {
		s.Difficulty = nil
	}
}

// lookup is the value of key k in the mapping n, or nil; it reports nothing (the mapping's
// problems were reported when it was decoded).
func lookup(n *yaml.Node, k string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			if v := deref(n.Content[i+1]); !isNull(v) {
				return v
			}
		}
	}
	return nil
}
