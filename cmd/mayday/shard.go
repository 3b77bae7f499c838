//go:build duckdb_arrow

package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
)

// Batch engines hand each task its index in the environment. These are the variables
// `--shard auto` reads, in the order it tries them.
const (
	envK8sIndex   = "JOB_COMPLETION_INDEX"   // Kubernetes Indexed Job: 0 ... completions-1
	envSlurmID    = "SLURM_ARRAY_TASK_ID"    // Slurm job array: the task's id
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT" // the array's number of tasks
	envSlurmMin   = "SLURM_ARRAY_TASK_MIN"   // the array's first id (0 for --array=0-7)
)

// resolveShard turns the --shard and --shards flags into a slice of the grid. set says
// whether --shard was given at all, so `--shard ""` (an unset variable in a job script) is an
// error rather than a silent run of the whole grid; shards is 0 when --shards was not given.
func resolveShard(flag string, set bool, shards int, getenv func(string) string) (analysis.Shard, error) {
	if !set {
		if shards != 0 {
			return analysis.Shard{}, fmt.Errorf("--shards %d: only means something with --shard auto", shards)
		}
		return analysis.Shard{}, nil
	}
	if strings.TrimSpace(flag) != "auto" {
		sh, err := analysis.ParseShard(flag)
		if err == nil && shards != 0 {
			err = fmt.Errorf("--shards %d: only means something with --shard auto; --shard %s already says the count", shards, flag)
		}
		return sh, err
	}
	if shards < 0 {
		return analysis.Shard{}, fmt.Errorf("--shards %d: want the number of slices, 1 or more", shards)
	}
	if v, ok := lookup(getenv, envK8sIndex); ok {
		idx, err := envInt(envK8sIndex, v)
		if err != nil {
			return analysis.Shard{}, err
		}
		if shards == 0 {
			return analysis.Shard{}, fmt.Errorf("--shard auto: %s=%s gives the index but not the count; pass --shards N with N = the Job's completions", envK8sIndex, v)
		}
		return autoShard(envK8sIndex+"="+v, idx, shards)
	}
	if v, ok := lookup(getenv, envSlurmID); ok {
		id, err := envInt(envSlurmID, v)
		if err != nil {
			return analysis.Shard{}, err
		}
		cs, ok := lookup(getenv, envSlurmCount)
		if !ok {
			return analysis.Shard{}, fmt.Errorf("--shard auto: %s is set but %s is not; run inside a job array (sbatch --array=0-N)", envSlurmID, envSlurmCount)
		}
		count, err := envInt(envSlurmCount, cs)
		if err != nil {
			return analysis.Shard{}, err
		}
		if shards != 0 && shards != count {
			return analysis.Shard{}, fmt.Errorf("--shards %d disagrees with %s=%d; drop --shards or make them equal", shards, envSlurmCount, count)
		}
		first := 0
		if ms, ok := lookup(getenv, envSlurmMin); ok {
			if first, err = envInt(envSlurmMin, ms); err != nil {
				return analysis.Shard{}, err
			}
		}
		return autoShard(fmt.Sprintf("%s=%d (%s=%d)", envSlurmID, id, envSlurmMin, first), id-first, count)
	}
	return analysis.Shard{}, fmt.Errorf("--shard auto: none of %s (Kubernetes Indexed Job, with --shards N) or %s and %s (Slurm job array) is set; pass --shard I/N instead",
		envK8sIndex, envSlurmID, envSlurmCount)
}

// autoShard checks a 0-based index from the environment against the count.
func autoShard(from string, idx, count int) (analysis.Shard, error) {
	if count < 1 {
		return analysis.Shard{}, fmt.Errorf("--shard auto: %d slices; want 1 or more", count)
	}
	if idx < 0 || idx >= count {
		return analysis.Shard{}, fmt.Errorf("--shard auto: %s is slice %d, outside 0 ... %d of %d slices; the array or Job has more tasks than --shards says, or its ids are not contiguous",
			from, idx, count-1, count)
	}
	return analysis.Shard{Index: idx + 1, Count: count}, nil
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
