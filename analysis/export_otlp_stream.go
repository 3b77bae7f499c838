//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Streaming a run's spans into OTLP files with bounded memory. The run's traces are cut
// into chunks of whole traces, about otlpChunkSpans spans each, by trace id; each chunk is
// read with a few queries (its investigations' carried rows, then its spans in order of
// trace and storage) and turned into OTLP spans trace by trace, which a second goroutine
// encodes and writes while the next chunk is read. Nothing of the run is held beyond a
// chunk, so memory does not grow with the run. Files are numbered in reading order, so
// the output does not depend on timing.

// otlpChunkSpans is the spans one chunk reads at about (a chunk ends between traces): with
// their carried rows about 30 MB of Go values, and few enough queries that their fixed cost
// is small (research-fleet's 430,000 spans make 22 chunks).
const otlpChunkSpans = 20_000

// traceChunk is a range of trace ids, and the range of the investigation ids of its spans
// (which lets DuckDB skip row groups of the record tables). null is the chunk of the spans
// without a trace id, exported as trace -1.
type traceChunk struct {
	lo, hi       int64
	invLo, invHi sql.NullInt64
	null         bool
}

// traceChunkQuery cuts the run's traces into chunks of about $2 spans, in trace order.
const traceChunkQuery = `SELECT min(trace_id), max(trace_id), min(inv_lo), max(inv_hi) FROM (
  SELECT trace_id, inv_lo, inv_hi,
         (sum(n) OVER (ORDER BY trace_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - n) // $2 AS chunk
  FROM (SELECT trace_id, count(*) AS n, min(investigation_id) AS inv_lo, max(investigation_id) AS inv_hi
        FROM spans WHERE run_id = $1 AND trace_id IS NOT NULL GROUP BY trace_id))
GROUP BY chunk ORDER BY chunk`

func traceChunks(ctx context.Context, db *DB, runID string) ([]traceChunk, error) {
	rows, err := db.SQL().QueryContext(ctx, traceChunkQuery, runID, otlpChunkSpans)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []traceChunk
	for rows.Next() {
		var c traceChunk
		if err := rows.Scan(&c.lo, &c.hi, &c.invLo, &c.invHi); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var c traceChunk
	var n int64
	err = db.SQL().QueryRowContext(ctx, "SELECT count(*), min(investigation_id), max(investigation_id) FROM spans WHERE run_id = $1 AND trace_id IS NULL", runID).
		Scan(&n, &c.invLo, &c.invHi)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		c.lo, c.hi, c.null = -1, -1, true
		out = append(out, c)
	}
	return out, nil
}

// filter is the chunk's condition on spans ($2, $3 its trace ids): a range a scan can
// prune by, or for the null chunk the spans without a trace id.
func (c traceChunk) filter(alias string) string {
	if c.null {
		return "coalesce(" + alias + "trace_id, -1) BETWEEN $2 AND $3"
	}
	return alias + "trace_id BETWEEN $2 AND $3"
}

// otlpSpanQuery reads the spans of a chunk in order of trace and storage, with the zone of
// the worker each ran on. {sf} is the chunk's filter on spans. A span's span_attrs rows
// (otlpAttrQuery) and the traces of its causes (otlpCauseQuery) are read apart: joined
// and aggregated into lists here they cost DuckDB more than the spans themselves.
const otlpSpanQuery = `SELECT coalesce(s.trace_id, -1), s.span_id, s.parent_span_id, s.investigation_id, s.agent_id,
 coalesce(s.operation, ''), s.tool, s.tool_version, s.model, s.op_key, s.attempt, s.start, s."end", s.queue_wait,
 coalesce(s.status, ''), s.failure_class, s.fault_id, coalesce(s.input_tokens, 0), coalesce(s.output_tokens, 0),
 s.compute, s.input_ref, s.output_ref, s.caused_by, s.kind, s.worker, wk.zone, s.rowid
 FROM spans s LEFT JOIN workers wk ON wk.run_id = s.run_id AND wk.worker = s.worker
 WHERE s.run_id = $1 AND {sf} ORDER BY s.trace_id, s.rowid`

// otlpAttrQuery reads the span_attrs rows of the chunk's spans ({f} its filter on spans)
// in the order they were stored, which is the order each span recorded them.
const otlpAttrQuery = `SELECT span_id, key, value FROM span_attrs
 WHERE run_id = $1 AND span_id IN (SELECT span_id FROM spans WHERE run_id = $1 AND {f})
 ORDER BY rowid`

// otlpCauseQuery reads the trace of each span {ids} names (a list of span ids), for the
// causes a chunk does not hold.
const otlpCauseQuery = `SELECT span_id, trace_id FROM spans
 WHERE run_id = $1 AND trace_id IS NOT NULL AND span_id IN ({ids})`

