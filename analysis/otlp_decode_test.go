package analysis

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"
)

// fastOTLPJSON is fastOTLPJSONIn over a copy of b, in slabs of its own.
func fastOTLPJSON(b []byte) (*coltracepb.ExportTraceServiceRequest, bool) {
	req, _, ok := fastOTLPJSONIn(b, slabsOf(b, string(b)), allEvents)
	return req, ok
}

// slowOTLPJSON is the reference decoding: the ids rewritten to base64, then protojson.
func slowOTLPJSON(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	b, err := base64IDs(b)
	if err != nil {
		return nil, err
	}
	var req coltracepb.ExportTraceServiceRequest
	return &req, otlpJSONOptions.Unmarshal(b, &req)
}

// jsonRequests reads every OTLP/JSON request of the JSON fixtures (real libraries' and
// the Go SDK's): one per line of a .jsonl file, the whole of a .json file.
func jsonRequests(t *testing.T) [][]byte {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/otel/*.json*", "testdata/libraries/*/*.json*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var out [][]byte
	for _, f := range files {
		if strings.HasSuffix(f, "truth.json") || strings.HasSuffix(f, "params.json") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = fh
		if strings.HasSuffix(f, ".gz") {
			if r, err = gzip.NewReader(fh); err != nil {
				t.Fatal(err)
			}
		}
		b, err := io.ReadAll(r)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f, ".jsonl") {
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<30)
			for sc.Scan() {
				out = append(out, append([]byte(nil), sc.Bytes()...))
			}
			continue
		}
		out = append(out, b)
	}
	if len(out) < 10 {
		t.Fatalf("%d JSON requests in the fixtures", len(out))
	}
	return out
}

// The fast decoder gives exactly protojson's message on every request of the fixtures.
func TestFastOTLPJSONMatchesProtojson(t *testing.T) {
	for i, b := range jsonRequests(t) {
		want, err := slowOTLPJSON(b)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, ok := fastOTLPJSON(b)
		if !ok {
			t.Fatalf("request %d: the fast decoder gave up on a valid request", i)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("request %d: the fast decoder's message differs from protojson's", i)
		}
	}
}

