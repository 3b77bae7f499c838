package sim

import (
	"context"
	"encoding"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

var update = flag.Bool("update", false, "rewrite the expected output of sim/testdata/script/*.txt")

// The scripts in testdata/script build a small scenario with keyword arguments, run the whole
// simulator on it and print the records a change should move, one a line. Each file starts
// from a fresh scenario. Commands (durations as in Go, 1.5s; rates N/unit, 1/30m):
//
//	scenario [investigations=N arrival=at_once|uniform|poisson over=D rate=R steps=N
//	          think=D tokens=N workers=N horizon=D]   start over: no tools, no faults, retries
//	                                                   without jitter, every other key default
//	tool name=S [latency=D timeout=D concurrency=N idempotency=keyed|natural|none
//	             queue_limit=N compute=F weight=F cancel=BOOL]   add a tool (constant latency)
//	                                                   to the mix; cancel: cancel_on_timeout
//	fault kind=K [id=S tool=S at=D for=D probability=F slowdown=F rate=R factor=F share=F]
//	retry [attempts=N initial=D multiplier=F max=D jitter=J on_exhausted=escalate|terminate]
//	recovery [lease=D inspect=BOOL revisions=N on_exhaustion=pause|reduce_scope|terminate
//	          tokens=N compute=F wall=D cost=F repeats=N]   budgets; repeats: non-progress
//	retry_budget ratio=F min_per_second=F [max_tokens=F]
//	breaker window=D ratio=F min_calls=N cooldown=D
//	model [rpm=F tpm=F latency_per_1k=D failure=F]
//	humans reviewers=N [review=D approve=F]          constant review time
//	supervisor [kind=rules|model accuracy=F latency=D tokens=N]
//	behaviour [invalid_output=F revise_success=F policy_violation=F stuck=F validation_miss=F]
//	subagents [probability=F count=N max_depth=N priority=fifo|roots_first|subagents_first
//	           on_failure=reduce_scope|respawn|fail max=N then=reduce_scope|fail]
//	prices [model_input=F model_output=F call=F compute_second=F]   per 1000 tokens, per
//	                                                  attempt, per compute-second; every tool
//	run [seed=N investigations=N show=K,K,... inv=N,N,...]
//
// run prints, in the order the simulator emits them, the records of the kinds in show
// (default faults,attempts,transitions,investigations; also spans: the other spans,
// executions and samples), of the investigations in inv (default all), then the run's
// result. With a
// scenario the simulator refuses, it prints the error. `go test ./sim -run TestScripts
// -update` rewrites the expected output.
func TestScripts(t *testing.T) {
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := filepath.Glob("testdata/script/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts in testdata/script: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			sc := newScript()
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				return sc.do(t, td)
			})
		})
	}
}

type script struct {
	s *scenarios.Scenario
}

func newScript() *script {
	sc := &script{}
	sc.reset()
	return sc
}

// reset is the scenario every file starts from: one investigation at 0 with one step, a
// model turn of 100 tokens and no think time, retries without jitter, no tools yet.
func (sc *script) reset() {
	s := scenarios.Defaults()
	s.Name = "script"
	s.Workload.Tokens = scenarios.Dist{Kind: scenarios.DistConstant, Value: 100}
	s.Workload.Model = "test-model"
	s.Recovery.Retry.Jitter = recovery.JitterNone
	sc.s = s
}

// args reads a command's keyword arguments; a positional or repeated one fails the test.
func args(t *testing.T, td *datadriven.TestData, allowed ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, a := range td.CmdArgs {
		if len(a.Vals) != 1 {
			t.Fatalf("%s: %s: argument %q: want key=value", td.Pos, td.Cmd, a.Key)
		}
		if !slices.Contains(allowed, a.Key) {
			t.Fatalf("%s: %s: unknown key %q (want one of %s)", td.Pos, td.Cmd, a.Key, strings.Join(allowed, ", "))
		}
		if _, dup := m[a.Key]; dup {
			t.Fatalf("%s: %s: key %q given twice", td.Pos, td.Cmd, a.Key)
		}
		m[a.Key] = a.Vals[0]
	}
	return m
}

// kv is one command's arguments with typed accessors that fail the test, naming the key,
// on a malformed value. Each accessor sets *dst only when the key is present.
type kv struct {
	t  *testing.T
	td *datadriven.TestData
	m  map[string]string
}

