package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// withoutUnreadEvents is req with the events a run of plain spans does not read left out
// of the spans of every resource plain(i) says is read as plain spans.
func withoutUnreadEvents(req *coltracepb.ExportTraceServiceRequest, plain func(i int) bool) *coltracepb.ExportTraceServiceRequest {
	out := proto.Clone(req).(*coltracepb.ExportTraceServiceRequest)
	for i, rs := range out.ResourceSpans {
		if !plain(i) {
			continue
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				sp.Events = slices.DeleteFunc(sp.Events, func(e *tracepb.Span_Event) bool { return !readsEvent(false, e.Name) })
			}
		}
	}
	return out
}

// resourceFirst reports, for each resource_spans of a valid request b, whether its
// resource was sent before its first scope_spans.
func resourceFirst(b []byte) []bool {
	var first []bool
	for len(b) > 0 {
		_, _, n := protowire.ConsumeTag(b)
		v, m := protowire.ConsumeBytes(b[n:])
		b = b[n+m:]
		seen, spans := false, false
		for len(v) > 0 {
			num, typ, n := protowire.ConsumeTag(v)
			m := protowire.ConsumeFieldValue(num, typ, v[n:])
			seen = seen || num == 1 && !spans
			spans = spans || num == 2
			v = v[n+m:]
		}
		first = append(first, seen)
	}
	return first
}

// eventRequests are requests whose spans carry events of every kind of value, named as a
// run of plain spans reads them (exception) and not, under a plain resource and an
// export's, the resource before its spans and after them.
func eventRequests(t testing.TB) [][]byte {
	t.Helper()
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	values := []*commonpb.KeyValue{
		kv("s", str("v")), kv("i", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -3}}),
		kv("b", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
		kv("d", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 1.5}}),
		kv("y", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte("hi")}}),
		kv("a", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{str("x"), {}}}}}),
		kv("k", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{kv("n", str("m"))}}}}),
		kv("e", &commonpb.AnyValue{}), {Key: "none"},
	}
	span := func(id byte) *tracepb.Span {
		sp := &tracepb.Span{TraceId: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, id},
			Name: "s", StartTimeUnixNano: 1, EndTimeUnixNano: 2, Attributes: values[:2]}
		for i, name := range []string{"mayday.transition", "exception", "log", "exception", ""} {
			sp.Events = append(sp.Events, &tracepb.Span_Event{TimeUnixNano: uint64(i), Name: name, Attributes: values[:1+i*2%len(values)]})
		}
		sp.Events[1].Attributes = append(sp.Events[1].Attributes, kv("exception.type", str("HTTPError")))
		return sp
	}
	resources := []*resourcepb.Resource{
		{Attributes: []*commonpb.KeyValue{kv("service.name", str("svc"))}},
		{Attributes: []*commonpb.KeyValue{kv("mayday.run_id", str("r1")), kv("service.name", str("mayday"))}},
		{Attributes: []*commonpb.KeyValue{kv("mayday.run_id", str("r1")), kv("mayday.run_id", str(""))}}, // the last counts
		nil,
	}
	var reqs [][]byte
	req := &coltracepb.ExportTraceServiceRequest{}
	for i, r := range resources {
		req.ResourceSpans = append(req.ResourceSpans, &tracepb.ResourceSpans{Resource: r,
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span(byte(2 * i)), span(byte(2*i + 1))}}}})
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, b)
	// The same resource_spans, each with its resource sent after its spans.
	var late []byte
	for _, rs := range req.ResourceSpans {
		var body []byte
		for _, ss := range rs.ScopeSpans {
			m, _ := proto.Marshal(ss)
			body = protowire.AppendBytes(protowire.AppendTag(body, 2, protowire.BytesType), m)
		}
		if rs.Resource != nil {
			m, _ := proto.Marshal(rs.Resource)
			body = protowire.AppendBytes(protowire.AppendTag(body, 1, protowire.BytesType), m)
		}
		late = protowire.AppendBytes(protowire.AppendTag(late, 1, protowire.BytesType), body)
	}
	return append(reqs, late)
}

