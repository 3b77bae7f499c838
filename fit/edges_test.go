package fit

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
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

// TestLostShareLessTheSlowShare: when the fitted latency puts a share S of successes past
// the timeout, the lost share is (τ − S)/(1 − S); with no success to fit a latency, it is
// τ itself. Successes spread up to the timeout make S clearly above 0.
func TestLostShareLessTheSlowShare(t *testing.T) {
	var atts []Attempt
	ln := distuv.LogNormal{Mu: math.Log(10), Sigma: 1}
	for i := range 40 { // the quantiles of a lognormal of median 10 s, those below 30 s
		if s := ln.Quantile((float64(i) + 0.5) / 40); s < 30 {
			atts = append(atts, Attempt{Start: float64(i), Seconds: s, Wall: s, Status: StatusOK})
		}
	}
	oks := len(atts)
	for i := range 10 {
		atts = append(atts, Attempt{Start: float64(100 + i), Seconds: 30, Wall: 30, Status: StatusTimeout})
	}
	f := fitTool(ToolObs{Name: "slow", Attempts: atts}, nil)
	if f.Latency == nil || f.Timeout != 30 {
		t.Fatalf("latency %v, timeout %v", f.Latency, f.Timeout)
	}
	slow := 1 - f.Latency.CDF(30)
	if slow < 0.01 {
		t.Fatalf("the fitted latency %v puts only %v past the timeout: the test needs more", f.Latency, slow)
	}
	tau := 10.0 / float64(oks+10)
	if want := (tau - slow) / (1 - slow); math.Abs(f.Lost.P-want) > 1e-12 || f.Lost.P >= tau {
		t.Errorf("lost share %v, want (τ − S)/(1 − S) = %v (τ %v, S %v)", f.Lost.P, want, tau, slow)
	}
	g := fitTool(ToolObs{Name: "dead", Attempts: atts[oks:]}, nil)
	if g.Latency != nil || g.Lost.P != 1 || g.Lost.N != 10 {
		t.Errorf("only timeouts: latency %v, lost %+v; want none and all 10 lost", g.Latency, g.Lost)
	}
}

// TestTokenLatencyOfAnExactLine: 10 turns whose time is exactly 2 s + 0.5 s per 1000
// tokens give the slope 0.5 with no spread; 9 turns are too few; tokens all equal give
// no slope.
func TestTokenLatencyOfAnExactLine(t *testing.T) {
	var k, secs []float64
	for i := range 10 {
		k = append(k, float64(i+1))
		secs = append(secs, 2+0.5*float64(i+1))
	}
	m := tokenLatency(k, secs)
	if m == nil || math.Abs(m.Per1k-0.5) > 1e-9 || math.Abs(m.Lo-0.5) > 1e-6 || math.Abs(m.Hi-0.5) > 1e-6 || m.N != 10 {
		t.Errorf("model %+v, want 0.5 s per 1000 tokens, no spread, 10 turns", m)
	}
	if m := tokenLatency(k[:9], secs[:9]); m != nil {
		t.Errorf("9 turns: %+v, want none", m)
	}
	if m := tokenLatency([]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, secs); m != nil {
		t.Errorf("equal tokens: %+v, want none", m)
	}
}

// TestGrowthFromThreeTurns: three turns with tokens are enough for a growth; two are not.
func TestGrowthFromThreeTurns(t *testing.T) {
	turns := []Turn{{1, 5, 1100}, {2, 5.5, 1210}, {3, 6, 1331}}
	var s Scenario
	s.fitTurns(turns)
	if math.Abs(s.Growth.Factor-1.1) > 1e-9 || s.Tokens == nil {
		t.Errorf("three turns: growth %+v, tokens %v; want 1.1 and a fit", s.Growth, s.Tokens)
	}
	s = Scenario{}
	s.fitTurns(turns[:2])
	if s.Growth != (Growth{}) || s.Tokens != nil {
		t.Errorf("two turns: growth %+v, tokens %v; want neither", s.Growth, s.Tokens)
	}
}

// TestCountsUniformClosedForm: counts 1, 2, 2, 3, 3, 3, 4 (c_lo = c_hi = 1 of n = 7, two
// inner counts) give W = 2/(1 − 2/7) = 2.8 and u = v = 2.8/7 = 0.4: [1.1, 3.9).
func TestCountsUniformClosedForm(t *testing.T) {
	d := countUniform([]float64{1, 2, 2, 3, 3, 3, 4}, 0)
	if math.Abs(d.Min-1.1) > 1e-12 || math.Abs(d.Max-3.9) > 1e-12 {
		t.Errorf("uniform [%v, %v), want [1.1, 3.9)", d.Min, d.Max)
	}
}

