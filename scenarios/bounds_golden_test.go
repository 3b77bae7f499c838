package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// boundsGolden is what Parse says of every numeric key of the key tree set, by --set, to
// the values at and just past its bounds: the minimum, the float below it, the maximum and
// the whole number or float above it, 0 and 1 for a probability and the floats either
// side, a duration of 0, 1ns and -1ns, a rate of 0, the least above 0 and 1/h. Each line is the assignment and Parse's answer: ok,
// or the errors, one after the other.
const boundsGolden = "testdata/bounds.golden"

// boundsBase is a valid scenario with one tool, a, and room for every block --set adds.
const boundsBase = `name: t
tools:
  a: {latency: {dist: constant, value: 1s}, timeout: 30s}
workload: {workers: 4, zones: {za: 0.5, zb: 0.5}}
`

// Every numeric key is refused past its bounds and accepted at them, with the message it
// had: run `go test ./scenarios -run TestBoundsGolden -update` after a deliberate change,
// and read the diff.
func TestBoundsGolden(t *testing.T) {
	var b strings.Builder
	var walk func(s *schema, path string, depth int)
	walk = func(s *schema, path string, depth int) {
		if s == nil || s.noSet || depth > 8 || s == faultSchema {
			return
		}
		for _, k := range s.keys {
			sub := s.sub[k]
			p := join(path, k)
			if vals := boundValues(sub); vals != nil {
				for _, v := range vals {
					b.WriteString(boundOutcome(t, boundsBase, p+"="+v))
				}
				continue
			}
			walk(sub, p, depth+1)
		}
		if s.elem != nil && s.named {
			walk(s.elem, join(path, "a"), depth+1)
		}
	}
	walk(rootSchema, "", 0)
	// Each fault kind's keys, on a fault of that kind with its required keys.
	for _, r := range faultTable {
		entry := []string{"kind: " + string(r.Kind)}
		for _, k := range r.Required {
			x := r.keySchema(k).example()
			switch k {
			case "tool":
				x = "a"
			case "zone":
				x = "za"
			}
			entry = append(entry, k+": "+x)
		}
		// A brownout needs an effect, a zone crash a zone or a share.
		switch r.Kind {
		case FaultBrownout:
			entry = append(entry, "slowdown: 2")
		case FaultZoneCrash:
			entry = append(entry, "zone: za")
		}
		base := boundsBase + "faults: [{" + strings.Join(entry, ", ") + "}]\n"
		fmt.Fprintf(&b, "## %s\n", base[len(boundsBase):len(base)-1])
		for _, k := range r.allowed() {
			for _, v := range boundValues(r.keySchema(k)) {
				b.WriteString(boundOutcome(t, base, "faults[0]."+k+"="+v))
			}
		}
	}
	checkGolden(t, boundsGolden, "TestBoundsGolden", b.String(), "")
}

// boundValues are the values at and past the bounds of a numeric key, or nil for a key of
// another kind.
func boundValues(s *schema) []string {
	below := func(x float64) string { return fmtNumber(math.Nextafter(x, math.Inf(-1))) }
	above := func(x float64) string { return fmtNumber(math.Nextafter(x, math.Inf(1))) }
	switch s.kind {
	case kindInt:
		v := []string{wholeText(s.min - 1), wholeText(s.min)}
		if s.max > 0 {
			v = append(v, wholeText(s.max), wholeText(s.max+1))
		}
		return v
	case kindNumber, kindCompute:
		if s.signed {
			return []string{"-1e308", "0", "1e308"}
		}
		v := []string{below(s.min), fmtNumber(s.min), above(s.min)}
		if s.max > 0 {
			v = append(v, fmtNumber(s.max), above(s.max))
		}
		return v
	case kindProb, kindProbByClass:
		return []string{below(0), "0", above(0), below(1), "1", above(1)}
	case kindDuration:
		return []string{"-1ns", "0", "1ns"}
	case kindRate:
		return []string{"0/s", "5e-324/s", "1/h"}
	}
	return nil
}

// boundOutcome is one line: the assignment and what Parse says of it.
func boundOutcome(t *testing.T, base, set string) string {
	t.Helper()
	_, err := Parse("b.yaml", []byte(base), []string{set})
	if err == nil {
		return set + ": ok\n"
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("%s: %T is not an ErrorList: %v", set, err, err)
	}
	msgs := make([]string, len(list))
	for i, e := range list {
		msgs[i] = fmt.Sprintf("%d: %s", e.Line, placeholders(e.Error()))
	}
	return set + ": " + strings.Join(msgs, " | ") + "\n"
}

// wholeText writes a whole number with all its digits.
func wholeText(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
