package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Overrides (`--set path=value`) and sweep points change the parsed YAML tree before it is
// decoded, so an overridden value meets exactly the checks a value in the file meets.

// Where an override came from, for messages.
const (
	FromSet   = "--set"
	FromSweep = "sweep"
)

// Override sets the value at Path, a path into the file such as recovery.retry.max_attempts,
// faults[2].for, tools.backtest.concurrency or workload.arrival.poisson. Value is YAML text:
// `5`, `30m`, `{dist: constant, value: 1s}`; an empty Value is null, which switches an
// optional block off. A path may name a key the file omits (it is added) but not a tool or
// list item that does not exist.
type Override struct {
	Path  string `json:"path"`
	Value string `json:"value"`
	From  string `json:"-"` // FromSet (also when empty) or FromSweep
}

// String is `path=value`.
func (o Override) String() string { return o.Path + "=" + o.Value }

func (o Override) label() string {
	from := o.From
	if from == "" {
		from = FromSet
	}
	return from + " " + o.String()
}

// ParseSet parses one `--set` argument, `path=value`.
func ParseSet(s string) (Override, error) {
	path, value, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		e := &Error{Override: FromSet + " " + s, Msg: "want path=value, such as recovery.retry.max_attempts=5"}
		e.scrub()
		return Override{}, e
	}
	if _, ok := parsePath(path); !ok {
		e := &Error{Override: FromSet + " " + s, Key: path, Msg: badPath(path)}
		e.scrub()
		return Override{}, e
	}
	return Override{Path: path, Value: value, From: FromSet}, nil
}

