package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestHeapOrder pushes events with many equal times and checks that they pop in
// (time, scheduling order): the total order the determinism contract relies on.
func TestHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h eventHeap
	var want []event
	for i := 0; i < 5000; i++ {
		e := event{at: int64(r.IntN(50)), a: int32(i)}
		h.push(e)
		e.seq = h.seq
		want = append(want, e)
		if i%7 == 0 { // interleave pops with pushes
			got := h.pop()
			j := slices.IndexFunc(want, func(w event) bool { return w.seq == got.seq })
			for _, w := range want {
				if w.before(&got) {
					t.Fatalf("popped %+v while %+v was pending", got, w)
				}
			}
			want = slices.Delete(want, j, j+1)
		}
	}
	slices.SortFunc(want, func(x, y event) int {
		if x.before(&y) {
			return -1
		}
		return 1
	})
	for i, w := range want {
		got := h.pop()
		if got != w {
			t.Fatalf("pop %d = %+v, want %+v", i, got, w)
		}
	}
	if h.len() != 0 {
		t.Fatalf("heap not empty: %d", h.len())
	}
}

// BenchmarkEventLoop is the hold model: 100,000 pending events; each iteration pops the
// earliest and schedules one at now + an exponential gap. It measures the bare engine cost
// of one event.
func BenchmarkEventLoop(b *testing.B) {
	const pending = 100_000
	r := rand.New(rand.NewPCG(7, 7))
	var h eventHeap
	h.ev = make([]event, 0, pending+1)
	for i := 0; i < pending; i++ {
		h.push(event{at: int64(r.ExpFloat64() * 1e9), kind: evTimer, ent: int32(i)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		e := h.pop()
		e.at += int64(r.ExpFloat64() * 1e9)
		h.push(e)
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
}

// TestEventOrderIsStrict: before orders events by time, then by the order they were
// scheduled (seq), and is a strict order: no event is before itself, nor before another of
// the same time scheduled earlier.
func TestEventOrderIsStrict(t *testing.T) {
	a, b, c := event{at: 5, seq: 1}, event{at: 5, seq: 2}, event{at: 4, seq: 3}
	for _, tc := range []struct {
		x, y *event
		want bool
	}{
		{&a, &a, false}, {&a, &b, true}, {&b, &a, false}, {&c, &a, true}, {&a, &c, false}, {&c, &c, false},
	} {
		if got := tc.x.before(tc.y); got != tc.want {
			t.Errorf("%+v before %+v = %t, want %t", *tc.x, *tc.y, got, tc.want)
		}
	}
}

// TestIdHeapOrder: the free workers' heap hands out the lowest number first, whatever the
// order the numbers came back in, with pushes and pops interleaved.
func TestIdHeapOrder(t *testing.T) {
	var h idHeap
	var got []int64
	for _, k := range []int64{5, 3, 8, 1, 9, 2, 7} {
		h.push(k)
	}
	got = append(got, h.pop(), h.pop(), h.pop()) // 1 2 3
	for _, k := range []int64{4, 0, 6} {
		h.push(k)
	}
	for len(h) > 0 {
		got = append(got, h.pop())
	}
	if want := []int64{1, 2, 3, 0, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
}
