package analysis

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGoHeapLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, GoHeapLimit},
		{100 << 20, GoHeapLimit},
		{GoHeapLimit / 2, GoHeapLimit},
		{250 << 20, 340787200}, // 1.3 × 250 MiB
		{300 << 20, 408944640}, // 1.3 × 300 MiB
		{400 << 20, GoHeapCeiling},
		{1 << 30, GoHeapCeiling},
	} {
		if got := goHeapLimitFor(c.live); got < c.want-1 || got > c.want {
			t.Errorf("goHeapLimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestGoHeapLimitFollowsLiveHeap lowers the base limit to 1 MiB and the ceiling to 40 MiB,
// keeps 24 MiB live and collects: the limit rises to the headroom over the live heap; with
// 48 MiB live, to the ceiling; pinned, it stays put.
func TestGoHeapLimitFollowsLiveHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: LimitGoHeap leaves the limit alone")
	}
	old := debug.SetMemoryLimit(-1)
	goHeapBase, goHeapCeiling = 1<<20, 40<<20
	t.Cleanup(func() {
		goHeap.Lock()
		goHeap.armed = false // the next collection's cleanup stops following
		goHeap.Unlock()
		goHeapBase, goHeapCeiling = GoHeapLimit, GoHeapCeiling
		debug.SetMemoryLimit(old)
	})
	LimitGoHeap()
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Fatalf("limit after LimitGoHeap = %d, want the base, %d", got, 1<<20)
	}
	live := filled(24 << 20)
	low := int64(32715571) // 1.3 × 24 MiB, rounded down; the test binary's own heap adds a little
	if got := limitAfterGC(func(l int64) bool { return l >= low }); got < low || got > 40<<20 {
		t.Fatalf("limit with 24 MiB live = %d, want from %d to the ceiling, %d", got, low, 40<<20)
	}
	more := filled(24 << 20)
	if got := limitAfterGC(func(l int64) bool { return l == 40<<20 }); got != 40<<20 {
		t.Fatalf("limit with 48 MiB live = %d, want the ceiling, %d", got, 40<<20)
	}

	unpin := PinGoHeap(math.MaxInt64 / 2)
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64/2 {
		t.Errorf("pinned limit = %d after collections, want %d", got, int64(math.MaxInt64/2))
	}
	unpin()
	if got := debug.SetMemoryLimit(-1); got != 40<<20 {
		t.Errorf("limit after unpinning = %d, want the one before, %d", got, 40<<20)
	}
	runtime.KeepAlive(live)
	runtime.KeepAlive(more)
}

// filled returns n bytes, each written, so that they are resident.
func filled(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// limitAfterGC collects until the soft limit satisfies ok (the cleanup that moves it runs on
// a goroutine of the runtime after a collection), for up to 10 s, and returns it.
func limitAfterGC(ok func(int64) bool) int64 {
	var got int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if got = debug.SetMemoryLimit(-1); ok(got) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return got
}
