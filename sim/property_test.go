package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// spendFleet draws a small scenario that spends against budgets in every way the simulator
// knows: priced (or free) tokens, calls and compute; cost, token and compute budgets with any
// exhaustion policy; tools of random latency, concurrency, queue limit, idempotency and
// timeout, cancelling on timeout or not; transient, lost-response, brownout and hang faults
// on the tools, outages and transient errors of the model provider, worker and zone
// crashes, bad configurations and budget spikes; retries (with a breaker and a retry
// budget or not), inspections, revisions, stuck agents and non-progress detection,
// subagents, a model supervisor, humans and limited workers (released while waiting or
// not). It returns the scenario's YAML.
func spendFleet(t *rapid.T) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	pick := func(label string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label) }
	f := func(label string, lo, hi float64) float64 { return rapid.Float64Range(lo, hi).Draw(t, label) }
	n := func(label string, lo, hi int) int { return rapid.IntRange(lo, hi).Draw(t, label) }
	coin := func(label string) bool { return rapid.Bool().Draw(t, label) }

	p("name: spend\nseed: 1\nhorizon: 3d\nworkload:\n")
	p("  investigations: %d\n", n("investigations", 1, 40))
	p("  arrival: %s\n", pick("arrival", "{poisson: 1/s}", "{poisson: 6/m}", "{at_once: true}"))
	p("  steps: {dist: uniform, min: 1, max: %d}\n", n("steps", 1, 8))
	p("  think: {dist: exponential, mean: %.1fs}\n", f("think", 0.1, 20))
	p("  tokens: {dist: exponential, mean: %d}\n", n("tokens", 10, 4000))
	p("  model: m\n  tools: {a: 1, b: %d}\n", n("mix", 1, 3))
	p("  behaviour: {invalid_output: %.2f, revise_success: %.2f, policy_violation: %.2f, stuck: %.2f}\n",
		f("invalid", 0, 0.5), f("revise", 0, 1), f("violation", 0, 0.05), f("stuck", 0, 0.2))
	if coin("subagents") {
		p("  subagents: {probability: %.2f, count: {dist: uniform, min: 1, max: 2}, max_depth: %d}\n", f("sub", 0, 0.4), n("depth", 1, 2))
	}
	if coin("workers") {
		p("  workers: %d\n", n("nworkers", 1, 20))
		if coin("release") {
			p("  hold_worker: [running]\n")
		}
	}
	timeouts := map[string]bool{}
	p("tools:\n")
	for _, tool := range []string{"a", "b"} {
		mean := f("latency-"+tool, 0.05, 20)
		lat := fmt.Sprintf("{dist: exponential, mean: %.2fs}", mean)
		if coin("constant-" + tool) {
			lat = fmt.Sprintf("{dist: constant, value: %.2fs}", mean)
		}
		p("  %s: {latency: %s, idempotency: %s, compute: %.2f", tool,
			lat, pick("idem-"+tool, "keyed", "natural", "none"), f("compute-"+tool, 0, 5))
		if coin("timeout-" + tool) {
			timeouts[tool] = true
			p(", timeout: %.2fs, cancel_on_timeout: %t", mean*f("tmult-"+tool, 0.2, 3), coin("cancel-"+tool))
		}
		if coin("conc-" + tool) {
			p(", concurrency: %d, queue_limit: %d", n("servers-"+tool, 1, 4), n("qlimit-"+tool, 0, 5))
		}
		p("}\n")
	}
	if coin("model") {
		p("model: {requests_per_minute: %d, tokens_per_minute: %d, latency_per_1k_tokens: %.1fs, failure: %.2f}\n",
			n("rpm", 5, 600), n("tpm", 5000, 500000), f("per1k", 0, 3), f("mfail", 0, 0.2))
	}
	p("faults:\n  - {kind: transient, tool: a, probability: %.2f}\n", f("transient", 0, 0.6))
	if timeouts["a"] {
		p("  - {kind: lost_response, tool: a, probability: %.2f}\n", f("lost", 0, 0.4))
		p("  - {kind: hang, tool: a, at: %dm, for: %dm}\n", n("hang-at", 0, 60), n("hang-for", 1, 60))
	}
	if coin("brownout") {
		p("  - {kind: brownout, tool: b, at: %dm, for: %dm, probability: %.2f, slowdown: %.1f}\n",
			n("brown-at", 0, 60), n("brown-for", 1, 60), f("brown-p", 0.01, 0.5), f("slowdown", 1, 10))
	}
	if coin("model-outage") {
		p("  - {kind: outage, tool: model, at: %dm, for: %dm}\n", n("mout-at", 0, 30), n("mout-for", 1, 60))
	}
	if coin("model-transient") {
		p("  - {kind: transient, tool: model, probability: %.2f}\n", f("mtrans", 0, 0.5))
	}
	if coin("crash") {
		p("  - {kind: worker_crash, rate: %d/h}\n", n("crash-rate", 1, 20))
	}
	if coin("zone-crash") {
		p("  - {kind: zone_crash, share: %.2f, at: %dm, for: %dm}\n", f("zshare", 0.05, 1), n("zat", 0, 60), n("zfor", 1, 60))
	}
	if coin("bad-config") {
		p("  - {kind: invalid_config, probability: %.2f}\n", f("badcfg", 0, 0.3))
	}
	if coin("spike") {
		p("  - {kind: budget_spike, probability: %.2f, factor: %.1f}\n", f("spike-p", 0, 0.5), f("spike", 1, 20))
	}
	p("recovery:\n  retry: {max_attempts: %d, initial: 1s, max: 20s}\n  revisions: %d\n", n("attempts", 1, 6), n("revisions", 0, 3))
	p("  lease: %ds\n", n("lease", 1, 600))
	if coin("breaker") {
		p("  breaker: {}\n")
	}
	if coin("retry-budget") {
		p("  retry_budget: {}\n")
	}
	if coin("non-progress") {
		p("  non_progress: {repeats: %d}\n", n("repeats", 1, 4))
	}
	if coin("no-inspect") {
		p("  inspect_before_retry: false\n")
	}
	p("  budgets: {cost: %.4f", f("cost", 0.0005, 0.2))
	if coin("token-budget") {
		p(", tokens: %d", n("btokens", 100, 40000))
	}
	if coin("compute-budget") {
		p(", compute: %.1f", f("bcompute", 0.5, 100))
	}
	p("}\n  on_exhaustion: %s\n", pick("exhaustion", "terminate", "reduce_scope", "pause"))
	if coin("supervisor") {
		p("  supervisor: {kind: model, accuracy: %.2f, latency: %ds, tokens: %d}\n", f("accuracy", 0, 1), n("slat", 0, 60), n("stokens", 0, 5000))
	}
	if coin("humans") {
		p("  humans: {reviewers: %d, review_time: {dist: constant, value: %dm}, approve: %.2f}\n", n("reviewers", 1, 3), n("review", 1, 30), f("approve", 0, 1))
	}
	price := func(label string) float64 {
		if coin(label + "-free") {
			return 0
		}
		return f(label, 0, 0.02)
	}
	p("prices:\n  models: {m: {input: %.5f, output: %.5f}}\n  tools:\n", price("in"), price("out"))
	for _, tool := range []string{"a", "b"} {
		p("    %s: {call: %.5f, compute_second: %.5f}\n", tool, price("call-"+tool), price("cpu-"+tool))
	}
	return b.String()
}

