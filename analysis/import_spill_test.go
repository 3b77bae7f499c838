//go:build duckdb_arrow

package analysis

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/sim/record"
)

// withSpillSpans sets spillSpans for the test, and TMPDIR to a folder of the test's, so
// that a spill of an import into a database in memory lands where the test can look.
func withSpillSpans(t *testing.T, n int64) string {
	t.Helper()
	old := spillSpans
	spillSpans = n
	t.Cleanup(func() { spillSpans = old })
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return tmp
}

// incidentRows is the incidents of a run as text, without their numbers (which follow
// the investigations' ids).
func incidentRows(t *testing.T, db *DB, runID string) string {
	t.Helper()
	return fmt.Sprint(query(t, db, `SELECT tool, "start", "end", calls, failed_attempts, affected_investigations, retries_sent, baseline
		FROM incidents WHERE run_id = `+literal(runID)+` ORDER BY "start", tool`))
}

// A run built in parts, after its spans were spilled, is the run built at once: on the
// traces real agent libraries sent (their retries, sub-agents joined across traces by
// links and session ids, missing roots, exporters' duplicates) and on mayday's own export
// read as plain spans, every metric, every incident, every table's row count and the
// import's summary are the same, with parts of a few dozen spans, whether the parts are
// read from the spill's chunks or cut into files of their own. Only the numbering of
// investigations and spans (by start within a part) and so the digest may differ.
func TestSpilledImportMatchesInMemory(t *testing.T) {
	ctx := context.Background()
	type input struct {
		name string
		path string
		opts ImportOptions
	}
	var inputs []input
	for _, dir := range libraryFixtures(t) {
		inputs = append(inputs, input{filepath.Base(dir), filepath.Join(dir, readTruth(t, dir).File), ImportOptions{}})
	}
	if !testing.Short() {
		db, _ := exampleDB(t, "research-fleet", 120)
		out := filepath.Join(t.TempDir(), "otlp")
		if _, err := Export(ctx, db, out, ExportOptions{Format: FormatOTLP}); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{"research-fleet as genai", out, ImportOptions{Conventions: ConvGenAI}},
			input{"research-fleet as its own export", out, ImportOptions{}})
	}
	for _, in := range inputs {
		for _, inPlace := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/in-place-%v", in.name, inPlace), func(t *testing.T) {
				matchesInMemory(t, in.path, in.opts, inPlace)
			})
		}
	}
}

// withSpillReadInPlace has a spilled import read its parts from the spill's chunks (made
// small, so that a part's records lie in chunks of their own), or cut into files, and
// fails the test unless every spilled run was read that way.
func withSpillReadInPlace(t *testing.T, inPlace bool) {
	t.Helper()
	oldScan, oldSize := directScan, spillChunkSize
	directScan = 0
	if inPlace {
		directScan, spillChunkSize = math.Inf(1), 512
	}
	runs := 0
	spillReadInPlace = func(got bool) {
		runs++
		if got != inPlace {
			t.Errorf("a spilled run's parts read in place: %v, want %v", got, inPlace)
		}
	}
	t.Cleanup(func() {
		directScan, spillChunkSize, spillReadInPlace = oldScan, oldSize, nil
		if runs == 0 && !t.Failed() {
			t.Errorf("no run spilled: the test compared nothing")
		}
	})
}

