package traces

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"
)

// BenchmarkRedactLongValues redacts every string attribute of a trace that a real agent
// library sent (LangGraph.js with OpenInference: prompts, messages and their metadata as
// JSON text, 12.6 MB in 43,960 values), as the writer does each attribute of an imported
// span. It reports bytes a second through Redactor.Attr.
func BenchmarkRedactLongValues(b *testing.B) {
	f, err := os.Open("../analysis/testdata/libraries/langgraph-openinference/traces.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var vals [][2]string
	total := 0
	sc := bufio.NewScanner(gz)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct {
						Attributes []struct {
							Key   string
							Value struct{ StringValue *string }
						}
					}
				}
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			b.Fatal(err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					for _, kv := range sp.Attributes {
						if v := kv.Value.StringValue; v != nil {
							vals = append(vals, [2]string{kv.Key, *v})
							total += len(*v)
						}
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if total < 10<<20 {
		b.Fatalf("read %d bytes of values from the fixture; it holds more than 10 MB", total)
	}
	b.SetBytes(int64(total))
	for b.Loop() {
		r := NewRedactor(nil, nil, nil)
		for _, v := range vals {
			r.Attr(v[0], v[1])
		}
	}
}
