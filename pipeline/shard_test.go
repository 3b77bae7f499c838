package pipeline

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"1/1": {1, 1}, "2/4": {2, 4}, " 3 / 3 ": {3, 3}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"0/4": "counts from 1", "5/4": "counts from 1", "1/0": "want I/N", "2": "want I/N", "a/b": "want I/N"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseShard(%q): %v; want an error saying %q", in, err, msg)
		}
	}
}

// The slices of a grid partition it: every point in exactly one slice, dealt round-robin.
func TestShardPartitionsTheGrid(t *testing.T) {
	const points = 11
	for n := 1; n <= 5; n++ {
		seen := make([]int, points)
		for i := 1; i <= n; i++ {
			s := Shard{i, n}
			for p := range points {
				if s.Has(p) {
					seen[p]++
					if p%n != i-1 {
						t.Errorf("shard %v holds point %d; round-robin gives it to %d/%d", s, p, p%n+1, n)
					}
				}
			}
		}
		for p, c := range seen {
			if c != 1 {
				t.Errorf("N=%d: point %d is in %d slices, want 1", n, p, c)
			}
		}
	}
	if !(Shard{}).Has(7) || !(Shard{}).Whole() {
		t.Error("the zero Shard must be the whole grid")
	}
}

func TestResolveShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(name string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == name {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		flag   string
		set    bool
		shards int
		env    func(string) string
		want   Shard
	}{
		{"", false, 0, env(), Shard{}},
		{"3/4", true, 0, env(EnvK8sIndex, "0"), Shard{Index: 3, Count: 4}}, // an explicit slice wins
		{"auto", true, 4, env(EnvK8sIndex, "0"), Shard{Index: 1, Count: 4}},
		{"auto", true, 4, env(EnvK8sIndex, "3"), Shard{Index: 4, Count: 4}},
		{"auto", true, 0, env(EnvSlurmID, "0", EnvSlurmCount, "3", EnvSlurmMin, "0"), Shard{Index: 1, Count: 3}},
		{"auto", true, 3, env(EnvSlurmID, "3", EnvSlurmCount, "3", EnvSlurmMin, "1"), Shard{Index: 3, Count: 3}},
		{"auto", true, 0, env(EnvSlurmID, "2", EnvSlurmCount, "3"), Shard{Index: 3, Count: 3}},
	} {
		got, err := ResolveShard(tc.flag, tc.set, tc.shards, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("ResolveShard(%q, %v, %d) = %v, %v; want %v", tc.flag, tc.set, tc.shards, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		flag   string
		shards int
		env    func(string) string
		want   string
	}{
		{"", 0, env(), "want I/N"},
		{"auto", 4, env(), "JOB_COMPLETION_INDEX"},
		{"auto", 4, env(), "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT"},
		{"auto", 0, env(EnvK8sIndex, "1"), "pass --shards N"},
		{"auto", 4, env(EnvK8sIndex, "4"), "outside 0 ... 3"},
		{"auto", 4, env(EnvK8sIndex, "-1"), "outside 0 ... 3"},
		{"auto", 4, env(EnvK8sIndex, "one"), "not a whole number"},
		{"auto", 0, env(EnvSlurmID, "1"), "SLURM_ARRAY_TASK_COUNT is not"},
		{"auto", 2, env(EnvSlurmID, "1", EnvSlurmCount, "3"), "disagrees"},
		{"auto", 0, env(EnvSlurmID, "0", EnvSlurmCount, "3", EnvSlurmMin, "1"), "outside 0 ... 2"},
		{"2/4", 4, env(), "only means something with --shard auto"},
	} {
		if _, err := ResolveShard(tc.flag, true, tc.shards, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ResolveShard(%q, --shards %d): %v; want an error saying %q", tc.flag, tc.shards, err, tc.want)
		}
	}
	if _, err := ResolveShard("", false, 3, env()); err == nil {
		t.Error("--shards without --shard: no error")
	}
}
