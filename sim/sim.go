package sim

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Options tune a run without changing its records.
type Options struct {
	// Progress, if set, is called now and then with the root investigations ended so far
	// and the total expected: those the workload plans, or those started if more.
	Progress func(done, total int)
	// Check runs the invariant checks (always on in tests). Refusals by the engine are
	// reported in Result.Violations even without it.
	Check bool
}

// Result summarises one run.
type Result struct {
	Events   int64 // simulation events processed
	Makespan int64 // virtual ns at which the run ended
	// Root investigations: Started = Completed + Terminated + AwaitingHuman + InFlight.
	// AwaitingHuman and InFlight are those still open when the run ended.
	Started, Completed, Terminated, AwaitingHuman, InFlight int

	Partial    bool     // stopped by ctx before the end
	Violations []string // invariant violations (empty = ok)
}

// ErrNoScenario is returned by Run for a nil scenario.
var ErrNoScenario = errors.New("sim: no scenario")

// ctxEvery is how many events pass between two looks at the context and progress.
const ctxEvery = 4096

// sampleEvery is the period of tool samples while there is activity.
const sampleEvery = int64(60e9)

// Run simulates scenario s with seed and sends every record to sink (nil = discard).
// It is single-threaded and deterministic: the same scenario, seed and binary give the same
// records in the same order. Cancelling ctx stops the run early (Result.Partial); the records
// emitted stay consistent, with the investigations still open emitted as in flight.
func Run(ctx context.Context, s *scenarios.Scenario, seed uint64, sink record.Sink, opt Options) (Result, error) {
	if s == nil {
		return Result{}, ErrNoScenario
	}
	// The scenario's rules are checked here once (scenarios.Validate); nothing downstream
	// re-checks or clamps them.
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	if sink == nil {
		sink = record.Discard{}
	}
	// The order of a mapping's keys never matters: a scenario built in code runs as its
	// canonical form, as a parsed one does (scenarios.Canonical).
	s = s.Canonical()
	w, err := newSim(s, seed, sink, opt)
	if err != nil {
		return Result{}, err
	}
	w.run(ctx)
	return w.res, nil
}

// sim is one run's whole state. Everything is reached from here; nothing is global.
type sim struct {
	sc      *scenarios.Scenario
	seed    uint64
	sink    record.Sink
	opt     Options
	now     int64
	horizon int64
	h       eventHeap
	res     Result
	last    int64 // time of the last event that did work (not stale, not a sample)

	policy recovery.Policy
	guards *recovery.Guards
	env    recovery.Env // Rand is set to the observing agent's stream before each call

	// workload
	steps, thinkTime, tokens, subCount dist
	mixTool                            []int32
	mixCum                             []float64
	arrivals                           *rand.Rand
	arrivalU                           float64 // uniform arrivals: the last order statistic drawn
	roots                              int     // root investigations to arrive
	nextSubID                          int64

	tools  []tool
	faults []fault
	crash  []int32 // faults with a worker hook (worker_crash)
	perInv []int32 // faults with an investigation hook (invalid_config, budget_spike)
	timed  []int32 // faults with begin or end hooks at their window (zone_crash)
	// What the attempt or model hooks of the faults did to the current attempt or call:
	// fields of the simulator, not locals, so that no hook call makes them escape.
	fx  attemptEffects
	adm admission

	agents    []*agent // by slot; nil or !live = free
	freeSlots []int32
	open      int // live agents
	openRoots int
	ended     int // roots ended

	reqs     []request
	freeReqs []int32
	reqLive  int // requests queued or in service
	freeOps  []*opState

	pool     workerPool
	money    money
	model    provider
	humans   humans
	valPCG   *rand.PCG // the independent validator's stream, reseeded per investigation
	super    supervisor
	behave   scenarios.Behaviour
	maxDepth int

	spanSeq uint64
	// Records reused for every emission: the sink must not retain them.
	span  record.Span
	trans record.Transition
	exec  record.Execution
	inv   record.Investigation
	samp  record.Sample
	flt   record.Fault

	cur     *agent // the agent whose engine is being called (its journal receives the records)
	checker checker
}

