package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// Scenarios that would exhaust memory or time, or overflow the simulator's arithmetic, are
// refused at parse time with a message naming the key to change; before the size model
// each of these was accepted.
func TestSizeModel(t *testing.T) {
	base, _ := Embedded("transient-errors")
	long := strings.Repeat("a", MaxNameLen+1)
	for _, c := range []struct{ set, key, says string }{
		{"workload.steps=1e15", "workload.steps", "steps per investigation"},
		{"workload.steps=4294967297", "workload.steps", "want at most"},
		{"workload.steps={dist: exponential, mean: 1e9}", "workload.steps", "steps per investigation"},
		{"workload.investigations=1000000000000", "workload.investigations", "want at most"},
		{"workload.subagents={probability: 1, count: 1000, max_depth: 64}", "workload.subagents", "agents"},
		{"workload.subagents={probability: 1, count: 1e15}", "workload.subagents.count", "subagents per spawn"},
		{"workload.investigations=5000000 && workload.steps=100", "workload", "steps"},
		{"name=" + long, "name", "characters"},
		{"workload.model=" + long, "workload.model", "characters"},
		{"tools.search.compute=1e308", "tools.search.compute", "at most"},
		{"faults[0]={kind: budget_spike, probability: 1, factor: 1e300}", "faults[0].factor", "at most"},
		{"faults[0]={kind: brownout, at: 0s, for: 1h, probability: 0, slowdown: 1e300}", "faults[0].slowdown", "at most"},
		{"horizon=30000d", "horizon", "50 years"},
		{"workload.investigations=10000000 && recovery.inspection={interval: 1ns, max: 100000} && faults[0]={kind: hang, at: 0s, for: 1h}", "recovery.inspection", "simulation events"},
		{"workload.investigations=10000000 && recovery.on_exhaustion=pause && horizon=18250d", "recovery.on_exhaustion", "simulation events"},
		{"prices={currency: USD, tools: {search: {call: 1e308}}}", "prices.tools.search.call", "finite"},
		{"prices={currency: USD, tools: {search: {compute_second: 1e10}}}", "prices.tools.search.compute_second", "at most"},
		{"workload.model=m && prices={currency: USD, models: {m: {input: 1, output: 1e308}}}", "prices.models.m.output", "finite"},
	} {
		_, err := Parse("f.yaml", base, strings.Split(c.set, " && "))
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("--set %.60s: %v; want a refusal", c.set, err)
			continue
		}
		found := false
		for _, e := range list {
			if e.Key == c.key && strings.Contains(e.Msg, c.says) && e.File == "f.yaml" {
				found = true
			}
		}
		if !found {
			t.Errorf("--set %.60s: %v; want an error at %s saying %q", c.set, err, c.key, c.says)
		}
	}
	// Within the limits: fine.
	for _, set := range []string{"workload.steps=1000", "workload.subagents={probability: 0.5, count: 2, max_depth: 3}", "horizon=3650d"} {
		if _, err := Parse("f.yaml", base, []string{set}); err != nil {
			t.Errorf("--set %s: %v", set, err)
		}
	}
}

func TestSweepGridBound(t *testing.T) {
	vals := make([]string, 20)
	for i := range vals {
		vals[i] = "1"
	}
	var axes []SweepAxis
	for i := range 8 {
		axes = append(axes, SweepAxis{Path: "p" + string(rune('a'+i)), Values: vals})
	}
	err := CheckSweepSize(axes, 3)
	const want = "sweep: the grid has 2.56e+10 points (7.68e+10 runs with 3 seeds each); the limit is 10000 points: drop an axis or some values"
	if err == nil || err.Error() != want {
		t.Errorf("8 axes x 20 values: %v; want %s", err, want)
	}
	if err := CheckSweepSize(axes[:2], 3); err != nil {
		t.Errorf("400 points: %v", err)
	}
}

