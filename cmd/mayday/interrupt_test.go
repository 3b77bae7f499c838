//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/reports"
)

// TestMain lets a test run this package's main in a subprocess (MAYDAY_TEST_MAIN=1), so the
// real signal handling is tested with real signals.
func TestMain(m *testing.M) {
	if os.Getenv("MAYDAY_TEST_MAIN") == "1" {
		os.Args = append([]string{"mayday"}, strings.Fields(os.Getenv("MAYDAY_TEST_ARGS"))...)
		main()
		return
	}
	if os.Getenv("MAYDAY_TEST_RUN_MAIN") == "1" {
		// The test binary runs as mayday with its own arguments (the shard tests' pods).
		main()
		return
	}
	code := m.Run()
	removeBenchBinary() // BenchmarkCommands' build of the binary
	os.Exit(code)
}

// execMaydayCtx is execMayday with a context the test controls, as main's signal context.
func execMaydayCtx(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(args)
	err := runRoot(ctx, root)
	code = exitCode(afterSignal(ctx, err), &errOut)
	return out.String(), errOut.String(), code
}

// cancelAfterRuns cancels the returned context once n runs have ended.
func cancelAfterRuns(t *testing.T, n int) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := 0
	testHookRunDone = func() {
		if done++; done == n {
			cancel()
		}
	}
	t.Cleanup(func() { testHookRunDone = nil; cancel() })
	return ctx
}

// snapshot maps every file under dir to its content hash, to prove a command changed nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			files[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	var diff []string
	for p, h := range before {
		if after[p] != h {
			diff = append(diff, "changed or gone: "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, "new: "+p)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("%s changed the disk:\n%s", what, strings.Join(diff, "\n"))
	}
}

