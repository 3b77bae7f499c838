package analysis

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// protoFixtureMessages is every request of the protobuf fixtures: the captures of real
// libraries (length-delimited, gzipped) and the OTLP fixtures (one request a file).

// fastOTLPProto is fastOTLPProtoIn over b, in slabs of its own, keeping every event.
func fastOTLPProto(b []byte, req *coltracepb.ExportTraceServiceRequest) bool {
	ok, _ := fastOTLPProtoIn(b, req, newSlabsOver(b), allEvents)
	return ok
}

func protoFixtureMessages(t testing.TB) [][]byte {
	t.Helper()
	paths, _ := filepath.Glob("testdata/libraries/*/traces.pb.gz")
	more, _ := filepath.Glob("testdata/otel/*.pb")
	var msgs [][]byte
	for _, p := range append(paths, more...) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = f
		if filepath.Ext(p) == ".gz" {
			if r, err = gzip.NewReader(f); err != nil {
				t.Fatal(err)
			}
		}
		b, err := io.ReadAll(r)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, requestsOf(b)...)
	}
	if len(msgs) < 10 {
		t.Fatalf("%d protobuf fixture messages; want the captures' requests", len(msgs))
	}
	return msgs
}

// requestsOf splits a file into its requests as import reads it: length-delimited requests
// when every length reads as one, else one request.
func requestsOf(b []byte) [][]byte {
	var msgs [][]byte
	for rest := b; len(rest) > 0; {
		m, n := protowire.ConsumeBytes(rest)
		var req coltracepb.ExportTraceServiceRequest
		if n < 0 || proto.Unmarshal(m, &req) != nil || len(req.ResourceSpans) == 0 {
			return [][]byte{b}
		}
		msgs = append(msgs, m)
		rest = rest[n:]
	}
	return msgs
}

// sameAsUnmarshal fails t unless unmarshalRequest and proto.Unmarshal agree on b: both
// refuse it, or both give equal requests. It reports whether the fast path decoded b.
func sameAsUnmarshal(t testing.TB, b []byte) bool {
	t.Helper()
	var fast, want coltracepb.ExportTraceServiceRequest
	ok := fastOTLPProto(b, &fast)
	var got coltracepb.ExportTraceServiceRequest
	gerr, werr := unmarshalRequest(b, &got), proto.Unmarshal(b, &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("unmarshalRequest: %v; proto.Unmarshal: %v", gerr, werr)
	}
	if werr == nil && !proto.Equal(&got, &want) {
		t.Fatalf("unmarshalRequest and proto.Unmarshal decode %d bytes differently", len(b))
	}
	if ok && !proto.Equal(&fast, &want) {
		t.Fatalf("the fast path says it decoded %d bytes, and differs from proto.Unmarshal", len(b))
	}
	return ok
}

// The fast protobuf decoder reads every request of the fixtures as proto.Unmarshal does,
// and leaves to it what it cannot read exactly: an unknown field, a field of another wire
// type, a resource sent twice, invalid UTF-8.
func TestFastProtoMatchesUnmarshal(t *testing.T) {
	msgs := protoFixtureMessages(t)
	for i, m := range msgs {
		if !sameAsUnmarshal(t, m) {
			t.Errorf("fixture message %d: the fast path gave up on a library's request", i)
		}
	}
	span := func(fields []byte) []byte { // request{1: resource_spans{2: scope_spans{2: span}}}
		ss := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), fields)
		rs := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), ss)
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rs)
	}
	name := func(s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, 5, protowire.BytesType), s)
	}
	strValue := func(s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
	}
	intValue := func(x uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), x)
	}
	attr := func(value []byte) []byte { // span{9: key_value{1: "k", 2: value}}
		kv := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k")
		kv = protowire.AppendBytes(protowire.AppendTag(kv, 2, protowire.BytesType), value)
		return protowire.AppendBytes(protowire.AppendTag(nil, 9, protowire.BytesType), kv)
	}
	for label, c := range map[string]struct {
		b    []byte
		fast bool
	}{
		"a name":               {span(name("ok")), true},
		"an unknown field":     {span(append(name("x"), protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7)...)), false},
		"another wire type":    {span(protowire.AppendFixed32(protowire.AppendTag(nil, 6, protowire.Fixed32Type), 1)), false},
		"invalid UTF-8":        {span(name("\xff")), false},
		"a status sent twice":  {span(bytes.Repeat(protowire.AppendBytes(protowire.AppendTag(nil, 15, protowire.BytesType), nil), 2)), false},
		"a truncated field":    {span(name("x"))[:5], false},
		"an empty request":     {nil, true},
		"a zero-length string": {span(name("")), true},
		// An attribute's value: one string or integer field is read directly, anything
		// else as any AnyValue (a oneof sent twice takes the last).
		"a string value":            {span(attr(strValue("v"))), true},
		"an integer value":          {span(attr(intValue(7))), true},
		"a string, then an integer": {span(attr(append(strValue("v"), intValue(7)...))), true},
		"an integer, then a string": {span(attr(append(intValue(7), strValue("v")...))), true},
		"a value's string cut":      {span(attr(strValue("value")[:4])), false},
		"a value of invalid UTF-8":  {span(attr(strValue("\xff"))), false},
	} {
		if got := sameAsUnmarshal(t, c.b); got != c.fast {
			t.Errorf("%s: fast path %t, want %t", label, got, c.fast)
		}
	}
}

// Whatever the bytes, unmarshalRequest agrees with proto.Unmarshal.
func FuzzFastProto(f *testing.F) {
	msgs := protoFixtureMessages(f)
	slices.SortFunc(msgs, func(a, b []byte) int { return len(a) - len(b) })
	for _, m := range msgs[:8] { // the smallest: the fuzzer mutates small inputs fastest
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameAsUnmarshal(t, b)
	})
}

// unmarshalRequest agrees with proto.Unmarshal on 20,000 corruptions of the smallest fixture
// requests (bits flipped, bytes dropped and inserted, one to four each, from a fixed seed):
// truncated fields, wrong wire types, unknown fields and broken UTF-8 among them. Each
// decodes in well under a second (a hang fails it).
func TestFastProtoAgreesOnCorruptions(t *testing.T) {
	msgs := protoFixtureMessages(t)
	slices.SortFunc(msgs, func(a, b []byte) int { return len(a) - len(b) })
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	for i := 0; i < 20000; i++ {
		b := slices.Clone(msgs[r.IntN(8)])
		for k := 0; k < 1+r.IntN(4); k++ {
			switch r.IntN(3) {
			case 0:
				if len(b) > 0 {
					b[r.IntN(len(b))] ^= byte(1 << r.IntN(8))
				}
			case 1:
				if len(b) > 0 {
					j := r.IntN(len(b))
					b = append(b[:j], b[j+1:]...)
				}
			case 2:
				j := r.IntN(len(b) + 1)
				b = slices.Insert(b, j, byte(r.IntN(256)))
			}
		}
		t0 := time.Now()
		sameAsUnmarshal(t, b)
		if d := time.Since(t0); d > time.Second {
			t.Fatalf("input %d took %v", i, d)
		}
	}
	t.Logf("%v for 20,000 inputs of %d-%d bytes", time.Since(start), len(msgs[0]), len(msgs[7]))
}
