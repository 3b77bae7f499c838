//go:build duckdb_arrow

package analysis

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mayday-sim/mayday/scenarios"
)

// The protobuf export, gzipped, imported back gives every metric and every carried row of
// every example exactly, as the JSON export does (TestImportRoundTripsExport).
func TestExportRoundTripProto(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	ctx := context.Background()
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			db, runID := exampleDB(t, info.Name, 60)
			out := filepath.Join(t.TempDir(), "otlp")
			m, err := Export(ctx, db, out, ExportOptions{Format: FormatOTLP, ChunkSpans: 2000, Encoding: EncodingProto, Gzip: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range m.Files {
				if !strings.HasSuffix(f.Path, ".pb.gz") {
					t.Errorf("%s: want a .pb.gz file", f.Path)
				}
			}
			roundTripsExport(t, db, runID, out, false)
		})
	}
}

// The two encodings carry the same request: each protobuf file, decoded, equals the JSON
// file of the same number decoded by protojson (ReadOTLP), field for field.
func TestExportEncodingsAgree(t *testing.T) {
	db := openTestDB(t)
	handRun(t, db, "hand-s7")
	dir := t.TempDir()
	js, err := Export(context.Background(), db, filepath.Join(dir, "json"), ExportOptions{Format: FormatOTLP, ChunkSpans: 3})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Export(context.Background(), db, filepath.Join(dir, "pb"), ExportOptions{Format: FormatOTLP, ChunkSpans: 3, Encoding: EncodingProto})
	if err != nil {
		t.Fatal(err)
	}
	if len(js.Files) != len(pb.Files) || len(js.Files) < 2 {
		t.Fatalf("%d JSON files, %d protobuf files; want the same, at least 2", len(js.Files), len(pb.Files))
	}
	for i := range js.Files {
		a, err := ReadOTLP(filepath.Join(dir, "json", js.Files[i].Path))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "pb", pb.Files[i].Path))
		if err != nil {
			t.Fatal(err)
		}
		var b coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &b); err != nil {
			t.Fatalf("%s: %v", pb.Files[i].Path, err)
		}
		if !proto.Equal(a, &b) {
			t.Errorf("%s and %s differ", js.Files[i].Path, pb.Files[i].Path)
		}
	}
}

// Protobuf request bodies are read into buffers that later files are read into again, once
// each request has been added (requestMemory). Many small files of both encodings, decoded
// several at a time, import into the same rows: a buffer read into while its request was
// still being added would change the strings taken from it.
func TestManyProtoBodiesImportAsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	db, _ := exampleDB(t, "research-fleet", 60)
	dir := t.TempDir()
	files := 0
	for _, enc := range []string{EncodingJSON, EncodingProto} {
		m, err := Export(context.Background(), db, filepath.Join(dir, enc), ExportOptions{Format: FormatOTLP, ChunkSpans: 40, Encoding: enc})
		if err != nil {
			t.Fatal(err)
		}
		files = len(m.Files)
	}
	if files < 4*decodeAhead+2*readAhead {
		t.Fatalf("%d files; want more than the requests decoded and queued at once", files)
	}
	const rows = `SELECT (SELECT digest FROM runs) || ' ' ||
		(SELECT count(*) || ':' || sum(hash(span_id, key, value)) FROM span_attrs) || ' ' ||
		(SELECT count(*) || ':' || sum(hash(span_id, tool, model, op_key, input_ref, output_ref, status)) FROM spans)`
	for _, conv := range []string{ConvAuto, ConvGenAI} {
		var got [2]string
		for i, enc := range []string{EncodingJSON, EncodingProto} {
			back, _ := importInto(t, []string{filepath.Join(dir, enc)}, ImportOptions{Conventions: conv, RunID: "back"})
			if err := back.SQL().QueryRow(rows).Scan(&got[i]); err != nil {
				t.Fatal(err)
			}
		}
		if got[0] != got[1] {
			t.Errorf("--conventions %s: OTLP/JSON imports as %s, protobuf as %s", conv, got[0], got[1])
		}
	}
}
