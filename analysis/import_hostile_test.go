//go:build duckdb_arrow

package analysis

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mayday-sim/mayday/sim/record"
)

// Hostile input: each file below is refused with ErrBadTraceInput and a message naming
// the file and what is wrong, leaving no run in the database, within bounded time and
// memory; or it is imported correctly.

// refused imports inputs, wants ErrBadTraceInput with every piece of want in its message
// and nothing stored, and returns the message.
func refused(t *testing.T, inputs []string, opts ImportOptions, want ...string) string {
	t.Helper()
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Import(context.Background(), db, inputs, opts)
	if !errors.Is(err, ErrBadTraceInput) {
		t.Fatalf("import %v: %v; want ErrBadTraceInput", inputs, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("import %v: %q does not say %q", inputs, err, w)
		}
	}
	if n := queryInt(t, db, "SELECT count(*) FROM runs"); n != 0 {
		t.Errorf("import %v: %d runs stored", inputs, n)
	}
	return err.Error()
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func intAttr(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func doubleAttr(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

func bytesAttr(k string, v []byte) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v}}}
}

// writeResource writes one request of one resource (its attributes res) holding spans.
func writeResource(t *testing.T, path string, res []*commonpb.KeyValue, spans ...*tracepb.Span) {
	t.Helper()
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: res}, ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// agentAndTool is a small valid trace: an agent span and a tool span under it.
func agentAndTool() []*tracepb.Span {
	return []*tracepb.Span{
		otlpSpan(1, 0, "invoke_agent triage", 0, time.Minute, nil, false),
		otlpSpan(2, 1, "execute_tool lookup", time.Second, 2*time.Second, map[string]string{"gen_ai.operation.name": "execute_tool"}, false),
	}
}

// Times outside the years a trace is recorded in, a span ending before it starts, and a
// run whose spans are further apart than --max-spread are refused naming the file and the
// span; a larger Spread lets the far span in.
func TestHostileTimes(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		name string
		edit func(*tracepb.Span)
		want []string
	}{
		{"epoch.pb", func(s *tracepb.Span) { s.StartTimeUnixNano = 1 }, []string{"epoch.pb", `"execute_tool lookup"`, "1970-01-01", "from 2000 to 2199"}},
		{"past-int64.pb", func(s *tracepb.Span) { s.StartTimeUnixNano = 1 << 63; s.EndTimeUnixNano = 1<<63 + 5 }, []string{"past-int64.pb", "past the year 2262"}},
		{"backwards.pb", func(s *tracepb.Span) { s.EndTimeUnixNano = s.StartTimeUnixNano - 1 }, []string{"backwards.pb", "before it starts"}},
		{"far.pb", func(s *tracepb.Span) {
			s.StartTimeUnixNano += uint64(40 * 24 * time.Hour)
			s.EndTimeUnixNano += uint64(40 * 24 * time.Hour)
		}, []string{"far.pb", "--max-spread", "split the files"}},
	}
	for _, c := range cases {
		spans := agentAndTool()
		c.edit(spans[1])
		p := filepath.Join(tmp, c.name)
		writeRequest(t, p, spans...)
		refused(t, []string{p}, ImportOptions{}, c.want...)
	}
	_, res := importInto(t, []string{filepath.Join(tmp, "far.pb")}, ImportOptions{Limits: ReadLimits{Spread: 60 * 24 * time.Hour}})
	if res.Spans != 2 {
		t.Errorf("with a 60-day spread: %d spans imported, want 2", res.Spans)
	}
}

// The spread counts across the files of a run, whichever comes first.
func TestHostileSpreadAcrossFiles(t *testing.T) {
	tmp := t.TempDir()
	late := agentAndTool()
	for _, s := range late {
		s.TraceId = bytes.Repeat([]byte{8}, 16)
		s.StartTimeUnixNano -= uint64(45 * 24 * time.Hour)
		s.EndTimeUnixNano -= uint64(45 * 24 * time.Hour)
	}
	writeRequest(t, filepath.Join(tmp, "a.pb"), agentAndTool()...)
	writeRequest(t, filepath.Join(tmp, "b.pb"), late...)
	refused(t, []string{tmp}, ImportOptions{}, "b.pb", "--max-spread")
}

