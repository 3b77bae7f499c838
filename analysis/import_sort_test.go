package analysis

import (
	"cmp"
	"slices"
	"testing"

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
