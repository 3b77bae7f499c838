package traces

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mayday-sim/mayday/sim/record"
)

// DefaultBatchRows is the number of rows per record batch when Options.BatchRows is 0.
const DefaultBatchRows = 1 << 16

// Options configure a Writer.
type Options struct {
	// BatchRows is the number of rows of one table per record batch (DefaultBatchRows if 0).
	// Memory held by a writer is about one batch per table.
	BatchRows int
	// Allocator, when set, receives a copy of every buffer of every batch, so that a
	// checked allocator can see that each batch is released (tests). When nil (mayday's
	// case) a batch hands the writer's own Go memory to Arrow without a copy.
	Allocator memory.Allocator
	// RedactKey keys the HMAC that replaces secrets. Give a key kept outside the trace (a
	// key file, an environment variable) so that nobody holding the trace can test guesses
	// of a secret; when empty a built-in key is used. The same key gives the same digest.
	RedactKey []byte
	// Redact lists extra secret-key patterns (case-insensitive substrings, the scenario's
	// `redact`) on top of DefaultSecretPatterns.
	Redact []string
	// Secrets lists known secret values (for example the scenario's tool arguments under
	// secret-looking keys) to scrub from free text wherever they appear.
	Secrets []string
	// FromTrace says the records were read from a trace of spans, which cannot record what
	// only a simulation knows: an investigation's compute, truth (truly_valid), validation,
	// scope, crashes and revisions, a span's compute and queue wait. Those columns are
	// written NULL, whatever the records hold; the records, as given, are still what the
	// digest covers.
	FromTrace bool
}

// EmitFunc receives each full record batch of a table, in order. It owns rec and must
// release it, also when it returns an error. An error stops the writer: it is kept and
// returned by Close.
type EmitFunc func(table Table, rec arrow.RecordBatch) error

// Run is the one row of the runs table.
type Run struct {
	RunID       string // "" = the writer's run id; otherwise it must match
	Scenario    string
	Seed        uint64
	Config      string // JSON of the resolved scenario; redacted before it is written
	ConfigHash  string
	Version     string
	Digest      string // "" = the writer's digest
	Events      int64
	NoEvents    bool   // the run's simulation events are not known: events is stored NULL
	Status      string // complete | partial; "" = complete
	WallSeconds float64
}

// Statuses of a run.
const (
	StatusComplete = "complete"
	StatusPartial  = "partial"
)

// Errors of a Writer.
var (
	ErrClosed     = errors.New("traces: writer closed")
	ErrRunWritten = errors.New("traces: runs row already written")
)

// Writer turns the records of one run into Arrow record batches, one table at a time. It is
// a record.Sink. Rows of a table are emitted in the order they were received, in batches of
// Options.BatchRows rows, so a writer never holds a whole run. Secrets are redacted before
// any value reaches Arrow, and the digest is computed over the redacted records. A Writer is
// not safe for concurrent use; EmitFunc is called on the goroutine that sends the records.
type Writer struct {
	runID string
	batch int
	emit  EmitFunc
	red   *Redactor // d's
	d     *Digester
	// stored, when set (Stored), receives every record as the tables store it.
	stored record.Sink
	err    error

	closed     bool
	runWritten bool

	mem  memory.Allocator    // Options.Allocator
	cols [numTables][]column // every table's columns, in the order of its schema
	n    [numTables]int      // rows in the current batch
	rows [numTables]int64
	arrs [numTables][]arrow.Array // scratch: a batch's arrays

	run   runCols
	inv   invCols
	span  spanCols
	tr    trCols
	ex    exCols
	fault faultCols
	samp  sampCols
	sattr spanAttrCols
	targ  toolArgCols
	wrk   workerCols

	fromTrace bool // Options.FromTrace

	key []byte // op_key scratch
	// keyInv is the investigation whose "<id>/" the first keyInvLen bytes of key hold.
	keyInv    int64
	keyInvLen int
	args      []int // indices of the tool arguments in the redacted span's attrs

	// toolArgs is each tool's recorded argument set (redacted, keys with ArgPrefix), taken
	// from its first execute_tool span and written once to tool_args.
	toolArgs map[string][]record.Attr
}

var _ record.Sink = (*Writer)(nil)

