package scenarios

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// rampParams are the parameters of a fault kind registered only by these tests.
type rampParams struct {
	Ramp time.Duration `key:"climb,>0,default=1m" doc:"time the latency takes to reach its peak"`
	Peak float64       `key:"summit,min=1,max=100,default=2" want:"a latency factor in [1, 100]" doc:"the latency factor at the peak"`
}

// withRampKind registers the kind ramp_test (a window on a tool, with rampParams) for the
// test and removes it, and its keys, when the test ends.
func withRampKind(t *testing.T) {
	t.Helper()
	table, kinds, model := slices.Clone(faultTable), slices.Clone(faultKinds), slices.Clone(modelFaultKinds)
	keys, sub := slices.Clone(faultSchema.keys), maps.Clone(faultSchema.sub)
	tool := faultSchema.sub["tool"].doc
	t.Cleanup(func() {
		faultTable, faultKinds, modelFaultKinds = table, kinds, model
		faultSchema.keys, faultSchema.sub = keys, sub
		faultSchema.sub["kind"].enum, faultSchema.sub["tool"].doc = faultKinds, tool
		syncHuntFault()
	})
	RegisterFault(FaultRule{
		Kind: "ramp_test", Doc: "latency ramps up over the window",
		Keys: []string{"tool", "at", "for"}, Params: KeysOf[rampParams]("ramp_test's parameters"),
		Required: []string{"for", "climb"}, Window: true,
	})
}

const rampFile = `name: t
tools:
  search: {latency: {dist: constant, value: 1s}, timeout: 30s}
faults:
  - {id: slow, kind: ramp_test, tool: search, for: 10m, climb: 2m}
`

// TestFaultParams: a kind's own keys, declared by tags on its parameter type, are decoded
// into Fault.Params with their defaults, refused with file, line and key, overridden with
// --set, written to the scenario's JSON and listed by the JSON Schema and the tables.
func TestFaultParams(t *testing.T) {
	withRampKind(t)
	s, err := Parse("t.yaml", []byte(rampFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.Faults[0].Params.(*rampParams)
	if !ok || p.Ramp != 2*time.Minute || p.Peak != 2 {
		t.Fatalf("Params = %#v; want ramp 2m and the default peak 2", s.Faults[0].Params)
	}
	js := string(s.JSON())
	if !strings.Contains(js, `"kind":"ramp_test","tool":"search","for":600000000000,"climb":120000000000,"summit":2}`) {
		t.Errorf("the JSON lacks the parameters after the fields: %s", js)
	}

	s, err = Parse("t.yaml", []byte(rampFile), []string{"faults[0].summit=5", "faults[0].climb=30s"})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Faults[0].Params.(*rampParams); p.Peak != 5 || p.Ramp != 30*time.Second {
		t.Errorf("after --set: %+v", p)
	}

	for set, want := range map[string]string{
		"faults[0].summit=200":  "t.yaml: --set faults[0].summit=200: faults[0].summit: 200 is too large; want at most 100",
		"faults[0].climb=0s":    "faults[0].climb",
		"faults[0].climbb=1m":   `unknown key "climbb" (did you mean climb?)`,
		"faults[0].factor=2":    "a ramp_test fault takes no factor; it takes id, kind, tool, at, for, climb and summit",
		"faults[0].summit=true": "faults[0].summit",
	} {
		_, err := Parse("t.yaml", []byte(rampFile), []string{set})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v; want %q", set, err, want)
		}
	}
	_, err = Parse("t.yaml", []byte(strings.Replace(rampFile, ", climb: 2m", "", 1)), nil)
	if err == nil || !strings.Contains(err.Error(), "t.yaml:5: faults[0]: a ramp_test fault needs climb") {
		t.Errorf("missing ramp: %v", err)
	}

	var sch map[string]any
	if err := json.Unmarshal(JSONSchema(), &sch); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(JSONSchema()), `"climb"`) || !strings.Contains(FaultKindTable(), "| `ramp_test` | `tool`, `at`, `for`*, `climb`*, `summit` | latency ramps up over the window |") {
		t.Errorf("the JSON Schema or the kinds table lacks the parameters:\n%s", FaultKindTable())
	}
	if tab, err := KeyTable("faults"); err != nil || !strings.Contains(tab, "| `summit` | number, 1 to 100 | `2` | the latency factor at the peak |") {
		t.Errorf("faults key table (%v):\n%s", err, tab)
	}
}

