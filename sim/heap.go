package sim

// kind says what an event does when it is popped. Events are small values: a kind, the
// index of the entity they concern and two integer payloads, so the heap never boxes or
// allocates per event.
type kind uint8

const (
	evArrive      kind = iota + 1 // a root investigation arrives (ent: root ordinal)
	evThought                     // a model turn ended (ent: agent, a: wait token)
	evTimer                       // a time the engine asked for has come (ent: agent, a: wait token)
	evServiceDone                 // a tool finished serving a request (ent: request slot)
	evFastReply                   // a fast failure or an answer from a keyed record (ent: agent, a: token, b: code)
	evTimeout                     // a caller-side timeout fired (ent: agent, a: token)
	evCrash                       // the agent's worker dies (ent: agent, a: crash token, b: fault)
	evLease                       // the lease of a crashed worker expired (ent: agent, a: crash token)
	evSupervised                  // the supervisor answered (ent: agent, a: token)
	evReviewed                    // a reviewer finished a review (ent: reviewer, a: agent, b: token)
	evSample                      // periodic tool samples
	evWorker                      // workers were freed: hand them to waiting investigations
	evFaultBegin                  // a fault's window begins (ent: fault)
	evFaultEnd                    // a fault's window ends (ent: fault)
)

// event is one scheduled happening. Events are ordered by (at, seq): seq is the order of
// scheduling, so simultaneous events run in the order they were scheduled and the whole
// run has a total order.
type event struct {
	at   int64
	seq  uint64
	a, b int32
	ent  int32
	kind kind
}

func (e *event) before(o *event) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

// eventHeap is a binary min-heap of event values, typed so nothing is boxed into an
// interface (container/heap would allocate per push).
type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) len() int { return len(h.ev) }

// push schedules e, stamping its sequence number.
func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.ev = append(h.ev, e)
	ev := h.ev
	// Sift up with a hole: parents move down until e's place is found.
	i := len(ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}

// pop removes and returns the earliest event; the heap must not be empty.
func (h *eventHeap) pop() event {
	ev := h.ev
	top := ev[0]
	n := len(ev) - 1
	last := ev[n]
	ev = ev[:n]
	h.ev = ev
	if n == 0 {
		return top
	}
	// Sift the last element down from the root with a hole.
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && ev[r].before(&ev[c]) {
			c = r
		}
		if !ev[c].before(&last) {
			break
		}
		ev[i] = ev[c]
		i = c
	}
	ev[i] = last
	return top
}

// peek returns the earliest event; the heap must not be empty.
func (h *eventHeap) peek() *event { return &h.ev[0] }
