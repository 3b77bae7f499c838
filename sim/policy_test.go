package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// TestPolicyInspection: the scenario's inspection block reaches the engine, and the file
// format's defaults are the engine's own, so a scenario built in Go (zero block) and a
// parsed one poll alike.
func TestPolicyInspection(t *testing.T) {
	parse := func(src string) recovery.Policy {
		t.Helper()
		sc, err := scenarios.Parse("p.yaml", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Policy(&sc.Recovery)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := parse("name: p\ntools: {a: {}}\n")
	if p.InspectEvery != recovery.DefaultInspectEvery || p.MaxInspections != recovery.DefaultMaxInspections {
		t.Errorf("defaults: every %s, max %d; the engine's are %s, %d",
			p.InspectEvery, p.MaxInspections, recovery.DefaultInspectEvery, recovery.DefaultMaxInspections)
	}
	p = parse("name: p\ntools: {a: {}}\nrecovery: {inspection: {interval: 30s, max: 5}}\n")
	if p.InspectEvery != 30*time.Second || p.MaxInspections != 5 {
		t.Errorf("inspection {interval: 30s, max: 5} became every %s, max %d", p.InspectEvery, p.MaxInspections)
	}
}

// slowScenario: n one-step investigations on a keyed tool whose jobs take 10 minutes while
// the caller times out after 1 minute; no faults, so every timeout is a job still running.
func slowScenario(n int) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = n
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)}
	s.Tools[0].Timeout = time.Minute
	return s
}

// TestSlowJobIsPolled: a job the tool reports as running is waited for, not failed. With
// the default polling (every minute, 60 lookups) every investigation completes and every
// key executes once: the timeout comes at 1m, lookups at 1m, 2m, ..., so the lookups at 1m
// to 9m say running and the one at 10m (or 11m, when the lookup is handled before the job
// ends at the same instant) finds the result: 9 or 10 running answers per operation. With
// only 5 lookups allowed and no humans the same jobs are terminated as unresolved.
func TestSlowJobIsPolled(t *testing.T) {
	const n = 50
	sink := newCountSink()
	res := run(t, slowScenario(n), 3, sink)
	if res.Completed != n || sink.execs != n || sink.duplicates != 0 {
		t.Errorf("default polling: %d of %d completed, %d executions (%d duplicates); want all, once each",
			res.Completed, n, sink.execs, sink.duplicates)
	}
	if got := sink.inspections["completed"]; got != n {
		t.Errorf("%d lookups found the result, want one per operation (%d)", got, n)
	}
	if got := sink.inspections["running"]; got < 9*n || got > 10*n {
		t.Errorf("%d lookups said running, want 9 to 10 per operation (%d to %d)", got, 9*n, 10*n)
	}

	s := slowScenario(n)
	s.Recovery.Inspection = scenarios.Inspection{Interval: time.Minute, Max: 5}
	var c record.Collector
	res = run(t, s, 3, &c)
	unresolved := 0
	for _, inv := range c.Investigations {
		if inv.TerminationReason == recovery.ReasonInspectionUnresolved {
			unresolved++
		}
	}
	if res.Completed != 0 || unresolved != n {
		t.Errorf("max 5 lookups: %d completed, %d terminated as unresolved; want 0 and %d", res.Completed, unresolved, n)
	}
}

