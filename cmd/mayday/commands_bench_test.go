//go:build duckdb_arrow

package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
)

// The whole-command benchmarks time what a user waits for: the mayday binary, built once,
// run as a process (start, simulation, trace, metrics, output, exit), each paired in the same
// benchmark run with its reference, run as a process too:
//
//   - run, run-no-trace: `mayday run research-fleet` at 10,000 investigations (a file; the
//     metrics only) against DuckDB copying the nine tables of that run's file into a new
//     file (CREATE TABLE AS per table, CHECKPOINT; this test binary re-run as a helper with
//     DuckDB's own settings);
//   - mm8, mm8-no-trace: the M/M/8 peer model of analysis/testdata/simpy (200,000
//     customers) against SimPy running the same model bare (skipped without SimPy);
//   - sweep: `mayday sweep` of 2 points × 2 seeds at 4,000 investigations, --jobs 2,
//     against a shell loop of the same four `mayday run`s;
//   - check-all: `mayday check --all` against a shell loop of `mayday run` of every
//     embedded example (the same runs, into files);
//   - report: `mayday report` of a research-fleet run against `mayday query` of its
//     metrics view (reading what a report starts from);
//   - metrics-view: `mayday query` of that run's metrics view against `mayday query` of
//     SELECT 1 (opening the file, mayday's catalog over it, exit): the difference is the
//     view's own time, reported per million stored rows as view-s-per-Mrows;
//   - import: `mayday import --conventions genai` of that run's OTLP export in protobuf
//     against the same of its OTLP/JSON export (the same spans read as plain GenAI spans),
//     each reported as spans a second (cmd-spans-per-s, ref-spans-per-s);
//   - import-native: the same without --conventions: the exports read back as mayday's
//     own, every table rebuilt;
//   - import-library: `mayday import` of traces an agent library made (25 copies of the
//     LangGraph capture, their prompts kept, each copy's long values its own) in protobuf
//     against the same in OTLP/JSON, as spans a second (commands_bench_library_test.go);
//   - export: `mayday export --format otlp --encoding proto` of that run against the same
//     in OTLP/JSON, with the size of each export (cmd-out-MiB, ref-out-MiB).
//
// Each iteration runs the command, then its reference (A B A B ...), so a change of the
// machine's load hits both sides alike; both inherit this process's niceness. Each
// sub-benchmark reports the medians of the walls (cmd-s, ref-s), CPU seconds and peak
// resident memory (cmd-peak-MiB, ref-peak-MiB), the median of the per-pair ratios (cmd/ref)
// with its spread (ratio-min, ratio-max), and the 1-minute load average before the first
// pair (load1). `make bench-commands` runs them
// (docs/performance.md).
func BenchmarkCommands(b *testing.B) {
	bin := benchBinary(b)
	for _, c := range commandBenches() {
		b.Run(c.name, func(b *testing.B) {
			if c.skip != "" {
				b.Skip(c.skip)
			}
			dir := b.TempDir()
			if c.setup != nil {
				c.setup(b, bin, dir)
			}
			cmdS, refS := pairs(b, func(i int) proc { return c.cmd(b, bin, dir, i) }, func(i int) proc { return c.ref(b, bin, dir, i) })
			if c.after != nil {
				c.after(b, bin, dir, cmdS, refS)
			}
		})
	}
}

// commandBench is one whole command and its reference; setup runs once, untimed.
type commandBench struct {
	name     string
	skip     string
	setup    func(b *testing.B, bin, dir string)
	cmd, ref func(b *testing.B, bin, dir string, i int) proc
	// after, when set, reports more from the medians of the walls, once the pairs ran.
	after func(b *testing.B, bin, dir string, cmdS, refS float64)
}

// proc is one timed process: its wall and CPU (user + system) time, and its peak resident
// memory in bytes.
type proc struct {
	wall, cpu time.Duration
	peak      int64
}

// procOf is the times and peak memory of the finished process ps, which ran for wall.
func procOf(ps *os.ProcessState, wall time.Duration) proc {
	p := proc{wall: wall, cpu: ps.UserTime() + ps.SystemTime()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		p.peak = ru.Maxrss << 10 // kilobytes on Linux
	}
	return p
}

// fleet10k is research-fleet at the size the figures use: 10,000 investigations,
// about 1.09 million rows.
var fleet10k = []string{"run", "research-fleet", "--set", "workload.investigations=10000"}