// matchesInMemory imports path whole and in parts of a few dozen spans (read in place or
// cut into files) and compares the two.
func matchesInMemory(t *testing.T, path string, opts ImportOptions, inPlace bool) {
	t.Helper()
	ctx := context.Background()
	whole, wholeRes := importInto(t, []string{path}, opts)
	tmp := withSpillSpans(t, 40)
	withSpillReadInPlace(t, inPlace)
	parts, partsRes := importInto(t, []string{path}, opts)
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the spill left %d entries in the temporary folder (%s...)", len(left), left[0].Name())
	}
	if len(partsRes.Runs) != len(wholeRes.Runs) {
		t.Fatalf("%d runs in parts, %d at once", len(partsRes.Runs), len(wholeRes.Runs))
	}
	for i, w := range wholeRes.Runs {
		p := partsRes.Runs[i]
		if p.Parts < 2 {
			t.Fatalf("run %s: built in %d parts, want several (the test would compare nothing)", p.RunID, p.Parts)
		}
		if w.Parts != 0 {
			t.Errorf("run %s: the import at once says %d parts", w.RunID, w.Parts)
		}
		p.Parts = 0
		if !reflect.DeepEqual(p, w) {
			t.Errorf("run %s: in parts\n%+v\n%+v\nat once\n%+v\n%+v", w.RunID, p, *p.Summary, w, *w.Summary)
		}
		wm, err := whole.Metrics(ctx, w.RunID)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := parts.Metrics(ctx, w.RunID)
		if err != nil {
			t.Fatal(err)
		}
		// Equal, but for the last bits of sums of floats over rows in another order (a
		// mayday export's compute): a relative 1e-12, far below any metric's meaning.
		for _, name := range metric.Names() {
			a, aok := pm.Value(name)
			b, bok := wm.Value(name)
			same := aok == bok && (a == b || math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-12*math.Abs(b))
			if !same {
				t.Errorf("run %s: %s = %v (%v) in parts, %v (%v) at once", w.RunID, name, a, aok, b, bok)
			}
		}
		if !reflect.DeepEqual(pm.TerminationReasons, wm.TerminationReasons) {
			t.Errorf("run %s: termination reasons %v in parts, %v at once", w.RunID, pm.TerminationReasons, wm.TerminationReasons)
		}
		if a, b := incidentRows(t, parts, w.RunID), incidentRows(t, whole, w.RunID); a != b {
			t.Errorf("run %s: incidents in parts\n%s\nat once\n%s", w.RunID, a, b)
		}
		for _, table := range []string{"spans", "transitions", "investigations", "span_attributes", "recovery_episodes", "tool_stats", "roots"} {
			q := "SELECT count(*) FROM " + table + " WHERE run_id = $1"
			if a, b := queryInt(t, parts, q, w.RunID), queryInt(t, whole, q, w.RunID); a != b {
				t.Errorf("run %s: %s holds %d rows in parts, %d at once", w.RunID, table, a, b)
			}
		}
	}
}

// A span written to a spill reads back as it was, whatever its attributes, events and
// links hold.
func TestSpillRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &inRun{byKey: map[string]*inSpan{}, convs: map[string]int64{}}
		hexID := func(n int, label string) string {
			return fmt.Sprintf("%0*x", n, rapid.Uint64().Draw(t, label))[:n]
		}
		key := hexID(16, "trace") + hexID(16, "trace2") + hexID(16, "span")
		attrs := func(label string) []spanAttr {
			n := rapid.IntRange(0, 4).Draw(t, label+"-n")
			if n == 0 {
				return nil
			}
			out := make([]spanAttr, n)
			for i := range out {
				out[i].key = rapid.String().Draw(t, label+"-key")
				switch kind := attrKind(rapid.IntRange(int(attrNil), int(attrOther)).Draw(t, label+"-kind")); kind {
				case attrString:
					out[i].val = attrValue{kind: kind, s: rapid.String().Draw(t, label+"-s")}
				case attrInt, attrDouble, attrBool:
					out[i].val = attrValue{kind: kind, n: rapid.Uint64().Draw(t, label+"-n")}
				case attrOther:
					v := &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
						{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte(rapid.String().Draw(t, label+"-b"))}},
						{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: rapid.Float64().Draw(t, label+"-f")}}}}}}
					out[i].val = attrValue{kind: kind, v: v}
				default:
					out[i].val = attrValue{kind: kind}
				}
			}
			return out
		}
		s := &inSpan{run: r, key: key, name: rapid.String().Draw(t, "name"), start: rapid.Int64().Draw(t, "start"),
			end: rapid.Int64().Draw(t, "end"), msg: rapid.String().Draw(t, "msg"), attrs: attrs("attrs")}
		if rapid.Bool().Draw(t, "has parent") {
			s.parent = key[:32] + hexID(16, "parent")
		}
		s.code = 2
		for range rapid.IntRange(0, 2).Draw(t, "events") {
			s.events = append(s.events, spanEvent{name: rapid.String().Draw(t, "event"), attrs: attrs("event")})
		}
		for range rapid.IntRange(0, 2).Draw(t, "links") {
			s.links = append(s.links, spanLink{key: rapid.String().Draw(t, "link"), ok: rapid.Bool().Draw(t, "ok")})
		}
		s.rows = drawRows(t)
		trace := rapid.Int32Range(0, math.MaxInt32).Draw(t, "trace index")
		rec, _ := appendSpill(nil, nil, trace, s)
		rd := &spillReader{b: rec}
		rd.uvarint()
		if got := int32(rd.uvarint()); got != trace {
			t.Fatalf("trace index %d, wrote %d", got, trace)
		}
		back, err := decodeSpill(rec, r)
		if err != nil {
			t.Fatal(err)
		}
		if back.traceHex != key[:32] || back.otlpID != key[32:] {
			t.Fatalf("ids %q %q from key %q", back.traceHex, back.otlpID, key)
		}
		back.traceHex, back.otlpID = "", ""
		// Values of other kinds are compared by their encoding (a new message is read back).
		lists := [][]spanAttr{back.attrs, s.attrs}
		for _, e := range append(back.events, s.events...) {
			lists = append(lists, e.attrs)
		}
		for _, list := range lists {
			for i := range list {
				if v := list[i].val.v; v != nil {
					b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(v)
					list[i].val.s, list[i].val.v = string(b), nil
				}
			}
		}
		if !reflect.DeepEqual(back.attrs, s.attrs) {
			t.Fatalf("attributes\n%+v\nread back as\n%+v", s.attrs, back.attrs)
		}
		back.attrs, s.attrs = nil, nil
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("span\n%+v\nread back as\n%+v", s, back)
		}
		// Any record cut short is refused, never read as another span.
		for cut := 1; cut < len(rec); cut += 1 + len(rec)/16 {
			if _, err := decodeSpill(rec[:cut], r); err == nil {
				t.Fatalf("a record cut at %d of %d bytes was read", cut, len(rec))
			}
		}
	})
}

