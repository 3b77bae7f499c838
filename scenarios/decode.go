package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mayday-sim/mayday/secret"
	"go.yaml.in/yaml/v3"
)

// The decoder walks a yaml.Node tree with the schema in hand. Every check records an *Error
// with the node's line and the dotted key, and decoding goes on, so one pass reports every
// problem of a file. A value that fails its check leaves the default in place.

type decoder struct {
	file   string
	errs   ErrorList
	origin map[*yaml.Node]string // nodes an override put there → "--set path=value"
	// badTimeout names tools whose timeout was refused, so the rule "lost_response needs a
	// timeout" does not report them a second time.
	badTimeout map[string]bool
}

func newDecoder(file string) *decoder {
	return &decoder{file: file, origin: map[*yaml.Node]string{}, badTimeout: map[string]bool{}}
}

func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	e := &Error{File: d.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil && n.Kind == yaml.ScalarNode && n.Value != "" && secretPath(key) {
		e.Msg = strings.ReplaceAll(e.Msg, strconv.Quote(n.Value), secret.Masked) // never echo a secret
	}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
		e.Override = d.origin[n]
	}
	d.errs = append(d.errs, e)
}

// suggest records the nearest valid word on the problem just reported.
func (d *decoder) suggest(word string) { d.errs[len(d.errs)-1].Suggestion = word }

// deref follows aliases to the anchored node; a chain that does not end is treated as absent.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i == 64 {
			return nil
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names a node for a message: its text for a scalar, else its shape.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "nothing"
}

// join is the path of key inside path; a key that is not a plain word is quoted (PathKey).
func join(path, key string) string {
	if path == "" {
		return PathKey(key)
	}
	return path + "." + PathKey(key)
}

// fields is one mapping of the file, checked against its schema: duplicate and unknown keys
// are reported when it is built, values are read by key.
type fields struct {
	d     *decoder
	path  string
	node  *yaml.Node // the mapping; nil when absent, null or not a mapping
	vals  map[string]*yaml.Node
	keys  map[string]*yaml.Node
	order []string // keys in file order
	// paths says the keys are paths themselves (sweep, tune.vary): a key's own path is
	// the mapping's and the key, unquoted, as the file writes it.
	paths bool
}

// fields reads the mapping n at path. sch lists the valid keys (nil: any key); want says
// what the mapping should look like, for the message when n is not a mapping.
func (d *decoder) fields(path string, n *yaml.Node, sch *schema, want string) *fields {
	f := &fields{d: d, path: path, vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	n = deref(n)
	if isNull(n) {
		return f
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "%s is not a mapping; want %s", describe(n), want)
		return f
	}
	f.node = n
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			d.fail(kn, path, "a key is %s; want a plain word", describe(kn))
			continue
		}
		k := kn.Value
		kp := join(path, k)
		if k == "<<" {
			d.fail(kn, path+".<<", "merge keys (<<) are not supported; write the keys out")
			continue
		}
		if first, dup := f.keys[k]; dup {
			d.fail(kn, kp, "duplicate key; it is first given at line %d", first.Line)
			continue
		}
		if sch != nil && sch.sub != nil && sch.sub[k] == nil {
			hint := didYouMean(k, sch.keys)
			d.fail(kn, kp, "unknown key %q%s; want one of %s", k, hint, strings.Join(sch.keys, ", "))
			d.suggest(closest(k, sch.keys))
			continue
		}
		f.keys[k], f.vals[k] = kn, vn
		f.order = append(f.order, k)
	}
	return f
}

// get returns the value of key k, or nil when it is absent or null (`key:` with nothing).
func (f *fields) get(k string) *yaml.Node {
	n := deref(f.vals[k])
	if isNull(n) {
		return nil
	}
	return n
}

func (f *fields) key(k string) string {
	if f.paths {
		return f.path + "." + k
	}
	return join(f.path, k)
}

// at is the node to blame for a problem with the mapping as a whole.
func (f *fields) at() *yaml.Node { return f.node }

// scalar checks that n is a single value.
func (d *decoder) scalar(n *yaml.Node, key, want string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, key, "%s is not a single value; want %s", describe(n), want)
		return false
	}
	return true
}

// text reads any single value as text (`version: 3.2` is the text "3.2").
func (d *decoder) text(n *yaml.Node, key, want string) (string, bool) {
	if !d.scalar(n, key, want) {
		return "", false
	}
	return n.Value, true
}

func isNumberTag(n *yaml.Node) bool {
	t := n.ShortTag()
	return t == "!!int" || t == "!!float"
}

