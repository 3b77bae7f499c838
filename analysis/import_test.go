//go:build duckdb_arrow

package analysis

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mayday-sim/mayday/scenarios"
)

const otelFixtures = "testdata/otel"

// fixtureParams reads what the fixture generator (internal/otelgen) drew for each fleet.
type fixtureParams struct {
	Fleet struct {
		Name   string `json:"name"`
		Outage struct {
			Tool        string  `json:"tool"`
			StartMinute float64 `json:"start_minute"`
			Minutes     float64 `json:"minutes"`
		} `json:"outage"`
		Start string `json:"start"`
	} `json:"fleet"`
	Files    []string `json:"files"`
	Realized struct {
		Roots, Subagents, ToolAttempts, FailedAttempts, Spans int
	} `json:"realized"`
}

func readFixtureParams(t *testing.T) map[string]fixtureParams {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(otelFixtures, "params.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ps []struct {
		fixtureParams
		Realized map[string]int `json:"realized"`
	}
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatal(err)
	}
	out := map[string]fixtureParams{}
	for _, p := range ps {
		fp := p.fixtureParams
		r := p.Realized
		fp.Realized.Roots, fp.Realized.Subagents, fp.Realized.ToolAttempts = r["roots"], r["subagents"], r["tool_attempts"]
		fp.Realized.FailedAttempts, fp.Realized.Spans = r["failed_attempts"], r["spans"]
		out[fp.Fleet.Name] = fp
	}
	return out
}

func importInto(t *testing.T, inputs []string, opts ImportOptions) (*DB, *ImportResult) {
	t.Helper()
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	res, err := Import(context.Background(), db, inputs, opts)
	if err != nil {
		t.Fatalf("import %v: %v", inputs, err)
	}
	return db, res
}