// NewWriter returns a writer of the run runID that hands each full batch to emit.
func NewWriter(runID string, opts Options, emit EmitFunc) (*Writer, error) {
	if runID == "" {
		return nil, errors.New("traces: empty run id")
	}
	if emit == nil {
		return nil, errors.New("traces: nil EmitFunc")
	}
	if opts.BatchRows < 0 {
		return nil, fmt.Errorf("traces: BatchRows %d: want >= 1 (0 = %d)", opts.BatchRows, DefaultBatchRows)
	}
	if opts.BatchRows == 0 {
		opts.BatchRows = DefaultBatchRows
	}
	w := &Writer{
		mem:       opts.Allocator,
		fromTrace: opts.FromTrace,
		runID:     runID,
		batch:     opts.BatchRows,
		emit:      emit,
		d:         NewDigester(opts),
		key:       make([]byte, 0, 64),
		toolArgs:  make(map[string][]record.Attr),
	}
	w.red = w.d.red
	w.cols = [numTables][]column{
		Runs: w.run.bind(), Investigations: w.inv.bind(), Spans: w.span.bind(),
		SpanAttrs: w.sattr.bind(), ToolArgs: w.targ.bind(), Transitions: w.tr.bind(),
		Executions: w.ex.bind(), Faults: w.fault.bind(), ToolSamples: w.samp.bind(),
		Workers: w.wrk.bind(),
	}
	return w, nil
}

// RunID returns the run id written into every row.
func (w *Writer) RunID() string { return w.runID }

// Digest returns the hex SHA-256 (record.Digest) over every redacted record received so far,
// in the order received: the value of runs.digest.
func (w *Writer) Digest() string { return w.d.Sum() }

// Rows returns how many rows of table t were received (the runs row included).
func (w *Writer) Rows(t Table) int64 { return w.rows[t] }

// Err returns the first error, if any.
func (w *Writer) Err() error { return w.err }

func (w *Writer) setErr(err error) {
	if w.err == nil {
		w.err = err
	}
}

// ok reports whether a record may be taken.
func (w *Writer) ok() bool {
	if w.closed {
		w.setErr(ErrClosed)
		return false
	}
	return w.err == nil
}

// row counts a row of t and emits the batch when it is full.
func (w *Writer) row(t Table) {
	w.rows[t]++
	w.n[t]++
	if w.n[t] >= w.batch {
		w.flush(t)
	}
}

func (w *Writer) flush(t Table) {
	if w.n[t] == 0 {
		return
	}
	rec := w.record(t)
	w.n[t] = 0
	if w.err != nil {
		rec.Release()
		return
	}
	if err := w.emit(t, rec); err != nil {
		w.setErr(fmt.Errorf("traces: emitting %s: %w", t, err))
	}
}

// record hands the columns of table t over as a record batch.
func (w *Writer) record(t Table) arrow.RecordBatch {
	arrs := w.arrs[t][:0]
	for i, c := range w.cols[t] {
		arrs = append(arrs, c.array(schemas[t].Field(i).Type, w.mem))
	}
	rec := array.NewRecordBatch(schemas[t], arrs, int64(w.n[t]))
	for i, a := range arrs {
		a.Release()
		arrs[i] = nil
	}
	w.arrs[t] = arrs
	return rec
}

// Flush emits the partial batch of every table, in table order.
func (w *Writer) Flush() error {
	if w.closed {
		return ErrClosed
	}
	for t := range numTables {
		w.flush(t)
	}
	return w.err
}

// WriteRun flushes every table, then emits the runs row, so that the runs row comes last.
func (w *Writer) WriteRun(r Run) error {
	if w.closed {
		return ErrClosed
	}
	if w.runWritten {
		return ErrRunWritten
	}
	if r.RunID != "" && r.RunID != w.runID {
		return fmt.Errorf("traces: run id %q: the writer writes run %q", r.RunID, w.runID)
	}
	switch r.Status {
	case "":
		r.Status = StatusComplete
	case StatusComplete, StatusPartial:
	default:
		return fmt.Errorf("traces: run status %q: want %q or %q", r.Status, StatusComplete, StatusPartial)
	}
	if r.Digest == "" {
		r.Digest = w.Digest()
	}
	if err := w.Flush(); err != nil {
		return err
	}
	w.runWritten = true
	c := &w.run
	c.runID.Append(w.runID)
	appendOpt(&c.scenario, r.Scenario)
	c.seed.Append(r.Seed)
	appendOpt(&c.config, w.red.JSON(r.Config))
	appendOpt(&c.configHash, r.ConfigHash)
	appendOpt(&c.version, r.Version)
	c.digest.Append(r.Digest)
	if r.NoEvents {
		c.events.AppendNull()
	} else {
		c.events.Append(r.Events)
	}
	c.status.Append(r.Status)
	c.wall.Append(r.WallSeconds)
	w.rows[Runs]++
	w.n[Runs]++
	w.flush(Runs)
	return w.err
}