// used is what one investigation spent and the largest single spend of each kind, read from
// its records by the rules of the `costs` view; allotments counts its budget allotments
// (1 + the pauses that renewed them).
type used struct {
	cost, tokens, compute          float64
	maxCost, maxTokens, maxCompute float64
	allotments                     int
}

// spendsOf reads each investigation's spends from c. A spend is a model turn or a supervisor
// consultation (its tokens), or a tool attempt: its call, and the whole compute of the
// execution it started, however long that ran. Every execution was started by one attempt,
// which paid its tool's call, so call + compute of each execution is the spend of the
// attempt that started it; an attempt that started none spends its call alone.
func spendsOf(s *scenarios.Scenario, c *record.Collector) map[int64]*used {
	u := map[int64]*used{}
	of := func(inv int64) *used {
		if u[inv] == nil {
			u[inv] = &used{allotments: 1}
		}
		return u[inv]
	}
	mp := s.Prices.Model(s.Workload.Model)
	call, comp := map[string]float64{}, map[string]float64{}
	for _, t := range s.Tools {
		if tp := s.Prices.Tool(t.Name); tp != nil {
			call[t.Name], comp[t.Name] = tp.Call, tp.ComputeSecond
		}
	}
	for i := range c.Spans {
		sp := &c.Spans[i]
		x := of(sp.InvestigationID)
		switch {
		case sp.Operation == record.OpPlan || sp.Operation == record.OpSupervise:
			n := float64(sp.InputTokens + sp.OutputTokens)
			m := float64(sp.InputTokens)/1000*mp.Input + float64(sp.OutputTokens)/1000*mp.Output
			x.tokens += n
			x.cost += m
			x.maxTokens, x.maxCost = max(x.maxTokens, n), max(x.maxCost, m)
		case sp.Operation == record.OpExecuteTool && sp.Status != record.StatusBlocked:
			x.cost += call[sp.Tool]
			x.maxCost = max(x.maxCost, call[sp.Tool])
		}
	}
	for i := range c.Executions {
		e := &c.Executions[i]
		x := of(e.InvestigationID)
		m := e.Compute * comp[e.Tool]
		x.cost += m
		x.compute += e.Compute
		x.maxCost = max(x.maxCost, call[e.Tool]+m)
		x.maxCompute = max(x.maxCompute, e.Compute)
	}
	for i := range c.Transitions {
		if tr := &c.Transitions[i]; tr.Action == "pause" {
			of(tr.InvestigationID).allotments++
		}
	}
	return u
}