func queryInt(t *testing.T, db *DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.SQL().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// Both conventions import into the same tables: every agent span an investigation (a
// subagent under its parent), every tool span an attempt, every failure counted, the
// outage found as an incident of its tool where the generator put it.
func TestImportFixtureFleets(t *testing.T) {
	params := readFixtureParams(t)
	for _, c := range []struct{ fleet, conv string }{{"genai-fleet", ConvGenAI}, {"openinference-fleet", ConvOpenInference}} {
		t.Run(c.fleet, func(t *testing.T) {
			p := params[c.fleet]
			db, res := importInto(t, []string{filepath.Join(otelFixtures, p.Files[0])}, ImportOptions{RunID: "fleet"})
			if len(res.Runs) != 1 || res.Runs[0].Conventions[c.conv] != int64(p.Realized.Spans) || res.Spans != int64(p.Realized.Spans) {
				t.Fatalf("runs %+v, spans %d; want one run of %d %s spans", res.Runs, res.Spans, p.Realized.Spans, c.conv)
			}
			for q, want := range map[string]int{
				"SELECT count(*) FROM investigations WHERE parent_id IS NULL":                              p.Realized.Roots,
				"SELECT count(*) FROM investigations WHERE parent_id IS NOT NULL AND depth = 1":            p.Realized.Subagents,
				"SELECT count(*) FROM attempts":                                                            p.Realized.ToolAttempts,
				"SELECT count(*) FROM attempts WHERE failed":                                               p.Realized.FailedAttempts,
				"SELECT count(*) FROM investigations WHERE truly_valid IS NOT NULL OR compute IS NOT NULL": 0,
				"SELECT count(*) FROM executions":                                                          0,
				// What only a simulation knows is stored NULL as the run loads.
				"SELECT count(*) FROM investigations WHERE validated IS NOT NULL OR scope IS NOT NULL OR crashes IS NOT NULL OR revisions IS NOT NULL": 0,
				"SELECT count(*) FROM spans WHERE compute IS NOT NULL OR queue_wait IS NOT NULL":                                                       0,
				"SELECT count(*) FROM runs WHERE events IS NOT NULL":                                                                                   0,
			} {
				if got := queryInt(t, db, q); got != int64(want) {
					t.Errorf("%s = %d, want %d", q, got, want)
				}
			}
			// Retries are attempts of one operation: no operation has more attempts than the
			// generator's retry limit (4 and 3), and some have several.
			if got := queryInt(t, db, "SELECT max(n) FROM (SELECT count(*) AS n FROM attempts GROUP BY op_key)"); got < 2 || got > 4 {
				t.Errorf("most attempts of one operation: %d, want 2..4", got)
			}
			m, err := db.Metrics(context.Background(), "fleet")
			if err != nil {
				t.Fatal(err)
			}
			for name := range importUnknown {
				if v, ok := m.Value(name); ok && !math.IsNaN(v) {
					t.Errorf("%s = %v for an imported run, want NULL", name, v)
				}
			}
			for _, name := range []string{"completion_rate", "retry_amplification", "median_recovery_time", "tokens_per_completion", "correlated_failure_share"} {
				if v, ok := m.Value(name); !ok || math.IsNaN(v) || v <= 0 {
					t.Errorf("%s = %v, %v; want a positive value", name, v, ok)
				}
			}
			// The outage is one incident of its tool; the incident test needs 5 failures in a
			// minute, so it may start a minute late and end a minute early.
			var tool string
			var startMin, minutes float64
			err = db.SQL().QueryRow(`SELECT tool, sim_seconds(run_id, start) / 60, minutes FROM incidents ORDER BY failed_attempts DESC LIMIT 1`).Scan(&tool, &startMin, &minutes)
			if err != nil {
				t.Fatal(err)
			}
			o := p.Fleet.Outage
			zero, _ := time.Parse(time.RFC3339, p.Fleet.Start)
			shift := res.Runs[0].TimeZero.Sub(zero).Minutes()
			if tool != o.Tool || math.Abs(startMin+shift-o.StartMinute) > 1 || math.Abs(minutes-o.Minutes) > 2 {
				t.Errorf("incident of %s from minute %.0f for %.0f minutes (time 0 %v); want %s from %.0f for %.0f",
					tool, startMin+shift, minutes, res.Runs[0].TimeZero, o.Tool, o.StartMinute, o.Minutes)
			}
		})
	}
}

// The same spans give the same run whatever the format they come in: one protobuf
// request, one OTLP/JSON body (pretty, or on one line longer than the read buffer), JSON
// lines, length-delimited protobuf, gzipped.
func TestImportFormatsAgree(t *testing.T) {
	tmp := t.TempDir()
	pb, err := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.pb"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	var line bytes.Buffer
	if err := json.Compact(&line, js); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(line.Bytes())
	zw.Close()
	// A compact body longer than the read buffer, its resource spans sent 40 times over (a
	// span sent again is kept once).
	var body struct {
		ResourceSpans []json.RawMessage `json:"resourceSpans"`
	}
	if err := json.Unmarshal(js, &body); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		body.ResourceSpans = append(body.ResourceSpans, body.ResourceSpans...)
	}
	big, err := json.Marshal(body)
	if err != nil || len(big) < 1<<20 {
		t.Fatalf("the long body: %d bytes, %v", len(big), err)
	}
	files := map[string][]byte{
		"long-line.json": big,
		"single.pb":      pb,
		"pretty.json":    js,
		"lines.jsonl":    append(line.Bytes(), '\n'),
		"delim.pb":       append(binary.AppendUvarint(nil, uint64(len(pb))), pb...),
		"lines.json.gz":  gz.Bytes(),
	}
	digests := map[string]string{}
	for name, b := range files {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		db, _ := importInto(t, []string{p}, ImportOptions{})
		var d string
		if err := db.SQL().QueryRow("SELECT digest FROM runs").Scan(&d); err != nil {
			t.Fatal(err)
		}
		digests[name] = d
	}
	for name, d := range digests {
		if d != digests["single.pb"] {
			t.Errorf("%s imports to digest %s, single.pb to %s", name, d, digests["single.pb"])
		}
	}
}

