package sim

import (
	"math"
	"sort"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// Workers (workload.workers) run investigations: a root or a subagent holds one from the
// moment it starts until it ends, except while it waits for its subagents (a parent gives its
// worker back, so parents cannot hold every worker while their children wait), while its
// crashed worker's lease runs, and while it waits in a state workload.hold_worker leaves out
// (it then queues for a worker again when the wait ends). Investigations that find every
// worker busy wait pending, in FIFO order or by workload.priority; a crashed investigation
// whose lease ran out is taken over before any waiting one starts. With workers unlimited
// (0) none of this runs and investigations start at once, as they always did.
//
// Workers are numbered 1 to workload.workers and each sits in a zone (workload.zones). A
// worker is hired when first needed, the lowest free number first, so a pool of 2^31 costs
// what the busiest moment needs. Zones are interleaved: worker k sits at position
// (k-1)·stride mod workers, stride coprime to workers and near workers/φ, and the zones, in
// name order, hold consecutive runs of positions, so any first n workers spread over the
// zones in about their shares.

// cont is what an investigation does once it gets a worker.
type cont uint8

const (
	contStart    cont = iota + 1 // start: its engine leaves pending
	contTakeOver                 // after a crash: a new worker replays its journal
	contResume                   // after a wait without a worker: it takes in what it waited for
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

	zones    []string  // in name order
	cum      []int     // positions below cum[z] are in zones 0..z
	stride   int       // worker k sits at position (k-1)·stride mod capacity
	hired    int       // workers 1..hired have been needed
	idle     idHeap    // hired workers that are free and up
	zoneDown []int     // per zone: its crash windows now open
	gone     [][]int64 // per zone, while it is down: its hired workers, none held
	// hold[state]: an investigation waiting in state keeps its worker (workload.hold_worker).
	hold [recovery.Terminated + 1]bool
	rec  record.Worker
}

func (p *workerPool) free() bool { return p.busy < p.capacity-p.down }

// init sets the pool up from the workload: the zones' sizes by largest remainder (ties to
// the zone first in name order), the stride, the states that hold a worker.
func (p *workerPool) init(wl *scenarios.Workload) {
	p.capacity, p.priority = wl.Workers, wl.Priority
	for st := range p.hold {
		p.hold[st] = len(wl.HoldWorker) == 0
	}
	for _, name := range wl.HoldWorker {
		for st := range p.hold {
			if recovery.State(st).String() == name {
				p.hold[st] = true
			}
		}
	}
	zones := wl.Zones
	if len(zones) == 0 {
		zones = []scenarios.Zone{{Name: scenarios.DefaultZone, Share: 1}}
	}
	n := len(zones)
	p.zones, p.cum = make([]string, n), make([]int, n)
	p.zoneDown, p.gone = make([]int, n), make([][]int64, n)
	sizes := make([]int, n)
	order := make([]int, n)
	left := p.capacity
	for i, z := range zones {
		p.zones[i] = z.Name
		sizes[i] = int(math.Floor(z.Share * float64(p.capacity)))
		left -= sizes[i]
		order[i] = i
	}
	frac := func(i int) float64 { return zones[i].Share*float64(p.capacity) - float64(sizes[i]) }
	sort.SliceStable(order, func(a, b int) bool { return frac(order[a]) > frac(order[b]) })
	for i := 0; left > 0; i = (i + 1) % n {
		sizes[order[i]]++
		left--
	}
	for i, sz := range sizes {
		p.cum[i] = sz
		if i > 0 {
			p.cum[i] += p.cum[i-1]
		}
	}
	p.stride = stride(p.capacity)
}

// stride is the step between consecutive workers' positions among c: coprime to c (so every
// position is taken once) and, among the 64 nearest c/φ, the one whose ratio to c has the
// smallest largest partial quotient (the nearest first on a tie): the positions of any
// first n workers then spread evenly, as those of the golden ratio do.
func stride(c int) int {
	// c <= 2 leaves no candidate but 1 (or none): the stride is 1.
	mid := int(math.Round(float64(c) / math.Phi))
	best, bestQ := 1, math.MaxInt
	for d := 0; d <= 32; d++ {
		for _, g := range []int{mid - d, mid + d} {
			if g < 1 || g >= c {
				continue
			}
			if q := maxQuotient(g, c); q < bestQ {
				best, bestQ = g, q
			}
		}
	}
	return best
}

// maxQuotient is the largest partial quotient of the continued fraction of g/c, or MaxInt
// when g and c are not coprime.
func maxQuotient(g, c int) int {
	q := 0
	for g != 0 {
		q = max(q, c/g)
		c, g = g, c%g
	}
	if c != 1 {
		return math.MaxInt
	}
	return q
}

// zoneOf is the zone of worker k.
func (p *workerPool) zoneOf(k int64) int {
	pos := int((k - 1) * int64(p.stride) % int64(p.capacity))
	return sort.Search(len(p.cum), func(z int) bool { return p.cum[z] > pos })
}

// zoneSize is how many workers zone z holds.
func (p *workerPool) zoneSize(z int) int {
	if z == 0 {
		return p.cum[0]
	}
	return p.cum[z] - p.cum[z-1]
}

// takeWorker is the lowest-numbered free worker of a zone that is up, hired (and recorded
// in the workers table) if it never worked; free() must hold. Hiring past the pool's
// capacity would mean the zones' accounting is wrong: it panics rather than hire forever.
func (w *sim) takeWorker() int64 {
	p := &w.pool
	for {
		var k int64
		if len(p.idle) > 0 {
			k = p.idle.pop()
		} else {
			if p.hired == p.capacity {
				panic("sim: every worker of the pool is hired or down, yet one was asked for")
			}
			p.hired++
			k = int64(p.hired)
			p.rec = record.Worker{Worker: k, Zone: p.zones[p.zoneOf(k)]}
			w.sink.Worker(&p.rec)
		}
		if z := p.zoneOf(k); p.zoneDown[z] > 0 {
			p.gone[z] = append(p.gone[z], k)
			continue
		}
		return k
	}
}

// giveBack returns worker k to the free ones, or to its zone's while the zone is down.
func (p *workerPool) giveBack(k int64) {
	if z := p.zoneOf(k); p.zoneDown[z] > 0 {
		p.gone[z] = append(p.gone[z], k)
		return
	}
	p.idle.push(k)
}

// idHeap is a min-heap of worker numbers.
type idHeap []int64

func (h *idHeap) push(k int64) {
	*h = append(*h, k)
	a := *h
	for i := len(a) - 1; i > 0; {
		up := (i - 1) / 2
		if a[up] <= a[i] {
			break
		}
		a[up], a[i] = a[i], a[up]
		i = up
	}
}

func (h *idHeap) pop() int64 {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a[l] < a[m] {
			m = l
		}
		if r := l + 1; r < n && a[r] < a[m] {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// acquire gives a a worker and runs c, or queues a until a worker is free.
func (w *sim) acquire(a *agent, c cont) {
	p := &w.pool
	if p.capacity == 0 {
		w.resume(a, c)
		return
	}
	if p.free() && p.waiting() == 0 {
		w.hire(a)
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
	w.pool.giveBack(a.wid)
	a.wid = 0
	w.kick()
}

// hire gives a a free worker.
func (w *sim) hire(a *agent) {
	p := &w.pool
	a.worker = true
	a.wid = w.takeWorker()
	p.busy++
	if p.busy > p.capacity-p.down {
		w.checker.violate(w, "investigation %d took worker %d: %d of %d workers busy with %d down", a.id, a.wid, p.busy, p.capacity, p.down)
	}
}

// wait makes a await the continuation p (see agent.await); in a state that does not hold a
// worker (workload.hold_worker), a gives its worker back for the wait.
func (w *sim) wait(a *agent, p phase) int32 {
	tok := a.await(p)
	if a.worker && !w.pool.hold[a.eng.State()] {
		w.releaseWorker(a)
		a.released = true
	}
	return tok
}

// resumeKind is what an investigation that waited without a worker does once it has one.
type resumeKind uint8

const (
	resObserve resumeKind = iota + 1 // tell its engine a.resumeEv
	resThought                       // go on after its model turn: budgets, then act
	resTimer                         // carry out the timer its engine asked for
)

// proceed reports whether a, which just took in the event it waited for, may act on it now:
// it holds a worker, or workers are unlimited. Otherwise the rest (r, ev) is kept and a
// queues for a worker like any other work; it acts when it gets one.
func (w *sim) proceed(a *agent, r resumeKind, ev recovery.Event) bool {
	if !a.released {
		return true
	}
	a.resume, a.resumeEv = r, ev
	a.await(phResume)
	w.acquire(a, contResume)
	return false
}

// resumed is a, back on a worker, acting on what it waited for.
func (w *sim) resumed(a *agent) {
	a.released = false
	a.settle()
	switch a.resume {
	case resObserve:
		w.observe(a, a.resumeEv)
	case resThought:
		w.afterThought(a)
	case resTimer:
		w.timerDue(a)
	}
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
		w.hire(a)
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
	case contResume:
		w.resumed(a)
	}
}

// crashable reports whether a's worker is doing work a crash would lose: not pending, not
// idle waiting for a human or its subagents, not already down, holding a worker at all
// (workload.hold_worker may have let it go).
func crashable(a *agent) bool {
	if !a.live || a.down || a.released || a.phase == phJoin || a.phase == phHuman {
		return false
	}
	st := a.eng.State()
	return !(st == recovery.Pending || st == recovery.AwaitingHuman || st.Final())
}
