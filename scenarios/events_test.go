package scenarios

import (
	"strings"
	"testing"
)

// The size model's estimate, term by term, worked out by hand for a scenario whose every
// term is on: 100 investigations of 4 steps (constant), subagents with probability 0.5 and
// 2 children to depth 2, 5 workers given back while waiting, 3 attempts and one revision,
// pauses on exhaustion, 2 reviewers of 30 minutes a review, one outage, a 10-hour horizon.
func TestEventsTermByTerm(t *testing.T) {
	const yaml = `name: t
horizon: 10h
workload:
  investigations: 100
  steps: 4
  workers: 5
  hold_worker: [running, waiting]
  subagents: {probability: 0.5, count: 2, max_depth: 2}
tools:
  svc: {latency: {dist: constant, value: 1s}, timeout: 10s}
faults: [{kind: outage, tool: svc, at: 1h, for: 10m}]
recovery:
  retry: {max_attempts: 3}
  revisions: 1
  budgets: {tokens: 100000}
  on_exhaustion: pause
  humans: {reviewers: 2, review_time: {dist: constant, value: 30m}}
`
	s, err := Parse("t.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	const (
		tree     = 1 + 4 + 16                    // each agent spawns 0.5·4 steps·2 = 4 children, to depth 2
		agents   = 100 * tree                    // 2100
		attempts = 2 * 3 * 2                     // a model turn and a tool call, 3 tries each, 2 revisions' worth
		per      = 10 + 10                       // the fixed events, and a worker handed over at each of five waits
		looks    = 2                             // inspection is on: one lookup and its answer an attempt (1 s is within the timeout)
		samples  = 10*60 + 1                     // a tool sample a minute
		pauses   = agents * 2 * (10 + 1)         // a wake-up an hour for every agent, and its retry
		reviews  = 2 * 2 * 36000.0 / 1800        // twice reviewers × horizon / review time
		timed    = samples + 4*1 + 1000 + pauses // the horizon's events: samples, the fault, slack, pauses
	)
	e := EstimateEvents(s)
	want := Events{
		Agents: agents, Attempts: attempts, Lookups: looks, Samples: samples, Pauses: pauses, Reviews: reviews,
		Total: 100 + (agents*4+reviews)*attempts*(per+looks) + timed,
		Floor: agents*4*2*(per+looks) + timed,
	}
	if e != want {
		t.Errorf("EstimateEvents =\n %+v\nwant\n %+v", e, want)
	}

	// With no reviewer there are no reviews; with workers that keep every state's worker
	// (listed, or hold_worker left out: its default), no worker is handed over.
	kept := func(e Events) bool { return e.Floor == agents*4*2*(10+looks)+timed }
	for _, c := range []struct {
		yaml, set string
		want      func(Events) bool
	}{
		{yaml, "recovery.humans.reviewers=0", func(e Events) bool { return e.Reviews == 0 }},
		{yaml, "workload.hold_worker=[running, waiting, recovering, awaiting_human]", kept},
		{strings.Replace(yaml, "  hold_worker: [running, waiting]\n", "", 1), "", kept},
	} {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		s, err := Parse("t.yaml", []byte(c.yaml), sets)
		if err != nil {
			t.Fatal(err)
		}
		if s.Workload.Workers != 5 {
			t.Fatalf("--set %s: %d workers, want 5", c.set, s.Workload.Workers)
		}
		if e := EstimateEvents(s); !c.want(e) {
			t.Errorf("--set %q: %+v", c.set, e)
		}
	}
}
