//go:build duckdb_arrow

package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/analysis"
)

// importFixtures lists what TestCommandsOnImportedRuns imports, found by listing the
// fixture folders so a new capture is covered without editing the test: every trace file
// of analysis/testdata/otel, one import each, and every folder of
// analysis/testdata/libraries (captures of real agent libraries), all its trace files in
// one import. A trace file has a trace extension (.gz allowed) and, when it is JSON, holds
// OTLP ("resourceSpans"): params.json or a library's truth.json are not traces.
func importFixtures(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	files, err := os.ReadDir(otelFixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(otelFixtures, f.Name())
		if !f.IsDir() && isTraceFile(t, p) {
			out["otel/"+f.Name()] = []string{p}
		}
	}
	libs := "../../analysis/testdata/libraries"
	dirs, err := os.ReadDir(libs)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		var traces []string
		err := filepath.WalkDir(filepath.Join(libs, d.Name()), func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && isTraceFile(t, p) {
				traces = append(traces, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(traces) == 0 {
			t.Errorf("libraries/%s holds no trace file", d.Name())
			continue
		}
		out["libraries/"+d.Name()] = traces
	}
	if len(out) == 0 {
		t.Fatal("no fixture found")
	}
	return out
}

func isTraceFile(t *testing.T, path string) bool {
	name := strings.TrimSuffix(filepath.Base(path), ".gz")
	switch filepath.Ext(name) {
	case ".pb", ".binpb", ".protobuf", ".otlp":
		return true
	case ".json", ".jsonl", ".ndjson":
	default:
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	head := make([]byte, 1<<16)
	n, _ := io.ReadFull(r, head)
	return bytes.Contains(head[:n], []byte(`"resourceSpans"`)) || bytes.Contains(head[:n], []byte(`"resource_spans"`))
}

// Every command works on an imported run, whose columns a trace cannot know are NULL: each
// fixture is imported and report, export (OTLP in both encodings, Parquet), the import of
// that export, compare (imported against imported and against a simulated run), query and
// fit run on it. A metric the trace cannot give reads "not recorded", never 0.
func TestCommandsOnImportedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every fixture")
	}
	tmp := t.TempDir()
	sim := runFolder(t, filepath.Join(tmp, "sim"))
	fixtures := importFixtures(t)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range fixtures {
			if !yield(k) {
				return
			}
		}
	})
	var prev string
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(tmp, "f"+string(rune('a'+i)))
			imp := filepath.Join(dir, "imp")
			mustRun(t, append(append([]string{"import"}, fixtures[name]...), "--out", imp, "-q")...)

			mustRun(t, "report", imp, "-o", filepath.Join(dir, "report"), "-q")
			md, err := os.ReadFile(filepath.Join(dir, "report", "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "| correct_completion_rate | not recorded |") {
				t.Errorf("report: correct_completion_rate is not shown as not recorded:\n%s", md)
			}
			mustRun(t, "report", imp, sim, "-o", filepath.Join(dir, "report2"), "-q")

			for _, enc := range []string{"json", "proto"} {
				ex := filepath.Join(dir, "otlp-"+enc)
				mustRun(t, "export", imp, "--format", "otlp", "--encoding", enc, "--out", ex, "-q")
				back := filepath.Join(dir, "back-"+enc)
				mustRun(t, "import", ex, "--out", back, "-q")
				q, _ := mustRun(t, "query", back, "SELECT count(*) AS n FROM spans", "--format", "csv")
				want, _ := mustRun(t, "query", imp, "SELECT count(*) AS n FROM spans", "--format", "csv")
				if q != want {
					t.Errorf("%s export imported back: %q spans, want %q", enc, q, want)
				}
			}
			mustRun(t, "export", imp, "--format", "parquet", "--out", filepath.Join(dir, "parquet"), "-q")

			out, _ := mustRun(t, "compare", imp, sim)
			if !strings.Contains(out, "not recorded") {
				t.Errorf("compare with a simulated run shows nothing as not recorded:\n%s", out)
			}
			if prev != "" {
				mustRun(t, "compare", imp, prev)
			}
			prev = imp

			// an import holds a run per service the trace names
			nulls, _ := mustRun(t, "query", imp, "SELECT count(*) AS n FROM metrics WHERE correct_completion_rate IS NULL", "--format", "csv")
			all, _ := mustRun(t, "query", imp, "SELECT count(*) AS n FROM metrics", "--format", "csv")
			if nulls != all || all == "n\n0\n" {
				t.Errorf("query: correct_completion_rate NULL in %q of %q runs, want every one", nulls, all)
			}
			ids, _ := mustRun(t, "query", imp, "SELECT run_id FROM runs ORDER BY run_id", "--format", "csv")
			for j, id := range strings.Fields(ids)[1:] {
				mustRun(t, "fit", imp, "--run", id, "--out", filepath.Join(dir, "fit"+string(rune('a'+j))+".yaml"))
			}
		})
	}
}

func mustRun(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, errOut, code := execMayday(t, args...)
	if code != 0 {
		t.Fatalf("mayday %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out, errOut
}

// mayday import DIR/*.json of an export folder is given the export's own manifest too: it
// is skipped with a note, not read as trace data.
func TestImportSkipsExportManifest(t *testing.T) {
	tmp := t.TempDir()
	imp := filepath.Join(tmp, "imp")
	mustRun(t, "import", filepath.Join(otelFixtures, "genai-tiny.json"), "--out", imp, "-q")
	ex := filepath.Join(tmp, "ex")
	mustRun(t, "export", imp, "--format", "otlp", "--out", ex, "-q")
	files, err := filepath.Glob(filepath.Join(ex, "*.json"))
	// as a shell expands DIR/*.json: without the hidden files
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), ".") })
	if err != nil || !slices.Contains(files, filepath.Join(ex, analysis.ManifestFile)) {
		t.Fatalf("the export's *.json: %v %v", files, err)
	}
	_, errOut := mustRun(t, append(append([]string{"import"}, files...), "--out", filepath.Join(tmp, "back"), "-q")...)
	if !strings.Contains(errOut, "skipping "+filepath.Join(ex, analysis.ManifestFile)) {
		t.Errorf("no note about the skipped manifest: %q", errOut)
	}
}