// Every form OTLP/JSON allows decodes as protojson decodes it, and everything protojson
// refuses the fast decoder gives up on (so the caller's error is protojson's); a field of
// an unknown name is ignored.
func TestFastOTLPJSONEdges(t *testing.T) {
	span := func(fields string) string {
		return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},"scopeSpans":[{"scope":{"name":"x"},"spans":[{` + fields + `}]}]}]}`
	}
	ids := `"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708"`
	valid := []string{
		span(ids + `,"name":"a","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":2`),
		span(ids + `,"kind":"SPAN_KIND_CLIENT","status":{"code":"STATUS_CODE_ERROR","message":"m\n\u00e9\ud83d\ude00"}`),
		span(ids + `,"attributes":[{"key":"i","value":{"intValue":"-9"}},{"key":"d","value":{"doubleValue":"NaN"}},{"key":"d2","value":{"doubleValue":1.5e3}},` +
			`{"key":"b","value":{"boolValue":true}},{"key":"y","value":{"bytesValue":"aGk="}},{"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x"},{}]}}},` +
			`{"key":"k","value":{"kvlistValue":{"values":[{"key":"n","value":{"intValue":1}}]}}},{"key":"e","value":{}},{"key":"n","value":null}]`),
		span(ids + `,"events":[{"timeUnixNano":"5","name":"exception","attributes":[]}],"links":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","flags":1}]`),
		span(`"trace_id":"0102030405060708090a0b0c0d0e0f10","span_id":"0102030405060708","parent_span_id":"","start_time_unix_nano":7`),
		// Attributes as exporters write them (read by compactKeyValue), and near misses
		// of that form (read by keyValue).
		span(ids + `,"attributes":[{"key":"s","value":{"stringValue":"v\"w"}},{"key":"i","value":{"intValue":7}},{"key":"j","value":{"intValue":"-8"}},` +
			`{"key":"e\u00e9","value":{"stringValue":""}},{"key":"sp", "value":{"stringValue":"v"}},{"value":{"stringValue":"v"},"key":"r"},` +
			`{"key":"c","value":{"stringValue":"v"} },{"key":"k","value":{"intValue":7} }]`),
		span(ids + `,"attributes":[{"key":"d","value":{"doubleValue":2.5}},{"key":"dn","value":{"doubleValue":"-Infinity"}},{"key":"ds","value":{"doubleValue":"1e-3"}},` +
			`{"key":"di","value":{"doubleValue":7}},{"key":"t","value":{"boolValue":true}},{"key":"f","value":{"boolValue":false}},` +
			`{"key":"zi","value":{"intValue":null}},{"key":"zd","value":{"doubleValue":null}},{"key":"zb","value":{"boolValue":null}},{"key":"zs","value":{"stringValue":null}}]`),
		` { "resourceSpans" : [ ] } `,
		`{}`,
	}
	for _, v := range valid {
		want, err := slowOTLPJSON([]byte(v))
		if err != nil {
			t.Fatalf("%s: protojson: %v", v, err)
		}
		got, ok := fastOTLPJSON([]byte(v))
		if !ok || !proto.Equal(got, want) {
			t.Errorf("%s: fast decoder ok %v, equal %v", v, ok, ok && proto.Equal(got, want))
		}
	}
	// A field of an unknown name is ignored, as the OTLP specification requires of a
	// receiver (a newer OTLP adds fields), and so is an enum value of an unknown name (the
	// field reads as unset): the fast decoder leaves the request to protojson, which reads
	// it as if the field were not there.
	for _, v := range []string{
		span(ids + `,"nmae":"a"`),
		span(ids + `,"kind":"SPAN_KIND_NOPE"`),
		`{"resourceSpans":[{"resource":{"entityRefs":[{"type":"service"}]},"scopeSpans":[{"scope":{"name":"x","futureThing":{"a":[1,2]}},"spans":[{` + ids + `,"newField":5}]}]}],"partialThing":true}`,
	} {
		got, err := slowOTLPJSON([]byte(v))
		if err != nil {
			t.Fatalf("%s: protojson: %v", v, err)
		}
		if n := len(got.ResourceSpans[0].ScopeSpans[0].Spans); n != 1 {
			t.Errorf("%s: %d spans, want the one", v, n)
		}
	}
	refused := []string{
		span(ids + `,"startTimeUnixNano":"01"`),
		span(ids + `,"startTimeUnixNano":-1`),
		span(`"traceId":"zz"`),
		span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"x","intValue":1}}]`),
		span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"x"}},"extra"]`),
		// A field sent twice, under one name or both of its names.
		span(ids + `,"name":"a","name":"b"`),
		span(ids + `,"trace_id":"0102030405060708090a0b0c0d0e0f10"`),
		span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"x"},"key":"b"}]`),
		span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"x","stringValue":"y"}}]`),
		span(ids + `,"status":{"code":1,"code":2}`),
		`{"resourceSpans":[],"resource_spans":[]}`,
		span(ids + `,"attributes":[{"key":"a","value":{"intValue":1.5}}]`),
		span(ids + `,"attributes":[{"key":"a","value":{"doubleValue":"x"}}]`),
		span(ids + `,"attributes":[{"key":"a","value":{"boolValue":"true"}}]`),
		span(ids + `,"attributes":[{"key":"a","value":{"boolValue":1}}]`),
		span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"` + "\x01" + `"}}]`),
		span(ids + `,"name":"` + "\xff" + `"`),
		`{"resourceSpans":[]} x`,
		`{"resourceSpans":[],}`,
		`[]`,
	}
	for _, v := range refused {
		if _, err := slowOTLPJSON([]byte(v)); err == nil {
			t.Fatalf("%s: protojson accepts it", v)
		}
		if _, ok := fastOTLPJSON([]byte(v)); ok {
			t.Errorf("%s: the fast decoder accepts what protojson refuses", v)
		}
	}
}

func BenchmarkOTLPJSONDecode(b *testing.B) {
	t := &testing.T{}
	reqs := jsonRequests(t)
	var size int64
	for _, r := range reqs {
		size += int64(len(r))
	}
	for _, mode := range []string{"fast", "protojson"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, r := range reqs {
					if mode == "fast" {
						fastOTLPJSON(r)
					} else {
						slowOTLPJSON(r)
					}
				}
			}
		})
	}
}

// Strings decode as protojson decodes them, whatever they hold: runs of plain bytes
// between escapes, quotes and backslashes escaped or bare, control bytes, multi-byte and
// invalid UTF-8, \u escapes and surrogate pairs, in a span's name and an attribute.
func TestFastOTLPJSONStrings(t *testing.T) {
	pieces := []string{"a", "plain text ", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, "é", "\xff", "\x01", `"`, `\`, `\x`, `{\"k\":\"v\"}`}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for range rapid.IntRange(0, 12).Draw(t, "pieces") {
			b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
		}
		s := b.String()
		v := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",` +
			`"name":"` + s + `","attributes":[{"key":"k","value":{"stringValue":"` + s + `"}}]}]}]}]}`
		want, werr := slowOTLPJSON([]byte(v))
		got, ok := fastOTLPJSON([]byte(v))
		if ok && (werr != nil || !proto.Equal(got, want)) {
			t.Fatalf("%q: the fast decoder accepts it (protojson: %v), or reads it otherwise", s, werr)
		}
		if !ok && werr == nil && !strings.Contains(s, `\ud83d`) {
			// The fast decoder may give up on what protojson reads (the caller then uses
			// protojson), but only on rare forms, such as a lone surrogate.
			t.Fatalf("%q: the fast decoder gave up on a string protojson reads", s)
		}
	})
}