// Bad input names the file and the line or message, and is ErrBadTraceInput.
func TestImportBadInput(t *testing.T) {
	tmp := t.TempDir()
	pb, err := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.pb"))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.json"))
	var line bytes.Buffer
	json.Compact(&line, js)
	delim := append(binary.AppendUvarint(nil, uint64(len(pb))), pb...)
	cases := map[string]struct {
		data []byte
		msg  string
	}{
		"bad.jsonl":     {append(append(line.Bytes(), '\n'), []byte("{\"resourceSpans\": [\n")...), "bad.jsonl:2:"},
		"unknown.jsonl": {[]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"nme":"x"}]}]}]}` + "\n"), "unknown.jsonl:1:"},
		"cut.pb":        {append(delim, delim[:len(delim)/2]...), "cut.pb: message 2"},
		"junk.pb":       {[]byte("this is not protobuf at all"), "junk.pb"},
		"empty.json":    {nil, "empty"},
	}
	for name, c := range cases {
		p := filepath.Join(tmp, name)
		os.WriteFile(p, c.data, 0o644)
		db, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Import(context.Background(), db, []string{p}, ImportOptions{})
		if !errors.Is(err, ErrBadTraceInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v; want ErrBadTraceInput naming %q", name, err, c.msg)
		}
		if n := queryInt(t, db, "SELECT count(*) FROM runs"); n != 0 {
			t.Errorf("%s: %d runs stored", name, n)
		}
		db.Close()
	}
	if _, err := TraceInputs([]string{filepath.Join(tmp, "missing.pb")}); !errors.Is(err, ErrBadTraceInput) || !strings.Contains(err.Error(), "missing.pb") {
		t.Errorf("a missing file: %v", err)
	}
}

// otlpSpan builds a span for the rule tests.
func otlpSpan(id byte, parent byte, name string, start, end time.Duration, attrs map[string]string, failed bool) *tracepb.Span {
	t0 := uint64(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	s := &tracepb.Span{TraceId: bytes.Repeat([]byte{7}, 16), SpanId: []byte{0, 0, 0, 0, 0, 0, 0, id}, Name: name,
		StartTimeUnixNano: t0 + uint64(start), EndTimeUnixNano: t0 + uint64(end)}
	if parent != 0 {
		s.ParentSpanId = []byte{0, 0, 0, 0, 0, 0, 0, parent}
	}
	for k, v := range attrs {
		s.Attributes = append(s.Attributes, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}})
	}
	if failed {
		s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"}
	}
	return s
}

func writeRequest(t *testing.T, path string, spans ...*tracepb.Span) {
	t.Helper()
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The retry rules, in their order of preference: a tool call id groups attempts wherever
// they are; an attempt attribute continues the tool's last operation; otherwise a span of
// the same tool under the same parent within the window of a failed one is its retry, and
// one after a success, past the window, or after another tool is a new operation.
func TestImportRetryRules(t *testing.T) {
	s := time.Second
	tool := func(id byte, start time.Duration, name string, attrs map[string]string, failed bool) *tracepb.Span {
		a := map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
		for k, v := range attrs {
			a[k] = v
		}
		return otlpSpan(id, 1, "execute_tool "+name, start, start+s, a, failed)
	}
	spans := []*tracepb.Span{
		otlpSpan(1, 0, "invoke_agent a", 0, 3600*s, map[string]string{"gen_ai.operation.name": "invoke_agent"}, false),
		// call ids: two calls interleaved
		tool(2, 1*s, "search", map[string]string{"gen_ai.tool.call.id": "c1"}, true),
		tool(3, 3*s, "search", map[string]string{"gen_ai.tool.call.id": "c2"}, false),
		tool(4, 5*s, "search", map[string]string{"gen_ai.tool.call.id": "c1"}, false),
		// attempt attribute: 1, 2, then 1 again is a new operation
		tool(5, 10*s, "fetch", map[string]string{"retry.attempt": "1"}, true),
		tool(6, 12*s, "fetch", map[string]string{"retry.attempt": "2"}, false),
		tool(7, 14*s, "fetch", map[string]string{"retry.attempt": "1"}, false),
		// window: a retry, then a new operation after the success, then one past the window
		tool(8, 20*s, "load", nil, true),
		tool(9, 30*s, "load", nil, false),
		tool(10, 40*s, "load", nil, false),
		tool(11, 50*s, "load", nil, true),
		tool(12, 50*s+10*time.Minute, "load", nil, false),
	}
	p := filepath.Join(t.TempDir(), "rules.pb")
	writeRequest(t, p, spans...)
	db, _ := importInto(t, []string{p}, ImportOptions{})
	rows, err := db.SQL().Query(`SELECT op_key, attempt FROM attempts ORDER BY start, span_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var k string
		var a int
		rows.Scan(&k, &a)
		got = append(got, k+"#"+string(rune('0'+a)))
	}
	want := []string{"1/1/0#1", "1/2/0#1", "1/1/0#2", "1/3/0#1", "1/3/0#2", "1/4/0#1", "1/5/0#1", "1/5/0#2", "1/6/0#1", "1/7/0#1", "1/8/0#1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("operations and attempts\n got %v\nwant %v", got, want)
	}
}

