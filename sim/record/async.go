package record

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Async is a Sink that hands records to other sinks, each on a goroutine of its own, so that
// the sender (the simulator) and the receivers (a digest, a metrics computation) run on
// several cores. It copies each record, with its CausedBy and Attrs, into a batch; each full
// batch goes over a small queue to every receiver's goroutine, which sends the batch's
// records to its sink in the order they were sent. Each sink sees exactly the records, in
// exactly the order, that it would have seen called directly, so nothing it computes can
// depend on the goroutines' timing. The receivers read the same batch at once, so they must
// not modify the records they are given (no sink of mayday does). Memory stays bounded:
// asyncBatches batches of asyncBatch records.
//
// Close sends what is left and waits for every sink to take it; only then may a sink be
// read. A panic in a sink is raised again on the sender's goroutine, at the next batch or at
// Close, so it ends the process as a panic of the sender would.
type Async struct {
	inner  []Sink
	cur    *batch
	free   chan *batch
	full   []chan *batch // one queue per sink
	wg     sync.WaitGroup
	failed chan struct{} // closed when a sink has panicked
	once   sync.Once
	fault  any // what it panicked with (read once failed is closed)
	stack  []byte
	shut   bool
}

// A batch holds copies of records in emission order: kinds[i] says which slice holds the
// i-th, the slices in their own order.
type batch struct {
	kinds   []byte
	invs    []Investigation
	spans   []Span
	trans   []Transition
	execs   []Execution
	faults  []Fault
	samples []Sample
	workers []Worker
	caused  []uint64     // the spans' CausedBy, end to end
	attrs   []Attr       // the spans' Attrs, end to end
	readers atomic.Int32 // the sinks still to read it; the last one returns it
}

const (
	asyncBatch   = 4096 // records per batch
	asyncBatches = 4    // batches in all: one filling, the rest queued or being read
)

const (
	kindInvestigation byte = iota
	kindSpan
	kindTransition
	kindExecution
	kindFault
	kindSample
	kindWorker
)

// NewAsync starts a goroutine for each sink in inner (at least one). Call Close when the
// records end.
func NewAsync(inner ...Sink) *Async {
	if len(inner) == 0 {
		panic("record: NewAsync without a sink")
	}
	a := &Async{inner: inner, free: make(chan *batch, asyncBatches), full: make([]chan *batch, len(inner)),
		failed: make(chan struct{})}
	for range asyncBatches - 1 {
		a.free <- &batch{}
	}
	a.cur = &batch{}
	for i := range inner {
		a.full[i] = make(chan *batch, asyncBatches)
		a.wg.Add(1)
		go a.run(inner[i], a.full[i])
	}
	return a
}

func (a *Async) run(s Sink, full chan *batch) {
	defer a.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			a.once.Do(func() {
				a.fault, a.stack = r, stack
				close(a.failed)
			})
			for b := range full { // let the sender go on until it sees the fault
				a.done(b)
			}
		}
	}()
	for b := range full {
		b.replay(s)
		a.done(b)
	}
}

// done tells that one sink has read b; the last one empties it and hands it back.
func (a *Async) done(b *batch) {
	if b.readers.Add(-1) == 0 {
		b.reset()
		a.free <- b
	}
}

// replay sends the batch's records to s in the order they were taken.
func (b *batch) replay(s Sink) {
	var n [kindWorker + 1]int
	for _, k := range b.kinds {
		i := n[k]
		n[k]++
		switch k {
		case kindInvestigation:
			s.Investigation(&b.invs[i])
		case kindSpan:
			s.Span(&b.spans[i])
		case kindTransition:
			s.Transition(&b.trans[i])
		case kindExecution:
			s.Execution(&b.execs[i])
		case kindFault:
			s.Fault(&b.faults[i])
		case kindSample:
			s.Sample(&b.samples[i])
		case kindWorker:
			s.Worker(&b.workers[i])
		}
	}
}

func (b *batch) reset() {
	b.kinds, b.caused = b.kinds[:0], b.caused[:0]
	b.invs, b.spans, b.trans, b.execs = empty(b.invs), empty(b.spans), empty(b.trans), empty(b.execs)
	b.faults, b.samples, b.workers, b.attrs = empty(b.faults), empty(b.samples), empty(b.workers), empty(b.attrs)
}

// empty zeroes s (dropping the strings its elements hold) and returns it with length 0.
func empty[T any](s []T) []T {
	clear(s)
	return s[:0]
}

// took ends the copy of one record of kind k; a full batch goes to the goroutine.
func (a *Async) took(k byte) {
	a.cur.kinds = append(a.cur.kinds, k)
	if len(a.cur.kinds) < asyncBatch {
		return
	}
	a.send()
	a.cur = <-a.free
	a.check()
}

func (a *Async) send() {
	if a.shut {
		panic("record: a record sent to an Async sink after Close")
	}
	b := a.cur
	a.cur = nil
	b.readers.Store(int32(len(a.full)))
	for _, full := range a.full {
		full <- b
	}
}

// check raises the inner sink's panic on the sender's goroutine.
func (a *Async) check() {
	select {
	case <-a.failed:
		panic(fmt.Sprintf("%v\n(in the receiving sink's goroutine)\n%s", a.fault, a.stack))
	default:
	}
}

// Close sends the records left and waits until every sink has taken every record.
func (a *Async) Close() {
	if a.shut {
		return
	}
	a.send()
	a.shut = true
	for _, full := range a.full {
		close(full)
	}
	a.wg.Wait()
	a.check()
}

// take copies a record without slices into the batch's slice dst.
func take[T any](a *Async, dst *[]T, r *T, k byte) {
	*dst = append(*dst, *r)
	a.took(k)
}

func (a *Async) Investigation(r *Investigation) { take(a, &a.cur.invs, r, kindInvestigation) }
func (a *Async) Transition(r *Transition)       { take(a, &a.cur.trans, r, kindTransition) }
func (a *Async) Execution(r *Execution)         { take(a, &a.cur.execs, r, kindExecution) }
func (a *Async) Fault(r *Fault)                 { take(a, &a.cur.faults, r, kindFault) }
func (a *Async) Sample(r *Sample)               { take(a, &a.cur.samples, r, kindSample) }
func (a *Async) Worker(r *Worker)               { take(a, &a.cur.workers, r, kindWorker) }

// Span copies a span with its CausedBy and Attrs, which go into the batch's own arrays.
func (a *Async) Span(r *Span) {
	b := a.cur
	c := *r
	if len(r.CausedBy) > 0 {
		n := len(b.caused)
		b.caused = append(b.caused, r.CausedBy...)
		c.CausedBy = b.caused[n:len(b.caused):len(b.caused)]
	}
	if len(r.Attrs) > 0 {
		n := len(b.attrs)
		b.attrs = append(b.attrs, r.Attrs...)
		c.Attrs = b.attrs[n:len(b.attrs):len(b.attrs)]
	}
	b.spans = append(b.spans, c)
	a.took(kindSpan)
}

var _ Sink = (*Async)(nil)
