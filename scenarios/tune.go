package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mayday-sim/mayday/metric"
)

// The tune block: what `mayday tune` searches (vary), what it optimises (maximize or
// minimize one metric), what must hold (subject_to, in the syntax of expect), an optional
// Pareto front (objectives) and how much it may spend (budget). Like sweep it belongs to a
// command, not to a run: overrides cannot touch it, and every varied value is checked when
// the file is parsed, as if it were written in place.

// FromTune marks an override made by tune (a candidate's values), for messages.
const FromTune = "tune"

// Kinds of a tuned parameter.
const (
	TuneInt      = "int"      // a whole number in [Min, Max]
	TuneNumber   = "number"   // a number (a probability too) in [Min, Max]
	TuneDuration = "duration" // a duration, Min and Max in seconds
	TuneRate     = "rate"     // a rate, Min and Max per second
	TuneChoice   = "choice"   // one of Choices
)

// Tune defaults.
const (
	DefaultTuneBudget     = 200
	DefaultTuneSeeds      = 3
	DefaultTuneMaxSeeds   = 48
	DefaultTuneConfidence = 0.95
)

// Tune is the tune block.
type Tune struct {
	Vary       []TuneParam   `json:"vary"`
	Maximize   string        `json:"maximize,omitempty"`
	Minimize   string        `json:"minimize,omitempty"`
	SubjectTo  []Expectation `json:"subject_to,omitempty"`
	Objectives []string      `json:"objectives,omitempty"`
	Budget     int           `json:"budget,omitempty"`      // runs; 0 with BudgetTime 0 = DefaultTuneBudget
	BudgetTime time.Duration `json:"budget_time,omitempty"` // wall time instead of runs
	Seeds      int           `json:"seeds,omitempty"`       // seeds of a first look at a candidate
	MaxSeeds   int           `json:"max_seeds,omitempty"`   // seeds of a candidate at most
	Initial    int           `json:"initial,omitempty"`     // candidates of the space-filling start; 0 = chosen from the space
	Confidence float64       `json:"confidence,omitempty"`  // of every interval
}

// TuneParam is one varied key: a range of a numeric key, or a list of choices.
type TuneParam struct {
	Path    string   `json:"path"`
	Kind    string   `json:"kind"`
	Min     float64  `json:"min,omitempty"`
	Max     float64  `json:"max,omitempty"`
	Choices []string `json:"choices,omitempty"` // YAML text of each choice
}

// Objective is the metric tune optimises and whether higher is better.
func (t *Tune) Objective() (name string, higher bool) {
	if t.Maximize != "" {
		return t.Maximize, true
	}
	return t.Minimize, false
}

// Levels is the number of distinct values of p when it is discrete (a whole number or a
// choice), else 0.
func (p TuneParam) Levels() int {
	switch p.Kind {
	case TuneInt:
		return int(p.Max-p.Min) + 1
	case TuneChoice:
		return len(p.Choices)
	}
	return 0
}

// Value is the override text of the point u in [0, 1] of p's range: a discrete range is cut
// into Levels equal strata (so a Latin hypercube of Levels points takes every level once),
// a continuous one is scaled and rounded to 3 significant digits, so that recommendations
// read as people write them.
func (p TuneParam) Value(u float64) string {
	u = math.Min(math.Max(u, 0), 1)
	if n := p.Levels(); n > 0 {
		i := min(int(u*float64(n)), n-1)
		if p.Kind == TuneChoice {
			return p.Choices[i]
		}
		return strconv.FormatInt(int64(p.Min)+int64(i), 10)
	}
	x := round3(p.Min + u*(p.Max-p.Min))
	x = math.Min(math.Max(x, p.Min), p.Max)
	switch p.Kind {
	case TuneDuration:
		return fmtDuration(time.Duration(math.Round(x * 1e9)))
	case TuneRate:
		return strconv.FormatFloat(x, 'f', -1, 64) + "/s"
	}
	return fmtNumber(x)
}

// Unit is where the override text v lies in p's range, the inverse of Value; ok is false
// for a value outside it.
func (p TuneParam) Unit(v string) (u float64, ok bool) {
	if n := p.Levels(); n > 0 {
		for i := range n {
			if p.Value((float64(i)+0.5)/float64(n)) == v {
				return (float64(i) + 0.5) / float64(n), true
			}
		}
		return 0, false
	}
	x, ok := p.number(v)
	if !ok || x < p.Min || x > p.Max {
		return 0, false
	}
	if p.Max == p.Min {
		return 0.5, true
	}
	return (x - p.Min) / (p.Max - p.Min), true
}

