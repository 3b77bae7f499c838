package sim

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

func attr(s *record.Span, k string) string {
	for _, a := range s.Attrs {
		if a.Key == k {
			return a.Value
		}
	}
	return ""
}

// TestCausality follows every rejected experiment back to the configuration change it ran
// with: validate (invalid) → the execute_tool span it judged → the plan span of the
// configuration, which says the configuration was bad. Subagents use their parent's
// configuration and hang under their parent's invoke_agent span.
func TestCausality(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 400
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}
	s.Workload.Subagents = scenarios.Subagents{Probability: 0.3, Count: scenarios.Dist{Kind: scenarios.DistConstant, Value: 2}, MaxDepth: 2}
	s.Faults = []scenarios.Fault{{ID: "badcfg", Kind: scenarios.FaultInvalidConfig, Probability: 0.25}}
	s.Recovery.Revisions = 2
	var c record.Collector
	res := run(t, s, 3, &c)
	byID := map[uint64]*record.Span{}
	for i := range c.Spans {
		byID[c.Spans[i].SpanID] = &c.Spans[i]
	}
	invokeOf := map[int64]uint64{}
	cfgOf := map[int64]uint64{} // root id → its configuration span
	for i := range c.Spans {
		sp := &c.Spans[i]
		switch {
		case sp.Operation == record.OpInvokeAgent:
			invokeOf[sp.InvestigationID] = sp.SpanID
		case sp.Operation == record.OpPlan && attr(sp, "kind") == "config_change":
			cfgOf[sp.InvestigationID] = sp.SpanID
		}
	}
	if len(cfgOf) != res.Started {
		t.Fatalf("%d configuration spans for %d root investigations", len(cfgOf), res.Started)
	}
	parentOf := map[int64]int64{}
	badRoots := map[int64]bool{}
	for _, inv := range c.Investigations {
		parentOf[inv.InvestigationID] = inv.ParentID
	}
	for root, id := range cfgOf {
		if attr(byID[id], "config_valid") == "false" {
			badRoots[root] = true
		}
	}
	subs, rejected := 0, 0
	for i := range c.Spans {
		sp := &c.Spans[i]
		switch sp.Operation {
		case record.OpInvokeAgent:
			if p := parentOf[sp.InvestigationID]; p != 0 {
				subs++
				if sp.ParentSpanID != invokeOf[p] {
					t.Fatalf("subagent %d: invoke span parent %d, want its parent's invoke span %d", sp.InvestigationID, sp.ParentSpanID, invokeOf[p])
				}
			} else if sp.ParentSpanID != 0 {
				t.Fatalf("root %d has parent span %d", sp.InvestigationID, sp.ParentSpanID)
			}
		case record.OpExecuteTool:
			if len(sp.CausedBy) == 0 || sp.CausedBy[0] != cfgOf[sp.TraceID] {
				t.Fatalf("tool span %d of investigation %d (root %d): caused_by %v, want the root's configuration span %d first",
					sp.SpanID, sp.InvestigationID, sp.TraceID, sp.CausedBy, cfgOf[sp.TraceID])
			}
		case record.OpValidate:
			if sp.Status != record.StatusInvalid {
				if badRoots[sp.TraceID] {
					t.Fatalf("a result of bad configuration %d passed validation", sp.TraceID)
				}
				continue
			}
			rejected++
			judged := byID[sp.CausedBy[0]]
			if judged == nil || judged.Operation != record.OpExecuteTool || judged.OpKey != sp.OpKey {
				t.Fatalf("validate span %d judged %+v, want the execute_tool span of %v", sp.SpanID, judged, sp.OpKey)
			}
			cfg := byID[judged.CausedBy[0]]
			if cfg == nil || attr(cfg, "kind") != "config_change" || attr(cfg, "config_valid") != "false" {
				t.Fatalf("rejected experiment %v does not lead back to a bad configuration: %+v", sp.OpKey, cfg)
			}
		}
	}
	if subs == 0 || rejected == 0 || len(badRoots) == 0 {
		t.Fatalf("nothing to follow: %d subagents, %d rejected, %d bad configurations", subs, rejected, len(badRoots))
	}
	for _, inv := range c.Investigations {
		if badRoots[inv.RootID] && inv.FinalState == "completed" {
			t.Fatalf("investigation %d with a bad configuration completed", inv.InvestigationID)
		}
	}
}

