package fit

import (
	"math"
	"strings"
	"testing"
)

// TestLostShareAmongAttemptsNotFailedFast: the lost share is counted among the attempts
// that did not fail fast. 3 successes of about a second, 4 fast failures and 3 timeouts of
// 30 s: τ = 3/6 (not 3/10). The successes' fitted latency puts next to nothing beyond
// 30 s, so the lost share is τ itself, and its interval is Wilson's interval of 3 in 6.
func TestLostShareAmongAttemptsNotFailedFast(t *testing.T) {
	var atts []Attempt
	for i, s := range []float64{1, 1.2, 1.4} {
		atts = append(atts, Attempt{Start: float64(i), Seconds: s, Wall: s, Status: StatusOK})
	}
	for i := range 4 {
		atts = append(atts, Attempt{Start: float64(10 + i), Seconds: 0.1, Wall: 0.1, Status: StatusError})
	}
	for i := range 3 {
		atts = append(atts, Attempt{Start: float64(20 + i), Seconds: 30, Wall: 30, Status: StatusTimeout})
	}
	f := fitTool(ToolObs{Name: "search", Attempts: atts}, nil)
	if f.Timeout != 30 || f.Latency == nil {
		t.Fatalf("timeout %v, latency %v: want 30 s and a fit", f.Timeout, f.Latency)
	}
	w := Wilson(3, 6)
	if f.Lost.K != 3 || f.Lost.N != 6 || math.Abs(f.Lost.P-0.5) > 1e-3 ||
		math.Abs(f.Lost.Lo-w.Lo) > 1e-3 || math.Abs(f.Lost.Hi-w.Hi) > 1e-3 {
		t.Errorf("lost %+v, want 3 of 6 (0.5, interval [%.4f, %.4f])", f.Lost, w.Lo, w.Hi)
	}
	if f.Transient.K != 4 || f.Transient.N != 10 {
		t.Errorf("transient %+v, want 4 of 10", f.Transient)
	}
}

// TestCountLikelihoodAtFloor: a count at floor gathers every draw below floor + ½, a count
// above it only its own cell. Under a uniform law on [0, 10) (F(x) = x/10), counts 1 and 2
// with floor 1 have probabilities F(1.5) = 0.15 and F(2.5) − F(1.5) = 0.1.
func TestCountLikelihoodAtFloor(t *testing.T) {
	cdf := func(x float64) float64 { return math.Min(1, math.Max(0, x/10)) }
	if ll, want := countLL([]float64{1, 2}, 1, cdf), math.Log(0.15)+math.Log(0.1); math.Abs(ll-want) > 1e-12 {
		t.Errorf("log-likelihood %v, want ln 0.15 + ln 0.1 = %v", ll, want)
	}
	if ll := countLL([]float64{20}, 1, cdf); !math.IsInf(ll, -1) {
		t.Errorf("a count of probability 0: log-likelihood %v, want −∞", ll)
	}
}

// TestBackoffMultiplierWithJitter: with jitter, D_n is the largest of k backoffs times
// (k+1)/k. Five first backoffs up to 1 s and five second ones up to 3 s give d = 1.2,
// m = 3 and the upper bound 1/0.05^(1/5); with only four second backoffs m stays 2.
func TestBackoffMultiplierWithJitter(t *testing.T) {
	var gaps []gap
	for i := 1; i <= 5; i++ {
		gaps = append(gaps, gap{1, 0.2 * float64(i)}, gap{2, 0.6 * float64(i)})
	}
	d, m, hi := backoff(gaps, "full")
	if math.Abs(d-1.2) > 1e-12 || m != 3 || math.Abs(hi-1/math.Pow(0.05, 0.2)) > 1e-12 {
		t.Errorf("backoff %v, multiplier %v, hi %v; want 1.2, 3, %v", d, m, hi, 1/math.Pow(0.05, 0.2))
	}
	if _, m, _ := backoff(gaps[:9], "equal"); m != 2 {
		t.Errorf("four second backoffs: multiplier %v, want the default 2", m)
	}
}

// TestGrowthOfAnExactFit: tokens that grow by exactly 1.1 a turn leave no residual, so
// the growth's interval is the point itself.
func TestGrowthOfAnExactFit(t *testing.T) {
	var turns []Turn
	for i := 1; i <= 6; i++ {
		turns = append(turns, Turn{Index: i, Seconds: 5 + 0.1*float64(i%2), Tokens: 1000 * math.Pow(1.1, float64(i))})
	}
	var s Scenario
	s.fitTurns(turns)
	g := s.Growth
	if math.Abs(g.Factor-1.1) > 1e-9 || math.Abs(g.Lo-g.Factor) > 1e-9 || math.Abs(g.Hi-g.Factor) > 1e-9 {
		t.Errorf("growth %+v, want exactly 1.1 with no spread", g)
	}
	if s.Tokens == nil || math.Abs(s.Tokens.MedianOf()-1000) > 1e-6*1000 {
		t.Errorf("tokens %v, want the constant 1000 once growth is divided out", s.Tokens)
	}
}