// A size-model refusal of a value written in the file names its line, like every other
// problem: here workload.investigations, written on line 6 of the file below.
func TestSizeModelErrorsHaveTheirLine(t *testing.T) {
	base, _ := Embedded("transient-errors")
	lines := strings.Split(string(base), "\n")
	want := 0
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "investigations:") {
			lines[i] = l[:strings.Index(l, "investigations:")] + "investigations: 1000000000000"
			want = i + 1
			break
		}
	}
	if want == 0 {
		t.Fatal("transient-errors has no investigations key")
	}
	_, err := Parse("f.yaml", []byte(strings.Join(lines, "\n")), nil)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("%v; want a refusal", err)
	}
	for _, e := range list {
		if e.Key == "workload.investigations" {
			if e.Line != want || !strings.HasPrefix(e.Error(), fmt.Sprintf("f.yaml:%d: ", want)) {
				t.Errorf("%q: line %d, want %d", e.Error(), e.Line, want)
			}
			return
		}
	}
	t.Errorf("%v: no error at workload.investigations", err)
}

// The size model's floor: each agent of a mean-size run makes a model turn and a tool
// call per step, each with its fixed events, on top of the timers that do not grow with
// the agents. Ten more investigations of 7 steps each, no subagents, no lookups, no pauses
// and no crashes, add exactly 10 x 7 x 2 x eventsPerAttempt events to the floor.
func TestSizeModelFloor(t *testing.T) {
	base, _ := Embedded("transient-errors")
	floor := func(investigations int) float64 {
		t.Helper()
		s, err := Parse("f.yaml", base, []string{
			fmt.Sprintf("workload.investigations=%d", investigations), "workload.steps=7",
			"recovery.inspect_before_retry=false", "recovery.on_exhaustion=terminate",
		})
		if err != nil {
			t.Fatal(err)
		}
		return EstimateEvents(s).Floor
	}
	if got, want := floor(20)-floor(10), float64(10*7*2*eventsPerAttempt); got != want {
		t.Errorf("floor(20 investigations) - floor(10) = %v; want %v", got, want)
	}
}

// The size model's other terms, each pinned by how it moves. Crashes are nothing without a
// fault that takes workers down and grow with a worker_crash fault's rate (each
// crash is a takeover, and the investigation's events again). One level of subagents
// spawned with probability p per step, count children a spawn, makes a tree of
// 1 + p·steps·count agents. The compute budget's ceiling is MaxCompute·1e9 compute-unit
// seconds, that value itself allowed.
func TestSizeModelTerms(t *testing.T) {
	est := func(name string, sets ...string) Events {
		t.Helper()
		base, _ := Embedded(name)
		s, err := Parse(name+".yaml", base, append(sets, "recovery.on_exhaustion=terminate"))
		if err != nil {
			t.Fatal(err)
		}
		return EstimateEvents(s)
	}
	if c := est("transient-errors").Crashes; c != 0 {
		t.Errorf("crashes without a crash fault: %v; want 0", c)
	}
	slow, fast := est("worker-crashes", "faults[0].rate=1/4h").Crashes, est("worker-crashes", "faults[0].rate=1/2h").Crashes
	if !(slow > 0) || !(fast > slow) {
		t.Errorf("crashes at 1/4h %v, at 1/2h %v; want more at the faster rate, both above 0", slow, fast)
	}

	tree := &Scenario{Workload: Workload{Steps: Dist{Kind: DistConstant, Value: 4},
		Subagents: Subagents{Probability: 0.5, Count: Dist{Kind: DistConstant, Value: 2}, MaxDepth: 1}}}
	if got := subagentTree(tree, distMean); got != 1+0.5*4*2 {
		t.Errorf("one level of subagents, p 0.5, 4 steps, 2 a spawn: %v agents; want 5", got)
	}
	// Respawning: an agent that spawns (p x steps = 2, so surely) may start max replacements.
	tree.Recovery.Subagents.OnFailure = SubagentFailure{Action: SubagentRespawn, Max: 7, Then: SubagentFail}
	if got := subagentTree(tree, distMean); got != 1+0.5*4*2+7 {
		t.Errorf("the same with up to 7 respawns: %v agents; want 12", got)
	}

	s := &Scenario{}
	for _, c := range []struct {
		compute float64
		ok      bool
	}{{36000, true}, {MaxCompute * 1e9, true}, {math.Nextafter(MaxCompute*1e9, math.Inf(1)), false}} {
		s.Recovery.Budgets.Compute = c.compute
		err := s.Validate()
		refused := err != nil && strings.Contains(err.Error(), "recovery.budgets.compute")
		if refused == c.ok {
			t.Errorf("budgets.compute %v: refused %t (%v); want refused %t", c.compute, refused, err, !c.ok)
		}
	}
}

