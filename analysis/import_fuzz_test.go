//go:build duckdb_arrow

package analysis

import (
	"os"
	"strconv"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mayday-sim/mayday/traces"
)

// FuzzImportMapping feeds arbitrary OTLP/JSON request bodies, and the same bytes as an OTLP
// protobuf body, through the import's decoding, span grouping and record building (all of
// it but the database): whatever the bytes, it refuses them with an error or builds
// records, and never panics or hangs. The seeds are the small fixtures' requests.
//
//	go test -tags duckdb_arrow -run '^$' -fuzz FuzzImportMapping ./analysis/
func FuzzImportMapping(f *testing.F) {
	// Small requests, so that the fuzzer mutates structure rather than bulk: an agent whose
	// tool fails, is called again under another step and succeeds; a span whose parent never
	// came; then the small fixture in both encodings.
	span := func(id, parent, name, attrs, status string, start int) string {
		return `{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"` + id + `","parentSpanId":"` + parent + `","name":"` + name +
			`","startTimeUnixNano":"` + strconv.Itoa(1772000000000000000+start*1e9) + `","endTimeUnixNano":"` + strconv.Itoa(1772000000000000000+start*1e9+5e8) +
			`","attributes":[` + attrs + `],"status":{"code":` + status + `,"message":"503 Service Unavailable"}}`
	}
	attr := func(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}` }
	tool := attr("gen_ai.operation.name", "execute_tool") + "," + attr("gen_ai.tool.name", "Bash")
	req := func(spans ...string) []byte {
		return []byte(`{"resourceSpans":[{"resource":{"attributes":[` + attr("service.name", "fuzz") + `]},"scopeSpans":[{"spans":[` +
			strings.Join(spans, ",") + `]}]}]}`)
	}
	f.Add(req(span("0000000000000001", "", "invoke_agent a", attr("gen_ai.operation.name", "invoke_agent"), "0", 0),
		span("0000000000000002", "0000000000000001", "step 1", attr("gen_ai.operation.name", "agent_step"), "0", 1),
		span("0000000000000003", "0000000000000002", "execute_tool Bash", tool, "2", 1),
		span("0000000000000004", "0000000000000001", "step 2", attr("gen_ai.operation.name", "agent_step"), "0", 3),
		span("0000000000000005", "0000000000000004", "execute_tool Bash", tool, "1", 3)))
	f.Add(req(span("0000000000000007", "00000000000000ff", "execute_tool Bash", tool, "2", 2)))
	for _, name := range []string{"testdata/otel/genai-tiny.json", "testdata/otel/genai-tiny.pb"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var reqs []*coltracepb.ExportTraceServiceRequest
		if req, err := new(requestMemory).decodeJSON(body); err == nil {
			reqs = append(reqs, req)
		}
		var req coltracepb.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) == nil {
			reqs = append(reqs, &req)
		}
		for _, r := range reqs {
			set := newSpanSet(ConvAuto, "fuzz", "")
			if set.add(r, "fuzz") != nil || set.spans == 0 {
				continue
			}
			if set.nameRuns(traces.NewRedactor(nil, nil, nil)) != nil {
				continue
			}
			for _, run := range set.runs {
				if !run.native { // mayday's own export is checked by import_check before it loads
					buildGeneric(run, DefaultRetryWindow, &importStats{})
				}
			}
		}
	})
}