// TestSubagentShare: the share of spawning steps is spawns over steps tried; without a
// step tried there is nothing to fit.
func TestSubagentShare(t *testing.T) {
	var s Scenario
	s.fitSubagents(Observed{Spawns: []float64{2, 2, 3}, StepsTried: 10})
	if s.Subagents == nil || s.Subagents.Probability.K != 3 || s.Subagents.Probability.N != 10 || s.Subagents.MaxDepth != 1 {
		t.Fatalf("subagents %+v, want 3 spawns of 10 steps, depth 1", s.Subagents)
	}
	s = Scenario{}
	if s.fitSubagents(Observed{Spawns: []float64{2}}); s.Subagents != nil {
		t.Errorf("no step tried: subagents %+v, want none", s.Subagents)
	}
}

// TestFailureShare counts fast failures and timeouts alike.
func TestFailureShare(t *testing.T) {
	ts := ToolObs{Attempts: []Attempt{{Status: StatusOK}, {Status: StatusError}, {Status: StatusTimeout}, {Status: StatusOK}}}
	if f := failureShare(ts); f != 0.5 {
		t.Errorf("failure share %v, want 2 of 4", f)
	}
	if f := failureShare(ToolObs{}); !math.IsNaN(f) {
		t.Errorf("no attempt: failure share %v, want undefined", f)
	}
}

// TestPoissonRateAtFewEvents: the exact interval at 0 and 1 events has a closed form
// (χ² with 2 degrees of freedom is exponential: its p quantile is −2 ln(1 − p)): for 0
// events [0, −ln 0.025 / t], for 1 event a lower bound of −ln 0.975 / t.
func TestPoissonRateAtFewEvents(t *testing.T) {
	r := PoissonRate(0, 100)
	if r.Lo != 0 || math.Abs(r.Hi+math.Log(0.025)/100) > 1e-9 {
		t.Errorf("0 events in 100 s: %+v, want [0, %v]", r, -math.Log(0.025)/100)
	}
	if r := PoissonRate(1, 100); math.Abs(r.Lo+math.Log(0.975)/100) > 1e-9 {
		t.Errorf("1 event in 100 s: lower bound %v, want %v", r.Lo, -math.Log(0.975)/100)
	}
}

// TestNumbersInTheFile: four significant digits, no more and no fewer, and no exponent.
func TestNumbersInTheFile(t *testing.T) {
	for x, want := range map[float64]string{0.25: "0.25", 3: "3", 1234.56: "1235", 0.000123456: "0.0001235", -2.5: "-2.5"} {
		if got := num(x); got != want {
			t.Errorf("num(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestLostResponseNeedsATimeout: a lost reply is only seen as a timeout, so a tool without
// one gets no lost_response fault, whatever its share reads.
func TestLostResponseNeedsATimeout(t *testing.T) {
	for _, timeout := range []float64{0, 30} {
		s := Scenario{Tools: []ToolFit{{Name: "search", Timeout: timeout, Lost: Proportion{K: 1, N: 2, P: 0.5, Lo: 0.1, Hi: 0.9}}}}
		var b strings.Builder
		s.writeFaults(&b)
		if got := strings.Contains(b.String(), "kind: lost_response"); got != (timeout > 0) {
			t.Errorf("timeout %v: lost_response written %v, want %v:\n%s", timeout, got, timeout > 0, b.String())
		}
	}
}

// TestFaultIDs: the characters next to each allowed range ('@' '[' before and after A–Z,
// '`' '{' around a–z, '/' ':' around 0–9) become -, an id made twice gets -2 then -3, and
// an id is cut at 100 characters before its suffix.
func TestFaultIDs(t *testing.T) {
	ids := faultIDs{}
	for _, want := range []string{"-AZ--az--09-_.--", "-AZ--az--09-_.---2", "-AZ--az--09-_.---3"} {
		if got := ids.make("@AZ[`az{/09:_.-é"); got != want {
			t.Errorf("id %q, want %q", got, want)
		}
	}
	long := strings.Repeat("x", 150)
	if a, b := ids.make(long), ids.make(long); a != long[:100] || b != long[:100]+"-2" {
		t.Errorf("long ids %q and %q, want 100 characters, then with -2", a, b)
	}
}

// TestPlainYAML: bare words start with a letter or _, hold letters, digits, _, - and dots,
// and are not YAML's booleans or null.
func TestPlainYAML(t *testing.T) {
	for name, want := range map[string]bool{
		"Az_az-09.": true, "_x": true, "Z": true, "z9": true,
		"": false, "9a": false, "-a": false, ".a": false, "a@": false, "a[": false, "a`": false,
		"a{": false, "a/": false, "a:": false, "@a": false, "[a": false, "`a": false, "{a": false,
		"Yes": false, "off": false, "NULL": false, "n": false, "a b": false,
	} {
		if got := plainYAML(name); got != want {
			t.Errorf("plainYAML(%q) = %v, want %v", name, got, want)
		}
	}
	if got := yamlText("a b"); got != `"a b"` {
		t.Errorf("yamlText(%q) = %s, want it quoted", "a b", got)
	}
}