// notNumber reports a scalar that should have been a number; a quoted number gets a hint.
func (d *decoder) notNumber(n *yaml.Node, key, want string) {
	if _, err := strconv.ParseFloat(n.Value, 64); err == nil && n.ShortTag() == "!!str" {
		d.fail(n, key, "%s is quoted text; want %s, without quotes", describe(n), want)
		return
	}
	d.fail(n, key, "%s is not a number; want %s", describe(n), want)
}

// integer reads a whole number no smaller than the key tree's least value for key.
func (d *decoder) integer(n *yaml.Node, key string, want string) (int64, bool) {
	min, _ := bounds(key)
	return d.integerFrom(n, key, min, want)
}

// integerFrom reads a whole number >= min.
func (d *decoder) integerFrom(n *yaml.Node, key string, min int64, want string) (int64, bool) {
	if !d.scalar(n, key, want) {
		return 0, false
	}
	var v int64
	switch n.ShortTag() {
	case "!!int":
		if err := n.Decode(&v); err != nil {
			d.fail(n, key, "%s is out of range; want %s", describe(n), want)
			return 0, false
		}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			d.fail(n, key, "%s is not a whole number; want %s", describe(n), want)
			return 0, false
		}
		v = int64(f)
	default:
		d.notNumber(n, key, want)
		return 0, false
	}
	if v < min {
		d.fail(n, key, "%d is too small; want %s", v, want)
		return 0, false
	}
	return v, true
}

// number reads a finite number.
func (d *decoder) number(n *yaml.Node, key, want string) (float64, bool) {
	if !d.scalar(n, key, want) {
		return 0, false
	}
	if !isNumberTag(n) {
		d.notNumber(n, key, want)
		return 0, false
	}
	var f float64
	if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.fail(n, key, "%s is not a finite number; want %s", describe(n), want)
		return 0, false
	}
	return f, true
}

// atLeast reads a number >= min (strictly above when strict).
// numberAt reads a number no smaller than (or, where the tree says so, above) the key
// tree's least value for key.
func (d *decoder) numberAt(n *yaml.Node, key, want string) (float64, bool) {
	sch := ruleAt(key)
	return d.atLeast(n, key, sch.min, sch.above, want)
}

func (d *decoder) atLeast(n *yaml.Node, key string, min float64, strict bool, want string) (float64, bool) {
	f, ok := d.number(n, key, want)
	if !ok {
		return 0, false
	}
	if f < min || strict && f == min {
		what := "too small"
		if f < 0 {
			what = "negative"
		}
		d.fail(n, key, "%s is %s; want %s", n.Value, what, want)
		return 0, false
	}
	return f, true
}

// prob reads a probability.
func (d *decoder) prob(n *yaml.Node, key string) (float64, bool) {
	const want = "a probability: a number in [0, 1]"
	f, ok := d.number(n, key, want)
	if !ok {
		return 0, false
	}
	if f < 0 || f > 1 {
		d.fail(n, key, "%s is not a probability; want a number in [0, 1]", n.Value)
		return 0, false
	}
	return f, true
}

const durationSyntax = "Go syntax plus d, such as 90s, 2h30m, 3d"

// duration reads a duration >= 0 (> 0 when positive). A bare 0 is accepted; any other bare
// number is refused, since its unit would be a guess.
// duration reads a duration at a key of the key tree, > 0 where the tree says so.
func (d *decoder) duration(n *yaml.Node, key string) (time.Duration, bool) {
	return d.durationAtLeast(n, key, ruleAt(key).above)
}

// durationAtLeast reads a duration >= 0, or > 0 when positive.
func (d *decoder) durationAtLeast(n *yaml.Node, key string, positive bool) (time.Duration, bool) {
	want := "a duration >= 0, such as 30s"
	if positive {
		want = "a duration > 0, such as 30s"
	}
	if !d.scalar(n, key, want) {
		return 0, false
	}
	if isNumberTag(n) {
		var f float64
		err := n.Decode(&f)
		switch {
		case err == nil && f == 0 && !positive:
			return 0, true
		case err == nil && f == 0:
			d.fail(n, key, "%s is zero; want %s", n.Value, want)
		case err == nil && f < 0:
			d.fail(n, key, "%s is a negative duration; want %s", n.Value, want)
		default:
			d.fail(n, key, "%s has no unit; want %s", n.Value, want)
		}
		return 0, false
	}
	v, err := parseDuration(n.Value)
	switch err {
	case nil:
	case errNegative:
		d.fail(n, key, "%s is a negative duration; want %s", describe(n), want)
		return 0, false
	case errRange:
		d.fail(n, key, "%s is out of range; want %s of at most about 290 years", describe(n), want)
		return 0, false
	default:
		d.fail(n, key, "%s is not a duration; want %s", describe(n), durationSyntax)
		return 0, false
	}
	if positive && v == 0 {
		d.fail(n, key, "%s is zero; want %s", describe(n), want)
		return 0, false
	}
	return v, true
}

