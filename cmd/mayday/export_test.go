//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/mayday-sim/mayday/analysis"
)

func TestExportCommand(t *testing.T) {
	tmp := t.TempDir()
	run := runFolder(t, filepath.Join(tmp, "run"))
	otlp := filepath.Join(tmp, "otlp")
	out, errOut, code := execMayday(t, "export", run, "--format", "otlp", "--out", otlp)
	if code != 0 || !strings.Contains(out, "exported") {
		t.Fatalf("export: exit %d\n%s%s", code, out, errOut)
	}
	m, err := analysis.ReadManifest(otlp)
	if err != nil || m.Format != "otlp" || len(m.Files) == 0 || m.Rows() == 0 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"export", run, "--format", "otlp", "--out", otlp}, 2, "already exists"},
		{[]string{"export", run, "--format", "parquet", "--out", otlp, "--force"}, 0, ""},
		{[]string{"export", run, "--format", "parquet", "--out", run, "--force"}, 2, "is not a mayday export"},
		{[]string{"export", run, "--format", "csv", "--out", filepath.Join(tmp, "x")}, 2, "want otlp or parquet"},
		{[]string{"export", run, "--format", "otlp"}, 2, "--out"},
		{[]string{"export", filepath.Join(tmp, "nothing"), "--format", "otlp", "--out", filepath.Join(tmp, "x")}, 2, "no run folder"},
		{[]string{"export", run, "--format", "otlp", "--chunk-spans", "0", "--out", filepath.Join(tmp, "x")}, 2, "--chunk-spans"},
	} {
		_, errOut, code := execMayday(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	if m, err := analysis.ReadManifest(otlp); err != nil || m.Format != "parquet" {
		t.Errorf("--force over the otlp export: manifest %+v, %v; want the parquet one", m, err)
	}
	if _, err := os.Stat(filepath.Join(run, analysis.DBFile)); err != nil {
		t.Errorf("the run folder was touched: %v", err)
	}
}

func TestExportInterrupted(t *testing.T) {
	tmp := t.TempDir()
	run := runFolder(t, filepath.Join(tmp, "run"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs([]string{"export", run, "--format", "parquet", "--out", filepath.Join(tmp, "pq")})
	if code := exitCode(runRoot(ctx, root), &errOut); code != 130 || !strings.Contains(errOut.String(), "nothing was exported") {
		t.Errorf("interrupted export: exit %d, %q; want 130", code, errOut.String())
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 {
		t.Errorf("an interrupted export left %d entries beside the run folder", len(ents)-1)
	}
}

func TestExportSweep(t *testing.T) {
	tmp := t.TempDir()
	sweep := filepath.Join(tmp, "sweep")
	if _, errOut, code := execMayday(t, "sweep", "testdata/retried.yaml", "--vary", "recovery.retry.max_attempts=1,3",
		"--seeds", "2", "--out", sweep, "-q"); code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, errOut)
	}
	otlp := filepath.Join(tmp, "otlp")
	if _, errOut, code := execMayday(t, "export", sweep, "--format", "otlp", "--out", otlp); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	m, err := analysis.ReadManifest(otlp)
	if err != nil || len(m.Runs) != 4 {
		t.Fatalf("manifest %+v, %v; want 4 runs", m, err)
	}
	points := map[int64]bool{} // a grid value that reads as a whole number is an int attribute
	for _, f := range m.Files {
		req, err := analysis.ReadOTLP(filepath.Join(otlp, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range req.ResourceSpans[0].Resource.Attributes {
			if kv.Key == "mayday.sweep.recovery.retry.max_attempts" {
				if _, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue); !ok {
					t.Errorf("grid value %v is not an int attribute", kv.Value)
				}
				points[kv.Value.GetIntValue()] = true
			}
		}
	}
	if !points[1] || !points[3] {
		t.Errorf("resources name the points %v, want 1 and 3", points)
	}
	pq := filepath.Join(tmp, "pq")
	if _, errOut, code := execMayday(t, "export", sweep, "--format", "parquet", "--out", pq); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	hits, _ := filepath.Glob(filepath.Join(pq, "spans", "point=*", "seed=*", "*.parquet"))
	if len(hits) != 4 {
		t.Errorf("spans files in the hive layout: %v, want 4", hits)
	}
}
