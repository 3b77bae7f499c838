//go:build duckdb_arrow

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
)

// plainSecrets are the secrets in testdata/secrets.yaml and the sweep below, in plain text.
var plainSecrets = regexp.MustCompile(`sk-live-0123456789abcdef|sk-AAAA11112222|sk-BBBB33334444|hunter22x|hunter33y|abcdefghijk123|zzzzyyyyxxxx9|` +
	`Pgcanary\d\dpw|AKIAIOSFODNN7CANARY|JwtCanary|GhCanary|PemCanary|sweepcanary|(?i)canary`)

// leaks lists every row of every table of the database that holds a plain secret.
func leaks(t *testing.T, db string) []string {
	t.Helper()
	d, err := analysis.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []string
	for _, table := range []string{"runs", "investigations", "spans", "transitions", "executions", "faults", "tool_samples", "sweep_params", "span_attrs", "tool_args"} {
		rows, err := d.SQL().Query("SELECT CAST(t AS VARCHAR) FROM " + table + " t")
		if err != nil {
			continue // sweep_params exists only in a sweep
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			if plainSecrets.MatchString(s) {
				out = append(out, table+": "+s)
			}
		}
		rows.Close()
	}
	return out
}

func noLeak(t *testing.T, what, text string) {
	t.Helper()
	if m := plainSecrets.FindString(text); m != "" {
		t.Errorf("%s shows the secret %s", what, m)
	}
}

// A secret varied by a sweep, reused as the model or a tool version, or shaped as a bearer
// token or a passwd/pwd argument, appears nowhere in plain text: not in any table, not in
// sweep.json, not on stdout or stderr, not in the report.
func TestSecretsStaySecret(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	out, errOut, code := execMayday(t, "run", "testdata/secrets.yaml", "--out", run)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	noLeak(t, "run's output", out+errOut)
	for _, l := range leaks(t, filepath.Join(run, analysis.DBFile)) {
		t.Errorf("run leaks %s", l)
	}
	sweep := filepath.Join(root, "sweep")
	for _, format := range []string{"text", "json"} {
		args := []string{"sweep", "testdata/secrets.yaml", "--out", sweep, "--force", "--seeds", "1", "--format", format}
		if format == "text" { // the json sweep runs the file's own grid, over a secret argument
			args = append(args, "--vary", "tools.flaky.arguments.api_key=sk-AAAA11112222,sk-BBBB33334444",
				"--vary", "tools.flaky.arguments.note=plain,Bearer zzzzyyyyxxxx9")
		}
		out, errOut, code = execMayday(t, args...)
		if code != 0 {
			t.Fatalf("sweep: exit %d: %s", code, errOut)
		}
		noLeak(t, "sweep's "+format+" output", out+errOut)
		for _, l := range leaks(t, filepath.Join(sweep, analysis.DBFile)) {
			t.Errorf("%s sweep leaks %s", format, l)
		}
		b, _ := os.ReadFile(filepath.Join(sweep, "sweep.json"))
		noLeak(t, "sweep.json", string(b))
	}
	for _, format := range []string{"parquet", "otlp"} {
		dir := filepath.Join(root, "export-"+format)
		if _, errOut, code := execMayday(t, "export", run, "--format", format, "--out", dir); code != 0 {
			t.Fatalf("export %s: exit %d: %s", format, code, errOut)
		}
		for _, l := range exportLeaks(t, dir) {
			t.Errorf("%s export leaks %s", format, l)
		}
	}
	if _, errOut, code := execMayday(t, "report", run, sweep, "--out", filepath.Join(root, "report"), "-q"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"report.html", "report.md"} {
		b, _ := os.ReadFile(filepath.Join(root, "report", f))
		noLeak(t, f, string(b))
	}
}

// exportLeaks lists the rows of the Parquet files, and the lines of the other files, under
// dir that hold a plain secret.
func exportLeaks(t *testing.T, dir string) []string {
	t.Helper()
	d, err := analysis.Create(filepath.Join(t.TempDir(), "scratch.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []string
	filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if filepath.Ext(path) != ".parquet" {
			b, _ := os.ReadFile(path)
			if m := plainSecrets.FindString(string(b)); m != "" {
				out = append(out, path+": "+m)
			}
			return nil
		}
		rows, err := d.SQL().Query("SELECT CAST(t AS VARCHAR) FROM read_parquet(?) t", path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			rows.Scan(&s)
			if m := plainSecrets.FindString(s); m != "" {
				out = append(out, path+": "+m)
			}
		}
		return nil
	})
	return out
}

// A secret that fails validation (a list, a mapping, a value with ": " in --set or --vary)
// is never echoed: not on stderr, not in validate --format json.
func TestRejectedSecretsNotEchoed(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ntools:\n  a:\n    timeout: 1s\n    arguments:\n      api_key: [sk-live-0123456789abcdef]\n"+
		"      dsn: {x: \"postgres://u:Pgcanary77pw@h/x\"}\n"), 0o644)
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte("name: ok\ntools:\n  a: {timeout: 1s}\n"), 0o644)
	for _, args := range [][]string{
		{"validate", bad}, {"validate", bad, "--format", "json"},
		{"validate", ok, "--format", "json", "--set", "tools.a.arguments.api_key=[sk-live-0123456789abcdef]"},
		{"validate", ok, "--set", "tools.a.arguments.token=hunter22x: x"},
		{"run", ok, "--no-trace", "--set", "tools.a.arguments={password: [hunter33y]}"},
		{"sweep", ok, "--out", filepath.Join(dir, "s"), "--vary", "tools.a.arguments.api_key=sk-AAAA11112222,"},
		{"sweep", ok, "--out", filepath.Join(dir, "s"), "--vary", "tools.a.arguments.api_key=[sk-AAAA11112222],x"},
	} {
		out, errOut, code := execMayday(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d; want 2 (%s)", args, code, errOut)
		}
		noLeak(t, fmt.Sprint(args), out+errOut)
	}
}