// drawRows draws the rows an export's span may carry (nil for none), every field of any
// value.
func drawRows(t *rapid.T) *nativeRows {
	if !rapid.Bool().Draw(t, "rows") {
		return nil
	}
	i64, i32 := rapid.Int64(), rapid.Int32()
	text := rapid.String()
	f64 := rapid.Float64()
	var n nativeRows
	for range rapid.IntRange(0, 2).Draw(t, "investigations") {
		n.invs = append(n.invs, record.Investigation{InvestigationID: i64.Draw(t, "id"), ParentID: i64.Draw(t, "parent"),
			RootID: i64.Draw(t, "root"), Depth: i32.Draw(t, "depth"), ArrivedAt: i64.Draw(t, "arrived"), Ended: rapid.Bool().Draw(t, "ended"),
			EndedAt: i64.Draw(t, "ended at"), FinalState: text.Draw(t, "final"), TerminationReason: text.Draw(t, "reason"),
			Steps: i32.Draw(t, "steps"), Attempts: i32.Draw(t, "attempts"), Revisions: i32.Draw(t, "revisions"),
			Escalations: i32.Draw(t, "escalations"), Tokens: i64.Draw(t, "tokens"), Compute: f64.Draw(t, "compute"),
			TrulyValid: rapid.Bool().Draw(t, "truly valid"), Validated: rapid.Bool().Draw(t, "validated"),
			Crashes: i32.Draw(t, "crashes"), Scope: text.Draw(t, "scope")})
		n.invRows = append(n.invRows, i64.Draw(t, "row"))
	}
	for range rapid.IntRange(0, 3).Draw(t, "transitions") {
		n.trans = append(n.trans, record.Transition{InvestigationID: i64.Draw(t, "id"), At: i64.Draw(t, "at"),
			From: text.Draw(t, "from"), To: text.Draw(t, "to"), Event: text.Draw(t, "event"), FailureClass: text.Draw(t, "class"),
			Action: text.Draw(t, "action"), DecidedBy: text.Draw(t, "decided by"), Reason: text.Draw(t, "reason"), Attempt: i32.Draw(t, "attempt")})
		n.transRows = append(n.transRows, i64.Draw(t, "row"))
	}
	for range rapid.IntRange(0, 2).Draw(t, "executions") {
		n.execs = append(n.execs, record.Execution{Tool: text.Draw(t, "tool"), InvestigationID: i64.Draw(t, "id"),
			OpKey:     record.OpKey{Investigation: i64.Draw(t, "key investigation"), Step: i32.Draw(t, "step"), Revision: i32.Draw(t, "revision")},
			Execution: i32.Draw(t, "execution"), Start: i64.Draw(t, "start"), End: i64.Draw(t, "end"), Outcome: text.Draw(t, "outcome"),
			Delivered: rapid.Bool().Draw(t, "delivered"), Compute: f64.Draw(t, "compute"), SideEffects: rapid.Bool().Draw(t, "side effects")})
		n.execRows = append(n.execRows, i64.Draw(t, "row"))
	}
	if n.invs == nil && n.trans == nil && n.execs == nil {
		return nil
	}
	return &n
}

