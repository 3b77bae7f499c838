package traces

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

// sink collects what a writer emits: per table, the batch sizes, and every string value,
// then releases each batch.
type sink struct {
	batches map[Table][]int64
	order   []Table
	strs    []string
	keep    map[Table][]arrow.RecordBatch // retained when keep != nil
}

func newSink() *sink { return &sink{batches: map[Table][]int64{}} }

// newKeepingSink is a sink that also keeps every batch, released when the test ends.
func newKeepingSink(t *testing.T) *sink {
	s := newSink()
	s.keep = map[Table][]arrow.RecordBatch{}
	t.Cleanup(func() {
		for _, rs := range s.keep {
			for _, r := range rs {
				r.Release()
			}
		}
	})
	return s
}

func (s *sink) emit(t Table, rec arrow.RecordBatch) error {
	defer rec.Release()
	if !rec.Schema().Equal(Schema(t)) {
		return errors.New("batch schema differs from Schema(" + t.String() + ")")
	}
	s.batches[t] = append(s.batches[t], rec.NumRows())
	s.order = append(s.order, t)
	for _, col := range rec.Columns() {
		s.strs = collectStrings(col, s.strs)
	}
	if s.keep != nil {
		rec.Retain()
		s.keep[t] = append(s.keep[t], rec)
	}
	return nil
}

func collectStrings(a arrow.Array, out []string) []string {
	switch a := a.(type) {
	case *array.String:
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				out = append(out, a.Value(i))
			}
		}
	case *array.Map:
		out = collectStrings(a.Keys(), out)
		out = collectStrings(a.Items(), out)
	case *array.List:
		out = collectStrings(a.ListValues(), out)
	}
	return out
}

// The writer releases everything it allocates, whether it ends normally or on an error.
func TestWriterReleasesEverything(t *testing.T) {
	c := tracetest.Synthetic(5000, 1)
	for _, fail := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := newSink()
		calls := 0
		emit := func(tb Table, rec arrow.RecordBatch) error {
			calls++
			if fail && calls == 3 {
				rec.Release()
				return errors.New("disk full")
			}
			return s.emit(tb, rec)
		}
		w, err := NewWriter("r1", Options{BatchRows: 1000, Allocator: mem}, emit)
		if err != nil {
			t.Fatal(err)
		}
		c.Replay(w)
		werr := w.WriteRun(Run{Scenario: "synthetic", Status: StatusComplete})
		cerr := w.Close()
		if fail {
			if cerr == nil || !strings.Contains(cerr.Error(), "disk full") || werr == nil {
				t.Errorf("after a failing emit: WriteRun %v, Close %v; want the emit error", werr, cerr)
			}
			if calls != 3 {
				t.Errorf("emit called %d times; a writer must stop at the first error", calls)
			}
		} else if werr != nil || cerr != nil {
			t.Fatalf("WriteRun %v, Close %v", werr, cerr)
		}
		mem.AssertSize(t, 0)
	}
}

