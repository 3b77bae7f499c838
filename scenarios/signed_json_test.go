package scenarios

import (
	"encoding/json"
	"strconv"
	"testing"
)

// A signed number (negative values allowed, such as a judge's accuracy lost per attempt) is
// drawn from -1 upward, so generated files reach negative values; an unsigned one from its
// minimum.
func TestGeneratedSignedNumber(t *testing.T) {
	for _, c := range []struct {
		s    *schema
		draw int
		want float64
	}{
		{&schema{kind: kindNumber, signed: true, min: 5}, 0, -1},
		{&schema{kind: kindNumber, signed: true}, 50, -0.5},
		{&schema{kind: kindNumber, min: 2}, 50, 2.5},
	} {
		g := &generator{choose: func(n int) int {
			if n == 32 { // not the rare far value
				return 1
			}
			return c.draw % n
		}}
		v := g.number(c.s)
		if got, err := strconv.ParseFloat(v.Value, 64); err != nil || got != c.want {
			t.Errorf("number(signed %t, min %v), draw %d = %s; want %v", c.s.signed, c.s.min, c.draw, v.Value, c.want)
		}
	}
}

// A fault's own parameters come back from its JSON; a kind without parameters, or one not
// registered, decodes its fields alone.
func TestFaultJSONParams(t *testing.T) {
	withRampKind(t)
	s, err := Parse("t.yaml", []byte(rampFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&s.Faults[0])
	if err != nil {
		t.Fatal(err)
	}
	var back Fault
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	p, ok := back.Params.(*rampParams)
	if !ok || *p != *s.Faults[0].Params.(*rampParams) {
		t.Fatalf("params back from %s = %#v, want %#v", b, back.Params, s.Faults[0].Params)
	}
	for _, in := range []string{`{"kind":"no_such_kind","id":"x"}`, `{"kind":"lost_response","id":"y","probability":0.5}`} {
		var f Fault
		if err := json.Unmarshal([]byte(in), &f); err != nil || f.Params != nil || f.ID == "" {
			t.Errorf("Unmarshal(%s) = %+v, %v; want its fields and no params", in, f, err)
		}
	}
}
