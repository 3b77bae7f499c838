package sim

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// phase is what an agent's worker is waiting for. Exactly one continuation is awaited at a
// time, named by the agent's token: an event carrying another token is stale and ignored
// (a reply after its timeout, a timer of a crashed worker, ...).
type phase uint8

const (
	phIdle    phase = iota
	phThink         // a model turn (evThought)
	phAttempt       // a tool attempt: reply, fast reply or timeout
	phTimer         // a time the engine asked for (evTimer)
	phInspect       // an inspection answer (evInspected)
	phConsult       // the supervisor's answer (evSupervised)
	phHuman         // a human review (evReviewed)
	phJoin          // its last step is done; its subagents are still working
	phDown          // its worker crashed; the lease has not expired yet
	phResume        // what it waited for came while it held no worker; it waits for one
)

// noStuck is the stuckFrom of an agent that never gets stuck.
const noStuck = math.MaxInt32

// attempt is the caller's view of its one outstanding tool attempt.
type attempt struct {
	span  uint64
	sent  int64
	start int64 // service start, -1 while unknown
	no    int32
	fault int32 // fault that shaped it (lost reply, hang, brownout), -1 none
	// overload: the tool refused it because its queue was full (queue_limit).
	overload bool
	// failed: a fault failed it fast (w.failFast), so its span carries the fault's
	// error.type when the fault says one.
	failed bool
}

// agent is one investigation (a root or a subagent) and its worker.
type agent struct {
	slot              int32
	id, rootID        int64
	key               uint64 // stable id of its random streams
	parentSlot        int32  // -1 for a root
	parentID          int64
	depth             int32
	live, down        bool
	phase             phase
	tok               int32 // token of the awaited continuation; only ever increases
	crashTok          int32
	crashDraws        uint64
	rng               *rand.Rand
	pcg               *rand.PCG
	eng               *recovery.Engine
	journal           []recovery.JournalRecord // since the snapshot
	snap              *recovery.Engine         // the engine the compacted records rebuild; nil = none yet
	snapState         recovery.State           // the state the compacted records end in
	arrived           int64
	thinkStart        int64
	consultStart      int64 // when the supervisor's call in progress started
	nsteps            int32
	accepted          int32 // steps whose result passed validation
	op                *opState
	att               attempt
	timerAct          recovery.Action
	resultSpan        uint64 // the execute_tool span whose result awaits validation
	prevResult        uint64 // the execute_tool span of the last accepted result
	invokeSpan        uint64
	parentInvoke      uint64
	cfgSpan           uint64
	cfgRef            string
	cfgBad            bool
	cfgFault          string
	spike             float64
	spikeFault        string
	stuckFrom         int32  // first stuck step; noStuck = never stuck
	stuckFP           uint64 // the fingerprint of its one failing approach
	unstuck           bool
	tokens            int64
	compute           float64
	tokBase           int64
	compBase          float64
	cost, costBase    float64 // money spent (prices), and at the last budget renewal
	pending           int32   // its executions queued or in service, not yet billed
	pendCPU, pendCost float64 // the compute and money they will bill, committed when sent
	wallBase          int64
	attempts, crashes int32
	trulyValid        bool
	openChildren      int32
	children          uint64
	blocked           record.OpKey
	blockedSet        bool
	judgement         recovery.Judgement
	rightAction       recovery.Action // ground truth at the judgement point (the simulator's, not the engine's)
	sugg              recovery.Suggestion
	reduced           bool
	fixing            bool  // the current operation revises an invalid result
	worker            bool  // holds one of the limited workers (workload.workers)
	wid               int64 // the worker it holds (while worker)
	released          bool  // gave its worker back for a wait (workload.hold_worker)
	resume            resumeKind
	resumeEv          recovery.Event // what it does once it has a worker again (phResume)
	diedWorker        int64          // the worker that died (while down)
	turnTokens        int64          // tokens of the model turn in progress (model provider active)
	modelCall         bool           // the engine's next ActSend is the refused model call
	modelRetry        bool           // the engine's next retry or parking ends with a new model turn
	modelRetried      bool           // the turn in progress retries a refused model call
	turnSpan          uint64         // the plan span of the model turn that decided the current operation; 0 = none
	heldTokens        int64          // the size of a refused model turn, kept for its retry
	heldOp            record.OpKey
	held              bool  // heldTokens is set: a refused turn of operation heldOp awaits its retry
	diedAt            int64 // when its worker died (while down)
	diedFault         int32 // the fault that killed it (while down)
	treeLost          bool  // a subagent finished with a reduced scope: the tree lost work
	modelCalls        int32 // model calls since the last completed model turn
	turnLost          bool  // its model turn failed in flight: the engine hears it on a worker
}