// rate reads `N/unit` (> 0 when positive).
func (d *decoder) rate(n *yaml.Node, key string, positive bool) (Rate, bool) {
	const want = "N/unit such as 50/m, 100/h, 1/24h"
	if !d.scalar(n, key, want) {
		return Rate{}, false
	}
	r, err := parseRate(n.Value)
	if err != nil {
		d.fail(n, key, "%s is not a rate; want %s", describe(n), want)
		return Rate{}, false
	}
	if positive && r.PerSecond == 0 {
		d.fail(n, key, "%s is zero; want a rate > 0 such as 50/m", describe(n))
		return Rate{}, false
	}
	return r, true
}

func (d *decoder) boolean(n *yaml.Node, key string) (bool, bool) {
	const want = "true or false"
	if !d.scalar(n, key, want) {
		return false, false
	}
	if n.ShortTag() != "!!bool" {
		d.fail(n, key, "%s is not a boolean; want %s", describe(n), want)
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.fail(n, key, "%s is not a boolean; want %s", describe(n), want)
		return false, false
	}
	return b, true
}

// enum reads one of options; what names the kind of value for the message.
func (d *decoder) enum(n *yaml.Node, key, what string, options []string) (string, bool) {
	want := orList(options)
	if !d.scalar(n, key, want) {
		return "", false
	}
	for _, o := range options {
		if n.Value == o {
			return o, true
		}
	}
	hint := didYouMean(n.Value, options)
	d.fail(n, key, "%s is not %s%s; want %s", describe(n), what, hint, want)
	d.suggest(closest(n.Value, options))
	return "", false
}

var (
	scenarioName = regexp.MustCompile(`^[a-z0-9-]+$`)
	entityName   = regexp.MustCompile(`^[a-z0-9_-]+$`)
)

// unit says whether a distribution's parameters are durations or plain numbers.
type unit uint8

const (
	countUnit unit = iota
	durationUnit
)

func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// dist reads a distribution. A single value is shorthand for {dist: constant, value: X}.
func (d *decoder) dist(n *yaml.Node, key string, u unit) (Dist, bool) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		v, ok := d.distParam(n, key, u, false)
		return Dist{Kind: DistConstant, Value: v}, ok
	}
	f := d.fields(key, n, distSchema, "a distribution such as {dist: exponential, mean: 30s}")
	if f.node == nil {
		return Dist{}, false
	}
	dn := f.get("dist")
	if dn == nil {
		d.fail(f.at(), key, "missing dist; want dist: %s", orList(distKinds))
		return Dist{}, false
	}
	k, ok := d.enum(dn, f.key("dist"), "a distribution", distKinds)
	if !ok {
		return Dist{}, false
	}
	kind := DistKind(k)
	params := distParams(kind)
	for _, p := range f.order {
		if p != "dist" && !contains(params, p) {
			d.fail(f.keys[p], f.key(p), "%s takes %s, not %s", kind, andList(params), p)
			ok = false
		}
	}
	var missing []string
	for _, p := range params {
		if f.get(p) == nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		d.fail(f.at(), key, "%s needs %s; missing %s", kind, andList(params), andList(missing))
		return Dist{}, false
	}
	if !ok {
		return Dist{}, false
	}
	vals := make([]float64, len(params))
	for i, p := range params {
		v, good := d.distParam(f.get(p), f.key(p), u, p == "alpha")
		if !good {
			return Dist{}, false
		}
		vals[i] = v
	}
	out := Dist{Kind: kind}
	for i, p := range params {
		out.set(p, vals[i])
	}
	if broken := out.problems(); len(broken) > 0 {
		r := broken[0]
		d.fail(f.get(r.param), f.key(r.param), "%s", r.fileMsg(func(p string) string { return f.get(p).Value }))
		return Dist{}, false
	}
	return out, true
}

// distParam reads one parameter: a duration in nanoseconds for duration fields, else a
// number >= 0 (alpha is always a plain number).
func (d *decoder) distParam(n *yaml.Node, key string, u unit, plain bool) (float64, bool) {
	if u == durationUnit && !plain {
		v, ok := d.durationAtLeast(n, key, false)
		return float64(v), ok
	}
	return d.atLeast(n, key, 0, false, "a number >= 0")
}

// countDist reads a count distribution whose draws are rounded and must be at least min; a
// constant below min could never be drawn, so it is refused here.
func (d *decoder) countDist(n *yaml.Node, key string, min float64) (Dist, bool) {
	v, ok := d.dist(n, key, countUnit)
	if ok && v.Kind == DistConstant && v.Value < min {
		d.fail(n, key, "constant %s is below %s; want a value >= %s", fmtNumber(v.Value), fmtNumber(min), fmtNumber(min))
		return Dist{}, false
	}
	return v, ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
