//go:build duckdb_arrow

package analysis

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// semconv is testdata/genai-semconv.txt: the GenAI conventions' operations and attributes.
type semconv struct {
	kinds map[string][]string // operation -> allowed span kinds
	names map[string]string   // operation -> span name pattern
	attrs map[string]semAttr
}

type semAttr struct {
	typ, level string
	ops        []string
}

func readSemconv(t *testing.T) semconv {
	t.Helper()
	f, err := os.Open("testdata/genai-semconv.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := semconv{kinds: map[string][]string{}, names: map[string]string{}, attrs: map[string]semAttr{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 4 && fields[0] == "op":
			c.kinds[fields[1]] = strings.Split(fields[2], ",")
			c.names[fields[1]] = strings.Join(fields[3:], " ")
		case len(fields) == 5 && fields[0] == "attr":
			c.attrs[fields[1]] = semAttr{typ: fields[2], level: fields[3], ops: strings.Split(fields[4], ",")}
		}
	}
	if len(c.kinds) == 0 || len(c.attrs) == 0 {
		t.Fatal("testdata/genai-semconv.txt lists nothing")
	}
	return c
}

func valueType(v *commonpb.AnyValue) string {
	switch v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return "string"
	case *commonpb.AnyValue_IntValue:
		return "int"
	case *commonpb.AnyValue_DoubleValue:
		return "double"
	case *commonpb.AnyValue_BoolValue:
		return "bool"
	case *commonpb.AnyValue_ArrayValue:
		return "string[]"
	}
	return "other"
}

// exportSimulated runs an embedded example (small) and exports it as OTLP; it returns
// every span read back.
func exportSimulated(t *testing.T, name string, sets ...string) []*tracepb.Span {
	t.Helper()
	data, _ := scenarios.Embedded(name)
	sc, err := scenarios.Parse(name+".yaml", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	if err != nil || len(res.Violations) > 0 {
		t.Fatalf("run: %v %v", err, res.Violations)
	}
	db := openTestDB(t)
	if err := LoadCollector(db, name+"-s1", &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "otlp")
	m, err := Export(context.Background(), db, out, ExportOptions{Format: FormatOTLP, ChunkSpans: 5000, Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	var spans []*tracepb.Span
	for _, f := range m.Files {
		req, err := ReadOTLP(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans
}

var nameAttr = regexp.MustCompile(`\{([a-z_.]+)\}`)

// Every exported span follows the GenAI conventions listed in testdata: a model turn is a
// `chat {model}` span with the provider, the model and its usage; tools are INTERNAL
// `execute_tool {tool}` spans; every gen_ai.* (and error.type) attribute is one the
// conventions define for that operation, of the type they give; the rest is mayday.*, and
// no boolean or number travels as text.
func TestOTLPFollowsTheGenAIConventions(t *testing.T) {
	conv := readSemconv(t)
	spans := exportSimulated(t, "research-fleet", "workload.investigations=60")
	seen := map[string]int{}
	for _, s := range spans {
		attrs := map[string]*commonpb.AnyValue{}
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value
		}
		op := attrs["gen_ai.operation.name"].GetStringValue()
		seen[op]++
		checkSpanAgainstConventions(t, conv, s, op, attrs)
	}
	for _, op := range []string{"chat", "execute_tool", "invoke_agent", ""} {
		if seen[op] == 0 {
			t.Errorf("no span of GenAI operation %q among %d spans (%v)", op, len(spans), seen)
		}
	}
}

func checkSpanAgainstConventions(t *testing.T, conv semconv, s *tracepb.Span, op string, attrs map[string]*commonpb.AnyValue) {
	t.Helper()
	if op != "" {
		kinds, ok := conv.kinds[op]
		if !ok {
			t.Fatalf("span %q: gen_ai.operation.name %q is not an operation of the conventions", s.Name, op)
		}
		kind := strings.TrimPrefix(s.Kind.String(), "SPAN_KIND_")
		if !strings.Contains(","+strings.Join(kinds, ",")+",", ","+kind+",") {
			t.Errorf("span %q: kind %s, the conventions allow %v", s.Name, kind, kinds)
		}
		want := nameAttr.ReplaceAllStringFunc(conv.names[op], func(m string) string {
			return attrs[m[1:len(m)-1]].GetStringValue()
		})
		if s.Name != want {
			t.Errorf("span %q: name, want %q", s.Name, want)
		}
		for k, a := range conv.attrs {
			if a.level == "required" && slicesContains(a.ops, op) && attrs[k] == nil {
				t.Errorf("span %q (%s): required %s missing", s.Name, op, k)
			}
		}
		if op == "chat" {
			for _, k := range []string{"gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
				if attrs[k] == nil {
					t.Errorf("chat span %q: no %s", s.Name, k)
				}
			}
		}
	}
	for k, v := range attrs {
		a, defined := conv.attrs[k]
		switch {
		case k == "error.type" && op == "":
			// the general convention for a failed operation, on any span
			if valueType(v) != "string" {
				t.Errorf("span %q: error.type is %s, want string", s.Name, valueType(v))
			}
		case defined || strings.HasPrefix(k, "gen_ai."):
			if !defined || op == "" || !slicesContains(a.ops, op) {
				t.Errorf("span %q (operation %q): %s is not a conventions attribute of that operation", s.Name, op, k)
			} else if got := valueType(v); got != a.typ {
				t.Errorf("span %q: %s is %s, the conventions say %s", s.Name, k, got, a.typ)
			}
		case !strings.HasPrefix(k, "mayday."):
			t.Errorf("span %q: %s is neither a conventions attribute nor under mayday.*", s.Name, k)
		case strings.HasPrefix(k, "mayday.attr.arg."):
			// a tool's argument: text in the scenario, text here
		case valueType(v) == "string" && (v.GetStringValue() == "true" || v.GetStringValue() == "false"):
			t.Errorf("span %q: %s = %q travels as a string, not a bool", s.Name, k, v.GetStringValue())
		}
	}
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
