//go:build duckdb_arrow

package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// ImportOptions controls Import.
type ImportOptions struct {
	Conventions string        // ConvAuto (per span), ConvGenAI or ConvOpenInference
	RetryWindow time.Duration // 0 = DefaultRetryWindow
	RunID       string        // the run of everything that is not a mayday export; "" = "import"
	Redact      []string      // extra secret-key patterns, as a scenario's redact
	Version     string        // the mayday version, for runs.version
	// Progress, when set, is called after each request read with the file, how many files
	// of how many were begun, and the spans read so far.
	Progress func(file string, file1, files int, spans int64)
}

// ImportedRun is one run an import wrote.
type ImportedRun struct {
	RunID          string            `json:"run_id"`
	Scenario       string            `json:"scenario"`
	Native         bool              `json:"mayday_export"` // the spans came from mayday export
	Conventions    map[string]int64  `json:"conventions"`   // spans by conventions
	Spans          int64             `json:"spans"`
	Investigations int               `json:"investigations"`
	TimeZero       time.Time         `json:"time_zero"`
	Unknown        map[string]string `json:"unknown,omitempty"` // metric -> why a trace cannot give it
}

// ImportResult is what Import wrote.
type ImportResult struct {
	Files []string      `json:"files"`
	Spans int64         `json:"spans"`
	Runs  []ImportedRun `json:"runs"`
}

// Import reads the OTLP trace data of inputs (files or folders, see TraceInputs) into db,
// one run per mayday export's run and one run (opts.RunID) for everything else. Bad input
// is an error wrapping ErrBadTraceInput that names the file and line or message; then
// nothing is left in db (the caller writes db in a staging folder and drops it).
func Import(ctx context.Context, db *DB, inputs []string, opts ImportOptions) (*ImportResult, error) {
	if opts.Conventions == "" {
		opts.Conventions = ConvAuto
	}
	if !slices.Contains([]string{ConvAuto, ConvGenAI, ConvOpenInference}, opts.Conventions) {
		return nil, fmt.Errorf("--conventions %q: want auto, genai or openinference: %w", opts.Conventions, ErrBadTraceInput)
	}
	if opts.RetryWindow == 0 {
		opts.RetryWindow = DefaultRetryWindow
	}
	if opts.RunID == "" {
		opts.RunID = "import"
	}
	if err := CheckRunID(opts.RunID); err != nil {
		return nil, fmt.Errorf("--run-id: %w: %w", err, ErrBadTraceInput)
	}
	files, err := TraceInputs(inputs)
	if err != nil {
		return nil, err
	}
	set := newSpanSet(opts.Conventions, opts.RunID)
	for i, f := range files {
		err := readTraceFile(f, func(req *coltracepb.ExportTraceServiceRequest, where string) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := set.add(req, where); err != nil {
				return err
			}
			if opts.Progress != nil {
				opts.Progress(f, i+1, len(files), set.spans)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if set.spans == 0 {
		return nil, fmt.Errorf("%w: the input holds no spans", ErrBadTraceInput)
	}
	res := &ImportResult{Files: files, Spans: set.spans}
	for _, r := range set.runs {
		ir, err := importRun(ctx, db, r, files, opts)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, ir)
	}
	return res, nil
}

// importRun builds and loads one run.
func importRun(ctx context.Context, db *DB, r *inRun, files []string, opts ImportOptions) (ImportedRun, error) {
	if r.native {
		return importNative(ctx, db, r, opts)
	}
	b := buildGeneric(r, opts.RetryWindow)
	ir := ImportedRun{RunID: r.id, Scenario: scenarioName(r), Conventions: r.convs, Spans: int64(len(r.spans)), Investigations: len(b.invs),
		TimeZero: time.Unix(0, b.zero).UTC(), Unknown: maps.Clone(importUnknown)}
	config, err := json.Marshal(map[string]any{"import": map[string]any{
		"files": files, "conventions": r.convs, "time_zero": ir.TimeZero.Format(time.RFC3339Nano),
		"retry_window_seconds": opts.RetryWindow.Seconds(), "unknown": ir.Unknown,
	}})
	if err != nil {
		return ir, err
	}
	run := traces.Run{RunID: r.id, Scenario: ir.Scenario, Config: string(config), Version: opts.Version}
	err = loadRecords(ctx, db, r.id, opts, run, func(sink record.Sink) {
		for i := range b.spans {
			sink.Span(&b.spans[i])
		}
		for i := range b.trans {
			sink.Transition(&b.trans[i])
		}
		for _, inv := range b.invs {
			sink.Investigation(&inv.rec)
		}
	})
	if err != nil {
		return ir, err
	}
	return ir, forgetUnknowns(ctx, db, r.id)
}

// scenarioName is the run's service.name, else "import".
func scenarioName(r *inRun) string {
	if v := r.resource["service.name"].GetStringValue(); v != "" {
		return v
	}
	return "import"
}

// loadRecords loads one run's records through the same path as a simulation (redaction,
// digest, lanes) and commits it.
func loadRecords(ctx context.Context, db *DB, runID string, opts ImportOptions, run traces.Run, send func(record.Sink)) error {
	l, err := db.Load(ctx, runID, traces.Options{Redact: opts.Redact})
	if err != nil {
		return err
	}
	send(l)
	if err := ctx.Err(); err != nil {
		l.abort()
		return err
	}
	return l.Finish(run)
}

// forgetUnknowns sets to NULL what the records had to fill in but a trace cannot know: an
// investigation's compute, truth, validation and scope, a span's compute and queue wait,
// and the run's simulation events.
func forgetUnknowns(ctx context.Context, db *DB, runID string) error {
	for _, q := range []string{
		"UPDATE investigations SET compute = NULL, truly_valid = NULL, validated = NULL, scope = NULL, crashes = NULL, revisions = NULL WHERE run_id = $1",
		"UPDATE spans SET compute = NULL, queue_wait = NULL WHERE run_id = $1",
		"UPDATE runs SET events = NULL WHERE run_id = $1",
	} {
		if _, err := db.SQL().ExecContext(ctx, q, runID); err != nil {
			return errors.Join(fmt.Errorf("import: run %s: %w", runID, err), DropRun(context.Background(), db, runID))
		}
	}
	return nil
}

// ImportOutcomes reads back the runs an import wrote, with their metrics, for the summary.
// The metrics of every run are read in one query: the metrics view costs about as much for
// one run of a database as for all of them, so reading each run's alone would cost n² runs'
// worth for an import of n runs.
func ImportOutcomes(ctx context.Context, db *DB, res *ImportResult) ([]Outcome, error) {
	all, err := db.AllMetrics(ctx)
	if err != nil {
		return nil, err
	}
	byRun := make(map[string]Metrics, len(all))
	for _, m := range all {
		byRun[m.RunID] = m
	}
	var outs []Outcome
	for _, r := range res.Runs {
		o := Outcome{RunID: r.RunID}
		var events *int64
		err := db.SQL().QueryRowContext(ctx, "SELECT CAST(coalesce(seed, 0) AS UBIGINT), digest, status, events FROM runs WHERE run_id = $1", r.RunID).
			Scan(&o.Seed, &o.Digest, &o.Status, &events)
		if err != nil {
			return nil, fmt.Errorf("import: run %s: %w", r.RunID, err)
		}
		if events != nil {
			o.Events = *events
		}
		m, ok := byRun[r.RunID]
		if !ok {
			return nil, fmt.Errorf("import: run %s: %w", r.RunID, db.noRun(ctx, r.RunID))
		}
		o.Metrics = m
		outs = append(outs, o)
	}
	return outs, nil
}
