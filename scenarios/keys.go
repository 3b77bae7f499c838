package scenarios

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Declared keys. A key of the file format is declared once, on the Go field it sets, by
// struct tags:
//
//	Window time.Duration `json:"window" key:"window,>0" doc:"the window failures are counted over, > 0"`
//
//	key   the key's name, then its rules, comma-separated:
//	        >0          a number, probability or duration must be above its least value
//	        min=N max=N the least and largest value of a number (max 0 = none)
//	        default=V   the default, written as in a file (1m, 0.5, full, true)
//	        prob        a float64 is a probability in [0, 1]
//	        signed      a float64 may be any finite number
//	        compute     a float64 of compute-unit seconds: a number, or a duration
//	        enum=a|b|c  the words a string field accepts
//	        dur         a Dist whose values are durations (else counts)
//	        need        the key must be given whenever its mapping is
//	        too=W of=U  a whole number above max is "too W; want at most N U" (W: large)
//	        hand        the key is decoded by hand: its subtree is given to declare (a
//	                    block of declared keys, or a value with rules of its own), and
//	                    a value (not a block) is checked by hand too
//	        unset       the zero value is valid and stands for the default, which readers
//	                    apply; defaults never write it (so the scenario's JSON omits it)
//	doc   what the key means: the JSON Schema, docs/scenarios.md and messages read it
//	want  how a message names a valid value, where the generated phrase is not enough
//	zero  the message for a 0 that >0 refuses, where the generated one is not enough
//	shown the default as docs/scenarios.md shows it, where it is no single value
//	      ({at_once: true}, off when absent, required)
//
// The kind of value follows from the field's Go type: time.Duration, int, float64, bool,
// string (text, or an enum with enum=), Dist, Rate, a type with MarshalText and
// UnmarshalText whose values 0, 1, ... spell the enum's words (recovery.Jitter), a struct (a
// block of keys) or a pointer to one (a block that is off when absent). A struct type with
// a method Default() of its own type takes the defaults of its keys from it, so the engine's
// own configuration types (recovery.BreakerConfig) keep their defaults where the engine
// reads them; every other default is the tag's.
//
// Tags were chosen over a table of keys because the field is what a key sets: a tag cannot
// name a field that does not exist or drift from its type, and a type of another package
// (recovery, which imports nothing of mayday) can carry its keys without importing this
// one. From these declarations come the decoder's checks and messages (decodeBlock), the
// defaults (fillDefaults), Validate's checks (checkBlock), the key tree the JSON Schema and
// the overrides read, and the key tables of docs/scenarios.md (KeyTable).

// Keys is the declared key set of a struct type, for a part of the format defined outside
// this file, such as a fault kind's typed parameters:
//
//	type slowDrainParams struct {
//		Ramp time.Duration `key:"ramp,>0,default=1m" doc:"time the latency takes to reach its peak"`
//		Peak float64       `key:"peak,min=1,default=2" want:"a latency factor >= 1" doc:"the latency factor at the peak"`
//	}
//	var slowDrainKeys = scenarios.KeysOf[slowDrainParams]("slow_drain: latency ramping over a window")
//
// Names lists the keys in declaration order; Decode (in this package's decoder) fills a
// value from a YAML mapping with the file's messages; Defaults and Check are the default and
// validation steps of the same declarations.
type Keys struct {
	typ reflect.Type
	sch *schema
}

// KeysOf declares the keys of struct type T; it panics on a malformed tag (a programming
// error, found by any test that loads the package).
func KeysOf[T any](doc string) *Keys {
	t := reflect.TypeFor[T]()
	return &Keys{typ: t, sch: declare(t, doc)}
}

// Names lists the declared keys in declaration order.
func (k *Keys) Names() []string { return append([]string(nil), k.sch.keys...) }