// A sub-agent in a trace of its own, linked to the tool call that started it, is joined to
// its parent run when the two traces land in different parts by their spans alone; an
// exporter's second copy of a span is dropped in parts as it is at once.
func TestSpilledImportJoinsLinkedTraces(t *testing.T) {
	top, call, sub := linkedAgent()
	other := mkSpan(3, 1, 0, "invoke_agent other", 5, 30, map[string]any{"gen_ai.operation.name": "invoke_agent"})
	path := filepath.Join(t.TempDir(), "traces.binpb")
	writeRequest(t, path, sub, other, top, call, call)
	shape := func(db *DB) string {
		return fmt.Sprint(query(t, db, "SELECT depth, parent_id IS NOT NULL, arrived_at FROM investigations ORDER BY arrived_at")) + " " +
			fmt.Sprint(queryInt(t, db, "SELECT count(*) FROM spans WHERE operation = 'execute_tool'"), " tool spans")
	}
	whole, _ := importInto(t, []string{path}, ImportOptions{})
	withSpillSpans(t, 1)
	parts, res := importInto(t, []string{path}, ImportOptions{})
	if got := res.Runs[0].Parts; got != 2 {
		t.Errorf("%d parts, want 2: traces 1 and 2 together, trace 3 alone", got)
	}
	if a, b := shape(parts), shape(whole); a != b || !strings.Contains(b, "1 true") || !strings.HasSuffix(b, " 1 tool spans") {
		t.Errorf("investigations in parts: %s\nat once: %s\n(want the sub-agent at depth 1 and one tool span)", a, b)
	}
}

// A session id joins into one group only traces whose times overlap: a conversation whose
// turns are traces one after another is a part per turn when spilled, not one part that
// holds them all, and a turn that began while another ran still joins it as its sub-agent.
func TestSpilledImportSessionsByTime(t *testing.T) {
	agent := func(trace byte, start, end float64) *tracepb.Span {
		return mkSpan(trace, 1, 0, "invoke_agent a", start, end, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "chat-1"})
	}
	path := filepath.Join(t.TempDir(), "turns.binpb")
	// four turns one after another; the fifth begins while the fourth runs
	writeRequest(t, path, agent(1, 0, 10), agent(2, 20, 30), agent(3, 40, 50), agent(4, 60, 70), agent(5, 65, 68))
	shape := func(db *DB) string {
		return fmt.Sprint(query(t, db, "SELECT depth, arrived_at FROM investigations ORDER BY arrived_at"))
	}
	whole, _ := importInto(t, []string{path}, ImportOptions{})
	withSpillSpans(t, 1)
	parts, res := importInto(t, []string{path}, ImportOptions{})
	if got := res.Runs[0].Parts; got != 4 {
		t.Errorf("%d parts, want 4: a part per turn, the fifth with the fourth", got)
	}
	if a, b := shape(parts), shape(whole); a != b || strings.Count(b, "[1 ") != 1 {
		t.Errorf("investigations in parts: %s\nat once: %s\n(want one sub-agent, the fifth turn)", a, b)
	}
}

// An import refused after it began to spill (a bad span in a later file) leaves no spill
// behind, and says what was wrong with the input.
func TestSpilledImportRefusedLeavesNothing(t *testing.T) {
	agent := map[string]any{"gen_ai.operation.name": "invoke_agent"}
	dir := t.TempDir()
	writeRequest(t, filepath.Join(dir, "a.binpb"), mkSpan(1, 1, 0, "invoke_agent a", 0, 10, agent), mkSpan(2, 1, 0, "invoke_agent b", 1, 10, agent),
		mkSpan(3, 1, 0, "invoke_agent c", 2, 10, agent))
	bad := mkSpan(4, 1, 0, "invoke_agent d", 5, 10, agent)
	bad.EndTimeUnixNano = bad.StartTimeUnixNano - 1
	writeRequest(t, filepath.Join(dir, "b.binpb"), bad)
	tmp := withSpillSpans(t, 1)
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Import(context.Background(), db, []string{dir}, ImportOptions{})
	if !errors.Is(err, ErrBadTraceInput) || !strings.Contains(err.Error(), "b.binpb") {
		t.Fatalf("import: %v, want the bad span of b.binpb refused", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the refused import left %d entries in the temporary folder (%s...)", len(left), left[0].Name())
	}
}

// Any bytes at all read as a spill record are a span or an error, never a panic.
func TestSpillDecodeAnyBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &inRun{byKey: map[string]*inSpan{}, convs: map[string]int64{}}
		b := rapid.SliceOf(rapid.Byte()).Draw(t, "record")
		if s, err := decodeSpill(b, r); err == nil && len(s.key) != 48 {
			t.Fatalf("a record read as a span with key %q", s.key)
		}
	})
}

