//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/reports"
)

// reportRunFolder runs a small shared-outage into a run folder with `mayday run`.
func reportRunFolder(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "outage")
	ios := &ioStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	err := runRun(context.Background(), &runOptions{
		io: ios, Scenarios: []string{"shared-outage"}, runFlags: runFlags{
			Seeds: 1, Out: dir, Format: "text", Quiet: true,
			Sets: []string{"workload.investigations=200", "faults[0].at=3m", "faults[0].for=5m"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func reportCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(args)
	code = exitCode(runRoot(context.Background(), root), &errOut) // prints the error
	return out.String(), errOut.String(), code
}

func TestReportCommand(t *testing.T) {
	dir := reportRunFolder(t)

	// Default folder, JSON: the paths of what was written.
	stdout, stderr, code := reportCLI(t, "report", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var files reports.Files
	if err := json.Unmarshal([]byte(stdout), &files); err != nil {
		t.Fatalf("--format json printed %q: %v", stdout, err)
	}
	want := filepath.Join(dir, "report")
	if files.Dir != want || files.HTML != filepath.Join(want, reports.HTMLFile) || files.Markdown != filepath.Join(want, reports.MarkdownFile) {
		t.Errorf("files %+v, want them in %s", files, want)
	}
	if len(files.Images) != len(reports.ChartIDs) {
		t.Errorf("%d images, want %d", len(files.Images), len(reports.ChartIDs))
	}
	for _, f := range append([]string{files.HTML, files.Markdown}, files.Images...) {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// --out, text: says where the files went.
	out := filepath.Join(t.TempDir(), "review")
	stdout, stderr, code = reportCLI(t, "report", dir, filepath.Join(dir, "mayday.duckdb"), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, filepath.Join(out, reports.HTMLFile)) || !strings.Contains(stdout, filepath.Join(out, reports.MarkdownFile)) {
		t.Errorf("text output %q does not name the files in %s", stdout, out)
	}

	// --out over an existing folder: refused without --force, as every command's folder is.
	_, stderr, code = reportCLI(t, "report", dir, "--out", out)
	if code != 2 || !strings.Contains(stderr, out) || !strings.Contains(stderr, "--force") {
		t.Errorf("a second report to --out without --force: exit %d, %q; want 2 naming the folder and --force", code, stderr)
	}

	// --force replaces it; --quiet prints nothing.
	stdout, stderr, code = reportCLI(t, "report", dir, "--quiet", "--out", out, "--force")
	if code != 0 || stdout != "" {
		t.Errorf("--force --quiet: exit %d, printed %q, %s", code, stdout, stderr)
	}
}

func TestReportCommandErrors(t *testing.T) {
	empty := t.TempDir()
	// A DuckDB database that is not mayday's.
	other := filepath.Join(t.TempDir(), "other.duckdb")
	db, err := sql.Open("duckdb", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "requires at least 1 arg"},
		{[]string{"report", filepath.Join(empty, "nope")}, "nope: no run folder or database there"},
		{[]string{"report", empty}, "not a run folder (no mayday.duckdb inside)"},
		{[]string{"report", empty, "--format", "yaml"}, `--format "yaml": want text or json`},
		{[]string{"report", other}, "other.duckdb: not a mayday database: it has no runs table"},
	} {
		_, stderr, code := reportCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