// Example is a valid value of key name as a file writes it: its default, else a value
// within its bounds; "" for a name that is not one of the keys. Tests write entries with it
// (a fault of every kind, with its required parameters) without knowing the keys.
func (k *Keys) Example(name string) string {
	sch := k.sch.sub[name]
	if sch == nil {
		return ""
	}
	if d := sch.defaultText(); d != "" {
		return d
	}
	return sch.example()
}

// Defaults fills p (a *T) with every declared default.
func (k *Keys) Defaults(p any) { fillDefaults(k.sch, k.elem(p), true) }

// EnsureDefaults fills the fields of p (a *T) that are zero where zero is not a valid value
// with their defaults.
func (k *Keys) EnsureDefaults(p any) { fillDefaults(k.sch, k.elem(p), false) }

// Check validates p (a *T) against the declarations; key prefixes each problem's key
// (faults[2]). It returns nil or an ErrorList.
func (k *Keys) Check(p any, key string) error {
	v := &validator{}
	v.block(k.sch, k.elem(p), key)
	return v.errs.err()
}

// decodeKeys decodes the mapping n at key into p (a *T holding its defaults) by k's
// declarations, with the file's messages; it returns the keys whose value was refused. A
// part of the format with its own key set (a fault kind's parameters) decodes through it.
func (d *decoder) decodeKeys(key string, n *yaml.Node, k *Keys, p any) []string {
	_, bad := d.decodeBlock(key, n, k.sch, k.elem(p))
	return bad
}

func (k *Keys) elem(p any) reflect.Value {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Type() != k.typ {
		panic(fmt.Sprintf("scenarios: Keys of %s given a %T", k.typ, p))
	}
	return v.Elem()
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	distType     = reflect.TypeFor[Dist]()
	rateType     = reflect.TypeFor[Rate]()
	textType     = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// declare builds the key tree of struct type t. hand holds the subtrees of its keys tagged
// hand, as name, subtree pairs.
func declare(t reflect.Type, doc string, hand ...any) *schema {
	s := obj(doc)
	s.typ = t
	given := map[string]*schema{}
	for i := 0; i < len(hand); i += 2 {
		given[hand[i].(string)] = hand[i+1].(*schema)
	}
	var defv reflect.Value
	if m, ok := t.MethodByName("Default"); ok && m.Type.NumIn() == 1 && m.Type.NumOut() == 1 && m.Type.Out(0) == t {
		defv = reflect.Zero(t).Method(m.Index).Call(nil)[0]
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("key")
		if !ok || tag == "-" {
			continue
		}
		name, opts := parseTag(tag)
		var sub *schema
		if _, h := opts["hand"]; h {
			if sub = given[name]; sub == nil {
				panic(fmt.Sprintf("scenarios: %s.%s is decoded by hand but declare has no subtree for %s", t, f.Name, name))
			}
			delete(given, name)
			sub = withDoc(sub, sub.doc) // a copy: the field index is this type's
			sub.hand = true
			sub.ptr = sub.typ != nil && f.Type.Kind() == reflect.Pointer
			if w := f.Tag.Get("want"); w != "" {
				sub.want = w
			}
			if d, ok := opts["default"]; ok {
				sub.def = parseDefault(sub, f.Type, d, t.String()+"."+f.Name)
			}
		} else {
			sub = declareField(f, name, opts)
			if defv.IsValid() {
				sub.def = defv.Field(i)
			}
		}
		sub.field = i + 1
		if sh := f.Tag.Get("shown"); sh != "" {
			sub.shown = sh
		}
		s.keys = append(s.keys, name)
		s.sub[name] = sub
	}
	if len(given) > 0 {
		panic(fmt.Sprintf("scenarios: declare(%s) was given subtrees for keys it lacks: %v", t, given))
	}
	return s
}

// parseTag splits a key tag into the name and its options.
func parseTag(tag string) (string, map[string]string) {
	parts := strings.Split(tag, ",")
	opts := map[string]string{}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		opts[k] = v
	}
	return parts[0], opts
}

