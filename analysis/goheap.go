package analysis

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// GoHeapLimit is the least soft limit of the Go heap (runtime/debug.SetMemoryLimit) that
// the mayday binary keeps unless GOMEMLIMIT is set: with it the collector runs before the
// heap doubles, instead of after. After each collection the limit is raised to
// goHeapHeadroom times the live heap when that is more, up to GoHeapCeiling
// (goHeapLimitFor), so that a run whose live heap is itself near the limit (an overloaded
// fleet's backlog) does not collect without pause.
//
// Measured, whole processes: research-fleet at 1,000,000 investigations (live heap up to
// about 180 MiB) peaked at 1,006,476 and 1,007,088 KB with a fixed 384 MiB, and at 904,172
// and 895,512 KB with a fixed 256 MiB, in the same time; but a fixed 256 MiB slowed
// BenchmarkPeakMemory100kOverload (live heap near 300 MiB) from 103.9 s to 140.8 s, and
// with no ceiling it peaked at 1018 MiB and above 1 GiB. BenchmarkPeakMemory100kTenfold:
// 1126 MiB peak with no limit, 999 MiB at 384 MiB.
const GoHeapLimit = 256 << 20

// GoHeapCeiling is the most the soft limit is raised to. It was 384 MiB, the fixed limit
// the binary had before it followed the live heap, under which the overloaded benchmark
// stayed within 1 GiB while DuckDB held up to 384 MB. DuckDB holds less while a run loads
// (LoadBufferPerRun), and the Go heap has the difference: at 384 MiB the metrics of
// research-fleet at 1,000,000 investigations, whose live heap passes 400 MiB, kept the
// collector running for most of the run (419.5 s, 1.18-1.21 GB); at 512 MiB, 228.1 s and
// 1.22 GB, with DuckDB at 160 MB (docs/performance.md has the figures since).
const GoHeapCeiling = 512 << 20

// goHeapHeadroom is how far above the live heap the limit stays: the heap may grow by this
// factor between collections (GOGC=100 lets it double).
const goHeapHeadroom = 1.3

// goHeapLimitFor is the soft limit for a live heap of live bytes.
func goHeapLimitFor(live uint64) int64 {
	return min(max(goHeapBase, int64(float64(live)*goHeapHeadroom)), goHeapCeiling)
}

// goHeapBase and goHeapCeiling are GoHeapLimit and GoHeapCeiling; tests move them.
var goHeapBase, goHeapCeiling int64 = GoHeapLimit, GoHeapCeiling

var goHeap struct {
	sync.Mutex
	armed  bool // LimitGoHeap ran: the limit follows the live heap
	gen    int  // which LimitGoHeap armed the chain of cleanups that follows it
	paused int  // PinGoHeap holders: the limit is theirs
}

// LimitGoHeap sets the Go heap's soft limit (GoHeapLimit, raised with the live heap after
// each collection) unless the environment sets GOMEMLIMIT; the binary calls it once at
// start, and the peak-memory benchmarks do, so that they measure what it runs.
func LimitGoHeap() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	goHeap.Lock()
	defer goHeap.Unlock()
	if goHeap.armed {
		return
	}
	goHeap.armed = true
	goHeap.gen++
	debug.SetMemoryLimit(goHeapBase)
	armAfterGC(goHeap.gen)
}

// PinGoHeap sets the Go heap's soft limit to bytes, which collections leave alone until
// the returned function restores the limit before it (a command given a memory limit of
// its own).
func PinGoHeap(bytes int64) (restore func()) {
	goHeap.Lock()
	goHeap.paused++
	old := debug.SetMemoryLimit(bytes)
	goHeap.Unlock()
	return func() {
		goHeap.Lock()
		defer goHeap.Unlock()
		goHeap.paused--
		debug.SetMemoryLimit(old)
	}
}

// gcMark is a heap object no one references: its cleanup runs after the collection that
// finds it, then arms the next one. It is larger than 16 bytes, so that it is not
// allocated in a tiny block, whose objects may be kept alive by their neighbours.
type gcMark struct{ _ [4]uint64 }

// armAfterGC has followLiveHeap run after the next collection, and again after each one
// while the limit follows the live heap for the LimitGoHeap of generation gen.
func armAfterGC(gen int) {
	runtime.AddCleanup(new(gcMark), func(gen int) {
		if followLiveHeap(gen) {
			armAfterGC(gen)
		}
	}, gen)
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// followLiveHeap raises or lowers the soft limit to goHeapLimitFor the live heap the last
// collection marked, unless PinGoHeap holds it; it reports whether the limit still follows
// the live heap for generation gen.
func followLiveHeap(gen int) bool {
	goHeap.Lock()
	defer goHeap.Unlock()
	if !goHeap.armed || gen != goHeap.gen {
		return false
	}
	if goHeap.paused > 0 {
		return true
	}
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(goHeapLimitFor(liveSample[0].Value.Uint64()))
	}
	return true
}
