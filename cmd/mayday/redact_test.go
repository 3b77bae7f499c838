//go:build duckdb_arrow

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
)

// plainSecrets are the secrets in testdata/secrets.yaml and the sweep below, in plain text.
var plainSecrets = regexp.MustCompile(`sk-live-0123456789abcdef|sk-AAAA11112222|sk-BBBB33334444|hunter22x|hunter33y|abcdefghijk123|zzzzyyyyxxxx9`)

// leaks lists every row of every table of the database that holds a plain secret.
func leaks(t *testing.T, db string) []string {
	t.Helper()
	d, err := analysis.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []string
	for _, table := range []string{"runs", "investigations", "spans", "transitions", "executions", "faults", "tool_samples", "sweep_params"} {
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
		out, errOut, code = execMayday(t, "sweep", "testdata/secrets.yaml", "--out", sweep, "--force", "--seeds", "1", "--format", format,
			"--vary", "tools.flaky.arguments.api_key=sk-AAAA11112222,sk-BBBB33334444",
			"--vary", "tools.flaky.arguments.note=plain,Bearer zzzzyyyyxxxx9")
		if code != 0 {
			t.Fatalf("sweep: exit %d: %s", code, errOut)
		}
		noLeak(t, "sweep's "+format+" output", out+errOut)
	}
	for _, l := range leaks(t, filepath.Join(sweep, analysis.DBFile)) {
		t.Errorf("sweep leaks %s", l)
	}
	b, _ := os.ReadFile(filepath.Join(sweep, "sweep.json"))
	noLeak(t, "sweep.json", string(b))
	if _, errOut, code := execMayday(t, "report", run, sweep, "--out", filepath.Join(root, "report"), "-q"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"report.html", "report.md"} {
		b, _ := os.ReadFile(filepath.Join(root, "report", f))
		noLeak(t, f, string(b))
	}
}