// plainDecodes fails t unless the fast protobuf decoder, keeping only the events a run of
// plain spans reads, accepts b exactly when it accepts it keeping every event, and gives
// the same request less those events. It reports whether b was decoded.
func plainDecodes(t testing.TB, b []byte) bool {
	t.Helper()
	var all coltracepb.ExportTraceServiceRequest
	ok, _ := fastOTLPProtoIn(b, &all, newSlabsOver(b), allEvents)
	first := []bool(nil)
	if ok {
		first = resourceFirst(b)
	}
	for _, mode := range []eventReading{plainEvents, plainUnlessExports} {
		var got coltracepb.ExportTraceServiceRequest
		gok, _ := fastOTLPProtoIn(b, &got, newSlabsOver(b), mode)
		if gok != ok {
			t.Fatalf("mode %d: the fast decoder decodes %d bytes: %v; keeping every event: %v", mode, len(b), gok, ok)
		}
		if !ok {
			continue
		}
		want := withoutUnreadEvents(&all, func(i int) bool {
			var attrs []*commonpb.KeyValue
			if r := all.ResourceSpans[i].Resource; r != nil {
				attrs = r.Attributes
			}
			return mode.plain(attrs, first[i])
		})
		if !proto.Equal(&got, want) {
			t.Fatalf("mode %d: %d bytes decode to another request than the one keeping every event, less the events not read", mode, len(b))
		}
	}
	return ok
}