func (a kv) fail(k string, err error) {
	a.t.Helper()
	a.t.Fatalf("%s: %s %s=%s: %v", a.td.Pos, a.td.Cmd, k, a.m[k], err)
}

func (a kv) str(k string, dst *string) {
	if v, ok := a.m[k]; ok {
		*dst = v
	}
}

// text reads a word into an enum of the engine (recovery.Jitter), as the file format does.
func (a kv) text(k string, dst encoding.TextUnmarshaler) {
	if v, ok := a.m[k]; ok {
		if err := dst.UnmarshalText([]byte(v)); err != nil {
			a.fail(k, err)
		}
	}
}

func (a kv) dur(k string, dst *time.Duration) {
	if v, ok := a.m[k]; ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			a.fail(k, err)
		}
		*dst = d
	}
}

func (a kv) num(k string, dst *float64) {
	if v, ok := a.m[k]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			a.fail(k, err)
		}
		*dst = f
	}
}

func (a kv) int(k string, dst *int) {
	if v, ok := a.m[k]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			a.fail(k, err)
		}
		*dst = n
	}
}

func (a kv) bool(k string, dst *bool) {
	if v, ok := a.m[k]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			a.fail(k, err)
		}
		*dst = b
	}
}

func (a kv) rate(k string, dst *scenarios.Rate) {
	if v, ok := a.m[k]; ok {
		r, err := scenarios.ParseRate(v)
		if err != nil {
			a.fail(k, err)
		}
		*dst = r
	}
}

// constant sets a constant distribution from a duration (durations) or a number (counts).
func (a kv) constant(k string, dst *scenarios.Dist, duration bool) {
	if _, ok := a.m[k]; !ok {
		return
	}
	var f float64
	if duration {
		var d time.Duration
		a.dur(k, &d)
		f = float64(d)
	} else {
		a.num(k, &f)
	}
	*dst = scenarios.Dist{Kind: scenarios.DistConstant, Value: f}
}

func (sc *script) do(t *testing.T, td *datadriven.TestData) string {
	keys := map[string][]string{
		"scenario":     {"investigations", "arrival", "over", "rate", "steps", "think", "tokens", "workers", "horizon"},
		"tool":         {"name", "latency", "timeout", "concurrency", "idempotency", "queue_limit", "compute", "weight", "cancel"},
		"fault":        {"kind", "id", "tool", "at", "for", "probability", "slowdown", "rate", "factor", "share"},
		"retry":        {"attempts", "initial", "multiplier", "max", "jitter", "on_exhausted"},
		"recovery":     {"lease", "inspect", "revisions", "on_exhaustion", "tokens", "compute", "wall", "cost", "repeats"},
		"retry_budget": {"ratio", "min_per_second", "max_tokens"},
		"breaker":      {"window", "ratio", "min_calls", "cooldown"},
		"model":        {"rpm", "tpm", "latency_per_1k", "failure"},
		"run":          {"seed", "investigations", "show", "inv"},
		"humans":       {"reviewers", "review", "approve"},
		"supervisor":   {"kind", "accuracy", "latency", "tokens"},
		"behaviour":    {"invalid_output", "revise_success", "policy_violation", "stuck", "validation_miss"},
		"subagents":    {"probability", "count", "max_depth", "priority", "on_failure", "max", "then"},
		"prices":       {"model_input", "model_output", "call", "compute_second"},
	}
	allowed, ok := keys[td.Cmd]
	if !ok {
		t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	}
	a := kv{t: t, td: td, m: args(t, td, allowed...)}
	switch td.Cmd {
	case "scenario":
		sc.reset()
		sc.workload(a)
	case "tool":
		sc.tool(a)
	case "fault":
		sc.fault(a)
	case "retry", "recovery", "retry_budget", "breaker":
		sc.recovery(a)
	case "model":
		m := &scenarios.ModelService{}
		a.num("rpm", &m.RequestsPerMinute)
		a.num("tpm", &m.TokensPerMinute)
		a.dur("latency_per_1k", &m.LatencyPer1kTokens)
		a.num("failure", &m.Failure)
		sc.s.Model = m
	case "humans", "supervisor", "behaviour", "subagents", "prices":
		sc.agents(a)
	case "run":
		return sc.run(t, a)
	}
	return "ok"
}

