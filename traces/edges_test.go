package traces

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// Schema refuses the first number past the last table with its own message, not with the
// runtime's index error.
func TestSchemaPastLastTable(t *testing.T) {
	for _, tb := range []Table{numTables, -1} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "traces: no table") {
					t.Errorf("Schema(%d) panicked with %v, want \"traces: no table\"", int(tb), msg)
				}
			}()
			Schema(tb)
		}()
	}
	if s := Schema(numTables - 1); s == nil {
		t.Error("Schema of the last table is nil")
	}
}

// A credential after an authorization scheme is redacted also when the text starts with a
// space (the first space at index 0).
func TestSchemeAfterLeadingSpace(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	for _, in := range []string{" Bearer opaque123", "  basic opaque123 more"} {
		if got := r.Text(in); strings.Contains(got, "opaque123") {
			t.Errorf("Text(%q) = %q: the credential is kept", in, got)
		}
	}
}

// A credential after an authorization scheme is redacted after several spaces too, and
// after an earlier scheme with nothing after it (the search goes on past an empty value);
// a scheme at the very end of the text is kept as it is.
func TestSchemeSpacesAndEmptyValues(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	for _, in := range []string{"auth Bearer   opaque123", "Bearer , then Bearer opaque123", "basic ;basic opaque123 x"} {
		got := r.Text(in)
		if strings.Contains(got, "opaque123") || !strings.Contains(got, RedactedPrefix) {
			t.Errorf("Text(%q) = %q: the credential is kept", in, got)
		}
	}
	for _, in := range []string{"sent with Bearer ", "Basic  ", "bearer , basic ;"} {
		if got := r.Text(in); got != in {
			t.Errorf("Text(%q) = %q, want it unchanged", in, got)
		}
	}
}

// A key/value pair is a pair whichever of its two members comes first.
func TestJSONPairValueFirst(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	in := `{"value":"hunter2","key":"db_password"}`
	want := `{"value":"` + r.Hash("hunter2") + `","key":"db_password"}`
	if got := r.JSON(in); got != want {
		t.Errorf("JSON(%s)\n = %s\nwant %s", in, got, want)
	}
	in = `{"values":["a1","b2"],"path":"tools.db.arguments.api_key"}`
	want = `{"values":["` + r.Hash("a1") + `","` + r.Hash("b2") + `"],"path":"tools.db.arguments.api_key"}`
	if got := r.JSON(in); got != want {
		t.Errorf("JSON(%s)\n = %s\nwant %s", in, got, want)
	}
}

// A sweep axis's path is judged by its last key alone: a pattern that spans the dot before
// it does not make the value secret, and a path that starts with a dot has a last key.
func TestLastSegment(t *testing.T) {
	for in, want := range map[string]string{"a.b.c": "c", ".x": "x", "x": "x", "x.": "", "tools.db.arguments.api_key": "api_key"} {
		if got := lastSegment(in); got != want {
			t.Errorf("lastSegment(%q) = %q, want %q", in, got, want)
		}
	}
	r := NewRedactor(nil, []string{"b.c"}, nil) // an extra pattern holding a dot
	in := `{"path":"a.b.c","values":["v1"]}`
	if got := r.JSON(in); got != in {
		t.Errorf("JSON(%s) = %s: the last key c is not secret", in, got)
	}
}

// A retry budget with exactly no tokens left is 0 in budget_tokens, not NULL (NULL is a tool
// without a budget).
func TestSampleBudgetOfZero(t *testing.T) {
	s := newKeepingSink(t)
	w, _ := NewWriter("run-1", Options{}, s.emit)
	w.Sample(&record.Sample{Tool: "x", BudgetTokens: 0, BreakerState: "off"})
	w.Sample(&record.Sample{Tool: "y", BudgetTokens: 1, BreakerState: "off"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []any{int64(0), int64(1)} {
		got := rowOf(t, s.keep[ToolSamples][0], i)["budget_tokens"]
		if f, ok := got.(float64); ok {
			got = int64(f)
		}
		if got != want {
			t.Errorf("sample %d budget_tokens = %#v, want %v", i, got, want)
		}
	}
}

// The cache of redacted values holds at most maxCached of them; a value hashed once it is
// full is hashed the same every time.
func TestHashCacheBound(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	for i := range maxCached + 2 {
		r.Hash(strconv.Itoa(i))
	}
	if len(r.cache) != maxCached {
		t.Errorf("%d values cached after %d hashed, want %d", len(r.cache), maxCached+2, maxCached)
	}
	last := strconv.Itoa(maxCached + 1)
	if _, ok := r.cache[last]; ok {
		t.Errorf("%q cached past the bound", last)
	}
	if a, b := r.Hash(last), r.Hash(last); a != b || !Redacted(a) {
		t.Errorf("Hash(%q) = %q, then %q", last, a, b)
	}
}

// The runs row keeps a digest given with the run (a run's records digested elsewhere), and
// takes the writer's own digest of what it wrote when none is given.
func TestRunDigestGivenOrOwn(t *testing.T) {
	for _, given := range []string{"given-digest", ""} {
		s := newKeepingSink(t)
		w, _ := NewWriter("r", Options{}, s.emit)
		w.Span(&record.Span{SpanID: 1, Operation: record.OpPlan, Status: record.StatusOK})
		own := w.Digest()
		if err := w.WriteRun(Run{Digest: given}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := given
		if want == "" {
			want = own
		}
		if len(s.keep[Runs]) != 1 {
			t.Fatalf("%d runs batches", len(s.keep[Runs]))
		}
		if got := rowOf(t, s.keep[Runs][0], 0)["digest"]; got != want || want == "" {
			t.Errorf("digest %q given: runs.digest = %v, want %q", given, got, want)
		}
	}
}
