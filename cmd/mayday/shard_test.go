//go:build duckdb_arrow

package main

import (
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
)

// TestMain lets a test start this binary as the mayday command, so a test can run shard
// processes exactly as a batch engine would: separate processes, the index in the
// environment, separate folders.
// batchEnv is the environment of this process without any batch-engine variable, plus extra.
func batchEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == pipeline.EnvK8sIndex || strings.HasPrefix(name, "SLURM_ARRAY_") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "MAYDAY_TEST_RUN_MAIN=1"), extra...)
}

func clearBatchEnv(t *testing.T) {
	for _, name := range []string{pipeline.EnvK8sIndex, pipeline.EnvSlurmID, pipeline.EnvSlurmCount, pipeline.EnvSlurmMin} {
		t.Setenv(name, "")
	}
}

// Every --shard value a job script can get wrong is bad input (exit 2), and nothing is written.
func TestSweepShardFlagValues(t *testing.T) {
	clearBatchEnv(t)
	out := filepath.Join(t.TempDir(), "x")
	for _, tc := range []struct {
		shard, want string
	}{
		{"", "want I/N"}, // e.g. --shard "$UNSET_VARIABLE"
		{"0/3", "I counts from 1"},
		{"4/3", "I counts from 1"},
		{"2/0", "want I/N"},
		{"two/3", "want I/N"},
		{"1/2/3", "want I/N"},
		{"auto", "JOB_COMPLETION_INDEX"},
	} {
		_, errOut, code := execMayday(t, "sweep", "testdata/sweep.yaml", "--shard", tc.shard, "--out", out, "-q")
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("--shard %q: exit %d, %q; want 2 and %q", tc.shard, code, errOut, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("--shard %q left %s behind", tc.shard, out)
		}
	}
}

// sweepJSON is the part of sweep.json the shard tests read.
type sweepJSON struct {
	Points     []json.RawMessage       `json:"points"`
	Provenance reports.SweepProvenance `json:"provenance"`
}

func readSweepJSON(t *testing.T, dir string) sweepJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s sweepJSON
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s/sweep.json: %v", dir, err)
	}
	return s
}

// A slice with no grid points (slice 6 of 8 of a 3-point grid) exits 0 and writes a shard
// folder whose database and sweep.json are well formed and empty.
func TestSweepEmptyShard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	_, errOut, code := execMayday(t, "sweep", "testdata/sweep.yaml", "--shard", "6/8", "--seeds", "2", "--out", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	db := filepath.Join(dir, analysis.DBFile)
	if n := queryInt(t, db, "SELECT count(*) FROM runs"); n != 0 {
		t.Errorf("%d runs in an empty shard", n)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM sweep_params"); n != 0 {
		t.Errorf("%d sweep_params rows in an empty shard", n)
	}
	s := readSweepJSON(t, dir)
	if s.Points == nil || len(s.Points) != 0 {
		t.Errorf("sweep.json points = %v, want []", s.Points)
	}
	p := s.Provenance
	if p.Shard != "6/8" || p.GridPoints != 3 || len(p.ShardPoints) != 0 || p.Seeds != 2 || p.Version != version {
		t.Errorf("provenance of the empty shard: %+v", p)
	}
}

