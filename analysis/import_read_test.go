//go:build duckdb_arrow

package analysis

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Requests decoded side by side (decodeQueue: JSON lines, protobuf request bodies) reach
// the caller in the order they were read, across files, whatever their sizes; the error
// reported is that of the first bad request in that order (a later file that cannot be
// read does not hide it), and no request after it is handed on. Checked with one, two and
// four requests decoding at once.
func TestDecodedRequestsInOrder(t *testing.T) {
	dir := t.TempDir()
	line := func(n int) string {
		// Requests of very different sizes, so that later ones decode first.
		pad := strings.Repeat("x", (n*7919)%40000)
		return fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},`+
			`"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"n%d","startTimeUnixNano":"1773905529327000000",`+
			`"endTimeUnixNano":"1773905529427000000","attributes":[{"key":"pad","value":{"stringValue":"%s"}}]}]}]}]}`, n+1, n+1, n, pad)
	}
	save := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(name string, from, to, bad int) string {
		var b strings.Builder
		for n := from; n < to; n++ {
			if n == bad {
				b.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":12}]}]}]}` + "\n")
				continue
			}
			b.WriteString(line(n) + "\n")
		}
		return save(name, []byte(b.String()))
	}
	encoded := func(n int) []byte { // line n's request as protobuf
		req, err := new(requestMemory).decodeJSON([]byte(line(n)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	body := func(name string, n int) string { return save(name, encoded(n)) }
	delimited := func(name string, from, to int) string { // as the Collector's file exporter writes
		var b []byte
		for n := from; n < to; n++ {
			m := encoded(n)
			b = append(binary.AppendUvarint(b, uint64(len(m))), m...)
		}
		return save(name, b)
	}
	good := []string{write("a.jsonl", 0, 40, -1), body("b.pb", 40), write("b2.jsonl", 41, 45, -1), body("b3.pb", 45), body("b4.pb", 46),
		delimited("b5.pb", 47, 50), write("c.jsonl", 50, 90, -1)}
	badAt := []string{write("d.jsonl", 0, 40, -1), write("e.jsonl", 40, 90, 57)}
	empty := save("f.jsonl", nil)
	old := decodeAhead
	t.Cleanup(func() { decodeAhead = old })
	for _, ahead := range []int{1, 2, 4} {
		decodeAhead = ahead
		read := func(files []string) ([]string, error) {
			rd := newTraceReader(ReadLimits{}, ConvAuto, nil)
			var names []string
			for i, f := range files {
				err := rd.readOn(f, func(req *coltracepb.ExportTraceServiceRequest, where string) error {
					names = append(names, req.ResourceSpans[0].ScopeSpans[0].Spans[0].Name)
					return nil
				})
				if err == nil && i == len(files)-1 {
					err = rd.dec.flush()
				}
				if err != nil {
					rd.dec.abandon()
					return names, err
				}
			}
			return names, nil
		}
		names, err := read(good)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != 90 {
			t.Fatalf("decodeAhead %d: %d requests handed on, want 90", ahead, len(names))
		}
		for i, n := range names {
			if n != fmt.Sprint("n", i) {
				t.Fatalf("decodeAhead %d: request %d handed on is %s", ahead, i, n)
			}
		}
		names, err = read(badAt)
		if err == nil || !strings.Contains(err.Error(), "e.jsonl:18:") {
			t.Fatalf("decodeAhead %d: error %v, want the one of e.jsonl:18 (line 58 of the input)", ahead, err)
		}
		if len(names) != 57 || names[56] != "n56" {
			t.Fatalf("decodeAhead %d: %d requests handed on before the bad line, want the 57 before it", ahead, len(names))
		}
		// A later file that cannot be read does not hide the error of an earlier line, the
		// last of its file (still decoding when the next file is opened).
		_, err = read([]string{write("g.jsonl", 0, 10, 9), empty})
		if err == nil || !strings.Contains(err.Error(), "g.jsonl:10:") {
			t.Fatalf("decodeAhead %d: error %v, want the one of g.jsonl:10, before the empty file's", ahead, err)
		}
	}
}

// The forms trace files come in, each read as the same spans as the plain protobuf request:
// zstd (the Collector file exporter's compression: one stream, or a frame per write) of
// JSON lines and of length-delimited protobuf; JSON that a byte-order mark begins; JSON whose
// ids are base64, as protojson writes the OTLP protos (OTLP/JSON writes hex), on the fast
// decoder's path and on protojson's (a pretty-printed body).
func TestReadFileForms(t *testing.T) {
	dir := t.TempDir()
	top, call, sub := linkedAgent()
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{top, call, sub}}}}}}
	pb, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	b64, err := protojson.Marshal(req) // ids in base64
	if err != nil {
		t.Fatal(err)
	}
	hexJSON, err := hexIDs(b64)
	if err != nil {
		t.Fatal(err)
	}
	pretty, err := protojson.MarshalOptions{Multiline: true}.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	delimited := protowire.AppendBytes(nil, pb)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonLines := append(append(hexJSON, '\n'), append(hexJSON, '\n')...) // the same request twice: an exporter's retry
	files := map[string][]byte{
		"plain.pb":        pb,
		"lines.jsonl.zst": enc.EncodeAll(jsonLines, nil),
		"frames.pb.zst":   append(enc.EncodeAll(delimited, nil), enc.EncodeAll(delimited, nil)...),
		"bom.json":        append([]byte(utf8BOM), hexJSON...),
		"base64.json":     b64,
		"pretty.json":     pretty,
	}
	shape := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		db, _ := importInto(t, []string{p}, ImportOptions{})
		return fmt.Sprint(query(t, db, "SELECT operation, depth, span_id, parent_span_id FROM spans JOIN investigations USING (run_id, investigation_id) ORDER BY span_id"))
	}
	want := shape("plain.pb")
	if !strings.Contains(want, "invoke_agent 1") {
		t.Fatalf("the plain request reads as %s: want the sub-agent joined at depth 1", want)
	}
	for name := range files {
		if got := shape(name); got != want {
			t.Errorf("%s reads as %s, want %s", name, got, want)
		}
	}
	if raw, ok := base64ID("0af7651916cd43dd8448eb211c80319c"); ok {
		t.Errorf("a hex trace id read as base64 (%x)", raw)
	}
}
