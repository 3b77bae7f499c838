//go:build duckdb_arrow

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/analysis"
)

// canaryText is a local file's content that a tampered database tries to copy into an output.
const canaryText = "CANARY-7d41-local-file"

// tamperCopy copies the run folder src to dst and changes dst's database with stmts (SECRET
// stands for the quoted path of a canary file), as a hostile colleague would.
func tamperCopy(t *testing.T, src, dst string, stmts ...string) (secret string) {
	t.Helper()
	secret = filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte(canaryText), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, analysis.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, analysis.DBFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := analysis.OpenWrite(filepath.Join(dst, analysis.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		q = strings.ReplaceAll(q, "SECRET", "'"+secret+"'")
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatalf("tampering: %s: %v", q, err)
		}
	}
	return secret
}

func readAll(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			sb.Write(b)
		}
		return nil
	})
	return sb.String()
}

// A tampered database never makes mayday read a local file into an output, nor write
// outside --out, whatever its views, run ids or tool names say.
func TestTamperedDatabases(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	smallRun(t, run)

	views := filepath.Join(root, "views")
	tamperCopy(t, run, views,
		"CREATE OR REPLACE VIEW calls AS SELECT content AS tool, 0.0 AS start, 1.0 AS \"end\" FROM read_text(SECRET)",
		"CREATE OR REPLACE VIEW metrics AS SELECT content AS run_id FROM read_text(SECRET)",
		"CREATE OR REPLACE VIEW disruptions AS SELECT content AS tool FROM read_text(SECRET)")
	out := filepath.Join(root, "report-views")
	if _, errOut, code := execMayday(t, "report", views, "--out", out, "-q"); code != 0 {
		t.Fatalf("report of a database with redefined views: exit %d: %s", code, errOut)
	}
	if strings.Contains(readAll(t, out), canaryText) {
		t.Error("report copied a local file named by a stored view")
	}
	stdout, errOut, code := execMayday(t, "compare", views, run)
	if strings.Contains(stdout+errOut, canaryText) {
		t.Errorf("compare printed a local file named by a stored view (exit %d)", code)
	}
	stdout, errOut, _ = execMayday(t, "query", views, "SELECT * FROM incidents")
	if strings.Contains(stdout+errOut, canaryText) {
		t.Error("query ran a stored view")
	}

	hostileID := filepath.Join(root, "hostile-id")
	tamperCopy(t, run, hostileID,
		"UPDATE runs SET run_id = '../../x/PWNED'", "UPDATE spans SET run_id = '../../x/PWNED'")
	base := filepath.Join(root, "exports")
	for _, f := range []string{"otlp", "parquet"} {
		_, errOut, code := execMayday(t, "export", hostileID, "--format", f, "--out", filepath.Join(base, "a", f))
		if code != 2 || !strings.Contains(errOut, "PWNED") {
			t.Errorf("%s export of run id ../../x/PWNED: exit %d, %q; want 2 naming it", f, code, errOut)
		}
	}
	if _, errOut, code := execMayday(t, "report", hostileID, "--out", filepath.Join(base, "r")); code != 2 {
		t.Errorf("report of run id ../../x/PWNED: exit %d, %q; want 2", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, "x")); !os.IsNotExist(err) {
		t.Errorf("a hostile run id made mayday write outside --out: %v", err)
	}

	tools := filepath.Join(root, "tools")
	tamperCopy(t, run, tools, "UPDATE spans SET tool = '<img src=x onerror=alert(1)>|../../y' WHERE tool IS NOT NULL")
	out = filepath.Join(root, "report-tools")
	if _, errOut, code := execMayday(t, "report", tools, "--out", out, "-q"); code != 0 {
		t.Fatalf("report with hostile tool names: exit %d: %s", code, errOut)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if strings.Contains(string(md), "<img") || strings.Contains(string(html), "<img src=x") {
		t.Error("a hostile tool name reached the report as markup")
	}
	if _, errOut, code := execMayday(t, "export", tools, "--format", "otlp", "--out", filepath.Join(base, "t")); code != 0 {
		t.Errorf("export with hostile tool names: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, "y")); !os.IsNotExist(err) {
		t.Errorf("a hostile tool name made mayday write outside --out: %v", err)
	}
}

// A folder or file mayday cannot prove it wrote is never replaced: a report folder of the
// user's pictures, a file the user put under RUN/report/, the user's own DuckDB database as
// a merge target.
func TestReplaceOnlyWhatMaydayWrote(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	smallRun(t, run)
	if _, errOut, code := execMayday(t, "report", run, "-q"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	// Written by mayday, unchanged: replaced without a word.
	if _, errOut, code := execMayday(t, "report", run, "-q"); code != 0 {
		t.Fatalf("a second report over the first: exit %d: %s", code, errOut)
	}
	if _, errOut, code := execMayday(t, "run", "testdata/sweep.yaml", "--out", run, "--force", "-q"); code != 0 {
		t.Fatalf("run --force over mayday's run folder: exit %d: %s", code, errOut)
	}
	if _, errOut, code := execMayday(t, "report", run, "-q"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	mine := filepath.Join(run, "report", "my-notes.png")
	os.WriteFile(mine, []byte("the user's picture"), 0o644)
	pictures := filepath.Join(root, "pictures")
	os.MkdirAll(pictures, 0o755)
	os.WriteFile(filepath.Join(pictures, "holiday.png"), []byte("a picture"), 0o644)
	userDB := filepath.Join(root, "mine.duckdb")
	tamperCopy(t, run, filepath.Join(root, "own"), "DROP TABLE runs")
	os.Rename(filepath.Join(root, "own", analysis.DBFile), userDB)

	for _, args := range [][]string{
		{"run", "testdata/sweep.yaml", "--out", run, "--force", "-q"},
		{"report", run, "-q"},
		{"report", run, "--out", pictures, "--force", "-q"},
		{"merge", userDB, run, "--force", "-q"},
	} {
		before := snapshot(t, root)
		_, errOut, code := execMayday(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, %q; want 2", args, code, errOut)
		}
		sameFiles(t, strings.Join(args, " "), before, snapshot(t, root))
	}
	_, errOut, _ := execMayday(t, "run", "testdata/sweep.yaml", "--out", run, "--force", "-q")
	if !strings.Contains(errOut, "my-notes.png") {
		t.Errorf("the refusal does not name the file it does not recognise: %q", errOut)
	}
}

// A merge into X.duckdb killed with SIGKILL leaves its staging and WAL; the next merge
// cleans them and works. Bad paths and a corrupt input are the user's input (exit 2).
func TestMergeLeftoversAndBadInput(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	smallRun(t, run)
	out := filepath.Join(root, "all.duckdb")
	os.WriteFile(out+".tmp-merge.wal", []byte("left by an older, killed merge"), 0o644)
	os.WriteFile(out+".tmp-merge-999999999.wal", []byte("left by a killed merge"), 0o644)
	if _, errOut, code := execMayday(t, "merge", out, run, "-q"); code != 0 {
		t.Fatalf("merge beside a killed merge's leftovers: exit %d: %s", code, errOut)
	}
	if m, _ := filepath.Glob(out + ".tmp-merge*"); len(m) > 0 {
		t.Errorf("leftovers remain: %v", m)
	}
	if _, errOut, code := execMayday(t, "merge", out, run, "--force", "-q"); code != 0 {
		t.Errorf("merge --force over mayday's own database: exit %d: %s", code, errOut)
	}
	corrupt := filepath.Join(root, "corrupt.duckdb")
	os.WriteFile(corrupt, []byte(strings.Repeat("not a database ", 1000)), 0o644)
	for _, args := range [][]string{
		{"merge", filepath.Join(root, "m"), corrupt},
		{"merge", ".", run},
		{"merge", filepath.Join(root, "a?b"), run},
		{"merge", filepath.Join(root, "a?b.duckdb"), run},
		{"run", "testdata/sweep.yaml", "--out", ".", "-q"},
		{"run", "testdata/sweep.yaml", "--out", filepath.Join(root, "a?b"), "-q"},
	} {
		if _, errOut, code := execMayday(t, args...); code != 2 {
			t.Errorf("%v: exit %d, %q; want 2", args, code, errOut)
		}
	}
}

// A runaway query stops at its time limit or memory limit with exit 2 naming the limit, and
// a real SIGINT or SIGHUP stops a long one at once with exit 130, leaving nothing behind.
func TestQueryBounded(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	smallRun(t, run)
	const long = "SELECT/**/count(*)/**/FROM/**/range(1000000000000)"
	before := snapshot(t, run)
	_, errOut, code := execMayday(t, "query", run, long, "--timeout", "1s")
	if code != 2 || !strings.Contains(errOut, "time limit") || !strings.Contains(errOut, "--timeout") {
		t.Errorf("a query over its time limit: exit %d, %q; want 2 naming the limit", code, errOut)
	}
	_, errOut, code = execMayday(t, "query", run, "SELECT list(range) FROM range(40000000)", "--memory", "64MB")
	if code != 2 || !strings.Contains(errOut, "--memory") {
		t.Errorf("a query over its memory limit: exit %d, %q; want 2 naming the limit", code, errOut)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		cmd, stderr := mainProcess(t, "query", run, long)
		time.Sleep(1500 * time.Millisecond) // the query is under way
		sent := time.Now()
		cmd.Process.Signal(sig)
		cmd.Wait()
		// Within a second on an idle machine; the bound leaves room for a loaded one.
		if took := time.Since(sent); cmd.ProcessState.ExitCode() != 130 || took > 10*time.Second {
			t.Errorf("%s during a long query: exit %d after %s (%s); want 130 at once", sig, cmd.ProcessState.ExitCode(), took, stderr)
		}
	}
	sameFiles(t, "bounded queries", before, snapshot(t, run))
}
