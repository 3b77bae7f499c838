package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
)

// TestPendQueueCompacts pins when the queue of investigations waiting for a worker drops
// the entries it has handed out: at the pop that takes its head past 1024 and past half its
// slice, not one pop earlier or later; the entries come out in order throughout.
func TestPendQueueCompacts(t *testing.T) {
	for _, c := range []struct {
		n       int   // entries pushed before the first pop
		compact []int // the pops (1-based) after which the slice is compacted
	}{
		{2000, []int{1025}}, // half the slice is passed long before: the 1024 bound decides
		{2048, []int{1025}}, // 1024 is exactly half: the next pop compacts
		{2050, []int{1026}}, // 1025 is exactly half: it is not passed until the next pop
		{2052, []int{1027, 2052}},
		{1024, nil}, // the head never passes 1024
		{1025, []int{1025}},
	} {
		var p pendQueue
		for i := range c.n {
			p.push(pendEntry{seq: uint64(i)})
		}
		head, size := 0, c.n
		for i := range c.n {
			if got := p.pop().seq; got != uint64(i) {
				t.Fatalf("%d entries: pop %d gave entry %d", c.n, i+1, got)
			}
			head++
			if slices.Contains(c.compact, i+1) {
				head, size = 0, size-head
			}
			if p.head != head || len(p.q) != size || p.len() != c.n-i-1 {
				t.Fatalf("%d entries, after pop %d: head %d, slice %d, len %d; want %d, %d, %d",
					c.n, i+1, p.head, len(p.q), p.len(), head, size, c.n-i-1)
			}
		}
	}
}

// TestReviewQueueCompacts pins when the queue of escalations waiting for a reviewer drops
// the ones already taken: when an escalation arrives and at least half the queue has been
// taken, the taken ones are dropped before it joins; the reviewer takes them in order.
func TestReviewQueueCompacts(t *testing.T) {
	s := testScenario()
	s.Recovery.Humans = &scenarios.Humans{Reviewers: 1, Approve: 1,
		ReviewTime: scenarios.Dist{Kind: scenarios.DistConstant, Value: float64(time.Minute)}}
	w := built(t, s, 1, &record.Collector{})
	h := &w.humans
	a := w.newAgent(1, 1, nil)
	var toks []int32 // the tokens of the escalations, in order
	enqueue := func() {
		w.humans.enqueue(w, a, recovery.Transient)
		toks = append(toks, a.tok)
	}
	taken := 1 // the reviews started: the first goes to the idle reviewer at once
	review := func() {
		w.reviewed(0, a.slot, toks[taken-1])
		if got := h.desk[0].tok; got != toks[taken] {
			t.Fatalf("the reviewer took the escalation of token %d after %d reviews; want %d", got, taken, toks[taken])
		}
		taken++
	}
	check := func(head, size int) {
		t.Helper()
		if h.head != head || len(h.queue) != size {
			t.Fatalf("after %d escalations and %d reviews: head %d, queue %d; want %d, %d",
				len(toks), taken, h.head, len(h.queue), head, size)
		}
	}
	enqueue()
	check(0, 0)
	for range 4 {
		enqueue()
	}
	check(0, 4)
	review()
	enqueue() // 1 taken of 4: kept
	check(1, 5)
	review()
	enqueue() // 2 of 5: kept
	check(2, 6)
	review()
	enqueue() // 3 of 6, exactly half: dropped
	check(0, 4)
	for range 4 {
		review()
	}
	check(4, 4)
	enqueue() // all 4 taken
	check(0, 1)
	review()
	check(1, 1)
	if len(h.free) != 0 {
		t.Fatalf("%d reviewers idle while one reviews", len(h.free))
	}
	a.settle()                           // a no longer waits: the review's end touches only the reviewers
	w.reviewed(0, a.slot, toks[taken-1]) // the queue is empty: the reviewer is idle
	if len(h.free) != 1 || h.head != 1 || len(h.queue) != 1 {
		t.Fatalf("after the last review: %d idle, head %d, queue %d; want 1, 1, 1", len(h.free), h.head, len(h.queue))
	}
	enqueue() // the idle reviewer takes it at once; the queue is left as it is
	check(1, 1)
	if len(h.free) != 0 || h.desk[0].tok != toks[len(toks)-1] {
		t.Fatalf("the idle reviewer did not take the last escalation: %d idle, desk token %d", len(h.free), h.desk[0].tok)
	}
}