func commandBenches() []commandBench {
	py, _ := simpyPythonBench()
	noSimPy := ""
	if py == "" {
		noSimPy = "needs python3 with SimPy: apt-get install python3-simpy python3-simpy3 (or set MAYDAY_PYTHON)"
	}
	srcRun := func(dir string) string { return filepath.Join(dir, "src") }
	makeSrc := func(b *testing.B, bin, dir string) {
		timeProc(b, "", bin, append(slices.Clone(fleet10k), "-o", srcRun(dir), "-q")...)
	}
	mm8 := filepath.Join("..", "..", "analysis", "testdata", "simpy", "mm8.yaml")
	simpy := func(b *testing.B, _, _ string, _ int) proc {
		return timeProc(b, "", py, filepath.Join("..", "..", "analysis", "testdata", "simpy", "mm8_simpy.py"))
	}
	return []commandBench{
		{name: "run", cmd: func(b *testing.B, bin, dir string, i int) proc {
			out := filepath.Join(dir, fmt.Sprint("run-", i))
			return timeProc(b, "", bin, append(slices.Clone(fleet10k), "-o", out, "-q")...)
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			out := filepath.Join(dir, fmt.Sprint("run-", i))
			defer os.RemoveAll(out)
			return copyProc(b, filepath.Join(out, "mayday.duckdb"), filepath.Join(dir, fmt.Sprint("copy-", i, ".duckdb")))
		}},
		{name: "run-no-trace", setup: makeSrc, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, append(slices.Clone(fleet10k), "--no-trace", "-q")...)
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			return copyProc(b, filepath.Join(srcRun(dir), "mayday.duckdb"), filepath.Join(dir, fmt.Sprint("copy-", i, ".duckdb")))
		}},
		{name: "mm8", skip: noSimPy, cmd: func(b *testing.B, bin, dir string, i int) proc {
			out := filepath.Join(dir, fmt.Sprint("mm8-", i))
			defer os.RemoveAll(out)
			return timeProc(b, "", bin, "run", mm8, "-o", out, "-q")
		}, ref: simpy},
		{name: "mm8-no-trace", skip: noSimPy, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, "run", mm8, "--no-trace", "-q")
		}, ref: simpy},
		{name: "sweep", cmd: func(b *testing.B, bin, dir string, i int) proc {
			out := filepath.Join(dir, fmt.Sprint("sweep-", i))
			defer os.RemoveAll(out)
			return timeProc(b, "", bin, "sweep", "research-fleet", "--set", "workload.investigations=4000",
				"--vary", "recovery.retry.max_attempts=2,4", "--seed", "1", "--seeds", "2", "--jobs", "2", "-o", out, "-q")
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			out := filepath.Join(dir, fmt.Sprint("loop-", i))
			defer os.RemoveAll(out)
			loop := `for a in 2 4; do for s in 1 2; do "$0" run research-fleet --set workload.investigations=4000 ` +
				`--set recovery.retry.max_attempts=$a --seed $s -o "$1/p$a-s$s" -q || exit 1; done; done`
			return timeProc(b, "", "sh", "-c", loop, bin, out)
		}},
		{name: "check-all", cmd: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, "check", "--all", "-q")
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			out := filepath.Join(dir, fmt.Sprint("loop-", i))
			defer os.RemoveAll(out)
			var names []string
			for _, info := range scenarios.List() {
				names = append(names, info.Name)
			}
			loop := `bin=$1; out=$2; shift 2; for n in "$@"; do "$bin" run "$n" -o "$out/$n" -q || exit 1; done`
			return timeProc(b, "", "sh", append([]string{"-c", loop, "sh", bin, out}, names...)...)
		}},
		{name: "report", setup: makeSrc, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, "report", srcRun(dir), "-o", filepath.Join(dir, "report"), "--force", "-q")
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, "query", srcRun(dir), "SELECT * FROM metrics")
		}},
		{name: "metrics-view", setup: makeSrc, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, "query", srcRun(dir), "SELECT * FROM metrics", "--format", "csv")
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			return timeProc(b, "", bin, "query", srcRun(dir), "SELECT 1", "--format", "csv")
		}, after: func(b *testing.B, bin, dir string, cmdS, refS float64) {
			rows := storedRows(b, bin, srcRun(dir))
			b.ReportMetric(float64(rows), "rows")
			b.ReportMetric((cmdS-refS)/(float64(rows)/1e6), "view-s-per-Mrows")
		}},
		{name: "import", setup: func(b *testing.B, bin, dir string) {
			makeSrc(b, bin, dir)
			for _, enc := range []string{"proto", "json"} {
				exportProc(b, bin, srcRun(dir), dir, enc)
			}
		}, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return importProc(b, bin, dir, "proto", i, "--conventions", "genai")
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			return importProc(b, bin, dir, "json", i, "--conventions", "genai")
		}, after: importSpans(srcRun)},
		{name: "import-native", setup: func(b *testing.B, bin, dir string) {
			makeSrc(b, bin, dir)
			for _, enc := range []string{"proto", "json"} {
				exportProc(b, bin, srcRun(dir), dir, enc)
			}
		}, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return importProc(b, bin, dir, "proto", i)
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			return importProc(b, bin, dir, "json", i)
		}, after: importSpans(srcRun)},
		importLibraryBench(),
		{name: "export", setup: makeSrc, cmd: func(b *testing.B, bin, dir string, i int) proc {
			return exportProc(b, bin, srcRun(dir), dir, "proto")
		}, ref: func(b *testing.B, bin, dir string, i int) proc {
			return exportProc(b, bin, srcRun(dir), dir, "json")
		}, after: func(b *testing.B, bin, dir string, cmdS, refS float64) {
			for side, enc := range map[string]string{"cmd": "proto", "ref": "json"} {
				b.ReportMetric(float64(folderBytes(b, filepath.Join(dir, "otlp-"+enc)))/(1<<20), side+"-out-MiB")
			}
		}},
	}
}