// declareField is the subtree of one tagged field.
func declareField(f reflect.StructField, name string, opts map[string]string) *schema {
	where := f.Name + " (" + name + ")"
	num := func(k string) float64 {
		v, ok := opts[k]
		if !ok {
			return 0
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			panic("scenarios: " + where + ": " + k + "=" + v + " is not a number")
		}
		return x
	}
	t := f.Type
	sch := &schema{doc: f.Tag.Get("doc"), want: f.Tag.Get("want"), zero: f.Tag.Get("zero"),
		min: num("min"), max: num("max"), too: opts["too"], of: opts["of"]}
	_, sch.above = opts[">0"]
	_, sch.need = opts["need"]
	_, sch.unset = opts["unset"]
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		sub := declare(t.Elem(), sch.doc)
		sub.ptr, sub.want, sub.need = true, sch.want, sch.need
		return sub
	}
	if t.Kind() == reflect.Struct && t != distType && t != rateType {
		sub := declare(t, sch.doc)
		sub.want = sch.want
		return sub
	}
	sch.kind = kindOf(t, opts)
	if sch.kind == kindAny {
		panic("scenarios: " + where + ": no kind of value for Go type " + t.String())
	}
	if sch.kind == kindDurDist || sch.kind == kindCountDist {
		base := countDist(sch.doc)
		if sch.kind == kindDurDist {
			base = durDist(sch.doc)
		}
		base.min, base.want = sch.min, sch.want
		sch = base
	}
	_, sch.signed = opts["signed"]
	if sch.kind == kindEnum && t.Kind() == reflect.String {
		sch.enum = strings.Split(opts["enum"], "|")
	} else if sch.kind == kindEnum {
		sch.enum, sch.enumType = enumWords(t), true
	}
	if d, ok := opts["default"]; ok {
		sch.def = parseDefault(sch, t, d, where)
	}
	return sch
}

// kindOf is the kind of value of a field of Go type t with the tag options opts; kindAny
// when the type has none.
func kindOf(t reflect.Type, opts map[string]string) valueKind {
	_, dur := opts["dur"]
	_, prob := opts["prob"]
	_, compute := opts["compute"]
	_, enum := opts["enum"]
	if t == durationType {
		return kindDuration
	}
	if t == distType && dur {
		return kindDurDist
	}
	if t == distType {
		return kindCountDist
	}
	if t == rateType {
		return kindRate
	}
	if reflect.PointerTo(t).Implements(textType) {
		return kindEnum
	}
	switch t.Kind() {
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Float64:
		if prob {
			return kindProb
		}
		if compute {
			return kindCompute
		}
		return kindNumber
	case reflect.String:
		if enum {
			return kindEnum
		}
		return kindText
	}
	return kindAny
}

// enumWords lists the spellings of the values 0, 1, ... of an enum type with MarshalText,
// up to the first value without one.
func enumWords(t reflect.Type) []string {
	var words []string
	for i := range 256 {
		v := reflect.New(t).Elem()
		v.SetUint(uint64(i))
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			break
		}
		words = append(words, string(b))
	}
	return words
}

// parseDefault reads a default written as in a file, with the decoder, so a default is
// held to the rule of its key.
func parseDefault(sch *schema, t reflect.Type, text, where string) reflect.Value {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil || len(n.Content) == 0 {
		panic("scenarios: " + where + ": default " + text + " is not YAML")
	}
	d := newDecoder("default")
	v := reflect.New(t).Elem()
	if !d.leaf(n.Content[0], where, sch, v) {
		panic("scenarios: " + where + ": default " + text + " breaks its own rule: " + d.errs.Error())
	}
	return v
}

