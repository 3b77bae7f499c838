package sim

import (
	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
)

// Workers (workload.workers) run investigations: a root or a subagent holds one from the
// moment it starts until it ends, except while it waits for its subagents (a parent gives its
// worker back, so parents cannot hold every worker while their children wait) and while its
// crashed worker's lease runs. Investigations that find every worker busy wait pending, in
// FIFO order or by workload.priority; a crashed investigation whose lease ran out is taken
// over before any waiting one starts. With workers unlimited (0) none of this runs and
// investigations start at once, as they always did.

// cont is what an investigation does once it gets a worker.
type cont uint8

const (
	contStart    cont = iota + 1 // start: its engine leaves pending
	contTakeOver                 // after a crash: a new worker replays its journal
)

type pendEntry struct {
	slot int32
	id   int64
	seq  uint64
	cont cont
}

// pendQueue is a FIFO of investigations waiting for a worker.
type pendQueue struct {
	q    []pendEntry
	head int
}

func (p *pendQueue) len() int         { return len(p.q) - p.head }
func (p *pendQueue) peek() *pendEntry { return &p.q[p.head] }
func (p *pendQueue) push(e pendEntry) { p.q = append(p.q, e) }
func (p *pendQueue) pop() pendEntry {
	e := p.q[p.head]
	p.head++
	if p.head > 1024 && p.head*2 > len(p.q) {
		p.q = append(p.q[:0], p.q[p.head:]...)
		p.head = 0
	}
	return e
}

// workerPool is the fleet's workers: capacity, those held, those lost to zone crashes.
type workerPool struct {
	capacity   int // 0 = unlimited
	priority   string
	busy       int
	down       int       // workers of zones that crashed and are not back yet
	takeovers  pendQueue // crashed investigations waiting for a new worker go first
	roots      pendQueue
	subs       pendQueue
	seq        uint64
	kickQueued bool
}

func (p *workerPool) free() bool { return p.busy < p.capacity-p.down }

// acquire gives a a worker and runs c, or queues a until a worker is free.
func (w *sim) acquire(a *agent, c cont) {
	p := &w.pool
	if p.capacity == 0 {
		w.resume(a, c)
		return
	}
	if p.free() && p.waiting() == 0 {
		a.worker = true
		p.busy++
		w.resume(a, c)
		return
	}
	p.seq++
	e := pendEntry{slot: a.slot, id: a.id, seq: p.seq, cont: c}
	switch {
	case c == contTakeOver:
		p.takeovers.push(e)
	case a.parentSlot < 0:
		p.roots.push(e)
	default:
		p.subs.push(e)
	}
}

func (p *workerPool) waiting() int { return p.takeovers.len() + p.roots.len() + p.subs.len() }

// releaseWorker gives a's worker back; a waiting investigation takes it in an event of its
// own, so that no engine call runs inside another investigation's.
func (w *sim) releaseWorker(a *agent) {
	if !a.worker {
		return
	}
	a.worker = false
	w.pool.busy--
	w.kick()
}

func (w *sim) kick() {
	p := &w.pool
	if p.kickQueued || !p.free() || p.waiting() == 0 {
		return
	}
	p.kickQueued = true
	w.push(w.now, evWorker, 0, 0, 0)
}

// dispatch hands free workers to waiting investigations in priority order.
func (w *sim) dispatch() {
	p := &w.pool
	p.kickQueued = false
	for p.free() {
		q := p.next()
		if q == nil {
			return
		}
		e := q.pop()
		a := w.agentFor(e.slot, e.id)
		if a == nil {
			continue
		}
		w.last = w.now
		a.worker = true
		p.busy++
		w.resume(a, e.cont)
	}
}

// next is the queue whose head goes first, or nil when none waits.
func (p *workerPool) next() *pendQueue {
	if p.takeovers.len() > 0 {
		return &p.takeovers
	}
	r, s := p.roots.len() > 0, p.subs.len() > 0
	switch {
	case !r && !s:
		return nil
	case !s:
		return &p.roots
	case !r:
		return &p.subs
	}
	switch p.priority {
	case scenarios.PriorityRootsFirst:
		return &p.roots
	case scenarios.PrioritySubagentsFirst:
		return &p.subs
	}
	if p.roots.peek().seq < p.subs.peek().seq {
		return &p.roots
	}
	return &p.subs
}

func (w *sim) resume(a *agent, c cont) {
	switch c {
	case contStart:
		w.start(a)
	case contTakeOver:
		w.takeOver(a)
	}
}

// crashable reports whether a's worker is doing work a crash would lose: not pending, not
// idle waiting for a human or its subagents, not already down.
func crashable(a *agent) bool {
	if !a.live || a.down || a.phase == phJoin || a.phase == phHuman {
		return false
	}
	st := a.eng.State()
	return !(st == recovery.Pending || st == recovery.AwaitingHuman || st.Final())
}
