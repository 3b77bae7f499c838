package scenarios

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Generate writes a scenario file drawn from the key tree (schema.go) for fuzzing: every key
// the tree holds, and so every key added to it later, may appear, with a value of its kind
// within its bounds (now and then at the very bound, such as concurrency: 2147483648 or a
// 1ns interval). Free keys follow what they name: the mix, prices.tools and faults[i].tool
// name the file's tools, prices.models its model, expect and tolerances their metrics;
// faults take the keys of their kind (RegisterFault); distributions take the parameters of
// their family (distFamilies). Many files are valid; the rest are refused by Parse, which
// fuzzing also wants. choose(n) returns a number in [0, n); the same answers give the same
// file.
func Generate(choose func(n int) int) []byte {
	g := &generator{choose: choose, model: "m0", zones: []string{"za", "zb", "zc"}}
	g.must = map[string]bool{"workload": true, "workload.model": true}
	for i := range 1 + choose(3) {
		g.tools = append(g.tools, "t"+strconv.Itoa(i))
	}
	root := g.mapping(rootSchema, "")
	b, err := yaml.Marshal(root)
	if err != nil { // a tree of plain scalars always encodes
		panic("scenarios: Generate: " + err.Error())
	}
	return b
}

type generator struct {
	choose func(n int) int
	tools  []string
	zones  []string // the zones workload.zones may declare and a zone_crash may name
	model  string
	faults int // drawn so far, for unique ids
	// must: keys always written, so that the keys that name them (prices.models) are valid
	must map[string]bool
}

// one in n chances.
func (g *generator) one(n int) bool { return g.choose(n) == 0 }

func scalar(tag, v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v} }

func str(v string) *yaml.Node { return scalar("!!str", v) }

// value draws a value for the schema s at path, or nil to leave the key out.
func (g *generator) value(s *schema, path string) *yaml.Node {
	if s == faultSchema {
		return g.fault()
	}
	if s.noGen {
		return nil
	}
	switch s.kind {
	case kindMap:
		if s.elem != nil {
			return g.dict(s, path)
		}
		if len(s.keys) == 0 || s.noSet {
			return nil // the sweep grid is a command's business, not a run's
		}
		return g.mapping(s, path)
	case kindList:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		if s.elem.kind == kindEnum {
			// A list of words: distinct ones, at least one (hold_worker).
			for _, w := range g.subset(s.elem.enum) {
				n.Content = append(n.Content, str(w))
			}
			return n
		}
		for range g.choose(4) {
			if v := g.value(s.elem, path+"[]"); v != nil {
				n.Content = append(n.Content, v)
			}
		}
		return n
	case kindText:
		return g.word(s, path)
	case kindInt:
		return scalar("!!int", strconv.FormatInt(g.integer(s.min, s.max), 10))
	case kindNumber, kindCompute:
		if s.kind == kindCompute && g.one(3) {
			return str(g.duration(false))
		}
		return g.number(s)
	case kindProb:
		if s.above {
			return scalar("!!float", strconv.FormatFloat(float64(1+g.choose(20))/20, 'g', -1, 64))
		}
		return g.prob()
	case kindBool:
		return scalar("!!bool", strconv.FormatBool(g.one(2)))
	case kindDuration:
		return str(g.duration(s.above))
	case kindRate:
		return str(strconv.Itoa(1+g.choose(100)) + "/" + []string{"s", "m", "h", "24h"}[g.choose(4)])
	case kindEnum:
		return str(s.enum[g.choose(len(s.enum))])
	case kindCheck:
		return str([]string{">= 0", "<= 1", "== 0", "between 0 and 1", ">= 0.5", "< 1e9"}[g.choose(6)])
	case kindDurDist, kindCountDist:
		return g.dist(s, s.kind == kindDurDist)
	case kindActionOrMap:
		if g.one(2) {
			return str(s.enum[g.choose(len(s.enum))])
		}
		return g.mapping(s, path)
	case kindProbByClass, kindDurDistByClass:
		if g.one(2) {
			return g.value(s.sub["default"], path)
		}
		return g.mapping(s, path)
	}
	return nil // a leaf the tree does not describe
}

// mapping draws each fixed key of s with probability 3/4: every needed key, exactly one key
// of a one-of mapping (a flag there is true). A mapping whose kind is an enum draws it
// first; its first option (the default, such as a rules supervisor) takes no other key.
func (g *generator) mapping(s *schema, path string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	pick := -1
	if s.one {
		pick = g.choose(len(s.keys))
	}
	bare := false
	if k := s.sub["kind"]; k != nil && k.kind == kindEnum && s != faultSchema {
		v := k.enum[g.choose(len(k.enum))]
		n.Content = append(n.Content, str("kind"), str(v))
		bare = v == k.enum[0]
	}
	for i, k := range s.keys {
		sub := s.sub[k]
		switch {
		case k == "kind" && len(n.Content) > 0, bare:
			continue
		case s.one && i != pick, !s.one && !sub.need && !g.must[join(path, k)] && g.one(4):
			continue
		case s.one && sub.kind == kindBool:
			n.Content = append(n.Content, str(k), scalar("!!bool", "true"))
			continue
		}
		if v := g.value(sub, join(path, k)); v != nil {
			n.Content = append(n.Content, str(k), v)
		}
	}
	return n
}

