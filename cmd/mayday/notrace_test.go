//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --no-trace computes the summary a run folder gets (the same digest; the same metrics,
// computed in Go from the records instead of by the views: equal to the last bits of a sum
// of floats, see sameJSON), prints it, and writes nothing to disk.
func TestRunNoTraceMatchesRunFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	args := []string{"run", "shared-outage", "--set", "workload.investigations=300", "--seeds", "2", "--format", "json"}
	stdout, stderr, code := execMayday(t, append(args, "--no-trace")...)
	if code != 0 {
		t.Fatalf("run --no-trace: exit %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("run --no-trace wrote %d entries (first %s); want none", len(entries), entries[0].Name())
	}
	folder := filepath.Join(dir, "kept")
	if _, stderr, code := execMayday(t, append(args, "--out", folder)...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var fast, kept map[string]any
	if err := json.Unmarshal([]byte(stdout), &fast); err != nil {
		t.Fatalf("run --no-trace printed no JSON summary: %v\n%s", err, stdout)
	}
	b, err := os.ReadFile(filepath.Join(folder, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &kept); err != nil {
		t.Fatal(err)
	}
	for _, sum := range []map[string]any{fast, kept} { // the wall time is the one honest difference
		if seeds, ok := sum["seeds"].([]any); ok {
			for _, sd := range seeds {
				delete(sd.(map[string]any), "wall_seconds")
			}
		}
	}
	for _, k := range []string{"digest", "metrics", "seeds", "status", "intervals"} {
		if kept[k] != nil && !sameJSON(fast[k], kept[k]) {
			f, _ := json.Marshal(fast[k])
			g, _ := json.Marshal(kept[k])
			t.Errorf("%s differs:\n  --no-trace %s\n  run folder %s", k, f, g)
		}
	}
	if kept["metrics"] == nil || kept["digest"] == nil {
		t.Fatalf("the run folder's summary has no metrics or digest: %s", b)
	}
	if _, stderr, code := execMayday(t, "run", "shared-outage", "--no-trace", "--out", "x"); code != 2 {
		t.Errorf("run --no-trace --out: exit %d, want 2: %s", code, stderr)
	}
}

// On a terminal, run names the steps after the simulation, in order, so none is silent.
func TestRunProgressShowsEveryPhase(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Terminal: true})
	root.SetArgs([]string{"run", "transient-errors", "--set", "workload.investigations=200", "--out", filepath.Join(t.TempDir(), "run"), "-q=false"})
	if err := runRoot(context.Background(), root); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := errOut.String()
	last := -1
	for _, phase := range []string{"investigations", "computing the metrics", "committing the trace"} {
		i := strings.Index(got, phase)
		if i < 0 || i < last {
			t.Errorf("progress lacks %q after the phases before it:\n%q", phase, got)
		}
		last = i
	}
}

// sameJSON reports whether two decoded JSON values are equal, numbers to a relative 1e-9:
// the metrics computed in Go add floats (compute, money) in another order than DuckDB, which
// changes only the last bits (analysis.computeRelTol explains the bound).
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if w, ok := bm[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], bs[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(a-y) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(y)))
	default:
		return a == b
	}
}
