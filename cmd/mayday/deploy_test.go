//go:build duckdb_arrow

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
)

const jobManifest = "../../deploy/kubernetes/sweep-job.yaml"

// k8sJob is the part of a batch/v1 Job the test reads.
type k8sJob struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Args []string `yaml:"args"`
	Env  []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

func readJobs(t *testing.T) map[string]k8sJob {
	t.Helper()
	f, err := os.Open(jobManifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs := map[string]k8sJob{}
	dec := yaml.NewDecoder(f)
	for {
		var j k8sJob
		if err := dec.Decode(&j); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", jobManifest, err)
		}
		if j.Kind == "Job" {
			jobs[j.Metadata.Name] = j
		}
	}
	return jobs
}

var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// podArgs is what the container of a pod runs: its args with $(VAR) expanded from env as
// Kubernetes does, and every volume's mount path moved under root, so the pod's shared
// volume and scenario ConfigMap become folders of the test.
func podArgs(c k8sContainer, env map[string]string, root string) []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		a = k8sVar.ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] })
		for _, v := range c.VolumeMounts {
			if a == v.MountPath || strings.HasPrefix(a, v.MountPath+"/") {
				a = filepath.Join(root, v.Name) + a[len(v.MountPath):]
			} else if strings.Contains(a, "="+v.MountPath) {
				a = strings.Replace(a, "="+v.MountPath, "="+filepath.Join(root, v.Name), 1)
			}
		}
		out[i] = a
	}
	return out
}

// The Indexed Job of deploy/kubernetes runs as written: its completions pods, each a
// separate process of this binary with JOB_COMPLETION_INDEX set and its own working folder,
// all at once, then the merge Job's command. The merged sweep has the runs, order and
// digests of the same sweep run unsharded. The test scenario's grid has 3 points and the
// Job 4 slices, so one pod writes an empty shard, which merges like the others. Merging
// without one shard fails, naming it.
func TestSweepJobManifestMergesToTheUnshardedSweep(t *testing.T) {
	clearBatchEnv(t)
	jobs := readJobs(t)
	sweep, merge := jobs["mayday-sweep"], jobs["mayday-sweep-merge"]
	if sweep.Spec.CompletionMode != "Indexed" || sweep.Spec.Completions < 2 || sweep.Spec.Parallelism < 1 {
		t.Fatalf("%s: want an Indexed Job of 2 or more completions with parallelism; got %+v", jobManifest, sweep.Spec)
	}
	n := sweep.Spec.Completions
	pod := sweep.Spec.Template.Spec.Containers[0]
	if !slices.Contains(pod.Args, fmt.Sprintf("--shards=%d", n)) {
		t.Errorf("the sweep container's --shards differs from completions %d: %v", n, pod.Args)
	}
	if wait := merge.Spec.Template.Spec.InitContainers; len(wait) != 1 || len(wait[0].Env) != 1 || wait[0].Env[0].Value != fmt.Sprint(n) {
		t.Errorf("the merge Job's wait-for-shards init container must wait for %d shards: %+v", n, wait)
	}

	root := t.TempDir()
	scenarioDir := filepath.Join(root, "scenario")
	if err := os.MkdirAll(scenarioDir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scenarioDir, "fleet.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		args := podArgs(pod, map[string]string{pipeline.EnvK8sIndex: fmt.Sprint(i)}, root)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Dir = t.TempDir() // each pod its own working folder
		cmd.Env = batchEnv(fmt.Sprintf("%s=%d", pipeline.EnvK8sIndex, i))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("pod %d (%v): %v\n%s", i, args, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	shardDir := func(i int) string { return filepath.Join(root, "data", "shards", fmt.Sprint(i)) }
	for i := range n {
		if p := readSweepJSON(t, shardDir(i)).Provenance; p.Shard != fmt.Sprintf("%d/%d", i+1, n) {
			t.Errorf("pod %d wrote shard %q, want %d/%d", i, p.Shard, i+1, n)
		}
	}
	if p := readSweepJSON(t, shardDir(3)).Provenance; len(p.ShardPoints) != 0 {
		t.Errorf("shard 4/4 of a 3-point grid owns points %v, want none", p.ShardPoints)
	}

	mergeArgs := podArgs(merge.Spec.Template.Spec.Containers[0], nil, root)
	if out, errOut, code := execMayday(t, mergeArgs...); code != 0 {
		t.Fatalf("merge %v: exit %d\n%s\n%s", mergeArgs, code, out, errOut)
	}
	merged := filepath.Join(root, "data", "sweep")

	// The same sweep on one machine: the pod's command without the shard flags.
	whole := filepath.Join(root, "whole")
	var args []string
	for _, a := range podArgs(pod, nil, root) {
		if !strings.HasPrefix(a, "--shard") && !strings.HasPrefix(a, "--out") {
			args = append(args, a)
		}
	}
	if _, errOut, code := execMayday(t, append(args, "--out", whole)...); code != 0 {
		t.Fatalf("whole sweep %v: exit %d\n%s", args, code, errOut)
	}
	got := readRuns(t, filepath.Join(merged, analysis.DBFile))
	want := readRuns(t, filepath.Join(whole, analysis.DBFile))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("merged shards differ from the unsharded sweep (%d runs):\n got %+v\nwant %+v", len(want), got, want)
	}
	if p := readSweepJSON(t, merged).Provenance; p.Partial || p.Shard != "1/1" || !slices.Equal(p.ShardPoints, []int{0, 1, 2}) {
		t.Errorf("merged provenance: %+v; want the whole grid, not partial", p)
	}

	_, errOut, code := execMayday(t, "merge", filepath.Join(root, "part"), shardDir(0), shardDir(3))
	if code != 2 || !strings.Contains(errOut, "shards 2/4 and 3/4 of sweep sweep are missing") {
		t.Errorf("merging 2 of 4 shards: exit %d, %q; want 2 naming shards 2/4 and 3/4", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, "part")); !os.IsNotExist(err) {
		t.Error("a refused merge left its OUT behind")
	}
}
