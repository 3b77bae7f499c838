package scenarios

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// eachKey calls fn for every declared value key of the struct v (sch's type), blocks behind
// a nil pointer excepted, with its dotted key.
func eachKey(sch *schema, v reflect.Value, key string, fn func(sub *schema, fv reflect.Value, key string)) {
	for _, k := range sch.keys {
		sub := sch.sub[k]
		fv := v.Field(sub.field - 1)
		switch {
		case sub.typ != nil && sub.ptr:
			if !fv.IsNil() {
				eachKey(sub, fv.Elem(), join(key, k), fn)
			}
		case sub.typ != nil:
			eachKey(sub, fv, join(key, k), fn)
		case sub.hand && !sub.def.IsValid():
		default:
			fn(sub, fv, join(key, k))
		}
	}
}

// A scenario built in Go that leaves every declared field zero, with every block that is
// off when absent switched on as a zero value, validates, and each field takes what its
// declaration says: its default where zero is not a valid value, else zero (false, 0, the
// enum's first word), a setting of its own. The expectations are read from the
// declarations, so a key added later is covered by itself.
func TestGoBuiltZeroTakesDefaults(t *testing.T) {
	s := &Scenario{Name: "zero", Tools: []Tool{{Name: "a"}}}
	r := &s.Recovery
	r.RetryBudget, r.Breaker, r.NonProgress, r.Humans = &RetryBudget{}, &Breaker{}, &NonProgress{}, &Humans{}
	r.Supervisor.Difficulty = &Difficulty{}
	s.Model = &ModelService{}
	if err := s.Validate(); err != nil {
		t.Fatalf("a zero scenario built in Go fails Validate: %v", err)
	}
	checked, defaulted := 0, 0
	check := func(sub *schema, fv reflect.Value, key string) {
		checked++
		switch {
		case sub.def.IsValid() && !zeroValid(sub):
			defaulted++
			if !reflect.DeepEqual(fv.Interface(), sub.def.Interface()) {
				t.Errorf("%s = %v after Validate, want its default %v", key, fv.Interface(), sub.def.Interface())
			}
		case !fv.IsZero():
			t.Errorf("%s = %v after Validate; its zero is a valid setting and should stay", key, fv.Interface())
		}
	}
	eachKey(rootSchema, reflect.ValueOf(s).Elem(), "", check)
	eachKey(toolSchema, reflect.ValueOf(&s.Tools[0]).Elem(), "tools.a", check)
	// The walk reached the blocks (a walk that checks nothing must fail): at least the
	// retry, breaker, inspection and lease defaults are among those filled.
	if checked < 40 || defaulted < 15 {
		t.Errorf("checked %d keys, %d defaulted; the walk missed the declarations", checked, defaulted)
	}
	for _, want := range []struct {
		got, want any
		key       string
	}{
		{s.Recovery.Retry.MaxAttempts, 3, "recovery.retry.max_attempts"},
		{s.Recovery.Breaker.Cooldown, 2 * time.Minute, "recovery.breaker.cooldown"},
		{s.Recovery.Lease, 5 * time.Minute, "recovery.lease"},
		{s.Horizon, 30 * 24 * time.Hour, "horizon"},
		{s.Tools[0].Idempotency, None, "tools.a.idempotency"},
		{s.Workload.Steps, Dist{Kind: DistConstant, Value: 1}, "workload.steps"},
	} {
		if want.got != want.want {
			t.Errorf("%s = %v, want %v", want.key, want.got, want.want)
		}
	}
}