func (a *agent) await(p phase) int32 { a.tok++; a.phase = p; return a.tok }
func (a *agent) settle()             { a.tok++; a.phase = phIdle }
func (a *agent) waiting(p phase, tok int32) bool {
	return a.live && !a.down && a.phase == p && a.tok == tok
}

// agentFor returns the live agent in slot that still is investigation id, or nil.
func (w *sim) agentFor(slot int32, id int64) *agent {
	if slot < 0 || int(slot) >= len(w.agents) {
		return nil
	}
	a := w.agents[slot]
	if a == nil || !a.live || a.id != id {
		return nil
	}
	return a
}

func (w *sim) newAgent(id int64, key uint64, parent *agent) *agent {
	var a *agent
	if n := len(w.freeSlots); n > 0 {
		slot := w.freeSlots[n-1]
		w.freeSlots = w.freeSlots[:n-1]
		a = w.agents[slot]
		// Tokens keep increasing across occupants, so events of the slot's previous
		// investigation stay stale; the journal and stream objects are reused.
		*a = agent{slot: slot, tok: a.tok + 1, crashTok: a.crashTok + 1, journal: a.journal, rng: a.rng, pcg: a.pcg}
	} else {
		a = &agent{slot: int32(len(w.agents)), journal: make([]recovery.JournalRecord, 0, journalCompact)}
		a.pcg = rand.NewPCG(0, 0)
		a.rng = rand.New(a.pcg)
		w.agents = append(w.agents, a)
	}
	a.id, a.key, a.live = id, key, true
	reseed(a.pcg, w.seed, nsAgent, key)
	a.arrived, a.wallBase = w.now, w.now
	a.parentSlot = -1
	a.rootID = id
	a.stuckFrom = noStuck
	a.trulyValid = true
	a.spike = 1
	if parent != nil {
		a.parentSlot, a.parentID, a.rootID = parent.slot, parent.id, parent.rootID
		a.depth = parent.depth + 1
		a.parentInvoke = parent.invokeSpan
		// Subagents work with their parent's configuration.
		a.cfgSpan, a.cfgRef, a.cfgBad, a.cfgFault = parent.cfgSpan, parent.cfgRef, parent.cfgBad, parent.cfgFault
		parent.openChildren++
	}
	a.invokeSpan = w.newSpanID()
	a.nsteps = satCount32(min(w.steps.count(a.rng, 1), scenarios.MaxSteps))
	if p := w.behave.Stuck; p > 0 && chance(a.rng, p) {
		a.stuckFrom = int32(a.rng.IntN(int(a.nsteps)))
	}
	a.stuckFP = mix64(a.key ^ 0x5717c4)
	for _, fi := range w.perInv {
		f := &w.faults[fi]
		f.fk.investigation(w, f, a, parent)
	}
	a.eng = recovery.New(id, &w.policy, (*journal)(w))
	w.open++
	return a
}

// arrive starts root investigation number i (0-based) and schedules the next arrival.
func (w *sim) arrive(i int32) {
	if int(i)+1 < w.roots {
		w.scheduleArrival(i + 1)
	}
	id := int64(i) + 1
	a := w.newAgent(id, mix64(uint64(id)), nil)
	w.res.Started++
	w.openRoots++
	// The configuration change the investigation runs with: every tool span links to it.
	a.cfgSpan = w.newSpanID()
	var buf [32]byte
	a.cfgRef = string(strconv.AppendInt(append(buf[:0], "cfg/"...), id, 10))
	s := w.spanFor(a, record.OpPlan, a.cfgSpan)
	s.Start, s.End = w.now, w.now
	s.Status = record.StatusOK
	s.FaultID = a.cfgFault
	s.OutputRef = a.cfgRef
	s.Attrs = append(s.Attrs[:0],
		record.Attr{Key: "kind", Value: "config_change"},
		record.Attr{Key: "config_id", Value: a.cfgRef},
		record.Attr{Key: "config_valid", Value: strconv.FormatBool(!a.cfgBad)})
	w.sink.Span(s)
	w.acquire(a, contStart)
}