// TestFaultParamsBuiltInGo: a fault built in Go takes its kind's defaults from Validate, and
// a value out of bounds, or parameters of another type, are Validate's errors.
func TestFaultParamsBuiltInGo(t *testing.T) {
	withRampKind(t)
	base, err := Parse("t.yaml", []byte(rampFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := *base
	s.Faults = []Fault{{ID: "slow", Kind: "ramp_test", Tool: "search", For: time.Minute}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Faults[0].Params.(*rampParams); !ok || p.Ramp != time.Minute || p.Peak != 2 {
		t.Errorf("Params after Validate = %#v; want the defaults", s.Faults[0].Params)
	}
	s.Faults = []Fault{{ID: "slow", Kind: "ramp_test", Tool: "search", For: time.Minute, Params: &rampParams{Peak: 500}}}
	err = s.Validate()
	if err == nil || !strings.Contains(err.Error(), "faults[0].summit") {
		t.Errorf("peak 500: %v", err)
	}
	if p := s.Faults[0].Params.(*rampParams); p.Ramp != time.Minute {
		t.Errorf("a zero ramp was not given its default: %v", p.Ramp)
	}
	s.Faults = []Fault{{ID: "slow", Kind: "ramp_test", Tool: "search", For: time.Minute, Params: &struct{}{}}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "want a *scenarios.rampParams") {
		t.Errorf("wrong Params type: %v", err)
	}
	s.Faults = []Fault{{ID: "x", Kind: FaultHang, Tool: "search", At: time.Minute, For: time.Minute, Params: &rampParams{}}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "takes no parameters of its own") {
		t.Errorf("Params on a hang: %v", err)
	}
}

// TestFaultParamsRefused: parameters that clash with the key tree are programming errors.
func TestFaultParamsRefused(t *testing.T) {
	type clash struct {
		Share time.Duration `key:"share,>0" doc:"a share that is a duration"`
	}
	type needed struct {
		X float64 `key:"x,need" doc:"x"`
	}
	for name, r := range map[string]FaultRule{
		"clash":  {Kind: "clash_test", Params: KeysOf[clash]("")},
		"need":   {Kind: "need_test", Params: KeysOf[needed]("")},
		"shared": {Kind: "shared_test", Keys: []string{"summit"}, Params: KeysOf[rampParams]("")},
	} {
		t.Run(name, func(t *testing.T) {
			withRampKind(t)
			defer func() {
				if recover() == nil {
					t.Errorf("%s registered", r.Kind)
				}
			}()
			RegisterFault(r)
		})
	}
}

// everyKind has a key of every kind of value, none with a default.
type everyKind struct {
	D    time.Duration `key:"d,>0" doc:"d"`
	I    int           `key:"i,min=3,max=4" doc:"i"`
	N    float64       `key:"n,>0,min=1,max=1.5" doc:"n"`
	M    float64       `key:"m,min=1,max=2" doc:"m"`
	P    float64       `key:"p,prob,>0" doc:"p"`
	C    float64       `key:"c,compute" doc:"c"`
	B    bool          `key:"b" doc:"b"`
	E    string        `key:"e,enum=x|y" doc:"e"`
	T    string        `key:"t" doc:"t"`
	R    Rate          `key:"r,>0" doc:"r"`
	DD   Dist          `key:"dd,dur" doc:"dd"`
	CD   Dist          `key:"cd,min=1" doc:"cd"`
	Peak float64       `key:"peak,min=1,default=2" doc:"with a default"`
}

// TestKeysExample: Example writes a value of every key that its own declaration accepts, so
// a test can write an entry of any fault kind with its required keys.
func TestKeysExample(t *testing.T) {
	k := KeysOf[everyKind]("every kind")
	var src strings.Builder
	for _, name := range k.Names() {
		src.WriteString(name + ": " + k.Example(name) + "\n")
	}
	n, err := parseYAML("p.yaml", []byte(src.String()))
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder("p.yaml")
	var p everyKind
	if bad := d.decodeKeys("p", n, k, &p); len(bad) > 0 {
		t.Errorf("examples refused by their own keys:\n%s\n%v", src.String(), d.errs.err())
	}
	if err := k.Check(&p, "p"); err != nil {
		t.Error(err)
	}
	if k.Example("peak") != "2" || k.Example("nothing") != "" {
		t.Errorf("Example(peak) = %q, Example(nothing) = %q", k.Example("peak"), k.Example("nothing"))
	}
	// Without a default, a number is its minimum plus 1 when that is within its bounds, its
	// maximum included, and the middle of its bounds when they are closer than 1; a whole
	// number is its minimum plus 1.
	for name, want := range map[string]string{"m": "2", "n": "1.25", "i": "4", "cd": "2", "p": "0.5", "d": "1m", "e": "x"} {
		if got := k.Example(name); got != want {
			t.Errorf("Example(%s) = %q; want %q", name, got, want)
		}
	}
}

type climbAgain struct {
	Climb time.Duration `key:"climb,>0,default=1m" doc:"the same key as ramp_test's"`
}

type climbFromZero struct {
	Climb time.Duration `key:"climb,default=1m" doc:"ramp_test's key, but 0 allowed"`
}

// Two fault kinds may share a parameter only if it is declared alike: --set and the JSON
// Schema read one entry per name. A duration above 0 and one from 0 are not alike.
func TestSharedParamMustMatch(t *testing.T) {
	withRampKind(t)
	same := FaultRule{Kind: "climb_again", Params: KeysOf[climbAgain]("parameters")}
	if err := same.addParams(); err != nil {
		t.Errorf("climb declared as ramp_test does: %v; want accepted", err)
	}
	other := FaultRule{Kind: "climb_from_zero", Params: KeysOf[climbFromZero]("parameters")}
	err := other.addParams()
	if err == nil || !strings.HasPrefix(err.Error(), "parameter climb is already a fault key of another kind of value") {
		t.Errorf("climb that may be 0: %v; want refused as another kind of value", err)
	}
}
