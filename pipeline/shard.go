package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is the slice Index (1 ≤ Index ≤ Count) of a grid cut into Count slices: grid point p
// belongs to slice p mod Count + 1. Dealing points round-robin, rather than in contiguous
// blocks, spreads an axis that makes runs slower (more investigations, a longer horizon)
// evenly over the slices. The zero Shard is the whole grid.
type Shard struct {
	Index, Count int
}

// ParseShard reads `I/N`, as `--shard` takes it.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil || n < 1 {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, e.g. 2/4 for the second of four slices", s)
	}
	if i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: I counts from 1 to N (1/%d ... %d/%d); in a Kubernetes Indexed Job or Slurm array use --shard auto --shards %d", s, n, n, n, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// Has reports whether grid point p belongs to the shard.
func (s Shard) Has(p int) bool { return s.Count <= 1 || p%s.Count == s.Index-1 }

// Whole reports whether the shard is the whole grid.
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) String() string {
	if s.Whole() {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Points lists the points of a grid of n points that the shard owns.
func (s Shard) Points(n int) []int {
	out := []int{}
	for i := range n {
		if s.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// Batch engines hand each task its index in the environment. These are the variables
// ResolveShard reads for `--shard auto`, in the order it tries them.
const (
	EnvK8sIndex   = "JOB_COMPLETION_INDEX"   // Kubernetes Indexed Job: 0 ... completions-1
	EnvSlurmID    = "SLURM_ARRAY_TASK_ID"    // Slurm job array: the task's id
	EnvSlurmCount = "SLURM_ARRAY_TASK_COUNT" // the array's number of tasks
	EnvSlurmMin   = "SLURM_ARRAY_TASK_MIN"   // the array's first id (0 for --array=0-7)
)

// ResolveShard turns the --shard and --shards flags into a slice of the grid. set says
// whether --shard was given at all, so `--shard ""` (an unset variable in a job script) is an
// error rather than a silent run of the whole grid; shards is 0 when --shards was not given.
func ResolveShard(flag string, set bool, shards int, getenv func(string) string) (Shard, error) {
	if !set {
		if shards != 0 {
			return Shard{}, fmt.Errorf("--shards %d: only means something with --shard auto", shards)
		}
		return Shard{}, nil
	}
	if strings.TrimSpace(flag) != "auto" {
		sh, err := ParseShard(flag)
		if err == nil && shards != 0 {
			err = fmt.Errorf("--shards %d: only means something with --shard auto; --shard %s already says the count", shards, flag)
		}
		return sh, err
	}
	if shards < 0 {
		return Shard{}, fmt.Errorf("--shards %d: want the number of slices, 1 or more", shards)
	}
	if v, ok := lookup(getenv, EnvK8sIndex); ok {
		idx, err := envInt(EnvK8sIndex, v)
		if err != nil {
			return Shard{}, err
		}
		if shards == 0 {
			return Shard{}, fmt.Errorf("--shard auto: %s=%s gives the index but not the count; pass --shards N with N = the Job's completions", EnvK8sIndex, v)
		}
		return autoShard(EnvK8sIndex+"="+v, idx, shards)
	}
	if v, ok := lookup(getenv, EnvSlurmID); ok {
		id, err := envInt(EnvSlurmID, v)
		if err != nil {
			return Shard{}, err
		}
		cs, ok := lookup(getenv, EnvSlurmCount)
		if !ok {
			return Shard{}, fmt.Errorf("--shard auto: %s is set but %s is not; run inside a job array (sbatch --array=0-N)", EnvSlurmID, EnvSlurmCount)
		}
		count, err := envInt(EnvSlurmCount, cs)
		if err != nil {
			return Shard{}, err
		}
		if shards != 0 && shards != count {
			return Shard{}, fmt.Errorf("--shards %d disagrees with %s=%d; drop --shards or make them equal", shards, EnvSlurmCount, count)
		}
		first := 0
		if ms, ok := lookup(getenv, EnvSlurmMin); ok {
			if first, err = envInt(EnvSlurmMin, ms); err != nil {
				return Shard{}, err
			}
		}
		return autoShard(fmt.Sprintf("%s=%d (%s=%d)", EnvSlurmID, id, EnvSlurmMin, first), id-first, count)
	}
	return Shard{}, fmt.Errorf("--shard auto: none of %s (Kubernetes Indexed Job, with --shards N) or %s and %s (Slurm job array) is set; pass --shard I/N instead",
		EnvK8sIndex, EnvSlurmID, EnvSlurmCount)
}

// autoShard checks a 0-based index from the environment against the count.
func autoShard(from string, idx, count int) (Shard, error) {
	if count < 1 {
		return Shard{}, fmt.Errorf("--shard auto: %d slices; want 1 or more", count)
	}
	if idx < 0 || idx >= count {
		return Shard{}, fmt.Errorf("--shard auto: %s is slice %d, outside 0 ... %d of %d slices; the array or Job has more tasks than --shards says, or its ids are not contiguous",
			from, idx, count-1, count)
	}
	return Shard{Index: idx + 1, Count: count}, nil
}

func lookup(getenv func(string) string, name string) (string, bool) {
	v := strings.TrimSpace(getenv(name))
	return v, v != ""
}

func envInt(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--shard auto: %s=%q is not a whole number", name, v)
	}
	return n, nil
}
