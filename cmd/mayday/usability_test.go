//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// Maps, lists and structs print as JSON in query's text and CSV output, not as the
// driver's Go types.
func TestQueryPrintsMapsAndListsAsJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.duckdb")
	if _, errOut, code := execMayday(t, "run", "transient-errors", "--set", "workload.investigations=5", "--out", filepath.Dir(db)+"/r", "-q"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	sql := `SELECT MAP {'a': 1, 'b<c': 2} AS m, [1, 2] AS l, {'x': 'y'} AS s`
	for _, format := range []string{"table", "csv"} {
		out, errOut, code := execMayday(t, "query", filepath.Dir(db)+"/r", sql, "--format", format)
		if code != 0 {
			t.Fatalf("query --format %s: exit %d: %s", format, code, errOut)
		}
		if strings.Contains(out, "OrderedMap") || strings.Contains(out, "map[") {
			t.Errorf("--format %s prints Go types:\n%s", format, out)
		}
		for _, want := range []string{`"a":1`, `"b<c":2`, `[1,2]`, `"x":"y"`} {
			if !strings.Contains(strings.ReplaceAll(out, `""`, `"`), want) {
				t.Errorf("--format %s: no %s in\n%s", format, want, out)
			}
		}
	}
}

// A flag error names the command once: "mayday: run: unknown flag", never "mayday: mayday run".
func TestFlagErrorHasOnePrefix(t *testing.T) {
	_, errOut, code := execMayday(t, "run", "--no-such-flag")
	if code != 2 || !strings.Contains(errOut, "run: unknown flag: --no-such-flag") || strings.Contains(errOut, "mayday run:") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one prefix", code, errOut)
	}
}

// An unknown flag close to one the command has is suggested, as an unknown command is; one
// close to none gets no guess. Exit 2 either way.
func TestUnknownFlagSuggestsTheClosest(t *testing.T) {
	for _, c := range []struct {
		args    []string
		suggest string // "" for no suggestion
	}{
		{[]string{"run", "research-fleet", "--sed", "3"}, "--seed"},
		{[]string{"run", "research-fleet", "--seedss", "3"}, "--seeds"},
		{[]string{"run", "research-fleet", "--forse"}, "--force"},
		{[]string{"report", "runs/x", "--forc"}, "--force"},
		{[]string{"sweep", "research-fleet", "--memo=1GiB"}, "--memory-limit"},
		{[]string{"check", "--al"}, "--all"},
		{[]string{"run", "research-fleet", "--colour"}, ""},
		{[]string{"run", "research-fleet", "--xyzzy"}, ""},
	} {
		_, errOut, code := execMayday(t, c.args...)
		if code != 2 || !strings.Contains(errOut, "unknown flag") {
			t.Errorf("%v: exit %d, %q; want 2 and unknown flag", c.args, code, errOut)
			continue
		}
		if c.suggest == "" {
			if strings.Contains(errOut, "did you mean") {
				t.Errorf("%v: %q suggests a flag; want none", c.args, errOut)
			}
		} else if !strings.Contains(errOut, "did you mean "+c.suggest+"?") {
			t.Errorf("%v: %q; want it to suggest %s", c.args, errOut, c.suggest)
		}
	}
}

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"", "abc", 3}, {"seed", "seed", 0}, {"sed", "seed", 1}, {"seeds", "seed", 1},
		{"forse", "force", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 2}} {
		if got := scenarios.EditDistance(c.a, c.b); got != c.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := scenarios.EditDistance(c.b, c.a); got != c.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.b, c.a, got, c.d)
		}
	}
}