// Counts that are not counts are refused naming the span and the attribute: int64's
// largest, negative, NaN and infinite token counts, an attempt past 2^53 as a string.
func TestHostileNumbers(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		name string
		attr *commonpb.KeyValue
	}{
		{"max.pb", intAttr("gen_ai.usage.input_tokens", math.MaxInt64)},
		{"negative.pb", intAttr("gen_ai.usage.output_tokens", -5)},
		{"nan.pb", doubleAttr("llm.token_count.prompt", math.NaN())},
		{"inf.pb", doubleAttr("gen_ai.usage.input_tokens", math.Inf(1))},
		{"text.pb", strAttr("attempt", "9223372036854775807")},
		{"past53.pb", intAttr("http.request.resend_count", 1<<53+1)},
		// a count inside a JSON object (Langfuse's usage_details)
		{"jsonmax.pb", strAttr("langfuse.observation.usage_details", `{"input": 9223372036854775807, "output": 3}`)},
		{"jsonneg.pb", strAttr("langfuse.observation.usage_details", `{"input": 3, "output": -1}`)},
		{"jsonbig.pb", strAttr("langfuse.observation.usage_details", `{"total": 1e300}`)},
		// a count inside an object inside a JSON object (Genkit's model output)
		{"jsonpath.pb", strAttr("genkit:output", `{"message": {}, "usage": {"inputTokens": -2}}`)},
	}
	for _, c := range cases {
		spans := agentAndTool()
		spans[1].Attributes = append(spans[1].Attributes, c.attr)
		p := filepath.Join(tmp, c.name)
		writeRequest(t, p, spans...)
		refused(t, []string{p}, ImportOptions{}, c.name, `"execute_tool lookup"`, c.attr.Key, "want a whole count from 0 to 2^53")
	}
	// the largest count taken is imported whole
	spans := agentAndTool()
	spans[0].Attributes = append(spans[0].Attributes, intAttr("gen_ai.usage.input_tokens", 1<<53))
	p := filepath.Join(tmp, "ok.pb")
	writeRequest(t, p, spans...)
	db, _ := importInto(t, []string{p}, ImportOptions{})
	if n := queryInt(t, db, "SELECT input_tokens FROM spans WHERE operation = 'invoke_agent'"); n != 1<<53 {
		t.Errorf("input_tokens %d, want 2^53", n)
	}
	// a Langfuse generation's tokens read from its usage_details; a field of no number, or a
	// value that is no JSON object, reads no count
	gen := func(id byte, usage string) *tracepb.Span {
		return mkSpan(1, id, 1, "gpt chat", float64(id), float64(id)+1, map[string]any{"langfuse.observation.type": "generation",
			"langfuse.observation.usage_details": usage})
	}
	p = filepath.Join(tmp, "langfuse.pb")
	writeRequest(t, p, mkSpan(1, 1, 0, "agent", 0, 10, map[string]any{"langfuse.observation.type": "agent"}),
		gen(2, `{"input": 120, "output": 7, "total": 127}`), gen(3, `{"input": "many", "total": 9}`), gen(4, `not json`))
	db, _ = importInto(t, []string{p}, ImportOptions{})
	got := queryInt(t, db, "SELECT sum(input_tokens) * 1000 + sum(output_tokens) FROM spans WHERE operation = 'plan'")
	if got != 129*1000+7 {
		t.Errorf("tokens read as %d, want 129 in (120 + the total 9 of a call that names no input) and 7 out", got)
	}
	// a Genkit model call's tokens read from the usage object of its output
	model := func(id byte, output string) *tracepb.Span {
		return mkSpan(1, id, 1, "openai/gpt-4.1", float64(id), float64(id)+1, map[string]any{"genkit:type": "action",
			"genkit:metadata:subtype": "model", "genkit:name": "openai/gpt-4.1", "genkit:output": output})
	}
	p = filepath.Join(tmp, "genkit.pb")
	writeRequest(t, p, mkSpan(1, 1, 0, "investigate", 0, 10, map[string]any{"genkit:type": "action", "genkit:metadata:subtype": "flow"}),
		model(2, `{"message": {"role": "model"}, "usage": {"inputTokens": 2014, "outputTokens": 159}}`), model(3, `{"usage": 5}`))
	db, _ = importInto(t, []string{p}, ImportOptions{})
	got = queryInt(t, db, "SELECT sum(input_tokens) * 1000 + sum(output_tokens) FROM spans WHERE operation = 'plan'")
	if got != 2014*1000+159 {
		t.Errorf("tokens read as %d, want 2014 in and 159 out (usage.inputTokens, usage.outputTokens)", got)
	}
}