// ParseSets parses `--set` arguments; the error, when not nil, is an ErrorList naming file.
func ParseSets(file string, sets []string) ([]Override, error) {
	var out []Override
	var errs ErrorList
	for _, s := range sets {
		o, err := ParseSet(s)
		if err != nil {
			e := err.(*Error)
			e.File = file
			errs = append(errs, e)
			continue
		}
		out = append(out, o)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Expand lists the points of a sweep grid: the cartesian product of the axes in their order,
// the last axis varying fastest. Each point is one override per axis. No axes, or an axis
// without values, is no points.
func Expand(axes []SweepAxis) [][]Override {
	if len(axes) == 0 {
		return nil
	}
	for _, a := range axes {
		if len(a.Values) == 0 {
			return nil
		}
	}
	var points [][]Override
	idx := make([]int, len(axes))
	for {
		p := make([]Override, len(axes))
		for a, axis := range axes {
			p[a] = Override{Path: axis.Path, Value: axis.Values[idx[a]], From: FromSweep}
		}
		points = append(points, p)
		a := len(axes) - 1
		for ; a >= 0; a-- {
			idx[a]++
			if idx[a] < len(axes[a].Values) {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return points
		}
	}
}

// Points is Expand(s.Sweep).
func (s *Scenario) Points() [][]Override { return Expand(s.Sweep) }

// With re-parses the scenario's source with its own overrides followed by ovs, e.g. one
// point of Points(). The result is checked like any scenario.
func (s *Scenario) With(ovs ...Override) (*Scenario, error) {
	if s.Source.Data == nil {
		return nil, &Error{File: s.Source.File, Msg: "the scenario has no source text to apply overrides to; load it with Load or Parse"}
	}
	all := append(append([]Override(nil), s.Source.Overrides...), ovs...)
	out, err := ParseOverrides(s.Source.File, s.Source.Data, all)
	if err != nil {
		return nil, err
	}
	out.Source.Embedded = s.Source.Embedded
	return out, nil
}

type pathSeg struct {
	key string
	idx []int
}

func badPath(p string) string {
	return fmt.Sprintf("%q is not a path; want keys separated by dots, with [N] for list items and a key that is not a plain word in double quotes, such as recovery.retry.max_attempts, faults[2].for or tools.\"mcp.github.create_issue\".timeout", p)
}

// parsePath splits `faults[2].for` into {faults [2]} {for}, and `tools."a.b".timeout` into
// {tools} {a.b} {timeout}.
func parsePath(p string) ([]pathSeg, bool) { return splitPath(p) }

// parseValue reads the YAML text of an override value; empty text is null.
func parseValue(text string) (n *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("the parser failed (%v)", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
	}
	return doc.Content[0], nil
}

// mark records every node of an override's value as coming from it, so errors about them
// name the override; a --set value has no place in the file, so its lines are cleared.
func (d *decoder) mark(n *yaml.Node, label string, clearLines bool, depth int) {
	if n == nil || depth > 64 || d.origin[n] != "" {
		return
	}
	d.origin[n] = label
	if clearLines {
		n.Line, n.Column = 0, 0
	}
	for _, c := range n.Content {
		d.mark(c, label, clearLines, depth+1)
	}
}

// cow copies a mapping or list node and its list of children, so changing a child slot does
// not change the file's tree elsewhere (an anchor shared by several aliases).
func cow(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = append([]*yaml.Node(nil), n.Content...)
	return &c
}

// apply sets the value at o.Path in the tree rooted at *root. value is the value node when
// the caller has one (a sweep value from the file), else o.Value is parsed.
func (d *decoder) apply(root **yaml.Node, o Override, value *yaml.Node) *Error {
	label := o.label()
	fail := func(key, format string, args ...any) *Error {
		return &Error{File: d.file, Key: key, Msg: fmt.Sprintf(format, args...), Override: label}
	}
	segs, ok := parsePath(o.Path)
	if !ok {
		return fail("", "%s", badPath(o.Path))
	}
	if value == nil {
		v, err := parseValue(o.Value)
		if err != nil {
			return fail(o.Path, "the value %q is not valid YAML: %v", o.Value, err)
		}
		value = v
		d.mark(value, label, true, 0)
	} else {
		d.mark(value, label, false, 0)
	}
	line, col := value.Line, value.Column
	added := func(n *yaml.Node) *yaml.Node {
		n.Line, n.Column = line, col
		d.origin[n] = label
		return n
	}

	slot := root
	sch := rootSchema
	walked := ""
	for _, sg := range segs {
		at := join(walked, sg.key)
		if sch.seq {
			return fail(walked, "%s is a list; name an item, such as %s[0].%s", walked, walked, sg.key)
		}
		var next *schema
		switch {
		case sch.sub != nil:
			next = sch.sub[sg.key]
			if next == nil {
				hint := didYouMean(sg.key, sch.keys)
				e := fail(at, "unknown key %q%s; want one of %s", sg.key, hint, strings.Join(sch.keys, ", "))
				e.Suggestion = closest(sg.key, sch.keys)
				return e
			}
		case sch.elem != nil:
			next = sch.elem
		default:
			return fail(at, "%s is a single value; it has no key %q", walked, sg.key)
		}
		if next.noSet {
			return fail(at, "%s cannot be overridden", at)
		}
		cur := deref(*slot)
		switch {
		case isNull(cur):
			cur = added(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"})
		case cur.Kind != yaml.MappingNode:
			return fail(walked, "%s is %s in the file, not a mapping; set %s itself instead", walked, describe(cur), walked)
		default:
			cur = cow(cur)
		}
		*slot = cur
		idx := -1
		var existing []string
		for i := 0; i+1 < len(cur.Content); i += 2 {
			k := cur.Content[i].Value
			existing = append(existing, k)
			if k == sg.key && idx < 0 {
				idx = i
			}
		}
		if idx < 0 {
			if sch.named {
				return noNamed(fail, sch, sg.key, at, walked, existing)
			}
			cur.Content = append(cur.Content,
				added(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sg.key}),
				added(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}))
			idx = len(cur.Content) - 2
		}
		slot = &cur.Content[idx+1]
		walked = at
		var e *Error
		if slot, walked, next, e = walkItems(slot, walked, next, sg.idx, fail); e != nil {
			return e
		}
		sch = next
	}
	*slot = value
	return nil
}

// noNamed is the error for a path naming a tool (or other named entry) the file does not
// define: the names it does, as a path writes them, and a hint when the name held dots the
// path split.
func noNamed(fail func(key, format string, args ...any) *Error, sch *schema, key, at, walked string, existing []string) *Error {
	if len(existing) == 0 {
		return fail(at, "no %s %q: %s defines none", sch.entity, key, walked)
	}
	hint := didYouMean(key, existing)
	for _, k := range existing {
		if strings.HasPrefix(k, key+".") && !plainKey(k) {
			// The name holds dots: the path split it.
			hint = fmt.Sprintf(" (a name with dots is written in double quotes: %s)", join(walked, k))
			break
		}
	}
	spelt := make([]string, len(existing))
	for i, k := range existing {
		spelt[i] = PathKey(k) // as a path writes them
	}
	e := fail(at, "no %s %q in the file%s; want one of %s", sch.entity, key, hint, strings.Join(spelt, ", "))
	e.Suggestion = closest(key, existing)
	return e
}

// checkSweep decodes the scenario once per sweep value, with that value alone, and reports
// what is wrong, at the value's line in the sweep block.
func (d *decoder) checkSweep(root *yaml.Node, axes []SweepAxis, srcs []valueSource) {
	d.checkInPlace(root, FromSweep, srcs, func(a int) string { return axes[a].Path },
		func(a, i int) string { return axes[a].Values[i] })
}

// checkInPlace decodes the scenario once per value of each source, with that value alone
// set at path(a) (text(a, i) is the value as override text, from says which block it comes
// from), and reports what is wrong at the value's line. root is the file's tree with the
// other overrides applied; apply copies what it changes, so root serves every value.
func (d *decoder) checkInPlace(root *yaml.Node, from string, srcs []valueSource, path func(a int) string, text func(a, i int) string) {
	// Problems of the file itself are reported once, without a sweep or tune label.
	type place struct {
		line, col int
		key, msg  string
	}
	known := map[place]bool{}
	for _, e := range d.errs {
		known[place{e.Line, e.Column, e.Key, e.Msg}] = true
	}
	for a, src := range srcs {
		for i, vn := range src.vals {
			o := Override{Path: path(a), Value: text(a, i), From: from}
			sub := newDecoder(d.file)
			for n, label := range d.origin {
				sub.origin[n] = label
			}
			point := root
			if e := sub.apply(&point, o, vn); e != nil {
				// A wrong path is wrong for every value: report it once, at the source's key.
				e.Line, e.Column, e.Override = src.key.Line, src.key.Column, from
				d.errs = append(d.errs, e)
				break
			}
			sub.scenario(point)
			for _, e := range sub.errs {
				if known[place{e.Line, e.Column, e.Key, e.Msg}] {
					continue
				}
				if e.Override == "" {
					e.Override = o.label()
				}
				d.errs = append(d.errs, e)
			}
		}
	}
}

// valueText is a sweep value as override text: the scalar as written when it reads back the
// same, else a quoted or flow-style form.
func valueText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		if v, err := parseValue(n.Value); err == nil && v.Kind == yaml.ScalarNode && v.ShortTag() == n.ShortTag() && v.Value == n.Value {
			return n.Value
		}
	}
	var b strings.Builder
	flowText(&b, n, 0)
	return b.String()
}

