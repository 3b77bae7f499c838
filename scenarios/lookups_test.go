package scenarios

import "testing"

// The lookups per attempt of the size model, worked out: an operation of constant latency
// L that outlives its timeout T runs on for L·slowdown − T, looked up once per interval I
// and once more, at most max times, each lookup and its answer two events:
// 2·min(max, (L·slowdown − T)/I + 1).
func TestLookupsPerAttempt(t *testing.T) {
	const base = `name: t
tools:
  svc: {latency: {dist: constant, value: 100s}, timeout: 10s}
recovery:
  inspect_before_retry: true
  inspection: {interval: 10s, max: 60}
`
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
		s, err := Parse("t.yaml", []byte(base), c.sets)
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