// TestApprovedResendKeepsKey: after an uncertain-completion escalation a human's approval
// resends the same operation under the same key. At a tool that keeps no record (none),
// every lookup fails, so each lost reply is escalated, and each approval sends one more
// attempt of the same key, which the tool executes again: the duplicate executions equal
// the approvals exactly, and no revision is ever started. At a keyed tool whose job
// outlives the lookups, the approved resend is answered from the record: one execution
// per key.
func TestApprovedResendKeepsKey(t *testing.T) {
	humans := &scenarios.Humans{Reviewers: 4, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)}}
	approvals := func(c *record.Collector) int {
		k := 0
		for _, tr := range c.Transitions {
			if tr.DecidedBy != recovery.ByHuman.String() || tr.To != recovery.Running.String() {
				continue
			}
			if tr.Action != recovery.ActRetry.String() || tr.FailureClass != recovery.UncertainCompletion.String() {
				t.Fatalf("approval %+v, want a retry after uncertain_completion", tr)
			}
			k++
		}
		return k
	}

	t.Run("none", func(t *testing.T) {
		s := lostScenario(2000, 0.1, 3, scenarios.None, true)
		s.Recovery.Humans = humans
		var c record.Collector
		res := run(t, s, 5, &c)
		dups := 0
		for _, e := range c.Executions {
			if e.OpKey.Revision != 0 {
				t.Fatalf("execution of revision %d: an approval started new work", e.OpKey.Revision)
			}
			if e.Execution > 1 {
				dups++
			}
		}
		k := approvals(&c)
		// About n·q = 200 lost replies; far from zero whatever the seed.
		if k < 100 || dups != k || res.Completed != res.Started {
			t.Errorf("%d approvals, %d duplicate executions, %d of %d completed; want equal counts (>= 100) and all completed",
				k, dups, res.Completed, res.Started)
		}
	})

	t.Run("keyed", func(t *testing.T) {
		s := slowScenario(50)
		s.Recovery.Inspection = scenarios.Inspection{Interval: time.Minute, Max: 3}
		s.Recovery.Humans = humans
		var c record.Collector
		res := run(t, s, 5, &c)
		for _, e := range c.Executions {
			if e.Execution > 1 || e.OpKey.Revision != 0 {
				t.Fatalf("keyed tool executed %v as execution %d", e.OpKey, e.Execution)
			}
		}
		// Every job outlives its 3 lookups (timeout at 1m, lookups at 1m, 2m, 3m), so every
		// operation is escalated at least once.
		if k := approvals(&c); k < 50 || res.Completed != 50 || len(c.Executions) != 50 {
			t.Errorf("%d approvals, %d completed, %d executions; want >= 50, 50, 50", k, res.Completed, len(c.Executions))
		}
	})
}