// TestRefineWithoutNeighbours: a window with no success before its failures starts at the
// first failure; one with no success after ends at the last; else each end is halfway to
// the neighbouring success.
func TestRefineWithoutNeighbours(t *testing.T) {
	fails := []Attempt{{Start: 100, Status: StatusTimeout}, {Start: 110, Status: StatusTimeout}, {Start: 120, Status: StatusTimeout}}
	in := Incident{Tool: "t", Start: 60, End: 180}
	for _, c := range []struct {
		ok       []float64
		at, till float64
	}{{nil, 100, 120}, {[]float64{200}, 100, 160}, {[]float64{40}, 70, 120}, {[]float64{40, 200}, 70, 160}} {
		atts := slices.Clone(fails)
		for _, s := range c.ok {
			atts = append(atts, Attempt{Start: s, Status: StatusOK})
		}
		at, d, ok := refine(atts, in, StatusTimeout)
		if !ok || at != c.at || at+d != c.till {
			t.Errorf("successes at %v: window %v to %v, want %v to %v", c.ok, at, at+d, c.at, c.till)
		}
	}
	if _, _, ok := refine(fails, in, StatusError); ok {
		t.Errorf("no failure of the kind: a window")
	}
}

// TestChooseWhenEveryFamilyIsRefused: every candidate a pareto of infinite mean: the least
// AIC is kept, and the note says so.
func TestChooseWhenEveryFamilyIsRefused(t *testing.T) {
	x := []float64{1, 2, 3, 5, 8}
	cands := []Dist{{Family: Pareto, Min: 1, Alpha: 0.9, AIC: 12}, {Family: Pareto, Min: 1, Alpha: 0.5, AIC: 10}, {Family: Pareto, Min: 1, Alpha: 0.7, AIC: 11}}
	d := choose(cands, x, 0)
	if d.AIC != 10 || len(d.Refused) == 0 || !strings.Contains(d.Refused[len(d.Refused)-1], "least AIC") {
		t.Errorf("chose %+v, want the AIC 10 one with a note", d)
	}
}

// TestRetryLineNeedsFiveBackoffs: five first backoffs are enough to write the policy,
// four are not.
func TestRetryLineNeedsFiveBackoffs(t *testing.T) {
	for gaps, want := range map[int]bool{4: false, 5: true} {
		var b strings.Builder
		Scenario{Retry: RetryFit{MaxAttempts: 3, Jitter: "full", Initial: 1, Multiplier: 2, Max: 10, Gaps: gaps}}.writeRecovery(&b)
		if got := strings.Contains(b.String(), "initial:"); got != want {
			t.Errorf("%d backoffs: policy written %v, want %v:\n%s", gaps, got, want, b.String())
		}
	}
}

// TestNoTimeoutWithoutTimeouts: a tool whose attempts all succeeded has no timeout, however
// slow its slowest success.
func TestNoTimeoutWithoutTimeouts(t *testing.T) {
	var atts []Attempt
	for i := range 5 {
		s := 1 + float64(i)
		atts = append(atts, Attempt{Start: float64(i), Seconds: s, Wall: s, Status: StatusOK})
	}
	f := fitTool(ToolObs{Name: "ok", Attempts: atts}, nil)
	if f.Timeout != 0 || f.TimedOut != 0 || f.Slowest != 5 {
		t.Errorf("timeout %v (timed out %v, slowest %v), want none", f.Timeout, f.TimedOut, f.Slowest)
	}
}

// TestOnePieceIsNotPiecewise: an arrival of one piece is written as a plain rate.
func TestOnePieceIsNotPiecewise(t *testing.T) {
	r := PoissonRate(100, 3600)
	r.To = 3600
	var b strings.Builder
	Scenario{Investigations: 100, Arrival: ArrivalFit{Rate: r, Piecewise: []Rate{r}}}.writeWorkload(&b)
	if strings.Contains(b.String(), "piecewise") || !strings.Contains(b.String(), "100/h") {
		t.Errorf("one piece written as:\n%s", b.String())
	}
}