// The protobuf decoder leaves out the events a run of plain spans does not read, and checks
// them as it would decode them: on the fixtures, on requests with events of every kind of
// value under plain and export resources (before and after their spans), and on 10,000
// corruptions of those, it accepts exactly what it accepts keeping every event, and gives
// the same request less those events.
func TestFastProtoLeavesOutUnreadEvents(t *testing.T) {
	msgs := append(eventRequests(t), protoFixtureMessages(t)...)
	for i, m := range msgs {
		if !plainDecodes(t, m) {
			t.Fatalf("request %d: not decoded", i)
		}
	}
	// The requests built here keep the exception events and the export's, and drop others.
	var got coltracepb.ExportTraceServiceRequest
	if ok, _ := fastOTLPProtoIn(msgs[0], &got, newSlabsOver(msgs[0]), plainUnlessExports); !ok {
		t.Fatal("not decoded")
	}
	// plain; an export; mayday.run_id "" last; no resource (which could have come last)
	for i, want := range []int{2, 5, 2, 5} {
		if n := len(got.ResourceSpans[i].ScopeSpans[0].Spans[0].Events); n != want {
			t.Errorf("resource %d: %d events kept, want %d", i, n, want)
		}
	}
	got.Reset()
	if ok, _ := fastOTLPProtoIn(msgs[1], &got, newSlabsOver(msgs[1]), plainUnlessExports); !ok {
		t.Fatal("not decoded")
	}
	if n := len(got.ResourceSpans[0].ScopeSpans[0].Spans[0].Events); n != 5 {
		t.Errorf("a resource sent after its spans: %d events kept, want all 5", n)
	}
	// Events built byte by byte: what the decoder gives up on when it decodes an event (a
	// oneof's array or list sent twice, which proto.Unmarshal merges; a value sent twice;
	// invalid UTF-8; nesting past maxFastDepth) it gives up on when it leaves one out.
	tag := func(b []byte, num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
	}
	array := tag(nil, 5, tag(nil, 1, tag(nil, 1, []byte("x"))))
	list := tag(nil, 6, tag(nil, 1, tag(nil, 1, []byte("k"))))
	nested := tag(nil, 1, []byte("x"))
	for range maxFastDepth + 1 {
		nested = tag(nil, 5, tag(nil, 1, nested))
	}
	for label, c := range map[string]struct {
		value []byte // the attribute's AnyValue
		key   string
		fast  bool
	}{
		"an array":                     {array, "k", true},
		"an array sent twice":          {append(slices.Clone(array), array...), "k", false},
		"an array, a string, an array": {append(append(slices.Clone(array), tag(nil, 1, []byte("s"))...), array...), "k", true},
		"a list sent twice":            {append(slices.Clone(list), list...), "k", false},
		"a list, then an array":        {append(slices.Clone(list), array...), "k", true},
		"invalid UTF-8 in a value":     {tag(nil, 1, []byte("\xff")), "k", false},
		"invalid UTF-8 in a key":       {tag(nil, 1, []byte("v")), "\xff", false},
		"nested past the depth":        {nested, "k", false},
	} {
		for _, twice := range []bool{false, true} {
			kv := tag(tag(nil, 1, []byte(c.key)), 2, c.value)
			if twice {
				kv = tag(kv, 2, tag(nil, 1, []byte("v"))) // a second value
			}
			event := tag(tag(nil, 2, []byte("log")), 3, kv)
			span := tag(tag(nil, 5, []byte("s")), 11, event)
			b := tag(nil, 1, tag(nil, 2, tag(nil, 2, span)))
			if got, want := plainDecodes(t, b), c.fast && !twice; got != want {
				t.Errorf("%s (value twice %t): decoded %t, want %t", label, twice, got, want)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	decoded := 0
	for i := 0; i < 10000; i++ {
		b := slices.Clone(msgs[r.IntN(2)])
		for k := 0; k < 1+r.IntN(3); k++ {
			switch j := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b[j] ^= byte(1 << r.IntN(8))
			case 1:
				b = append(b[:j], b[j+1:]...)
			case 2:
				b = slices.Insert(b, j, byte(r.IntN(256)))
			}
		}
		if plainDecodes(t, b) {
			decoded++
		}
	}
	// Corruptions inside a string or a number still decode: the check must have seen
	// both outcomes many times to mean anything.
	t.Logf("%d of 10,000 corruptions decoded", decoded)
	if decoded < 500 || decoded > 9500 {
		t.Fatalf("%d of 10,000 corruptions decoded; want both outcomes", decoded)
	}
}

// The JSON decoder leaves out the same events: on the JSON fixtures and on the requests
// above as OTLP/JSON, with every member order protojson writes and their corruptions, it
// accepts exactly what it accepts keeping every event and gives the same request less the
// events not read; the memory an event left out was decoded into is decoded into again
// (slabs.rewind), which the equality checks.
func TestFastJSONLeavesOutUnreadEvents(t *testing.T) {
	reqs := jsonRequests(t)
	for _, b := range eventRequests(t)[:1] {
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		j, err := protojson.Marshal(&req)
		if err != nil {
			t.Fatal(err)
		}
		j, err = hexIDs(j)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, j)
	}
	check := func(b []byte) bool {
		all, ok := fastOTLPJSON(b)
		for _, mode := range []eventReading{plainEvents, plainUnlessExports} {
			got, _, gok := fastOTLPJSONIn(b, slabsOf(b, string(b)), mode)
			if gok != ok {
				t.Fatalf("mode %d: the fast decoder decodes %d bytes: %v; keeping every event: %v", mode, len(b), gok, ok)
			}
			if !ok {
				continue
			}
			want := withoutUnreadEvents(all, func(i int) bool {
				var attrs []*commonpb.KeyValue
				r := all.ResourceSpans[i].Resource
				if r != nil {
					attrs = r.Attributes
				}
				return mode.plain(attrs, r != nil) // protojson writes the resource first
			})
			if !proto.Equal(got, want) {
				t.Fatalf("mode %d: %d bytes decode to another request than the one keeping every event, less the events not read", mode, len(b))
			}
		}
		return ok
	}
	for i, b := range reqs {
		if !check(b) {
			t.Fatalf("request %d: not decoded", i)
		}
	}
	built := reqs[len(reqs)-1]
	got, _, _ := fastOTLPJSONIn(built, slabsOf(built, string(built)), plainUnlessExports)
	for i, want := range []int{2, 5, 2, 5} {
		if n := len(got.ResourceSpans[i].ScopeSpans[0].Spans[0].Events); n != want {
			t.Errorf("resource %d: %d events kept, want %d", i, n, want)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	decoded := 0
	for i := 0; i < 5000; i++ {
		b := slices.Clone(built)
		for k := 0; k < 1+r.IntN(2); k++ {
			switch j := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b[j] = " \"{}[],:0aeE-.\\"[r.IntN(15)]
			case 1:
				b = append(b[:j], b[j+1:]...)
			case 2:
				b = slices.Insert(b, j, "\"{}[],:0 "[r.IntN(9)])
			}
		}
		if check(b) {
			decoded++
		}
	}
	t.Logf("%d of 5,000 corruptions decoded", decoded)
	if decoded < 250 || decoded > 4750 {
		t.Fatalf("%d of 5,000 corruptions decoded; want both outcomes", decoded)
	}
}