// A file that omits every key it may gets each declared default, and a block given as {}
// gets the defaults of its keys: the decoder and the Go-built path share the declarations.
func TestFileOmissionsTakeDefaults(t *testing.T) {
	s, err := Parse("d.yaml", []byte(`name: d
tools: {a: {}}
recovery: {retry_budget: {}, breaker: {}, non_progress: {}, humans: {reviewers: 0}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(sub *schema, fv reflect.Value, key string) {
		if !sub.def.IsValid() || sub.unset {
			return
		}
		n++
		if !reflect.DeepEqual(fv.Interface(), sub.def.Interface()) {
			t.Errorf("%s = %v, want its default %v", key, fv.Interface(), sub.def.Interface())
		}
	}
	eachKey(rootSchema, reflect.ValueOf(s).Elem(), "", check)
	eachKey(toolSchema, reflect.ValueOf(&s.Tools[0]).Elem(), "tools.a", check)
	if n < 20 {
		t.Errorf("only %d keys with defaults checked", n)
	}
}

// Every declared default meets its own key's rule, and every default a tag writes is one
// the decoder reads back to the same value (the defaults are parsed with the decoder).
func TestDeclaredDefaultsAreValid(t *testing.T) {
	s := Defaults()
	s.Name, s.Tools = "d", []Tool{defaultTool("a")}
	s.Workload.Mix = defaultMix(s.Tools)
	if err := s.Validate(); err != nil {
		t.Fatalf("Defaults() with one tool fails Validate: %v", err)
	}
}

type exampleParams struct {
	Ramp  time.Duration `key:"ramp,>0,default=1m" doc:"time the latency takes to reach its peak"`
	Peak  float64       `key:"peak,min=1,default=2" want:"a latency factor >= 1" doc:"the latency factor at the peak"`
	Share float64       `key:"share,prob" doc:"share of attempts hit"`
	Steps int           `key:"steps,min=1,max=10,too=many,default=3" doc:"steps of the ramp"`
	Note  string        `key:"note,enum=up|down,default=up" want:"a direction" doc:"which way"`
}

// Keys, the public face of the declarations: names in order, defaults, the zero-fill, and
// checks with their keys.
func TestKeysOf(t *testing.T) {
	k := KeysOf[exampleParams]("an example")
	if got := strings.Join(k.Names(), ","); got != "ramp,peak,share,steps,note" {
		t.Errorf("Names() = %s", got)
	}
	var p exampleParams
	k.Defaults(&p)
	if p != (exampleParams{Ramp: time.Minute, Peak: 2, Steps: 3, Note: "up"}) {
		t.Errorf("Defaults: %+v", p)
	}
	q := exampleParams{Peak: 5}
	k.EnsureDefaults(&q)
	if q != (exampleParams{Ramp: time.Minute, Peak: 5, Steps: 3, Note: "up"}) {
		t.Errorf("EnsureDefaults kept a set value or missed a zero: %+v", q)
	}
	if err := k.Check(&q, "faults[1]"); err != nil {
		t.Errorf("Check of a valid value: %v", err)
	}
	bad := exampleParams{Ramp: -1, Peak: 0.5, Share: 2, Steps: 11, Note: "sideways"}
	err := k.Check(&bad, "faults[1]")
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Check = %v, want an ErrorList", err)
	}
	var keys []string
	for _, e := range list {
		keys = append(keys, e.Key)
	}
	if got := strings.Join(keys, ","); got != "faults[1].ramp,faults[1].peak,faults[1].share,faults[1].steps,faults[1].note" {
		t.Errorf("Check reported %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Defaults on the wrong type did not panic")
		}
	}()
	k.Defaults(&bad.Ramp)
}

// The decoder reads a declared struct with the file's messages: bounds, the too-large
// phrase, the want text and the enum's hint.
func TestDecodeDeclared(t *testing.T) {
	k := KeysOf[exampleParams]("an example")
	src := "ramp: 0s\npeak: 0.5\nshare: 1.5\nsteps: 11\nnote: dwn\nextra: 1\n"
	n, err := parseYAML("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder("p.yaml")
	var p exampleParams
	k.Defaults(&p)
	bad := d.decodeKeys("p", n, k, &p)
	want := []string{
		`p.yaml:1: p.ramp: "0s" is zero; want a duration > 0, such as 30s`,
		`p.yaml:2: p.peak: 0.5 is too small; want a latency factor >= 1`,
		`p.yaml:3: p.share: 1.5 is not a probability; want a number in [0, 1]`,
		`p.yaml:4: p.steps: 11 is too many; want at most 10`,
		`p.yaml:5: p.note: "dwn" is not a direction (did you mean down?); want up or down`,
		`p.yaml:6: p.extra: unknown key "extra"; want one of ramp, peak, share, steps, note`,
	}
	got := strings.Split(d.errs.err().Error(), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(bad, ",") != "ramp,peak,share,steps,note" {
		t.Errorf("bad keys %v", bad)
	}
	if p != (exampleParams{Ramp: time.Minute, Peak: 2, Steps: 3, Note: "up"}) {
		t.Errorf("a refused value replaced its default: %+v", p)
	}
}

// A zero that is a valid setting stays zero in a scenario built in Go, written out here so
// that a changed rule of which zeros count fails (the test above derives its expectations
// from the same rule).
func TestGoBuiltZeroSettingsStay(t *testing.T) {
	s := &Scenario{Name: "zero", Tools: []Tool{{Name: "a"}}}
	s.Recovery.RetryBudget = &RetryBudget{}
	s.Recovery.Humans = &Humans{Reviewers: 1, ReviewTime: Dist{Kind: DistConstant, Value: 1}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	r := s.Recovery
	if r.Humans.Approve != 0 {
		t.Errorf("humans.approve 0 (every review rejects) became %v", r.Humans.Approve)
	}
	if s.Seed != 0 || s.Tools[0].Compute != 0 || s.Tools[0].Timeout != 0 || r.InspectBeforeRetry ||
		r.Retry.Initial != 0 || r.Retry.Max != 0 || r.Retry.Jitter != 0 || s.Workload.Subagents.MaxDepth != 0 ||
		r.RetryBudget.Ratio != 0 || r.RetryBudget.MinPerSecond != 0 || s.Workload.Priority != "" || r.Revisions != 0 {
		t.Errorf("a zero setting was replaced: seed %d, compute %v, timeout %v, inspect %v, retry %+v, max_depth %d, budget %+v, priority %q, revisions %d",
			s.Seed, s.Tools[0].Compute, s.Tools[0].Timeout, r.InspectBeforeRetry, r.Retry, s.Workload.Subagents.MaxDepth,
			*r.RetryBudget, s.Workload.Priority, r.Revisions)
	}
	// And a value given is never replaced by a default.
	g := &Scenario{Name: "given", Tools: []Tool{{Name: "a", Compute: 2, Idempotency: Keyed}}, Horizon: time.Hour}
	g.Recovery.Retry.MaxAttempts, g.Recovery.Lease = 9, time.Second
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.Horizon != time.Hour || g.Tools[0].Compute != 2 || g.Tools[0].Idempotency != Keyed ||
		g.Recovery.Retry.MaxAttempts != 9 || g.Recovery.Lease != time.Second {
		t.Errorf("a given value was replaced: %+v", g)
	}
}

// The messages of the declared bounds as a file meets them: the too-large phrase with its
// word and unit, the zero a ratio refuses, a count distribution's least constant.
func TestDeclaredBoundMessages(t *testing.T) {
	src := `name: t
tools: {a: {concurrency: 2147483649, queue_limit: 2147483649}}
workload: {workers: 2147483649, investigations: 1099511627777, subagents: {max_depth: 65, count: 0}}
recovery:
  breaker: {failure_ratio: 0, min_calls: 2147483649, window: 0s}
  revisions: 1001
  humans: {reviewers: 2147483649, review_time: 1m}
`
	_, err := Parse("t.yaml", []byte(src), nil)
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		"t.yaml:2: tools.a.concurrency: 2147483649 is too large; want at most 2147483648 servers",
		"t.yaml:2: tools.a.queue_limit: 2147483649 is too large; want at most 2147483648",
		"t.yaml:3: workload.workers: 2147483649 is too large; want at most 2147483648 workers",
		"t.yaml:3: workload.investigations: 1099511627777 is too large; want at most 1099511627776",
		"t.yaml:3: workload.subagents.max_depth: 65 is too deep; want at most 64",
		"t.yaml:3: workload.subagents.count: constant 0 is below 1; want a value >= 1",
		"t.yaml:5: recovery.breaker.failure_ratio: 0 would open the breaker on success; want a ratio in (0, 1]",
		"t.yaml:5: recovery.breaker.min_calls: 2147483649 is too large; want at most 2147483648",
		`t.yaml:5: recovery.breaker.window: "0s" is zero; want a duration > 0, such as 30s`,
		"t.yaml:6: recovery.revisions: 1001 is too many; want at most 1000",
		"t.yaml:7: recovery.humans.reviewers: 2147483649 is too many; want at most 2147483648",
	}
	got := strings.Split(err.Error(), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type neededParams struct {
	Must  int     `key:"must,need" doc:"a key that must be given"`
	Ratio float64 `key:"ratio,prob,>0" doc:"a ratio above 0"`
	Gain  float64 `key:"gain,signed" doc:"any finite number"`
	Above float64 `key:"above,>0" doc:"a number above 0"`
	Every Rate    `key:"every,>0" doc:"a rate above 0"`
	Slow  Rate    `key:"slow" doc:"a rate, 0 allowed"`
}

// A declared key marked need is reported when its mapping omits it; a probability above 0
// without a message of its own says so; a signed number takes a negative value; the
// validator checks each.
func TestDeclaredNeedAndSigns(t *testing.T) {
	k := KeysOf[neededParams]("needed")
	n, err := parseYAML("p.yaml", []byte("ratio: 0\ngain: -2.5\nabove: 0\nevery: 0/h\nslow: 0/h\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder("p.yaml")
	var p neededParams
	bad := d.decodeKeys("p", n, k, &p)
	want := []string{
		"p.yaml:1: p: missing must; want must: a whole number >= 0",
		"p.yaml:1: p.ratio: 0 is zero; want a number in (0, 1]",
		"p.yaml:3: p.above: 0 is too small; want a number > 0",
		`p.yaml:4: p.every: "0/h" is zero; want a rate > 0 such as 50/m`,
	}
	if got := d.errs.err().Error(); got != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if strings.Join(bad, ",") != "must,ratio,above,every" || p.Gain != -2.5 {
		t.Errorf("bad %v, gain %v", bad, p.Gain)
	}
	err = k.Check(&neededParams{Ratio: 0, Gain: math.Inf(-1), Above: 0, Slow: Rate{PerSecond: -1}}, "x")
	for _, key := range []string{"x.ratio", "x.gain", "x.above", "x.every", "x.slow"} {
		if err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("Check = %v, want a problem at %s", err, key)
		}
	}
	if err != nil && strings.Contains(err.Error(), "x.must") {
		t.Errorf("Check = %v; must 0 is a valid whole number", err)
	}
	if err := k.Check(&neededParams{Ratio: 1, Gain: -1e9, Above: 1e-9, Every: Rate{PerSecond: 1e-9}}, "x"); err != nil {
		t.Errorf("Check of valid values: %v", err)
	}
}

// A malformed declaration is a programming error found when the package loads: each
// panics naming the field.
func TestMalformedDeclarationsPanic(t *testing.T) {
	type badMin struct {
		X int `key:"x,min=abc"`
	}
	type badType struct {
		X complex128 `key:"x"`
	}
	type badYAML struct {
		X int `key:"x,default=["`
	}
	type badDefault struct {
		X int `key:"x,min=1,default=0"`
	}
	type handless struct {
		X int `key:"x,hand"`
	}
	type good struct {
		X int `key:"x"`
	}
	for name, f := range map[string]func(){
		"min=abc":             func() { KeysOf[badMin]("") },
		"complex128":          func() { KeysOf[badType]("") },
		"default=[":           func() { KeysOf[badYAML]("") },
		"default below min":   func() { KeysOf[badDefault]("") },
		"hand without a tree": func() { KeysOf[handless]("") },
		"a tree for no key":   func() { declare(reflect.TypeFor[good](), "", "y", leaf) },
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, "scenarios: ") || !strings.Contains(msg, "x") && !strings.Contains(msg, "y") {
					t.Errorf("%s: recovered %v, want a message naming the key", name, r)
				}
			}()
			f()
			t.Errorf("%s: no panic", name)
		}()
	}
}

// A model supervisor's difficulty is kept when it says something and dropped when it is
// all zero (the same accuracy for every case), so {} and an absent block agree.
func TestSupervisorDifficulty(t *testing.T) {
	for src, want := range map[string]*Difficulty{
		"{per_attempt: 0.1, floor: 0.5}": {PerAttempt: 0.1, Floor: 0.5},
		"{per_step: -0.01}":              {PerStep: -0.01},
		"{}":                             nil,
	} {
		s, err := Parse("d.yaml", []byte("name: d\ntools: {a: {}}\nrecovery: {supervisor: {kind: model, accuracy: 0.9, difficulty: "+src+"}}\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Recovery.Supervisor.Difficulty; !reflect.DeepEqual(got, want) {
			t.Errorf("difficulty %s became %+v, want %+v", src, got, want)
		}
	}
}

// Every declared whole number is accepted at its least and its largest value and refused
// one beyond either, through the decoder (--set, as a file's value), so a bound is
// inclusive where the key tables say so. The keys come from the declarations.
func TestDeclaredIntBoundsInclusive(t *testing.T) {
	base := []byte("name: b\ntools: {a: {}}\nrecovery: {supervisor: {kind: model, accuracy: 0.5}}\n")
	n := 0
	var walk func(sch *schema, path string)
	walk = func(sch *schema, path string) {
		for _, k := range sch.keys {
			sub, p := sch.sub[k], join(path, k)
			if sub.typ != nil && !sub.hand || p == "recovery" || p == "workload" || p == "recovery.supervisor" {
				walk(sub, p)
				continue
			}
			if sub.kind != kindInt || sub.hand {
				continue
			}
			n++
			lo, hi := int64(sub.min), int64(sub.max)
			ok := []int64{lo}
			bad := []int64{lo - 1}
			if hi > 0 {
				bad = append(bad, hi+1)
			}
			if hi > 0 && p != "workload.investigations" { // the size model stops it at 10⁷ first
				ok = append(ok, hi)
			}
			for _, v := range ok {
				if _, err := Parse("b.yaml", base, []string{fmt.Sprintf("%s=%d", p, v)}); err != nil {
					t.Errorf("%s=%d refused: %v", p, v, err)
				}
			}
			for _, v := range bad {
				if _, err := Parse("b.yaml", base, []string{fmt.Sprintf("%s=%d", p, v)}); err == nil {
					t.Errorf("%s=%d accepted", p, v)
				}
			}
		}
	}
	walk(rootSchema, "")
	walk(toolSchema, "tools.a")
	if n < 10 {
		t.Errorf("only %d whole-number keys checked", n)
	}
}

// budgets.compute is compute-unit seconds, written as a number or as a duration.
func TestComputeBudgetSpellings(t *testing.T) {
	for src, want := range map[string]float64{"36000": 36000, "10h": 36000, "0": 0, "1.5": 1.5, "90s": 90} {
		s, err := Parse("c.yaml", []byte("name: c\ntools: {a: {}}\nrecovery: {budgets: {compute: "+src+"}}\n"), nil)
		if err != nil {
			t.Fatalf("compute: %s: %v", src, err)
		}
		if got := s.Recovery.Budgets.Compute; got != want {
			t.Errorf("compute: %s = %v, want %v", src, got, want)
		}
	}
}

type nestedParams struct {
	Inner exampleParams  `key:"inner" doc:"a block"`
	Opt   *exampleParams `key:"opt" doc:"a block off when absent"`
}

// A block whose value is refused counts as refused in the keys decodeKeys returns; a good
// block does not, and a block off when absent is switched on with its defaults.
func TestDecodeNestedBlocks(t *testing.T) {
	k := KeysOf[nestedParams]("nested")
	for src, want := range map[string]string{
		"inner: {peak: 0.5}\nopt: {}\n":        "inner",
		"inner: {peak: 3}\nopt: {steps: 99}\n": "opt",
		"inner: {}\nopt: {note: down}\n":       "",
	} {
		n, err := parseYAML("n.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var p nestedParams
		k.Defaults(&p)
		d := newDecoder("n.yaml")
		if got := strings.Join(d.decodeKeys("n", n, k, &p), ","); got != want {
			t.Errorf("%q: refused %q, want %q (%v)", src, got, want, d.errs.err())
		}
		if p.Opt == nil || p.Opt.Ramp != time.Minute || p.Inner.Steps != 3 {
			t.Errorf("%q: the blocks lost their defaults: %+v %+v", src, p.Inner, p.Opt)
		}
	}
}

// Whole-number bounds in the key tables: powers of two from 2¹⁶ up as 2ⁿ, others as
// written.
func TestBoundText(t *testing.T) {
	for x, want := range map[float64]string{1 << 16: "2¹⁶", 1 << 31: "2³¹", 1 << 40: "2⁴⁰", 65535: "65535", 1000: "1000", 0: "0", 1<<16 + 2: "65538"} {
		if got := bound(x); got != want {
			t.Errorf("bound(%v) = %s, want %s", x, got, want)
		}
	}
}

// renderKeyTables rewrites a stale table and refuses a marker naming no block.
func TestRenderKeyTables(t *testing.T) {
	out, err := renderKeyTables("x\n<!-- keys recovery.breaker -->\nstale\n<!-- end keys -->\ny")
	if err != nil || !strings.Contains(out, "| `window` | duration > 0 | `1m` |") || strings.Contains(out, "stale") {
		t.Errorf("stale table: %v\n%s", err, out)
	}
	if _, err := renderKeyTables("<!-- keys recovery.nosuch -->\n<!-- end keys -->"); err == nil {
		t.Error("a marker naming no block was accepted")
	}
}
