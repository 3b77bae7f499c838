//go:build duckdb_arrow

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
)

const otelFixtures = "../../analysis/testdata/otel"

func TestImportCommand(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "prod")
	stdout, errOut, code := execMayday(t, "import", filepath.Join(otelFixtures, "genai-tiny.json"), "--out", out)
	if code != 0 || !strings.Contains(stdout, "completion_rate") || !strings.Contains(stdout, "not in a trace") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, errOut)
	}
	if err := analysis.IsRunFolder(out); err != nil {
		t.Fatalf("the import is not a run folder: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, analysis.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Metrics map[string]float64 `json:"metrics"`
		Unknown map[string]string  `json:"unknown"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Unknown["correct_completion_rate"] == "" || sum.Metrics["started"] != 6 {
		t.Errorf("summary.json: %s", b)
	}
	if _, ok := sum.Metrics["duplicate_side_effects"]; ok {
		t.Errorf("summary.json has duplicate_side_effects for an imported run: %s", b)
	}
	// query reads it like any run folder
	if q, e, code := execMayday(t, "query", out, "SELECT count(*) AS n FROM spans WHERE operation = 'execute_tool'", "--format", "csv"); code != 0 || !strings.Contains(q, "n\n19") {
		t.Errorf("query: exit %d %q %q", code, q, e)
	}
}

// Bad input: a clear message naming the file (and line), exit 2, and nothing left behind,
// neither the folder nor its staging folder.
func TestImportBadInputLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.jsonl")
	js, err := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.ReplaceAll(string(js), "\n", "")
	os.WriteFile(bad, []byte(line+"\n"+line+"\n{not json\n"), 0o644)
	pb, _ := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.pb"))
	cut := filepath.Join(tmp, "cut.pb")
	os.WriteFile(cut, pb[:len(pb)-100], 0o644)
	existing := filepath.Join(tmp, "existing")
	os.Mkdir(existing, 0o755)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{bad}, "bad.jsonl:3:"},
		{[]string{cut}, "cut.pb"},
		{[]string{filepath.Join(tmp, "missing.json")}, "missing.json"},
		{[]string{filepath.Join(otelFixtures, "genai-tiny.pb"), "--conventions", "zipkin"}, "--conventions"},
		{[]string{filepath.Join(otelFixtures, "genai-tiny.pb"), "--run-id", "../x"}, "--run-id"},
	} {
		out := filepath.Join(tmp, "out")
		args := append([]string{"import"}, c.args...)
		args = append(args, "--out", out)
		_, errOut, code := execMayday(t, args...)
		if code != 2 || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %q", c.args, code, errOut, c.msg)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 3 {
			names := []string{}
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%v left %v behind", c.args, names)
		}
	}
	_, errOut, code := execMayday(t, "import", filepath.Join(otelFixtures, "genai-tiny.pb"), "--out", existing)
	if code != 2 || !strings.Contains(errOut, "already exists") {
		t.Errorf("an existing --out: exit %d, %q", code, errOut)
	}
	if entries, _ := os.ReadDir(existing); len(entries) != 0 {
		t.Errorf("the existing folder was written into: %v", entries)
	}
}

// Hostile files through the command: exit 2, a message naming the file and what is wrong
// (never the content of a file a link points to), and neither the run folder nor its
// staging folder left behind.
func TestImportHostileFiles(t *testing.T) {
	tmp := t.TempDir()
	js, err := os.ReadFile(filepath.Join(otelFixtures, "genai-tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.ReplaceAll(string(js), "\n", "")
	// a token count of int64's largest
	tokens := filepath.Join(tmp, "tokens.jsonl")
	huge := strings.Replace(line, `"intValue":"1200"`, `"intValue":"9223372036854775807"`, 1)
	if huge == line {
		t.Fatal("the fixture has no attributes to add to")
	}
	os.WriteFile(tokens, []byte(huge+"\n"), 0o644)
	// a line longer than --max-message
	long := filepath.Join(tmp, "long.jsonl")
	os.WriteFile(long, []byte(line+"\n"+line+strings.Repeat(" ", 2<<10)+"\n"), 0o644)
	maxLine := strconv.Itoa(len(line) + 1<<10)
	// a folder holding a link to a file outside it
	secret := filepath.Join(tmp, "secret.txt")
	os.WriteFile(secret, []byte("SECRET-CONTENT\n"), 0o600)
	linked := filepath.Join(tmp, "linked")
	os.Mkdir(linked, 0o755)
	if err := os.Symlink(secret, filepath.Join(linked, "a.json")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	before, _ := os.ReadDir(tmp)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{tokens}, `tokens.jsonl:1: span "chat gpt-4o" (000009c700000003): attribute gen_ai.usage.input_tokens: 9223372036854775807: want a whole count`},
		{[]string{long, "--max-message", maxLine}, "long.jsonl:2: the line is larger than " + maxLine + " bytes (--max-message"},
		{[]string{linked}, "a.json: a symbolic link to a file outside"},
		{[]string{tokens, "--max-message", "lots"}, "--max-message"},
		{[]string{tokens, "--max-spread", "-1h"}, "--max-spread"},
	} {
		out := filepath.Join(tmp, "out")
		args := append(append([]string{"import"}, c.args...), "--out", out)
		_, errOut, code := execMayday(t, args...)
		if code != 2 || !strings.Contains(errOut, c.msg) || strings.Contains(errOut, "SECRET") {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %q", c.args, code, errOut, c.msg)
		}
		if after, _ := os.ReadDir(tmp); len(after) != len(before) {
			t.Errorf("%v left %d entries behind", c.args, len(after)-len(before))
		}
	}
}
