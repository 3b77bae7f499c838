//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/reports"
)

// Flag parsing is tested through each command's runF hook: the options come back parsed and
// nothing is simulated, opened or written.

func testIO() *ioStreams {
	return &ioStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
}

// parse executes cmd with args; runF has captured the options by then.
func parse(t *testing.T, cmd *cobra.Command, args ...string) {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

func TestRunFlags(t *testing.T) {
	var got *runOptions
	parse(t, newRunCmd(testIO(), func(o *runOptions) error { got = o; return nil }),
		"a.yaml", "b", "--seed", "7", "--seeds", "3", "--set", "x=1", "--set", "y=2", "-o", "out", "--force",
		"--format", "json", "-q", "--memory-limit", "4GiB")
	want := runFlags{Seed: 7, SeedSet: true, Seeds: 3, Sets: []string{"x=1", "y=2"}, Out: "out", Force: true,
		Format: "json", Quiet: true, MemLimit: "4GiB"}
	if !reflect.DeepEqual(got.runFlags, want) || !reflect.DeepEqual(got.Scenarios, []string{"a.yaml", "b"}) {
		t.Fatalf("parsed %+v %v, want %+v", got.runFlags, got.Scenarios, want)
	}

	parse(t, newRunCmd(testIO(), func(o *runOptions) error { got = o; return nil }), "a.yaml")
	want = runFlags{Seeds: 1, Format: "text"}
	if !reflect.DeepEqual(got.runFlags, want) {
		t.Fatalf("defaults %+v, want %+v", got.runFlags, want)
	}
}

func TestCheckFlags(t *testing.T) {
	var got *checkOptions
	parse(t, newCheckCmd(testIO(), func(o *checkOptions) error { got = o; return nil }),
		"--all", "--seed", "0", "--seeds", "5", "--baseline", "b.json", "--update-baseline", "--tolerance", "0.1",
		"--junit", "r.xml", "-j", "2", "-o", "keep", "--force", "-q")
	if !got.All || !got.SeedSet || got.Seed != 0 || got.Seeds != 5 || got.Baseline != "b.json" || !got.UpdateBaseline ||
		got.Tolerance != 0.1 || got.JUnit != "r.xml" || got.Jobs != 2 || got.Out != "keep" || !got.Force || !got.Quiet {
		t.Fatalf("parsed %+v", got)
	}
	parse(t, newCheckCmd(testIO(), func(o *checkOptions) error { got = o; return nil }), "x.yaml")
	if got.SeedSet || got.Seeds != 1 || got.Tolerance != reports.DefaultTolerance || got.Format != "text" || got.Jobs != 0 {
		t.Fatalf("defaults %+v", got)
	}
}

func TestSweepFlags(t *testing.T) {
	var got *sweepOptions
	parse(t, newSweepCmd(testIO(), func(o *sweepOptions) error { got = o; return nil }),
		"fleet.yaml", "--vary", "a=1,2", "--vary", "b={x: 1, y: 2}", "--metrics", "completion_rate,makespan",
		"--shard", "2/4", "--jobs", "3", "--seed", "9")
	if got.Scenario != "fleet.yaml" || !reflect.DeepEqual(got.Vary, []string{"a=1,2", "b={x: 1, y: 2}"}) ||
		!reflect.DeepEqual(got.Metrics, []string{"completion_rate", "makespan"}) || got.Shard != "2/4" || !got.ShardSet ||
		got.Jobs != 3 || got.Seed != 9 || !got.SeedSet || got.Seeds != 3 {
		t.Fatalf("parsed %+v", got)
	}
	parse(t, newSweepCmd(testIO(), func(o *sweepOptions) error { got = o; return nil }), "fleet.yaml")
	if got.ShardSet || got.SeedSet || !reflect.DeepEqual(got.Metrics, reports.DefaultSweepMetrics) {
		t.Fatalf("defaults %+v", got)
	}
}

func TestQueryFlags(t *testing.T) {
	var got *queryOptions
	parse(t, newQueryCmd(testIO(), func(o *queryOptions) error { got = o; return nil }), "runs/x", "SELECT 1", "--format", "csv")
	if got.Run != "runs/x" || got.SQL != "SELECT 1" || got.Format != "csv" {
		t.Fatalf("parsed %+v", got)
	}
}

func TestExportFlags(t *testing.T) {
	var got *exportOptions
	parse(t, newExportCmd(testIO(), func(o *exportOptions) error { got = o; return nil }),
		"runs/x", "--format", "otlp", "--out", "e", "--force", "--chunk-spans", "10")
	if got.Run != "runs/x" || got.Format != "otlp" || got.Out != "e" || !got.Force || got.ChunkSpans != 10 {
		t.Fatalf("parsed %+v", got)
	}
}

func TestImportFlags(t *testing.T) {
	var got *importOptions
	parse(t, newImportCmd(testIO(), func(o *importOptions) error { got = o; return nil }),
		"a.jsonl", "b", "--out", "r", "--force", "--conventions", "openinference", "--retry-window", "90s",
		"--run-id", "prod", "--redact", "session", "--format", "json", "-q")
	if !reflect.DeepEqual(got.Inputs, []string{"a.jsonl", "b"}) || got.Out != "r" || !got.Force || got.Conventions != "openinference" ||
		got.RetryWindow != 90*time.Second || got.RunID != "prod" || !reflect.DeepEqual(got.Redact, []string{"session"}) ||
		got.Format != "json" || !got.Quiet {
		t.Fatalf("parsed %+v", got)
	}
}

func TestMergeFlags(t *testing.T) {
	var got *mergeOptions
	parse(t, newMergeCmd(testIO(), func(o *mergeOptions) error { got = o; return nil }),
		"out", "a", "b", "--allow-partial", "--force", "--metrics", "makespan", "--format", "json")
	if got.Out != "out" || !reflect.DeepEqual(got.Inputs, []string{"a", "b"}) || !got.Partial || !got.Force ||
		!reflect.DeepEqual(got.Metrics, []string{"makespan"}) || got.Format != "json" {
		t.Fatalf("parsed %+v", got)
	}
}

func TestCompareFlags(t *testing.T) {
	var got *compareOptions
	parse(t, newCompareCmd(testIO(), func(o *compareOptions) error { got = o; return nil }),
		"a", "b", "--point-a", "0", "--point-b", "2", "--unpaired", "-q")
	if got.A != "a" || got.B != "b" || got.PointA != 0 || got.PointB != 2 || !got.Unpaired || !got.Quiet {
		t.Fatalf("parsed %+v", got)
	}
	parse(t, newCompareCmd(testIO(), func(o *compareOptions) error { got = o; return nil }), "a", "b")
	if got.PointA != -1 || got.PointB != -1 || got.Metrics != nil {
		t.Fatalf("defaults %+v", got)
	}
}

func TestReportFlags(t *testing.T) {
	var got *reportOptions
	parse(t, newReportCmd(testIO(), func(o *reportOptions) error { got = o; return nil }), "r1", "r2", "-o", "rev", "--format", "json")
	if !reflect.DeepEqual(got.Runs, []string{"r1", "r2"}) || got.Out != "rev" || got.Format != "json" {
		t.Fatalf("parsed %+v", got)
	}
}

func TestValidateFlags(t *testing.T) {
	var got *validateOptions
	parse(t, newValidateCmd(testIO(), func(o *validateOptions) error { got = o; return nil }), "a.yaml", "--set", "x=1", "-q")
	if !reflect.DeepEqual(got.Scenarios, []string{"a.yaml"}) || !reflect.DeepEqual(got.Sets, []string{"x=1"}) || !got.Quiet || got.Format != "text" {
		t.Fatalf("parsed %+v", got)
	}
}

// TestUsageErrorsNeverReachRunF: cobra's own refusals (a bad flag value, an unknown flag, a
// wrong number of arguments) stop before the command and exit 2.
func TestUsageErrorsNeverReachRunF(t *testing.T) {
	for _, args := range [][]string{
		{"--seeds", "many", "a.yaml"},
		{"--no-such-flag", "a.yaml"},
		{}, // run needs a scenario
	} {
		called := false
		var errOut bytes.Buffer
		root := &cobra.Command{Use: "mayday", SilenceErrors: true, SilenceUsage: true}
		root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(err) })
		root.AddCommand(newRunCmd(testIO(), func(*runOptions) error { called = true; return nil }))
		root.SetArgs(append([]string{"run"}, args...))
		root.SetOut(io.Discard)
		if code := exitCode(runRoot(context.Background(), root), &errOut); code != 2 || called {
			t.Errorf("%v: exit %d, runF called %v; want 2 and not called (%s)", args, code, called, errOut.String())
		}
	}
}