func (w *sim) start(a *agent) {
	w.scheduleCrashes(a)
	w.observe(a, recovery.Event{Kind: recovery.EvStart})
}

// scheduleArrival schedules root arrival i according to the workload's arrival process.
func (w *sim) scheduleArrival(i int32) {
	at := w.now
	arr := &w.sc.Workload.Arrival
	switch arr.Kind {
	case "poisson": // Validate holds its rate above 0
		at = satAdd(at, satInt(w.arrivals.ExpFloat64()/arr.Rate.PerSecond*1e9))
	case "piecewise":
		at = piecewiseNext(arr.Pieces, at, w.arrivals.ExpFloat64())
	case "uniform":
		// The next order statistic of n uniforms on [0, over): given the last one u with m
		// draws left, the next is 1 - (1-u) V^(1/m) for V uniform, so arrivals come in order
		// without storing them.
		m := float64(w.roots - int(i))
		w.arrivalU = 1 - (1-w.arrivalU)*math.Pow(w.arrivals.Float64(), 1/m)
		at = int64(w.arrivalU * float64(arr.Over))
		if at < w.now {
			at = w.now
		}
	}
	w.push(at, evArrive, i, 0, 0)
}

// piecewiseNext is the next arrival after now of a Poisson process whose rate is piecewise
// constant, given a unit exponential draw e: the time at which the integrated rate from now
// reaches e (the process's time change), walking the stretches from the one holding now.
func piecewiseNext(ps []scenarios.Piece, now int64, e float64) int64 {
	var end int64
	for i, p := range ps {
		last := i == len(ps)-1
		if !last {
			end = satAdd(end, int64(p.For))
			if now >= end {
				continue
			}
		}
		// A quiet stretch (rate 0, never the last: Validate) takes forever to reach e, so it
		// passes on with e whole.
		r := p.Rate.PerSecond
		dt := e / r * 1e9
		if last || float64(now)+dt <= float64(end) {
			return satAdd(now, satInt(dt))
		}
		e -= r * float64(end-now) / 1e9
		now = end
	}
	return now
}

// spawn starts count subagents of a; their stream ids derive from a's, so they do not
// depend on what else happens in the run.
func (w *sim) spawn(a *agent) {
	n := min(w.subCount.count(a.rng, 1), scenarios.MaxSubagentCount)
	for k := int64(0); k < n; k++ {
		a.children++
		c := w.newAgent(w.nextSubID, childKey(a.key, a.children), a)
		w.nextSubID++
		w.acquire(c, contStart)
	}
}

// think starts a model turn before a's next send, unless a budget is already exceeded.
func (w *sim) think(a *agent) {
	if w.budgetStops(a, w.modelSpend()) {
		return
	}
	a.modelRetry = false
	if w.model.active {
		w.callModel(a)
		return
	}
	tok := w.wait(a, phThink)
	a.thinkStart = w.now
	w.push(w.now+w.thinkTime.duration(a.rng), evThought, a.slot, tok, 0)
}