// leaf decodes the value n of a declared key into dst; false (with the problem recorded)
// when it is not valid.
func (d *decoder) leaf(n *yaml.Node, key string, sch *schema, dst reflect.Value) bool {
	switch sch.kind {
	case kindInt:
		c, ok := d.integerFrom(n, key, int64(sch.min), sch.wantText())
		if ok && sch.max > 0 && c > int64(sch.max) {
			too, of := "large", ""
			if sch.too != "" {
				too = sch.too
			}
			if sch.of != "" {
				of = " " + sch.of
			}
			d.fail(n, key, "%d is too %s; want at most %d%s", c, too, int64(sch.max), of)
			return false
		}
		if ok {
			dst.SetInt(c)
		}
		return ok
	case kindNumber:
		var x float64
		var ok bool
		if sch.signed {
			x, ok = d.number(n, key, sch.wantText())
		} else {
			x, ok = d.atLeast(n, key, sch.min, sch.above, sch.wantText())
		}
		if ok && sch.max > 0 && x > sch.max {
			d.fail(n, key, "%v is too large; want at most %v", x, fmtNumber(sch.max))
			return false
		}
		if ok {
			dst.SetFloat(x)
		}
		return ok
	case kindProb, kindProbByClass: // a value given per class is read by hand; this is one
		p, ok := d.prob(n, key)
		if ok && sch.above && p == 0 {
			msg := sch.zero
			if msg == "" {
				msg = "0 is zero; want a number in (0, 1]"
			}
			d.fail(n, key, "%s", msg)
			return false
		}
		if ok {
			dst.SetFloat(p)
		}
		return ok
	case kindDuration:
		v, ok := d.durationAtLeast(n, key, sch.above)
		if ok {
			dst.SetInt(int64(v))
		}
		return ok
	case kindCompute:
		return d.compute(n, key, dst)
	case kindBool:
		b, ok := d.boolean(n, key)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case kindEnum:
		return d.enumInto(n, key, sch, dst)
	case kindText:
		s, ok := d.text(n, key, sch.wantText())
		if ok {
			dst.SetString(s)
		}
		return ok
	case kindRate:
		r, ok := d.rate(n, key, sch.above)
		if ok {
			dst.Set(reflect.ValueOf(r))
		}
		return ok
	case kindDurDist, kindCountDist, kindDurDistByClass:
		var v Dist
		var ok bool
		if sch.kind != kindCountDist {
			v, ok = d.dist(n, key, durationUnit)
		} else {
			v, ok = d.countDist(n, key, sch.min)
		}
		if ok {
			dst.Set(reflect.ValueOf(v))
		}
		return ok
	}
	panic("scenarios: " + key + " has no decoder for its kind")
}

// compute reads compute-unit seconds, written as a number or as a duration (10h = 36000).
func (d *decoder) compute(n *yaml.Node, key string, dst reflect.Value) bool {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && isNumberTag(n) {
		c, ok := d.atLeast(n, key, 0, false, "compute-unit seconds >= 0, as a number or a duration such as 10h")
		if ok {
			dst.SetFloat(c)
		}
		return ok
	}
	dur, ok := d.durationAtLeast(n, key, false)
	if ok {
		dst.SetFloat(dur.Seconds())
	}
	return ok
}

// enumInto reads one of the key's words into a string field or an enum type's field.
func (d *decoder) enumInto(n *yaml.Node, key string, sch *schema, dst reflect.Value) bool {
	what := sch.want
	if what == "" {
		what = "a valid word"
	}
	s, ok := d.enum(n, key, what, sch.enum)
	if !ok {
		return false
	}
	if dst.Kind() == reflect.String {
		dst.SetString(s)
		return true
	}
	if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
		panic("scenarios: " + key + ": the word " + s + " of its enum does not decode: " + err.Error())
	}
	return true
}

