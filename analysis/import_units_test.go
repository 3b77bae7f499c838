package analysis

import (
	"cmp"
	"slices"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/sim/record"
)

// sortSpans puts a part's spans in SpanID order, whether their ids are the part's range
// (each once, placed in one pass) or anything else (sorted): the result is always what
// sorting them gives, with every span kept whole.
func TestSortSpans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "n")
		first := rapid.Uint64Range(0, 1000).Draw(t, "first")
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = first + uint64(i) + 1
		}
		switch rapid.IntRange(0, 2).Draw(t, "ids") {
		case 1: // one id outside the range, or repeated
			if n > 0 {
				ids[rapid.IntRange(0, n-1).Draw(t, "at")] = rapid.Uint64Range(0, first+uint64(n)+5).Draw(t, "other")
			}
		case 2: // ids of another part
			for i := range ids {
				ids[i] = rapid.Uint64Range(0, 3000).Draw(t, "id")
			}
		}
		perm := rapid.Permutation(ids).Draw(t, "order")
		spans := make([]record.Span, n)
		for i, id := range perm {
			spans[i] = record.Span{SpanID: id, InvestigationID: int64(i), Tool: string(rune('a' + i%26))}
		}
		want := slices.Clone(spans)
		slices.SortStableFunc(want, func(x, y record.Span) int { return cmp.Compare(x.SpanID, y.SpanID) })
		sortSpans(spans, first)
		for i := range spans {
			if spans[i].SpanID != want[i].SpanID {
				t.Fatalf("span %d has id %d, want %d", i, spans[i].SpanID, want[i].SpanID)
			}
		}
		// Every span is still there, whole (its other fields travel with its id).
		seen := map[int64]record.Span{}
		for _, s := range spans {
			seen[s.InvestigationID] = s
		}
		for i, id := range perm {
			if s, ok := seen[int64(i)]; !ok || s.SpanID != id || s.Tool != string(rune('a'+i%26)) {
				t.Fatalf("span %d (id %d) lost or torn: %+v", i, id, s)
			}
		}
	})
}

// sortByIndex orders as slices.SortFunc does, for keys that never tie, and keeps every
// element whole.
func TestSortByIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.Permutation(rapid.SliceOfNDistinct(rapid.IntRange(-500, 500), 0, 80, rapid.ID[int]).Draw(t, "keys")).Draw(t, "order")
		type rec struct {
			key  int
			text string
		}
		s := make([]rec, len(keys))
		for i, k := range keys {
			s[i] = rec{k, string(rune('A' + (k+500)%26))}
		}
		want := slices.Clone(s)
		slices.SortFunc(want, func(x, y rec) int { return cmp.Compare(x.key, y.key) })
		sortByIndex(s, func(x, y *rec) int { return cmp.Compare(x.key, y.key) })
		if !slices.Equal(s, want) {
			t.Fatalf("got %v, want %v", s, want)
		}
	})
}

// A request's full-size slabs go back to the pool cleared when it is recycled, and the
// next request decoded from the pool takes them: the same memory, holding nothing of the
// request before (no string or pointer of it stays reachable). Slabs of a small request
// (fewer objects) are its own.
func TestSlabPoolReusesClearedSlabs(t *testing.T) {
	var pool slabPool
	text := make([]byte, slabSize*bytesPerObject)
	s := pool.slabsOver(text)
	take(&s, &s.kvs).Key = "api_key"
	for range slabSize + 3 { // into a second slab
		take(&s, &s.kvs).Key = "x"
	}
	bases := []*commonpb.KeyValue{&s.kvs.taken[0][0], &s.kvs.taken[1][0]}
	s.recycle()
	if n := len(pool.kvs.slabs); n != 2 {
		t.Fatalf("%d slabs back in the pool, want 2", n)
	}
	s2 := pool.slabsOver(text)
	got := take(&s2, &s2.kvs)
	again := take(&s2, &s2.kvs)
	if got.Key != "" || again.Key != "" {
		t.Errorf("a recycled slab holds %q, %q: not cleared", got.Key, again.Key)
	}
	if got != bases[0] && got != bases[1] {
		t.Errorf("the next request's slab is new memory, not one given back")
	}
	if len(pool.kvs.slabs) != 1 {
		t.Errorf("%d slabs left in the pool after taking one, want 1", len(pool.kvs.slabs))
	}
	small := pool.slabsOver(make([]byte, 100))
	take(&small, &small.kvs)
	small.recycle()
	if len(pool.kvs.slabs) != 1 {
		t.Errorf("a small request's slab went to the pool")
	}
	// The pool keeps at most maxFreeSlabs of a kind.
	many := make([][]commonpb.KeyValue, maxFreeSlabs+10)
	for i := range many {
		many[i] = make([]commonpb.KeyValue, slabSize)
	}
	pool.kvs.put(many)
	if n := len(pool.kvs.slabs); n != maxFreeSlabs {
		t.Errorf("the pool keeps %d slabs, want at most %d", n, maxFreeSlabs)
	}
}