// thought ends a model turn: tokens are spent, budgets checked, and the agent acts.
func (w *sim) thought(slot, tok int32) {
	a := w.agents[slot]
	if !a.waiting(phThink, tok) {
		return
	}
	w.last = w.now
	a.settle()
	if w.lostTurn(a) {
		a.turnLost = true
		if w.proceed(a, resThought, recovery.Event{}) {
			w.afterThought(a)
		}
		return
	}
	a.modelCalls = 0
	var n int64
	if w.model.active {
		n = a.turnTokens // drawn when the call was admitted
	} else {
		n = w.turnTokens(a)
	}
	a.tokens = satAdd(a.tokens, n)
	a.cost += w.money.tokens(n)
	s := w.spanFor(a, record.OpPlan, w.newSpanID())
	s.Model = w.sc.Workload.Model
	s.Start, s.End = a.thinkStart, w.now
	s.InputTokens, s.OutputTokens = n-n/4, n/4
	s.Status = record.StatusOK
	s.FaultID = ""
	if a.spike != 1 {
		s.FaultID = a.spikeFault
	}
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	if a.prevResult != 0 {
		s.CausedBy = append(s.CausedBy, a.prevResult)
	}
	s.Attrs = append(s.Attrs[:0], record.Attr{Key: "kind", Value: "model_turn"})
	w.sink.Span(s)
	// This turn decides the operation in hand: its attempts name it in caused_by.
	a.turnSpan = s.SpanID
	if w.proceed(a, resThought, recovery.Event{}) {
		w.afterThought(a)
	}
}

// afterThought is a's move once a model turn is done: its budgets, then act.
func (w *sim) afterThought(a *agent) {
	if a.turnLost {
		a.turnLost = false
		w.failedCall(a)
		return
	}
	if w.overBudget(a) {
		return
	}
	w.act(a)
}

// overBudget checks a's budgets at a model turn's end and reports an exhausted one to the
// engine.
func (w *sim) overBudget(a *agent) bool {
	return w.budgetStops(a, spendAll)
}

// spend is the set of budgets a spend can grow: a check before it looks only at those.
type spend uint8

const (
	spendTokens spend = 1 << iota
	spendCompute
	spendCost
	spendWall
	spendAll = spendTokens | spendCompute | spendCost | spendWall
)

// budgetStops is the check before a spend that grows the budgets in s: when one of them is
// already exceeded, the engine hears it and the spend is not made. With it at every spend
// (a model call, a consultation, a tool attempt with the whole compute of the execution it
// starts, committed when it is sent) and at each model turn's end, an investigation
// overshoots a budget by at most the spend that crossed it.
func (w *sim) budgetStops(a *agent, s spend) bool {
	res := w.exceeded(a, s)
	if res == 0 {
		return false
	}
	w.observe(a, recovery.Event{Kind: recovery.EvBudgetExceeded, Resource: res})
	return true
}

// exceeded is the first budget in s that a has exceeded in its current allotment, 0 none:
// what a spent plus what its executions still queued or running have committed.
func (w *sim) exceeded(a *agent, s spend) recovery.Resource {
	b := &w.sc.Recovery.Budgets
	switch {
	case s&spendTokens != 0 && b.Tokens > 0 && a.tokens-a.tokBase > b.Tokens:
		return recovery.Tokens
	case s&spendCompute != 0 && b.Compute > 0 && a.compute+a.pendCPU-a.compBase > b.Compute:
		return recovery.Compute
	case s&spendWall != 0 && b.Wall > 0 && w.now-a.wallBase > int64(b.Wall):
		return recovery.Wall
	case s&spendCost != 0 && b.Cost > 0 && a.cost+a.pendCost-a.costBase > b.Cost:
		return recovery.Cost
	}
	return 0
}

// commitExec commits the compute cpu of an execution of tool that a's attempt just put in
// the tool (queued or in service) against a's budgets: its whole compute is known when the
// attempt is sent (its service time is drawn then), so the check before a's next spend sees
// it, however long the execution outlives the attempt.
func (w *sim) commitExec(a *agent, tool int32, cpu float64) {
	a.pending++
	a.pendCPU += cpu
	a.pendCost += cpu * w.money.compute[tool]
}

// billExec bills the compute used of an execution of tool that a committed as committed
// (used < committed when the tool cancelled it, 0 when it never ran).
func (w *sim) billExec(a *agent, tool int32, committed, used float64) {
	a.compute += used
	a.cost += used * w.money.compute[tool]
	a.pending--
	if a.pending == 0 {
		// Nothing is committed: exactly 0, with no rounding left of the sums.
		a.pendCPU, a.pendCost = 0, 0
		return
	}
	a.pendCPU -= committed
	a.pendCost -= committed * w.money.compute[tool]
}

// modelSpend is what a model call (a turn or a consultation) can grow.
func (w *sim) modelSpend() spend {
	if w.money.in > 0 || w.money.out > 0 {
		return spendTokens | spendCost
	}
	return spendTokens
}

