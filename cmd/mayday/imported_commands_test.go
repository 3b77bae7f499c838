//go:build duckdb_arrow

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
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
// fit run on it; one report shows every import and the simulated run together. A metric the
// trace cannot give reads "not recorded", never 0. What an import stored is read from its
// own summary (--format json) where it says it, rather than by a query each.
func TestCommandsOnImportedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every fixture")
	}
	tmp := t.TempDir()
	sim := runFolder(t, filepath.Join(tmp, "sim"))
	fixtures := importFixtures(t)
	names := slices.Sorted(maps.Keys(fixtures))
	var prev string
	all := []string{"report"}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(tmp, "f"+string(rune('a'+i)))
			imp := filepath.Join(dir, "imp")
			out, _ := mustRun(t, append(append([]string{"import"}, fixtures[name]...), "--out", imp, "-q", "--format", "json")...)
			runs := importedRuns(t, out)
			all = append(all, imp)

			mustRun(t, "report", imp, "-o", filepath.Join(dir, "report"), "-q")
			md, err := os.ReadFile(filepath.Join(dir, "report", "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "| correct_completion_rate | not recorded |") {
				t.Errorf("report: correct_completion_rate is not shown as not recorded:\n%s", md)
			}

			// The runs stored, the spans they hold and the metrics no trace can give, in one query.
			stored, _ := mustRun(t, "query", imp, "SELECT (SELECT count(*) FROM spans) AS spans, count(*) AS runs,"+
				" count(*) FILTER (WHERE correct_completion_rate IS NULL) AS unknown FROM metrics", "--format", "csv")
			var spans int64
			var nruns, unknown int
			if _, err := fmt.Sscanf(strings.Split(stored, "\n")[1], "%d,%d,%d", &spans, &nruns, &unknown); err != nil {
				t.Fatalf("query: %q: %v", stored, err)
			}
			if nruns != len(runs) || unknown != nruns || nruns == 0 || spans == 0 {
				t.Errorf("query: %d runs and %d spans stored, %d runs with correct_completion_rate NULL; the import says %d runs", nruns, spans, unknown, len(runs))
			}
			for _, enc := range []string{"json", "proto"} {
				ex := filepath.Join(dir, "otlp-"+enc)
				mustRun(t, "export", imp, "--format", "otlp", "--encoding", enc, "--out", ex, "-q")
				back, _ := mustRun(t, "import", ex, "--out", filepath.Join(dir, "back-"+enc), "-q", "--format", "json")
				var got int64
				for _, r := range importedRuns(t, back) {
					got += r.Spans
				}
				if got != spans {
					t.Errorf("%s export imported back: %d spans, want the %d stored", enc, got, spans)
				}
			}
			mustRun(t, "export", imp, "--format", "parquet", "--out", filepath.Join(dir, "parquet"), "-q")

			out, _ = mustRun(t, "compare", imp, sim)
			if !strings.Contains(out, "not recorded") {
				t.Errorf("compare with a simulated run shows nothing as not recorded:\n%s", out)
			}
			if prev != "" {
				mustRun(t, "compare", imp, prev)
			}
			prev = imp

			for j, r := range runs {
				mustRun(t, "fit", imp, "--run", r.RunID, "--out", filepath.Join(dir, "fit"+string(rune('a'+j))+".yaml"))
			}
		})
	}
	mustRun(t, append(all, sim, "-o", filepath.Join(tmp, "report-all"), "-q")...)
}

// importedRuns reads the runs an import stored from its summary (--format json).
func importedRuns(t *testing.T, summary string) []analysis.ImportedRun {
	t.Helper()
	var s struct {
		Import []analysis.ImportedRun `json:"import"`
	}
	if err := json.Unmarshal([]byte(summary), &s); err != nil || len(s.Import) == 0 {
		t.Fatalf("import --format json: %v, %d runs:\n%s", err, len(s.Import), summary)
	}
	return s.Import
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
