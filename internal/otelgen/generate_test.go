// Package otelgen makes the OpenTelemetry fixtures of analysis/testdata/otel with the
// OpenTelemetry Go SDK and its OTLP/HTTP exporter: the fleets of fleet_test.go are planned
// from known parameters, emitted as real SDK spans, and what the exporter sends to a local
// HTTP server is stored as it arrived. Run
//
//	go test ./internal/otelgen -update
//
// to write the fixtures again; without -update the test makes them in memory and checks
// that the stored ones are byte for byte what the SDK sends now.
package otelgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

var update = flag.Bool("update", false, "write the fixtures of analysis/testdata/otel")

const outDir = "../../analysis/testdata/otel"

// capture is an OTLP/HTTP endpoint that keeps every request body it is sent, in order.
type capture struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Encoding") != "" {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
	w.WriteHeader(http.StatusOK) // an empty body is an empty ExportTraceServiceResponse
}

// ids hands out trace and span ids from a counter, so the fixtures are reproducible.
type ids struct {
	mu   sync.Mutex
	seed uint64
	n    uint64
}

func (g *ids) next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return g.seed<<32 | g.n
}

func (g *ids) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var t trace.TraceID
	binary.BigEndian.PutUint64(t[:8], g.seed)
	binary.BigEndian.PutUint64(t[8:], g.next())
	return t, g.NewSpanID(context.Background(), t)
}

func (g *ids) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var s trace.SpanID
	binary.BigEndian.PutUint64(s[:], g.next())
	return s
}

// emit sends the planned fleet through the SDK and its OTLP/HTTP exporter with the given
// encoding and returns the request bodies the exporter sent.
func emit(t *testing.T, f *Fleet, roots []*Planned, enc otlptracehttp.Encoding, batch int) [][]byte {
	t.Helper()
	c := &capture{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"),
		otlptracehttp.WithEncoding(enc), otlptracehttp.WithCompression(otlptracehttp.NoCompression),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", f.Name),
		attribute.String("deployment.environment.name", "fixture"))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(&ids{seed: f.Seed}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(batch), sdktrace.WithMaxQueueSize(batch),
			sdktrace.WithBatchTimeout(time.Hour), sdktrace.WithBlocking()))
	tracer := tp.Tracer("mayday.fixtures/"+f.Conventions, trace.WithInstrumentationVersion("1.0.0"))
	start, err := time.Parse(time.RFC3339, f.Start)
	if err != nil {
		t.Fatal(err)
	}
	e := &emitter{f: f, tracer: tracer, t0: start}
	for _, r := range roots {
		e.agent(ctx, r)
	}
	// The batcher sends a request each time batch spans have ended (its timer is an hour,
	// the queue blocks instead of dropping), so each request holds the next batch spans in
	// the order they ended, whatever the exporter goroutine's timing; Shutdown sends the rest.
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return c.bodies
}

type emitter struct {
	f      *Fleet
	tracer trace.Tracer
	t0     time.Time
}

func (e *emitter) at(d time.Duration) time.Time { return e.t0.Add(d) }