// number reads a value of a numeric kind as the number Min and Max hold.
func (p TuneParam) number(v string) (float64, bool) {
	switch p.Kind {
	case TuneDuration:
		d, err := parseDuration(v)
		return d.Seconds(), err == nil
	case TuneRate:
		r, err := parseRate(v)
		return r.PerSecond, err == nil
	}
	x, err := strconv.ParseFloat(v, 64)
	return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
}

func round3(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

const tuneWant = "a mapping such as {vary: {recovery.retry.max_attempts: {min: 1, max: 10}}, maximize: completion_rate, budget: 150}"

// tune decodes the tune block. It returns the value nodes of each varied key, for checkTune.
func (d *decoder) tune(root *yaml.Node, priced bool) (*Tune, []valueSource) {
	f := d.fields("tune", mapValue(root, "tune"), rootSchema.sub["tune"], tuneWant)
	if f.node == nil {
		return nil, nil
	}
	t := &Tune{Confidence: DefaultTuneConfidence, Seeds: DefaultTuneSeeds, MaxSeeds: DefaultTuneMaxSeeds}
	srcs := d.tuneVary(root, f, t)
	d.tuneGoal(f, t, priced)
	d.tuneBudget(f, t)
	if v := f.get("seeds"); v != nil {
		if x, ok := d.integerFrom(v, "tune.seeds", 2, "a whole number >= 2"); ok {
			t.Seeds = int(x)
		}
	}
	if v := f.get("max_seeds"); v != nil {
		if x, ok := d.integerFrom(v, "tune.max_seeds", 2, "a whole number >= 2"); ok {
			t.MaxSeeds = int(x)
		}
	}
	if v := f.get("initial"); v != nil {
		if x, ok := d.integerFrom(v, "tune.initial", 1, "a whole number >= 1"); ok {
			t.Initial = int(x)
		}
	}
	if v := f.get("confidence"); v != nil {
		if x, ok := d.number(v, "tune.confidence", "a level in (0, 1) such as 0.95"); ok {
			if x <= 0 || x >= 1 {
				d.fail(v, "tune.confidence", "%s is not a confidence level; want a number in (0, 1) such as 0.95", v.Value)
			} else {
				t.Confidence = x
			}
		}
	}
	if t.MaxSeeds < t.Seeds {
		d.fail(f.get("max_seeds"), "tune.max_seeds", "%d is below seeds (%d); want max_seeds >= seeds", t.MaxSeeds, t.Seeds)
	}
	return t, srcs
}

// tuneVary decodes vary: each path to {min, max} or to a list of choices.
func (d *decoder) tuneVary(root *yaml.Node, f *fields, t *Tune) []valueSource {
	vf := d.fields("tune.vary", f.get("vary"), nil, "a mapping of paths to {min: A, max: B} or to lists of values")
	vf.paths = true
	if vf.node == nil {
		d.fail(f.at(), "tune.vary", "missing; want at least one key to vary, such as {recovery.retry.max_attempts: {min: 1, max: 10}}")
		return nil
	}
	var srcs []valueSource
	for _, p := range vf.order {
		key, v := vf.key(p), vf.get(p)
		if _, ok := parsePath(p); !ok {
			d.fail(vf.keys[p], key, "%s", badPath(p))
			continue
		}
		if segs, _ := parsePath(p); contains(tuneFixed, segs[0].key) || p == "seed" {
			d.fail(vf.keys[p], key, "%s cannot be tuned; want a key of the fleet or its recovery policy", p)
			continue
		}
		// The path must lead somewhere in the key tree and in the file (a tool it names must
		// exist): the same walk as an override's, with an empty value.
		probe := root
		if e := newDecoder(d.file).apply(&probe, Override{Path: p, From: FromTune}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}); e != nil {
			e.Line, e.Column, e.Override = vf.keys[p].Line, vf.keys[p].Column, FromTune
			d.errs = append(d.errs, e)
			continue
		}
		switch {
		case v != nil && v.Kind == yaml.SequenceNode && len(v.Content) > 0:
			tp := TuneParam{Path: p, Kind: TuneChoice}
			var vals []*yaml.Node
			for _, item := range v.Content {
				if item = deref(item); item != nil {
					tp.Choices = append(tp.Choices, valueText(item))
					vals = append(vals, item)
				}
			}
			t.Vary = append(t.Vary, tp)
			srcs = append(srcs, valueSource{key: vf.keys[p], vals: vals})
		case v != nil && v.Kind == yaml.MappingNode:
			if tp, vals, ok := d.tuneRange(p, key, v, ruleAt(p)); ok {
				t.Vary = append(t.Vary, tp)
				srcs = append(srcs, valueSource{key: vf.keys[p], vals: vals})
			}
		default:
			at := v
			if at == nil {
				at = vf.keys[p]
			}
			d.fail(at, key, "want {min: A, max: B} or a non-empty list of choices, such as [1, 3, 5]")
		}
	}
	return srcs
}

