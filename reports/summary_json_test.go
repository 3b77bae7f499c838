package reports

import (
	"encoding/json"
	"math"
	"testing"
)

// An interval of a metric defined for one seed only has no bounds: JSON, which has no NaN,
// gets null, and reading it back gives NaN again (a summary with such a metric used to fail
// to write at all).
func TestIntervalJSONUndefinedBounds(t *testing.T) {
	in := map[string]Interval{"a": {Mean: 2, Lo: math.NaN(), Hi: math.NaN(), N: 1}, "b": {Mean: 1, Lo: 0.5, Hi: 1.5, N: 3}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if want := `{"a":{"mean":2,"lo":null,"hi":null,"n":1},"b":{"mean":1,"lo":0.5,"hi":1.5,"n":3}}`; string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	var out map[string]Interval
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if a := out["a"]; a.Mean != 2 || !math.IsNaN(a.Lo) || !math.IsNaN(a.Hi) || a.N != 1 {
		t.Errorf("read back a = %+v", a)
	}
	if out["b"] != in["b"] {
		t.Errorf("read back b = %+v, want %+v", out["b"], in["b"])
	}
}
