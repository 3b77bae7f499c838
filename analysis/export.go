//go:build duckdb_arrow

package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Export formats: OpenTelemetry traces (OTLP/JSON) or Parquet files of every trace table.
const (
	FormatOTLP    = "otlp"
	FormatParquet = "parquet"
)

// ManifestFile is written last into every export folder. It lists what the export holds,
// and it is how --force recognises a folder as a previous export that may be replaced.
const ManifestFile = "export.json"

// ErrNotExport reports an --out folder that exists but holds no export manifest, so it is
// not replaced even with --force.
var ErrNotExport = errors.New("is not a mayday export")

// DefaultChunkSpans is how many spans an OTLP file holds at most (whole traces are kept in
// one file, so a file over the limit holds a single large trace). 5,000 spans make files of
// 6 to 14 MB (a span takes 1.3 to 2.8 KB with the events that carry its investigation's
// rows), under the 20 MiB request limit of the OpenTelemetry Collector's OTLP/HTTP
// receiver (which Jaeger uses too).
const DefaultChunkSpans = 5_000

// ExportOptions controls Export.
type ExportOptions struct {
	Format     string // FormatOTLP or FormatParquet
	Force      bool   // replace an existing folder, if it is a previous export
	ChunkSpans int    // OTLP: spans per file at most (whole traces); 0 = DefaultChunkSpans
	Encoding   string // OTLP: EncodingJSON (the default when "") or EncodingProto
	Gzip       bool   // OTLP: gzip each file (.json.gz, .pb.gz)
	Version    string // the mayday version, recorded in the manifest and the OTLP scope
	Source     string // the database as the user named it, for the manifest
	// Progress, when set, is called after each file is written with the files and rows
	// (spans, for OTLP) written so far, for a progress line; it sees nothing of the result.
	Progress func(files int, rows int64)
}

// Manifest describes an export folder.
type Manifest struct {
	Format        string       `json:"format"`
	Encoding      string       `json:"encoding,omitempty"` // OTLP: json or proto
	Gzip          bool         `json:"gzip,omitempty"`     // OTLP: the files are gzipped
	Source        string       `json:"source"`
	MaydayVersion string       `json:"mayday_version"`
	Runs          []string     `json:"runs"`
	Files         []ExportFile `json:"files"`

	progress func(files int, rows int64) // ExportOptions.Progress
}

// ExportFile is one file of an export: its path relative to the folder, what it holds and
// its size.
type ExportFile struct {
	Path  string `json:"path"`
	Table string `json:"table,omitempty"` // Parquet: the trace table; OTLP: "spans"
	Run   string `json:"run,omitempty"`   // the run, when the file holds one run only
	Rows  int64  `json:"rows"`            // rows (Parquet) or spans (OTLP)
	Bytes int64  `json:"bytes"`
}

// Rows returns the total rows (or spans) of the export.
func (m *Manifest) Rows() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Rows
	}
	return n
}

// Bytes returns the total size of the export's data files.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Bytes
	}
	return n
}

// Export writes every run of db into the folder out, in opts.Format. Everything is written
// into a hidden staging folder beside out and renamed into place when whole, so an error or
// a cancelled ctx (Ctrl-C) leaves nothing behind; an existing out is refused (ErrExists)
// unless opts.Force and it holds a previous export's manifest.
func Export(parent context.Context, db *DB, out string, opts ExportOptions) (_ *Manifest, err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	if opts.Format != FormatOTLP && opts.Format != FormatParquet {
		return nil, fmt.Errorf("--format %q: want otlp or parquet", opts.Format)
	}
	if opts.ChunkSpans < 0 {
		return nil, fmt.Errorf("--chunk-spans %d: want a positive number of spans per file", opts.ChunkSpans)
	}
	if opts.ChunkSpans == 0 {
		opts.ChunkSpans = DefaultChunkSpans
	}
	if opts.Format == FormatOTLP && opts.Encoding == "" {
		opts.Encoding = EncodingJSON
	}
	if opts.Format == FormatOTLP && opts.Encoding != EncodingJSON && opts.Encoding != EncodingProto {
		return nil, fmt.Errorf("--encoding %q: want json or proto", opts.Encoding)
	}
	if opts.Format != FormatOTLP && (opts.Encoding != "" || opts.Gzip) {
		return nil, fmt.Errorf("--encoding and --gzip apply to --format otlp only")
	}
	if err := checkExportTarget(out, opts.Force); err != nil {
		return nil, err
	}
	runs, err := ListRuns(ctx, db)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("export: %s holds no runs", db.name())
	}
	// checkExportTarget refused anything but a previous export; the staging checks the same
	// rule again, as late as possible.
	folder, err := NewFolderOf(out, true, "export folder", isExport)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Format: opts.Format, Encoding: opts.Encoding, Gzip: opts.Gzip, Source: opts.Source, MaydayVersion: opts.Version, progress: opts.Progress}
	for _, r := range runs {
		m.Runs = append(m.Runs, r.RunID)
	}
	if opts.Format == FormatOTLP {
		err = exportOTLP(ctx, db, folder, runs, opts, m)
	} else {
		err = exportParquet(ctx, db, folder, runs, m)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = writeManifest(folder.Path(ManifestFile), m)
	}
	if err == nil {
		err = folder.Commit()
	}
	if err != nil {
		folder.Abort()
		return nil, err
	}
	return m, nil
}

// checkExportTarget refuses an existing out, unless force and it is a previous export.
func checkExportTarget(out string, force bool) error {
	if out == "" {
		return errors.New("--out: empty folder name")
	}
	st, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("export folder %s: %w", out, err)
	}
	if !force {
		return fmt.Errorf("export folder %s: %w; choose another --out or pass --force to replace a previous export", out, ErrExists)
	}
	if !st.IsDir() {
		return fmt.Errorf("export folder %s: %w (it is a file); refusing to replace it", out, ErrNotExport)
	}
	if isExport(out) != nil {
		return fmt.Errorf("export folder %s: %w (no readable %s inside); refusing to replace it, even with --force", out, ErrNotExport, ManifestFile)
	}
	return nil
}

// isExport says whether dir is an export folder (it holds a readable manifest), or why not.
func isExport(dir string) error {
	if _, err := ReadManifest(dir); err != nil {
		return fmt.Errorf("it holds no readable %s", ManifestFile)
	}
	return nil
}

// IsExportManifest says whether path is the manifest of a mayday export (export.json, as
// mayday writes it), which mayday import skips rather than reading it as trace data.
func IsExportManifest(path string) bool {
	if filepath.Base(path) != ManifestFile {
		return false
	}
	_, err := ReadManifest(filepath.Dir(path))
	return err == nil
}

// ReadManifest reads the manifest of the export folder dir.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Format != FormatOTLP && m.Format != FormatParquet {
		return nil, fmt.Errorf("%s: format %q is not an export format", filepath.Join(dir, ManifestFile), m.Format)
	}
	return &m, nil
}

func writeManifest(path string, m *Manifest) error {
	slices.SortFunc(m.Files, func(a, b ExportFile) int { return strings.Compare(a.Path, b.Path) })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// addFile records a written file in the manifest, with its size.
func (m *Manifest) addFile(folder *Folder, rel, table, run string, rows int64) error {
	st, err := os.Stat(folder.Path(rel))
	if err != nil {
		return err
	}
	m.Files = append(m.Files, ExportFile{Path: filepath.ToSlash(rel), Table: table, Run: run, Rows: rows, Bytes: st.Size()})
	if m.progress != nil {
		m.progress(len(m.Files), m.Rows())
	}
	return nil
}