// tuneFixed are the top-level keys a tune may not vary: what names the run or belongs to
// the commands.
var tuneFixed = []string{"name", "description", "expect", "tolerances", "sweep", "tune", "redact"}

// tuneKinds maps the kinds of the key tree a range may vary to a TuneParam kind.
var tuneKinds = map[valueKind]string{kindInt: TuneInt, kindNumber: TuneNumber, kindProb: TuneNumber,
	kindDuration: TuneDuration, kindRate: TuneRate}

// tuneRange decodes {min: A, max: B} of the key at path p, declared by sch: the key's kind
// must be numeric (a whole number, number, probability, duration or rate) and A <= B.
func (d *decoder) tuneRange(p, key string, v *yaml.Node, sch *schema) (TuneParam, []*yaml.Node, bool) {
	rf := d.fields(key, v, obj("", "min", leaf, "max", leaf), "{min: A, max: B}")
	lo, hi := rf.get("min"), rf.get("max")
	if lo == nil || hi == nil {
		d.fail(v, key, "want both min and max, such as {min: 1, max: 10}")
		return TuneParam{}, nil, false
	}
	kind, ok := tuneKinds[sch.kind]
	if !ok {
		d.fail(v, key, "%s is not a number, duration or rate; give a list of choices instead, such as [a, b]", p)
		return TuneParam{}, nil, false
	}
	tp := TuneParam{Path: p, Kind: kind}
	a, okA := d.tuneBound(tp, lo, key+".min")
	b, okB := d.tuneBound(tp, hi, key+".max")
	if !okA || !okB {
		return TuneParam{}, nil, false
	}
	if a > b {
		d.fail(hi, key, "max %s is below min %s; want min <= max", hi.Value, lo.Value)
		return TuneParam{}, nil, false
	}
	if kind == TuneInt && (a != math.Trunc(a) || b != math.Trunc(b)) {
		d.fail(v, key, "%s is a whole number; want whole-number bounds", p)
		return TuneParam{}, nil, false
	}
	tp.Min, tp.Max = a, b
	return tp, []*yaml.Node{lo, hi}, true
}

func (d *decoder) tuneBound(tp TuneParam, n *yaml.Node, key string) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, key, "%s is not a single value; want a bound of %s", describe(n), tp.Path)
		return 0, false
	}
	x, ok := tp.number(n.Value)
	if !ok {
		d.fail(n, key, "%q is not a %s; want a bound that %s takes", n.Value, tp.Kind, tp.Path)
	}
	return x, ok
}