// A spill file's records come back through its compression in order, across blocks; a
// file damaged anywhere (a byte flipped, the end cut) is refused as a corrupt spill, never
// read as other records.
func TestSpillFileRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.spill")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := newSpillWriter(f, 4<<10) // small blocks: records cross them
	var want [][]byte
	for i := range 400 {
		body := []byte(strings.Repeat(fmt.Sprintf("record %d ", i), 1+i%37))
		rec := append(binaryUvarint(len(body)+1), byte(i%100))
		rec = append(rec, body...)
		want = append(want, rec)
		if _, err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	read := func(data []byte) ([][]byte, error) {
		rd := newSpillReader(strings.NewReader(string(data)), 1<<10)
		var got [][]byte
		var buf []byte
		for {
			tr, rec, err := readSpillRecord(rd, &buf)
			if err == io.EOF {
				return got, nil
			}
			if err != nil {
				return got, err
			}
			if int(tr) != len(got)%100 {
				return got, fmt.Errorf("record %d of trace %d", len(got), tr)
			}
			got = append(got, slices.Clone(rec))
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := read(data)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d of %d records, err %v", len(got), len(want), err)
	}
	if len(data) > len(slices.Concat(want...))/2 {
		t.Errorf("a spill of repeated text takes %d bytes for %d: not compressed", len(data), len(slices.Concat(want...)))
	}
	for _, at := range []int{len(data) / 3, len(data) / 2, len(data) - 5} {
		bad := slices.Clone(data)
		bad[at] ^= 0x5a
		if _, err := read(bad); !errors.Is(err, errSpillCorrupt) {
			t.Errorf("a byte flipped at %d of %d: %v, want a corrupt spill", at, len(data), err)
		}
	}
	if _, err := read(data[:len(data)*2/3]); !errors.Is(err, errSpillCorrupt) {
		t.Errorf("a file cut at two thirds: %v, want a corrupt spill", err)
	}
}

func binaryUvarint(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }

// A chunked spill reads back, chunk by chunk, the records written to it, in order, each
// with its trace index; a chunk longer than spillChunkSize holds one record. A byte
// flipped anywhere in a chunk (its header or its compressed records), or a file cut short,
// is refused as a corrupt spill, never read as other records.
func TestSpillChunks(t *testing.T) {
	old := spillChunkSize
	spillChunkSize = 1 << 10
	t.Cleanup(func() { spillChunkSize = old })
	f, err := os.Create(filepath.Join(t.TempDir(), "x.spill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := spillChunks{f: f}
	var want [][]byte
	var chunkOf []int32
	for i := range 400 {
		body := []byte(strings.Repeat(fmt.Sprintf("record %d ", i), 1+i%37))
		if i == 200 {
			body = bytes.Repeat([]byte("long "), 1000) // past the chunk size
		}
		rec := append(binaryUvarint(len(body)+1), byte(i%100))
		rec = append(rec, body...)
		if err := c.add(rec); err != nil {
			t.Fatal(err)
		}
		want, chunkOf = append(want, rec), append(chunkOf, c.filling())
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	if n := c.filling(); n < 20 || chunkOf[len(chunkOf)-1] != n-1 {
		t.Fatalf("%d chunks, the last record in chunk %d: want many, the last one", n, chunkOf[len(chunkOf)-1])
	}
	if chunkOf[199] == chunkOf[200] || chunkOf[200] == chunkOf[201] {
		t.Errorf("the long record shares a chunk")
	}
	readAll := func() ([][]byte, []int32, error) {
		r := chunkReader{c: &c}
		var got [][]byte
		var in []int32
		for i := range c.filling() {
			recs, err := r.read(i)
			if err != nil {
				return got, in, err
			}
			err = eachRecord(recs, func(tr int32, rec []byte) error {
				if int(tr) != len(got)%100 {
					return fmt.Errorf("record %d of trace %d", len(got), tr)
				}
				got, in = append(got, slices.Clone(rec)), append(in, i)
				return nil
			})
			if err != nil {
				return got, in, err
			}
		}
		return got, in, nil
	}
	got, in, err := readAll()
	if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(in, chunkOf) {
		t.Fatalf("read back %d of %d records, err %v", len(got), len(want), err)
	}
	if c.size > int64(len(slices.Concat(want...))/2) {
		t.Errorf("a spill of repeated text takes %d bytes for %d: not compressed", c.size, len(slices.Concat(want...)))
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{0, 5, c.at[3] + 2, c.at[7] + chunkHead + 3, c.size - 1} {
		bad := slices.Clone(data)
		bad[at] ^= 0x5a
		if _, err := f.WriteAt(bad, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readAll(); !errors.Is(err, errSpillCorrupt) {
			t.Errorf("a byte flipped at %d of %d: %v, want a corrupt spill", at, len(data), err)
		}
	}
	if err := f.Truncate(c.size * 2 / 3); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAll(); !errors.Is(err, errSpillCorrupt) {
		t.Errorf("a file cut at two thirds: %v, want a corrupt spill", err)
	}
}

// Parts are read from the chunks when their ranges of chunks read the spill at most
// directScan times: traces sent one after another (each part's chunks its own) are; traces
// whose spans are spread over the whole spill (each part's range every chunk) are cut into
// files instead. A trace only linked to (no spans) belongs to no part.
func TestSpillReadInPlaceChoice(t *testing.T) {
	spill := func(lo, hi []int32, chunks int) *spillRun {
		sp := &spillRun{chunks: spillChunks{at: make([]int64, chunks)}, lo: lo, hi: hi}
		for i := range lo {
			sp.first, sp.join = append(sp.first, int64(i)), append(sp.join, int32(i))
		}
		return sp
	}
	partOf := map[int32]int{0: 0, 1: 0, 2: 1, 3: 1, 4: 1}
	// In turn: traces 0 and 1 in chunks 0-1, 2 and 3 in chunks 2-3, trace 4 linked only.
	sp := spill([]int32{0, 1, 2, 2, math.MaxInt32}, []int32{1, 1, 3, 3, -1}, 4)
	parts := make([]spillPart, 2)
	if !sp.readInPlace(parts, partOf, directScan) {
		t.Errorf("traces sent in turn: cut into files, want read in place")
	}
	if parts[0].first != 0 || parts[0].last != 1 || parts[1].first != 2 || parts[1].last != 3 {
		t.Errorf("chunk ranges %+v, want 0-1 and 2-3", parts)
	}
	if want := []int32{0, 0, 1, 1, -1}; !reflect.DeepEqual(sp.partOf, want) {
		t.Errorf("traces' parts %v, want %v", sp.partOf, want)
	}
	// Spread: every trace has spans from the first chunk to the last, three parts read the
	// spill three times.
	sp = spill([]int32{0, 0, 0, 0, math.MaxInt32}, []int32{3, 3, 3, 3, -1}, 4)
	if sp.readInPlace(make([]spillPart, 3), map[int32]int{0: 0, 1: 1, 2: 2, 3: 2, 4: 2}, directScan) || sp.partOf != nil {
		t.Errorf("traces spread over the spill: read in place, want cut into files")
	}
	// At the bound: two parts of three chunks each over a spill of three chunks reads it twice.
	sp = spill([]int32{0, 0, 0, 0, math.MaxInt32}, []int32{2, 2, 2, 2, -1}, 3)
	if !sp.readInPlace(make([]spillPart, 2), partOf, directScan) {
		t.Errorf("a spill read twice over: cut into files, want read in place (directScan %v)", directScan)
	}
}

// A run whose parts of smallPartSpans spans read the spill in place at most smallScan
// times is cut into them; one whose small parts would read more (traces each spread over
// several chunks) is cut into parts of partSpans, read in place when those stay within
// directScan, and otherwise cut into files of parts of filedPartSpans: small parts, unless
// they would open more than maxPartFiles files, and never larger than partSpans.
func TestSpillPartSizeChoice(t *testing.T) {
	if smallPartSpans*2 > partSpans() {
		t.Fatalf("smallPartSpans %d is not below half of partSpans %d: the choice is not made", smallPartSpans, partSpans())
	}
	const traces, per = 64, smallPartSpans / 8 // 8 traces a small part
	spill := func(spread int32) *spillRun {
		sp := &spillRun{chunks: spillChunks{at: make([]int64, traces+int(spread))}}
		for i := range int32(traces) {
			sp.first, sp.count, sp.join = append(sp.first, int64(i)), append(sp.count, per), append(sp.join, i)
			sp.lo, sp.hi = append(sp.lo, i), append(sp.hi, i+spread)
		}
		return sp
	}
	sizes := func(parts []spillPart) (n []int64) {
		for _, p := range parts {
			n = append(n, p.spans)
		}
		return n
	}
	// In turn, each trace in a chunk of its own: small parts read the spill once.
	parts, _, inPlace := spill(0).cut()
	if !inPlace || len(parts) != traces/8 || parts[0].spans != smallPartSpans {
		t.Errorf("traces in turn: parts of %v (in place %v), want %d of %d", sizes(parts), inPlace, traces/8, smallPartSpans)
	}
	// Each trace over 8 chunks: the 8 small parts read 8 + 7 chunks each (120 of 71 chunks,
	// 1.69 > smallScan); parts of partSpans (25,000 spans: 25, 25 and 14 traces) read 32,
	// 32 and 21 chunks (1.20, within directScan).
	parts, _, inPlace = spill(7).cut()
	big := partSpans() / per * per
	if !inPlace || len(parts) != 3 || parts[0].spans != big {
		t.Errorf("traces over 7 chunks: parts of %v (in place %v), want 3 read in place, the first of %d", sizes(parts), inPlace, big)
	}
	// Each trace over 193 of 256 chunks: parts of partSpans read 217, 217 and 206 chunks
	// (2.5 > directScan), small parts more: files of small parts.
	parts, _, inPlace = spill(traces * 3).cut()
	if inPlace || len(parts) != traces/8 || parts[0].spans != smallPartSpans {
		t.Errorf("traces over the whole spill: parts of %v (in place %v), want %d of %d cut into files", sizes(parts), inPlace, traces/8, smallPartSpans)
	}
	// The files' parts grow past smallPartSpans only to keep to maxPartFiles files, and
	// never past partSpans.
	for _, c := range []struct{ spans, want int64 }{
		{1000, smallPartSpans},
		{maxPartFiles * smallPartSpans, smallPartSpans},
		{maxPartFiles*smallPartSpans + 1, smallPartSpans + 1},
		{maxPartFiles * partSpans() * 4, partSpans()},
	} {
		groups := []*traceGroup{{spans: c.spans / 2}, {spans: c.spans - c.spans/2}}
		if got := filedPartSpans(groups); got != c.want {
			t.Errorf("%d spans: parts of %d for files, want %d", c.spans, got, c.want)
		}
	}
}

// A run of plain spans takes its groups of traces in order of their first start; a mayday
// export's in the order they were read (its roots' id order), however late a root's first
// span started (one that waited for a worker).
func TestSpillGroupsOrder(t *testing.T) {
	for _, byReading := range []bool{false, true} {
		sp := &spillRun{traceIdx: map[[16]byte]int32{}, byReading: byReading}
		for i, start := range []int64{30, 10, 20} {
			x := sp.trace(fmt.Sprintf("%032x", i+1))
			sp.first[x], sp.count[x] = start, 1
		}
		var roots []int32
		for _, g := range sp.groups() {
			roots = append(roots, g.root)
		}
		want := []int32{1, 2, 0}
		if byReading {
			want = []int32{0, 1, 2}
		}
		if !slices.Equal(roots, want) {
			t.Errorf("byReading %v: groups %v, want %v", byReading, roots, want)
		}
	}
}

// The slots in front of a run's shared strings never answer with another string: texts of
// every length up to past maxInternLen, many of them in the same slot (the same length and
// first and last eight bytes, or all eight bytes of a short text), interned as strings and
// as bytes, come back equal to themselves, and a text shared once comes back as the same
// copy.
func TestInternRecentSlots(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &inRun{}
		mid := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "ab", ""}), 1, 20).Draw(t, "middles")
		var texts []string
		for range rapid.IntRange(1, 60).Draw(t, "texts") {
			head := rapid.StringMatching(`[xy]{0,9}`).Draw(t, "head")
			text := head + rapid.SampledFrom(mid).Draw(t, "middle") + "-tail-end"
			if rapid.Bool().Draw(t, "long") {
				text += strings.Repeat("z", maxInternLen)
			}
			texts = append(texts, text)
		}
		first := map[string]string{}
		for _, text := range texts {
			var got string
			if rapid.Bool().Draw(t, "bytes") {
				got = r.internBytes([]byte(text))
			} else {
				got = r.intern(text)
			}
			if got != text {
				t.Fatalf("intern(%q) = %q", text, got)
			}
			if len(text) > maxInternLen {
				continue
			}
			if f, ok := first[text]; ok && unsafe.StringData(f) != unsafe.StringData(got) {
				t.Fatalf("intern(%q) made a second copy", text)
			}
			first[text] = got
		}
	})
}

// partText gives back each text as it was, whatever becomes of the bytes it was read from
// and of the strings made after it: texts of every length around a block's quarter and
// its whole, read from one scratch buffer overwritten between calls, as a spill's records
// are. Short strings share a block; longer ones than a quarter of it are their own.
func TestPartTextKeepsEveryString(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &inRun{}
		var scratch []byte
		var texts, got []string
		for range rapid.IntRange(1, 200).Draw(t, "texts") {
			n := rapid.SampledFrom([]int{0, 1, 47, 65, 4096, partTextBlock/4 - 1, partTextBlock / 4, partTextBlock/4 + 1, partTextBlock}).Draw(t, "length")
			text := strings.Repeat(rapid.StringMatching(`[a-z]{1,7}`).Draw(t, "unit"), n+1)[:n]
			scratch = append(scratch[:0], text...)
			got = append(got, r.partText(scratch))
			texts = append(texts, text)
			for i := range scratch {
				scratch[i] = '#'
			}
		}
		for i, text := range texts {
			if got[i] != text {
				t.Fatalf("text %d of %d bytes changed", i, len(text))
			}
		}
	})
	r := &inRun{}
	a, b := r.partText([]byte("first")), r.partText([]byte("second"))
	if unsafe.StringData(b) != (*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(a)), len(a))) {
		t.Errorf("two short texts of a part are not in one block")
	}
}

