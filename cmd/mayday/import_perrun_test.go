//go:build duckdb_arrow

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An import of several services prints each run's own termination reasons (and
// summary.json keeps them under each run), not the first run's for all.
func TestImportPrintsEachRunsReasons(t *testing.T) {
	dir := t.TempDir()
	resource := func(service, reason string, trace byte) string {
		return fmt.Sprintf(`{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":%q}}]},"scopeSpans":[{"spans":[
{"traceId":"%032x","spanId":"00000000000000%02x","name":"invoke_agent a","startTimeUnixNano":"1772960400000000000","endTimeUnixNano":"1772960460000000000",
 "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}},{"key":"error.type","value":{"stringValue":%q}}],
 "status":{"code":2,"message":"it failed"}}]}]}`, service, trace, trace, reason)
	}
	body := `{"resourceSpans":[` + resource("alpha", "AlphaError", 1) + "," + resource("beta", "BetaError", 2) + "]}\n"
	in := filepath.Join(dir, "two.json")
	if err := os.WriteFile(in, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := execMayday(t, "import", in, "--out", filepath.Join(dir, "run"))
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	alpha, beta, ok := strings.Cut(stdout, "beta  seed")
	if !ok || !strings.Contains(alpha, "AlphaError=1") || strings.Contains(alpha, "BetaError") ||
		!strings.Contains(beta, "BetaError=1") || strings.Contains(beta, "AlphaError") {
		t.Errorf("each run's reasons under its own summary:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"BetaError": 1`) {
		t.Errorf("summary.json lacks the second run's reasons:\n%s", b)
	}
}
