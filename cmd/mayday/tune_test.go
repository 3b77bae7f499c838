//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTuneFile(t *testing.T, dir string) tuneFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, TuneFile))
	if err != nil {
		t.Fatal(err)
	}
	var f tuneFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// A search interrupted after a few runs keeps them (exit 130, tune.json marked incomplete);
// --resume goes on and ends with the folder an uninterrupted search writes, byte for byte.
func TestTuneInterruptResume(t *testing.T) {
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	out, errOut, code := execMayday(t, "tune", "testdata/tune.yaml", "--out", whole, "--jobs", "2")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "recommended: recovery.retry.max_attempts=2") {
		t.Errorf("output:\n%s", out)
	}
	ctx := cancelAfterRuns(t, 3)
	if _, errOut, code := execMaydayCtx(t, ctx, "tune", "testdata/tune.yaml", "--out", part, "--jobs", "1", "-q"); code != 130 || !strings.Contains(errOut, "--resume "+part) {
		t.Fatalf("interrupted tune: exit %d: %s", code, errOut)
	}
	if f := readTuneFile(t, part); f.Complete || f.Runs < 1 || f.Runs >= readTuneFile(t, whole).Runs {
		t.Fatalf("interrupted tune.json: complete %v, %d runs", f.Complete, f.Runs)
	}
	testHookRunDone = nil
	if _, errOut, code := execMayday(t, "tune", "--resume", part, "-q"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	for _, name := range []string{TuneFile, tuneSetFile, tunePatchFile, tuneReportFile, tuneChartFile} {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, _ := os.ReadFile(filepath.Join(part, name))
		if string(a) != string(b) || len(a) == 0 {
			t.Errorf("%s differs between the whole and the resumed search:\n%s\n---\n%s", name, a, b)
		}
	}
	set, _ := os.ReadFile(filepath.Join(whole, tuneSetFile))
	if string(set) != "--set recovery.retry.max_attempts=2\n" {
		t.Errorf("recommended.set = %q", set)
	}
	patched, _ := os.ReadFile(filepath.Join(whole, tunePatchFile))
	if !strings.Contains(string(patched), "max_attempts: 2") {
		t.Errorf("recommended.yaml:\n%s", patched)
	}
}

// Bad input exits 2 and writes nothing.
func TestTuneBadInput(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "t")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tune", "testdata/sweep.yaml", "--out", dir}, "no tune block"},
		{[]string{"tune", "testdata/tune.yaml", "--out", dir, "--budget", "0"}, "--budget"},
		{[]string{"tune", "testdata/tune.yaml", "--out", dir, "--maximize", "completion"}, "not a metric"},
		{[]string{"tune", "testdata/tune.yaml", "--out", dir, "--subject-to", "retry_amplification=2"}, "--subject-to"},
		{[]string{"tune", "testdata/tune.yaml", "--out", dir, "--seeds", "1"}, "--seeds"},
		{[]string{"tune", "--resume", filepath.Join(root, "none")}, "--resume"},
		{[]string{"tune", "--resume", root, "--maximize", "completion_rate"}, "keeps its settings"},
		{[]string{"tune", "testdata/tune.yaml", "--set", "tune.budget=3", "--out", dir}, "cannot be overridden"},
	} {
		_, errOut, code := execMayday(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%v wrote %s", tc.args, dir)
		}
	}
}

// A search planned round by round (--plan), each round run as a sweep in two shards, merged
// and read back (--resume --results), ends with the folder a search on one machine writes.
func TestTuneRoundsAsSweeps(t *testing.T) {
	root := t.TempDir()
	whole, plan := filepath.Join(root, "whole"), filepath.Join(root, "plan")
	if _, errOut, code := execMayday(t, "tune", "testdata/tune.yaml", "--out", whole, "-q"); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	args := []string{"tune", "testdata/tune.yaml", "--out", plan, "--plan"}
	for round := 1; ; round++ {
		out, errOut, code := execMayday(t, args...)
		if code != 0 {
			t.Fatalf("round %d: %v: exit %d: %s", round, args, code, errOut)
		}
		f := readTuneFile(t, plan)
		if f.Round == nil {
			break
		}
		if round > 8 || !strings.Contains(out, "mayday sweep") {
			t.Fatalf("round %d: %s", round, out)
		}
		file := filepath.Join(plan, f.Round.File)
		var shards []string
		for i := 1; i <= 2; i++ {
			shard := filepath.Join(root, fmt.Sprintf("r%d-shard%d", round, i))
			if _, errOut, code := execMayday(t, "sweep", file, "--seed", fmt.Sprint(f.Round.Seed), "--seeds", fmt.Sprint(f.Round.Seeds),
				"--shard", fmt.Sprintf("%d/2", i), "--out", shard, "-q"); code != 0 {
				t.Fatalf("round %d shard %d: exit %d: %s", round, i, code, errOut)
			}
			shards = append(shards, shard)
		}
		merged := filepath.Join(root, fmt.Sprintf("r%d-merged", round))
		if _, errOut, code := execMayday(t, append([]string{"merge", merged}, shards...)...); code != 0 {
			t.Fatalf("round %d merge: exit %d: %s", round, code, errOut)
		}
		args = []string{"tune", "--resume", plan, "--results", merged, "--plan"}
	}
	for _, name := range []string{TuneFile, tuneSetFile, tunePatchFile} {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, _ := os.ReadFile(filepath.Join(plan, name))
		if string(a) != string(b) || len(a) == 0 {
			t.Errorf("%s differs between one machine and sweeps:\n%s\n---\n%s", name, a, b)
		}
	}
}