// askSend asks a's engine to send an attempt of the current operation, unless a budget the
// attempt would grow (compute, cost) is already exceeded: then the engine hears that.
func (w *sim) askSend(a *agent) {
	t := a.op.tool
	var s spend
	if w.tools[t].compute > 0 {
		s |= spendCompute
	}
	if w.money.call[t] > 0 || w.money.compute[t] > 0 {
		s |= spendCost
	}
	if w.budgetStops(a, s) {
		return
	}
	w.observe(a, recovery.Event{Kind: recovery.EvSend, Tool: int(t)})
}

// act is the agent's move after a model turn: it may attempt a forbidden operation
// (blocked before it is sent), may spawn subagents, then asks to send the step's operation.
func (w *sim) act(a *agent) {
	w.syncOp(a)
	op := a.op
	retried := a.modelRetried
	a.modelRetried = false
	if op.key.Revision == 0 && op.attempts == 0 {
		// After a refused model call the engine is recovering the step and waits for a
		// send: the agent cannot attempt a forbidden operation now (it is only drawn on a
		// turn the engine asked for).
		if p := w.behave.PolicyViolation; p > 0 && !retried && chance(a.rng, p) {
			w.block(a)
			return
		}
		if p := w.sc.Workload.Subagents.Probability; p > 0 && int(a.depth) < w.maxDepth && chance(a.rng, p) {
			w.spawn(a)
		}
	}
	w.askSend(a)
}

// block records a forbidden operation that was never sent.
func (w *sim) block(a *agent) {
	op := a.op
	a.blocked, a.blockedSet = op.key, true
	t := &w.tools[op.tool]
	s := w.spanFor(a, record.OpExecuteTool, w.newSpanID())
	s.Tool, s.ToolVersion = t.cfg.Name, t.cfg.Version
	s.HasKey, s.OpKey = true, op.key
	s.Start, s.End = w.now, w.now
	s.Status = record.StatusBlocked
	s.FailureClass = recovery.PolicyViolation.String()
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	if a.turnSpan != 0 {
		s.CausedBy = append(s.CausedBy, a.turnSpan)
	}
	s.Attrs = append(s.Attrs[:0], record.Attr{Key: "violation", Value: "unauthorized_access"})
	w.sink.Span(s)
	w.observe(a, recovery.Event{Kind: recovery.EvPolicyViolation, Tool: int(op.tool)})
}

// syncOp makes a.op the engine's current logical operation. A new step draws its tool
// from the mix; a revision keeps the step's tool.
func (w *sim) syncOp(a *agent) {
	step, rev := a.eng.Op()
	if a.op != nil && a.op.key.Step == step && a.op.key.Revision == rev {
		return
	}
	var t int32
	if a.op != nil && a.op.key.Step == step {
		t = a.op.tool
	} else {
		t = w.pickTool(a.rng)
	}
	w.closeOp(a.op)
	a.op = w.newOp(record.OpKey{Investigation: a.id, Step: step, Revision: rev}, t)
	// No model turn has decided the new operation yet.
	a.turnSpan = 0
}

func (w *sim) pickTool(r *rand.Rand) int32 {
	if len(w.mixTool) == 1 {
		return w.mixTool[0]
	}
	last := len(w.mixCum) - 1
	u := r.Float64() * w.mixCum[last]
	for i, c := range w.mixCum[:last] {
		if u < c {
			return w.mixTool[i]
		}
	}
	return w.mixTool[last]
}