// TestIncidentKinds: an incident of timeouts between two successes is a hang from halfway
// between the last success and the first timeout to halfway between the last timeout and
// the next success; the same with fast failures is an outage; a few fast failures among
// slow successes a brownout whose probability is the share of failures above the transient
// base, (3/10 − 0.1)/(1 − 0.1), and whose slowdown is the successes' median over the
// tool's (4 s over 1 s); an incident without attempts is no fault.
func TestIncidentKinds(t *testing.T) {
	in := Incident{Tool: "t", Start: 60, End: 180}
	window := func(status string) []Attempt {
		atts := []Attempt{{Start: 40, Seconds: 1, Status: StatusOK}, {Start: 220, Seconds: 1, Status: StatusOK}}
		for s := 100.0; s <= 160; s += 10 {
			atts = append(atts, Attempt{Start: s, Seconds: 30, Status: status})
		}
		return atts
	}
	for status, kind := range map[string]string{StatusTimeout: "hang", StatusError: "outage"} {
		f, ok := incidentFault(in, ToolObs{Name: "t", Attempts: window(status)}, ToolFit{})
		if !ok || f.Kind != kind || f.At != 70 || f.For != 120 || f.Attempts != 7 || f.Failed != 7 {
			t.Errorf("%s: %+v (%v), want a %s from 70 s for 120 s, 7 of 7 failed", status, f, ok, kind)
		}
	}
	var atts []Attempt
	for i := range 10 {
		a := Attempt{Start: 100 + 5*float64(i), Seconds: 4, Status: StatusOK}
		if i%3 == 0 && i < 9 {
			a.Status = StatusError
		}
		atts = append(atts, a)
	}
	lat := Dist{Family: Constant, Value: 1}
	tf := ToolFit{Transient: Proportion{P: 0.1}, Latency: &lat, Median: [3]float64{1, 1, 1}}
	f, ok := incidentFault(in, ToolObs{Name: "t", Attempts: atts}, tf)
	if !ok || f.Kind != "brownout" || f.At != 60 || f.For != 120 || f.Attempts != 10 || f.Failed != 3 ||
		math.Abs(f.Probability-(0.3-0.1)/0.9) > 1e-12 || f.Slowdown != 4 {
		t.Errorf("brownout %+v (%v), want 3 of 10 failed, probability %v, slowdown 4", f, ok, (0.3-0.1)/0.9)
	}
	tf.Transient.P = math.NaN()
	if f, _ := incidentFault(in, ToolObs{Name: "t", Attempts: atts}, tf); math.Abs(f.Probability-0.3) > 1e-12 {
		t.Errorf("no transient base: probability %v, want 0.3", f.Probability)
	}
	if _, ok := incidentFault(Incident{Tool: "t", Start: 500, End: 560}, ToolObs{Name: "t", Attempts: atts}, tf); ok {
		t.Errorf("an incident without attempts made a fault")
	}
}

// TestFitRetryJitter: backoffs read from attempts n and n+1 of one operation after a fast
// failure: all equal is no jitter, spread down to about half equal jitter, spread to 0
// full; fewer than five first backoffs keep the defaults. The highest attempt number is
// the policy's max_attempts.
func TestFitRetryJitter(t *testing.T) {
	obs := func(first func(i int) float64) Observed {
		var atts []Attempt
		for i := range 20 {
			op := string(rune('a' + i))
			start := 1000 * float64(i)
			atts = append(atts, Attempt{Start: start, Wall: 1, Status: StatusError, Op: op, Attempt: 1},
				Attempt{Start: start + 1 + first(i), Wall: 1, Status: StatusError, Op: op, Attempt: 2},
				Attempt{Start: start + 2 + 4*first(i), Wall: 1, Status: StatusOK, Op: op, Attempt: 3})
		}
		return Observed{Tools: []ToolObs{{Name: "t", Attempts: atts}}}
	}
	for _, c := range []struct {
		first  func(int) float64
		jitter string
	}{
		{func(int) float64 { return 2 }, "none"},
		{func(i int) float64 { return 1 + float64(i)/19 }, "equal"},
		{func(i int) float64 { return 2 * float64(i) / 19 }, "full"},
	} {
		r := fitRetry(obs(c.first))
		if r.Jitter != c.jitter || r.Gaps != 20 || r.MaxAttempts != 3 {
			t.Errorf("jitter %s, %d backoffs, max attempts %d; want %s, 20, 3", r.Jitter, r.Gaps, r.MaxAttempts, c.jitter)
		}
		if want := r.Initial * r.Multiplier; math.Abs(r.Max-want) > 1e-9 {
			t.Errorf("%s: max %v, want initial × multiplier = %v", c.jitter, r.Max, want)
		}
	}
	if r := fitRetry(obs(func(int) float64 { return 2 })); r.Initial != 2 || r.Multiplier != 3 {
		t.Errorf("no jitter: initial %v, multiplier %v; want 2 and 3", r.Initial, r.Multiplier)
	}
	o := obs(func(int) float64 { return 2 })
	o.Tools[0].Attempts = o.Tools[0].Attempts[:12]
	if r := fitRetry(o); r.Gaps != 4 || r.Jitter != "full" || r.Multiplier != 2 || r.Initial != 0 {
		t.Errorf("4 backoffs: %+v, want the defaults", r)
	}
}