// Rows arrive in batches of BatchRows (the last one shorter), in order, runs last, and the
// digest does not depend on the batch size.
func TestWriterBatches(t *testing.T) {
	c := tracetest.Synthetic(2500, 2)
	var digests []string
	for _, size := range []int{1, 7, 1000, 1 << 20} {
		s := newSink()
		w, err := NewWriter("r1", Options{BatchRows: size}, s.emit)
		if err != nil {
			t.Fatal(err)
		}
		c.Replay(w)
		if err := w.WriteRun(Run{}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		// Synthetic gives each of its 3 tools 2 arguments, identical on every attempt, and a
		// failed attempt one more attribute (error).
		failed := 0
		for _, sp := range c.Spans {
			if sp.Operation == record.OpExecuteTool && sp.Status != record.StatusOK {
				failed++
			}
		}
		want := map[Table]int{Investigations: len(c.Investigations), Spans: len(c.Spans), Transitions: len(c.Transitions),
			Executions: len(c.Executions), Faults: len(c.Faults), ToolSamples: len(c.Samples), Runs: 1,
			ToolArgs: 3 * 2, SpanAttrs: failed}
		for tb, n := range want {
			var sum int64
			for i, b := range s.batches[tb] {
				sum += b
				if b > int64(size) || (i < len(s.batches[tb])-1 && b != int64(size)) {
					t.Errorf("size %d: %s batch %d has %d rows", size, tb, i, b)
				}
			}
			if sum != int64(n) || w.Rows(tb) != int64(n) {
				t.Errorf("size %d: %s: %d rows emitted, Rows %d, want %d", size, tb, sum, w.Rows(tb), n)
			}
		}
		if s.order[len(s.order)-1] != Runs {
			t.Errorf("size %d: the last batch is %s, want runs", size, s.order[len(s.order)-1])
		}
		digests = append(digests, w.Digest())
	}
	for _, d := range digests[1:] {
		if d != digests[0] {
			t.Errorf("digests differ with the batch size: %v", digests)
		}
	}
}

// The digest is record.Digest over the redacted records: equal to a plain digest of records
// without secrets, different when a secret was replaced.
func TestWriterDigest(t *testing.T) {
	plain := &record.Span{SpanID: 1, Operation: record.OpPlan, Status: record.StatusOK,
		Attrs: []record.Attr{{Key: "strategy", Value: "momentum"}}}
	secret := &record.Span{SpanID: 2, Operation: record.OpExecuteTool, Status: record.StatusOK,
		Attrs: []record.Attr{{Key: "API_KEY", Value: "abc"}}}
	w, _ := NewWriter("r", Options{}, func(_ Table, rec arrow.RecordBatch) error { rec.Release(); return nil })
	d := record.NewDigest()
	w.Span(plain)
	d.Span(plain)
	if w.Digest() != d.Sum() {
		t.Errorf("digest of a record without secrets differs from record.Digest")
	}
	w.Span(secret)
	red := *secret
	red.Attrs = []record.Attr{{Key: "API_KEY", Value: NewRedactor(nil, nil, nil).Hash("abc")}}
	d2 := record.NewDigest()
	d2.Span(plain)
	d2.Span(&red)
	if w.Digest() != d2.Sum() {
		t.Errorf("digest is not record.Digest of the redacted records")
	}
	if secret.Attrs[0].Value != "abc" {
		t.Errorf("the writer changed the sender's record")
	}
	w.Close()
}

func rowOf(t *testing.T, rec arrow.RecordBatch, row int) map[string]any {
	t.Helper()
	out := map[string]any{}
	for i, f := range rec.Schema().Fields() {
		col := rec.Column(i)
		if col.IsNull(row) {
			out[f.Name] = nil
			continue
		}
		switch a := col.(type) {
		case *array.String:
			out[f.Name] = a.Value(row)
		case *array.Int64:
			out[f.Name] = a.Value(row)
		case *array.Int32:
			out[f.Name] = a.Value(row)
		case *array.Uint64:
			out[f.Name] = a.Value(row)
		case *array.Float64:
			out[f.Name] = a.Value(row)
		case *array.Boolean:
			out[f.Name] = a.Value(row)
		case *array.Timestamp:
			out[f.Name] = a.Value(row).ToTime(arrow.Nanosecond)
		default:
			out[f.Name] = a.ValueStr(row)
		}
	}
	return out
}

// One span's values: nulls for absent values, the op_key format, timestamps from the epoch,
// seconds for durations, lists and maps.
func TestWriterSpanValues(t *testing.T) {
	s := newKeepingSink(t)
	w, _ := NewWriter("run-7", Options{}, s.emit)
	w.Span(&record.Span{TraceID: 3, SpanID: 1 << 40, ParentSpanID: 0, InvestigationID: 3, AgentID: 4,
		Operation: record.OpExecuteTool, Tool: "backtest", HasKey: true,
		OpKey: record.OpKey{Investigation: 3, Step: 12, Revision: -1}, Attempt: 2,
		Start: 1500, End: 90e9, QueueWait: 2500e6, Status: record.StatusTimeout,
		CausedBy: []uint64{5, 6}, Attrs: []record.Attr{{Key: "a", Value: "b"}, {Key: "kind", Value: "k"}}})
	w.Span(&record.Span{SpanID: 9, ParentSpanID: 1, Operation: record.OpPlan, Status: record.StatusOK})
	w.Investigation(&record.Investigation{InvestigationID: 3, RootID: 3, FinalState: "running", Ended: false, EndedAt: 77})
	w.Sample(&record.Sample{Tool: "x", BudgetTokens: -1, BreakerState: "off"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sp := rowOf(t, s.keep[Spans][0], 0)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := map[string]any{
		"run_id": "run-7", "span_id": int64(1 << 40), "parent_span_id": nil, "op_key": "3/12/-1",
		"attempt": int32(2), "start": epoch.Add(1500), "end": epoch.Add(90 * time.Second),
		"queue_wait": 2.5, "status": "timeout", "failure_class": nil, "tool_version": nil,
		"caused_by": "[5,6]", "kind": "k",
	}
	for k, v := range want {
		if g := sp[k]; g != v && !(k == "start" || k == "end") {
			t.Errorf("span %s = %#v, want %#v", k, g, v)
		} else if tm, ok := g.(time.Time); (k == "start" || k == "end") && (!ok || !tm.Equal(v.(time.Time))) {
			t.Errorf("span %s = %v, want %v", k, g, v)
		}
	}
	sp2 := rowOf(t, s.keep[Spans][0], 1)
	if sp2["parent_span_id"] != int64(1) || sp2["op_key"] != nil || sp2["attempt"] != nil || sp2["caused_by"] != "[]" || sp2["kind"] != nil {
		t.Errorf("second span: %v", sp2)
	}
	if n := s.keep[SpanAttrs][0].NumRows(); n != 1 {
		t.Fatalf("%d span_attrs rows, want 1 (a=b)", n)
	}
	if a := rowOf(t, s.keep[SpanAttrs][0], 0); a["span_id"] != int64(1<<40) || a["key"] != "a" || a["value"] != "b" {
		t.Errorf("span_attrs row %v, want span 1<<40 a=b", a)
	}
	inv := rowOf(t, s.keep[Investigations][0], 0)
	if inv["ended_at"] != nil || inv["parent_id"] != nil || inv["termination_reason"] != nil {
		t.Errorf("in-flight root investigation: ended_at %v parent_id %v termination_reason %v; want nulls", inv["ended_at"], inv["parent_id"], inv["termination_reason"])
	}
	if smp := rowOf(t, s.keep[ToolSamples][0], 0); smp["budget_tokens"] != nil {
		t.Errorf("budget_tokens of a tool without a retry budget = %v, want null", smp["budget_tokens"])
	}
}

// FromTrace stores NULL in every column only a simulation knows, and nothing else changes:
// the other columns and the digest are those of the same records written without it.
func TestWriterFromTrace(t *testing.T) {
	write := func(opts Options) (*sink, string) {
		s := newKeepingSink(t)
		w, _ := NewWriter("r", opts, s.emit)
		w.Span(&record.Span{SpanID: 1, InvestigationID: 1, Operation: record.OpExecuteTool, Tool: "t", Status: record.StatusOK,
			QueueWait: 2e9, Compute: 3.5, InputTokens: 7})
		w.Investigation(&record.Investigation{InvestigationID: 1, RootID: 1, FinalState: "completed", Ended: true, EndedAt: 9,
			Revisions: 2, Compute: 4, TrulyValid: true, Validated: true, Crashes: 1, Scope: record.ScopeFull, Tokens: 11})
		if err := w.WriteRun(Run{Events: 42, NoEvents: opts.FromTrace}); err != nil {
			t.Fatal(err)
		}
		d := w.Digest()
		w.Close()
		return s, d
	}
	sim, simDigest := write(Options{})
	tr, trDigest := write(Options{FromTrace: true})
	if simDigest != trDigest {
		t.Errorf("digest %s from a trace, %s from a simulation: want the same", trDigest, simDigest)
	}
	unknown := map[Table][]string{
		Spans:          {"queue_wait", "compute"},
		Investigations: {"revisions", "compute", "truly_valid", "validated", "crashes", "scope"},
		Runs:           {"events"},
	}
	for tb, cols := range unknown {
		got, want := rowOf(t, tr.keep[tb][0], 0), rowOf(t, sim.keep[tb][0], 0)
		for name, v := range want {
			switch {
			case slices.Contains(cols, name):
				if got[name] != nil || v == nil {
					t.Errorf("%s.%s = %v from a trace, %v from a simulation; want NULL and a value", tb, name, got[name], v)
				}
			case fmt.Sprint(got[name]) != fmt.Sprint(v):
				t.Errorf("%s.%s = %v from a trace, %v from a simulation; want the same", tb, name, got[name], v)
			}
		}
	}
}

func TestWriterMisuse(t *testing.T) {
	release := func(_ Table, rec arrow.RecordBatch) error { rec.Release(); return nil }
	if _, err := NewWriter("", Options{}, release); err == nil {
		t.Error("empty run id accepted")
	}
	if _, err := NewWriter("r", Options{BatchRows: -1}, release); err == nil {
		t.Error("negative BatchRows accepted")
	}
	w, _ := NewWriter("r", Options{}, release)
	if err := w.WriteRun(Run{Status: "done"}); err == nil || !strings.Contains(err.Error(), `"done"`) {
		t.Errorf("bad status: %v", err)
	}
	if err := w.WriteRun(Run{RunID: "other"}); err == nil {
		t.Error("a runs row of another run accepted")
	}
	if err := w.WriteRun(Run{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRun(Run{}); !errors.Is(err, ErrRunWritten) {
		t.Errorf("second runs row: %v", err)
	}
	w.Close()
	w.Span(&record.Span{})
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("record after Close: Close says %v, want ErrClosed", err)
	}
}

// The hot path allocates nothing per row once the builders have grown (arrow-go may still
// allocate when a buffer grows or a batch is cut, which is amortized over a batch).
func TestWriterAllocs(t *testing.T) {
	c := tracetest.Synthetic(200, 3)
	w, _ := NewWriter("r", Options{BatchRows: 1 << 20}, func(_ Table, rec arrow.RecordBatch) error { rec.Release(); return nil })
	defer w.Close()
	c.Replay(w) // grow the builders
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		w.Span(&c.Spans[i%len(c.Spans)])
		w.Transition(&c.Transitions[i%len(c.Transitions)])
		w.Execution(&c.Executions[i%len(c.Executions)])
		i++
	})
	// Buffer growth doubles, so over 1000 runs only a handful of runs grow a buffer.
	if allocs > 0.1 {
		t.Errorf("%.2f allocations per span+transition+execution; want none in the steady state", allocs)
	}
}

// kvRows reads the (owner, key, value) rows of span_attrs (owner = span_id) or tool_args
// (owner = tool), in emission order.
func kvRows(t *testing.T, recs []arrow.RecordBatch, owner string) [][3]string {
	var out [][3]string
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			r := rowOf(t, rec, i)
			o := r[owner]
			if id, ok := o.(int64); ok {
				o = strconv.FormatInt(id, 10)
			}
			out = append(out, [3]string{o.(string), r["key"].(string), r["value"].(string)})
		}
	}
	return out
}