// spanRow is one row of otlpSpanQuery. A column an import leaves NULL (queue_wait,
// compute) stays NULL here, and its attribute is left out.
type spanRow struct {
	trace, span                      int64
	inv, agent                       sql.NullInt64
	parent                           sql.NullInt64
	operation, status                string
	tool, toolVersion, model, opKey  sql.NullString
	failure, fault, inputRef, outRef sql.NullString
	attempt                          sql.NullInt32
	start, end                       sql.NullTime
	queueWait, compute               sql.NullFloat64
	inTokens, outTokens              int64
	causedBy                         any
	kind                             sql.NullString
	attrs                            []spanAttrRow // the span's span_attrs rows, in order
	worker                           sql.NullInt64
	zone                             sql.NullString
	row                              int64 // the row's place in spans (rowid), for mayday import
}

// spanAttrRow is one span_attrs row of a span; a NULL key or value reads as "".
type spanAttrRow struct{ key, value string }

// spans reads the run's spans chunk by chunk, trace by trace, and hands each trace to a
// second goroutine, which encodes and writes it while the next is read: the two halves
// then use two cores.
func (w *otlpWriter) spans(ctx context.Context, db *DB) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	traces := make(chan []*tracepb.Span, 64)
	done := make(chan error, 1)
	go func() {
		var err error
		for t := range traces {
			if err == nil {
				if err = w.write(ctx, t); err != nil {
					cancel() // stop the reader
				}
			}
		}
		if err == nil && w.file != nil {
			if err = ctx.Err(); err == nil {
				err = w.endFile()
			}
		}
		if err != nil && w.file != nil {
			w.file.abort()
		}
		done <- err
	}()
	err := w.read(ctx, db, traces)
	close(traces)
	werr := <-done
	if werr != nil {
		return werr
	}
	return err
}

// read sends the run's traces, each a slice of its spans, chunk by chunk.
func (w *otlpWriter) read(ctx context.Context, db *DB, traces chan<- []*tracepb.Span) error {
	runID := w.run.info.RunID
	chunks, err := traceChunks(ctx, db, runID)
	if err != nil {
		return fmt.Errorf("export: spans of %s: %w", runID, err)
	}
	for _, c := range chunks {
		if err := w.readChunk(ctx, db, c, traces); err != nil {
			return err
		}
	}
	return nil
}

func (w *otlpWriter) readChunk(ctx context.Context, db *DB, c traceChunk, traces chan<- []*tracepb.Span) error {
	runID := w.run.info.RunID
	attrs, err := readSpanAttrs(ctx, db, runID, c)
	if err != nil {
		return fmt.Errorf("export: span_attrs of %s: %w", runID, err)
	}
	rows, err := w.readSpanRows(ctx, db, c, attrs)
	if err != nil {
		return fmt.Errorf("export: spans of %s: %w", runID, err)
	}
	records, err := readRecordEvents(ctx, db, runID, c)
	if err != nil {
		return err
	}
	if err := w.readCauseTraces(ctx, db, c, rows); err != nil {
		return fmt.Errorf("export: spans of %s: %w", runID, err)
	}
	var trace []*tracepb.Span
	current := int64(-2)
	var traceID []byte
	send := func() error {
		if len(trace) == 0 {
			return nil
		}
		select {
		case traces <- trace:
		case <-ctx.Done():
			return ctx.Err()
		}
		trace = nil
		return nil
	}
	for i := range rows {
		r := &rows[i]
		if r.trace != current {
			if err := send(); err != nil {
				return err
			}
			current, traceID = r.trace, OTLPTraceID(runID, r.trace)
		}
		trace = append(trace, w.span(r, traceID, records))
	}
	return send()
}

// readSpanAttrs reads the span_attrs rows of the chunk's spans, by span, in order.
func readSpanAttrs(ctx context.Context, db *DB, runID string, c traceChunk) (map[int64][]spanAttrRow, error) {
	rows, err := db.SQL().QueryContext(ctx, strings.ReplaceAll(otlpAttrQuery, "{f}", c.filter("")), runID, c.lo, c.hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]spanAttrRow{}
	var span int64
	var key, value sql.NullString
	for rows.Next() {
		if err := rows.Scan(&span, &key, &value); err != nil {
			return nil, err
		}
		out[span] = append(out[span], spanAttrRow{key.String, value.String})
	}
	return out, rows.Err()
}