// Close emits what is left (unless an error stopped the writer) and returns the first
// error. It is safe to call twice.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err == nil {
		for t := range numTables {
			w.flush(t)
		}
	}
	w.closed = true
	w.cols = [numTables][]column{} // a batch not emitted is left to the collector
	return w.err
}

// ts converts simulated nanoseconds to an Arrow timestamp.
func ts(sim int64) arrow.Timestamp { return arrow.Timestamp(record.Epoch + sim) }

// seconds converts simulated nanoseconds to seconds.
func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// simulated appends v, a value only a simulation knows, to c: NULL when the records were
// read from a trace (Options.FromTrace).
func simulated[T any](w *Writer, c interface {
	Append(T)
	AppendNull()
}, v T) {
	if w.fromTrace {
		c.AppendNull()
	} else {
		c.Append(v)
	}
}

func appendOpt(b *strCol, s string) {
	if s == "" {
		b.AppendNull()
	} else {
		b.Append(s)
	}
}

func appendOptI32(b *i32Col, v int32) {
	if v == 0 {
		b.AppendNull()
	} else {
		b.Append(v)
	}
}

// opKey formats k as "<investigation>/<step>/<revision>" into w.key without allocating.
// The investigation's part is kept from the key before when it is the same investigation
// (its spans and transitions come together), and a step or revision below 100 is written
// directly: three calls of strconv.AppendInt were 1.5% of a traced run's CPU.
func (w *Writer) opKey(k record.OpKey) []byte {
	b := w.key
	if w.keyInv != k.Investigation || w.keyInvLen == 0 {
		b = strconv.AppendInt(b[:0], k.Investigation, 10)
		b = append(b, '/')
		w.keyInv, w.keyInvLen = k.Investigation, len(b)
	}
	b = appendSmall(b[:w.keyInvLen], int64(k.Step))
	b = append(b, '/')
	b = appendSmall(b, int64(k.Revision))
	w.key = b
	return b
}

// appendSmall appends v in decimal, as strconv.AppendInt does.
func appendSmall(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 10:
		return append(b, byte('0'+v))
	case v >= 10 && v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return strconv.AppendInt(b, v, 10)
}

// Stored makes sink receive every record as the tables store it, when it is written: its
// text redacted (a span's refs, attributes, tool version and model; a reason; a fault's
// parameters), its times still those of the record. What the sink is handed is the
// writer's to reuse: it copies what it keeps.
func (w *Writer) Stored(sink record.Sink) { w.stored = sink }

// Investigation records one investigation row.
func (w *Writer) Investigation(r *record.Investigation) {
	if !w.ok() {
		return
	}
	red := w.d.investigation(r)
	if w.stored != nil {
		w.stored.Investigation(red)
	}
	reason := red.TerminationReason
	c := &w.inv
	c.runID.Append(w.runID)
	c.id.Append(r.InvestigationID)
	if r.ParentID == 0 {
		c.parent.AppendNull()
	} else {
		c.parent.Append(r.ParentID)
	}
	c.root.Append(r.RootID)
	c.depth.Append(r.Depth)
	c.arrived.Append(ts(r.ArrivedAt))
	if r.Ended {
		c.ended.Append(ts(r.EndedAt))
	} else {
		c.ended.AppendNull()
	}
	c.final.Append(r.FinalState)
	appendOpt(&c.reason, reason)
	c.steps.Append(r.Steps)
	c.attempts.Append(r.Attempts)
	simulated(w, &c.revisions, r.Revisions)
	c.escalations.Append(r.Escalations)
	c.tokens.Append(r.Tokens)
	simulated(w, &c.compute, r.Compute)
	simulated(w, &c.trulyValid, r.TrulyValid)
	simulated(w, &c.validated, r.Validated)
	simulated(w, &c.crashes, r.Crashes)
	simulated(w, &c.scope, cmp.Or(r.Scope, record.ScopeFull))
	w.row(Investigations)
}