// A part's arena hands out zero elements, from blocks given back by parts released before
// it (cleared) or new ones, never from a block a part still in use holds; a list longer
// than a block is a block of its own, not kept.
func TestArenaBlocksGivenBack(t *testing.T) {
	var pool freeSlabs[spanAttr]
	var a, b arena[spanAttr]
	first := a.take(&pool, 3, arenaBlock)
	for i := range first {
		first[i] = spanAttr{key: "k", val: attrValue{s: "v", kind: attrString}}
	}
	for range arenaBlock {
		a.take(&pool, 1, arenaBlock)[0].key = "filled"
	}
	long := a.take(&pool, arenaBlock+1, arenaBlock)
	if len(a.taken) != 2 || cap(long) != arenaBlock+1 {
		t.Fatalf("blocks taken %d, the long list's capacity %d: want 2 and %d", len(a.taken), cap(long), arenaBlock+1)
	}
	held := b.take(&pool, 1, arenaBlock) // b's part is still in use
	held[0].key = "held"
	a.giveBack(&pool, maxPoolBlocks, true)
	if len(pool.slabs) != 2 {
		t.Fatalf("the pool kept %d blocks, want the 2 full-size ones", len(pool.slabs))
	}
	var c arena[spanAttr]
	for range 2 * arenaBlock {
		if e := c.take(&pool, 1, arenaBlock)[0]; e != (spanAttr{}) {
			t.Fatalf("a block given back handed out %+v, want a zero element", e)
		}
	}
	if held[0].key != "held" || len(pool.slabs) != 0 {
		t.Fatalf("the part in use holds %q, the pool %d blocks: want \"held\" and 0", held[0].key, len(pool.slabs))
	}
}