// tuneGoal decodes maximize or minimize, subject_to and objectives.
func (d *decoder) tuneGoal(f *fields, t *Tune, priced bool) {
	goal := func(k string) string {
		v := f.get(k)
		if v == nil {
			return ""
		}
		if m, ok := d.text(v, "tune."+k, "a metric such as completion_rate"); ok && d.metricKey(v, "tune."+k, m) {
			return m
		}
		return ""
	}
	t.Maximize, t.Minimize = goal("maximize"), goal("minimize")
	switch {
	case f.get("maximize") != nil && f.get("minimize") != nil:
		d.fail(f.get("minimize"), "tune.minimize", "both maximize and minimize; want one of them")
	case f.get("maximize") == nil && f.get("minimize") == nil:
		d.fail(f.at(), "tune", "no goal; want maximize: METRIC or minimize: METRIC")
	case t.Maximize != "" && metric.Better(t.Maximize) < 0:
		d.fail(f.get("maximize"), "tune.maximize", "%s is better when lower; want minimize: %s", t.Maximize, t.Maximize)
	case t.Minimize != "" && metric.Better(t.Minimize) > 0:
		d.fail(f.get("minimize"), "tune.minimize", "%s is better when higher; want maximize: %s", t.Minimize, t.Minimize)
	}
	before := len(d.errs)
	t.SubjectTo = d.expect(f.get("subject_to"), priced)
	for _, e := range d.errs[before:] { // the checks of expect, under this block's name
		e.Key = "tune.subject_to" + strings.TrimPrefix(e.Key, "expect")
	}
	for i := range t.SubjectTo {
		t.SubjectTo[i].Line = 0 // where a constraint is written is not part of the block
	}
	if v := f.get("objectives"); v != nil {
		if v.Kind != yaml.SequenceNode {
			d.fail(v, "tune.objectives", "%s is not a list; want a list of metrics such as [completion_rate, cost_per_completion]", describe(v))
			return
		}
		for i, item := range v.Content {
			key := fmt.Sprintf("tune.objectives[%d]", i)
			if m, ok := d.text(item, key, "a metric"); ok && d.metricKey(item, key, m) {
				if metric.Better(m) == 0 {
					d.fail(item, key, "%s has no better direction; want a metric that is better higher or lower", m)
					continue
				}
				t.Objectives = append(t.Objectives, m)
			}
		}
	}
}

// tuneBudget decodes budget: a whole number of runs or a duration of wall time.
func (d *decoder) tuneBudget(f *fields, t *Tune) {
	v := f.get("budget")
	if v == nil {
		return
	}
	b, err := ParseTuneBudget(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil {
		d.fail(v, "tune.budget", "%s is not a budget; want a number of runs >= 1 such as 150, or a duration such as 10m", describe(v))
		return
	}
	t.Budget, t.BudgetTime = b.Budget, b.BudgetTime
}

// ParseTuneBudget reads a budget as the tune block and --budget write it: runs or a duration.
func ParseTuneBudget(s string) (Tune, error) {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		if n < 1 {
			return Tune{}, fmt.Errorf("%d runs; want at least 1", n)
		}
		return Tune{Budget: n}, nil
	}
	dur, err := parseDuration(strings.TrimSpace(s))
	if err != nil || dur <= 0 {
		return Tune{}, fmt.Errorf("%q is not a budget; want a number of runs such as 150, or a duration such as 10m", s)
	}
	return Tune{BudgetTime: dur}, nil
}

// checkTune decodes the scenario once per varied value (min and max of a range, each
// choice), with that value alone, and reports what is wrong at the value's line, as
// checkSweep does for sweep values.
func (d *decoder) checkTune(root *yaml.Node, t *Tune, srcs []valueSource) {
	if t == nil {
		return
	}
	d.checkInPlace(root, FromTune, srcs, func(a int) string { return t.Vary[a].Path },
		func(a, i int) string { return valueText(srcs[a].vals[i]) })
}

// tuneSchema is the tune block's place in the key tree: overrides cannot touch it, and the
// generator of fuzzed files leaves it out (a search is a command's business, not a run's).
var tuneSchema = func() *schema {
	metricText := func(doc string) *schema { return text(doc + " (a metric of expect)") }
	s := obj("what mayday tune searches and optimises (below)",
		"vary", &schema{kind: kindMap, doc: "the keys to search: paths (as --set takes them) to {min: A, max: B} (a whole number, number, probability, duration or rate) or to a non-empty list of choices"},
		"maximize", metricText("the metric to maximize"),
		"minimize", metricText("the metric to minimize (instead of maximize)"),
		"subject_to", dict("metric", val(kindCheck, `a constraint such as "<= 2.25" or "== 0"`), false,
			"constraints in the syntax of expect; a candidate is feasible when each holds at the confidence level"),
		"objectives", list(metricText("an objective"), "metrics of a Pareto front, each better higher or lower"),
		"budget", shown(text("runs (a whole number >= 1) or wall time (a duration); --budget overrides it"), "200 runs"),
		"seeds", shown(integer(2, 0, "seeds of a first look at a candidate; every candidate runs the same seeds"), "3"),
		"max_seeds", shown(integer(2, 0, "seeds of a candidate at most"), "48"),
		"initial", shown(integer(1, 0, "candidates of the space-filling start"), "from the space"),
		"confidence", shown(number(0, true, "level of every interval, in (0, 1)"), "0.95"),
	)
	s.noSet = true
	s.sub["subject_to"].keyEnum = Metrics
	return s
}()