// agents sets who the agents answer to and how they misbehave.
func (sc *script) agents(a kv) {
	s := sc.s
	switch a.td.Cmd {
	case "humans":
		h := &scenarios.Humans{ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(10 * time.Minute)}, Approve: 1}
		a.int("reviewers", &h.Reviewers)
		a.constant("review", &h.ReviewTime, true)
		a.num("approve", &h.Approve)
		s.Recovery.Humans = h
	case "supervisor":
		v := &s.Recovery.Supervisor
		a.str("kind", &v.Kind)
		a.num("accuracy", &v.Accuracy)
		a.dur("latency", &v.Latency)
		var tokens int
		a.int("tokens", &tokens)
		v.Tokens = int64(tokens)
	case "behaviour":
		b := &s.Workload.Behaviour
		a.num("invalid_output", &b.InvalidOutput)
		a.num("revise_success", &b.ReviseSuccess)
		a.num("policy_violation", &b.PolicyViolation)
		a.num("stuck", &b.Stuck)
		a.num("validation_miss", &b.ValidationMiss)
	case "subagents":
		sa := &s.Workload.Subagents
		a.num("probability", &sa.Probability)
		a.constant("count", &sa.Count, false)
		a.int("max_depth", &sa.MaxDepth)
		a.str("priority", &s.Workload.Priority)
		f := &s.Recovery.Subagents.OnFailure
		a.str("on_failure", &f.Action)
		a.int("max", &f.Max)
		a.str("then", &f.Then)
	case "prices":
		var in, out, call, cs float64
		a.num("model_input", &in)
		a.num("model_output", &out)
		a.num("call", &call)
		a.num("compute_second", &cs)
		p := &scenarios.Prices{Currency: "USD", Models: []scenarios.ModelPrice{{Model: s.Workload.Model, Input: in, Output: out}}}
		for _, tl := range s.Tools {
			p.Tools = append(p.Tools, scenarios.ToolPrice{Tool: tl.Name, Call: call, ComputeSecond: cs})
		}
		s.Prices = p
	}
}

func (sc *script) workload(a kv) {
	w := &sc.s.Workload
	a.int("investigations", &w.Investigations)
	var kind string
	a.str("arrival", &kind)
	if kind != "" {
		w.Arrival.Kind = scenarios.ArrivalKind(kind)
	}
	a.dur("over", &w.Arrival.Over)
	a.rate("rate", &w.Arrival.Rate)
	a.constant("steps", &w.Steps, false)
	a.constant("think", &w.Think, true)
	a.constant("tokens", &w.Tokens, false)
	a.int("workers", &w.Workers)
	a.dur("horizon", &sc.s.Horizon)
}

func (sc *script) tool(a kv) {
	tl := scenarios.Tool{Version: "1", Idempotency: scenarios.Keyed, Compute: 1,
		Latency: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(100 * time.Millisecond)}}
	a.str("name", &tl.Name)
	a.constant("latency", &tl.Latency, true)
	a.dur("timeout", &tl.Timeout)
	a.int("concurrency", &tl.Concurrency)
	var idem string
	a.str("idempotency", &idem)
	if idem != "" {
		tl.Idempotency = scenarios.Idempotency(idem)
	}
	a.int("queue_limit", &tl.QueueLimit)
	a.num("compute", &tl.Compute)
	a.bool("cancel", &tl.CancelOnTimeout)
	weight := 1.0
	a.num("weight", &weight)
	sc.s.Tools = append(sc.s.Tools, tl)
	sc.s.Workload.Mix = append(sc.s.Workload.Mix, scenarios.Weight{Tool: tl.Name, Weight: weight})
}

func (sc *script) fault(a kv) {
	f := scenarios.Fault{ID: strconv.Itoa(len(sc.s.Faults)), Index: len(sc.s.Faults)}
	var kind string
	a.str("kind", &kind)
	f.Kind = scenarios.FaultKind(kind)
	a.str("id", &f.ID)
	a.str("tool", &f.Tool)
	a.dur("at", &f.At)
	a.dur("for", &f.For)
	a.num("probability", &f.Probability)
	a.num("slowdown", &f.Slowdown)
	a.rate("rate", &f.Rate)
	a.num("factor", &f.Factor)
	a.num("share", &f.Share)
	sc.s.Faults = append(sc.s.Faults, f)
}

