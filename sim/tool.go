package sim

import (
	"math/rand/v2"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// tool is a simulated service: `conc` servers (0 = unlimited) in front of a FIFO queue.
// Service times come from the tool's own stream. The tool keeps ground truth of every
// execution; a keyed tool also keeps a record per idempotency key, from which it answers
// repeats and lookups.
type tool struct {
	cfg      *scenarios.Tool
	sampled  bool          // a sample of this tool was emitted
	lastSamp record.Sample // the last one emitted, with At zeroed
	idem     scenarios.Idempotency
	conc     int // at full width: concurrency may be 2^31
	qlimit   int // queue_limit; 0 = unbounded
	timeout  int64
	compute  float64 // compute units per ns of service
	lat      dist
	rng      *rand.Rand
	busy     int32 // at most the live requests, which an int32 indexes
	queue    ring
	dropped  int32   // requests in queue cancelled while waiting (skipped when popped)
	cancel   bool    // cancel_on_timeout
	faults   []int32 // faults with an attempt hook that hit this tool, in configuration order
	down     []int32 // faults that make this tool unreachable while active
	args     []record.Attr
	attempts int32 // since the last sample
	failures int32
	retries  int32
}

func (t *tool) init(c *scenarios.Tool, seed uint64) {
	t.cfg, t.idem = c, c.Idempotency
	t.conc = c.Concurrency
	t.qlimit = c.QueueLimit
	t.timeout = int64(c.Timeout)
	t.cancel = c.CancelOnTimeout
	t.compute = c.Compute / 1e9
	t.lat = newDist(c.Latency)
	t.rng = stream(seed, nsTool, nameKey("tool:"+c.Name))
	for _, a := range c.Arguments {
		t.args = append(t.args, record.Attr{Key: "arg." + a.Key, Value: a.Value})
	}
}

// ring is a FIFO of request slots.
type ring struct {
	buf        []int32
	head, size int
}

func (q *ring) push(v int32) {
	if q.size == len(q.buf) {
		n := make([]int32, max(16, 2*len(q.buf)))
		for i := 0; i < q.size; i++ {
			n[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = n, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = v
	q.size++
}

func (q *ring) pop() int32 {
	v := q.buf[q.head]
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return v
}

// opState is one logical operation (one idempotency key) as the tool and the ground truth
// see it. All attempts of the operation point to it, so a result that arrives after the
// caller moved on is still attributed correctly.
type opState struct {
	key       record.OpKey
	tool      int32
	attempts  int32
	execs     int32  // real executions started
	cancelled int32  // executions stopped by their caller's timeout (cancel_on_timeout)
	recorded  bool   // keyed: the tool holds a record of the key (running or completed)
	running   bool   // keyed: its single execution is queued or in service
	completed bool   // keyed: its result is stored
	delivered bool   // the result reached the investigation
	closed    bool   // the investigation moved on or ended: no later delivery possible
	held      bool   // ex holds a finished, undelivered execution waiting for its fate
	waitTok   int32  // keyed: token of a repeat attempt waiting on the running execution
	execSpan  uint64 // the attempt whose execution produced the stored result
	ex        record.Execution
	refName   string
	refs      int32 // the investigation (until closed) and each request in a tool
}

// newOp takes an operation from the pool; the investigation holds the first reference.
func (w *sim) newOp(k record.OpKey, tool int32) *opState {
	var op *opState
	if n := len(w.freeOps); n > 0 {
		op = w.freeOps[n-1]
		w.freeOps = w.freeOps[:n-1]
	} else {
		op = new(opState)
	}
	*op = opState{key: k, tool: tool, refs: 1}
	return op
}

// unref drops one reference; the last returns op to the pool.
func (w *sim) unref(op *opState) {
	op.refs--
	if op.refs == 0 {
		w.freeOps = append(w.freeOps, op)
	}
}

// request is one attempt accepted by a tool (queued or in service).
type request struct {
	agent  int32 // slot of the caller
	invID  int64 // the caller's investigation id (slots are reused)
	tok    int32 // the caller's wait token when it sent the attempt
	tool   int32
	op     *opState
	start  int64 // when its service started, once serving
	lost   bool
	execNo int32
	gen    int32 // counts the slot's uses: a service end of an earlier use is stale
	// serving: its service has started (it left the queue or never waited).
	serving bool
	// dropped: cancelled while queued; the slot is freed when the queue reaches it.
	dropped bool
	// over: its execution ended, was cancelled or dropped; the slot awaits reuse (or the
	// queue) and a deadline that comes later finds nothing to stop.
	over bool
	// dur is its service time, drawn when the attempt was sent, and cpu the compute it
	// will bill (dur at the tool's rate): committed against the caller's budgets at once.
	dur int64
	cpu float64
}

func (w *sim) newRequest() int32 {
	w.reqLive++
	if n := len(w.freeReqs); n > 0 {
		i := w.freeReqs[n-1]
		w.freeReqs = w.freeReqs[:n-1]
		return i
	}
	w.reqs = append(w.reqs, request{})
	return int32(len(w.reqs) - 1)
}

// replyRecord marks a fast reply answered from a keyed tool's record (evFastReply.b);
// replyOverload one refused because the tool's queue was full; negative values name the
// fault that failed the attempt (-1 - fault index).
const (
	replyRecord   = 1 << 30
	replyOverload = replyRecord + 1
)

// send sends one attempt of a's current operation to its tool. Faults are decided here, in
// configuration order: a fast failure answers at once, without queueing or service time.
func (w *sim) send(a *agent) {
	op := a.op
	t := &w.tools[op.tool]
	if a.blockedSet && a.blocked == op.key {
		w.checker.violate(w, "blocked operation %v of investigation %d was sent to %s", op.key, a.id, t.cfg.Name)
	}
	op.attempts++
	a.attempts++
	a.cost += w.money.call[op.tool]
	t.attempts++
	if op.attempts > 1 {
		t.retries++
	}
	tok := w.wait(a, phAttempt)
	a.att = attempt{span: w.newSpanID(), sent: w.now, start: -1, no: op.attempts, fault: -1}
	w.fx = attemptEffects{slow: 1}
	for _, fi := range t.faults {
		if w.faults[fi].fk.attempt(w, fi, a, tok) {
			return
		}
	}
	slow, lost := w.fx.slow, w.fx.lost
	if t.idem == scenarios.Keyed && op.recorded {
		// The key is known: answer from the record, or wait for its running execution.
		if op.completed {
			if lost {
				w.armTimeout(a, t, tok)
			} else {
				w.push(w.now, evFastReply, a.slot, tok, replyRecord)
			}
			return
		}
		if !lost {
			op.waitTok = tok
		}
		w.armTimeout(a, t, tok)
		return
	}
	if t.qlimit > 0 && int(t.busy) >= t.conc && t.waiting() >= t.qlimit { // unlimited: none waits
		// Load shedding: the tool refuses the attempt at once; nothing executes.
		w.push(w.now, evFastReply, a.slot, tok, replyOverload)
		return
	}
	ri := w.newRequest()
	op.refs++
	gen := w.reqs[ri].gen + 1
	// The service time is drawn now, not when service starts: the compute the execution
	// will bill is then known, and committed against a's budgets with the call (the tool's
	// stream is drawn in the same order, since its queue is FIFO).
	d := t.lat.duration(t.rng)
	if slow != 1 {
		d = satInt(float64(d) * slow)
	}
	cpu := float64(d) * t.compute
	w.reqs[ri] = request{agent: a.slot, invID: a.id, tok: tok, tool: op.tool, op: op, lost: lost, gen: gen,
		dur: d, cpu: cpu}
	w.commitExec(a, op.tool, cpu)
	if t.idem == scenarios.Keyed {
		op.recorded, op.running = true, true
		op.execSpan = a.att.span
	}
	if t.conc == 0 || int(t.busy) < t.conc {
		w.startService(ri)
	} else {
		t.queue.push(ri)
	}
	w.armDeadline(a, t, tok, ri)
}

func (w *sim) armTimeout(a *agent, t *tool, tok int32) {
	if t.timeout > 0 {
		w.push(w.now+t.timeout, evTimeout, a.slot, tok, 0)
	}
}

// armDeadline arms the timeout of a's attempt that put request ri in t; a tool that
// cancels (cancel_on_timeout) stops ri then, whether or not its caller still waits.
func (w *sim) armDeadline(a *agent, t *tool, tok, ri int32) {
	if t.timeout > 0 {
		w.push(w.now+t.timeout, evTimeout, a.slot, tok, ri+1)
	}
}

func (w *sim) failFast(a *agent, tok int32, fi int32) {
	a.att.fault, a.att.failed = fi, true
	w.push(w.now, evFastReply, a.slot, tok, -1-fi)
}

func (w *sim) startService(ri int32) {
	r := &w.reqs[ri]
	t := &w.tools[r.tool]
	t.busy++
	r.start, r.serving = w.now, true
	r.op.execs++
	r.execNo = r.op.execs
	if a := w.agentFor(r.agent, r.invID); a != nil && a.waiting(phAttempt, r.tok) {
		a.att.start = w.now
	}
	w.push(satAdd(w.now, r.dur), evServiceDone, ri, r.gen, 0)
}

// waiting is the number of requests waiting in t's queue (cancelled ones are not).
func (t *tool) waiting() int { return t.queue.size - int(t.dropped) }

// next starts the next waiting request of t, if any, freeing the cancelled ones before it.
func (w *sim) next(t *tool) {
	for t.queue.size > 0 {
		ri := t.queue.pop()
		if !w.reqs[ri].dropped {
			w.startService(ri)
			return
		}
		// Dropped while queued: its slot is free only now.
		t.dropped--
		w.freeRequest(ri)
	}
}

// freeRequest returns request slot ri to the pool, dropping its reference to its operation.
func (w *sim) freeRequest(ri int32) {
	w.freeReqs = append(w.freeReqs, ri)
	w.reqLive--
	w.unref(w.reqs[ri].op)
}

// serviceDone ends one execution: ground truth is recorded, the reply (unless lost) goes to
// the caller if it still waits for it, and the next queued request starts.
func (w *sim) serviceDone(ri, gen int32) {
	r := w.reqs[ri]
	if r.gen != gen {
		return // cancelled: the slot was freed (and perhaps reused) then
	}
	w.reqs[ri].gen++ // this use is over: a timeout of its attempt finds nothing to cancel
	w.reqs[ri].over = true
	w.freeReqs = append(w.freeReqs, ri)
	w.reqLive--
	t := &w.tools[r.tool]
	t.busy--
	w.next(t)
	op := r.op
	cpu := float64(w.now-r.start) * t.compute
	a := w.agentFor(r.agent, r.invID)
	if a != nil {
		w.billExec(a, r.tool, r.cpu, cpu)
	}
	ex := record.Execution{Tool: t.cfg.Name, OpKey: op.key, InvestigationID: r.invID, Execution: r.execNo,
		Start: r.start, End: w.now, Outcome: "ok", Compute: cpu, SideEffects: t.idem != scenarios.Natural}
	if r.lost {
		ex.Outcome = "lost"
	}
	// A keyed tool answers a repeat that waits on the running execution (waiter) too.
	waiter := !r.lost && a != nil && t.idem == scenarios.Keyed && op.waitTok != 0 && a.waiting(phAttempt, op.waitTok)
	deliver := !r.lost && a != nil && a.waiting(phAttempt, r.tok) || waiter
	if t.idem == scenarios.Keyed {
		op.running, op.completed = false, true
		w.checker.keyedExec(w, t, op)
	}
	switch {
	case deliver:
		op.delivered = true
		ex.Delivered = true
		w.emitExec(&ex)
	case t.idem == scenarios.Keyed && !op.closed:
		// The result waits in the tool's record: a repeat or a lookup may still take it.
		op.held, op.ex = true, ex
	default:
		w.emitExec(&ex)
	}
	if !deliver {
		w.unref(op)
		return
	}
	a.settle()
	if waiter {
		a.att.start = a.att.sent // it waited on the execution, not in the queue
	}
	fid := ""
	if a.att.fault >= 0 {
		fid = w.faults[a.att.fault].id // a brownout slowed it down
	}
	w.toolSpan(a, t, record.StatusOK, recovery.NoFailure, fid, waiter, cpu)
	a.resultSpan = a.att.span
	if t.idem == scenarios.Keyed {
		a.resultSpan = op.execSpan
	}
	tool := int(op.tool)
	w.unref(op) // the investigation still holds op
	w.settled(a, recovery.Event{Kind: recovery.EvSucceeded, Tool: tool})
}

// settled tells a's engine ev, the outcome of its wait, now or once a has a worker again.
func (w *sim) settled(a *agent, ev recovery.Event) {
	if w.proceed(a, resObserve, ev) {
		w.observe(a, ev)
	}
}

func (w *sim) emitExec(ex *record.Execution) {
	w.exec = *ex
	w.sink.Execution(&w.exec)
}

// release emits a held execution whose fate is now known.
func (w *sim) release(op *opState, delivered bool) {
	if !op.held {
		return
	}
	op.held = false
	op.ex.Delivered = delivered
	w.emitExec(&op.ex)
}

// closeOp marks op as left behind by its investigation: a result still held is discarded.
func (w *sim) closeOp(op *opState) {
	if op == nil || op.closed {
		return
	}
	op.closed = true
	w.release(op, false)
	w.unref(op)
}

// fastReply delivers a fast failure or an answer from a keyed record.
func (w *sim) fastReply(slot, tok, code int32) {
	a := w.agents[slot]
	if !a.waiting(phAttempt, tok) {
		return
	}
	w.last = w.now
	a.settle()
	op := a.op
	t := &w.tools[op.tool]
	if code == replyRecord {
		op.delivered = true
		w.release(op, true)
		a.att.start = w.now
		w.toolSpan(a, t, record.StatusOK, recovery.NoFailure, "", true, 0)
		a.resultSpan = op.execSpan
		w.settled(a, recovery.Event{Kind: recovery.EvSucceeded, Tool: int(op.tool)})
		return
	}
	t.failures++
	a.att.start = w.now
	if code == replyOverload {
		a.att.overload = true
		w.toolSpan(a, t, record.StatusError, recovery.Transient, "", false, 0)
		w.settled(a, recovery.Event{Kind: recovery.EvFailed, Tool: int(op.tool)})
		return
	}
	w.toolSpan(a, t, record.StatusError, recovery.Transient, w.faults[-1-code].id, false, 0)
	w.settled(a, recovery.Event{Kind: recovery.EvFailed, Tool: int(op.tool)})
}

// errorType adds the error type of fault fi (scenarios.FailureParams), if it says one, to
// the attributes of the span it failed.
func (w *sim) errorType(attrs []record.Attr, fi int32) []record.Attr {
	if fi >= 0 && w.faults[fi].err != "" {
		attrs = append(attrs, record.Attr{Key: "error.type", Value: w.faults[fi].err})
	}
	return attrs
}

// timedOut is the timeout of an attempt: the caller gives up on it, if it still waits for
// it; a tool that cancels (cancel_on_timeout) stops the attempt's request ri1-1 (0: the
// attempt put none in the tool) whether or not its caller still waits: the deadline travels
// with the request, so work a crashed worker or an ended investigation left stops at it too.
func (w *sim) timedOut(slot, tok, ri1 int32) {
	a := w.agents[slot]
	if ri1 > 0 {
		ri := ri1 - 1
		r := &w.reqs[ri]
		if r.agent == slot && r.tok == tok && !r.over && w.tools[r.tool].cancel {
			w.last = w.now
			w.cancel(ri)
		}
	}
	if !a.waiting(phAttempt, tok) {
		return
	}
	w.last = w.now
	a.settle()
	op := a.op
	t := &w.tools[op.tool]
	t.failures++
	fid := ""
	if a.att.fault >= 0 {
		fid = w.faults[a.att.fault].id
	}
	w.toolSpan(a, t, record.StatusTimeout, recovery.UncertainCompletion, fid, false, 0)
	w.settled(a, recovery.Event{Kind: recovery.EvTimedOut, Tool: int(op.tool)})
}

// cancel stops request ri, whose attempt just timed out (cancel_on_timeout): a request
// still waiting is dropped from the queue and never executes; one in service stops now, is
// billed the compute it used until now and recorded as a cancelled execution (with the
// tool's side effects: it may have done them before it stopped), and its server takes the
// next request. A keyed tool forgets the key, which never completed, so a retry executes it.
// The caller's budgets get back the compute committed for the rest of the execution.
func (w *sim) cancel(ri int32) {
	r := &w.reqs[ri]
	t := &w.tools[r.tool]
	op := r.op
	if t.idem == scenarios.Keyed {
		op.recorded, op.running = false, false
	}
	r.gen++ // its service end, if scheduled, is now stale
	r.over = true
	a := w.agentFor(r.agent, r.invID)
	if !r.serving {
		r.dropped = true
		t.dropped++
		if a != nil {
			w.billExec(a, r.tool, r.cpu, 0)
		}
		return
	}
	cpu := float64(w.now-r.start) * t.compute
	if a != nil {
		w.billExec(a, r.tool, r.cpu, cpu)
	}
	op.cancelled++
	ex := record.Execution{Tool: t.cfg.Name, OpKey: op.key, InvestigationID: r.invID, Execution: r.execNo,
		Start: r.start, End: w.now, Outcome: "cancelled", Compute: cpu, SideEffects: t.idem != scenarios.Natural}
	w.emitExec(&ex)
	t.busy--
	w.freeRequest(ri)
	w.next(t)
}

// toolSpan emits the execute_tool span of a's attempt that just resolved; fromRecord marks
// an answer a keyed tool gave from its record of the key instead of executing again. compute
// is that of the execution whose result the span delivers (an attempt that failed, timed out
// or was answered from a record delivers none; the executions table holds every execution's
// compute, delivered or not).
func (w *sim) toolSpan(a *agent, t *tool, st record.Status, c recovery.Class, faultID string, fromRecord bool, compute float64) {
	s := w.spanFor(a, record.OpExecuteTool, a.att.span)
	if fromRecord {
		s.Attrs = append(s.Attrs, record.Attr{Key: "answered_from", Value: "record"})
	}
	if a.att.overload {
		s.Attrs = append(s.Attrs, record.Attr{Key: "error", Value: "overloaded"})
	}
	if a.att.failed {
		s.Attrs = w.errorType(s.Attrs, a.att.fault)
	}
	s.Tool, s.ToolVersion = t.cfg.Name, t.cfg.Version
	s.HasKey, s.OpKey, s.Attempt = true, a.op.key, a.att.no
	s.Start, s.End = a.att.sent, w.now
	if a.att.start >= 0 {
		s.QueueWait = a.att.start - a.att.sent
	} else {
		s.QueueWait = w.now - a.att.sent
	}
	s.Status, s.FailureClass, s.FaultID = st, className(c), faultID
	s.Compute = compute
	s.InputRef = a.cfgRef
	if st == record.StatusOK {
		s.OutputRef = a.op.ref()
	}
	s.CausedBy = append(s.CausedBy[:0], a.cfgSpan)
	if a.prevResult != 0 {
		s.CausedBy = append(s.CausedBy, a.prevResult)
	}
	if a.turnSpan != 0 {
		// The model turn that decided this operation (a retry was decided by the same turn).
		s.CausedBy = append(s.CausedBy, a.turnSpan)
	}
	s.Attrs = append(s.Attrs, t.args...)
	w.sink.Span(s)
}

// lookup answers an inspection of a's current operation by its idempotency key.
func (w *sim) lookup(a *agent) recovery.Lookup {
	op := a.op
	t := &w.tools[op.tool]
	if w.toolDown(t) >= 0 {
		// A tool that is down or hanging answers no lookup either: the caller cannot learn
		// what became of the operation, and the engine treats it as an impossible lookup.
		return recovery.LookupFailed
	}
	switch t.idem {
	case scenarios.Keyed:
		switch {
		case op.completed:
			return recovery.LookupCompleted
		case op.running:
			return recovery.LookupRunning
		}
		return recovery.LookupNotFound
	case scenarios.Natural:
		// A read leaves no record; repeating it is safe, so "not found" is the useful answer.
		return recovery.LookupNotFound
	}
	return recovery.LookupFailed
}

// toolDown returns the first fault that makes t unreachable now (an outage, a hang), or -1.
func (w *sim) toolDown(t *tool) int32 {
	for _, fi := range t.down {
		if w.faults[fi].active(w.now) {
			return fi
		}
	}
	return -1
}
