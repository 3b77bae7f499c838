//go:build duckdb_arrow

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mayday-sim/mayday/analysis"
)

// libraryCopies is how many copies of the LangGraph capture the import-library benchmark
// imports: 25 × 4,312 spans, past the spill threshold, so it is built in parts as a large
// input is.
const libraryCopies = 25

// libraryCapture is the capture the import-library benchmark copies: LangGraph.js with
// OpenInference, whose spans carry whole prompts and messages (about 4 KB a span).
var libraryCapture = filepath.Join("..", "..", "analysis", "testdata", "libraries", "langgraph-openinference", "traces.jsonl.gz")

// importLibraryBench is the import-library sub-benchmark: `mayday import` (conventions
// detected) of traces made by an agent library, in protobuf against the same in OTLP/JSON,
// each reported as spans a second. The input is libraryCopies copies of libraryCapture
// under new trace ids, each copy's long values (256 bytes or more) made its own, so that
// values repeat within a copy, as in one capture, and not across copies.
func importLibraryBench() commandBench {
	var spans int
	return commandBench{name: "import-library", setup: func(b *testing.B, bin, dir string) {
		spans = writeLibraryCopies(b, dir, libraryCopies)
	}, cmd: func(b *testing.B, bin, dir string, i int) proc {
		return importProc(b, bin, dir, "lib-proto", i)
	}, ref: func(b *testing.B, bin, dir string, i int) proc {
		return importProc(b, bin, dir, "lib-json", i)
	}, after: func(b *testing.B, bin, dir string, cmdS, refS float64) {
		b.ReportMetric(float64(spans), "spans")
		b.ReportMetric(float64(spans)/cmdS, "cmd-spans-per-s")
		b.ReportMetric(float64(spans)/refS, "ref-spans-per-s")
	}}
}

// writeLibraryCopies writes n copies of libraryCapture into dir/otlp-lib-json (JSON lines,
// compact, as the capture's exporter wrote them) and dir/otlp-lib-proto (one request body
// a copy, read from those lines by analysis.ReadOTLP), and returns how many spans they hold.
func writeLibraryCopies(b *testing.B, dir string, n int) int {
	f, err := os.Open(libraryCapture)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	jsonDir, protoDir := filepath.Join(dir, "otlp-lib-json"), filepath.Join(dir, "otlp-lib-proto")
	for _, d := range []string{jsonDir, protoDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	one := filepath.Join(dir, "line.json")
	spans := 0
	for k := range n {
		var out bytes.Buffer
		whole := &coltracepb.ExportTraceServiceRequest{}
		for _, line := range lines {
			c := copyLine(b, line, k)
			out.Write(c)
			out.WriteByte('\n')
			if err := os.WriteFile(one, c, 0o644); err != nil {
				b.Fatal(err)
			}
			req, err := analysis.ReadOTLP(one)
			if err != nil {
				b.Fatal(err)
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					spans += len(ss.Spans)
				}
			}
			whole.ResourceSpans = append(whole.ResourceSpans, req.ResourceSpans...)
		}
		if err := os.WriteFile(filepath.Join(jsonDir, fmt.Sprintf("copy-%03d.jsonl", k)), out.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		body, err := proto.Marshal(whole)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(protoDir, fmt.Sprintf("copy-%03d.pb", k)), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return spans
}

// copyLine is line (one OTLP/JSON request) as copy k: every trace id (of spans and links)
// replaced by one drawn from it and k, and every string value of 256 bytes or more made the
// copy's own; compact, with <, > and & as they were (as JavaScript's exporters write them).
func copyLine(b *testing.B, line []byte, k int) []byte {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // integers stay as written
	var req map[string]any
	if err := dec.Decode(&req); err != nil {
		b.Fatal(err)
	}
	newID := func(m map[string]any) {
		if id, ok := m["traceId"].(string); ok && id != "" {
			h := sha256.Sum256(fmt.Appendf(nil, "%d/%s", k, id))
			m["traceId"] = hex.EncodeToString(h[:len(id)/2])
		}
	}
	own := func(attrs any) {
		list, _ := attrs.([]any)
		for _, a := range list {
			v, _ := a.(map[string]any)["value"].(map[string]any)
			if s, ok := v["stringValue"].(string); ok && len(s) >= 256 {
				v["stringValue"] = s + fmt.Sprintf(" #%d", k)
			}
		}
	}
	each := func(x any, fn func(map[string]any)) {
		list, _ := x.([]any)
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				fn(m)
			}
		}
	}
	each(req["resourceSpans"], func(rs map[string]any) {
		each(rs["scopeSpans"], func(ss map[string]any) {
			each(ss["spans"], func(sp map[string]any) {
				newID(sp)
				each(sp["links"], newID)
				own(sp["attributes"])
				each(sp["events"], func(e map[string]any) { own(e["attributes"]) })
			})
		})
	})
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		b.Fatal(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