func (sc *script) recovery(a kv) {
	r := &sc.s.Recovery
	switch a.td.Cmd {
	case "retry":
		a.int("attempts", &r.Retry.MaxAttempts)
		a.dur("initial", &r.Retry.Initial)
		a.num("multiplier", &r.Retry.Multiplier)
		a.dur("max", &r.Retry.Max)
		a.text("jitter", &r.Retry.Jitter)
		a.text("on_exhausted", &r.Retry.OnExhausted)
	case "recovery":
		a.dur("lease", &r.Lease)
		a.bool("inspect", &r.InspectBeforeRetry)
		a.int("revisions", &r.Revisions)
		a.str("on_exhaustion", &r.OnExhaustion)
		var tokens float64
		a.num("tokens", &tokens)
		if tokens > 0 {
			r.Budgets.Tokens = int64(tokens)
		}
		a.num("compute", &r.Budgets.Compute)
		a.dur("wall", &r.Budgets.Wall)
		a.num("cost", &r.Budgets.Cost)
		if _, ok := a.m["repeats"]; ok {
			r.NonProgress = &scenarios.NonProgress{}
			a.int("repeats", &r.NonProgress.Repeats)
		}
	case "retry_budget":
		r.RetryBudget = &scenarios.RetryBudget{}
		a.num("ratio", &r.RetryBudget.Ratio)
		a.num("min_per_second", &r.RetryBudget.MinPerSecond)
		a.num("max_tokens", &r.RetryBudget.MaxTokens)
	case "breaker":
		r.Breaker = &scenarios.Breaker{}
		a.dur("window", &r.Breaker.Window)
		a.num("ratio", &r.Breaker.FailureRatio)
		a.int("min_calls", &r.Breaker.MinCalls)
		a.dur("cooldown", &r.Breaker.Cooldown)
	}
}

func (sc *script) run(t *testing.T, a kv) string {
	seed := 1
	a.int("seed", &seed)
	s := *sc.s // the run's investigations= changes this run only
	a.int("investigations", &s.Workload.Investigations)
	if len(s.Tools) == 0 {
		t.Fatalf("%s: run before any tool", a.td.Pos)
	}
	p := &printer{show: map[string]bool{"faults": true, "attempts": true, "transitions": true, "investigations": true}}
	if v, ok := a.m["show"]; ok {
		p.show = map[string]bool{}
		for _, k := range strings.Split(v, ",") {
			if !slices.Contains([]string{"faults", "attempts", "spans", "transitions", "executions", "investigations", "samples"}, k) {
				t.Fatalf("%s: run show=%s: unknown kind %q", a.td.Pos, v, k)
			}
			p.show[k] = true
		}
	}
	if v, ok := a.m["inv"]; ok {
		p.inv = map[int64]bool{}
		for _, k := range strings.Split(v, ",") {
			n, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				a.fail("inv", err)
			}
			p.inv[n] = true
		}
	}
	res, err := Run(context.Background(), &s, uint64(seed), p, Options{Check: true})
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	fmt.Fprintf(&p.b, "result: started=%d completed=%d terminated=%d awaiting_human=%d in_flight=%d makespan=%s\n",
		res.Started, res.Completed, res.Terminated, res.AwaitingHuman, res.InFlight, ts(res.Makespan))
	for _, v := range res.Violations {
		fmt.Fprintf(&p.b, "violation: %s\n", v)
	}
	return p.b.String()
}

// ts prints a simulated instant or duration exactly (1.5s, 10m0.000000001s).
func ts(ns int64) string { return time.Duration(ns).String() }

// printer is the record sink of a script's run: one line per record it shows.
type printer struct {
	show map[string]bool
	inv  map[int64]bool // nil: every investigation
	b    strings.Builder
}

func (p *printer) of(id int64) bool { return p.inv == nil || p.inv[id] }

func (p *printer) Investigation(r *record.Investigation) {
	if !p.show["investigations"] || !p.of(r.InvestigationID) {
		return
	}
	end := "in flight"
	if r.Ended {
		end = "ended=" + ts(r.EndedAt)
	}
	fmt.Fprintf(&p.b, "investigation %d: %s %s", r.InvestigationID, r.FinalState, end)
	if r.TerminationReason != "" {
		fmt.Fprintf(&p.b, " reason=%s", r.TerminationReason)
	}
	if r.ParentID != 0 {
		fmt.Fprintf(&p.b, " parent=%d depth=%d", r.ParentID, r.Depth)
	}
	fmt.Fprintf(&p.b, " arrived=%s steps=%d attempts=%d revisions=%d escalations=%d crashes=%d tokens=%d compute=%g",
		ts(r.ArrivedAt), r.Steps, r.Attempts, r.Revisions, r.Escalations, r.Crashes, r.Tokens, r.Compute)
	if r.Scope == record.ScopeReduced {
		p.b.WriteString(" scope=reduced")
	}
	fmt.Fprintf(&p.b, " valid=%t validated=%t\n", r.TrulyValid, r.Validated)
}