// overshoots lists the investigations of c whose spend of a budgeted resource passed what
// the rule allows: per allotment, the budget plus the one spend that crossed it.
func overshoots(s *scenarios.Scenario, c *record.Collector) []string {
	b := &s.Recovery.Budgets
	var bad []string
	check := func(inv int64, what string, got, budget, largest float64, k int) {
		// A float tolerance far below any spend: sums of at most a few thousand terms.
		if budget > 0 && got > float64(k)*(budget+largest)+1e-9*(1+got) {
			bad = append(bad, fmt.Sprintf("investigation %d spent %g %s against a budget of %g in %d allotment(s), more than its largest spend %g over it",
				inv, got, what, budget, k, largest))
		}
	}
	for inv, x := range spendsOf(s, c) {
		check(inv, "money", x.cost, b.Cost, x.maxCost, x.allotments)
		check(inv, "tokens", x.tokens, float64(b.Tokens), x.maxTokens, x.allotments)
		check(inv, "compute", x.compute, b.Compute, x.maxCompute, x.allotments)
	}
	return bad
}

// TestPropertyBudgetOneSpend: on any scenario of spendFleet, no investigation spends more of
// a budgeted resource (money, tokens, compute) than its budget plus its one largest spend of
// that resource, per allotment: each spend is checked before it is made against all that is
// committed, including the whole compute of executions still queued or running.
func TestPropertyBudgetOneSpend(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		yaml := spendFleet(rt)
		s, err := scenarios.Parse("spend.yaml", []byte(yaml), nil)
		if err != nil {
			rt.Fatalf("the generator wrote a scenario Parse refuses: %v\n%s", err, yaml)
		}
		c := runRapid(rt, s, rapid.Uint64Range(1, 1000).Draw(rt, "seed"))
		if bad := overshoots(s, c); len(bad) > 0 {
			rt.Fatalf("%d overshoots, first: %s\n%s", len(bad), bad[0], yaml)
		}
	})
}

// rapidDeadline bounds one run of a generated scenario.
const rapidDeadline = 30 * time.Second

// runRapid runs s with invariant checks on and fails the check on an error or violation,
// or when the run has not ended after rapidDeadline (the generated fleets take
// milliseconds): a simulator that no longer ends fails here rather than hanging the test.
func runRapid(t *rapid.T, s *scenarios.Scenario, seed uint64) *record.Collector {
	var c record.Collector
	ctx, cancel := context.WithTimeout(context.Background(), rapidDeadline)
	defer cancel()
	res, err := Run(ctx, s, seed, &c, Options{Check: true})
	if err != nil {
		t.Fatalf("Run(seed %d): %v", seed, err)
	}
	if res.Partial {
		t.Fatalf("Run(seed %d) had not ended after %v (%d events)", seed, rapidDeadline, res.Events)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("Run(seed %d): %d invariant violations, first: %s", seed, len(res.Violations), res.Violations[0])
	}
	return &c
}

