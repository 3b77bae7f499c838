package scenarios

import (
	"math"
	"testing"
)

// lookupsBase is a tool whose every call outlives its timeout by 90s, looked up every 10s.
const lookupsBase = `name: t
tools:
  svc: {latency: {dist: constant, value: 100s}, timeout: 10s}
recovery:
  inspect_before_retry: true
  inspection: {interval: 10s, max: 60}
`

// The lookups per attempt of the size model, worked out: an operation of constant latency
// L that outlives its timeout T runs on for L·slowdown − T, looked up once per interval I
// and once more, at most max times, each lookup and its answer two events:
// 2·min(max, (L·slowdown − T)/I + 1).
func TestLookupsPerAttempt(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want float64
	}{
		{nil, 2 * (90.0/10 + 1)},                       // 20: the slowest service beyond the timeout
		{[]string{"recovery.inspection.max=5"}, 2 * 5}, // capped by max
		{[]string{"recovery.inspection.interval=30s"}, 2 * (90.0/30 + 1)},
		{[]string{`faults=[{kind: brownout, tool: svc, at: 1m, for: 1m, slowdown: 3}]`}, 2 * (290.0/10 + 1)}, // 60: slowed three times
		{[]string{"recovery.inspect_before_retry=false"}, 0},
	} {
		s, err := Parse("t.yaml", []byte(lookupsBase), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := EstimateEvents(s).Lookups; got != c.want {
			t.Errorf("%v: %v lookup events per attempt, want %v", c.sets, got, c.want)
		}
	}
}

// The lookups of attempts a hang never answers, worked out: each agent meets a hang window
// of length F once per inspection.max lookups it spends, and is looked up once per interval
// I through the window and max times more, at most max times for every attempt it makes;
// each lookup and its answer two events: agents·2·min(F/I + max, max·steps·attempts).
// Here 10 agents, 5 steps, 6 attempts a step (a model turn and a tool call, 3 tries each).
func TestLookupsOfHangs(t *testing.T) {
	const base = `name: t
workload: {investigations: 10, steps: 5}
tools:
  svc: {latency: {dist: constant, value: 1s}, timeout: 10s}
faults: [{kind: hang, tool: svc, at: 1m, for: 5m}]
recovery:
  retry: {max_attempts: 3}
  inspect_before_retry: true
  inspection: {interval: 10s, max: 60}
`
	for _, c := range []struct {
		sets []string
		want float64
	}{
		{nil, 10 * 2 * (300.0/10 + 60)},                                                      // 1800: the window, then max lookups more
		{[]string{"faults[0].for=1000h"}, 10 * 2 * (60 * 5 * 6)},                             // 36000: capped by the attempts
		{[]string{"faults[0].for=1000h", "workload.investigations=3"}, 3 * 2 * (60 * 5 * 6)}, // per agent
		{[]string{`faults=[{kind: outage, tool: svc, at: 1m, for: 5m}]`}, 0},                 // an outage answers
		{[]string{"recovery.inspect_before_retry=false"}, 0},
	} {
		s, err := Parse("t.yaml", []byte(base), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := EstimateEvents(s).Hangs; got != c.want {
			t.Errorf("%v: %v lookup events of hung attempts, want %v", c.sets, got, c.want)
		}
	}
}

// The mean lookups per tool call, worked out. A call of service time L past its timeout T
// is looked up min(max, (L − T)/I + 1) times. With an exponential service of mean 30s and
// T = 10s, P(L > T) = e^(−1/3) ≈ 0.7165; with an interval far longer than any call each
// late call is looked up once, so the mean is that probability; with max 5 and an interval
// of 1ns, five times it. The estimate averages 4096 midpoint quantiles, so it is within
// 1/4096 of the probability (the bounds below allow 2/4096 per lookup). A constant service
// of 100s past a 10s timeout, looked up every 10s, gives 90/10 + 1 = 10 exactly; with a mix
// that calls it a quarter of the time and a tool that never runs late the rest, 2.5.
func TestExpectedLookups(t *testing.T) {
	const slow = `name: t
workload: {tools: {svc: 1, fast: 3}}
tools:
  svc: {latency: {dist: constant, value: 100s}, timeout: 10s}
  fast: {latency: {dist: constant, value: 1s}, timeout: 10s}
recovery:
  inspect_before_retry: true
  inspection: {interval: 10s, max: 60}
`
	expo := []string{"tools.svc.latency={dist: exponential, mean: 30s}", "recovery.inspection.interval=1000h"}
	p := math.Exp(-1.0 / 3)
	for _, c := range []struct {
		src       string
		sets      []string
		want, tol float64
	}{
		{lookupsBase, expo, p, 2.0 / 4096},
		{lookupsBase, append(expo, "recovery.inspection={interval: 1ns, max: 5}"), 5 * p, 5 * 2.0 / 4096},
		{lookupsBase, append(expo, "recovery.inspect_before_retry=false"), 0, 0},
		{lookupsBase, append(expo, "tools.svc.timeout=1000h"), 0, 0},
		{slow, nil, 10.0 / 4, 1e-12},
		{slow, []string{"workload.tools={svc: 1}"}, 10, 1e-12},
		{slow, []string{"recovery.inspection.max=3"}, 3.0 / 4, 1e-12},
		// A slowdown counts on the tools it slows only: tripled, the fast tool's 3s is
		// still within its timeout.
		{slow, []string{`faults=[{kind: brownout, tool: fast, at: 1m, for: 1m, slowdown: 3}]`}, 10.0 / 4, 1e-12},
		{slow, []string{`faults=[{kind: brownout, tool: svc, at: 1m, for: 1m, slowdown: 3}]`}, 30.0 / 4, 1e-12},
	} {
		s, err := Parse("t.yaml", []byte(c.src), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := expectedLookups(s); math.Abs(got-c.want) > c.tol {
			t.Errorf("%v: %v lookups per call on average, want %v ± %v", c.sets, got, c.want, c.tol)
		}
	}
}

// TestMillionInvestigationsAccepted: research-fleet at a million investigations over
// 1100 hours, the size the speed targets are measured at, is accepted. Its calls rarely
// outlive their timeouts (a simulated run of 10,000 writes 4,903 lookups for 136,346 tool
// calls), so the lookups do not bring it near the limit on spans; charging every call the
// slowest service's lookups refused it.
func TestMillionInvestigationsAccepted(t *testing.T) {
	if _, err := Load("research-fleet", []string{"workload.investigations=1000000", "horizon=1100h"}); err != nil {
		t.Fatal(err)
	}
}
