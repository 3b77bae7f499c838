package scenarios

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDistRules pins the words both checkers give for each family rule: Parse with the
// file's spelling and line, Validate at the parameter's key. The expected texts are typed
// out, not produced by the code under test.
func TestDistRules(t *testing.T) {
	cases := []struct {
		yaml  string // workload.think as written
		dist  Dist   // the same distribution built in Go
		parse string
		key   string
		valid []string // Validate's messages, in order
	}{
		{"{dist: exponential, mean: 0s}", Dist{Kind: DistExponential},
			"t.yaml:3: workload.think.mean: mean 0s is not positive; want mean > 0",
			"workload.think.mean", []string{"0s; want > 0"}},
		{"{dist: uniform, min: 5s, max: 2s}", Dist{Kind: DistUniform, Min: float64(5 * time.Second), Max: float64(2 * time.Second)},
			"t.yaml:3: workload.think.max: max 2s is below min 5s; want max >= min",
			"workload.think.max", []string{"2s is below min 5s"}},
		{"{dist: lognormal, median: 0s, p95: 0s}", Dist{Kind: DistLognormal},
			"t.yaml:3: workload.think.median: median 0s is not positive; want median > 0",
			"workload.think.median", []string{"0s; want > 0", "0s is not above median 0s"}},
		{"{dist: lognormal, median: 3s, p95: 3s}", Dist{Kind: DistLognormal, Median: float64(3 * time.Second), P95: float64(3 * time.Second)},
			"t.yaml:3: workload.think.p95: p95 3s is not above median 3s; want p95 > median",
			"workload.think.p95", []string{"3s is not above median 3s"}},
		{"{dist: pareto, min: 0s, alpha: 2}", Dist{Kind: DistPareto, Alpha: 2},
			"t.yaml:3: workload.think.min: min 0s is not positive; want min > 0",
			"workload.think.min", []string{"0s; want > 0"}},
		{"{dist: pareto, min: 1s, alpha: 0}", Dist{Kind: DistPareto, Min: float64(time.Second)},
			"t.yaml:3: workload.think.alpha: alpha 0 is not positive; want alpha > 0",
			"workload.think.alpha", []string{"0; want > 0"}},
	}
	for _, c := range cases {
		t.Run(c.yaml, func(t *testing.T) {
			src := "name: t\ntools: {a: {}}\nworkload: {think: " + c.yaml + "}\n"
			if got := strings.TrimSpace(parseErrors(t, src, nil)); got != c.parse {
				t.Errorf("Parse:\n got %s\nwant %s", got, c.parse)
			}
			s, err := Parse("v.yaml", []byte("name: v\ntools: {a: {}}\n"), nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Workload.Think = c.dist
			var list ErrorList
			if !errors.As(s.Validate(), &list) {
				t.Fatalf("Validate accepts %+v", c.dist)
			}
			var got []string
			for _, e := range list {
				if strings.HasPrefix(e.Key, "workload.think.") {
					got = append(got, e.Key+": "+e.Msg)
				}
			}
			var want []string
			for i, m := range c.valid {
				k := c.key
				if i > 0 { // lognormal's second rule is at p95
					k = "workload.think.p95"
				}
				want = append(want, k+": "+m)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Validate:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// A uniform of zero width (min = max) is a constant, valid in a file and built in Go.
func TestUniformOfZeroWidth(t *testing.T) {
	s, err := Parse("t.yaml", []byte("name: t\ntools: {a: {}}\nworkload: {think: {dist: uniform, min: 5s, max: 5s}}\n"), nil)
	if err != nil {
		t.Fatalf("uniform 5s to 5s: %v; want valid", err)
	}
	if got, want := s.Workload.Think, (Dist{Kind: DistUniform, Min: float64(5 * time.Second), Max: float64(5 * time.Second)}); got != want {
		t.Errorf("think = %+v; want %+v", got, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate of uniform 5s to 5s: %v; want valid", err)
	}
}