// TestCancel stops a run through its context: it is partial, and its records are still
// consistent (every started investigation has exactly one record; the open ones are in
// flight).
func TestCancel(t *testing.T) {
	s := fleet(t, 3000)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	var c record.Collector
	res, err := Run(ctx, s, 1, &c, Options{Check: true, Progress: func(done, total int) {
		calls++
		if calls == 10 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.InFlight == 0 {
		t.Fatalf("cancelled run: %+v", res)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("violations: %v", res.Violations)
	}
	seen := map[int64]int{}
	roots := 0
	for _, inv := range c.Investigations {
		seen[inv.InvestigationID]++
		if inv.ParentID == 0 {
			roots++
		}
		if !inv.Ended && inv.FinalState == "completed" {
			t.Fatalf("in-flight investigation %d marked completed", inv.InvestigationID)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("investigation %d has %d records", id, n)
		}
	}
	if roots != res.Started {
		t.Fatalf("%d root records, %d started", roots, res.Started)
	}
	if res.Makespan > int64(s.Horizon) {
		t.Fatalf("makespan %d beyond the horizon", res.Makespan)
	}
}

// policyBlockScenario has n investigations of 4 steps, a forbidden operation drawn on 1 in
// 5 first tries, and humans who approve every escalation.
func policyBlockScenario(n int) *scenarios.Scenario {
	s := testScenario()
	s.Workload.Investigations = n
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 4}
	s.Workload.Behaviour.PolicyViolation = 0.2
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 2, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Minute)}}
	return s
}

// TestPolicyBlock: a forbidden operation is blocked before it is sent, recorded, escalated,
// and never sent afterwards, even though the humans approve every escalation.
func TestPolicyBlock(t *testing.T) {
	s := policyBlockScenario(500)
	var c record.Collector
	res := run(t, s, 9, &c)
	blocked := map[record.OpKey]bool{}
	for _, sp := range c.Spans {
		if sp.Status == record.StatusBlocked {
			blocked[sp.OpKey] = true
		}
	}
	for _, sp := range c.Spans {
		if sp.Operation == record.OpExecuteTool && sp.Status != record.StatusBlocked && blocked[sp.OpKey] {
			t.Fatalf("blocked operation %v was sent", sp.OpKey)
		}
	}
	for _, e := range c.Executions {
		if blocked[e.OpKey] {
			t.Fatalf("blocked operation %v was executed", e.OpKey)
		}
	}
	blocks := 0
	for _, tr := range c.Transitions {
		if tr.Action == "block" {
			blocks++
			if tr.DecidedBy != "policy" {
				t.Fatalf("block decided by %s", tr.DecidedBy)
			}
		}
	}
	t.Logf("%d blocked, %+v", len(blocked), res)
	if len(blocked) < 100 || blocks != len(blocked) {
		t.Fatalf("%d blocked spans, %d block records", len(blocked), blocks)
	}
	if res.Completed != res.Started {
		t.Fatalf("with every escalation approved all should complete: %+v", res)
	}
}