// Where each attribute goes: kind to spans.kind; a tool's arguments to tool_args from its
// first execute_tool span, dropped from the spans that repeat them, kept in span_attrs by
// a span whose arguments differ (the marker when it has none); a blocked span keeps all of
// its own; everything else to span_attrs in the span's order. The expected rows are
// written out by hand.
func TestWriterAttrLayout(t *testing.T) {
	const secret = "sk-live-1234567890"
	args := func(strategy string) []record.Attr {
		return []record.Attr{{Key: "arg.strategy", Value: strategy}, {Key: "arg.api_key", Value: secret}}
	}
	tool := func(id uint64, name string, attrs ...record.Attr) *record.Span {
		return &record.Span{SpanID: id, Operation: record.OpExecuteTool, Tool: name, Status: record.StatusOK, Attrs: attrs}
	}
	spans := []*record.Span{
		{SpanID: 1, Operation: record.OpPlan, Attrs: []record.Attr{{Key: "kind", Value: "model_turn"}, {Key: "error", Value: "rate_limited"}}},
		tool(2, "backtest", append([]record.Attr{{Key: "answered_from", Value: "record"}}, args("momentum")...)...),
		tool(3, "backtest", args("momentum")...),                                     // the recorded set: nothing stored
		tool(4, "backtest", args("mean_reversion")...),                               // differs: its own
		tool(5, "backtest"),                                                          // none while the tool has some: the marker
		tool(6, "fetch"),                                                             // records an empty set
		tool(7, "fetch", record.Attr{Key: "arg.region", Value: "eu"}),                // differs from the empty set
		{SpanID: 8, Operation: record.OpInspect, Tool: "backtest", Attrs: args("x")}, // arguments only on execute_tool
		{SpanID: 9, Operation: record.OpPlan, Attrs: []record.Attr{{Key: "config_id", Value: "c"}, {Key: "kind", Value: "a"}, {Key: "kind", Value: "b"}}},
		tool(10, "backtest", args("momentum")...),
		{SpanID: 11, Operation: record.OpExecuteTool, Tool: "notify", Status: record.StatusBlocked, // never sent: records no set
			Attrs: []record.Attr{{Key: "violation", Value: "unauthorized_access"}}},
		tool(12, "notify", record.Attr{Key: "arg.channel", Value: "ops"}),                                                  // records notify's set
		{SpanID: 13, Operation: record.OpExecuteTool, Tool: "backtest", Status: record.StatusBlocked},                      // no marker
		{SpanID: 14, Operation: record.OpExecuteTool, Tool: "notify", Status: record.StatusBlocked, Attrs: args("y")},      // its own
		{SpanID: 15, Operation: record.OpPlan, Attrs: []record.Attr{{Key: "kind", Value: "a"}, {Key: "kind", Value: "b"}}}, // the first kind is the first attribute
	}
	s := newKeepingSink(t)
	w, _ := NewWriter("r", Options{BatchRows: 3}, s.emit)
	for _, sp := range spans {
		w.Span(sp)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h := NewRedactor(nil, nil, nil).Hash(secret)
	wantArgs := [][3]string{{"backtest", "strategy", "momentum"}, {"backtest", "api_key", h}, {"notify", "channel", "ops"}}
	if got := kvRows(t, s.keep[ToolArgs], "tool"); !slices.Equal(got, wantArgs) {
		t.Errorf("tool_args\n got %v\nwant %v", got, wantArgs)
	}
	wantAttrs := [][3]string{
		{"1", "error", "rate_limited"},
		{"2", "answered_from", "record"},
		{"4", "arg.strategy", "mean_reversion"}, {"4", "arg.api_key", h},
		{"5", OwnArgsMarker, ""},
		{"7", "arg.region", "eu"},
		{"8", "arg.strategy", "x"}, {"8", "arg.api_key", h},
		{"9", "config_id", "c"}, {"9", "kind", "b"},
		{"11", "violation", "unauthorized_access"},
		{"14", "arg.strategy", "y"}, {"14", "arg.api_key", h},
		{"15", "kind", "b"},
	}
	if got := kvRows(t, s.keep[SpanAttrs], "span_id"); !slices.Equal(got, wantAttrs) {
		t.Errorf("span_attrs\n got %v\nwant %v", got, wantAttrs)
	}
	var kinds []any
	for _, rec := range s.keep[Spans] {
		for i := range int(rec.NumRows()) {
			kinds = append(kinds, rowOf(t, rec, i)["kind"])
		}
	}
	wantKinds := []any{"model_turn", nil, nil, nil, nil, nil, nil, nil, "a", nil, nil, nil, nil, nil, "a"}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("spans.kind = %v, want %v", kinds, wantKinds)
	}
}

// opKey writes what fmt writes, for keys of one investigation after another and of the same
// one again, with steps and revisions around 10 and 100 and negative.
func TestOpKeyAsFormatted(t *testing.T) {
	w, _ := NewWriter("r", Options{}, func(_ Table, rec arrow.RecordBatch) error { rec.Release(); return nil })
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom([]int64{-1, 0, 9, 10, 99, 100, 101, 12345, math.MaxInt32, math.MinInt32})
		k := record.OpKey{Investigation: rapid.SampledFrom([]int64{0, 1, 7, 123456789, -5, math.MaxInt64, math.MinInt64}).Draw(t, "inv"),
			Step: int32(n.Draw(t, "step")), Revision: int32(n.Draw(t, "rev"))}
		if got, want := string(w.opKey(k)), fmt.Sprintf("%d/%d/%d", k.Investigation, k.Step, k.Revision); got != want {
			t.Fatalf("opKey(%+v) = %q, want %q", k, got, want)
		}
	})
}