// validate judges the result that arrived (or was found by inspection) for a's current
// operation: the in-loop check, which a wrong result passes with probability
// validation_miss, against the ground truth.
func (w *sim) validate(a *agent) {
	op := a.op
	b := &w.behave
	var truth bool
	fp := mix64(uint64(a.id)<<20 ^ uint64(op.key.Step)<<8 ^ uint64(op.key.Revision))
	switch {
	case a.cfgBad:
		// Results computed from a bad configuration are wrong, whatever is revised.
		truth = false
		fp = mix64(a.key ^ 0xbadc0f)
	case op.key.Step >= a.stuckFrom && !a.unstuck:
		truth = false
		fp = a.stuckFP
	case a.fixing:
		truth = chance(a.rng, b.ReviseSuccess)
	default:
		truth = !chance(a.rng, b.InvalidOutput)
	}
	pass := truth || (b.ValidationMiss > 0 && chance(a.rng, b.ValidationMiss))
	s := w.spanFor(a, record.OpValidate, w.newSpanID())
	s.HasKey, s.OpKey, s.Attempt = true, op.key, op.attempts
	s.Start, s.End = w.now, w.now
	s.Status = record.StatusOK
	if !pass {
		s.Status = record.StatusInvalid
		s.FailureClass = recovery.InvalidOutput.String()
		s.FaultID = a.cfgFault
	}
	s.InputRef = op.ref()
	s.CausedBy = append(s.CausedBy[:0], a.resultSpan)
	s.Attrs = s.Attrs[:0]
	w.sink.Span(s)
	if !pass {
		w.observe(a, recovery.Event{Kind: recovery.EvInvalid, Tool: int(op.tool), Fingerprint: fp})
		return
	}
	a.trulyValid = a.trulyValid && truth
	a.prevResult = a.resultSpan
	a.accepted++
	if op.key.Step+1 >= a.nsteps || a.reduced {
		w.finishOrJoin(a)
		return
	}
	w.observe(a, recovery.Event{Kind: recovery.EvValid, Tool: int(op.tool)})
}

// validated is the independent validator's verdict on a's completed result: it rejects a
// right result with probability false_reject and passes a wrong one with false_accept. The
// draw comes from the validator's own stream for a, so scenarios that leave both at 0 make
// no draw and keep their traces.
func (w *sim) validated(a *agent) bool {
	v := &w.sc.Validation.Independent
	p := v.FalseReject
	if !a.trulyValid {
		p = v.FalseAccept
	}
	if p == 0 {
		return a.trulyValid
	}
	if w.valPCG == nil {
		w.valPCG = rand.NewPCG(0, 0)
	}
	reseed(w.valPCG, w.seed, nsValidator, a.key)
	flip := chance(rand.New(w.valPCG), p)
	return a.trulyValid != flip
}

// finishOrJoin finishes a whose last step is valid, once its subagents have ended.
func (w *sim) finishOrJoin(a *agent) {
	if a.openChildren > 0 {
		a.await(phJoin)
		w.releaseWorker(a)
		return
	}
	w.observe(a, recovery.Event{Kind: recovery.EvFinished})
}

// ref names the operation's result artifact, built once per operation.
func (op *opState) ref() string {
	if op.refName == "" {
		var buf [64]byte
		b := append(buf[:0], "result/"...)
		b = strconv.AppendInt(b, op.key.Investigation, 10)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(op.key.Step), 10)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(op.key.Revision), 10)
		op.refName = string(b) // the one allocation
	}
	return op.refName
}

// spanFor resets the reusable span for one of a's operations.
func (w *sim) spanFor(a *agent, op record.Operation, id uint64) *record.Span {
	s := &w.span
	caused, attrs := s.CausedBy[:0], s.Attrs[:0]
	*s = record.Span{TraceID: a.rootID, SpanID: id, ParentSpanID: a.invokeSpan, InvestigationID: a.id,
		AgentID: a.id, Operation: op, CausedBy: caused, Attrs: attrs}
	if a.worker {
		s.Worker = a.wid
	}
	return s
}