// TestSupervisor: a model supervisor that is always wrong has its forbidden requests
// refused (and recorded); one that is always right is never refused. Each consultation is
// a supervise span that costs its tokens and latency.
func TestSupervisor(t *testing.T) {
	for _, acc := range []float64{0, 1} {
		s := testScenario()
		s.Workload.Investigations = 500
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 3}
		s.Workload.Behaviour = scenarios.Behaviour{InvalidOutput: 0.3, ReviseSuccess: 0.5}
		s.Recovery.Revisions = 1
		s.Recovery.Supervisor = scenarios.Supervisor{Kind: "model", Accuracy: acc, Latency: 30 * time.Second, Tokens: 4000}
		s.Recovery.Humans = &scenarios.Humans{Reviewers: 3, Approve: 0.5,
			ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)}}
		var c record.Collector
		run(t, s, 2, &c)
		consults, refused := 0, 0
		for _, tr := range c.Transitions {
			if tr.Action == "consult" {
				consults++
			}
			if strings.HasPrefix(tr.Reason, "refused") {
				refused++
			}
		}
		spans, correct := 0, 0
		for i := range c.Spans {
			sp := &c.Spans[i]
			if sp.Operation != record.OpSupervise {
				continue
			}
			spans++
			if attr(sp, "correct") == "true" {
				correct++
			}
			if sp.End-sp.Start != int64(30*time.Second) || sp.InputTokens+sp.OutputTokens != 4000 {
				t.Fatalf("supervise span costs %v and %d tokens", time.Duration(sp.End-sp.Start), sp.InputTokens+sp.OutputTokens)
			}
		}
		if consults < 50 || spans != consults {
			t.Fatalf("accuracy %g: %d consultations, %d supervise spans", acc, consults, spans)
		}
		t.Logf("accuracy %g: %d consultations, %d refused, %d correct", acc, consults, refused, correct)
		switch acc {
		case 0:
			if refused == 0 || correct != 0 {
				t.Fatalf("always-wrong supervisor: %d refusals, %d correct of %d", refused, correct, spans)
			}
		case 1:
			if refused != 0 || correct != spans {
				t.Fatalf("always-right supervisor: %d refusals, %d correct of %d", refused, correct, spans)
			}
		}
	}
}

// TestHumansFIFO: reviewers work escalations in arrival order, never more at once than
// there are reviewers.
func TestHumansFIFO(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 600
	s.Workload.Behaviour.PolicyViolation = 0.3
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 2, Approve: 0.7,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(2 * time.Minute)}}
	var c record.Collector
	res := run(t, s, 4, &c)
	type rv struct{ queued, start, end int64 }
	var rs []rv
	for _, sp := range c.Spans {
		if sp.Operation == record.OpHumanReview {
			rs = append(rs, rv{sp.Start - sp.QueueWait, sp.Start, sp.End})
		}
	}
	if len(rs) < 100 {
		t.Fatalf("only %d reviews", len(rs))
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	waited := 0
	for i := 1; i < len(rs); i++ {
		if rs[i].queued < rs[i-1].queued {
			t.Fatalf("review started at %d was queued at %d, before one started earlier (queued %d): not FIFO",
				rs[i].start, rs[i].queued, rs[i-1].queued)
		}
		if rs[i].start > rs[i].queued {
			waited++
		}
	}
	if waited == 0 {
		t.Fatal("no escalation ever waited: the queue was not exercised")
	}
	// At most 2 reviews overlap: sweep the start and end times.
	type ev struct {
		at int64
		d  int
	}
	var evs []ev
	for _, r := range rs {
		evs = append(evs, ev{r.start, 1}, ev{r.end, -1})
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].at < evs[j].at || evs[i].at == evs[j].at && evs[i].d < evs[j].d })
	open := 0
	for _, e := range evs {
		open += e.d
		if open > 2 {
			t.Fatalf("%d reviews at once with 2 reviewers", open)
		}
	}
	if res.Terminated == 0 || res.Completed == 0 {
		t.Fatalf("approve 0.7 should both approve and reject: %+v", res)
	}
}

