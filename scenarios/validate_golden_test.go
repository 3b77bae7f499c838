package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// validateGolden is what Validate says of each embedded example with one field of the
// resolved scenario, as a program builds it in Go, set to a value out of the ordinary: a
// negative, zero, a huge or not-finite number, an empty or malformed word, a flag flipped,
// an optional block or list left out. Each line is the field, the value and Validate's
// answer (its errors, cut at 240 characters, or where the resolved scenario now differs),
// so a change of what Validate accepts,
// of a message or of a default shows in the diff.
const validateGolden = "testdata/validate.golden"

// The examples the golden file perturbs: between them most blocks of the format (humans,
// prices, zones, the model service, subagents, worker crashes, windows of faults).
var validateBases = []string{"research-fleet", "capacity-crunch", "worker-crashes", "tune-and-hunt"}

// tuneAndHunt is a scenario with a tune and a hunt block, for their checks.
const tuneAndHunt = `name: tune-and-hunt
tools:
  search: {latency: {dist: constant, value: 1s}, timeout: 30s}
  notify: {}
workload: {tools: {search: 2, notify: 1}}
tune:
  vary:
    recovery.retry.max_attempts: {min: 1, max: 10}
    recovery.retry.initial: {min: 1s, max: 30s}
    workload.arrival.poisson: {min: 10/h, max: 100/h}
    recovery.breaker: [null, {failure_ratio: 0.5, cooldown: 1m}]
  maximize: completion_rate
  subject_to: {retry_amplification: "<= 2.25"}
  objectives: [completion_rate, wasted_compute_ratio]
  budget: 50
  seeds: 2
  max_seeds: 8
  initial: 4
  confidence: 0.9
hunt:
  faults:
    - {kind: brownout, tool: search, for: {min: 1m, max: 5m}, slowdown: {min: 1.5, max: 8}, probability: 0.1}
    - {kind: transient, tool: search, probability: {min: 0.01, max: 0.2}}
    - {kind: outage, tool: notify, for: 2m, at: {min: 1h, max: 2h}}
  at: {min: 5m, max: 30m}
  max_faults: 2
  budget: 40
  liveness: 15m
  shrink: 20
`

// Go-built scenarios with one field out of the ordinary are refused, or filled in with
// their defaults, as they were: run `go test ./scenarios -run TestValidateGolden -update`
// after a deliberate change, and read the diff.
func TestValidateGolden(t *testing.T) {
	bases := validateBases
	if raceDetector {
		bases = bases[:1] // see race_on_test.go
	}
	var b strings.Builder
	for _, name := range bases {
		data, ok := Embedded(name)
		if name == "tune-and-hunt" {
			data, ok = []byte(tuneAndHunt), true
		}
		if !ok {
			t.Fatalf("no example %s", name)
		}
		load := func() *Scenario {
			s, err := Parse(name+".yaml", data, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		s := load()
		base := s.JSON()
		fmt.Fprintf(&b, "## %s\n", name)
		var fields []fieldAt
		fields = settable(reflect.ValueOf(s).Elem(), "", fields)
		for _, f := range fields {
			for _, x := range oddValues(f.v) {
				old := reflect.New(f.v.Type()).Elem()
				old.Set(f.v)
				f.v.Set(x.v)
				err := s.Validate()
				got := "ok"
				if err != nil {
					got = strings.ReplaceAll(err.Error(), "\n", " | ")
				} else if js, bad := tryJSON(s); bad != "" {
					got = "ok, but " + bad
				} else if !bytes.Equal(js, base) {
					got = "ok, " + jsonDiff(base, js)
				}
				// Validate names the file it was given by Parse.
				got = placeholders(strings.ReplaceAll(got, name+".yaml: ", ""))
				line := fmt.Sprintf("%s = %s: %s", f.path, x.text, got)
				if len(line) > 240 {
					line = line[:240] + "..."
				}
				b.WriteString(line + "\n")
				f.v.Set(old)
				if js, bad := tryJSON(s); bad != "" || !bytes.Equal(js, base) {
					// Validate filled in more than the field: start again from the file.
					s = load()
					fields = settable(reflect.ValueOf(s).Elem(), "", fields[:0])
				}
			}
		}
	}
	upTo := ""
	if len(bases) < len(validateBases) {
		upTo = "## " + validateBases[len(bases)] + "\n"
	}
	checkGolden(t, validateGolden, "TestValidateGolden", b.String(), upTo)
}

type fieldAt struct {
	path string
	v    reflect.Value
}

// settable lists every field under v a program can set: numbers, words, flags, pointers
// and slices, and the fields of the structs and list items under them.
func settable(v reflect.Value, path string, out []fieldAt) []fieldAt {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(SourceInfo{}) {
			return out
		}
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			out = settable(v.Field(i), join(path, v.Type().Field(i).Name), out)
		}
		return out
	case reflect.Pointer:
		out = append(out, fieldAt{path, v})
		if !v.IsNil() {
			out = settable(v.Elem(), path, out)
		}
		return out
	case reflect.Interface:
		if !v.IsNil() && v.Elem().Kind() == reflect.Pointer {
			out = settable(v.Elem().Elem(), path, out)
		}
		return out
	case reflect.Slice:
		out = append(out, fieldAt{path, v})
		if v.Type().Elem().Kind() == reflect.Struct {
			for i := range v.Len() {
				out = settable(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
		return out
	}
	return append(out, fieldAt{path, v})
}

type oddValue struct {
	text string
	v    reflect.Value
}

// oddValues are the values put in a field of v's kind.
func oddValues(v reflect.Value) []oddValue {
	t := v.Type()
	val := func(x any) reflect.Value { return reflect.ValueOf(x).Convert(t) }
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		if t == reflect.TypeOf(time.Duration(0)) {
			return []oddValue{{"-1ns", val(-1)}, {"0", val(0)}, {"1ns", val(1)}, {"max", val(int64(math.MaxInt64))}}
		}
		return []oddValue{{"-1", val(-1)}, {"0", val(0)}, {"1", val(1)}, {"2^62", reflect.ValueOf(int64(1) << 62).Convert(t)}}
	case reflect.Uint64:
		return []oddValue{{"0", val(0)}}
	case reflect.Float64:
		return []oddValue{{"-1", val(-1.0)}, {"0", val(0.0)}, {"1.5", val(1.5)}, {"1e300", val(1e300)}, {"NaN", val(math.NaN())}}
	case reflect.String:
		return []oddValue{{`""`, val("")}, {`"Not Valid"`, val("Not Valid")}}
	case reflect.Bool:
		return []oddValue{{fmt.Sprint(!v.Bool()), val(!v.Bool())}}
	case reflect.Pointer, reflect.Slice:
		if v.IsNil() {
			return nil
		}
		return []oddValue{{"nil", reflect.Zero(t)}}
	}
	return nil
}

// tryJSON is s.JSON(), or the reason it panics.
func tryJSON(s *Scenario) (js []byte, bad string) {
	defer func() {
		if r := recover(); r != nil {
			bad = fmt.Sprint(r)
		}
	}()
	return s.JSON(), ""
}

// jsonDiff names the first place two JSON texts differ, with some context.
func jsonDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-12)
	return fmt.Sprintf("now ...%s...", b[from:min(len(b), i+24)])
}