// readSpanRows reads the chunk's spans, in order of trace and storage.
func (w *otlpWriter) readSpanRows(ctx context.Context, db *DB, c traceChunk, attrs map[int64][]spanAttrRow) ([]spanRow, error) {
	q := strings.ReplaceAll(otlpSpanQuery, "{sf}", c.filter("s."))
	rows, err := db.SQL().QueryContext(ctx, q, w.run.info.RunID, c.lo, c.hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	clear(w.rows) // what the last chunk's rows pointed to
	out := w.rows[:0]
	defer func() { w.rows = out }()
	for rows.Next() {
		out = append(out, spanRow{})
		r := &out[len(out)-1]
		if err := rows.Scan(&r.trace, &r.span, &r.parent, &r.inv, &r.agent, &r.operation,
			&r.tool, &r.toolVersion, &r.model, &r.opKey, &r.attempt, &r.start, &r.end, &r.queueWait,
			&r.status, &r.failure, &r.fault, &r.inTokens, &r.outTokens, &r.compute, &r.inputRef,
			&r.outRef, &r.causedBy, &r.kind, &r.worker, &r.zone, &r.row); err != nil {
			return nil, err
		}
		r.attrs = attrs[r.span]
	}
	return out, rows.Err()
}

// readCauseTraces sets w.causeTraces to the trace of every span the chunk's spans name in
// caused_by: the chunk's own spans, then, read by id, the causes in other chunks. A cause
// not in the run, or without a trace id, has none (it is linked in its span's own trace).
func (w *otlpWriter) readCauseTraces(ctx context.Context, db *DB, c traceChunk, rows []spanRow) error {
	clear(w.causeTraces)
	if w.causeTraces == nil {
		w.causeTraces = map[int64]int64{}
	}
	if !c.null { // the null chunk's spans have no trace id
		for i := range rows {
			w.causeTraces[rows[i].span] = rows[i].trace
		}
	}
	var missing []int64
	seen := map[int64]bool{}
	for i := range rows {
		causes, _ := rows[i].causedBy.([]any)
		for _, cause := range causes {
			id, ok := cause.(int64)
			if !ok || seen[id] {
				continue
			}
			if _, ok := w.causeTraces[id]; !ok {
				seen[id] = true
				missing = append(missing, id)
			}
		}
	}
	slices.Sort(missing)
	for len(missing) > 0 {
		n := min(len(missing), 1000)
		ids := make([]byte, 0, n*8)
		for i, id := range missing[:n] {
			if i > 0 {
				ids = append(ids, ',')
			}
			ids = strconv.AppendInt(ids, id, 10)
		}
		missing = missing[n:]
		rows, err := db.SQL().QueryContext(ctx, strings.Replace(otlpCauseQuery, "{ids}", string(ids), 1), w.run.info.RunID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var span, trace int64
			if err := rows.Scan(&span, &trace); err != nil {
				rows.Close()
				return err
			}
			w.causeTraces[span] = trace
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// write adds one trace to the current file, first ending the file when the trace would
// take it past the limit: a file holds whole traces and at most ChunkSpans spans, unless
// one trace alone is larger.
func (w *otlpWriter) write(ctx context.Context, trace []*tracepb.Span) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.file != nil && w.file.spans > 0 && w.file.spans+len(trace) > w.opts.ChunkSpans {
		if err := w.endFile(); err != nil {
			return err
		}
	}
	if w.file == nil {
		if err := w.beginFile(); err != nil {
			return err
		}
	}
	for _, s := range trace {
		if err := w.file.add(s); err != nil {
			return fmt.Errorf("export: %s: %w", w.rel, err)
		}
	}
	return nil
}

// otlpExt is the file extension of an encoding.
func otlpExt(encoding string, gz bool) string {
	ext := ".json"
	if encoding == EncodingProto {
		ext = ".pb"
	}
	if gz {
		ext += ".gz"
	}
	return ext
}

func (w *otlpWriter) beginFile() error {
	w.files++
	res := w.resource
	if w.files == 1 && len(w.run.runRecords) > 0 {
		res = &resourcepb.Resource{Attributes: append(slices.Clone(res.Attributes), w.run.runRecords...)}
	}
	w.rel = fmt.Sprintf("%s-%04d%s", w.run.info.RunID, w.files, otlpExt(w.opts.Encoding, w.opts.Gzip))
	f, err := createOTLPFile(w.folder.Path(w.rel), w.opts.Encoding, w.opts.Gzip, res, w.scope)
	if err != nil {
		return fmt.Errorf("export: %s: %w", w.rel, err)
	}
	w.file = f
	return nil
}

func (w *otlpWriter) endFile() error {
	f := w.file
	w.file = nil
	if err := f.close(); err != nil {
		return fmt.Errorf("export: %s: %w", w.rel, err)
	}
	if err := w.m.addFile(w.folder, w.rel, "spans", w.run.info.RunID, int64(f.spans)); err != nil {
		return err
	}
	if exportFileWritten != nil {
		exportFileWritten(w.rel)
	}
	return nil
}

// unixNano is a timestamp as OTLP's nanoseconds; 0 (unset) for NULL.
func unixNano(t sql.NullTime) uint64 {
	if !t.Valid {
		return 0
	}
	return uint64(t.Time.UnixNano())
}