// importProc imports the OTLP export of the encoding enc in dir (made by the import
// benchmark's setup), with the flags given, into a new folder, which it removes.
func importProc(b *testing.B, bin, dir, enc string, i int, flags ...string) proc {
	out := filepath.Join(dir, fmt.Sprint("import-", enc, "-", i))
	defer os.RemoveAll(out)
	args := append([]string{"import", filepath.Join(dir, "otlp-"+enc), "--out", out, "-q"}, flags...)
	return timeProc(b, "", bin, args...)
}

// importSpans reports an import pair's spans a second (cmd-spans-per-s, ref-spans-per-s):
// the spans of the run exported, over each side's median wall.
func importSpans(srcRun func(string) string) func(b *testing.B, bin, dir string, cmdS, refS float64) {
	return func(b *testing.B, bin, dir string, cmdS, refS float64) {
		spans := float64(queryCount(b, bin, srcRun(dir), "SELECT count(*) AS n FROM spans"))
		b.ReportMetric(spans, "spans")
		b.ReportMetric(spans/cmdS, "cmd-spans-per-s")
		b.ReportMetric(spans/refS, "ref-spans-per-s")
	}
}

// exportProc exports the run folder src as OTLP in the encoding enc into dir/otlp-<enc>,
// replacing the export of the iteration before (kept for its size).
func exportProc(b *testing.B, bin, src, dir, enc string) proc {
	out := filepath.Join(dir, "otlp-"+enc)
	if err := os.RemoveAll(out); err != nil {
		b.Fatal(err)
	}
	return timeProc(b, "", bin, "export", src, "--format", "otlp", "--encoding", enc, "--out", out, "-q")
}