// TestDefaultsAgree: a block the file switches on with `{}` takes the engine's own
// defaults (recovery.DefaultBreaker, DefaultBudget: the scenario's blocks are the engine's
// configuration types, whose Default methods hold them), and a scenario built in Go polls
// like the engine's zero Policy.
func TestDefaultsAgree(t *testing.T) {
	sc, err := scenarios.Parse("d.yaml", []byte("name: d\ntools: {a: {}}\nrecovery: {breaker: {}, retry_budget: {}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *sc.Recovery.Breaker, recovery.DefaultBreaker; got != want {
		t.Errorf("breaker: {} is %+v; recovery.DefaultBreaker is %+v", got, want)
	}
	rb := sc.Recovery.RetryBudget
	if rb.Ratio != recovery.DefaultBudget.Ratio || rb.MinPerSecond != recovery.DefaultBudget.MinPerSecond {
		t.Errorf("retry_budget: {} is %+v; recovery.DefaultBudget is %+v", *rb, recovery.DefaultBudget)
	}
	if d := scenarios.Defaults(); d.Recovery.Inspection.Interval != recovery.DefaultInspectEvery ||
		d.Recovery.Inspection.Max != recovery.DefaultMaxInspections {
		t.Errorf("scenarios.Defaults() inspection %+v; the engine's defaults are %s, %d",
			d.Recovery.Inspection, recovery.DefaultInspectEvery, recovery.DefaultMaxInspections)
	}
}

// TestSpellingsAgree: every word the file format accepts for recovery's enums is one the
// engine parses, so sim.Policy never meets a spelling it cannot map. The jitter and
// on_exhausted words are the engine's own (recovery.Jitter's MarshalText).
func TestSpellingsAgree(t *testing.T) {
	words := scenarios.Enum("recovery.retry.jitter")
	if len(words) != 4 {
		t.Fatalf("jitter words %v, want the engine's four", words)
	}
	for _, j := range words {
		sc, err := scenarios.Parse("j.yaml", []byte("name: j\ntools: {a: {}}\nrecovery: {retry: {jitter: "+j+"}}\n"), nil)
		if err != nil {
			t.Fatalf("jitter %q: %v", j, err)
		}
		p, err := Policy(&sc.Recovery)
		if err != nil || p.Retry.Jitter.String() != j {
			t.Errorf("jitter %q became %v (%v)", j, p.Retry.Jitter, err)
		}
	}
	for _, w := range scenarios.Enum("recovery.retry.on_exhausted") {
		if _, ok := recovery.ParseExhausted(w); !ok {
			t.Errorf("on_exhausted %q: the engine does not parse it", w)
		}
	}
	for _, w := range scenarios.Enum("recovery.on_exhaustion") {
		if _, ok := recovery.ParseOnExhaustion(w); !ok {
			t.Errorf("on_exhaustion %q: the engine does not parse it", w)
		}
	}
}

// TestPolicyCopiesByName: the engine settings the file writes as the engine reads them
// reach the Policy unchanged, a false and a zero among them.
func TestPolicyCopiesByName(t *testing.T) {
	sc, err := scenarios.Parse("c.yaml", []byte(`name: c
tools: {a: {}}
recovery:
  retry: {max_attempts: 4, initial: 2s, multiplier: 3, max: 10s, jitter: equal, on_exhausted: terminate}
  inspect_before_retry: false
  revisions: 2
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Policy(&sc.Recovery)
	if err != nil {
		t.Fatal(err)
	}
	want := recovery.RetryPolicy{MaxAttempts: 4, Initial: 2 * time.Second, Multiplier: 3, Max: 10 * time.Second,
		Jitter: recovery.JitterEqual, OnExhausted: recovery.ExhaustedTerminate}
	if p.Retry != want || p.InspectBeforeRetry || p.Revisions != 2 {
		t.Errorf("policy retry %+v, inspect %v, revisions %d; want %+v, false, 2", p.Retry, p.InspectBeforeRetry, p.Revisions, want)
	}
	sc.Recovery.InspectBeforeRetry = true
	if p, _ := Policy(&sc.Recovery); !p.InspectBeforeRetry {
		t.Error("inspect_before_retry true did not reach the policy")
	}
}

// TestPolicyRefusesUnknownWords: Policy is exported and a scenario built in Go skips the
// file's checks, so a word the engine does not know is an error naming the setting, never
// a silent default; an empty subagent action (a scenario built in Go) is reduce_scope.
func TestPolicyRefusesUnknownWords(t *testing.T) {
	for _, c := range []struct {
		set  func(r *scenarios.Recovery)
		want string
	}{
		{func(r *scenarios.Recovery) { r.OnExhaustion = "bogus" }, `OnExhaustion "bogus" is not a setting the engine knows: `},
		{func(r *scenarios.Recovery) { r.Subagents.OnFailure.Action = "bogus" }, `subagents.on_failure.action "bogus" is not a subagent policy the engine knows`},
		{func(r *scenarios.Recovery) { r.Subagents.OnFailure.Then = "bogus" }, `subagents.on_failure.then "bogus" is not a subagent policy the engine knows`},
	} {
		r := scenarios.Defaults().Recovery
		c.set(&r)
		p, err := Policy(&r)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !reflect.DeepEqual(p, recovery.Policy{}) {
			t.Errorf("Policy: %+v, %v; want the zero policy and an error starting %q", p, err, c.want)
		}
	}
	r := scenarios.Defaults().Recovery
	r.Subagents.OnFailure = scenarios.SubagentFailure{Max: 2}
	r.NonProgress = &scenarios.NonProgress{Repeats: 3}
	p, err := Policy(&r)
	want := recovery.SubagentPolicy{OnFailure: recovery.SubagentReduceScope, MaxRespawns: 2, Then: recovery.SubagentReduceScope}
	if err != nil || p.Subagents != want || p.NonProgressRepeats != 3 {
		t.Errorf("Policy: subagents %+v, non-progress repeats %d, %v; want %+v and 3", p.Subagents, p.NonProgressRepeats, err, want)
	}
}

// TestPolicyHumansAvailable: humans are there to escalate to only with at least one
// reviewer; a humans block of 0 reviewers is nobody, so an escalation terminates.
func TestPolicyHumansAvailable(t *testing.T) {
	for _, c := range []struct {
		humans *scenarios.Humans
		want   bool
	}{
		{nil, false},
		{&scenarios.Humans{Reviewers: 0}, false},
		{&scenarios.Humans{Reviewers: 1}, true},
		{&scenarios.Humans{Reviewers: 3}, true},
	} {
		r := scenarios.Defaults().Recovery
		r.Humans = c.humans
		p, err := Policy(&r)
		if err != nil {
			t.Fatal(err)
		}
		if p.HumansAvailable != c.want {
			t.Errorf("humans %+v: available %t, want %t", c.humans, p.HumansAvailable, c.want)
		}
	}
}