// TestWindows: an outage fails every attempt fast, a hang swallows attempts (the caller
// times out; nothing executes), a brownout slows service by its factor.
func TestWindows(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 600
	s.Workload.Arrival.Rate.PerSecond = 2
	s.Tools[0].Timeout = 5 * time.Second
	s.Faults = []scenarios.Fault{
		{ID: "out", Kind: scenarios.FaultOutage, Tool: "svc", At: 30 * time.Second, For: 30 * time.Second},
		{ID: "hang", Index: 1, Kind: scenarios.FaultHang, Tool: "svc", At: 120 * time.Second, For: 30 * time.Second},
		{ID: "slow", Index: 2, Kind: scenarios.FaultBrownout, Tool: "svc", At: 200 * time.Second, For: 30 * time.Second, Probability: 0.5, Slowdown: 5},
	}
	s.Recovery.Retry.MaxAttempts = 20
	s.Recovery.Retry.Max = 10 * time.Second
	var c record.Collector
	run(t, s, 8, &c)
	in := func(at int64, from, to time.Duration) bool { return at >= int64(from) && at < int64(to) }
	counts := map[string]int{}
	for _, sp := range c.Spans {
		if sp.Operation != record.OpExecuteTool {
			continue
		}
		switch {
		case in(sp.Start, 30*time.Second, 60*time.Second):
			if sp.Status != record.StatusError || sp.FaultID != "out" || sp.End != sp.Start {
				t.Fatalf("attempt during the outage: %+v", sp)
			}
			counts["out"]++
		case in(sp.Start, 120*time.Second, 150*time.Second):
			if sp.Status != record.StatusTimeout || sp.FaultID != "hang" || sp.End-sp.Start != int64(5*time.Second) {
				t.Fatalf("attempt during the hang: %+v", sp)
			}
			counts["hang"]++
		case in(sp.Start, 200*time.Second, 230*time.Second):
			switch sp.Status {
			case record.StatusError:
				counts["slow-error"]++
			case record.StatusOK:
				if d := sp.End - sp.Start - sp.QueueWait; d != int64(500*time.Millisecond) {
					t.Fatalf("brownout service took %v, want 5 x 100ms", time.Duration(d))
				}
				counts["slow-ok"]++
			}
		}
	}
	for _, e := range c.Executions {
		if in(e.Start, 120*time.Second, 150*time.Second) {
			t.Fatalf("an execution started during the hang: %+v", e)
		}
	}
	t.Logf("attempts in windows: %v", counts)
	for _, k := range []string{"out", "hang", "slow-error", "slow-ok"} {
		if counts[k] < 10 {
			t.Fatalf("too few attempts to judge %s: %v", k, counts)
		}
	}
}

// TestCrashRecovery: workers die often; each time a new worker rebuilds the engine from the
// journal (the checker compares it with the lost one) and looks the interrupted operation
// up, so the keyed tool still executes each key once.
func TestCrashRecovery(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 400
	s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 5}
	s.Workload.Think = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(time.Minute)}
	s.Tools[0].Latency = scenarios.Dist{Kind: scenarios.DistExponential, Mean: float64(5 * time.Minute)}
	s.Tools[0].Timeout = time.Hour
	s.Faults = []scenarios.Fault{{ID: "crash", Kind: scenarios.FaultWorkerCrash, Rate: scenarios.Rate{PerSecond: 1.0 / 1800}}}
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 5, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)}}
	var c record.Collector
	res := run(t, s, 6, &c)
	crashes, crashedEvents := 0, 0
	for _, inv := range c.Investigations {
		crashes += int(inv.Crashes)
	}
	for _, tr := range c.Transitions {
		if tr.Event == "crashed" && !strings.HasPrefix(tr.From, tr.To) {
			crashedEvents++
		}
	}
	for _, e := range c.Executions {
		if e.Execution > 1 {
			t.Fatalf("keyed tool executed %v again after a crash", e.OpKey)
		}
	}
	t.Logf("%d crashes, %d crash transitions, %+v", crashes, crashedEvents, res)
	// 400 investigations of ~30 minutes each at one crash per 30 minutes of running.
	if crashes < 100 || crashedEvents < crashes {
		t.Fatalf("%d crashes, %d crash transitions", crashes, crashedEvents)
	}
	if res.Completed != res.Started {
		t.Fatalf("with humans approving every escalation all should complete: %+v", res)
	}
}