// Span records one span row, its attributes redacted.
func (w *Writer) Span(r *record.Span) {
	if !w.ok() {
		return
	}
	s := w.d.redactSpan(r)

	c := &w.span
	c.runID.Append(w.runID)
	c.trace.Append(s.TraceID)
	c.span.Append(int64(s.SpanID))
	if s.ParentSpanID == 0 {
		c.parent.AppendNull()
	} else {
		c.parent.Append(int64(s.ParentSpanID))
	}
	c.inv.Append(s.InvestigationID)
	c.agent.Append(s.AgentID)
	c.operation.Append(string(s.Operation))
	appendOpt(&c.tool, s.Tool)
	// Both are copied from the scenario, where a secret may have been pasted: known secrets
	// are scrubbed here as everywhere else.
	s.ToolVersion, s.Model = w.red.Text(s.ToolVersion), w.red.Text(s.Model) // s is the digester's copy
	appendOpt(&c.toolVersion, s.ToolVersion)
	appendOpt(&c.model, s.Model)
	if s.HasKey {
		c.opKey.AppendBytes(w.opKey(s.OpKey))
	} else {
		c.opKey.AppendNull()
	}
	appendOptI32(&c.attempt, s.Attempt)
	c.start.Append(ts(s.Start))
	c.end.Append(ts(s.End))
	simulated(w, &c.queueWait, seconds(s.QueueWait))
	c.status.Append(string(s.Status))
	appendOpt(&c.failureClass, s.FailureClass)
	appendOpt(&c.faultID, s.FaultID)
	c.inTokens.Append(s.InputTokens)
	c.outTokens.Append(s.OutputTokens)
	simulated(w, &c.compute, s.Compute)
	appendOpt(&c.inRef, s.InputRef)
	appendOpt(&c.outRef, s.OutputRef)
	c.causedBy.Next()
	for _, id := range s.CausedBy {
		c.causedBy.Add(int64(id))
	}
	if s.Worker == 0 {
		c.worker.AppendNull()
	} else {
		c.worker.Append(s.Worker)
	}
	w.splitAttrs(s)
	if w.stored != nil {
		w.stored.Span(s)
	}
	s.CausedBy, s.Attrs = nil, nil // do not keep the sender's slice
	w.row(Spans)
}

// ArgPrefix starts the key of a tool's static argument on its execute_tool spans; tool_args
// stores the key without it.
const ArgPrefix = "arg."

// OwnArgsMarker is the span_attrs key of an execute_tool span (not blocked) that has no
// arguments while its tool's recorded set is not empty: it says that the set does not apply.
const OwnArgsMarker = ArgPrefix

// splitAttrs stores the redacted attributes of span s: the first kind in spans.kind; the
// arguments (ArgPrefix keys) of an execute_tool span once per tool in tool_args, unless they
// differ from the set recorded for the tool, when the span keeps its own in span_attrs;
// every other attribute in span_attrs, in the span's order. A blocked operation never
// reached its tool (the simulator gives it no arguments), so it takes no part in the tool's
// set: all its attributes are its own, and a first span that was blocked does not leave
// the tool with an empty set.
func (w *Writer) splitAttrs(s *record.Span) {
	kind := -1
	tool := s.Operation == record.OpExecuteTool && s.Tool != "" && s.Status != record.StatusBlocked
	w.args = w.args[:0]
	for i, a := range s.Attrs {
		if kind < 0 && a.Key == "kind" {
			kind = i
		} else if tool && strings.HasPrefix(a.Key, ArgPrefix) {
			w.args = append(w.args, i)
		}
	}
	if kind >= 0 {
		w.span.kind.Append(s.Attrs[kind].Value)
	} else {
		w.span.kind.AppendNull()
	}
	own := tool && w.ownArgs(s)
	if own && len(w.args) == 0 {
		w.spanAttr(s.SpanID, OwnArgsMarker, "")
	}
	for i, a := range s.Attrs {
		if i == kind || (tool && !own && strings.HasPrefix(a.Key, ArgPrefix)) {
			continue
		}
		w.spanAttr(s.SpanID, a.Key, a.Value)
	}
}

// ownArgs reports whether the arguments of the execute_tool span s (w.args) differ from its
// tool's recorded set; the first span of a tool records its set.
func (w *Writer) ownArgs(s *record.Span) bool {
	rec, seen := w.toolArgs[s.Tool]
	if !seen {
		rec = make([]record.Attr, 0, len(w.args))
		for _, i := range w.args {
			a := s.Attrs[i]
			rec = append(rec, a)
			c := &w.targ
			c.runID.Append(w.runID)
			c.tool.Append(s.Tool)
			c.key.Append(a.Key[len(ArgPrefix):])
			c.value.Append(a.Value)
			w.row(ToolArgs)
		}
		w.toolArgs[s.Tool] = rec
		return false
	}
	if len(rec) != len(w.args) {
		return true
	}
	for j, i := range w.args {
		if s.Attrs[i] != rec[j] {
			return true
		}
	}
	return false
}