// TestPropertyCancelDeadline: on any scenario of spendFleet, no execution at a tool with
// cancel_on_timeout ends after its attempt's timeout, whatever became of the attempt's
// caller (its worker crashed, it ended). The attempt that started an execution was sent at
// or before the execution started; the latest attempt of the operation sent by then has
// the latest deadline an execution may keep, so an end past it is past its own attempt's.
func TestPropertyCancelDeadline(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		yaml := spendFleet(rt)
		s, err := scenarios.Parse("spend.yaml", []byte(yaml), nil)
		if err != nil {
			rt.Fatalf("the generator wrote a scenario Parse refuses: %v\n%s", err, yaml)
		}
		c := runRapid(rt, s, rapid.Uint64Range(1, 1000).Draw(rt, "seed"))
		timeout := map[string]int64{}
		for _, tl := range s.Tools {
			if tl.CancelOnTimeout {
				timeout[tl.Name] = int64(tl.Timeout)
			}
		}
		sent := map[record.OpKey][]int64{} // in the order sent
		for i := range c.Spans {
			if sp := &c.Spans[i]; sp.Operation == record.OpExecuteTool && sp.Status != record.StatusBlocked {
				sent[sp.OpKey] = append(sent[sp.OpKey], sp.Start)
			}
		}
		for i := range c.Executions {
			e := &c.Executions[i]
			tt, ok := timeout[e.Tool]
			if !ok {
				continue
			}
			latest := int64(-1)
			for _, at := range sent[e.OpKey] {
				if at <= e.Start {
					latest = max(latest, at)
				}
			}
			if latest < 0 || e.End > latest+tt {
				rt.Fatalf("execution %d of %v at %s ran %d..%d, past its attempt's deadline (latest attempt sent by its start: %d, timeout %d)\n%s",
					e.Execution, e.OpKey, e.Tool, e.Start, e.End, latest, tt, yaml)
			}
		}
	})
}

// TestPropertyModelDown: on any scenario of spendFleet, no model call succeeds while the
// model is down: no model turn or consultation of a model supervisor that spent tokens
// (status ok) was in flight at any instant of an outage of the model.
func TestPropertyModelDown(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		yaml := spendFleet(rt)
		s, err := scenarios.Parse("spend.yaml", []byte(yaml), nil)
		if err != nil {
			rt.Fatalf("the generator wrote a scenario Parse refuses: %v\n%s", err, yaml)
		}
		c := runRapid(rt, s, rapid.Uint64Range(1, 1000).Draw(rt, "seed"))
		for _, f := range s.Faults {
			if f.Kind != scenarios.FaultOutage || f.Tool != scenarios.ModelTool {
				continue
			}
			from, to := int64(f.At), int64(f.At+f.For)
			for i := range c.Spans {
				sp := &c.Spans[i]
				call := sp.Operation == record.OpPlan && spanAttr(sp, "kind") == "model_turn" ||
					sp.Operation == record.OpSupervise && sp.Model != ""
				if call && sp.Status == record.StatusOK && sp.End >= from && sp.Start < to {
					rt.Fatalf("%s span of investigation %d ran %d..%d, ok, while the model was down %d..%d\n%s",
						sp.Operation, sp.InvestigationID, sp.Start, sp.End, from, to, yaml)
				}
			}
		}
	})
}

// zoneFleet draws a limited fleet in zones with one or two zone_crash faults that name a
// zone, worker crashes, tools, humans, subagents, a model supervisor and hold_worker; it
// returns the scenario's YAML and whether workers are held in every state.
func zoneFleet(t *rapid.T) (string, bool) {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	n := func(label string, lo, hi int) int { return rapid.IntRange(lo, hi).Draw(t, label) }
	f := func(label string, lo, hi float64) float64 { return rapid.Float64Range(lo, hi).Draw(t, label) }
	coin := func(label string) bool { return rapid.Bool().Draw(t, label) }
	zones := rapid.SampledFrom([]string{"{a: 1}", "{a: 0.5, b: 0.5}", "{a: 0.75, b: 0.25}", "{a: 0.25, b: 0.25, c: 0.5}"}).Draw(t, "zones")
	names := []string{"a", "b", "c"}[:strings.Count(zones, ":")]
	p("name: zones\nseed: 1\nhorizon: 3d\nworkload:\n")
	p("  investigations: %d\n  arrival: %s\n", n("investigations", 1, 60), rapid.SampledFrom([]string{"{poisson: 1/m}", "{poisson: 10/m}", "{at_once: true}"}).Draw(t, "arrival"))
	p("  steps: {dist: uniform, min: 1, max: %d}\n", n("steps", 1, 6))
	p("  think: {dist: exponential, mean: %ds}\n", n("think", 1, 300))
	p("  workers: %d\n  zones: %s\n", n("workers", len(names), 20), zones)
	held := true
	if coin("hold") {
		held = false
		p("  hold_worker: [%s]\n", rapid.SampledFrom([]string{"running", "running, waiting", "running, recovering", "waiting, recovering, awaiting_human"}).Draw(t, "held"))
	}
	if coin("subagents") {
		p("  subagents: {probability: %.2f, count: {dist: constant, value: 1}, max_depth: 1}\n", f("sub", 0, 0.5))
	}
	p("  behaviour: {invalid_output: %.2f, revise_success: 0.5}\n", f("invalid", 0, 0.3))
	p("tools:\n  svc: {latency: {dist: exponential, mean: %ds}, timeout: %ds, idempotency: keyed}\n", n("latency", 1, 300), n("timeout", 1, 600))
	p("faults:\n  - {kind: transient, tool: svc, probability: %.2f}\n", f("transient", 0, 0.5))
	for i := range n("crashes", 1, 2) {
		p("  - {id: zone-%d, kind: zone_crash, zone: %s, at: %dm, for: %dm}\n", i, rapid.SampledFrom(names).Draw(t, "zone"), n("at", 0, 90), n("for", 1, 60))
	}
	if coin("worker-crash") {
		p("  - {kind: worker_crash, rate: %d/h}\n", n("rate", 1, 10))
	}
	p("recovery:\n  retry: {max_attempts: %d, initial: 1s, max: 1m}\n  revisions: 1\n  lease: %ds\n", n("attempts", 1, 4), n("lease", 1, 600))
	if coin("supervisor") {
		p("  supervisor: {kind: model, accuracy: 0.8, latency: %ds, tokens: 100}\n", n("slat", 0, 120))
	}
	if coin("humans") {
		p("  humans: {reviewers: %d, review_time: {dist: constant, value: %dm}, approve: 0.7}\n", n("reviewers", 1, 3), n("review", 1, 60))
	}
	return b.String(), held
}