func (p *printer) Span(r *record.Span) {
	attempt := r.Operation == record.OpExecuteTool
	if attempt && !p.show["attempts"] || !attempt && (!p.show["spans"] || r.Operation == record.OpInvokeAgent) || !p.of(r.InvestigationID) {
		return
	}
	if attempt {
		fmt.Fprintf(&p.b, "%s..%s attempt inv=%d op=%d/%d #%d tool=%s %s", ts(r.Start), ts(r.End), r.InvestigationID,
			r.OpKey.Step, r.OpKey.Revision, r.Attempt, r.Tool, r.Status)
	} else {
		fmt.Fprintf(&p.b, "%s..%s %s inv=%d %s", ts(r.Start), ts(r.End), r.Operation, r.InvestigationID, r.Status)
		if r.Tool != "" {
			fmt.Fprintf(&p.b, " tool=%s", r.Tool)
		}
	}
	if r.QueueWait != 0 {
		fmt.Fprintf(&p.b, " queued=%s", ts(r.QueueWait))
	}
	if r.InputTokens != 0 || r.OutputTokens != 0 {
		fmt.Fprintf(&p.b, " tokens=%d/%d", r.InputTokens, r.OutputTokens)
	}
	if r.Compute != 0 {
		fmt.Fprintf(&p.b, " compute=%g", r.Compute)
	}
	if r.FailureClass != "" {
		fmt.Fprintf(&p.b, " class=%s", r.FailureClass)
	}
	if r.FaultID != "" {
		fmt.Fprintf(&p.b, " fault=%s", r.FaultID)
	}
	if !attempt {
		// Why a model call or a consultation failed (rate_limited, model_error, ...).
		for _, at := range r.Attrs {
			if at.Key == "error" {
				fmt.Fprintf(&p.b, " error=%s", at.Value)
			}
		}
	}
	p.b.WriteByte('\n')
}

func (p *printer) Transition(r *record.Transition) {
	if !p.show["transitions"] || !p.of(r.InvestigationID) {
		return
	}
	fmt.Fprintf(&p.b, "%s inv=%d %s → %s [%s] %s by=%s reason=%s", ts(r.At), r.InvestigationID, r.From, r.To,
		r.Event, r.Action, r.DecidedBy, r.Reason)
	if r.FailureClass != "" {
		fmt.Fprintf(&p.b, " class=%s", r.FailureClass)
	}
	fmt.Fprintf(&p.b, " attempt=%d\n", r.Attempt)
}

func (p *printer) Execution(r *record.Execution) {
	if !p.show["executions"] || !p.of(r.InvestigationID) {
		return
	}
	fmt.Fprintf(&p.b, "%s..%s execution inv=%d op=%d/%d #%d tool=%s %s delivered=%t\n", ts(r.Start), ts(r.End),
		r.InvestigationID, r.OpKey.Step, r.OpKey.Revision, r.Execution, r.Tool, r.Outcome, r.Delivered)
}

func (p *printer) Fault(r *record.Fault) {
	if !p.show["faults"] {
		return
	}
	fmt.Fprintf(&p.b, "fault %s: %s", r.FaultID, r.Kind)
	if r.Tool != "" {
		fmt.Fprintf(&p.b, " tool=%s", r.Tool)
	}
	fmt.Fprintf(&p.b, " [%s, %s) %s\n", ts(r.Start), ts(r.End), r.Parameters)
}

func (p *printer) Sample(r *record.Sample) {
	if !p.show["samples"] {
		return
	}
	fmt.Fprintf(&p.b, "%s sample tool=%s queued=%d in_service=%d parked=%d budget=%g breaker=%s attempts=%d failures=%d retries=%d\n",
		ts(r.At), r.Tool, r.Queued, r.InService, r.Parked, r.BudgetTokens, r.BreakerState, r.Attempts, r.Failures, r.Retries)
}

func (p *printer) Worker(r *record.Worker) {
	if !p.show["workers"] {
		return
	}
	fmt.Fprintf(&p.b, "worker %d zone=%s\n", r.Worker, r.Zone)
}