// A value nested deep grows 2^depth when stored as text (each level quotes the one below):
// it is refused before it is rendered.
func TestHostileNestedValue(t *testing.T) {
	v := &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: `"\`}}
	for range 60 {
		v = &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{v}}}}
	}
	spans := agentAndTool()
	spans[1].Attributes = append(spans[1].Attributes, &commonpb.KeyValue{Key: "deep", Value: v})
	p := filepath.Join(t.TempDir(), "deep.pb")
	writeRequest(t, p, spans...)
	refused(t, []string{p}, ImportOptions{}, "deep.pb", "attribute \"deep\"", "--max-message")
}

// gzipZeros writes a gzip file of n MiB of zero bytes, generated as n gzip members of one
// MiB each (a gzip reader reads concatenated members as one stream), so a 4 GiB line costs
// 4 MB on disk and no time to make.
func gzipZeros(t *testing.T, path string, mib int) {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range mib {
		if _, err := f.Write(member.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A gzip of one 4 GiB line (zeros, no newline) is refused at the line limit, naming it,
// having read and allocated no more than the limit allows: the line buffer doubles as it
// grows, up to the limit, so all its sizes together stay under twice the limit; the 1 MiB
// read buffer, the gzip window and the database add a few MiB. Reading the line whole
// would allocate at least its 4 GiB.
func TestHostileLongLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bomb.jsonl.gz")
	gzipZeros(t, p, 4096)
	var msg string
	got := allocated(func() {
		msg = refused(t, []string{p}, ImportOptions{}, "bomb.jsonl.gz:1", "64 MiB", "--max-message")
	})
	if bound := uint64(2*DefaultMaxMessage + 16<<20); got > bound {
		t.Errorf("refusing the 4 GiB line allocated %d MiB, want at most %d MiB", got>>20, bound>>20)
	}
	t.Logf("%s (allocated %d MiB)", msg, got>>20)
}

// The same stream as a pretty-printed body (a .json whose first line is not whole JSON),
// as a protobuf file, and under a file and an input limit: each refused naming its limit.
func TestHostileSizes(t *testing.T) {
	tmp := t.TempDir()
	body := filepath.Join(tmp, "body.json.gz")
	f, _ := os.Create(body)
	zw := gzip.NewWriter(f)
	zw.Write([]byte("{\n"))
	zw.Write(make([]byte, 3<<20))
	zw.Close()
	f.Close()
	refused(t, []string{body}, ImportOptions{Limits: ReadLimits{Message: 1 << 20}}, "body.json.gz", "the request body is larger than 1 MiB (--max-message")

	// a length-delimited message declaring more than the limit, in a file larger than it
	pb := filepath.Join(tmp, "big.pb")
	big := append(binary.AppendUvarint(nil, 3<<20), make([]byte, 3<<20)...)
	os.WriteFile(pb, big, 0o644)
	refused(t, []string{pb}, ImportOptions{Limits: ReadLimits{Message: 1 << 20}}, "big.pb", "1 MiB (--max-message")

	one := filepath.Join(tmp, "one.pb")
	writeRequest(t, one, agentAndTool()...)
	st, _ := os.Stat(one)
	refused(t, []string{one}, ImportOptions{Limits: ReadLimits{File: st.Size() - 1}}, "one.pb", "--max-file")

	two := filepath.Join(tmp, "two.pb")
	spans := agentAndTool()
	for _, s := range spans {
		s.TraceId = bytes.Repeat([]byte{9}, 16)
	}
	writeRequest(t, two, spans...)
	refused(t, []string{one, two}, ImportOptions{Limits: ReadLimits{Total: st.Size() + 10}}, "two.pb", "--max-input")
	if _, res := importInto(t, []string{one, two}, ImportOptions{Limits: ReadLimits{Total: 3 * st.Size()}}); res.Spans != 4 {
		t.Errorf("under the limits: %d spans, want 4", res.Spans)
	}
}

// A named pipe named like a trace file in a folder is refused at once, not waited on.
func TestHostileFIFO(t *testing.T) {
	dir := t.TempDir()
	writeRequest(t, filepath.Join(dir, "a.pb"), agentAndTool()...)
	if err := syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan string, 1)
	go func() { done <- refused(t, []string{dir}, ImportOptions{}, "b.json", "a named pipe") }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		// nothing ever writes to the pipe: an import that opened it would wait for ever
		t.Fatal("the import waited on the named pipe")
	}
	// named on the command line too
	refused(t, []string{filepath.Join(dir, "b.json")}, ImportOptions{}, "b.json", "not a regular file")
	// and the reader itself refuses one put in place of a listed file
	rd := newTraceReader(ReadLimits{}, ConvAuto, nil)
	err := rd.read(filepath.Join(dir, "b.json"), func(*coltracepb.ExportTraceServiceRequest, string) error { return nil })
	if !errors.Is(err, ErrBadTraceInput) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("reading a named pipe: %v", err)
	}
}

// A link out of the folder is refused without reading what it points to; a link to a file
// inside the folder is read.
func TestHostileSymlinks(t *testing.T) {
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "secret.json")
	os.WriteFile(outside, []byte("root:x:0:0:SECRET-CONTENT\n"), 0o600)
	dir := filepath.Join(tmp, "traces")
	os.Mkdir(dir, 0o755)
	writeRequest(t, filepath.Join(dir, "a.pb"), agentAndTool()...)
	if err := os.Symlink(outside, filepath.Join(dir, "b.json")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	msg := refused(t, []string{dir}, ImportOptions{}, "b.json", "outside")
	if strings.Contains(msg, "SECRET") {
		t.Errorf("the error shows the linked file's content: %s", msg)
	}
	os.Remove(filepath.Join(dir, "b.json"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(filepath.Join(dir, "a.pb"), filepath.Join(dir, "sub", "c.pb"))
	if _, res := importInto(t, []string{dir}, ImportOptions{}); len(res.Files) != 2 || res.Spans != 4 {
		t.Errorf("a link inside the folder: files %v, %d spans read", res.Files, res.Spans)
	}
}

// A decoder's error quotes the input it stumbled on: the message keeps a short excerpt.
func TestHostileErrorExcerpt(t *testing.T) {
	secretText := strings.Repeat("SECRET", 100)
	line := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","kind":"` + secretText + `"}]}]}]}`
	p := filepath.Join(t.TempDir(), "enum.jsonl")
	os.WriteFile(p, []byte(line+"\n"), 0o644)
	msg := refused(t, []string{p}, ImportOptions{}, "enum.jsonl:1")
	if strings.Contains(msg, secretText) || len(msg) > 300 {
		t.Errorf("the error quotes the file at length (%d bytes): %s", len(msg), msg)
	}
}