func newSim(sc *scenarios.Scenario, seed uint64, sink record.Sink, opt Options) (*sim, error) {
	w := &sim{sc: sc, seed: seed, sink: sink, opt: opt}
	// Run validated sc: its horizon is above 0 (Validate gives a scenario without one the
	// default) and its mix names known tools with weights above 0.
	w.horizon = int64(sc.Horizon)
	wl := &sc.Workload
	w.roots = wl.Investigations
	w.nextSubID = int64(wl.Investigations) + 1
	w.steps, w.thinkTime, w.tokens = newDist(wl.Steps), newDist(wl.Think), newDist(wl.Tokens)
	if wl.Steps.Kind == "" {
		w.steps = dist{kind: scenarios.DistConstant, a: 1, mean: 1}
	}
	w.subCount = newDist(wl.Subagents.Count)
	if wl.Subagents.Count.Kind == "" {
		w.subCount = dist{kind: scenarios.DistConstant, a: 1, mean: 1}
	}
	w.maxDepth = wl.Subagents.MaxDepth
	w.behave = wl.Behaviour
	w.arrivals = stream(seed, nsArrival, 0)
	sum := 0.0
	for _, m := range wl.Mix {
		sum += m.Weight
		w.mixTool = append(w.mixTool, int32(sc.Tool(m.Tool)))
		w.mixCum = append(w.mixCum, sum)
	}
	faults, err := buildFaults(sc, seed)
	if err != nil {
		err.(*Error).Scenario = sc.Name
		return nil, err
	}
	w.faults = faults
	w.tools = make([]tool, len(sc.Tools))
	for i := range sc.Tools {
		w.tools[i].init(&sc.Tools[i], seed)
	}
	w.fileFaults()
	if w.policy, err = Policy(&sc.Recovery); err != nil {
		return nil, &Error{Scenario: sc.Name, Key: "recovery", Msg: err.Error()}
	}
	w.model.init(sc, w.faults, seed)
	w.guards = guards(sc, w.model.active)
	w.env.Guards = w.guards
	w.pool.init(wl)
	w.money.init(sc)
	w.humans.init(sc.Recovery.Humans, seed)
	w.super.init(&sc.Recovery.Supervisor)
	w.checker.init(w)
	return w, nil
}

func (w *sim) push(at int64, k kind, ent int32, a, b int32) {
	w.h.push(event{at: at, kind: k, ent: ent, a: a, b: b})
}

func (w *sim) run(ctx context.Context) {
	for i := range w.faults {
		w.faults[i].record(w.sc, &w.flt, w.horizon)
		w.sink.Fault(&w.flt)
	}
	w.scheduleArrival(0) // Validate gives every run at least one root
	w.push(sampleEvery, evSample, 0, 0, 0)
	for _, fi := range w.timed {
		f := &w.faults[fi]
		w.push(f.start, evFaultBegin, fi, 0, 0)
		w.push(f.end, evFaultEnd, fi, 0, 0)
	}
	w.loop(ctx)
	w.finish()
}

func (w *sim) loop(ctx context.Context) {
	for w.h.len() > 0 {
		if w.h.peek().at > w.horizon {
			break
		}
		e := w.h.pop()
		w.now = e.at
		w.res.Events++
		if w.res.Events%ctxEvery == 0 {
			if ctx.Err() != nil {
				w.res.Partial = true
				return
			}
			if w.opt.Progress != nil {
				w.opt.Progress(w.ended, max(w.sc.Workload.Investigations, w.res.Started))
			}
		}
		switch e.kind {
		case evArrive:
			w.last = w.now
			w.arrive(e.ent)
		case evThought:
			w.thought(e.ent, e.a)
		case evTimer:
			w.timer(e.ent, e.a)
		case evServiceDone:
			w.last = w.now
			w.serviceDone(e.ent, e.a)
		case evFastReply:
			w.fastReply(e.ent, e.a, e.b)
		case evTimeout:
			w.timedOut(e.ent, e.a, e.b)
		case evCrash:
			w.crashed(e.ent, e.a, e.b)
		case evLease:
			w.leaseExpired(e.ent, e.a)
		case evSupervised:
			w.supervised(e.ent, e.a)
		case evReviewed:
			w.reviewed(e.ent, e.a, e.b)
		case evSample:
			w.sample()
		case evWorker:
			w.dispatch()
		case evFaultBegin:
			if h := w.faults[e.ent].fk.begin; h != nil {
				h(w, e.ent)
			}
		case evFaultEnd:
			if h := w.faults[e.ent].fk.end; h != nil {
				h(w, e.ent)
			}
		}
		if !w.active() {
			// Drained: what is left in the heap is stale (timeouts of answered attempts,
			// crash clocks of ended investigations, samples).
			return
		}
	}
}

// finish closes the run: everything still open is in flight (at the horizon, or where ctx
// stopped the run), then the invariants are checked.
func (w *sim) finish() {
	end := w.last
	switch {
	case w.res.Partial:
		end = w.now
	case w.active():
		// Work was left when the horizon came.
		end = w.horizon
	}
	w.now = end
	w.res.Makespan = end
	for _, a := range w.agents {
		if a != nil && a.live {
			w.endAgent(a, false, "")
		}
	}
	if w.opt.Progress != nil {
		w.opt.Progress(w.ended, max(w.sc.Workload.Investigations, w.res.Started))
	}
	if w.opt.Check {
		w.checker.final(w)
	}
	// Refusals by the engine are recorded even without Check: they are never expected.
	w.res.Violations = w.checker.violations
}

func (w *sim) newSpanID() uint64 { w.spanSeq++; return w.spanSeq }
