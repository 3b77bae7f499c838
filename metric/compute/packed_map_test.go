package compute

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/sim/record"
)

// A packedMap answers as a plain map of the same keys does, for keys whose fields fit the
// packing and keys past it alike (negative, at each field's limit, the largest values), and
// each gives back every key once.
func TestPackedMapAsAMap(t *testing.T) {
	edge := func(limit int64) *rapid.Generator[int64] {
		return rapid.SampledFrom([]int64{0, 1, limit - 1, limit, limit + 1, -1, math.MinInt32, math.MaxInt32})
	}
	rapid.Check(t, func(t *rapid.T) {
		ops, want := newPackedMap[record.OpKey, int32](packOp), map[record.OpKey]int32{}
		mins, wantMins := newPackedMap[tm, *tmCount](packMinute), map[tm]*tmCount{}
		for i := range rapid.IntRange(0, 60).Draw(t, "steps") {
			k := record.OpKey{Investigation: rapid.OneOf(edge(1<<36), rapid.Int64()).Draw(t, "inv"),
				Step: int32(edge(1<<20).Draw(t, "step")), Revision: int32(edge(1<<8).Draw(t, "rev"))}
			m := tm{tool: int32(edge(1<<16-1).Draw(t, "tool")), minute: rapid.OneOf(edge(1<<48), rapid.Int64()).Draw(t, "minute")}
			switch rapid.IntRange(0, 2).Draw(t, "do") {
			case 0:
				ops.put(k, int32(i))
				want[k] = int32(i)
				c := &tmCount{attempts: int64(i)}
				mins.put(m, c)
				wantMins[m] = c
			case 1:
				ops.delete(k)
				delete(want, k)
			}
			if got, ok := ops.get(k); ok != hasKey(want, k) || got != want[k] {
				t.Fatalf("get(%+v) = %d, %v; the map has %d", k, got, ok, want[k])
			}
			if got, _ := mins.get(m); got != wantMins[m] {
				t.Fatalf("get(%+v) = %v; the map has %v", m, got, wantMins[m])
			}
		}
		if ops.len() != len(want) || mins.len() != len(wantMins) {
			t.Fatalf("len %d and %d, want %d and %d", ops.len(), mins.len(), len(want), len(wantMins))
		}
		seen := map[tm]int{}
		mins.each(func(k tm) { seen[k]++ }, unpackMinute)
		for k := range wantMins {
			if seen[k] != 1 {
				t.Fatalf("each gave %+v %d times", k, seen[k])
			}
		}
		if len(seen) != len(wantMins) {
			t.Fatalf("each gave %d keys, want %d", len(seen), len(wantMins))
		}
	})
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}
