package scenarios

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSetValid(t *testing.T) {
	s, err := Load(Default, []string{
		"recovery.retry.max_attempts=7",
		"faults[2].for=10m",
		"tools.backtest.concurrency=12",
		"workload.arrival.poisson=50/m",
		"workload.think={dist: constant, value: 1s}",
		"tools.notify.arguments.channel=ops",
		"expect.makespan=<= 2d",
		"recovery.retry.max_attempts=8", // a later override wins
		"recovery.inspection.interval=30s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Recovery.Retry.MaxAttempts; got != 8 {
		t.Errorf("max_attempts = %d, want 8", got)
	}
	if got := s.Recovery.Inspection; got != (Inspection{Interval: 30 * time.Second, Max: 60}) {
		t.Errorf("inspection = %+v, want interval 30s and the default max 60", got)
	}
	if js := string(s.JSON()); !strings.Contains(js, `"inspection":{"interval":30000000000,"max":60}`) {
		t.Errorf("resolved JSON lacks the inspection block: %s", js)
	}
	if got := s.Faults[2].For; got != 10*time.Minute {
		t.Errorf("faults[2].for = %v, want 10m", got)
	}
	if got := s.Tools[s.Tool("backtest")].Concurrency; got != 12 {
		t.Errorf("backtest concurrency = %d, want 12", got)
	}
	if got := s.Workload.Arrival.Rate.PerSecond; got != 50.0/60 {
		t.Errorf("poisson rate = %v/s, want %v", got, 50.0/60)
	}
	if got := s.Workload.Think; got != (Dist{Kind: DistConstant, Value: float64(time.Second)}) {
		t.Errorf("think = %+v, want constant 1s", got)
	}
	notify := s.Tools[s.Tool("notify")]
	if len(notify.Arguments) != 1 || notify.Arguments[0] != (Argument{Key: "channel", Value: "ops"}) {
		t.Errorf("notify arguments = %+v, want channel=ops", notify.Arguments)
	}
	if i := slices.IndexFunc(s.Expect, func(e Expectation) bool { return e.Metric == "makespan" }); i < 0 ||
		s.Expect[i].Op != "<=" || s.Expect[i].Value != 172800 {
		t.Errorf("added expectation: %+v, want makespan <= 172800 among them", s.Expect)
	}
	plain, _ := Load(Default, nil)
	if plain.Hash() == s.Hash() {
		t.Error("overrides did not change the hash")
	}
}

// A path may add a key the file leaves out; an empty value switches a block off.
func TestSetAddsAndRemoves(t *testing.T) {
	const src = "name: t\ntools: {a: {}}\nrecovery: {breaker: {}}\n"
	s, err := Parse("t.yaml", []byte(src), []string{"recovery.retry_budget.ratio=0.3", "recovery.breaker=", "workload.behaviour.stuck=0.2"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Recovery.Breaker != nil {
		t.Errorf("breaker = %+v, want off", s.Recovery.Breaker)
	}
	if rb := s.Recovery.RetryBudget; rb == nil || *rb != (RetryBudget{Ratio: 0.3, MinPerSecond: 1}) {
		t.Errorf("retry budget = %+v, want ratio 0.3 with the default min_per_second", rb)
	}
	if s.Workload.Behaviour.Stuck != 0.2 {
		t.Errorf("stuck = %v, want 0.2", s.Workload.Behaviour.Stuck)
	}
}

// Changing a value reached through an alias changes only that path, not the anchor's other
// users.
func TestSetThroughAlias(t *testing.T) {
	const src = `name: t
tools:
  a: &common {latency: {dist: constant, value: 1s}, timeout: 10s}
  b: *common
`
	s, err := Parse("t.yaml", []byte(src), []string{"tools.b.latency.value=5s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Tools[0].Latency.Value; got != float64(time.Second) {
		t.Errorf("tool a latency = %v, want 1s (untouched)", time.Duration(got))
	}
	if got := s.Tools[1].Latency.Value; got != float64(5*time.Second) {
		t.Errorf("tool b latency = %v, want 5s", time.Duration(got))
	}
	if got := s.Tools[1].Timeout; got != 10*time.Second {
		t.Errorf("tool b timeout = %v, want 10s from the anchor", got)
	}
}

func TestExpand(t *testing.T) {
	axes := []SweepAxis{
		{Path: "a", Values: []string{"1", "2"}},
		{Path: "b", Values: []string{"x", "y", "z"}},
	}
	var got []string
	for _, p := range Expand(axes) {
		var parts []string
		for _, o := range p {
			if o.From != FromSweep {
				t.Errorf("override %v is from %q, want %q", o, o.From, FromSweep)
			}
			parts = append(parts, o.String())
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{
		"a=1 b=x", "a=1 b=y", "a=1 b=z",
		"a=2 b=x", "a=2 b=y", "a=2 b=z",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("points:\n got %q\nwant %q", got, want)
	}
	if p := Expand(nil); p != nil {
		t.Errorf("no axes gave %v, want no points", p)
	}
	if p := Expand([]SweepAxis{{Path: "a", Values: []string{"1"}}, {Path: "b"}}); p != nil {
		t.Errorf("an empty axis gave %v, want no points", p)
	}
}

// Every point of the default scenario's sweep loads, carries its values, and differs from
// the others.
func TestSweepPoints(t *testing.T) {
	s, err := Load(Default, []string{"workload.investigations=100"})
	if err != nil {
		t.Fatal(err)
	}
	points := s.Points()
	if len(points) != 9 {
		t.Fatalf("%d points, want 3 x 3 = 9", len(points))
	}
	attempts := []int{1, 1, 1, 3, 3, 3, 5, 5, 5}
	outage := []time.Duration{10 * time.Minute, 30 * time.Minute, time.Hour}
	hashes := map[string]int{}
	for i, p := range points {
		ps, err := s.With(p...)
		if err != nil {
			t.Fatalf("point %d %v: %v", i, p, err)
		}
		if got := ps.Recovery.Retry.MaxAttempts; got != attempts[i] {
			t.Errorf("point %d max_attempts = %d, want %d", i, got, attempts[i])
		}
		if got := ps.Faults[2].For; got != outage[i%3] {
			t.Errorf("point %d faults[2].for = %v, want %v", i, got, outage[i%3])
		}
		if ps.Workload.Investigations != 100 {
			t.Errorf("point %d lost the --set: investigations = %d", i, ps.Workload.Investigations)
		}
		if !ps.Source.Embedded {
			t.Errorf("point %d forgot it is embedded", i)
		}
		if j, dup := hashes[ps.Hash()]; dup {
			t.Errorf("points %d and %d have the same hash", j, i)
		}
		hashes[ps.Hash()] = i
	}
}

// Sweep values that YAML would read differently when written bare keep their type.
func TestSweepValueText(t *testing.T) {
	const src = `name: t
tools:
  a: {version: "1"}
sweep:
  tools.a.version: ["3.2", 4, "x y"]
  tools.a.latency: [{dist: constant, value: 1s}, 2s]
`
	s, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Sweep[0].Values, []string{`"3.2"`, "4", "x y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("version values = %q, want %q", got, want)
	}
	if got, want := s.Sweep[1].Values, []string{`{"dist": "constant", "value": "1s"}`, "2s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("latency values = %q, want %q", got, want)
	}
	versions := []string{"3.2", "4", "x y"}
	for i, p := range s.Points() {
		ps, err := s.With(p...)
		if err != nil {
			t.Fatalf("point %v: %v", p, err)
		}
		if got := ps.Tools[0].Version; got != versions[i/2] {
			t.Errorf("point %v: version %q, want %q", p, got, versions[i/2])
		}
		if got := ps.Tools[0].Latency.Value; got != float64(time.Second)*float64(1+i%2) {
			t.Errorf("point %v: latency %v", p, time.Duration(got))
		}
	}
}

// The independent validator's error rates: read from the file or --set, 0 by default and
// then absent from the resolved JSON (so existing scenarios keep their config hash).
func TestValidationKeys(t *testing.T) {
	const src = "name: t\ntools: {a: {}}\nvalidation: {independent: {false_accept: 0.02}}\n"
	s, err := Parse("t.yaml", []byte(src), []string{"validation.independent.false_reject=0.01"})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Validation.Independent; v != (IndependentValidation{FalseAccept: 0.02, FalseReject: 0.01}) {
		t.Errorf("validation = %+v", v)
	}
	plain, err := Parse("t.yaml", []byte("name: t\ntools: {a: {}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if js := string(plain.JSON()); strings.Contains(js, `"validation":`) {
		t.Errorf("default validation appears in the resolved JSON: %s", js)
	}
	for set, want := range map[string]string{
		"validation.independent.false_accept=1.5": `t.yaml: --set validation.independent.false_accept=1.5: validation.independent.false_accept: 1.5 is not a probability; want a number in [0, 1]`,
		"validation.independent.accept=0.1":       `t.yaml: --set validation.independent.accept=0.1: validation.independent.accept: unknown key "accept"; want one of false_accept, false_reject`,
	} {
		_, err := Parse("t.yaml", []byte("name: t\ntools: {a: {}}\n"), []string{set})
		if err == nil || err.Error() != want {
			t.Errorf("--set %s: got %v\nwant %s", set, err, want)
		}
	}
}