func flowText(b *strings.Builder, n *yaml.Node, depth int) {
	n = deref(n)
	// Aliases can make a small tree print exponentially large; no sane value is that big.
	if b.Len() > 1<<16 {
		return
	}
	if n == nil || depth > 32 {
		b.WriteString("null")
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			flowText(b, n.Content[i], depth+1)
			b.WriteString(": ")
			flowText(b, n.Content[i+1], depth+1)
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			flowText(b, c, depth+1)
		}
		b.WriteByte(']')
	default:
		if n.ShortTag() == "!!str" {
			// Go's quoting escapes are a subset of YAML's double-quoted escapes.
			b.WriteString(strconv.Quote(n.Value))
		} else {
			b.WriteString(n.Value)
		}
	}
}

// walkItems follows the [i] indexes of one path segment from slot, copying each list it
// enters so the file's own tree is left as parsed.
func walkItems(slot **yaml.Node, walked string, next *schema, idx []int, fail func(key, format string, args ...any) *Error) (**yaml.Node, string, *schema, *Error) {
	for _, i := range idx {
		item := fmt.Sprintf("%s[%d]", walked, i)
		if !next.seq {
			return nil, "", nil, fail(item, "%s is not a list; it has no item [%d]", walked, i)
		}
		c := deref(*slot)
		count := 0
		if c != nil && c.Kind == yaml.SequenceNode {
			count = len(c.Content)
		}
		if i >= count {
			switch count {
			case 0:
				return nil, "", nil, fail(item, "no such item: %s has no items in the file", walked)
			case 1:
				return nil, "", nil, fail(item, "no such item: %s has 1 item, %s[0]", walked, walked)
			}
			return nil, "", nil, fail(item, "no such item: %s has %d items, %s[0] to %s[%d]", walked, count, walked, walked, count-1)
		}
		c = cow(c)
		*slot = c
		slot = &c.Content[i]
		walked = item
		next = next.elem
	}
	return slot, walked, next, nil
}