// TestExitCodes: only an error marked bad input exits 2; an error nobody marked is taken for
// a failure of mayday (3), never for the user's mistake, and so is an internal error even
// when something wrapped it as bad input.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("something nobody expected"), 3},
		{fmt.Errorf("context: %w", errors.New("wrapped, unmarked")), 3},
		{badInputf("--seeds 0: want 1 or more"), 2},
		{fmt.Errorf("loading: %w", badInputf("a.yaml:3: unknown key")), 2},
		{internal(errors.New("disk full")), 3},
		{badInput(internal(errors.New("disk full"))), 3},
		{&expectationError{msg: "check failed"}, 1},
		{interrupted("nothing was written"), 130},
		{badInput(interrupted("nothing was written")), 130},
	} {
		var errOut bytes.Buffer
		if got := exitCode(tc.err, &errOut); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
		if tc.err != nil && !strings.Contains(errOut.String(), "mayday: ") && tc.want != 1 {
			t.Errorf("exitCode(%v) printed %q", tc.err, errOut.String())
		}
	}
}

// TestUnmarkedCommandErrorExits3 goes through a command: an error its work returns without a
// mark (a bug, an unexpected failure) exits 3 with its message, not 2.
func TestUnmarkedCommandErrorExits3(t *testing.T) {
	var errOut bytes.Buffer
	root := &cobra.Command{Use: "mayday", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(newQueryCmd(testIO(), func(*queryOptions) error { return errors.New("unexpected") }))
	root.SetArgs([]string{"query", "runs/x", "SELECT 1"})
	if code := exitCode(runRoot(context.Background(), root), &errOut); code != 3 || !strings.Contains(errOut.String(), "mayday: unexpected") {
		t.Fatalf("exit %d, %q; want 3 and the message", code, errOut.String())
	}
}

// TestRootUsageErrors: through the real root, an unknown command and a missing argument are
// bad input.
func TestRootUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"no-such-command"}, {"query", "only-one-arg"}, {"run", "--seeds"}} {
		_, stderr, code := execMayday(t, args...)
		if code != 2 {
			t.Errorf("mayday %v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// TestUserMistakesExit2: mistakes caught before anything runs are all marked bad input. (The
// refusals that need a database, such as a query that writes or a duplicate run in a merge,
// are pinned in query's, merge's and shard's own tests.)
func TestUserMistakesExit2(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("name: x\nworkload: {investigations: -1}\nno_such_key: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	existing := dir + "/existing"
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", bad},
		{"run", "no-such-scenario"},
		{"run", "research-fleet", "--seeds", "0"},
		{"run", "research-fleet", "--format", "yaml"},
		{"run", "research-fleet", "--memory-limit", "lots"},
		{"run", "research-fleet", "--set", "recovery.retry.max_attempts=many"},
		{"run", "research-fleet", "--out", existing},
		{"run", "research-fleet", "--out", existing, "--force"}, // not a folder mayday wrote
		{"check", "--all", "research-fleet"},
		{"check", "research-fleet", "--tolerance", "-1"},
		{"check", "research-fleet", "--baseline", dir + "/none.json"},
		{"sweep", "research-fleet", "--shard", "3/2"},
		{"sweep", "research-fleet", "--shard", "auto"},
		{"sweep", "research-fleet", "--vary", "novalue"},
		{"sweep", "research-fleet", "--metrics", "no_such_metric"},
		{"sweep", "shared-outage"}, // no grid
		{"validate", bad},
		{"query", dir + "/missing", "SELECT 1"},
		{"query", existing, "SELECT 1"}, // a folder without a database
		{"query", existing, "SELECT 1", "--format", "xml"},
		{"export", existing, "--format", "zip", "--out", dir + "/e"},
		{"import", dir + "/missing.jsonl", "--out", dir + "/i"},
		{"import", bad, "--out", dir + "/i"},
		{"merge", dir + "/out", dir + "/missing"},
		{"compare", dir + "/missing", dir + "/missing"},
		{"report", dir + "/missing"},
	} {
		t.Setenv("JOB_COMPLETION_INDEX", "")
		t.Setenv("SLURM_ARRAY_TASK_ID", "")
		_, stderr, code := execMayday(t, args...)
		if code != 2 || !strings.Contains(stderr, "mayday: ") || strings.Contains(stderr, "goroutine") {
			t.Errorf("mayday %v: exit %d, stderr %q; want 2, a message and no stack trace", args, code, stderr)
		}
	}
}

// A DuckDB setting in the environment that DuckDB would not take is bad input, refused
// before anything runs: exit 2, a message naming the variable, no run folder.
func TestBadDuckDBEnvironment(t *testing.T) {
	for name, value := range map[string]string{analysis.MemoryEnv: "lots", analysis.ThreadsEnv: "two"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			dir := filepath.Join(t.TempDir(), "run")
			_, errOut, code := execMayday(t, "run", "shared-outage", "--out", dir, "-q")
			if code != 2 || !strings.Contains(errOut, name) {
				t.Errorf("%s=%s: exit %d, %q; want exit 2 naming %s", name, value, code, errOut, name)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s=%s: the run folder was made (%v)", name, value, err)
			}
		})
	}
}
