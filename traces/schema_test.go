package traces

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden")

// describe prints every table's columns, one a line: the reviewed form of the schemas.
func describe() string {
	var b strings.Builder
	for _, t := range Tables() {
		b.WriteString(t.String())
		b.WriteString("\n")
		for _, f := range Schema(t).Fields() {
			null := "not null"
			if f.Nullable {
				null = "null"
			}
			b.WriteString("  " + f.Name + " " + f.Type.String() + " " + null + "\n")
		}
	}
	return b.String()
}

// TestSchemaGolden makes every schema change a reviewed diff: run with -update to accept.
func TestSchemaGolden(t *testing.T) {
	path := filepath.Join("testdata", "schema.golden")
	got := describe()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./traces -run TestSchemaGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("schemas differ from %s (rerun with -update if the change is intended):\n%s", path, got)
	}
}

// Every table carries run_id first, and no column name repeats.
func TestSchemaShape(t *testing.T) {
	for _, tb := range Tables() {
		fs := Schema(tb).Fields()
		if fs[0].Name != "run_id" || fs[0].Nullable {
			t.Errorf("%s: first column %s (nullable %v), want run_id not null", tb, fs[0].Name, fs[0].Nullable)
		}
		seen := map[string]bool{}
		for _, f := range fs {
			if seen[f.Name] {
				t.Errorf("%s: column %s twice", tb, f.Name)
			}
			seen[f.Name] = true
		}
	}
	if got := Table(99).String(); got != "Table(99)" {
		t.Errorf("Table(99).String() = %q", got)
	}
}