// Attributes are redacted on import like a simulated run's; a trace without agent spans
// still makes an investigation per trace; exception events give the failure its class.
func TestImportRedactsAndClassifies(t *testing.T) {
	spans := []*tracepb.Span{
		otlpSpan(1, 0, "ChatCompletion", 0, time.Second, map[string]string{"openinference.span.kind": "LLM", "llm.token_count.prompt": "100", "llm.token_count.completion": "20", "api_key": "hunter2-secret"}, false),
		otlpSpan(2, 1, "lookup", time.Second, 31*time.Second, map[string]string{"openinference.span.kind": "TOOL", "tool.name": "lookup"}, true),
	}
	spans[1].Events = []*tracepb.Span_Event{{Name: "exception", Attributes: []*commonpb.KeyValue{
		{Key: "exception.type", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "ReadTimeout"}}}}}}
	p := filepath.Join(t.TempDir(), "oi.pb")
	writeRequest(t, p, spans...)
	db, _ := importInto(t, []string{p}, ImportOptions{})
	var v string
	if err := db.SQL().QueryRow("SELECT value FROM span_attrs WHERE key = 'api_key'").Scan(&v); err != nil || !strings.HasPrefix(v, "redacted:hmac-sha256:") {
		t.Errorf("api_key stored as %q (%v), want redacted", v, err)
	}
	var status, class string
	if err := db.SQL().QueryRow("SELECT status, failure_class FROM spans WHERE operation = 'execute_tool'").Scan(&status, &class); err != nil || status != "timeout" || class != "uncertain_completion" {
		t.Errorf("the timed-out tool: %s %s (%v)", status, class, err)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM investigations WHERE tokens = 120"); n != 1 {
		t.Errorf("%d investigations of 120 tokens, want 1 (the trace's root)", n)
	}
}

// Export, then import: every metric the export carries comes back exactly, and every row
// of the tables it carries, on every embedded example (cut to 60 investigations, with its
// faults, guards and recoveries and subagents), held in memory and spilled in parts of a
// few hundred spans: the export carries every table a metric reads.
func TestImportRoundTripsExport(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ctx := context.Background()
	for _, info := range scenarios.List() {
		db, runID := exampleDB(t, info.Name, 60)
		out := filepath.Join(t.TempDir(), "otlp")
		if _, err := Export(ctx, db, out, ExportOptions{Format: FormatOTLP, ChunkSpans: 2000}); err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int64{0, 300} {
			t.Run(fmt.Sprintf("%s/parts-%d", info.Name, parts), func(t *testing.T) {
				if parts > 0 {
					withSpillSpans(t, parts)
				}
				roundTripsExport(t, db, runID, out, parts > 0)
			})
		}
	}
}

// roundTripsExport imports out, the export of run runID of db, and compares the two. A
// run built in parts sends its records to the metrics in another order than the run did,
// so sums of floats (compute) may differ in their last bits: within 1e-12, relatively.
func roundTripsExport(t *testing.T, db *DB, runID, out string, inParts bool) {
	t.Helper()
	ctx := context.Background()
	back, res := importInto(t, []string{out}, ImportOptions{})
	if len(res.Runs) != 1 || res.Runs[0].RunID != runID || !res.Runs[0].Native {
		t.Fatalf("imported %+v, want run %s back", res.Runs, runID)
	}
	want, err := db.Metrics(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.Metrics(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range MetricNames {
		w, wok := want.Value(name)
		g, gok := got.Value(name)
		same := w == g || math.IsNaN(w) && math.IsNaN(g) || inParts && math.Abs(w-g) <= 1e-12*math.Abs(w)
		if wok != gok || !same {
			t.Errorf("%s: %v (%v) after the round trip, %v (%v) before", name, g, gok, w, wok)
		}
	}
	for _, table := range []string{"investigations", "spans", "transitions", "executions", "faults", "tool_samples", "workers"} {
		q := "SELECT count(*) FROM " + table
		if a, b := queryInt(t, db, q), queryInt(t, back, q); a != b {
			t.Errorf("%s: %d rows after the round trip, %d before", table, b, a)
		}
		// Every column of every row: the sum of DuckDB's hash of each column, a column each.
		q = "SELECT sum(hash(columns(*)))::VARCHAR FROM " + table
		if a, b := fmt.Sprint(query(t, db, q)), fmt.Sprint(query(t, back, q)); a != b {
			t.Errorf("%s: the rows differ after the round trip (column hash sums %v, %v before)", table, b, a)
		}
	}
}