func smallRun(t *testing.T, dir string) {
	t.Helper()
	if _, errOut, code := execMayday(t, "run", "testdata/sweep.yaml", "--out", dir, "-q"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
}

// Every statement that writes a file or a database, or turns the protection off, is refused
// with exit 2 and leaves every file as it was; reads still work.
func TestQueryRefusesWrites(t *testing.T) {
	root := t.TempDir()
	run, other := filepath.Join(root, "run"), filepath.Join(root, "other")
	smallRun(t, run)
	smallRun(t, other)
	db := filepath.Join(run, "mayday.duckdb")
	before := snapshot(t, root)
	for _, q := range []string{
		"COPY (SELECT 1 AS x) TO '" + db + "' (FORMAT csv)",
		"COPY (SELECT 1 AS x) TO '" + filepath.Join(run, "summary.json") + "' (FORMAT csv)",
		"COPY (SELECT 1 AS x) TO '" + filepath.Join(root, "new.csv") + "'",
		"ATTACH '" + filepath.Join(other, "mayday.duckdb") + "' AS o (READ_WRITE)",
		"ATTACH '" + filepath.Join(other, "mayday.duckdb") + "' AS o (READ_ONLY)",
		"EXPORT DATABASE '" + filepath.Join(root, "export") + "'",
		"SELECT 1; DROP TABLE spans",
		"SELECT 1; COPY (SELECT 1) TO '" + filepath.Join(root, "x.csv") + "'",
		"INSTALL httpfs",
		"LOAD httpfs",
		"SET enable_external_access = true",
		"SET lock_configuration = false",
		"RESET enable_external_access",
		"SET allowed_directories = ['/']",
		"SELECT * FROM read_csv('" + filepath.Join(run, "summary.json") + "')",
		"CREATE TABLE t (a INTEGER)",
		"DROP TABLE spans",
		"",
		";",
	} {
		// The files after one query are those before the next (read once, not twice).
		_, errOut, code := execMayday(t, "query", run, q)
		if code != 2 || !strings.HasPrefix(errOut, "mayday: ") {
			t.Errorf("query %q: exit %d, stderr %q; want exit 2 and a clear message", q, code, errOut)
		}
		after := snapshot(t, root)
		sameFiles(t, "query "+q, before, after)
		before = after
	}
	out, errOut, code := execMayday(t, "query", run, "SELECT count(*) AS n FROM runs;", "--format", "csv")
	if code != 0 || out != "n\n1\n" {
		t.Errorf("a read after the refusals: exit %d, %q %q", code, out, errOut)
	}
}

// The printer writes rows as they arrive: with a result far larger than its buffer, the
// first bytes reach the output before the last row has been read.
func TestQueryStreamsRows(t *testing.T) {
	for _, format := range []string{"csv", "json", "table"} {
		var w firstWrite
		p := newRowPrinter(&w, format)
		rows := 0
		w.rows = &rows
		if err := p.head([]string{"i"}); err != nil {
			t.Fatal(err)
		}
		const n = 100000
		for i := range n {
			rows++
			if err := p.row([]any{int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.done(); err != nil {
			t.Fatal(err)
		}
		if w.at == 0 || w.at >= n/10 {
			t.Errorf("%s: first output after %d of %d rows; want it within the first tenth", format, w.at, n)
		}
		if !strings.Contains(w.buf.String(), "99999") {
			t.Errorf("%s: the last row is missing", format)
		}
	}
}

type firstWrite struct {
	buf  bytes.Buffer
	rows *int
	at   int
}

func (w *firstWrite) Write(b []byte) (int, error) {
	if w.at == 0 {
		w.at = *w.rows
	}
	return w.buf.Write(b)
}

// --force replaces only a folder mayday wrote; anything else is refused with exit 2 and
// left as it was.
func TestForceRefusesWhatMaydayDidNotWrite(t *testing.T) {
	root := t.TempDir()
	notes := filepath.Join(root, "notes")
	os.MkdirAll(filepath.Join(notes, "sub"), 0o755)
	os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("keep me"), 0o644)
	plain := filepath.Join(root, "plain")
	os.WriteFile(plain, []byte("a file"), 0o644)
	mixed := filepath.Join(root, "mixed")
	smallRun(t, mixed)
	os.WriteFile(filepath.Join(mixed, "notes.md"), []byte("mine"), 0o644)
	fake := filepath.Join(root, "fake")
	os.MkdirAll(fake, 0o755)
	os.WriteFile(filepath.Join(fake, "mayday.duckdb"), []byte("not a database at all"), 0o644)
	for _, dir := range []string{notes, plain, mixed, fake} {
		for _, args := range [][]string{
			{"run", "testdata/sweep.yaml", "--out", dir, "--force", "-q"},
			{"sweep", "testdata/sweep.yaml", "--out", dir, "--force", "-q"},
			{"report", filepath.Join(mixed), "--out", dir},
		} {
			if args[0] == "report" && dir == mixed {
				continue
			}
			before := snapshot(t, root)
			_, errOut, code := execMayday(t, args...)
			if code != 2 || !strings.Contains(errOut, dir) {
				t.Errorf("%s over %s: exit %d, %q; want exit 2 naming it", args[0], dir, code, errOut)
			}
			sameFiles(t, args[0]+" --force over "+dir, before, snapshot(t, root))
		}
	}
	checkOut := filepath.Join(root, "check")
	os.MkdirAll(filepath.Join(checkOut, "sweep-s1"), 0o755)
	os.WriteFile(filepath.Join(checkOut, "sweep-s1", "todo.txt"), []byte("keep me"), 0o644)
	before := snapshot(t, root)
	if _, errOut, code := execMayday(t, "check", "testdata/sweep.yaml", "--out", checkOut, "--force", "-q"); code != 2 {
		t.Errorf("check --force over a foreign sweep-s1: exit %d (%s), want 2", code, errOut)
	}
	sameFiles(t, "check --force", before, snapshot(t, root))
}

// An interrupted --force leaves the old whole run in place and says so.
func TestInterruptedForceKeepsTheOldRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	smallRun(t, dir)
	before := snapshot(t, filepath.Dir(dir))
	ctx := cancelAfterRuns(t, 1)
	_, errOut, code := execMaydayCtx(t, ctx, "run", "testdata/sweep.yaml", "--seeds", "3", "--out", dir, "--force", "-q")
	if code != 130 || !strings.Contains(errOut, "left as it was") {
		t.Errorf("interrupted --force: exit %d, %q; want 130 saying the old folder was kept", code, errOut)
	}
	sameFiles(t, "interrupted --force", before, snapshot(t, filepath.Dir(dir)))
}

// An interrupt that comes after the last run ended stores the whole run, and the message
// says it is complete, not partial; one before the first run writes nothing.
func TestRunInterruptMessages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	_, errOut, code := execMaydayCtx(t, cancelAfterRuns(t, 1), "run", "testdata/sweep.yaml", "--out", dir, "-q")
	if code != 130 || !strings.Contains(errOut, "status 'complete'") || strings.Contains(errOut, "partial") {
		t.Errorf("interrupt after the run: exit %d, %q", code, errOut)
	}
	if n := queryInt(t, filepath.Join(dir, "mayday.duckdb"), "SELECT count(*) FROM runs WHERE status = 'complete'"); n != 1 {
		t.Errorf("stored complete runs: %d", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir2 := filepath.Join(t.TempDir(), "run")
	_, errOut, code = execMaydayCtx(t, ctx, "run", "testdata/sweep.yaml", "--out", dir2, "-q")
	if code != 130 || !strings.Contains(errOut, "nothing was written") {
		t.Errorf("interrupt before the run: exit %d, %q", code, errOut)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir2)); len(ents) != 0 {
		t.Errorf("interrupt before the run left %v", ents)
	}
}

// An interrupted sweep keeps its finished runs as a partial sweep and says how many. The
// interrupt comes as the second run is stored; by then the worker has started the third run's
// simulation (a worker simulates its next run while the one before is stored), which then
// ends, complete or cut short, and is stored too.
func TestInterruptedSweepKeepsFinishedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	_, errOut, code := execMaydayCtx(t, cancelAfterRuns(t, 2), "sweep", "testdata/sweep.yaml", "--jobs", "1", "--out", dir, "-q")
	var stored, all int
	if i := strings.Index(errOut, "stored with "); i >= 0 {
		fmt.Sscanf(errOut[i:], "stored with %d of %d runs", &stored, &all)
	}
	if code != 130 || all != 9 || stored < 2 || stored > 3 {
		t.Fatalf("interrupted sweep: exit %d, %q; want 130 and 2 or 3 of 9 runs stored", code, errOut)
	}
	if n := queryInt(t, filepath.Join(dir, "mayday.duckdb"), "SELECT count(*) FROM runs"); n != stored {
		t.Errorf("runs stored: %d, the message says %d", n, stored)
	}
	partial := queryInt(t, filepath.Join(dir, "mayday.duckdb"), "SELECT count(*) FROM runs WHERE status <> 'complete'")
	if (partial == 0) != strings.Contains(errOut, "every stored run is complete") {
		t.Errorf("%d partial runs stored; the message says %q", partial, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table reports.SweepTable
	if err := json.Unmarshal(b, &table); err != nil || table.Provenance == nil || !table.Provenance.Partial {
		t.Errorf("sweep.json of an interrupted sweep: %v, provenance %+v; want partial: true", err, table.Provenance)
	}
}

// check and query exit 130 when interrupted, and write nothing.
func TestCheckAndQueryInterrupted(t *testing.T) {
	root := t.TempDir()
	_, errOut, code := execMaydayCtx(t, cancelAfterRuns(t, 1), "check", "testdata/sweep.yaml", "--seeds", "2", "--jobs", "1", "--out", root, "-q")
	if code != 130 {
		t.Errorf("interrupted check: exit %d, %q", code, errOut)
	}
	run := filepath.Join(root, "r")
	smallRun(t, run)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, errOut, code = execMaydayCtx(t, ctx, "query", run, "SELECT count(*) FROM spans")
	if code != 130 {
		t.Errorf("interrupted query: exit %d, %q", code, errOut)
	}
}

// mainProcess starts this test binary as mayday with args.
func mainProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MAYDAY_TEST_MAIN=1", "MAYDAY_TEST_ARGS="+strings.Join(args, " "))
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &errOut
}

// waitStaging waits until a staging folder for dir appears: by then main's signal handler
// is installed and the run is under way.
func waitStaging(t *testing.T, dir string) {
	t.Helper()
	pattern := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*")
	for range 2000 {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no staging folder appeared")
}

// Real signals: SIGINT, SIGTERM and SIGHUP end a run with exit 130, leaving no staging; a SIGKILLed run leaves its
// staging folder, which the next run writing to the same place removes and reports.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	root := t.TempDir()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		dir := filepath.Join(root, sig.String())
		cmd, errOut := mainProcess(t, "run", "research-fleet", "--out", dir, "-q")
		waitStaging(t, dir)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("%v: exit %d (%v): %s", sig, code, err, errOut)
		}
		if left, _ := filepath.Glob(filepath.Join(root, "."+sig.String()+".tmp-*")); len(left) != 0 {
			t.Errorf("%v left its staging folder: %v", sig, left)
		}
	}
	dir := filepath.Join(root, "killed")
	cmd, _ := mainProcess(t, "run", "research-fleet", "--out", dir, "-q")
	waitStaging(t, dir)
	cmd.Process.Kill()
	cmd.Wait()
	stale, _ := filepath.Glob(filepath.Join(root, ".killed.tmp-*"))
	if len(stale) == 0 {
		t.Fatal("SIGKILL left no staging folder; the test proves nothing")
	}
	_, errOut, code := execMayday(t, "run", "testdata/sweep.yaml", "--out", dir, "-q")
	if code != 0 || !strings.Contains(errOut, "removed "+stale[0]) {
		t.Errorf("next run: exit %d, %q; want it to remove and report %s", code, errOut, stale[0])
	}
	if left, _ := filepath.Glob(filepath.Join(root, ".killed.tmp-*")); len(left) != 0 {
		t.Errorf("stale staging left: %v", left)
	}
}