// TestBudgets: a budget_spike multiplies an investigation's tokens; the token budget then
// runs out and on_exhaustion decides: terminate ends it, reduce_scope completes it with the
// steps already done, pause waits and resumes with a renewed allotment.
func TestBudgets(t *testing.T) {
	base := func(onExhaustion string) *scenarios.Scenario {
		s := testScenario()
		s.Workload.Investigations = 300
		s.Workload.Steps = scenarios.Dist{Kind: scenarios.DistConstant, Value: 5}
		s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 100}
		s.Faults = []scenarios.Fault{{ID: "spike", Kind: scenarios.FaultBudgetSpike, Probability: 0.3, Factor: 20}}
		s.Recovery.Budgets.Tokens = 1000
		s.Recovery.OnExhaustion = onExhaustion
		return s
	}
	spiked := func(c *record.Collector) map[int64]bool {
		m := map[int64]bool{}
		for _, sp := range c.Spans {
			if sp.Operation == record.OpPlan && sp.FaultID == "spike" {
				m[sp.InvestigationID] = true
			}
		}
		return m
	}
	t.Run("terminate", func(t *testing.T) {
		var c record.Collector
		res := run(t, base("terminate"), 1, &c)
		sp := spiked(&c)
		// 300 draws at probability 0.3: 90 expected, sd 7.9.
		if len(sp) < 50 || len(sp) > 130 {
			t.Fatalf("%d spiked investigations of 300 at probability 0.3", len(sp))
		}
		for _, inv := range c.Investigations {
			if sp[inv.InvestigationID] != (inv.FinalState == "terminated") ||
				sp[inv.InvestigationID] && inv.TerminationReason != "budget_exceeded" {
				t.Fatalf("investigation %d spiked=%t ended %s (%s)", inv.InvestigationID, sp[inv.InvestigationID], inv.FinalState, inv.TerminationReason)
			}
		}
		if res.Terminated != len(sp) {
			t.Fatalf("%d terminated, %d spiked", res.Terminated, len(sp))
		}
	})
	t.Run("reduce_scope", func(t *testing.T) {
		// 100 tokens a turn, budget 250: the third turn exceeds it; two steps are done.
		s := base("reduce_scope")
		s.Faults = nil
		s.Recovery.Budgets.Tokens = 250
		var c record.Collector
		res := run(t, s, 1, &c)
		for _, inv := range c.Investigations {
			if inv.FinalState != "completed" || inv.Steps != 2 {
				t.Fatalf("investigation %d: %s with %d steps, want completed with 2", inv.InvestigationID, inv.FinalState, inv.Steps)
			}
		}
		if res.Completed != res.Started {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("pause", func(t *testing.T) {
		s := base("pause")
		s.Faults = nil
		s.Recovery.Budgets.Tokens = 250
		var c record.Collector
		res := run(t, s, 1, &c)
		for _, inv := range c.Investigations {
			if inv.FinalState != "completed" || inv.Steps != 5 || inv.EndedAt-inv.ArrivedAt < int64(pauseFor) {
				t.Fatalf("investigation %d: %s with %d steps after %v", inv.InvestigationID, inv.FinalState, inv.Steps, time.Duration(inv.EndedAt-inv.ArrivedAt))
			}
		}
		pauses := 0
		for _, tr := range c.Transitions {
			if tr.Action == "pause" && tr.To == "waiting" {
				pauses++
			}
		}
		if pauses != res.Started {
			t.Fatalf("%d pauses for %d investigations", pauses, res.Started)
		}
	})
}

// TestSamples: one sample per tool each minute while there is work, none after.
func TestSamples(t *testing.T) {
	s := testScenario()
	s.Workload.Investigations = 500
	s.Tools = append(s.Tools, scenarios.Tool{Name: "other", Idempotency: scenarios.Natural,
		Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: 1e9}})
	s.Workload.Mix = append(s.Workload.Mix, scenarios.Weight{Tool: "other", Weight: 1})
	var c record.Collector
	res := run(t, s, 1, &c)
	per := map[string][]int64{}
	attempts := 0
	for _, sm := range c.Samples {
		per[sm.Tool] = append(per[sm.Tool], sm.At)
		attempts += int(sm.Attempts)
	}
	want := int(res.Makespan / int64(time.Minute))
	for _, name := range []string{"svc", "other"} {
		ts := per[name]
		if len(ts) != want {
			t.Fatalf("%s: %d samples over a makespan of %v, want %d", name, len(ts), time.Duration(res.Makespan), want)
		}
		for i, at := range ts {
			if at != int64(i+1)*int64(time.Minute) {
				t.Fatalf("%s: sample %d at %v", name, i, time.Duration(at))
			}
		}
	}
	if attempts == 0 || attempts > res.Started {
		t.Fatalf("samples count %d attempts for %d one-step investigations", attempts, res.Started)
	}
}
