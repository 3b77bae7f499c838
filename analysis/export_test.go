//go:build duckdb_arrow

package analysis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

const handSecret = "sk-live-0123456789abcdef"

// handRun is a run built by hand: two root investigations (traces 1 and 2), a subagent (3)
// of root 1, a failed and a retried tool attempt, links inside a trace and across traces,
// and a secret tool argument.
func handRun(t *testing.T, db *DB, runID string) {
	t.Helper()
	ms := int64(1_000_000)
	key := record.OpKey{Investigation: 1, Step: 0, Revision: 0}
	arg := []record.Attr{{Key: "arg.api_key", Value: handSecret}, {Key: "arg.query", Value: "momentum"}}
	var c record.Collector
	spans := []record.Span{
		{TraceID: 1, SpanID: 1, InvestigationID: 1, AgentID: 1, Operation: record.OpInvokeAgent, Model: "m-large",
			Start: 0, End: 90 * ms, Status: record.StatusOK, InputTokens: 300, OutputTokens: 100, Compute: 2.5},
		{TraceID: 1, SpanID: 2, ParentSpanID: 1, InvestigationID: 1, AgentID: 1, Operation: record.OpPlan,
			Start: 0, End: 0, Status: record.StatusOK, OutputRef: "cfg/1", Attrs: []record.Attr{{Key: "kind", Value: "config_change"}}},
		{TraceID: 1, SpanID: 3, ParentSpanID: 1, InvestigationID: 1, AgentID: 1, Operation: record.OpExecuteTool,
			Tool: "search", ToolVersion: "v2", HasKey: true, OpKey: key, Attempt: 1, Start: 1 * ms, End: 31 * ms,
			QueueWait: 5 * ms, Status: record.StatusTimeout, FailureClass: "uncertain_completion", FaultID: "lost",
			InputRef: "cfg/1", CausedBy: []uint64{2}, Attrs: arg},
		{TraceID: 1, SpanID: 4, ParentSpanID: 1, InvestigationID: 1, AgentID: 1, Operation: record.OpExecuteTool,
			Tool: "search", ToolVersion: "v2", HasKey: true, OpKey: key, Attempt: 2, Start: 40 * ms, End: 50 * ms,
			Status: record.StatusOK, InputRef: "cfg/1", OutputRef: "result/1/0/0", CausedBy: []uint64{2}, Attrs: arg},
		{TraceID: 1, SpanID: 5, ParentSpanID: 1, InvestigationID: 3, AgentID: 3, Operation: record.OpInvokeAgent, Model: "m-large",
			Start: 51 * ms, End: 80 * ms, Status: record.StatusOK},
		{TraceID: 1, SpanID: 6, ParentSpanID: 5, InvestigationID: 3, AgentID: 3, Operation: record.OpValidate,
			HasKey: true, OpKey: key, Attempt: 2, Start: 60 * ms, End: 60 * ms, Status: record.StatusOK, CausedBy: []uint64{4}},
		{TraceID: 2, SpanID: 7, InvestigationID: 2, AgentID: 2, Operation: record.OpInvokeAgent, Model: "m-large",
			Start: 10 * ms, End: 20 * ms, Status: record.StatusError},
		{TraceID: 2, SpanID: 8, ParentSpanID: 7, InvestigationID: 2, AgentID: 2, Operation: record.OpPlan, Model: "m-large",
			Start: 10 * ms, End: 12 * ms, Status: record.StatusOK, InputTokens: 30, OutputTokens: 10, CausedBy: []uint64{2, 4}},
	}
	for i := range spans {
		c.Span(&spans[i])
	}
	sc := scenarios.Scenario{Name: "hand", Tools: []scenarios.Tool{{Name: "search", Idempotency: scenarios.Keyed,
		Arguments: []scenarios.Argument{{Key: "api_key", Value: handSecret}}}}}
	cfg, err := json.Marshal(&sc)
	if err != nil {
		t.Fatal(err)
	}
	run := traces.Run{RunID: runID, Scenario: "hand", Seed: 7, Config: string(cfg), ConfigHash: "c0ffee", Version: "test", Status: traces.StatusComplete}
	l, err := db.Load(context.Background(), runID, traces.ScenarioOptions(&sc))
	if err != nil {
		t.Fatal(err)
	}
	c.Replay(l)
	if err := l.Finish(run); err != nil {
		t.Fatal(err)
	}
}