func (e *emitter) agent(ctx context.Context, a *Planned) {
	var attrs []attribute.KeyValue
	name := "research-agent"
	if a.Subagent {
		name = "research-subagent"
	}
	if e.f.Conventions == "genai" {
		attrs = []attribute.KeyValue{attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.provider.name", "openai"), attribute.String("gen_ai.agent.name", name),
			attribute.String("gen_ai.agent.id", "agent-"+a.Agent), attribute.String("gen_ai.conversation.id", "conv-"+a.Agent)}
		name = "invoke_agent " + name
	} else {
		attrs = []attribute.KeyValue{attribute.String("openinference.span.kind", "AGENT"),
			attribute.String("session.id", "session-"+a.Agent), attribute.String("agent.name", name)}
	}
	ctx, span := e.tracer.Start(ctx, name, trace.WithTimestamp(e.at(a.Start)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	for _, c := range a.Children {
		switch c.Kind {
		case KindAgent:
			e.agent(ctx, c)
		case KindChat:
			e.chat(ctx, c)
		case KindTool:
			e.tool(ctx, c)
		case KindHuman:
			e.human(ctx, c)
		}
	}
	if a.Terminated {
		e.fail(span, a.ErrorType, "the agent gave up: a tool call spent every attempt", a.End)
	}
	span.End(trace.WithTimestamp(e.at(a.End)))
}

func (e *emitter) chat(ctx context.Context, c *Planned) {
	m := e.f.Model
	var name string
	var attrs []attribute.KeyValue
	if e.f.Conventions == "genai" {
		name = "chat " + m.Name
		attrs = []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", "openai"), attribute.String("gen_ai.request.model", m.Name),
			attribute.String("gen_ai.response.model", m.Name),
			attribute.Int64("gen_ai.usage.input_tokens", c.InTokens), attribute.Int64("gen_ai.usage.output_tokens", c.OutTokens)}
	} else {
		name = "ChatCompletion"
		attrs = []attribute.KeyValue{attribute.String("openinference.span.kind", "LLM"),
			attribute.String("llm.model_name", m.Name), attribute.String("llm.provider", "anthropic"),
			attribute.Int64("llm.token_count.prompt", c.InTokens), attribute.Int64("llm.token_count.completion", c.OutTokens),
			attribute.Int64("llm.token_count.total", c.InTokens+c.OutTokens)}
	}
	_, span := e.tracer.Start(ctx, name, trace.WithTimestamp(e.at(c.Start)),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(e.at(c.End)))
}

func (e *emitter) tool(ctx context.Context, c *Planned) {
	var name string
	var attrs []attribute.KeyValue
	if e.f.Conventions == "genai" {
		name = "execute_tool " + c.Tool
		attrs = []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", c.Tool), attribute.String("gen_ai.tool.type", "function")}
		if e.f.ToolCallIDs {
			attrs = append(attrs, attribute.String("gen_ai.tool.call.id", "call_"+c.CallID))
		}
	} else {
		name = c.Tool
		attrs = []attribute.KeyValue{attribute.String("openinference.span.kind", "TOOL"),
			attribute.String("tool.name", c.Tool)}
	}
	_, span := e.tracer.Start(ctx, name, trace.WithTimestamp(e.at(c.Start)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if c.ErrorType != "" {
		msg := c.Tool + " failed"
		if c.Timeout {
			msg = c.Tool + " timed out after " + strconv.FormatFloat((c.End-c.Start).Seconds(), 'f', -1, 64) + "s"
		}
		e.fail(span, c.ErrorType, msg, c.End)
	}
	span.End(trace.WithTimestamp(e.at(c.End)))
}

func (e *emitter) human(ctx context.Context, c *Planned) {
	attrs := []attribute.KeyValue{attribute.String("review.decision", c.ErrorType)}
	if e.f.Conventions == "openinference" {
		attrs = append(attrs, attribute.String("openinference.span.kind", "CHAIN"))
	}
	_, span := e.tracer.Start(ctx, "human_review", trace.WithTimestamp(e.at(c.Start)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(e.at(c.End)))
}

// fail marks a span failed the way each convention does: GenAI sets error.type and an
// error status; OpenInference records an exception event and an error status.
func (e *emitter) fail(span trace.Span, errType, msg string, at time.Duration) {
	if e.f.Conventions == "genai" {
		span.SetAttributes(attribute.String("error.type", errType))
	} else {
		span.AddEvent("exception", trace.WithTimestamp(e.at(at)), trace.WithAttributes(
			attribute.String("exception.type", errType), attribute.String("exception.message", msg)))
	}
	span.SetStatus(codes.Error, msg)
}

// lengthDelimited joins protobuf messages, each after its size as a varint.
func lengthDelimited(bodies [][]byte) []byte {
	var b []byte
	for _, m := range bodies {
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
	}
	return b
}

// jsonLines writes each OTLP/JSON body on one line: the shape of the OpenTelemetry
// Collector's file exporter (one ExportTraceServiceRequest, i.e. TracesData, per line).
func jsonLines(t *testing.T, bodies [][]byte) []byte {
	var out bytes.Buffer
	for _, b := range bodies {
		if err := json.Compact(&out, b); err != nil {
			t.Fatal(err)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// Realized is what a fleet's draw produced, beside its parameters.
type Realized struct {
	Roots          int `json:"roots"`
	Subagents      int `json:"subagents"`
	ToolAttempts   int `json:"tool_attempts"`
	FailedAttempts int `json:"failed_attempts"`
	Spans          int `json:"spans"`
}

func realized(roots []*Planned) Realized {
	var r Realized
	var walk func(*Planned)
	walk = func(p *Planned) {
		r.Spans++
		switch p.Kind {
		case KindAgent:
			if p.Subagent {
				r.Subagents++
			} else {
				r.Roots++
			}
			for _, c := range p.Children {
				walk(c)
			}
		case KindTool:
			r.ToolAttempts++
			if p.ErrorType != "" {
				r.FailedAttempts++
			}
		}
	}
	for _, p := range roots {
		walk(p)
	}
	return r
}

func TestFixtures(t *testing.T) {
	files := map[string][]byte{}
	type entry struct {
		Fleet    Fleet    `json:"fleet"`
		Files    []string `json:"files"`
		Realized Realized `json:"realized"`
	}
	var params []entry

	g := Plan(&GenAIFleet)
	files["genai-fleet.pb"] = lengthDelimited(emit(t, &GenAIFleet, g, otlptracehttp.EncodingProtobuf, 2048))
	params = append(params, entry{GenAIFleet, []string{"genai-fleet.pb"}, realized(g)})

	o := Plan(&OpenInferenceFleet)
	files["openinference-fleet.jsonl"] = jsonLines(t, emit(t, &OpenInferenceFleet, o, otlptracehttp.EncodingJSON, 256))
	params = append(params, entry{OpenInferenceFleet, []string{"openinference-fleet.jsonl"}, realized(o)})

	tiny := Plan(&TinyFleet)
	pb := emit(t, &TinyFleet, tiny, otlptracehttp.EncodingProtobuf, 4096)
	js := emit(t, &TinyFleet, tiny, otlptracehttp.EncodingJSON, 4096)
	if len(pb) != 1 || len(js) != 1 {
		t.Fatalf("the tiny fleet took %d protobuf and %d JSON requests, want one each", len(pb), len(js))
	}
	files["genai-tiny.pb"], files["genai-tiny.json"] = pb[0], js[0]
	params = append(params, entry{TinyFleet, []string{"genai-tiny.pb", "genai-tiny.json"}, realized(tiny)})

	p, err := json.MarshalIndent(params, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files["params.json"] = append(p, '\n')

	total := 0
	for name, b := range files {
		total += len(b)
		path := filepath.Join(outDir, name)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/otelgen -update)", err)
		}
		if !bytes.Equal(old, b) {
			t.Errorf("%s differs from what the SDK sends now (%d bytes, stored %d); run go test ./internal/otelgen -update", path, len(b), len(old))
		}
	}
	if total > 2<<20 {
		t.Errorf("the fixtures take %d bytes; keep them under 2 MiB", total)
	}
	t.Log(fmt.Sprintf("fixtures: %d bytes", total))
}
