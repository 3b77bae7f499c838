package record

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// send emits n records of every kind, in a random order, into s, reusing one record of each
// kind and the backing arrays of CausedBy and Attrs as the simulator does, and scribbling
// over them after each call: a sink that kept them would see the scribbles.
func send(s Sink, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var (
		inv  Investigation
		sp   Span
		tr   Transition
		ex   Execution
		ft   Fault
		sa   Sample
		wk   Worker
		caus = make([]uint64, 0, 8)
		attr = make([]Attr, 0, 8)
	)
	word := func() string { return fmt.Sprint("w", rng.IntN(50)) }
	for i := range n {
		switch rng.IntN(7) {
		case 0:
			inv = Investigation{InvestigationID: int64(i), FinalState: word(), Tokens: rng.Int64(), Compute: rng.Float64()}
			s.Investigation(&inv)
		case 1:
			caus = caus[:0]
			for range rng.IntN(4) {
				caus = append(caus, rng.Uint64())
			}
			attr = attr[:0]
			for range rng.IntN(3) {
				attr = append(attr, Attr{word(), word()})
			}
			sp = Span{SpanID: uint64(i), InvestigationID: rng.Int64N(100), Tool: word(), Start: rng.Int64(),
				HasKey: rng.IntN(2) == 0, OpKey: OpKey{rng.Int64N(9), rng.Int32N(9), 0}, CausedBy: caus, Attrs: attr}
			s.Span(&sp)
			for j := range caus {
				caus[j] = 0
			}
			for j := range attr {
				attr[j] = Attr{"scribbled", "scribbled"}
			}
		case 2:
			tr = Transition{InvestigationID: int64(i), At: rng.Int64(), From: word(), To: word(), Attempt: rng.Int32N(5)}
			s.Transition(&tr)
		case 3:
			ex = Execution{Tool: word(), InvestigationID: int64(i), Start: rng.Int64(), Compute: rng.Float64()}
			s.Execution(&ex)
		case 4:
			ft = Fault{FaultID: word(), Kind: word(), Start: rng.Int64()}
			s.Fault(&ft)
		case 5:
			sa = Sample{Tool: word(), At: rng.Int64(), Queued: rng.Int32N(9)}
			s.Sample(&sa)
		case 6:
			wk = Worker{Worker: int64(i), Zone: word()}
			s.Worker(&wk)
		}
	}
}

// Through Async the inner sink sees the same records in the same order as called directly:
// the digest (which hashes every field of every record in emission order) and the copies
// agree, over many batches and with a last batch that is partly full.
func TestAsyncSendsTheSameRecordsInOrder(t *testing.T) {
	for _, n := range []int{0, 1, asyncBatch - 1, asyncBatch, 5*asyncBatch + 17} {
		direct, directDig := &Collector{}, NewDigest()
		send(Tee{directDig, direct}, uint64(n), n)
		viaC, viaDig := &Collector{}, NewDigest()
		a := NewAsync(Tee{viaDig, viaC})
		send(a, uint64(n), n)
		a.Close()
		a.Close() // a second Close is harmless
		if got, want := viaDig.Sum(), directDig.Sum(); got != want {
			t.Errorf("%d records: digest through Async %s, called directly %s", n, got, want)
		}
		if viaDig.Rows() != int64(n) {
			t.Errorf("%d records: the inner sink got %d", n, viaDig.Rows())
		}
		if !reflect.DeepEqual(viaC, direct) {
			t.Errorf("%d records: the records through Async differ from those sent directly", n)
		}
	}
}

// With several sinks, each gets every record in order, as if it were the only one: here
// three sinks read each batch at once (run with -race, which would see a sink's read of a
// batch that the sender is already refilling).
func TestAsyncFansOutToEverySink(t *testing.T) {
	for _, n := range []int{0, 1, asyncBatch, 7*asyncBatch + 5} {
		direct, directDig := &Collector{}, NewDigest()
		send(Tee{directDig, direct}, uint64(n), n)
		c1, c2, dig := &Collector{}, &Collector{}, NewDigest()
		a := NewAsync(c1, dig, c2)
		send(a, uint64(n), n)
		a.Close()
		if got, want := dig.Sum(), directDig.Sum(); got != want {
			t.Errorf("%d records: digest of the second sink %s, called directly %s", n, got, want)
		}
		for i, c := range []*Collector{c1, c2} {
			if !reflect.DeepEqual(c, direct) {
				t.Errorf("%d records: sink %d got other records than were sent", n, i)
			}
		}
	}
}

type panicky struct {
	Collector
	after int
}

func (p *panicky) Span(r *Span) {
	if len(p.Spans) == p.after {
		panic("inner sink broke")
	}
	p.Collector.Span(r)
}

// A panic in the inner sink reaches the sender, with the inner sink's message.
func TestAsyncRaisesTheInnerPanic(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "inner sink broke") {
			t.Fatalf("recovered %v, want the inner sink's panic", r)
		}
	}()
	a := NewAsync(&panicky{after: 10})
	send(a, 3, 20*asyncBatch)
	a.Close()
	t.Fatal("the inner sink's panic did not reach the sender")
}

// A panic in one of several sinks reaches the sender too, while the others go on reading
// (so the sender is never left waiting for a batch).
func TestAsyncRaisesAPanicOfOneOfItsSinks(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "inner sink broke") {
			t.Fatalf("recovered %v, want the second sink's panic", r)
		}
	}()
	a := NewAsync(&Collector{}, &panicky{after: 10}, NewDigest())
	send(a, 3, 20*asyncBatch)
	a.Close()
	t.Fatal("the second sink's panic did not reach the sender")
}