// A key held as bytes is stored as its text, so it is redacted by its shape; bytes that
// are not text are stored as base64. A key in service.name or a tool name is redacted
// before it becomes the run's scenario, a tool, or the summary.
func TestHostileRedactsNames(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	spans := agentAndTool()
	spans[1].Attributes = append(spans[1].Attributes, strAttr("gen_ai.tool.name", "lookup "+key),
		bytesAttr("note", []byte(key)), bytesAttr("blob", []byte{0xff, 0x00, 0xfe}))
	p := filepath.Join(t.TempDir(), "keys.pb")
	writeResource(t, p, []*commonpb.KeyValue{strAttr("service.name", "svc-"+key)}, spans...)
	db, res := importInto(t, []string{p}, ImportOptions{})
	var scenario, tool, note, blob string
	err := db.SQL().QueryRow(`SELECT (SELECT scenario FROM runs), (SELECT tool FROM spans WHERE operation = 'execute_tool'),
		(SELECT value FROM span_attrs WHERE key = 'note'), (SELECT value FROM span_attrs WHERE key = 'blob')`).Scan(&scenario, &tool, &note, &blob)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]string{"runs.scenario": scenario, "spans.tool": tool, "the bytes attribute": note, "the imported run's scenario": res.Runs[0].Scenario} {
		if strings.Contains(v, key) || !strings.Contains(v, "redacted:hmac-sha256:") {
			t.Errorf("%s: %q, want the key redacted", what, v)
		}
	}
	if blob != "/wD+" {
		t.Errorf("bytes that are not text stored as %q, want their base64 /wD+", blob)
	}
}