// example is a value within sch's bounds, as a file writes it (Keys.Example).
func (sch *schema) example() string {
	switch sch.kind {
	case kindInt:
		return strconv.FormatInt(int64(sch.min)+1, 10)
	case kindNumber:
		x := sch.min + 1
		if sch.max > 0 && x > sch.max {
			x = (sch.min + sch.max) / 2
		}
		return fmtNumber(x)
	case kindProb, kindProbByClass:
		return "0.5"
	case kindDuration:
		return "1m"
	case kindCompute, kindCountDist:
		return fmtNumber(sch.min + 1)
	case kindBool:
		return "true"
	case kindEnum:
		return sch.enum[0]
	case kindText:
		return "x"
	case kindRate:
		return "1/h"
	case kindDurDist, kindDurDistByClass:
		return "1s"
	}
	return "{}"
}

// wantText is how a message names a valid value of sch.
func (sch *schema) wantText() string {
	if sch.want != "" {
		return sch.want
	}
	switch sch.kind {
	case kindInt:
		return "a whole number >= " + fmtNumber(sch.min)
	case kindNumber:
		if sch.signed {
			return "a number"
		}
		if sch.above {
			return "a number > " + fmtNumber(sch.min)
		}
		return "a number >= " + fmtNumber(sch.min)
	}
	return "a single value"
}

// decodeBlock decodes the mapping n at key into dst, a struct of sch's type: every
// declared key the mapping gives, by its declaration; keys tagged hand are left to the
// caller, which reads them from the returned fields. bad lists the keys whose value was
// refused.
func (d *decoder) decodeBlock(key string, n *yaml.Node, sch *schema, dst reflect.Value) (f *fields, bad []string) {
	want := sch.want
	if want == "" {
		want = "a mapping of " + andList(sch.keys)
	}
	f = d.fields(key, n, sch, want)
	return f, d.decodeFields(f, sch, dst)
}

// decodeFields decodes the declared keys of a mapping already read (decodeBlock).
func (d *decoder) decodeFields(f *fields, sch *schema, dst reflect.Value) (bad []string) {
	if f.node == nil {
		return nil
	}
	for _, k := range sch.keys {
		sub := sch.sub[k]
		v := f.get(k)
		if sub.hand {
			continue
		}
		if v == nil {
			if sub.need {
				d.fail(f.at(), f.path, "missing %s; want %s: %s", k, k, sub.wantText())
				bad = append(bad, k)
			}
			continue
		}
		if !d.decodeKey(v, f.key(k), sub, dst.Field(sub.field-1)) {
			bad = append(bad, k)
		}
	}
	return bad
}

// decodeKey decodes one declared key: a value, a block, or a block that is off when absent.
func (d *decoder) decodeKey(v *yaml.Node, key string, sub *schema, fv reflect.Value) bool {
	if sub.typ == nil {
		return d.leaf(v, key, sub, fv)
	}
	if sub.ptr {
		// A block given (even as {}) is switched on with its defaults.
		blk := reflect.New(sub.typ)
		fillDefaults(sub, blk.Elem(), true)
		fv.Set(blk)
		fv = blk.Elem()
	}
	_, bad := d.decodeBlock(key, v, sub, fv)
	return len(bad) == 0
}

// fillDefaults sets the declared defaults of the struct v: all of them (the state before a
// file's keys are read), or only where a field is zero and zero is not a valid value of
// its key (a value built in Go that left a new field out). Blocks behind a nil pointer
// stay off.
func fillDefaults(sch *schema, v reflect.Value, all bool) {
	for _, k := range sch.keys {
		sub := sch.sub[k]
		fv := v.Field(sub.field - 1)
		if sub.typ != nil && sub.ptr && !fv.IsNil() {
			fv = fv.Elem()
		}
		if sub.typ != nil && fv.Kind() == reflect.Struct {
			fillDefaults(sub, fv, all)
		} else if sub.typ == nil && sub.def.IsValid() && !sub.unset && (all || fv.IsZero() && !zeroValid(sub)) {
			fv.Set(sub.def)
		}
	}
}