// A session id read from a span is a part of its request, whose memory is read into again
// for later requests: the spill keeps each session's traces under a key of its own. Before,
// adding a second trace assigned to the map, which stored the span's id, a part of the
// request, in the key's place; once the request's memory was read into again, the session
// was found no more, split in two, and an import of a large fleet's traces was cut into
// other parts from run to run (the LangGraph fixture copied 100 times).
func TestSpillSessionsOutliveTheirRequests(t *testing.T) {
	sp, err := newSpillRun(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	cv := &convention{Session: []string{"session.id"}}
	request := []byte("conversation-42") // the id as a request holds it
	span := func(trace byte, id string) *inSpan {
		th := strings.Repeat(string(trace), 32)
		return &inSpan{traceHex: th, key: th + "0000000000000001", cv: cv, start: 1, end: 2,
			attrs: []spanAttr{{key: "session.id", val: attrValue{kind: attrString, s: id}}}}
	}
	inRequest := unsafe.String(&request[0], len(request))
	for _, tr := range []byte{'a', 'b'} {
		if err := sp.add(span(tr, inRequest)); err != nil {
			t.Fatal(err)
		}
	}
	copy(request, "something-else!") // the request's memory read into again
	if err := sp.add(span('c', strings.Clone("conversation-42"))); err != nil {
		t.Fatal(err)
	}
	if len(sp.sessions) != 1 {
		t.Fatalf("%d sessions, want the one all three traces named", len(sp.sessions))
	}
	for id, ts := range sp.sessions {
		if id != "conversation-42" || len(*ts) != 3 {
			t.Fatalf("session %q holds traces %v, want conversation-42 with 3", id, *ts)
		}
	}
}