// endAgent closes a: ended=false means it is still open at the end of the run (in flight).
func (w *sim) endAgent(a *agent, ended bool, reason string) {
	state := a.eng.State()
	// The scope is reduced when the engine dropped steps, a subagent's work was lost, or a
	// subagent itself finished reduced: the tree did not deliver all of it.
	reduced := a.reduced || a.treeLost || a.eng.LostWork()
	op := a.op
	a.op = nil
	w.closeOp(op)
	s := w.spanFor(a, record.OpInvokeAgent, a.invokeSpan)
	s.ParentSpanID = a.parentInvoke
	s.Worker = 0 // no one worker runs the whole investigation
	s.Model = w.sc.Workload.Model
	s.Start, s.End = a.arrived, w.now
	s.InputTokens, s.OutputTokens = a.tokens-a.tokens/4, a.tokens/4
	s.Compute = a.compute
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	s.Attrs = append(s.Attrs[:0], record.Attr{Key: "final_state", Value: state.String()})
	switch {
	case state == recovery.Completed:
		s.Status = record.StatusOK
	case state == recovery.Terminated:
		s.Status = record.StatusError
		s.Attrs = append(s.Attrs, record.Attr{Key: "termination_reason", Value: reason})
	default:
		s.Status = record.StatusUnset
	}
	w.sink.Span(s)
	completed := state == recovery.Completed
	w.inv = record.Investigation{
		InvestigationID: a.id, ParentID: a.parentID, RootID: a.rootID, Depth: a.depth,
		ArrivedAt: a.arrived, Ended: ended, EndedAt: w.now, FinalState: state.String(),
		Steps: a.accepted, Attempts: a.attempts, Revisions: int32(a.eng.Revisions()),
		Escalations: int32(a.eng.Escalations()), Tokens: a.tokens, Compute: a.compute,
		TrulyValid: completed && a.trulyValid, Validated: completed && w.validated(a), Crashes: a.crashes,
	}
	if reduced {
		w.inv.Scope = record.ScopeReduced
	}
	if state == recovery.Terminated {
		w.inv.TerminationReason = reason
	}
	w.sink.Investigation(&w.inv)
	if a.parentSlot < 0 {
		w.openRoots--
		switch {
		case ended && completed:
			w.res.Completed++
		case ended:
			w.res.Terminated++
		case state == recovery.AwaitingHuman:
			w.res.AwaitingHuman++
		default:
			w.res.InFlight++
		}
		if ended {
			w.ended++
		}
	}
	w.checker.ended(w, a, ended)
	w.releaseWorker(a)
	a.live = false
	a.tok++
	a.eng = nil
	clear(a.journal)
	a.journal = a.journal[:0] // kept for the slot's next investigation
	a.snap = nil
	w.open--
	w.freeSlots = append(w.freeSlots, a.slot)
	if ended && a.parentSlot >= 0 {
		if p := w.agentFor(a.parentSlot, a.parentID); p != nil {
			w.childEnded(p, completed, a.trulyValid, reduced)
		}
	}
}

// childEnded tells parent p that one of its subagents ended: a completed one hands its
// result over (a wrong one makes p's wrong, a reduced one reduces p's tree); a terminated
// one is a failure for p's engine, whose subagent policy decides. Once the last subagent
// has ended, a parent waiting for them finishes.
func (w *sim) childEnded(p *agent, completed, valid, reduced bool) {
	p.openChildren--
	if completed {
		if !valid {
			// The parent used this subagent's wrong result.
			p.trulyValid = false
		}
		if reduced {
			p.treeLost = true
		}
	} else if !w.subagentFailed(p) {
		return // the policy failed the parent: it has ended
	}
	if p.openChildren == 0 && p.phase == phJoin && !p.down {
		p.settle()
		w.observe(p, recovery.Event{Kind: recovery.EvFinished})
	}
}

// subagentFailed reports a failed subagent to p's engine and carries out its decision:
// respawn a replacement, go on without the lost work (the engine records it and p's scope
// is reduced), or terminate p. It reports whether p is still open. The engine is told even
// while p's worker is down: the failure is in the journal the next worker replays.
func (w *sim) subagentFailed(p *agent) bool {
	w.cur = p
	w.env.Rand = p.rng
	d, err := p.eng.Observe(w.now, recovery.Event{Kind: recovery.EvSubagentFailed}, w.env)
	w.cur = nil
	if err != nil {
		w.checker.violate(w, "investigation %d at %d: engine refused a subagent's failure in state %s: %v",
			p.id, w.now, p.eng.State(), err)
		return true
	}
	switch d.Action {
	case recovery.ActRespawn:
		p.children++
		c := w.newAgent(w.nextSubID, childKey(p.key, p.children), p)
		w.nextSubID++
		w.acquire(c, contStart)
	case recovery.ActTerminate:
		w.endAgent(p, true, d.Reason)
		return false
	}
	return true
}