// folderBytes is the size of the files in the folder dir.
func folderBytes(b *testing.B, dir string) int64 {
	b.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// storedRows counts the rows of the trace tables (all but runs) of the run folder run.
func storedRows(b *testing.B, bin, run string) int64 {
	b.Helper()
	var q []string
	for _, t := range traces.Tables() {
		if t == traces.Runs {
			continue
		}
		q = append(q, "(SELECT count(*) FROM "+t.String()+")")
	}
	return queryCount(b, bin, run, "SELECT "+strings.Join(q, " + ")+" AS n")
}

// queryCount is the positive count that the query (one row, one column) gives on the run
// folder run, with `mayday query`.
func queryCount(b *testing.B, bin, run, query string) int64 {
	b.Helper()
	out, err := exec.Command(bin, "query", run, query, "--format", "csv").Output()
	if err != nil {
		b.Fatalf("%s on %s: %v", query, run, err)
	}
	lines := strings.Fields(string(out))
	var n int64
	if len(lines) != 2 {
		b.Fatalf("%s on %s: %q", query, run, out)
	}
	if _, err := fmt.Sscan(lines[1], &n); err != nil || n <= 0 {
		b.Fatalf("%s on %s: %q", query, run, out)
	}
	return n
}

// pairs runs cmd and ref alternately, one pair per iteration, reports medians and the
// ratios' spread, and returns the median walls of cmd and ref in seconds.
func pairs(b *testing.B, cmd, ref func(i int) proc) (cmdS, refS float64) {
	load := loadAvg()
	var cmds, refs []proc
	var ratios []float64
	for i := 0; b.Loop(); i++ { // b.Loop: with -benchtime Nx, exactly N pairs
		c := cmd(i)
		r := ref(i)
		cmds, refs = append(cmds, c), append(refs, r)
		ratios = append(ratios, c.wall.Seconds()/r.wall.Seconds())
	}
	wall := func(ps []proc) []float64 { return mapf(ps, func(p proc) float64 { return p.wall.Seconds() }) }
	cpu := func(ps []proc) []float64 { return mapf(ps, func(p proc) float64 { return p.cpu.Seconds() }) }
	b.ReportMetric(median(wall(cmds)), "cmd-s")
	b.ReportMetric(median(wall(refs)), "ref-s")
	b.ReportMetric(median(cpu(cmds)), "cmd-cpu-s")
	b.ReportMetric(median(cpu(refs)), "ref-cpu-s")
	peak := func(ps []proc) []float64 {
		return mapf(ps, func(p proc) float64 { return float64(p.peak) / (1 << 20) })
	}
	b.ReportMetric(median(peak(cmds)), "cmd-peak-MiB")
	b.ReportMetric(median(peak(refs)), "ref-peak-MiB")
	b.ReportMetric(median(ratios), "cmd/ref")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	b.ReportMetric(slices.Max(ratios), "ratio-max")
	b.ReportMetric(load, "load1")
	return median(wall(cmds)), median(wall(refs))
}

func mapf[T any](xs []T, f func(T) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// median is the middle value (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// loadAvg is the 1-minute load average (0 where /proc/loadavg is missing).
func loadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(string(data), &l)
	return l
}

// timeProc runs name with args (in dir, "" = here) and returns its wall and CPU time; a
// failure fails b with its output.
func timeProc(b *testing.B, dir, name string, args ...string) proc {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return procOf(cmd.ProcessState, wall)
}

var (
	benchBinOnce sync.Once
	benchBinPath string
	benchBinErr  error
)

// benchBinary builds the mayday binary once per test process, as `make build` does, into a
// temporary folder removed when the test process ends (TestMain).
func benchBinary(b *testing.B) string {
	b.Helper()
	benchBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mayday-bench-")
		if err != nil {
			benchBinErr = err
			return
		}
		benchBinPath = filepath.Join(dir, "mayday")
		cmd := exec.Command("go", "build", "-tags", "duckdb_arrow", "-o", benchBinPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			benchBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if benchBinErr != nil {
		b.Fatal(benchBinErr)
	}
	return benchBinPath
}

// removeBenchBinary removes what benchBinary built.
func removeBenchBinary() {
	if benchBinPath != "" {
		os.RemoveAll(filepath.Dir(benchBinPath))
	}
}

// simpyPythonBench finds a python3 that can import SimPy 3 or SimPy 2: $MAYDAY_PYTHON, else
// python3 on PATH, else /usr/bin/python3 (as analysis.BenchmarkSimPy does).
func simpyPythonBench() (string, error) {
	cands := []string{os.Getenv("MAYDAY_PYTHON")}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range append(cands, "/usr/bin/python3") {
		if p == "" {
			continue
		}
		if exec.Command(p, "-c", "import simpy").Run() == nil || exec.Command(p, "-c", "import SimPy.Simulation").Run() == nil {
			return p, nil
		}
	}
	return "", errors.New("no python3 with SimPy")
}

// copyHelperEnv carries the copy a helper process makes: the source database, a newline, the
// new file.
const copyHelperEnv = "MAYDAY_COPY_HELPER"

// copyProc has DuckDB copy every table of the database file src into a new file dst, in a
// process of its own (this test binary, TestCopyTablesHelperProcess), and removes dst.
func copyProc(b *testing.B, src, dst string) proc {
	b.Helper()
	defer os.Remove(dst)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCopyTablesHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), copyHelperEnv+"="+src+"\n"+dst)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if err != nil || !strings.Contains(string(out), "copied") {
		b.Fatalf("copy helper: %v\n%s", err, out)
	}
	return procOf(cmd.ProcessState, wall)
}

// TestCopyTablesHelperProcess is the reference of the run benchmarks, run as a process of its
// own by copyProc: DuckDB, with its own settings (threads, memory), copies every table of a
// database file into a new file (CREATE TABLE AS per table, then CHECKPOINT) and closes it.
// It does nothing in a normal test run.
func TestCopyTablesHelperProcess(t *testing.T) {
	spec := os.Getenv(copyHelperEnv)
	if spec == "" {
		t.Skip("only run by BenchmarkCommands as a helper process")
	}
	src, dst, _ := strings.Cut(spec, "\n")
	if err := copyTables(src, dst); err != nil {
		t.Fatal(err)
	}
	fmt.Println("copied")
}

func copyTables(src, dst string) error {
	db, err := sql.Open("duckdb", dst)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH '"+strings.ReplaceAll(src, "'", "''")+"' AS src (READ_ONLY)"); err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src' ORDER BY table_name")
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if len(tables) == 0 {
		return fmt.Errorf("%s has no tables", src)
	}
	for _, t := range tables {
		q := `CREATE TABLE "` + t + `" AS SELECT * FROM src."` + t + `"`
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	for _, q := range []string{"DETACH src", "CHECKPOINT"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
