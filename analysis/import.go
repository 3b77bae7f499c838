//go:build duckdb_arrow

package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	Service     string        // keep only the spans of this service.name ("" = every service, a run each)
	Redact      []string      // extra secret-key patterns, as a scenario's redact
	Version     string        // the mayday version, for runs.version
	Limits      ReadLimits    // what is read at most (import_read.go); zero = the defaults
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
	Service        string            `json:"service,omitempty"` // service.name of the run's spans
	Summary        *ImportStats      `json:"summary,omitempty"` // how its spans were read (runs of plain spans)
	Parts          int               `json:"parts,omitempty"`   // the import held more spans than it keeps in memory: the run was built in this many parts
}

// ImportStats says how the spans of a run of plain spans were read: by role, the names of
// spans of no role, and what the trace was missing. Import prints it and stores it in
// runs.config ($.import.summary).
type ImportStats = importStats

type importStats struct {
	SpansByRole     map[string]int64 `json:"spans_by_role"`
	Unmapped        map[string]int64 `json:"unmapped_span_names,omitempty"`  // spans of no role, by name (at most maxUnmappedNames names)
	UnmappedOther   int64            `json:"unmapped_other_names,omitempty"` // spans of no role beyond those names
	Traces          int              `json:"traces"`
	MissingParents  int              `json:"missing_parents"`  // spans whose parent span is not in the data
	OrphanFragments int              `json:"orphan_fragments"` // fragments of traces whose root span is missing, grouped by trace
	MissingRoots    int              `json:"traces_without_root"`
	CyclesBroken    int              `json:"cycles_broken,omitempty"` // parent links cut because they closed a loop
	JoinedTraces    int              `json:"joined_traces,omitempty"` // agent runs in their own trace joined to the run that started them
}

// add counts the summary of a part of a run in st.
func (st *importStats) add(p *importStats) {
	for role, n := range p.SpansByRole {
		st.SpansByRole[role] += n
	}
	// By name, so that which names the summary lists does not depend on map order.
	for _, name := range slices.Sorted(maps.Keys(p.Unmapped)) {
		if _, ok := st.Unmapped[name]; ok || len(st.Unmapped) < maxUnmappedNames {
			st.Unmapped[name] += p.Unmapped[name]
		} else {
			st.UnmappedOther += p.Unmapped[name]
		}
	}
	st.UnmappedOther += p.UnmappedOther
	st.Traces += p.Traces
	st.MissingParents += p.MissingParents
	st.OrphanFragments += p.OrphanFragments
	st.MissingRoots += p.MissingRoots
	st.CyclesBroken += p.CyclesBroken
	st.JoinedTraces += p.JoinedTraces
}

// maxUnmappedNames bounds how many span names of no role the summary lists.
const maxUnmappedNames = 50

var roleNames = map[spanRole]string{roleOther: "other", roleAgent: "agent", roleModel: "model_turn", roleTool: "tool",
	roleHuman: "human", roleSupervise: "supervise"}