// TestFitHumans: the most reviews at once (two overlap, a third ends as another starts),
// their time and the approval share.
func TestFitHumans(t *testing.T) {
	h := fitHumans([]Review{{0, 10, true}, {5, 10, false}, {15, 10, true}, {25, 10, true}})
	if h == nil || h.Reviewers != 2 || h.Approve.K != 3 || h.Approve.N != 4 || h.ReviewTime.Family != Constant || h.ReviewTime.Value != 10 {
		t.Errorf("humans %+v, want 2 reviewers, 3 of 4 approved, a constant 10 s", h)
	}
	if h := fitHumans(nil); h != nil {
		t.Errorf("no review: %+v", h)
	}
}

// TestKSOneBothSides: the KS distance is the larger of the gaps above and below the
// empirical function. Under a uniform law on [0, 4), 0.5, 3, 3.5, 4 (F = 1/8, 3/4, 7/8, 1)
// lie at most 1/8 below the steps and 3/4 − 1/4 = 1/2 above them (at the second); truncated
// at 2, the law puts all its weight below every point but the first.
func TestKSOneBothSides(t *testing.T) {
	x := []float64{0.5, 3, 3.5, 4}
	u := Dist{Family: Uniform, Min: 0, Max: 4}
	if ks := ksOne(x, u, 0); math.Abs(ks-0.5) > 1e-12 {
		t.Errorf("KS %v, want 0.5", ks)
	}
	if ks := ksOne([]float64{1, 2, 3, 4}, u, 0); math.Abs(ks-0.25) > 1e-12 {
		t.Errorf("KS %v, want 0.25", ks)
	}
	if ks := ksOne(x, Dist{Family: Uniform, Min: 10, Max: 11}, 5); ks != 1 {
		t.Errorf("a truncation the law never reaches: KS %v, want 1", ks)
	}
}

// TestFitSteps: the steps of completed investigations are fitted as counts; without any,
// a note says they were left at 1.
func TestFitSteps(t *testing.T) {
	obs := synthetic()
	s, err := Fit(obs)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Counts(obs.Steps, 1)
	if s.Steps == nil || s.Steps.Family != want.Family || s.Steps.N != len(obs.Steps) {
		t.Errorf("steps %v, want %v", s.Steps, want)
	}
	obs.Steps = nil
	if s, _ = Fit(obs); s.Steps != nil || !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "steps left at 1") }) {
		t.Errorf("no steps: %v, notes %q", s.Steps, s.Notes)
	}
}

// TestMaximiseFromAnUndefinedStart: a start whose likelihood is 0 is returned as is, with
// its −∞, rather than searched from (here the likelihood is defined everywhere else, so a
// search would find the maximum at 3); a defined start is improved to the maximum.
func TestMaximiseFromAnUndefinedStart(t *testing.T) {
	ll := func(p []float64) float64 {
		if p[0] == -1 {
			return math.Inf(-1)
		}
		return -(p[0] - 3) * (p[0] - 3)
	}
	if p, v := maximise(ll, []float64{-1}); p[0] != -1 || !math.IsInf(v, -1) {
		t.Errorf("undefined start: %v, %v; want it back with −∞", p, v)
	}
	if p, v := maximise(ll, []float64{1}); math.Abs(p[0]-3) > 1e-3 || v < -1e-6 {
		t.Errorf("from 1: %v, %v; want 3 and 0", p, v)
	}
}