// A scenario may declare exactly MaxTools tools; one more is refused, with the count.
func TestMaxToolsAtItsValue(t *testing.T) {
	s := edgeScenario(t)
	for len(s.Tools) < MaxTools {
		tool := s.Tools[0]
		tool.Name = fmt.Sprintf("t%d", len(s.Tools))
		s.Tools = append(s.Tools, tool)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("%d tools: %v; want valid", len(s.Tools), err)
	}
	tool := s.Tools[0]
	tool.Name = "one_more"
	s.Tools = append(s.Tools, tool)
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "tools: 1001 tools; want at most 1000") {
		t.Errorf("%d tools: %v; want tools: 1001 tools; want at most 1000", len(s.Tools), err)
	}
}

// distTop, the size model's largest plausible draw of an unbounded distribution, is its
// 0.999 quantile: the distribution's own CDF, written out here, gives 0.999 there (the
// exponential's -ln(0.001) is rounded to 6.9, hence the wider bound).
func TestDistTopQuantile(t *testing.T) {
	for _, c := range []struct {
		d   Dist
		cdf func(x float64) float64
		tol float64
	}{
		{Dist{Kind: DistLognormal, Median: 10, P95: 20}, func(x float64) float64 {
			sigma := math.Log(20.0/10) / 1.6448536269514722
			return 0.5 * math.Erfc(-(math.Log(x)-math.Log(10))/(sigma*math.Sqrt2))
		}, 1e-9},
		{Dist{Kind: DistLognormal, Median: 3, P95: 300}, func(x float64) float64 {
			sigma := math.Log(300.0/3) / 1.6448536269514722
			return 0.5 * math.Erfc(-(math.Log(x)-math.Log(3))/(sigma*math.Sqrt2))
		}, 1e-9},
		{Dist{Kind: DistPareto, Min: 2, Alpha: 1.5}, func(x float64) float64 { return 1 - math.Pow(2/x, 1.5) }, 1e-12},
		{Dist{Kind: DistExponential, Mean: 50}, func(x float64) float64 { return 1 - math.Exp(-x/50) }, 1e-5},
	} {
		top := distTop(c.d)
		if p := c.cdf(top); math.Abs(p-0.999) > c.tol {
			t.Errorf("%+v: distTop %v is the %v quantile; want 0.999", c.d, top, p)
		}
	}
	for _, c := range []struct {
		d    Dist
		want float64
	}{
		{Dist{Kind: DistConstant, Value: 7}, 7},
		{Dist{Kind: DistUniform, Min: 2, Max: 9}, 9},
	} {
		if got := distTop(c.d); got != c.want {
			t.Errorf("%+v: distTop %v; want %v", c.d, got, c.want)
		}
	}
}

// The refusal of a run too large names the steps, the agents, the mean steps, the traces
// the run would write at 80 bytes a step and the limit, as the user reads it.
func TestTotalStepsMessage(t *testing.T) {
	base, _ := Embedded("transient-errors")
	for _, c := range []struct{ set, want string }{
		{"workload.investigations=5000000 && workload.steps=100",
			"the run would simulate about 5e+08 steps (5e+06 agents x 100 steps), about 40 GB of traces; the limit is 2e+08 steps: lower workload.investigations or workload.steps"},
		{"workload.investigations=10000000 && workload.steps=10000",
			"the run would simulate about 1e+11 steps (1e+07 agents x 1e+04 steps), about 8 TB of traces; the limit is 2e+08 steps: lower workload.investigations or workload.steps"},
	} {
		_, err := Parse("f.yaml", base, strings.Split(c.set, " && "))
		var list ErrorList
		errors.As(err, &list)
		found := false
		for _, e := range list {
			found = found || e.Key == "workload" && e.Msg == c.want
		}
		if !found {
			t.Errorf("--set %s: %v; want workload: %s", c.set, err, c.want)
		}
	}
}