// Strings with escapes are written in text blocks that go back to the pool with their
// request: a request decoded while another is in use never writes over the other's
// strings, and a block given back and taken again by a new request leaves the requests
// still in use as they were. The requests hold strings of every size around the limits
// (a block's rest, a string of its own past textOwn), more than a block's worth in all.
func TestTextSlabsKeepRequestsApart(t *testing.T) {
	line := func(tag string) []byte {
		var b strings.Builder
		b.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[`)
		for i, n := range []int{1, 7, 100, 4000, textOwn - 1, textOwn, textOwn + 1, 200000, 3, textBlock / 2} {
			if i > 0 {
				b.WriteByte(',')
			}
			v := strings.Repeat(tag+`\"`, n/3+1)
			fmt.Fprintf(&b, `{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b71692033%02d","name":"n\t%s%d",`+
				`"attributes":[{"key":"k\n%d","value":{"stringValue":"%s"}}]}`, i, tag, i, i, v)
		}
		b.WriteString(`]}]}]}`)
		return []byte(b.String())
	}
	var pool slabPool
	decode := func(b []byte) (*coltracepb.ExportTraceServiceRequest, *slabs) {
		req, s, ok := fastOTLPJSONIn(b, pool.slabsOver(b), allEvents)
		if !ok {
			t.Fatal("the fast decoder gave up on the test's request")
		}
		return req, s
	}
	want := func(b []byte) *coltracepb.ExportTraceServiceRequest {
		req, err := slowOTLPJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	a, b, c := line("a"), line("bb"), line("ccc")
	_, sa := decode(a)
	rb, sb := decode(b)
	if len(pool.texts.slabs) != 0 || len(sa.texts.taken) == 0 || len(sb.texts.taken) == 0 {
		t.Fatalf("blocks in the pool %d, taken by the requests %d and %d: want 0 and some", len(pool.texts.slabs), len(sa.texts.taken), len(sb.texts.taken))
	}
	sa.recycle()
	if len(pool.texts.slabs) == 0 {
		t.Fatal("the first request's blocks did not go back to the pool")
	}
	rc, sc := decode(c) // takes the first request's blocks again
	for _, x := range []struct {
		got  *coltracepb.ExportTraceServiceRequest
		line []byte
	}{{rb, b}, {rc, c}} {
		if !proto.Equal(x.got, want(x.line)) {
			t.Errorf("a request in use changed: %.80s", x.line)
		}
	}
	sb.recycle()
	sc.recycle()
}