// `-o json` (a kubectl habit) would create a folder named json: refused with a hint, before
// anything is written; ./json is a folder.
func TestOutThatIsAFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{
		{"run", "transient-errors", "-o", "json"},
		{"sweep", "transient-errors", "-o", "csv"},
		{"check", "transient-errors", "-o", "yaml"},
		{"report", "runs/x", "-o", "json"},
	} {
		_, errOut, code := execMayday(t, args...)
		if code != 2 || !strings.Contains(errOut, "--format") || !strings.Contains(errOut, "./") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with the --format hint", args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused command wrote %v", entries)
	}
	if _, errOut, code := execMayday(t, "run", "transient-errors", "--set", "workload.investigations=3", "-o", "./json", "-q"); code != 0 {
		t.Fatalf("-o ./json: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "json", "summary.json")); err != nil {
		t.Errorf("-o ./json did not write the run folder json: %v", err)
	}
}

// `mayday scenarios show NAME` prints the embedded file byte for byte: saved, it validates.
func TestScenariosShowPrintsAStartingFile(t *testing.T) {
	out, errOut, code := execMayday(t, "scenarios", "show", "research-fleet")
	want, _ := scenarios.Embedded("research-fleet")
	if code != 0 || out != string(want) {
		t.Fatalf("exit %d (%s); output differs from the embedded file", code, errOut)
	}
	f := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := execMayday(t, "validate", f); code != 0 {
		t.Errorf("validate of the shown file: exit %d: %s", code, errOut)
	}
	if _, errOut, code := execMayday(t, "scenarios", "show", "no-such"); code != 2 || !strings.Contains(errOut, "research-fleet") {
		t.Errorf("unknown name: exit %d, %q; want exit 2 listing the examples", code, errOut)
	}
}

// `make run` writes the run folder the README's next commands read.
func TestMakeRunWritesWhereTheReadmeReads(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^\t\./\$\(BIN\) run (.*)$`).FindSubmatch(mk)
	if line == nil {
		t.Fatal("Makefile: no `./$(BIN) run` recipe under run:")
	}
	dir := defaultRunDir(scenarios.Default, 42, 1)
	if m := regexp.MustCompile(`--out[ =](\S+)`).FindSubmatch(line[1]); m != nil {
		dir = string(m[1])
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "mayday query "+dir+" ") || !strings.Contains(string(readme), "`make run` writes its run folder to\n`"+dir+"`") {
		t.Errorf("make run writes %s, which the README's commands do not read", dir)
	}
}

// execTerminal runs mayday with stderr taken for a terminal, as a person at one sees it.
func execTerminal(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Terminal: true})
	root.SetArgs(args)
	code = exitCode(runRoot(context.Background(), root), &errOut)
	return out.String(), errOut.String(), code
}

// The long commands say what they are doing on a terminal, and nothing when stderr is not
// one or with --quiet; stdout is the same either way.
func TestLongCommandsShowProgressOnATerminal(t *testing.T) {
	tmp := t.TempDir()
	run := runFolder(t, filepath.Join(tmp, "run"))
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"export", run, "--format", "otlp", "--out", filepath.Join(tmp, "o1")}, "export: 1 file written"},
		{[]string{"report", run, "-o", filepath.Join(tmp, "r1")}, "report: computing the metrics"},
	} {
		out, errOut, code := execTerminal(t, c.args...)
		if code != 0 || !strings.Contains(errOut, c.says) {
			t.Errorf("%v on a terminal: exit %d, stderr %q; want %q", c.args[0], code, errOut, c.says)
		}
		quiet := append(slices.Clone(c.args[:len(c.args)-1]), c.args[len(c.args)-1]+"-q", "-q")
		if _, errOut, code := execTerminal(t, quiet...); code != 0 || errOut != "" {
			t.Errorf("%v -q: exit %d, stderr %q; want nothing", c.args[0], code, errOut)
		}
		plain := append(slices.Clone(c.args[:len(c.args)-1]), c.args[len(c.args)-1]+"-p")
		pout, errOut, code := execMayday(t, plain...)
		if code != 0 || errOut != "" {
			t.Errorf("%v off a terminal: exit %d, stderr %q; want nothing", c.args[0], code, errOut)
		}
		if strings.Count(pout, "\n") != strings.Count(out, "\n") {
			t.Errorf("%v: stdout differs on and off a terminal:\n%s\n%s", c.args[0], out, pout)
		}
	}
}
