package scenarios

import (
	"errors"
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