// merge refuses shards that are not slices of one sweep, naming what differs, and
// --allow-partial merges an incomplete set but marks it.
func TestMergeChecksShardProvenance(t *testing.T) {
	clearBatchEnv(t)
	tmp := t.TempDir()
	shard := func(name string, extra ...string) string {
		dir := filepath.Join(tmp, name)
		args := append([]string{"sweep", "testdata/sweep.yaml", "--seeds", "1", "--out", dir, "-q"}, extra...)
		if _, errOut, code := execMayday(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		return dir
	}
	one := shard("one", "--shard", "1/2")
	two := shard("two", "--shard", "2/2")
	otherSet := shard("set", "--shard", "2/2", "--set", "workload.investigations=30")
	otherGrid := shard("grid", "--shard", "2/2", "--vary", "recovery.retry.max_attempts=1,2,6")
	otherSeeds := shard("seeds", "--shard", "2/2", "--seeds", "2")
	otherCount := shard("count", "--shard", "2/3")
	otherBinary := shard("binary", "--shard", "2/2")
	// Another binary: the same shard as recorded by a mayday of another version.
	path := filepath.Join(otherBinary, "sweep.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), fmt.Sprintf("%q: %q", "version", version), `"version": "v0.0.1-other"`, 1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// A sweep.json edited by hand, whose points are not those of its slice.
	tampered := shard("tampered", "--shard", "2/2")
	path = filepath.Join(tampered, "sweep.json")
	if b, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["provenance"].(map[string]any)["shard_points"] = []int{0, 1}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	for i, tc := range []struct {
		inputs []string
		want   string
	}{
		{[]string{one}, "shard 2/2 of sweep sweep is missing"},
		{[]string{one, one}, "shard 1/2 is given twice"},
		{[]string{one, otherSet}, "other --set overrides (workload.investigations vs none)"},
		{[]string{one, otherSet}, "another scenario"},
		{[]string{one, otherGrid}, "another grid"},
		{[]string{one, otherSeeds}, "other seeds (2 from 1 vs 1 from 1)"},
		{[]string{one, otherCount}, "is shard 2/3 but"},
		{[]string{one, otherBinary}, "another mayday binary (version v0.0.1-other vs " + version + ")"},
		{[]string{one, tampered}, "records grid points [0 1], but slice 2/2 of a 3-point grid is [1]"},
	} {
		out := filepath.Join(tmp, fmt.Sprintf("merged%d", i))
		_, errOut, code := execMayday(t, append([]string{"merge", out}, tc.inputs...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("merge %v: exit %d, %q; want 2 and %q", tc.inputs, code, errOut, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("merge %v: a refused merge left %s behind", tc.inputs, out)
		}
	}
	// --allow-partial accepts a missing shard, never a mismatched one.
	if _, errOut, code := execMayday(t, "merge", filepath.Join(tmp, "mixed"), one, otherSet, "--allow-partial"); code != 2 || !strings.Contains(errOut, "other --set overrides") {
		t.Errorf("--allow-partial with a mismatched shard: exit %d, %q; want 2", code, errOut)
	}
	part := filepath.Join(tmp, "partial")
	_, errOut, code := execMayday(t, "merge", part, one, "--allow-partial", "-q")
	if code != 0 || !strings.Contains(errOut, "partial sweep") {
		t.Fatalf("--allow-partial: exit %d, %q; want 0 and a warning", code, errOut)
	}
	if p := readSweepJSON(t, part).Provenance; !p.Partial || !slices.Equal(p.MissingShards, []string{"2/2"}) || !slices.Equal(p.ShardPoints, []int{0, 2}) {
		t.Errorf("partial merge provenance: %+v; want partial, missing 2/2, points 0 and 2", p)
	}
	mergeBelievesTheData(t, tmp, one, two)
	full := filepath.Join(tmp, "full")
	if _, errOut, code := execMayday(t, "merge", full, two, one, "-q"); code != 0 {
		t.Fatalf("merge of both shards: exit %d, %s", code, errOut)
	}
	if p := readSweepJSON(t, full).Provenance; p.Partial || len(p.MissingShards) != 0 {
		t.Errorf("a full merge is marked partial: %+v", p)
	}
}

// mergeBelievesTheData: merge believes each shard's runs rows, not its sweep.json. A shard whose
// database was swapped for another scenario's run is refused naming it; a shard holding a
// run cut short, while its sweep.json says nothing of it, needs --allow-partial, which marks
// the merged sweep partial.
func mergeBelievesTheData(t *testing.T, tmp, one, two string) {
	t.Helper()
	other := filepath.Join(tmp, "other-run")
	if _, errOut, code := execMayday(t, "run", "testdata/retried.yaml", "--out", other, "-q"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	swapped := filepath.Join(tmp, "swapped")
	tamperCopy(t, other, swapped)
	copyFile(t, filepath.Join(two, "sweep.json"), filepath.Join(swapped, "sweep.json"))
	_, errOut, code := execMayday(t, "merge", filepath.Join(tmp, "m-swapped"), one, swapped)
	if code != 2 || !strings.Contains(errOut, swapped) || !strings.Contains(errOut, "scenario") {
		t.Errorf("merge with a swapped database: exit %d, %q; want 2 naming it", code, errOut)
	}
	cut := filepath.Join(tmp, "cut")
	tamperCopy(t, two, cut, "UPDATE runs SET status = 'partial'")
	copyFile(t, filepath.Join(two, "sweep.json"), filepath.Join(cut, "sweep.json"))
	_, errOut, code = execMayday(t, "merge", filepath.Join(tmp, "m-cut"), one, cut)
	if code != 2 || !strings.Contains(errOut, cut) || !strings.Contains(errOut, "--allow-partial") {
		t.Errorf("merge of a shard with a run cut short: exit %d, %q; want 2 naming it", code, errOut)
	}
	merged := filepath.Join(tmp, "m-cut-allowed")
	if _, errOut, code = execMayday(t, "merge", merged, one, cut, "--allow-partial", "-q"); code != 0 {
		t.Fatalf("--allow-partial with a run cut short: exit %d, %q", code, errOut)
	}
	if p := readSweepJSON(t, merged).Provenance; !p.Partial {
		t.Errorf("a merge of runs cut short is not marked partial: %+v", p)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