func (w *Writer) spanAttr(span uint64, key, value string) {
	c := &w.sattr
	c.runID.Append(w.runID)
	c.span.Append(int64(span))
	c.key.Append(key)
	c.value.Append(value)
	w.row(SpanAttrs)
}

// Transition records one transition row.
func (w *Writer) Transition(r *record.Transition) {
	if !w.ok() {
		return
	}
	red := w.d.transition(r)
	if w.stored != nil {
		w.stored.Transition(red)
	}
	reason := red.Reason
	c := &w.tr
	c.runID.Append(w.runID)
	c.inv.Append(r.InvestigationID)
	c.at.Append(ts(r.At))
	appendOpt(&c.from, r.From)
	c.to.Append(r.To)
	appendOpt(&c.event, r.Event)
	appendOpt(&c.failureClass, r.FailureClass)
	appendOpt(&c.action, r.Action)
	appendOpt(&c.decidedBy, r.DecidedBy)
	appendOpt(&c.reason, reason)
	appendOptI32(&c.attempt, r.Attempt)
	w.row(Transitions)
}

// Execution records one execution row.
func (w *Writer) Execution(r *record.Execution) {
	if !w.ok() {
		return
	}
	w.d.Execution(r)
	if w.stored != nil {
		w.stored.Execution(r)
	}
	c := &w.ex
	c.runID.Append(w.runID)
	c.tool.Append(r.Tool)
	c.opKey.AppendBytes(w.opKey(r.OpKey))
	c.inv.Append(r.InvestigationID)
	c.execution.Append(r.Execution)
	c.start.Append(ts(r.Start))
	c.end.Append(ts(r.End))
	c.outcome.Append(r.Outcome)
	c.delivered.Append(r.Delivered)
	c.compute.Append(r.Compute)
	c.sideEffects.Append(r.SideEffects)
	w.row(Executions)
}

// Fault records one fault row, its parameters redacted.
func (w *Writer) Fault(r *record.Fault) {
	if !w.ok() {
		return
	}
	red := w.d.redactFault(r)
	if w.stored != nil {
		w.stored.Fault(red)
	}
	params := red.Parameters
	c := &w.fault
	c.runID.Append(w.runID)
	c.id.Append(r.FaultID)
	c.kind.Append(r.Kind)
	appendOpt(&c.tool, r.Tool)
	c.start.Append(ts(r.Start))
	c.end.Append(ts(r.End))
	appendOpt(&c.params, params)
	if r.Window {
		c.winStart.Append(ts(r.Start))
		c.winEnd.Append(ts(r.End))
	} else {
		c.winStart.AppendNull()
		c.winEnd.AppendNull()
	}
	appendOpt(&c.hits, r.Hits)
	w.row(Faults)
}

// Worker writes one row of workers.
func (w *Writer) Worker(r *record.Worker) {
	if !w.ok() {
		return
	}
	w.d.Worker(r)
	if w.stored != nil {
		w.stored.Worker(r)
	}
	c := &w.wrk
	c.runID.Append(w.runID)
	c.worker.Append(r.Worker)
	c.zone.Append(r.Zone)
	w.row(Workers)
}

// Sample records one tool_samples row.
func (w *Writer) Sample(r *record.Sample) {
	if !w.ok() {
		return
	}
	w.d.Sample(r)
	if w.stored != nil {
		w.stored.Sample(r)
	}
	c := &w.samp
	c.runID.Append(w.runID)
	c.tool.Append(r.Tool)
	c.at.Append(ts(r.At))
	c.queued.Append(r.Queued)
	c.inService.Append(r.InService)
	c.parked.Append(r.Parked)
	if r.BudgetTokens < 0 {
		c.budget.AppendNull()
	} else {
		c.budget.Append(r.BudgetTokens)
	}
	c.breaker.Append(r.BreakerState)
	c.attempts.Append(r.Attempts)
	c.failures.Append(r.Failures)
	c.retries.Append(r.Retries)
	w.row(ToolSamples)
}