// zeroValid says whether the zero value is a valid setting of a declared key, so that a
// value built in Go may mean it: false, 0 where the bounds allow it, a word of the enum.
func zeroValid(sch *schema) bool {
	if sch.unset {
		return true
	}
	switch sch.kind {
	case kindBool, kindCompute, kindText:
		return true
	case kindInt, kindNumber:
		return sch.signed || sch.min <= 0 && !sch.above
	case kindProb, kindProbByClass, kindDuration:
		return !sch.above
	case kindEnum:
		// An enum type's zero value spells its first word; a string's zero is "", no word.
		return sch.enumType
	}
	return false // a distribution or a rate needs its kind
}

// block checks the declared keys of the struct v, named key, against their declarations.
func (v *validator) block(sch *schema, val reflect.Value, key string) {
	for _, k := range sch.keys {
		sub := sch.sub[k]
		kk := join(key, k)
		fv := val.Field(sub.field - 1)
		if sub.typ != nil && sub.ptr && !fv.IsNil() {
			fv = fv.Elem()
		}
		if sub.typ != nil && fv.Kind() == reflect.Struct {
			v.block(sub, fv, kk)
		} else if sub.typ == nil && !sub.hand && !(sub.unset && fv.IsZero()) {
			v.value(sub, fv, kk)
		}
	}
}

// value checks one declared value.
func (v *validator) value(sch *schema, fv reflect.Value, key string) {
	switch sch.kind {
	case kindInt:
		v.wholeIn(fv.Int(), key, sch)
	case kindNumber:
		v.numIn(fv.Float(), key, sch)
	case kindProb:
		p := fv.Float()
		if sch.above {
			v.check(p > 0 && p <= 1, key, "%v; want a number in (0, 1]", p)
		} else {
			v.prob(p, key)
		}
	case kindDuration:
		v.durIn(time.Duration(fv.Int()), key, sch.above)
	case kindCompute:
		x := fv.Float()
		v.check(finite(x) && x >= 0, key, "%v; want >= 0", x)
	case kindEnum:
		s := fv.String()
		if fv.Kind() != reflect.String {
			b, err := fv.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				v.check(false, key, "%d is not a value it knows; want %s", fv.Uint(), orList(sch.enum))
				return
			}
			s = string(b)
		}
		v.check(contains(sch.enum, s), key, "%q; want %s", s, orList(sch.enum))
	case kindRate:
		r := fv.Interface().(Rate).PerSecond
		if sch.above {
			v.check(finite(r) && r > 0, key, "rate %v per second; want > 0", r)
		} else {
			v.check(finite(r) && r >= 0, key, "%v per second; want >= 0", r)
		}
	case kindDurDist:
		v.dist(fv.Interface().(Dist), key, durationUnit, sch.min)
	case kindCountDist:
		v.dist(fv.Interface().(Dist), key, countUnit, sch.min)
	}
}

// defaultText is a key's default as a file writes it ("" when it has none): 1m, 0.5, full,
// true, constant 0.
func (sch *schema) defaultText() string {
	v := sch.def
	if !v.IsValid() {
		return ""
	}
	switch sch.kind {
	case kindDuration:
		return fmtDuration(time.Duration(v.Int()))
	case kindInt:
		return strconv.FormatInt(v.Int(), 10)
	case kindNumber, kindProb, kindProbByClass, kindCompute:
		return fmtNumber(v.Float())
	case kindBool:
		return strconv.FormatBool(v.Bool())
	case kindEnum, kindText:
		if v.Kind() == reflect.String {
			return v.String()
		}
		b, _ := v.Interface().(encoding.TextMarshaler).MarshalText()
		return string(b)
	case kindDurDist, kindCountDist, kindDurDistByClass:
		dist := v.Interface().(Dist)
		if dist.Kind != DistConstant {
			return string(dist.Kind)
		}
		if sch.kind == kindCountDist || dist.Value == 0 {
			return "constant " + fmtNumber(dist.Value)
		}
		return "constant " + fmtDuration(time.Duration(dist.Value))
	}
	return fmt.Sprint(v.Interface())
}