// wantID is the documented id derivation, computed here independently of the exporter.
func wantID(kind, runID string, id int64, n int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("mayday/%s/%s/%d", kind, runID, id)))
	return hex.EncodeToString(h[:n])
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = fmt.Sprint(v.IntValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = fmt.Sprint(v.DoubleValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = fmt.Sprint(v.BoolValue)
		default:
			m[kv.Key] = fmt.Sprint(kv.Value)
		}
	}
	return m
}

func TestExportOTLPHandBuiltRun(t *testing.T) {
	db := openTestDB(t)
	handRun(t, db, "hand-s7")
	out := filepath.Join(t.TempDir(), "otlp")
	m, err := Export(context.Background(), db, out, ExportOptions{Format: FormatOTLP, ChunkSpans: 3, Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	// Trace 1 has 6 spans, over the chunk of 3, so the file ends after it: 2 files, whole traces.
	if len(m.Files) != 2 || m.Files[0].Rows != 6 || m.Files[1].Rows != 2 {
		t.Fatalf("files: %+v, want 2 files of 6 and 2 spans", m.Files)
	}
	idRE := regexp.MustCompile(`"(traceId|spanId|parentSpanId)":\s*"([^"]*)"`)
	spans := map[string]*tracepb.Span{} // by hex span id
	traceOfFile := map[string]int{}
	for _, f := range m.Files {
		raw, err := os.ReadFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), handSecret) {
			t.Errorf("%s holds the secret in clear", f.Path)
		}
		for _, g := range idRE.FindAllStringSubmatch(string(raw), -1) {
			want := 16
			if g[1] == "traceId" {
				want = 32
			}
			if _, err := hex.DecodeString(g[2]); err != nil || len(g[2]) != want {
				t.Errorf("%s %q: want %d hex digits", g[1], g[2], want)
			}
		}
		req, err := ReadOTLP(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if len(req.ResourceSpans) != 1 {
			t.Fatalf("%s: %d resources, want 1", f.Path, len(req.ResourceSpans))
		}
		res := attrMap(req.ResourceSpans[0].Resource.Attributes)
		for k, v := range map[string]string{"service.name": "mayday", "mayday.scenario": "hand", "mayday.seed": "7", "mayday.run_id": "hand-s7"} {
			if res[k] != v {
				t.Errorf("resource %s = %q, want %q", k, res[k], v)
			}
		}
		for _, s := range req.ResourceSpans[0].ScopeSpans[0].Spans {
			spans[hex.EncodeToString(s.SpanId)] = s
			traceOfFile[hex.EncodeToString(s.TraceId)+"/"+f.Path]++
		}
	}
	if len(spans) != 8 {
		t.Fatalf("%d distinct spans read back, want 8", len(spans))
	}
	if len(traceOfFile) != 2 {
		t.Errorf("traces split over files: %v", traceOfFile)
	}
	checkHandSpans(t, spans)
}

// checkHandSpans checks ids, parents, links, status and attributes against handRun.
func checkHandSpans(t *testing.T, spans map[string]*tracepb.Span) {
	t.Helper()
	sp := func(id int64) string { return wantID("span", "hand-s7", id, 8) }
	tr := func(root int64) string { return wantID("trace", "hand-s7", root, 16) }
	type want struct {
		trace  int64
		parent int64   // 0 = none
		links  []int64 // caused_by
		linkTr []int64 // their traces
		code   tracepb.Status_StatusCode
		attrs  map[string]string
		absent []string
	}
	wants := map[int64]want{
		1: {trace: 1, code: tracepb.Status_STATUS_CODE_OK, attrs: map[string]string{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "1", "gen_ai.agent.name": "hand",
			"gen_ai.request.model": "m-large", "gen_ai.usage.input_tokens": "300", "gen_ai.usage.output_tokens": "100",
			"mayday.compute": "2.5"}, absent: []string{"error.type", "gen_ai.tool.name", "mayday.attempt"}},
		2: {trace: 1, parent: 1, code: tracepb.Status_STATUS_CODE_OK, attrs: map[string]string{
			"mayday.operation": "plan", "mayday.attr.kind": "config_change", "mayday.output_ref": "cfg/1"},
			absent: []string{"gen_ai.operation.name", "gen_ai.provider.name"}},
		3: {trace: 1, parent: 1, links: []int64{2}, linkTr: []int64{1}, code: tracepb.Status_STATUS_CODE_ERROR, attrs: map[string]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "error.type": "uncertain_completion",
			"mayday.failure_class": "uncertain_completion", "mayday.attempt": "1", "mayday.op_key": "1/0/0",
			"mayday.idempotency": "keyed", "mayday.fault_id": "lost", "mayday.status": "timeout", "mayday.queue_wait": "0.005",
			"mayday.tool_version": "v2", "mayday.attr.arg.query": "momentum"}},
		4: {trace: 1, parent: 1, links: []int64{2}, linkTr: []int64{1}, code: tracepb.Status_STATUS_CODE_OK, attrs: map[string]string{
			"gen_ai.tool.name": "search", "mayday.attempt": "2", "mayday.op_key": "1/0/0"}, absent: []string{"error.type", "mayday.fault_id"}},
		5: {trace: 1, parent: 1, code: tracepb.Status_STATUS_CODE_OK, attrs: map[string]string{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "3", "mayday.investigation_id": "3"}},
		6: {trace: 1, parent: 5, links: []int64{4}, linkTr: []int64{1}, code: tracepb.Status_STATUS_CODE_OK, attrs: map[string]string{
			"mayday.operation": "validate", "mayday.attempt": "2"}, absent: []string{"gen_ai.operation.name", "gen_ai.agent.id"}},
		7: {trace: 2, code: tracepb.Status_STATUS_CODE_ERROR, attrs: map[string]string{"error.type": "error", "gen_ai.agent.id": "2"}},
		8: {trace: 2, parent: 7, links: []int64{2, 4}, linkTr: []int64{1, 1}, code: tracepb.Status_STATUS_CODE_OK, attrs: map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": GenAIProvider, "mayday.operation": "plan", "gen_ai.request.model": "m-large", "gen_ai.usage.input_tokens": "30", "gen_ai.usage.output_tokens": "10"}},
	}
	for id, w := range wants {
		s := spans[sp(id)]
		if s == nil {
			t.Errorf("span %d (%s) not exported", id, sp(id))
			continue
		}
		if got := hex.EncodeToString(s.TraceId); got != tr(w.trace) {
			t.Errorf("span %d: trace %s, want %s (root %d)", id, got, tr(w.trace), w.trace)
		}
		var wantParent string
		if w.parent != 0 {
			wantParent = sp(w.parent)
			if spans[wantParent] == nil {
				t.Errorf("span %d: parent %d not among the exported spans", id, w.parent)
			}
		}
		if got := hex.EncodeToString(s.ParentSpanId); got != wantParent {
			t.Errorf("span %d: parentSpanId %q, want %q", id, got, wantParent)
		}
		if len(s.Links) != len(w.links) {
			t.Errorf("span %d: %d links, want %d", id, len(s.Links), len(w.links))
		}
		for i := range min(len(s.Links), len(w.links)) {
			l := s.Links[i]
			if hex.EncodeToString(l.SpanId) != sp(w.links[i]) || hex.EncodeToString(l.TraceId) != tr(w.linkTr[i]) {
				t.Errorf("span %d link %d: %x/%x, want span %d of trace %d", id, i, l.TraceId, l.SpanId, w.links[i], w.linkTr[i])
			}
			if attrMap(l.Attributes)["mayday.link"] != "caused_by" {
				t.Errorf("span %d link %d: no mayday.link=caused_by", id, i)
			}
		}
		if s.Status.GetCode() != w.code {
			t.Errorf("span %d: status %v, want %v", id, s.Status.GetCode(), w.code)
		}
		got := attrMap(s.Attributes)
		for k, v := range w.attrs {
			if got[k] != v {
				t.Errorf("span %d: %s = %q, want %q", id, k, got[k], v)
			}
		}
		for _, k := range w.absent {
			if _, ok := got[k]; ok {
				t.Errorf("span %d: has %s = %q, want none", id, k, got[k])
			}
		}
	}
	if spans[sp(3)] == nil {
		return
	}
	// The secret argument stays redacted, as in the database.
	if v := attrMap(spans[sp(3)].Attributes)["mayday.attr.arg.api_key"]; !strings.HasPrefix(v, "redacted:hmac-sha256:") {
		t.Errorf("arg.api_key exported as %q, want the redacted value", v)
	}
	if s := spans[sp(3)]; s.StartTimeUnixNano != uint64(record.Epoch+1_000_000) || s.Kind != tracepb.Span_SPAN_KIND_INTERNAL || s.Name != "execute_tool search" {
		t.Errorf("span 3: start %d kind %v name %q", s.StartTimeUnixNano, s.Kind, s.Name)
	}
	if s := spans[sp(8)]; s != nil && s.Name != "chat m-large" {
		t.Errorf("span 8, a model turn: name %q, want %q", s.Name, "chat m-large")
	}
}

// A file holds whole traces and no more than --chunk-spans spans, unless one trace alone is
// larger (trace 1 has 6 spans, trace 2 has 2).
func TestExportOTLPChunks(t *testing.T) {
	db := openTestDB(t)
	handRun(t, db, "hand-s7")
	for _, c := range []struct {
		chunk int
		want  []int64
	}{{1, []int64{6, 2}}, {6, []int64{6, 2}}, {7, []int64{6, 2}}, {8, []int64{8}}, {100, []int64{8}}} {
		m, err := Export(context.Background(), db, filepath.Join(t.TempDir(), "otlp"), ExportOptions{Format: FormatOTLP, ChunkSpans: c.chunk})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, f := range m.Files {
			got = append(got, f.Rows)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("--chunk-spans %d: files of %v spans, want %v", c.chunk, got, c.want)
		}
	}
}

func TestExportFolderRules(t *testing.T) {
	db := openTestDB(t)
	handRun(t, db, "hand-s7")
	dir := t.TempDir()
	out := filepath.Join(dir, "x")
	ctx := context.Background()
	opts := ExportOptions{Format: FormatParquet}
	if _, err := Export(ctx, db, out, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, db, out, opts); !errors.Is(err, ErrExists) {
		t.Errorf("second export without --force: %v, want ErrExists", err)
	}
	opts.Force = true
	opts.Format = FormatOTLP
	if _, err := Export(ctx, db, out, opts); err != nil {
		t.Errorf("forced export over a previous export: %v", err)
	}
	if m, err := ReadManifest(out); err != nil || m.Format != FormatOTLP {
		t.Errorf("after the forced export: manifest %+v, %v; want the otlp one", m, err)
	}
	other := filepath.Join(dir, "notes")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "keep.txt"), []byte("mine"), 0o644)
	if _, err := Export(ctx, db, other, opts); !errors.Is(err, ErrNotExport) {
		t.Errorf("forced export over a folder that is not an export: %v, want ErrNotExport", err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "keep.txt")); string(b) != "mine" {
		t.Error("the folder that is not an export was touched")
	}
	if _, err := Export(ctx, db, filepath.Join(dir, "y"), ExportOptions{Format: "csv"}); err == nil {
		t.Error("--format csv accepted")
	}
	assertOnly(t, dir, "notes", "x")
}

// An export cancelled after its first file (Ctrl-C) leaves nothing: no folder, no staging.
func TestExportInterruptedLeavesNothing(t *testing.T) {
	db := openTestDB(t)
	handRun(t, db, "hand-s7")
	for _, format := range []string{FormatOTLP, FormatParquet} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		files := 0
		exportFileWritten = func(string) { files++; cancel() }
		_, err := Export(ctx, db, filepath.Join(dir, "out"), ExportOptions{Format: format, ChunkSpans: 1})
		exportFileWritten = nil
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled export returned %v, want context.Canceled", format, err)
		}
		if files != 1 {
			t.Errorf("%s: %d files written before stopping, want 1", format, files)
		}
		assertOnly(t, dir)
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}
