//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkImport is the whole of mayday import but the command line (read, map, load,
// the metrics read back for the summary) of an OTLP/JSON export of research-fleet at 1,000
// investigations (about 39,000 spans): read back as mayday's own export (auto) and as
// plain GenAI spans (genai). It reports spans per second of wall time.
func BenchmarkImport(b *testing.B) {
	s := benchScenario(b)
	s.Workload.Investigations = 1_000
	dir := b.TempDir()
	src, err := Create(filepath.Join(dir, DBFile))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Execute(ctx, src, Spec{Scenario: s, Seed: s.Seed, Version: "bench"}); err != nil {
		b.Fatal(err)
	}
	otlp := filepath.Join(dir, "otlp")
	if _, err := Export(ctx, src, otlp, ExportOptions{Format: FormatOTLP}); err != nil {
		b.Fatal(err)
	}
	if err := src.Close(); err != nil {
		b.Fatal(err)
	}
	for _, conv := range []string{ConvAuto, ConvGenAI} {
		b.Run(conv, func(b *testing.B) {
			var spans int64
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				db, err := Create(filepath.Join(b.TempDir(), strconv.Itoa(i)+".duckdb"))
				if err != nil {
					b.Fatal(err)
				}
				res, err := Import(ctx, db, []string{otlp}, ImportOptions{Conventions: conv})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ImportOutcomes(ctx, db, res); err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				spans = res.Spans
			}
			b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
			b.ReportMetric(float64(spans), "spans/op")
		})
	}
}