// dict draws a map with free keys, named after what they name.
func (g *generator) dict(s *schema, path string) *yaml.Node {
	var keys []string
	switch {
	case s.named: // the tools themselves
		keys = g.tools
	case s.entity == "tool":
		keys = g.subset(g.tools)
	case s.entity == "model":
		keys = []string{g.model}
	case s.entity == "zone":
		// Equal shares, which sum to 1 as the zones must.
		keys = g.subset(g.zones)
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range keys {
			n.Content = append(n.Content, str(k), scalar("!!float", strconv.FormatFloat(1/float64(len(keys)), 'g', -1, 64)))
		}
		return n
	case len(s.keyEnum) > 0:
		keys = g.subset(s.keyEnum[:min(len(s.keyEnum), 3+g.choose(len(s.keyEnum)))])
	default:
		keys = g.subset([]string{"strategy", "api_key", "region", "db_password", "note"})
	}
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range keys {
		if v := g.value(s.elem, join(path, k)); v != nil {
			n.Content = append(n.Content, str(k), v)
		}
	}
	return n
}

// subset keeps each name with probability 1/2, and at least one.
func (g *generator) subset(names []string) []string {
	var out []string
	for _, n := range names {
		if g.one(2) {
			out = append(out, n)
		}
	}
	if len(out) == 0 && len(names) > 0 {
		out = append(out, names[g.choose(len(names))])
	}
	return out
}

// fault draws a fault: a kind, then the keys its rule takes (every required one).
func (g *generator) fault() *yaml.Node {
	r := faultTable[g.choose(len(faultTable))]
	n := &yaml.Node{Kind: yaml.MappingNode}
	g.faults++
	for _, k := range r.allowed() {
		if k == "id" && g.one(2) {
			n.Content = append(n.Content, str(k), str("f"+strconv.Itoa(g.faults)))
		}
		if k == "id" || k == "kind" {
			continue
		}
		if !contains(r.Required, k) && g.one(2) {
			continue
		}
		if v := g.value(r.keySchema(k), "faults[]."+k); v != nil {
			n.Content = append(n.Content, str(k), v)
		}
	}
	n.Content = append([]*yaml.Node{str("kind"), str(string(r.Kind))}, n.Content...)
	return n
}

// word draws text: a tool name for a reference to a tool, the model's name, a short word,
// now and then a secret-looking one.
func (g *generator) word(s *schema, path string) *yaml.Node {
	switch {
	case path == "name":
		return str("fuzz")
	case path == "workload.model":
		return str(g.model)
	case path == "faults[].zone":
		return str(g.zones[g.choose(len(g.zones))])
	case path == "faults[].tool":
		if g.one(4) {
			return str(ModelTool)
		}
		return str(g.tools[g.choose(len(g.tools))])
	case s.pattern != "":
		return str("x0")
	}
	return str([]string{"v1", "momentum", "sk-fuzz-0123456789abcdef", "USD", "a: b"}[g.choose(5)])
}

// integer draws a whole number in [lo, hi] (hi 0: no bound): mostly small, now and then the
// bound itself.
func (g *generator) integer(lo, hi float64) int64 {
	top := hi
	if top <= 0 {
		top = 1 << 40
	}
	switch g.choose(8) {
	case 0:
		return int64(top)
	case 1:
		return int64(min(top, lo+float64(g.choose(1000))))
	}
	return int64(min(top, lo+float64(g.choose(8))))
}

func (g *generator) number(s *schema) *yaml.Node {
	lo := s.min
	if s.signed {
		lo = -1
	}
	x := lo + float64(g.choose(1000))/100
	switch {
	case g.one(32):
		x = lo + 1e6
	case s.above && x <= lo:
		x = lo + 0.5
	}
	return scalar("!!float", strconv.FormatFloat(x, 'g', -1, 64))
}

func (g *generator) prob() *yaml.Node {
	return scalar("!!float", strconv.FormatFloat(float64(g.choose(21))/20, 'g', -1, 64))
}

// duration draws a duration: 0 (unless positive), or 1 to 100 of a unit from ns to hours.
func (g *generator) duration(positive bool) string {
	if !positive && g.one(6) {
		return "0"
	}
	return strconv.Itoa(1+g.choose(100)) + []string{"ns", "ms", "s", "m", "h"}[g.choose(5)]
}

// dist draws a distribution: a single value, or a family with its parameters in ascending
// order (which every family's rules accept); extra keys (growth) as any mapping's.
func (g *generator) dist(s *schema, durations bool) *yaml.Node {
	param := func(x int) *yaml.Node {
		if durations {
			return str(strconv.Itoa(x) + "ms")
		}
		return scalar("!!int", strconv.Itoa(x))
	}
	lo := 1 + g.choose(20)
	if g.one(3) {
		return param(lo)
	}
	f := distFamilies[g.choose(len(distFamilies))]
	n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("dist"), str(string(f.kind))}}
	x := lo
	for _, p := range f.params {
		v := param(x)
		if p == "alpha" {
			v = scalar("!!float", strconv.FormatFloat(1.1+float64(g.choose(30))/10, 'g', -1, 64))
		}
		n.Content = append(n.Content, str(p), v)
		x += 1 + g.choose(20)
	}
	for _, k := range s.keys {
		if distSchema.sub[k] == nil && k != "dist" && g.one(2) {
			if v := g.value(s.sub[k], k); v != nil {
				n.Content = append(n.Content, str(k), v)
			}
		}
	}
	return n
}