// The memory watchdog stops a run that passes its limit: exit 3, the run kept as partial,
// a message naming the limit and the flag. The limit here is far below any real process.
func TestMemoryWatchdog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	_, errOut, code := execMayday(t, "run", "shared-outage", "--out", dir, "--memory-limit", "1MiB", "-q")
	if code != 3 || !strings.Contains(errOut, "--memory-limit") || !strings.Contains(errOut, "status 'partial'") {
		t.Fatalf("run over its memory limit: exit %d, %q", code, errOut)
	}
	if n := queryInt(t, filepath.Join(dir, "mayday.duckdb"), "SELECT count(*) FROM runs WHERE status = 'partial'"); n != 1 {
		t.Errorf("partial runs stored: %d", n)
	}
	sweep := filepath.Join(t.TempDir(), "sweep")
	_, errOut, code = execMayday(t, "sweep", "shared-outage", "--vary", "recovery.retry.max_attempts=1,2", "--seeds", "1", "--out", sweep, "--memory-limit", "1MiB", "-q")
	if code != 3 || !strings.Contains(errOut, "--memory-limit") {
		t.Errorf("sweep over its memory limit: exit %d, %q", code, errOut)
	}
	if _, errOut, code = execMayday(t, "run", "shared-outage", "--memory-limit", "lots"); code != 2 {
		t.Errorf("--memory-limit lots: exit %d, %q", code, errOut)
	}
	for in, want := range map[string]uint64{"512MB": 512e6, "4GiB": 4 << 30, "1000": 1000, "1.5 KiB": 1536} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