// TestPropertyZoneCrash: on any scenario of zoneFleet, a crash of a named zone takes down
// exactly that zone's workers and only their investigations: every takeover it causes died
// at its start on a worker of its zone; while the zone is down no operation ends on one of
// its workers (none is handed out), so none that was running on one goes on; and with
// workers held in every state no operation that began before the crash ends on one of its
// workers at all (its investigation crashed, or lost the worker while waiting for a human),
// and every operation of an investigation's own ends on a worker (one that was not crashed
// kept its worker).
func TestPropertyZoneCrash(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		yaml, held := zoneFleet(rt)
		s, err := scenarios.Parse("zones.yaml", []byte(yaml), nil)
		if err != nil {
			rt.Fatalf("the generator wrote a scenario Parse refuses: %v\n%s", err, yaml)
		}
		c := runRapid(rt, s, rapid.Uint64Range(1, 1000).Draw(rt, "seed"))
		zone := map[int64]string{}
		for _, r := range c.Workers {
			zone[r.Worker] = r.Zone
		}
		type window struct {
			zone     string
			from, to int64
		}
		crash := map[string]window{}
		for _, fl := range s.Faults {
			if fl.Kind == scenarios.FaultZoneCrash {
				crash[fl.ID] = window{fl.Params.(*zoneCrashParams).Zone, int64(fl.At), int64(fl.At + fl.For)}
			}
		}
		for i := range c.Spans {
			sp := &c.Spans[i]
			if w, ok := crash[sp.FaultID]; ok && sp.Operation == record.OpTakeover {
				if sp.Start != w.from || zone[sp.Worker] != w.zone {
					rt.Fatalf("takeover of %d caused by %s died at %d on worker %d of zone %q; want %d, zone %q\n%s",
						sp.InvestigationID, sp.FaultID, sp.Start, sp.Worker, zone[sp.Worker], w.from, w.zone, yaml)
				}
				continue
			}
			if sp.Worker == 0 {
				// Holding its worker in every state, an investigation loses it only with
				// its worker's crash (which ends the operation in hand first, on that
				// worker), or while it has nothing to lose (awaiting a human, its
				// subagents): every operation of its own ran on a worker, till its end.
				own := sp.Operation == record.OpExecuteTool || sp.Operation == record.OpValidate ||
					sp.Operation == record.OpInspect || sp.Operation == record.OpPlan && spanAttr(sp, "kind") == "model_turn"
				if held && own {
					rt.Fatalf("%s span of %d ran %d..%d on no worker: it lost its worker while working without crashing\n%s",
						sp.Operation, sp.InvestigationID, sp.Start, sp.End, yaml)
				}
				continue
			}
			if sp.Operation == record.OpTakeover {
				continue // it names the worker that died, and runs while that is down
			}
			for id, w := range crash {
				if zone[sp.Worker] != w.zone {
					continue
				}
				if sp.End > w.from && sp.End < w.to || held && sp.Start < w.from && sp.End > w.from {
					rt.Fatalf("%s span of %d on worker %d of zone %s ran %d..%d across %s (%d..%d)\n%s",
						sp.Operation, sp.InvestigationID, sp.Worker, w.zone, sp.Start, sp.End, id, w.from, w.to, yaml)
				}
			}
		}
	})
}