// A distribution's mean, as the size model's floor uses it: a Pareto's is alpha·min/(alpha-1).
func TestDistMean(t *testing.T) {
	for _, c := range []struct {
		d    Dist
		want float64
	}{
		{Dist{Kind: DistPareto, Min: 2, Alpha: 3}, 3},
		{Dist{Kind: DistPareto, Min: 10, Alpha: 1.25}, 50},
		{Dist{Kind: DistPareto, Min: 10, Alpha: 1}, math.Inf(1)},
		{Dist{Kind: DistUniform, Min: 2, Max: 8}, 5},
		{Dist{Kind: DistExponential, Mean: 4}, 4},
		{Dist{Kind: DistLognormal, Median: 10, P95: 10 * math.Exp(1.6448536269514722)}, 10 * math.Exp(0.5)}, // sigma 1
	} {
		if got := distMean(c.d); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("%+v: mean %v; want %v", c.d, got, c.want)
		}
	}
}

// A lognormal of median 0 built in Go is refused for its median alone: the size model, which
// Validate also runs, takes such a distribution at its median rather than writing NaN steps
// into a second message.
func TestSizeModelMedianZero(t *testing.T) {
	s := edgeScenario(t)
	s.Workload.Steps = Dist{Kind: DistLognormal, Median: 0, P95: 10}
	const want = "edge.yaml: workload.steps.median: 0; want > 0"
	if err := s.Validate(); err == nil || err.Error() != want {
		t.Errorf("steps lognormal, median 0, p95 10: %v; want only %s", err, want)
	}
}

// A name may be MaxNameLen characters long; one more is refused, with its length.
func TestMaxNameLenAtItsValue(t *testing.T) {
	s := edgeScenario(t)
	s.Name = strings.Repeat("n", MaxNameLen)
	if err := s.Validate(); err != nil {
		t.Errorf("a name of %d characters: %v; want valid", len(s.Name), err)
	}
	s.Name += "n"
	want := fmt.Sprintf("edge.yaml: name: %d characters long; want at most %d", MaxNameLen+1, MaxNameLen)
	if err := s.Validate(); fmt.Sprint(err) != want {
		t.Errorf("a name of %d characters: %v; want %s", len(s.Name), err, want)
	}
	// So may a tool's version.
	s = edgeScenario(t)
	s.Tools[0].Version = strings.Repeat("v", MaxNameLen)
	if err := s.Validate(); err != nil {
		t.Errorf("a version of %d characters: %v; want valid", MaxNameLen, err)
	}
	s.Tools[0].Version += "v"
	want = fmt.Sprintf("edge.yaml: tools.a.version: %d characters long; want at most %d", MaxNameLen+1, MaxNameLen)
	if err := s.Validate(); fmt.Sprint(err) != want {
		t.Errorf("a version of %d characters: %v; want %s", MaxNameLen+1, err, want)
	}
}

// A horizon of exactly 50 years is valid; a nanosecond more is refused.
func TestMaxHorizonAtItsValue(t *testing.T) {
	s := edgeScenario(t)
	s.Horizon = MaxHorizon
	if err := s.Validate(); err != nil {
		t.Errorf("horizon %v: %v; want valid", s.Horizon, err)
	}
	s.Horizon++
	want := fmt.Sprintf("edge.yaml: horizon: %v; want at most 50 years (%v)", MaxHorizon+1, MaxHorizon)
	if err := s.Validate(); fmt.Sprint(err) != want {
		t.Errorf("horizon %v: %v; want %s", s.Horizon, err, want)
	}
}

