//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readHuntFile(t *testing.T, dir string) huntRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, HuntFile))
	if err != nil {
		t.Fatal(err)
	}
	var r huntRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// On a fleet that a strong brownout tips into a metastable state (no retry budget, two-thirds
// load), hunt finds a liveness violation within its budget of 8 runs and shrinks it to one
// fault, never growing the scenario; mayday check fails the shrunk scenario on the same
// metric (exit 1).
func TestHuntFindsMetastableFleet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hunt")
	out, errOut, code := execMayday(t, "hunt", "testdata/hunt.yaml", "--out", dir, "--jobs", "2")
	if code != 1 || !strings.Contains(errOut, "liveness:goodput_recovery_time") {
		t.Fatalf("hunt: exit %d; want 1\n%s\n%s", code, out, errOut)
	}
	r := readHuntFile(t, dir)
	f := r.Found
	if f == nil || f.Violation.Kind != "liveness" || r.Runs > 8 || !r.Complete {
		t.Fatalf("hunt.json: found %+v after %d runs, complete %v", f, r.Runs, r.Complete)
	}
	if f.After.Faults != 1 || f.After.Faults > f.Before.Faults || f.After.Investigations > f.Before.Investigations || f.After.Investigations > 80 {
		t.Errorf("shrunk from %+v to %+v; want one fault and no more investigations", f.Before, f.After)
	}
	if h, err := time.ParseDuration(f.After.Horizon); err != nil || h > 3*time.Hour {
		t.Errorf("shrunk horizon %q; want at most the original 3h", f.After.Horizon)
	}
	steps := 0
	for _, tr := range r.Trials {
		if tr.Phase != "swarm" && tr.Phase != "escalate" {
			steps++
		}
	}
	if steps != r.ShrinkRuns || len(r.Trials) != r.Runs+r.ShrinkRuns {
		t.Errorf("hunt.json lists %d trials, %d shrink steps; want %d runs and %d shrink runs", len(r.Trials), steps, r.Runs, r.ShrinkRuns)
	}
	found := filepath.Join(dir, r.File)
	data, err := os.ReadFile(found)
	if err != nil || !strings.HasPrefix(string(data), "# Found by mayday hunt") || !strings.Contains(string(data), "seed: ") {
		t.Fatalf("found file %s: %v\n%s", found, err, data)
	}
	out, errOut, code = execMayday(t, "check", found)
	if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, "goodput_recovery_time <= 15m") {
		t.Errorf("check of the found scenario: exit %d; want 1 on goodput_recovery_time\n%s\n%s", code, out, errOut)
	}
}

// With ample capacity the fleet survives the same envelope and budget: exit 0, the coverage
// printed; the hunt.json of --jobs 1 and --jobs 2 are the same bytes.
func TestHuntAmpleCapacityFindsNothing(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	out, errOut, code := execMayday(t, "hunt", "testdata/hunt.yaml", "--set", "tools.search.concurrency=30", "--out", a, "--jobs", "2")
	if code != 0 || !strings.Contains(out, "no violation: 8 trials drew") {
		t.Fatalf("hunt: exit %d; want 0\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := execMayday(t, "hunt", "testdata/hunt.yaml", "--set", "tools.search.concurrency=30", "--out", b, "--jobs", "1", "-q"); code != 0 {
		t.Fatalf("hunt --jobs 1: exit %d: %s", code, errOut)
	}
	x, _ := os.ReadFile(filepath.Join(a, HuntFile))
	y, _ := os.ReadFile(filepath.Join(b, HuntFile))
	if len(x) == 0 || string(x) != string(y) {
		t.Errorf("hunt.json differs between --jobs 2 and --jobs 1:\n%s\n---\n%s", x, y)
	}
	if r := readHuntFile(t, a); r.Found != nil || r.Runs != 8 || r.Coverage.Trials != 8 {
		t.Errorf("hunt.json: found %v, %d runs, coverage %+v", r.Found, r.Runs, r.Coverage)
	}
}

// Ctrl-C while a violation is being shrunk keeps it: exit 130, and the scenario written so
// far fails mayday check.
func TestHuntInterruptKeepsFound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hunt")
	ctx := cancelAfterRuns(t, 10)
	_, errOut, code := execMaydayCtx(t, ctx, "hunt", "testdata/hunt.yaml", "--out", dir, "--jobs", "1", "-q")
	if code != 130 || !strings.Contains(errOut, "a violation was found and kept") {
		t.Fatalf("interrupted hunt: exit %d: %s", code, errOut)
	}
	r := readHuntFile(t, dir)
	if r.Complete || r.Found == nil || r.Found.Complete {
		t.Fatalf("hunt.json: complete %v, found %+v", r.Complete, r.Found)
	}
	testHookRunDone = nil
	if out, _, code := execMayday(t, "check", filepath.Join(dir, r.File)); code != 1 {
		t.Errorf("check of the kept scenario: exit %d; want 1\n%s", code, out)
	}
}

// Bad input exits 2 before anything runs, and writes nothing.
func TestHuntBadInput(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, "bad.yaml")
	data, _ := os.ReadFile("testdata/hunt.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(data), "slowdown: {min: 1.2, max: 10}", "slowdown: {min: 0.5, max: 10}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"testdata/tune.yaml"}, "no hunt block"},
		{[]string{bad}, "bad.yaml:29: hunt.faults[1].slowdown: 0.5 is too small"},
		{[]string{"testdata/hunt.yaml", "--budget", "0"}, "--budget"},
		{[]string{"testdata/hunt.yaml", "--set", "hunt.max_faults=0"}, "hunt.max_faults"},
		{[]string{"testdata/hunt.yaml", "--jobs", "-1"}, "--jobs"},
		{[]string{"testdata/hunt.yaml", "-o", "json"}, "--format"},
	} {
		out := filepath.Join(root, "out")
		args := append([]string{"hunt"}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "-o") {
			args = append(args, "--out", out)
		}
		_, errOut, code := execMayday(t, args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d; want 2 with %q\n%s", c.args, code, c.want, errOut)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s was written", c.args, out)
		}
	}
}