// nativeRequest is a minimal mayday export: a run's resource and one invoke_agent span.
func nativeRequest(res, span []*commonpb.KeyValue) ([]*commonpb.KeyValue, *tracepb.Span) {
	r := append([]*commonpb.KeyValue{strAttr("mayday.run_id", "run-1"), strAttr("mayday.scenario", "triage"), intAttr("mayday.seed", 7)}, res...)
	s := &tracepb.Span{TraceId: bytes.Repeat([]byte{1}, 16), SpanId: []byte{0, 0, 0, 0, 0, 0, 0, 1}, Name: "invoke_agent triage",
		StartTimeUnixNano: uint64(record.Epoch), EndTimeUnixNano: uint64(record.Epoch + int64(time.Minute)),
		Attributes: append([]*commonpb.KeyValue{strAttr("mayday.operation", "invoke_agent"), strAttr("mayday.status", "ok"),
			intAttr("mayday.span_id", 1), intAttr("mayday.investigation_id", 1), intAttr("mayday.agent_id", 1)}, span...)}
	return r, s
}

// The mayday.* attributes of an export are checked as the flags and columns that set them:
// a run id that --run-id would refuse, a negative seed, a configuration that is not JSON,
// NaN compute, an unknown operation, an event row whose time is out of range, a span far
// from the export's time 0. A well-formed export is read back.
func TestHostileMaydayAttributes(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		name      string
		res, span []*commonpb.KeyValue
		want      string
	}{
		{"runid.pb", []*commonpb.KeyValue{strAttr("mayday.run_id", "x'; DROP TABLE runs; --")}, nil, "mayday.run_id"},
		{"dots.pb", []*commonpb.KeyValue{strAttr("mayday.run_id", "../../etc")}, nil, "mayday.run_id"},
		{"seed.pb", []*commonpb.KeyValue{intAttr("mayday.seed", -1)}, nil, "mayday.seed"},
		{"config.pb", []*commonpb.KeyValue{strAttr("mayday.config", "{not json")}, nil, "mayday.config"},
		{"status.pb", []*commonpb.KeyValue{strAttr("mayday.run.status", "done'")}, nil, "mayday.run.status"},
		{"compute.pb", nil, []*commonpb.KeyValue{doubleAttr("mayday.compute", math.NaN())}, "mayday.compute"},
		{"op.pb", nil, []*commonpb.KeyValue{strAttr("mayday.operation", "drop")}, "mayday.operation"},
		{"tokens.pb", nil, []*commonpb.KeyValue{intAttr("mayday.input_tokens", math.MaxInt64)}, "mayday.input_tokens"},
		{"opkey.pb", nil, []*commonpb.KeyValue{strAttr("mayday.op_key", "1/2")}, "mayday.op_key"},
		// a value its ENUM column does not hold (tables.sql) is refused, not left to fail the load
		{"class.pb", nil, []*commonpb.KeyValue{strAttr("mayday.failure_class", "flaky")}, "mayday.failure_class"},
	}
	for _, c := range cases {
		res, span := nativeRequest(nil, c.span)
		// a later attribute of the same key is the one read (resource attributes go into a map)
		res = append(res, c.res...)
		p := filepath.Join(tmp, c.name)
		writeResource(t, p, res, span)
		refused(t, []string{p}, ImportOptions{}, c.name, c.want)
	}
	// an investigation row whose arrival is in 1970
	res, span := nativeRequest(nil, nil)
	span.Events = []*tracepb.Span_Event{{Name: "mayday.investigation", Attributes: []*commonpb.KeyValue{
		intAttr("investigation_id", 1), intAttr("arrived_at", 5)}}}
	p := filepath.Join(tmp, "event.pb")
	writeResource(t, p, res, span)
	refused(t, []string{p}, ImportOptions{}, "event.pb", "arrived_at")
	// an execution row a year after the export's time 0, its span on time: the rows' times
	// count in the run's spread
	res, span = nativeRequest(nil, nil)
	span.Events = []*tracepb.Span_Event{{Name: "mayday.execution", Attributes: []*commonpb.KeyValue{
		intAttr("investigation_id", 1), intAttr("at", record.Epoch+int64(365*24*time.Hour))}}}
	p = filepath.Join(tmp, "rowlate.pb")
	writeResource(t, p, res, span)
	refused(t, []string{p}, ImportOptions{}, "rowlate.pb", "--max-spread", "mayday.execution", "at")
	// transition and execution rows whose state, action, decider or outcome their ENUM
	// column does not hold
	for _, row := range []struct{ event, key string }{
		{"mayday.transition", "from_state"}, {"mayday.transition", "to_state"}, {"mayday.transition", "action"},
		{"mayday.transition", "decided_by"}, {"mayday.transition", "failure_class"}, {"mayday.execution", "outcome"},
	} {
		res, span := nativeRequest(nil, nil)
		span.Events = []*tracepb.Span_Event{{Name: row.event, Attributes: []*commonpb.KeyValue{
			intAttr("investigation_id", 1), strAttr(row.key, "drop table")}}}
		p := filepath.Join(tmp, row.key+".pb")
		writeResource(t, p, res, span)
		refused(t, []string{p}, ImportOptions{}, row.key+".pb", row.key)
	}
	// a span a year after the export's time 0
	res, span = nativeRequest(nil, nil)
	span.StartTimeUnixNano += uint64(365 * 24 * time.Hour)
	span.EndTimeUnixNano += uint64(365 * 24 * time.Hour)
	p = filepath.Join(tmp, "late.pb")
	writeResource(t, p, res, span)
	refused(t, []string{p}, ImportOptions{}, "late.pb", "--max-spread")

	// an export of imported traces counts from its own time 0, as the views do
	later := uint64(record.Epoch) + uint64(365*24*time.Hour)
	res, span = nativeRequest([]*commonpb.KeyValue{strAttr("mayday.config", fmt.Sprintf(`{"import":{"time_zero_us":%d}}`, later/1000))}, nil)
	span.StartTimeUnixNano, span.EndTimeUnixNano = later, later+uint64(time.Minute)
	p = filepath.Join(tmp, "imported.pb")
	writeResource(t, p, res, span)
	importInto(t, []string{p}, ImportOptions{})

	res, span = nativeRequest(nil, nil)
	p = filepath.Join(tmp, "good.pb")
	writeResource(t, p, res, span)
	if _, r := importInto(t, []string{p}, ImportOptions{}); len(r.Runs) != 1 || r.Runs[0].RunID != "run-1" || !r.Runs[0].Native {
		t.Errorf("a well-formed export: %+v", r.Runs)
	}
}