// count fills the summary's counts of spans by role and of unmapped names.
func (st *importStats) count(r *inRun, red *traces.Redactor) {
	st.SpansByRole = map[string]int64{}
	st.Unmapped = map[string]int64{}
	tracesSeen := map[string]bool{}
	for _, s := range r.spans {
		tracesSeen[s.traceHex] = true
		st.SpansByRole[roleNames[s.role]]++
		if s.role != roleOther {
			continue
		}
		name := red.Text(s.name)
		if _, ok := st.Unmapped[name]; ok || len(st.Unmapped) < maxUnmappedNames {
			st.Unmapped[name]++
		} else {
			st.UnmappedOther++
		}
	}
	st.Traces = len(tracesSeen)
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
	if opts.Conventions != ConvAuto && conventionNamed(opts.Conventions) == nil {
		return nil, fmt.Errorf("--conventions %q: want auto or one of %s: %w", opts.Conventions, strings.Join(ConventionNames(), ", "), ErrBadTraceInput)
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
	// The spans read are held until the last file is read (up to spillSpans of them), so
	// the live heap grows with them: under the binary's soft limit (LimitGoHeap, at most
	// GoHeapCeiling) a large import would collect without pause once its spans pass the
	// limit (260,000 spans: 42 s instead of 20 s). The import leaves the heap to GOGC alone
	// while it reads and, unless it spilled, until it returns; a spilled import builds its
	// parts, which are bounded, under a soft limit of spilledImportHeap.
	unpin := sync.OnceFunc(PinGoHeap(math.MaxInt64))
	defer unpin()
	set, rd := newSpanSet(opts.Conventions, opts.RunID, opts.Service), newTraceReader(opts.Limits, opts.Conventions, opts.Redact)
	set.dbPath, set.maxRuns = db.path, rd.lim.Runs
	defer set.closeSpill()
	// Reading makes and drops a request's objects at a high rate over a small live heap
	// (what is held past a request is copied out of it, or spilled): collections every
	// doubling of that heap took a tenth of an import's CPU. importGCPercent spaces them,
	// under a soft limit of readHeapLimit. A spilled import keeps them spaced while it
	// builds its parts, which make and drop records at the same rate over the live heap
	// of one part, under the soft limit spilledImportHeap.
	restoreGC, unlimit := raiseImportGC(), PinGoHeap(readHeapLimit)
	defer restoreGC()
	err = readRequests(ctx, rd, files, func(file int, req *coltracepb.ExportTraceServiceRequest, where string) error {
		if err := set.add(req, where); err != nil {
			return err
		}
		if err := set.spillIfFull(); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(files[file], file+1, len(files), set.spans)
		}
		return nil
	})
	unlimit()
	if set.spillTo == "" {
		restoreGC() // the spans held are the live heap: GOGC as the process had it
	}
	if err != nil {
		return nil, err
	}
	if set.spans == 0 {
		return nil, fmt.Errorf("%w: the input holds no spans", ErrBadTraceInput)
	}
	if opts.Service != "" && len(set.runs) == 0 {
		return nil, fmt.Errorf("%w: --service %q: no spans of that service.name (the input has %s)", ErrBadTraceInput, opts.Service, serviceList(set.skipped))
	}
	if set.spillTo != "" {
		unpin()
		defer PinGoHeap(spilledImportHeap)()
	}
	red := traces.NewRedactor(nil, opts.Redact, nil)
	if err := set.nameRuns(red); err != nil {
		return nil, err
	}
	res := &ImportResult{Files: files, Spans: set.spans}
	for _, r := range set.runs {
		ir, err := importRun(ctx, db, r, files, opts)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, ir)
	}
	// The derived tables of the runs, computed from the records as stored, with the memory
	// the Go heap held for the spans given back first.
	dropPartBlocks()
	ReleaseGoMemory()
	if err := db.fillDerived(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// importGCPercent is GOGC while an import reads its input (and, once it spilled, while it
// builds its parts), and readHeapLimit the Go heap's soft limit while it reads (measured in
// docs/performance.md, "Import: collections while reading" and "Import: collections while
// building").
// Past the limit (a run holding 50,000 spans of long prompts, requests of --max-message)
// the collector runs as often as the heap needs, with at most half the CPU.
const (
	importGCPercent = 400
	readHeapLimit   = 640 << 20
)

// importGC counts the imports under importGCPercent at once (GOGC is the process's): the
// first sets GOGC to importGCPercent, the last to end sets back what was there before.
var importGC struct {
	sync.Mutex
	n   int
	old int
}

// raiseImportGC sets GOGC for an import and returns what ends it.
func raiseImportGC() (restore func()) {
	importGC.Lock()
	defer importGC.Unlock()
	if importGC.n == 0 {
		importGC.old = debug.SetGCPercent(importGCPercent)
	}
	importGC.n++
	return sync.OnceFunc(func() {
		importGC.Lock()
		defer importGC.Unlock()
		if importGC.n--; importGC.n == 0 {
			debug.SetGCPercent(importGC.old)
		}
	})
}

// spilledImportHeap is the Go heap's soft limit while a spilled import builds and loads its
// parts and computes its derived tables. Under the binary's limit, which follows the live
// heap up to GoHeapCeiling, a part's records and the spill's reading kept the collector
// running: research-fleet at 10,000 investigations exported (431,142 spans, OTLP/JSON) took
// 21.1 and 27.1 s at 514-536 MB, and 18.0 and 18.1 s at 580 MB with this limit
// (docs/performance.md). DuckDB's share while the parts load is LoadBufferPerRun.
const spilledImportHeap = 512 << 20

// readAhead is how many decoded requests readRequests holds for its caller (a request can
// be a whole file of spans).
const readAhead = 2

// readRequests reads every request of files, in order, and calls add with each. Reading
// (decompression, checks) runs on a goroutine of its own, at most readAhead requests ahead
// of add, and JSON requests decode on goroutines of their own (decodeQueue), so that
// reading, decoding and add share the machine's cores; requests reach add in the order
// they were read. The first error, of any side, stops them all, and is returned as it was
// made: the error of the first request, in that order, that has one.
func readRequests(ctx context.Context, rd *traceReader, files []string, add func(file int, req *coltracepb.ExportTraceServiceRequest, where string) error) error {
	type item struct {
		file  int
		req   *coltracepb.ExportTraceServiceRequest
		where string
		err   error
	}
	items, stop := make(chan item, readAhead), make(chan struct{})
	errStopped := errors.New("stopped")
	// A file's last requests decode while the next file is read (readOn); the last file's
	// are handed on once every file is read.
	readAll := func() error {
		for i, f := range files {
			err := rd.readOn(f, func(req *coltracepb.ExportTraceServiceRequest, where string) error {
				select {
				case items <- item{file: i, req: req, where: where}:
					return nil
				case <-stop:
					return errStopped
				}
			})
			if err != nil {
				return err
			}
		}
		return rd.dec.flush()
	}
	go func() {
		defer close(items)
		if err := readAll(); err != nil {
			rd.dec.abandon()
			if err != errStopped {
				select {
				case items <- item{err: err}:
				case <-stop:
				}
			}
		}
	}()
	// Whatever ends the loop, the reader is told to stop and waited for: it holds the files.
	defer func() {
		close(stop)
		for range items {
		}
	}()
	for it := range items {
		if it.err != nil {
			return it.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := add(it.file, it.req, it.where); err != nil {
			return err
		}
		rd.mem.recycle(it.req) // what the import keeps of a request is copied or spilled by now
	}
	return ctx.Err()
}

// importRun builds and loads one run, a part at a time (one part when the run holds its
// spans; import_spill.go): each part's records are loaded before the next part is read.
func importRun(ctx context.Context, db *DB, r *inRun, files []string, opts ImportOptions) (ImportedRun, error) {
	if r.native {
		return importNative(ctx, db, r, opts)
	}
	parts, err := r.parts()
	if err != nil {
		return ImportedRun{}, err
	}
	red := traces.NewRedactor(nil, opts.Redact, nil)
	st := &importStats{SpansByRole: map[string]int64{}, Unmapped: map[string]int64{}}
	p := runParams(r, opts.RetryWindow)
	ir := plainRun(r, p.zero, st, red)
	ir.Conventions, ir.Parts = map[string]int64{}, len(parts)
	row := func() traces.Run { return plainRunRow(r, ir, files, opts) }
	stored := newStoredOrder(p.zero / 1000) // the run's time 0 as its config stores it (time_zero_us)
	hooks := loadHooks{
		start:     func(l *Load) { l.w.Stored(stored) },
		done:      func(*Load) error { return stored.finish(r.id, unknownMetrics(row().Config), 0) }, // no simulation events
		committed: func() error { return stored.store(ctx, db, r.id) },
	}
	err = loadRecords(ctx, db, r.id, opts, true, hooks, row, func(sink record.Sink) error {
		type builtPart struct {
			b    *built
			invs []record.Investigation
		}
		return eachPartAhead(ctx, r, parts, opts.Conventions, &ir, func(_ bool, in *inRun) (builtPart, error) {
			pst := &importStats{}
			b := buildPart(in, pst, p)
			pst.count(in, red)
			st.add(pst)
			ir.Investigations += len(b.invs)
			p.firstInv += int64(len(b.invs))
			p.firstSpan = b.next
			// The records are all the load needs: the spans as read (their attributes are
			// most of an import's memory) are let go before they are sent.
			invs := b.records()
			in.release()
			return builtPart{b, invs}, nil
		}, func(bp builtPart) {
			bp.b.send(sink, bp.invs)
			stored.flush()
		})
	})
	if err == nil && importDerived != nil {
		importDerived(r.id, !stored.off)
	}
	return ir, err
}

// importDerived, set only by tests, is told of each run of plain spans an import stored
// whether its derived tables were computed as it loaded (else replay computed them).
var importDerived func(runID string, asLoaded bool)

// plainRun is what an import of plain spans says of run r before its records are counted.
func plainRun(r *inRun, zero int64, st *importStats, red *traces.Redactor) ImportedRun {
	return ImportedRun{RunID: r.id, Scenario: scenarioName(r, red), TimeZero: time.Unix(0, zero).UTC(),
		Unknown: maps.Clone(importUnknown), Service: red.Attr("service.name", r.service), Summary: st}
}

// plainRunRow is the runs row of an imported run of plain spans: its config says where
// the run came from and how it was read.
func plainRunRow(r *inRun, ir ImportedRun, files []string, opts ImportOptions) traces.Run {
	red := traces.NewRedactor(nil, opts.Redact, nil)
	resource := map[string]string{}
	for k, v := range r.resource {
		resource[k] = red.Attr(k, anyText(v))
	}
	zero := ir.TimeZero.UnixNano()
	config, err := json.Marshal(map[string]any{"import": map[string]any{
		"files": files, "conventions": ir.Conventions, "time_zero": ir.TimeZero.Format(time.RFC3339Nano), "time_zero_us": zero / 1000,
		"retry_window_seconds": opts.RetryWindow.Seconds(), "unknown": ir.Unknown,
		"service": ir.Service, "resource": resource, "summary": ir.Summary,
	}})
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return traces.Run{RunID: r.id, Scenario: ir.Scenario, Config: string(config), Version: opts.Version, NoEvents: true}
}

// records is the investigations' records; the investigations are let go.
func (b *built) records() []record.Investigation {
	invs := make([]record.Investigation, len(b.invs))
	for i, inv := range b.invs {
		invs[i] = inv.rec
	}
	b.invs = nil
	return invs
}

// send hands the records to sink: spans, transitions, then investigations.
func (b *built) send(sink record.Sink, invs []record.Investigation) {
	for i := range b.spans {
		sink.Span(&b.spans[i])
	}
	for i := range b.trans {
		sink.Transition(&b.trans[i])
	}
	for i := range invs {
		sink.Investigation(&invs[i])
	}
}

// scenarioName is the run's service.name (redacted like any attribute), else "import".
func scenarioName(r *inRun, red *traces.Redactor) string {
	if v := r.resource["service.name"].GetStringValue(); v != "" {
		return red.Attr("service.name", v)
	}
	return "import"
}

// serviceList names the services of skipped, for an error.
func serviceList(skipped map[string]int64) string {
	if len(skipped) == 0 {
		return "no spans of any service"
	}
	names := slices.Sorted(maps.Keys(skipped))
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return "services " + strings.Join(names, ", ")
}

// importTee, set only by tests, returns a sink that also receives the records of run runID
// as an import loads them.
var importTee func(runID string) record.Sink

// loadRecords loads one run's records through the same path as a simulation (redaction,
// digest, lanes) and commits it. fromTrace says the records were read from plain spans:
// what they had to fill in but a trace cannot know (traces.Options.FromTrace) is stored
// NULL as it loads. The commit and the committed hook hold deriveMu, which every fill of
// derived tables takes (a new database's views fill them on a goroutine of their own), so
// that no fill computes the run while its derived tables are being stored. run gives the
// runs row once every record is sent.
func loadRecords(ctx context.Context, db *DB, runID string, opts ImportOptions, fromTrace bool, hooks loadHooks, run func() traces.Run, send func(record.Sink) error) error {
	l, err := db.Load(ctx, runID, traces.Options{Redact: opts.Redact, FromTrace: fromTrace})
	if err != nil {
		return err
	}
	if hooks.start != nil {
		hooks.start(l)
	}
	var sink record.Sink = l
	if importTee != nil {
		sink = record.Tee{l, importTee(runID)}
	}
	err = send(sink)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil && hooks.done != nil {
		err = hooks.done(l)
	}
	if err != nil {
		l.abort()
		return err
	}
	db.deriveMu.Lock()
	err = l.Finish(run())
	committed := err == nil
	if err == nil && hooks.committed != nil {
		err = hooks.committed()
	}
	db.deriveMu.Unlock()
	if err != nil && committed {
		return errors.Join(err, DropRun(context.Background(), db, runID))
	}
	return err
}

// loadHooks are what an import does beside loadRecords' load: start once the load is made,
// done once every record is sent, before the commit, and committed after the commit, under
// deriveMu. Any may be nil.
type loadHooks struct {
	start     func(*Load)
	done      func(*Load) error
	committed func() error
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