// The size model sums the subagent tree until the sum reaches the largest float, so the
// message states the tree of a count of exactly that size as the largest float, and one
// that overflows as +Inf.
func TestSubagentTreeAtTheLargestFloat(t *testing.T) {
	for _, c := range []struct{ count, says string }{
		{"1.7976931348623157e308", "1 investigations would run about 1.8e+308 agents (each investigation a tree of about 1.8e+308)"},
		{"1e300", "1 investigations would run about +Inf agents (each investigation a tree of about +Inf)"},
	} {
		src := "name: t\ntools: {a: {}}\nworkload: {subagents: {probability: 1, count: " + c.count + ", max_depth: 2}}\n"
		_, err := Parse("t.yaml", []byte(src), nil)
		if err == nil || !strings.Contains(err.Error(), "t.yaml:3: workload.subagents: "+c.says) {
			t.Errorf("count %s: %v; want %s", c.count, err, c.says)
		}
	}
}

// A run of exactly MaxTotalSteps steps is within the steps limit, and the events limit
// still applies to it (here a slow tool looked up every second after its timeout); one
// investigation more is refused for its steps.
func TestEventsLimitAtMaxTotalSteps(t *testing.T) {
	const src = "name: t\ntools: {a: {latency: {dist: constant, value: 1d}, timeout: 1s}}\nworkload: {investigations: %d, steps: 1000}\nrecovery: {inspect_before_retry: true, inspection: {interval: 1s, max: 100000}}\n"
	if MaxTotalSteps != 200_000*1000 {
		t.Fatalf("MaxTotalSteps %d; the cases below are written for 2e8", MaxTotalSteps)
	}
	for inv, want := range map[int]string{
		200_000: "t.yaml:4: recovery.inspection: the run would take at least about 6.91e+13 simulation events (2e+05 agents, 1.73e+05 lookups per attempt); the limit is 1e+12: raise recovery.inspection.interval or lower recovery.inspection.max",
		200_001: "t.yaml:3: workload: the run would simulate about 2e+08 steps (2e+05 agents x 1e+03 steps), about 16 GB of traces; the limit is 2e+08 steps: lower workload.investigations or workload.steps",
	} {
		_, err := Parse("t.yaml", []byte(fmt.Sprintf(src, inv)), nil)
		if err == nil || err.Error() != want {
			t.Errorf("%d investigations of 1000 steps: %v; want %s", inv, err, want)
		}
	}
}

// A file's sweep of exactly MaxSweepPoints points is valid, in Parse as in CheckSweepSize;
// one of more is refused at the sweep's line.
func TestSweepOfMaxSweepPoints(t *testing.T) {
	axis := func(n int, unit string) string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = strconv.Itoa(i+1) + unit
		}
		return "[" + strings.Join(vals, ", ") + "]"
	}
	const base = "name: t\ntools: {a: {latency: {dist: constant, value: 1s}, timeout: 30s}}\nsweep:\n" +
		"  recovery.retry.max_attempts: %s\n  recovery.lease: %s\n  recovery.revisions: %s\n  recovery.inspection.max: %s\n"
	if MaxSweepPoints != 10*10*10*10 {
		t.Fatalf("MaxSweepPoints %d; the cases below are written for 10000", MaxSweepPoints)
	}
	s, err := Parse("t.yaml", []byte(fmt.Sprintf(base, axis(10, ""), axis(10, "m"), axis(10, ""), axis(10, ""))), nil)
	if err != nil || SweepPoints(s.Sweep) != MaxSweepPoints {
		t.Fatalf("a sweep of 10 x 10 x 10 x 10 points: %v; want valid, with 10000 points", err)
	}
	if err := CheckSweepSize(s.Sweep, 3); err != nil {
		t.Errorf("CheckSweepSize of 10000 points: %v", err)
	}
	_, err = Parse("t.yaml", []byte(fmt.Sprintf(base, axis(10, ""), axis(10, "m"), axis(10, ""), axis(11, ""))), nil)
	const want = "t.yaml:3: sweep: the grid has 1.1e+04 points; want at most 10000: drop an axis or some values"
	if err == nil || err.Error() != want {
		t.Errorf("a sweep of 10 x 10 x 10 x 11 points: %v; want %s", err, want)
	}
}