// The checks hold for OTLP/JSON as for protobuf: a token count of int64's largest in a
// JSON line is refused naming the line.
func TestHostileJSONLine(t *testing.T) {
	spans := agentAndTool()
	spans[1].Attributes = append(spans[1].Attributes, intAttr("gen_ai.usage.input_tokens", math.MaxInt64))
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}}
	b, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = hexIDs(b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tokens.jsonl")
	os.WriteFile(p, append(b, '\n'), 0o644)
	refused(t, []string{p}, ImportOptions{}, "tokens.jsonl:1", "gen_ai.usage.input_tokens")
}

// A JSON line of AnyValues nested two million deep (56 MB, under the message limit) is
// refused, not a stack overflow: the fast decoder hands a value nested past maxFastDepth
// to the standard decoders, which bound their recursion.
func TestHostileDeepJSON(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat(`{"arrayValue":{"values":[`, n) + `{"stringValue":"x"}` + strings.Repeat(`]}}`, n)
	}
	line := func(v string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"x","attributes":[{"key":"k","value":` + v + `}]}]}]}]}`
	}
	if _, ok := fastOTLPJSON([]byte(line(nest(maxFastDepth)))); ok {
		t.Errorf("the fast decoder read a value nested %d deep", maxFastDepth)
	}
	if _, ok := fastOTLPJSON([]byte(line(nest(maxFastDepth - 2)))); !ok {
		t.Errorf("the fast decoder gave up on a value nested %d deep", maxFastDepth-2)
	}
	p := filepath.Join(t.TempDir(), "deep.jsonl")
	os.WriteFile(p, []byte(line(nest(2_000_000))+"\n"), 0o644)
	refused(t, []string{p}, ImportOptions{}, "deep.jsonl:1", "depth")
}

// A JSON object that sends a field twice (under one of its names, or both) is refused as
// protojson refuses it, naming the file, the line and the field: not read with the last
// value winning.
func TestHostileDuplicateField(t *testing.T) {
	tmp := t.TempDir()
	span := `{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","startTimeUnixNano":"1773905529327000000","endTimeUnixNano":"1773905529427000000"`
	for name, c := range map[string]struct{ line, field string }{
		"name.jsonl":     {span + `,"name":"a","name":"b"}`, `duplicate field "name"`},
		"trace-id.jsonl": {span + `,"name":"a","trace_id":"0102030405060708090a0b0c0d0e0f11"}`, `duplicate field "trace_id"`},
		"key.jsonl":      {span + `,"name":"a","attributes":[{"key":"k","value":{"stringValue":"v"},"key":"j"}]}`, `duplicate field "key"`},
	} {
		p := filepath.Join(tmp, name)
		req := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"spans":[` + c.line + `]}]}]}`
		if err := os.WriteFile(p, []byte(req+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, []string{p}, ImportOptions{}, name+":1", c.field)
	}
}

// A trace nested as deep as it is long (each span the parent of the next: tool calls, with
// an agent every 10,000 spans, each under the tool call above it) imports, with every agent
// a sub-agent of the one above. Each rule that walks up the tree (ancestry, wrapper agents)
// remembers what it found, so each span is walked once: walked from every span up to its
// agent, these 60,000 spans would take 3·10⁸ steps.
func TestHostileDeepNesting(t *testing.T) {
	const n, every = 60000, 10000
	t0 := uint64(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	trace := bytes.Repeat([]byte{9}, 16)
	spans := make([]*tracepb.Span, n)
	for i := range spans {
		id := make([]byte, 8)
		binary.BigEndian.PutUint64(id, uint64(i+1))
		s := &tracepb.Span{TraceId: trace, SpanId: id, Name: "execute_tool Bash",
			StartTimeUnixNano: t0 + uint64(i), EndTimeUnixNano: t0 + uint64(2*n-i),
			Attributes: []*commonpb.KeyValue{strAttr("gen_ai.operation.name", "execute_tool"), strAttr("gen_ai.tool.name", "Bash")}}
		if i%every == 0 {
			s.Name, s.Attributes = "invoke_agent a", []*commonpb.KeyValue{strAttr("gen_ai.operation.name", "invoke_agent")}
		}
		if i > 0 {
			s.ParentSpanId = spans[i-1].SpanId
		}
		spans[i] = s
	}
	p := filepath.Join(t.TempDir(), "deep.pb")
	writeRequest(t, p, spans...)
	db, _ := importInto(t, []string{p}, ImportOptions{})
	if got := queryInt(t, db, "SELECT count(*) FROM investigations WHERE depth = (investigation_id - 1)"); got != n/every {
		t.Errorf("%d investigations each one deeper than the last, want %d (an agent every %d spans, each under the tool call above it)", got, n/every, every)
	}
}

// A file of a resource per service.name makes a run per service, each stored and measured
// on its own: past --max-runs the input is refused, naming the file and the cap, before any
// run is stored; at the cap it imports.
func TestHostileManyServices(t *testing.T) {
	const n = 12
	reqs := &coltracepb.ExportTraceServiceRequest{}
	for i := range n {
		reqs.ResourceSpans = append(reqs.ResourceSpans, &tracepb.ResourceSpans{
			Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", fmt.Sprintf("svc-%d", i))}},
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: agentAndTool()}}})
	}
	b, err := proto.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "services.pb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	refused(t, []string{p}, ImportOptions{Limits: ReadLimits{Runs: n - 1}}, "services.pb", fmt.Sprintf("more than %d runs", n-1), "--max-runs", "--service")
	db, _ := importInto(t, []string{p}, ImportOptions{Limits: ReadLimits{Runs: n}})
	if got := queryInt(t, db, "SELECT count(*) FROM runs"); got != n {
		t.Errorf("%d runs at the cap, want %d", got, n)
	}
}