// mapValue is the value of key k of the mapping n, or nil.
func mapValue(n *yaml.Node, k string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

// Patch returns the scenario text data with the overrides applied, as a YAML document
// (comments kept where the YAML library can keep them), after checking that the result
// is a valid scenario: what `mayday tune` writes as its recommended scenario.
func Patch(name string, data []byte, ovs []Override) ([]byte, error) {
	if _, err := ParseOverrides(name, data, ovs); err != nil {
		return nil, err
	}
	root, _, err := withOverrides(name, data, ovs)
	if err != nil {
		return nil, err
	}
	return encodeYAML(root)
}

// Number is the override text v as a number on p's axis: the value of a whole number or
// number, seconds of a duration, per second of a rate, the index of a choice.
func (p TuneParam) Number(v string) (float64, bool) {
	if p.Kind == TuneChoice {
		for i, c := range p.Choices {
			if c == v {
				return float64(i), true
			}
		}
		return 0, false
	}
	return p.number(v)
}

// RoundPrefix is the block that holds every varied key of t: the longest common prefix of
// their paths (recovery for recovery.retry.max_attempts and recovery.breaker), or the path
// itself when one key is varied. A round of candidates is a sweep over it. ok is false when
// the keys share no block.
func RoundPrefix(t Tune) (string, bool) {
	if len(t.Vary) == 0 {
		return "", false
	}
	common, _ := parsePath(t.Vary[0].Path)
	for _, p := range t.Vary[1:] {
		segs, _ := parsePath(p.Path)
		n := 0
		for n < len(common) && n < len(segs) && common[n].key == segs[n].key && slices.Equal(common[n].idx, segs[n].idx) {
			n++
		}
		common = common[:n]
	}
	return pathString(common), len(common) > 0
}

// RoundFile is a scenario file that runs candidates as the points of a sweep, for `mayday
// sweep` (and its shards) to run: the scenario data with the overrides ovs applied, without
// its tune block, and with a sweep of one axis at prefix (RoundPrefix) whose values are that
// block with each point's overrides applied. The file is checked like any scenario.
func RoundFile(name string, data []byte, ovs []Override, prefix string, points [][]Override) ([]byte, error) {
	root, d, err := withOverrides(name, data, ovs)
	if err != nil {
		return nil, err
	}
	root = cow(root)
	for i := 0; i+1 < len(root.Content); {
		if k := root.Content[i].Value; k == "tune" || k == "sweep" {
			root.Content = append(root.Content[:i], root.Content[i+2:]...)
			continue
		}
		i += 2
	}
	axis := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, point := range points {
		at := root
		for _, o := range point {
			if e := d.apply(&at, o, nil); e != nil {
				return nil, ErrorList{e}
			}
		}
		v, err := parseValue(valueText(nodeAt(at, prefix)))
		if err != nil {
			return nil, err
		}
		axis.Content = append(axis.Content, v)
	}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "sweep"},
		&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: prefix}, axis}})
	out, err := encodeYAML(root)
	if err != nil {
		return nil, err
	}
	if _, err := Parse(name, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// withOverrides is the file's tree with the overrides ovs applied, and the decoder that
// applied them.
func withOverrides(name string, data []byte, ovs []Override) (*yaml.Node, *decoder, error) {
	root, err := parseYAML(name, data)
	if err != nil {
		return nil, nil, err
	}
	d := newDecoder(name)
	for _, o := range ovs {
		if e := d.apply(&root, o, nil); e != nil {
			return nil, nil, ErrorList{e}
		}
	}
	return root, d, nil
}

// encodeYAML writes a tree as a YAML file, indented by two spaces.
func encodeYAML(root *yaml.Node) ([]byte, error) {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// nodeAt is the node at path in the tree (nil when absent).
func nodeAt(n *yaml.Node, path string) *yaml.Node {
	segs, _ := parsePath(path)
	for _, sg := range segs {
		n = deref(mapValue(n, sg.key))
		for _, i := range sg.idx {
			if n == nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return nil
			}
			n = deref(n.Content[i])
		}
	}
	return n
}
