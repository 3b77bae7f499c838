//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

// storedRun is a runs row as the sweep tests compare them.
type storedRun struct {
	RunID, Digest string
	Seed          uint64
}

// readRuns returns the runs of the database as analysis.ListRuns lists them (grid order for
// sweep runs, stored order otherwise), with their digests.
func readRuns(t *testing.T, path string) []storedRun {
	t.Helper()
	db, err := analysis.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := analysis.ListRuns(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedRun
	for _, r := range runs {
		s := storedRun{RunID: r.RunID, Seed: r.Seed}
		if err := db.SQL().QueryRow("SELECT digest FROM runs WHERE run_id = ?", r.RunID).Scan(&s.Digest); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func queryInt(t *testing.T, path, q string) int {
	t.Helper()
	db, err := analysis.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.SQL().QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// A sweep of 3 grid points × 3 seeds stores 9 runs in one database, listed in grid order
// whatever order they finished in, and each run's digest equals that of the same scenario
// and seed run on its own, one by one: the parallel workers change nothing.
func TestSweepEqualsRunsOneByOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	out, errOut, code := execMayday(t, "sweep", "testdata/sweep.yaml", "--seeds", "3", "--out", dir, "--jobs", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	dbPath := filepath.Join(dir, analysis.DBFile)
	got := readRuns(t, dbPath)
	if len(got) != 9 {
		t.Fatalf("%d runs in the sweep database, want 9: %+v", len(got), got)
	}
	if n := queryInt(t, dbPath, "SELECT count(*) FROM sweep_params WHERE path = 'recovery.retry.max_attempts'"); n != 9 {
		t.Errorf("sweep_params has %d rows for the axis, want 9", n)
	}

	// The same 9 runs, one at a time, into one database.
	base, err := scenarios.Load("testdata/sweep.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := analysis.Create(filepath.Join(t.TempDir(), "serial.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	var want []storedRun
	for p, value := range []string{"1", "2", "5"} {
		s, err := scenarios.Load("testdata/sweep.yaml", []string{"recovery.retry.max_attempts=" + value})
		if err != nil {
			t.Fatal(err)
		}
		for seed := base.Seed; seed < base.Seed+3; seed++ {
			o, err := pipeline.Execute(context.Background(), serial, pipeline.Spec{Scenario: s, Seed: seed, RunID: analysis.SweepRunID("sweep", p, seed), Version: version})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, storedRun{RunID: o.RunID, Digest: o.Digest, Seed: seed})
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("sweep runs (ListRuns order) differ from the runs one by one:\n got %+v\nwant %+v", got, want)
	}
	// The digests differ between points: the grid did change the scenario.
	if got[0].Digest == got[3].Digest || got[3].Digest == got[6].Digest {
		t.Errorf("points 0, 1, 2 with seed 1 share a digest; the sweep values were not applied")
	}

	// The sweep's table (sweep.json), built from the metrics its runs computed while they loaded,
	// is the table read back from the stored database.
	var stored reports.SweepTable
	if b, err := os.ReadFile(filepath.Join(dir, analysis.SweepFile)); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	db, err := analysis.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	reread, err := reports.ReadSweepTable(context.Background(), db, stored.Metrics)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Both through the same JSON round trip (an undefined mean is null in the file, 0 once
	// read back).
	var rereadRows []reports.SweepPoint
	if b, err := json.Marshal(reread.Rows); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &rereadRows); err != nil {
		t.Fatal(err)
	}
	gotRows, _ := json.Marshal(stored.Rows)
	wantRows, _ := json.Marshal(rereadRows)
	// The sweep's metrics are computed in Go while each run loads, the table read back from
	// the metrics view: sums of floats may differ in the last bits (sameJSON: 1e-9 relative).
	var gotAny, wantAny any
	if err := json.Unmarshal(gotRows, &gotAny); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wantRows, &wantAny); err != nil {
		t.Fatal(err)
	}
	if len(stored.Rows) != 3 || !sameJSON(gotAny, wantAny) {
		t.Errorf("sweep.json's points differ from the table read back from the database:\n got %s\nwant %s", gotRows, wantRows)
	}

	// The table shows each point with its value, its seeds and an interval.
	if !strings.Contains(out, "recovery.retry.max_attempts") || !strings.Contains(out, "completion_rate") {
		t.Errorf("table lacks the axis or the metric:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[2], "0 ") || !strings.Contains(lines[2], "[") {
		t.Errorf("want a header, a column line and one row per point with intervals:\n%s", out)
	}
}

// Two shards of a sweep, merged, hold exactly the runs of the whole sweep in the same order
// with the same digests; merging a shard twice is refused.
func TestSweepShardsMergeIntoTheWholeSweep(t *testing.T) {
	tmp := t.TempDir()
	whole := filepath.Join(tmp, "whole")
	if _, errOut, code := execMayday(t, "sweep", "testdata/sweep.yaml", "--seeds", "2", "--out", whole, "-q"); code != 0 {
		t.Fatalf("whole sweep: exit %d\n%s", code, errOut)
	}
	var shards []string
	for i := 1; i <= 2; i++ {
		dir := filepath.Join(tmp, fmt.Sprintf("shard%d", i))
		shards = append(shards, dir)
		out, errOut, code := execMayday(t, "sweep", "testdata/sweep.yaml", "--seeds", "2", "--out", dir, "--shard", fmt.Sprintf("%d/2", i), "--format", "json")
		if code != 0 {
			t.Fatalf("shard %d/2: exit %d\n%s", i, code, errOut)
		}
		var table struct {
			Points []struct {
				Point int `json:"point"`
			} `json:"points"`
		}
		if err := json.Unmarshal([]byte(out), &table); err != nil {
			t.Fatalf("shard %d/2 JSON: %v\n%s", i, err, out)
		}
		// Round-robin: shard 1 holds points 0 and 2, shard 2 point 1.
		var points []int
		for _, p := range table.Points {
			points = append(points, p.Point)
		}
		if want := map[int][]int{1: {0, 2}, 2: {1}}[i]; !slices.Equal(points, want) {
			t.Errorf("shard %d/2 ran points %v, want %v", i, points, want)
		}
	}
	merged := filepath.Join(tmp, "merged")
	out, errOut, code := execMayday(t, "merge", merged, shards[1], shards[0])
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "merged 6 runs from 2 databases") {
		t.Errorf("merge output: %q", out)
	}
	got := readRuns(t, filepath.Join(merged, analysis.DBFile))
	want := readRuns(t, filepath.Join(whole, analysis.DBFile))
	if !slices.Equal(got, want) {
		t.Errorf("merged shards differ from the whole sweep:\n got %+v\nwant %+v", got, want)
	}
	if n := queryInt(t, filepath.Join(merged, analysis.DBFile), "SELECT count(*) FROM sweep_params"); n != 6 {
		t.Errorf("merged sweep_params: %d rows, want 6", n)
	}
	_, errOut, code = execMayday(t, "merge", filepath.Join(tmp, "dup"), shards[0], shards[0])
	if code != 2 || !strings.Contains(errOut, "shard 1/2 is given twice") {
		t.Errorf("merging a shard twice: exit %d, %q; want 2 and a message naming the shard given twice", code, errOut)
	}
}

func TestSweepBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "testdata/retried.yaml", "--out", out}, "no sweep grid"},
		{[]string{"sweep", "testdata/sweep.yaml", "--shard", "0/2", "--out", out}, "I counts from 1"},
		{[]string{"sweep", "testdata/sweep.yaml", "--metrics", "completion", "--out", out}, "unknown metric"},
		{[]string{"sweep", "testdata/sweep.yaml", "--vary", "recovery.retry.max_attempts=1,0", "--out", out}, "max_attempts"},
		{[]string{"sweep", "testdata/sweep.yaml", "--vary", "recovery.retry.max_attempts", "--out", out}, "want path=v1,v2"},
	} {
		_, errOut, code := execMayday(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestParseVary(t *testing.T) {
	axes, err := parseVary([]string{
		"recovery.retry.max_attempts=1, 3,5",
		"workload.think={dist: constant, value: 1s},{dist: exponential, mean: 5s}",
		"faults[0].for=10m",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []scenarios.SweepAxis{
		{Path: "recovery.retry.max_attempts", Values: []string{"1", "3", "5"}},
		{Path: "workload.think", Values: []string{"{dist: constant, value: 1s}", "{dist: exponential, mean: 5s}"}},
		{Path: "faults[0].for", Values: []string{"10m"}},
	}
	if fmt.Sprint(axes) != fmt.Sprint(want) {
		t.Errorf("parseVary:\n got %v\nwant %v", axes, want)
	}
	for _, bad := range [][]string{{"=1,2"}, {"a.b="}, {"a.b=1,,2"}, {"a.b=1", "a.b=2"}} {
		if _, err := parseVary(bad); err == nil {
			t.Errorf("parseVary(%q): no error", bad)
		}
	}
}

// On a terminal, a sweep's progress line shows every phase: the runs from the start (before
// the first one ends), then storing the grid parameters, the checkpoint that writes the
// file and reading the table back, so that no step after the last run is silent.
func TestSweepProgressShowsEveryPhase(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Terminal: true})
	root.SetArgs([]string{"sweep", "testdata/sweep.yaml", "--seeds", "2", "--out", filepath.Join(t.TempDir(), "sweep"), "--jobs", "2"})
	if err := runRoot(context.Background(), root); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := errOut.String()
	last := -1
	for _, phase := range []string{"sweep sweep 0/6 runs (0/3 points)", "sweep sweep 6/6 runs (3/3 points)", "storing the grid parameters", "checkpoint: writing the database file", "reading the sweep table"} {
		i := strings.Index(got, phase)
		if i < 0 || i < last {
			t.Errorf("progress lacks %q after the phases before it:\n%q", phase, got)
		}
		last = i
	}
	if !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("progress line not cleared at the end: %q", got)
	}
}
