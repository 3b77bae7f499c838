package scenarios

import (
	"reflect"
	"testing"
	"time"
)

const tuneFile = `name: t
tools:
  a: {latency: 1s, timeout: 30s}
faults:
  - {kind: transient, tool: a, probability: 0.2}
tune:
  vary:
    recovery.retry.max_attempts: {min: 1, max: 10}
    recovery.retry.initial: {min: 1s, max: 30s}
    faults[0].probability: {min: 0.05, max: 0.5}
    workload.arrival.poisson: {min: 10/h, max: 100/h}
    recovery.breaker: [null, {failure_ratio: 0.5, cooldown: 1m}]
  maximize: completion_rate
  subject_to: {retry_amplification: "<= 2.25", duplicate_side_effects: "== 0"}
  objectives: [completion_rate, wasted_compute_ratio]
  budget: 10m
`

// A tune block decodes into typed parameters, each of the kind of the key it varies, and
// every value a parameter produces is one its key accepts.
func TestTuneBlock(t *testing.T) {
	s, err := Parse("t.yaml", []byte(tuneFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	tn := s.Tune
	if tn == nil || len(tn.Vary) != 5 || tn.Maximize != "completion_rate" || len(tn.SubjectTo) != 2 ||
		tn.BudgetTime != 10*time.Minute || tn.Budget != 0 || tn.Seeds != DefaultTuneSeeds || tn.Confidence != DefaultTuneConfidence {
		t.Fatalf("tune = %+v", tn)
	}
	kinds := []string{TuneInt, TuneDuration, TuneNumber, TuneRate, TuneChoice}
	for i, p := range tn.Vary {
		if p.Kind != kinds[i] {
			t.Errorf("%s: kind %s, want %s", p.Path, p.Kind, kinds[i])
		}
		for _, u := range []float64{0, 0.13, 0.5, 0.77, 1} {
			v := p.Value(u)
			if _, err := s.With(Override{Path: p.Path, Value: v, From: FromTune}); err != nil {
				t.Errorf("%s=%s (u=%v): %v", p.Path, v, u, err)
			}
			back, ok := p.Unit(v)
			if !ok || p.Value(back) != v {
				t.Errorf("%s: Unit(%s) = %v, %v; Value of it %s", p.Path, v, back, ok, p.Value(back))
			}
		}
	}
	// A whole-number range cut into strata takes each level once.
	seen := map[string]bool{}
	for i := range 10 {
		seen[tn.Vary[0].Value((float64(i)+0.5)/10)] = true
	}
	if len(seen) != 10 || !seen["1"] || !seen["10"] {
		t.Errorf("levels of max_attempts: %v", seen)
	}
	if got := tn.Vary[1].Value(0.5); got != "15.5s" {
		t.Errorf("midpoint of 1s..30s = %s, want 15.5s", got)
	}
}

// A round of candidates is a sweep over the block that holds the varied keys, whose points
// are the candidates' values, in order.
func TestRoundFile(t *testing.T) {
	data := []byte(`name: t
tools:
  a: {latency: 1s, timeout: 30s}
recovery:
  retry: {max_attempts: 3, initial: 2s}
sweep:
  recovery.lease: [1m, 2m]
tune:
  vary:
    recovery.retry.max_attempts: {min: 1, max: 10}
    recovery.retry.initial: {min: 1s, max: 30s}
  maximize: completion_rate
`)
	s, err := Parse("t.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	prefix, ok := RoundPrefix(*s.Tune)
	if !ok || prefix != "recovery.retry" {
		t.Fatalf("prefix %q, %v", prefix, ok)
	}
	points := [][]Override{
		{{Path: "recovery.retry.max_attempts", Value: "2"}, {Path: "recovery.retry.initial", Value: "5s"}},
		{{Path: "recovery.retry.max_attempts", Value: "7"}, {Path: "recovery.retry.initial", Value: "1.5s"}},
	}
	out, err := RoundFile("t.yaml", data, []Override{{Path: "recovery.lease", Value: "3m"}}, prefix, points)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse("round.yaml", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tune != nil || len(r.Sweep) != 1 || r.Sweep[0].Path != prefix || r.Recovery.Lease != 3*time.Minute {
		t.Fatalf("round file:\n%s", out)
	}
	for i, p := range r.Points() {
		c, err := r.With(p...)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := s.With(points[i]...)
		if c.Recovery.Retry != want.Recovery.Retry {
			t.Errorf("point %d: %+v, want %+v", i, c.Recovery.Retry, want.Recovery.Retry)
		}
	}
}

// A budget, as the tune block and --budget write it, is a whole number of runs, one at
// least, or a positive duration of wall time.
func TestParseTuneBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Tune
	}{
		{"1", Tune{Budget: 1}},
		{" 150 ", Tune{Budget: 150}},
		{"10m", Tune{BudgetTime: 10 * time.Minute}},
		{"1ns", Tune{BudgetTime: time.Nanosecond}},
	} {
		if got, err := ParseTuneBudget(c.in); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTuneBudget(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"0", "0 runs; want at least 1"},
		{"-2", "-2 runs; want at least 1"},
		{"0s", `"0s" is not a budget; want a number of runs such as 150, or a duration such as 10m`},
		{"soon", `"soon" is not a budget; want a number of runs such as 150, or a duration such as 10m`},
	} {
		if _, err := ParseTuneBudget(c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseTuneBudget(%q): %v; want %s", c.in, err, c.want)
		}
	}
}

// tune.confidence is a level strictly between 0 and 1: 0 and 1 are refused at their line.
func TestTuneConfidence(t *testing.T) {
	for _, c := range []struct {
		value string
		want  float64
	}{{"0.95", 0.95}, {"0.5", 0.5}, {"0.999", 0.999}} {
		s, err := Parse("t.yaml", []byte(tuneFile+"  confidence: "+c.value+"\n"), nil)
		if err != nil || s.Tune.Confidence != c.want {
			t.Errorf("confidence: %s: %v; want %v", c.value, err, c.want)
			continue
		}
	}
	for _, v := range []string{"0", "1", "-0.5", "1.5"} {
		_, err := Parse("t.yaml", []byte(tuneFile+"  confidence: "+v+"\n"), nil)
		want := "t.yaml:17: tune.confidence: " + v + " is not a confidence level; want a number in (0, 1) such as 0.95"
		if err == nil || err.Error() != want {
			t.Errorf("confidence: %s: %v; want %s", v, err, want)
		}
	}
}

// A round's block is the longest common prefix of the varied paths, segment by segment,
// whatever their order and lengths; keys that share no block have none.
func TestRoundPrefixCases(t *testing.T) {
	for _, c := range []struct {
		paths []string
		want  string
		ok    bool
	}{
		{[]string{"recovery.retry.max_attempts"}, "recovery.retry.max_attempts", true},
		{[]string{"recovery.retry.max_attempts", "recovery.retry.initial"}, "recovery.retry", true},
		{[]string{"recovery.retry.max_attempts", "recovery.breaker", "recovery.retry.initial"}, "recovery", true},
		{[]string{"recovery.breaker", "recovery.breaker.cooldown"}, "recovery.breaker", true},
		{[]string{"recovery.breaker.cooldown", "recovery.breaker"}, "recovery.breaker", true},
		{[]string{"recovery.retry.max", "recovery.retry.max_attempts"}, "recovery.retry", true},
		{[]string{"recovery.lease", "workload.investigations"}, "", false},
		{[]string{"recovery.lease", "workload.steps", "recovery.lease"}, "", false},
		{nil, "", false},
	} {
		var tn Tune
		for _, p := range c.paths {
			tn.Vary = append(tn.Vary, TuneParam{Path: p})
		}
		if got, ok := RoundPrefix(tn); got != c.want || ok != c.ok {
			t.Errorf("RoundPrefix(%v) = %q, %t; want %q, %t", c.paths, got, ok, c.want, c.ok)
		}
	}
}
