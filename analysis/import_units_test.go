package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
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

// sortByIndex orders as slices.SortStableFunc does, ties kept in their order, and keeps
// every element whole.
func TestSortByIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfN(rapid.IntRange(-20, 20), 0, 80).Draw(t, "keys")
		type rec struct {
			key  int
			text string
		}
		s := make([]rec, len(keys))
		for i, k := range keys {
			s[i] = rec{k, fmt.Sprint(i)}
		}
		want := slices.Clone(s)
		slices.SortStableFunc(want, func(x, y rec) int { return cmp.Compare(x.key, y.key) })
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
	pool.kvs.put(many, maxFreeSlabs, true)
	if n := len(pool.kvs.slabs); n != maxFreeSlabs {
		t.Errorf("the pool keeps %d slabs, want at most %d", n, maxFreeSlabs)
	}
}

// What the import keeps of a request outlives the request's memory, which is read into
// again for later requests (requestMemory): with the request's text overwritten after it
// was added, every run (its id, service and resource) and every span it holds reads as
// before, for a mayday export's run and for a run of plain spans.
func TestSpanSetKeepsNothingOfTheRequest(t *testing.T) {
	line := `{"resourceSpans":[{"resource":{"attributes":[{"key":"mayday.run_id","value":{"stringValue":"fleet-s7"}},` +
		`{"key":"service.name","value":{"stringValue":"svc"}},{"key":"deployment","value":{"stringValue":"blue"}}]},` +
		`"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"execute_tool WebSearch",` +
		`"startTimeUnixNano":"1773905529327000000","endTimeUnixNano":"1773905529427000000","status":{"code":2,"message":"upstream 503"},` +
		`"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"WebSearch"}},` +
		`{"key":"prompt","value":{"stringValue":"` + strings.Repeat("a long prompt ", 10) + `"}},` +
		`{"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"x"},{"intValue":"2"}]}}}],` +
		`"events":[{"name":"exception","timeUnixNano":"1773905529427000000","attributes":[{"key":"exception.type","value":{"stringValue":"HTTPError"}}]}]}]}]}]}`
	snapshot := func(set *spanSet) string {
		var b strings.Builder
		for _, r := range set.runs {
			fmt.Fprintf(&b, "run %s %s %v|", r.id, r.service, r.native)
			for _, k := range slices.Sorted(maps.Keys(r.resource)) {
				fmt.Fprintf(&b, "%s=%s|", k, r.resource[k].GetStringValue())
			}
			for _, s := range r.spans {
				fmt.Fprintf(&b, "span %s %s %s %s %s %s|", s.key, s.parent, s.name, s.msg, s.errType, s.status)
				for _, a := range s.attrs {
					fmt.Fprintf(&b, "%s=%s|", a.key, a.val.text())
				}
				for _, e := range s.events {
					fmt.Fprintf(&b, "event %s|", e.name)
					for _, a := range e.attrs {
						fmt.Fprintf(&b, "%s=%s|", a.key, a.val.text())
					}
				}
			}
		}
		return b.String()
	}
	for _, conv := range []string{ConvAuto, ConvGenAI} {
		text := []byte(line)
		req, _, ok := fastOTLPJSONIn(text, newSlabsOver(text), allEvents)
		if !ok {
			t.Fatal("the fast decoder gave up on the test's request")
		}
		set := newSpanSet(conv, "import", "")
		if err := set.add(req, "test"); err != nil {
			t.Fatal(err)
		}
		// A service left out (--service) is counted by name, request after request.
		other := newSpanSet(ConvGenAI, "import", "another")
		for range 2 {
			if err := other.add(req, "test"); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(other.skipped) != "map[svc:2]" {
			t.Fatalf("skipped %v, want svc's two spans", other.skipped)
		}
		want := snapshot(set)
		if !strings.Contains(want, "WebSearch") || !strings.Contains(want, "tags=") || len(set.runs) != 1 {
			t.Fatalf("%s: the run read %q", conv, want)
		}
		for i := range text {
			text[i] = 'z'
		}
		clearRequest(req) // its objects go back to the slab pool, cleared
		if got := snapshot(set); got != want {
			t.Errorf("%s: after the request's text was overwritten, the runs read\n%s\nnot\n%s", conv, got, want)
		}
		if r := set.byID[set.runs[0].id]; r != set.runs[0] {
			t.Errorf("%s: the run is no longer found by its id", conv)
		}
		if got := fmt.Sprint(other.skipped); got != "map[svc:2]" {
			t.Errorf("the services left out read %s after the request's text was overwritten", got)
		}
	}
}

// clearRequest zeroes every object of req, as the slab pool clears them for reuse.
func clearRequest(req *coltracepb.ExportTraceServiceRequest) {
	clearAttrs := func(kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			if kv.Value != nil {
				*kv.Value = commonpb.AnyValue{}
			}
			*kv = commonpb.KeyValue{}
		}
	}
	for _, rs := range req.ResourceSpans {
		if rs.Resource != nil {
			clearAttrs(rs.Resource.Attributes)
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				clearAttrs(sp.Attributes)
				for _, e := range sp.Events {
					clearAttrs(e.Attributes)
					*e = tracepb.Span_Event{}
				}
				for _, l := range sp.Links {
					*l = tracepb.Span_Link{}
				}
				*sp = tracepb.Span{}
			}
		}
	}
}
