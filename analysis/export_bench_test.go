//go:build duckdb_arrow

package analysis

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

// benchExportDB simulates research-fleet (10,000 investigations) into a database file and
// opens it read-only, as `mayday export` does.
func benchExportDB(b *testing.B) *DB {
	b.Helper()
	path := filepath.Join(b.TempDir(), DBFile)
	db, err := Create(path)
	if err != nil {
		b.Fatal(err)
	}
	s := benchScenario(b)
	if _, err := Execute(context.Background(), db, Spec{Scenario: s, Seed: s.Seed, Version: "bench"}); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if db, err = Open(path); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// benchmarkExport reports rows per second of wall time (spans for OTLP, rows of every
// table for Parquet), the size of what was written, and its files.
func benchmarkExport(b *testing.B, format string) {
	db := benchExportDB(b)
	dir := b.TempDir()
	var m *Manifest
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if m, err = Export(context.Background(), db, filepath.Join(dir, format+strconv.Itoa(i)), ExportOptions{Format: format}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	rows := float64(m.Rows())
	b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(rows, "rows/op")
	b.ReportMetric(float64(m.Bytes())/1e6, "MB/op")
	b.ReportMetric(float64(len(m.Files)), "files/op")
}

func BenchmarkExportOTLP(b *testing.B)    { benchmarkExport(b, FormatOTLP) }
func BenchmarkExportParquet(b *testing.B) { benchmarkExport(b, FormatParquet) }
