//go:build duckdb_arrow

package analysis

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/metric"
	"github.com/mayday-sim/mayday/metric/compute"
	"github.com/mayday-sim/mayday/sim/record"
)

// An imported run's derived tables and metrics row were computed once it was stored, by
// replaying its stored records into a metric/compute.Sink (replay.go): a fifth of the wall
// time of importing 431,142 spans, after everything else. They are now computed as the run
// loads: the records, as the writer stores them, are put in the order replay would send
// them and sent to the same Sink, part by part. What replay reads differs from the records
// sent, and storedOrder makes that difference itself:
//   - times are stored in microseconds and replayed as nanoseconds since the run's time 0;
//   - what a trace cannot know (traces.Options.FromTrace: compute, queue waits, truth,
//     validation, scope, crashes, revisions) is stored NULL and replayed as zero;
//   - a span's attributes are replayed as its kind and, on a failed span, the attributes a
//     capacity refusal is told by (compute.RefusalAttrs), joined and split as replay's
//     query does;
//   - replay sends investigation by investigation in id order: each one's spans by end and
//     span id, its transitions by time and the order stored, then its row.
//
// A part's records are sent once the part is loaded. A run whose parts do not follow one
// another in investigation id (a part holding an id at or below one already sent), or that
// sends other records, is left to replay, as before. TestImportDerivesAsReplay holds the
// two equal on every fixture.
type storedOrder struct {
	origin  int64 // the run's time 0, Unix microseconds (run_origin_us)
	sink    *compute.Sink
	spans   []record.Span
	trans   []record.Transition
	invs    []record.Investigation
	last    int64 // the greatest investigation id sent so far (-1: none)
	off     bool  // the run is left to replay
	attrs   []record.Attr
	tables  *compute.Tables // the run's derived tables, once finished
	metrics *Metrics        // and its metrics row

	// A run of mayday's own export read back (newNativeOrder) stores every column, so
	// nothing is zeroed, and it has faults, tool samples and executions, which replay sends
	// before (faults, samples) and after (executions) every investigation: they are held
	// until then. Its investigations are sent in id order across parts, though a part's
	// subagents may have greater ids than the next part's roots (flush);
	// TestNativeImportDerivesAsReplay holds the result equal to replay's.
	native      bool
	faults      []record.Fault
	samples     []record.Sample
	execs       []record.Execution
	sentHead    bool                         // the faults and samples were sent
	pending     map[int64]*heldInvestigation // investigations held until every smaller id is sent
	heldRecords int                          // the records they hold
}

func newStoredOrder(origin int64) *storedOrder {
	opts := replayOptions(origin, "") // a run of plain spans is unpriced
	opts.UnknownQueueWait = true
	return &storedOrder{origin: origin, last: -1, sink: compute.New(opts)}
}

// maxHeldExecutions bounds the executions a native run's storedOrder holds until its last
// part (about 100 bytes each): past it the run is left to replay, which reads them back
// from the database in bounded memory.
const maxHeldExecutions = 1_000_000

// newNativeOrder is the storedOrder of a run of mayday's own export read back, whose
// runs.config is config. A config that names an import's time 0 (a run imported from
// traces, then exported) is left to replay, which reads its clock as the views do.
func newNativeOrder(config string) *storedOrder {
	var c struct {
		Import map[string]json.RawMessage `json:"import"`
	}
	if json.Valid([]byte(config)) {
		if err := json.Unmarshal([]byte(config), &c); err != nil || c.Import["time_zero_us"] != nil {
			return &storedOrder{off: true}
		}
	}
	origin := record.Epoch / 1000 // run_origin_us of a simulated run
	return &storedOrder{origin: origin, last: -1, native: true, sink: compute.New(replayOptions(origin, config))}
}

// at is t, a record's time, as replay reads it back: nanoseconds since the run's time 0,
// whole microseconds (a TIMESTAMP holds no finer; the cast truncates).
func (o *storedOrder) at(t int64) int64 { return ((record.Epoch+t)/1000 - o.origin) * 1000 }

func (o *storedOrder) Span(s *record.Span) {
	if o.off {
		return
	}
	sp := *s
	sp.Start, sp.End = o.at(s.Start), o.at(s.End)
	if o.native {
		// Stored as seconds, read back as round(seconds * 1e9).
		sp.QueueWait = int64(math.Round(float64(s.QueueWait) / 1e9 * 1e9))
	} else {
		sp.Compute, sp.QueueWait = 0, 0
	}
	sp.CausedBy = slices.Clone(s.CausedBy)
	sp.Attrs = o.replayedAttrs(s)
	o.spans = append(o.spans, sp)
}

// replayedAttrs is what replay reads of the attributes of s: its kind (the first "kind",
// a column of its own), then, when s failed or timed out, its attributes named in
// compute.RefusalAttrs as replay's query joins them (key=value, by key, one a line) and
// splits them again.
func (o *storedOrder) replayedAttrs(s *record.Span) []record.Attr {
	var out []record.Attr
	kind := -1
	for i, a := range s.Attrs {
		if a.Key == "kind" {
			kind = i
			out = append(out, record.Attr{Key: "kind", Value: a.Value})
			break
		}
	}
	if s.Status != record.StatusError && s.Status != record.StatusTimeout {
		return out
	}
	o.attrs = o.attrs[:0]
	for i, a := range s.Attrs {
		if i != kind && slices.Contains(compute.RefusalAttrs, a.Key) {
			o.attrs = append(o.attrs, a)
		}
	}
	if len(o.attrs) == 0 {
		return out
	}
	slices.SortStableFunc(o.attrs, func(x, y record.Attr) int { return strings.Compare(x.Key, y.Key) })
	var joined strings.Builder
	for i, a := range o.attrs {
		if i > 0 {
			joined.WriteByte('\n')
		}
		joined.WriteString(a.Key + "=" + a.Value)
	}
	return appendRefusalAttrs(out, joined.String())
}

func (o *storedOrder) Transition(t *record.Transition) {
	if o.off {
		return
	}
	tr := *t
	tr.At = o.at(t.At)
	o.trans = append(o.trans, tr)
}

func (o *storedOrder) Investigation(r *record.Investigation) {
	if o.off {
		return
	}
	inv := *r
	inv.ArrivedAt = o.at(r.ArrivedAt)
	inv.EndedAt = 0
	if r.Ended {
		inv.EndedAt = o.at(r.EndedAt)
	}
	if o.native {
		if inv.Scope == "" {
			inv.Scope = record.ScopeFull // as the table stores it
		}
	} else {
		inv.Compute, inv.TrulyValid, inv.Validated, inv.Scope, inv.Crashes, inv.Revisions = 0, false, false, "", 0, 0
	}
	o.invs = append(o.invs, inv)
}

// An import of plain spans sends none of these: a run that did would be left to replay. A
// native run's are held (see storedOrder): its executions to the end, its faults and tool
// samples, which come with its first part, until that part is sent.
func (o *storedOrder) Execution(e *record.Execution) {
	if o.holds(len(o.execs) < maxHeldExecutions) {
		ex := *e
		ex.Start, ex.End = o.at(e.Start), o.at(e.End)
		o.execs = append(o.execs, ex)
	}
}

func (o *storedOrder) Fault(f *record.Fault) {
	if o.holds(!o.sentHead) {
		ft := *f
		ft.Start, ft.End = o.at(f.Start), o.at(f.End)
		o.faults = append(o.faults, ft)
	}
}

func (o *storedOrder) Sample(r *record.Sample) {
	if o.holds(!o.sentHead) {
		sm := *r
		sm.At = o.at(r.At)
		if sm.BudgetTokens < 0 {
			sm.BudgetTokens = -1 // stored NULL, read back as -1
		}
		o.samples = append(o.samples, sm)
	}
}

// holds reports whether the run keeps a record of a kind only a native run sends, which it
// can when ok; otherwise the run is left to replay.
func (o *storedOrder) holds(ok bool) bool {
	if o.off || !o.native || !ok {
		o.leave()
		return false
	}
	return true
}

// Worker: replay sends no workers.
func (o *storedOrder) Worker(*record.Worker) {
	if !o.native {
		o.leave()
	}
}

// leave gives the run up to replay.
func (o *storedOrder) leave() {
	o.off = true
	o.spans, o.trans, o.invs = nil, nil, nil
	o.faults, o.samples, o.execs, o.pending = nil, nil, nil, nil
}

// sendHead sends a native run's faults and tool samples, once, as replay sends them first.
func (o *storedOrder) sendHead() {
	if o.sentHead {
		return
	}
	o.sentHead = true
	for i := range o.faults {
		o.sink.Fault(&o.faults[i])
	}
	for i := range o.samples {
		o.sink.Sample(&o.samples[i])
	}
	o.faults, o.samples = nil, nil
}

// flush sends the part's investigations to the Sink in replay's order: in id order, each
// once every smaller id has been sent, the others held (copied out of the part) until then.
// A run's investigation ids have no gaps, so all are sent in id order, as replay sends
// them, whichever part holds each: a plain run numbers its parts' investigations one after
// another, and nothing waits; a mayday export's subagents wait for the roots numbered
// before them. A part holding an id at or below one sent, or more held than maxHeldRecords
// (ids with a gap), leaves the run to replay.
func (o *storedOrder) flush() {
	if o.off {
		return
	}
	sortByIndex(o.spans, replaySpanOrder)
	sortByIndex(o.trans, replayTransitionOrder)
	sortByIndex(o.invs, func(x, y *record.Investigation) int { return cmp.Compare(x.InvestigationID, y.InvestigationID) })
	i, j, k := 0, 0, 0
	for !o.off && (i < len(o.spans) || j < len(o.trans) || k < len(o.invs)) {
		id := int64(math.MaxInt64)
		if i < len(o.spans) {
			id = o.spans[i].InvestigationID
		}
		if j < len(o.trans) {
			id = min(id, o.trans[j].InvestigationID)
		}
		if k < len(o.invs) {
			id = min(id, o.invs[k].InvestigationID)
		}
		if id == math.MaxInt64 {
			o.leave() // no id follows it (a hostile export's): replay reads it as it is
			break
		}
		i0, j0, k0 := i, j, k
		for ; i < len(o.spans) && o.spans[i].InvestigationID == id; i++ {
		}
		for ; j < len(o.trans) && o.trans[j].InvestigationID == id; j++ {
		}
		for ; k < len(o.invs) && o.invs[k].InvestigationID == id; k++ {
		}
		if !o.sentHead {
			o.last = id - 1 // the least id of the first part
			o.sendHead()
		}
		switch {
		case id <= o.last:
			o.leave()
		case id == o.last+1:
			sendByInvestigation(o.sink, o.spans[i0:i], o.trans[j0:j], o.invs[k0:k])
			o.last = id
			o.sendHeld()
		default:
			h := &heldInvestigation{spans: slices.Clone(o.spans[i0:i]), trans: slices.Clone(o.trans[j0:j]), invs: slices.Clone(o.invs[k0:k])}
			if o.pending == nil {
				o.pending = map[int64]*heldInvestigation{}
			}
			o.pending[id] = h
			if o.heldRecords += h.records(); o.heldRecords > maxHeldRecords {
				o.leave()
			}
		}
	}
	if o.off {
		return
	}
	clear(o.spans)
	clear(o.trans)
	clear(o.invs)
	o.spans, o.trans, o.invs = o.spans[:0], o.trans[:0], o.invs[:0]
}

// heldInvestigation is the records of an investigation a native run holds until every
// smaller id has been sent.
type heldInvestigation struct {
	spans []record.Span
	trans []record.Transition
	invs  []record.Investigation
}

func (h *heldInvestigation) records() int { return len(h.spans) + len(h.trans) + len(h.invs) }

// sendHeld sends the held investigations that follow on from the last id sent.
func (o *storedOrder) sendHeld() {
	for {
		h := o.pending[o.last+1]
		if h == nil {
			return
		}
		delete(o.pending, o.last+1)
		o.heldRecords -= h.records()
		sendByInvestigation(o.sink, h.spans, h.trans, h.invs)
		o.last++
	}
}

// replaySpanOrder is the order replay sends an investigation's spans in: by investigation,
// end and span id.
func replaySpanOrder(x, y *record.Span) int {
	return cmp.Or(cmp.Compare(x.InvestigationID, y.InvestigationID), cmp.Compare(x.End, y.End), cmp.Compare(int64(x.SpanID), int64(y.SpanID)))
}

// replayTransitionOrder is replay's order of transitions, by investigation and time (ties
// in the order stored: sortByIndex is stable).
func replayTransitionOrder(x, y *record.Transition) int {
	return cmp.Or(cmp.Compare(x.InvestigationID, y.InvestigationID), cmp.Compare(x.At, y.At))
}

// maxHeldRecords bounds the spans, transitions and rows a native run's storedOrder holds for
// investigations whose smaller ids are still to come.
const maxHeldRecords = 300_000

// finish computes the run's metrics row and derived tables, which store stores once the run
// is committed; unknown are the metrics the run cannot measure, events its simulation events
// (none for a trace). (Load.SetMetrics would store
// the row with the run, but its commit waits for a new database's views, which take
// deriveMu to fill the derived tables, which the import holds.)
func (o *storedOrder) finish(runID string, unknown []string, events int64) error {
	if o.off {
		return nil
	}
	// What a run of plain spans never holds: faults, samples, investigations after a gap,
	// executions.
	o.sendHead()
	for _, id := range slices.Sorted(maps.Keys(o.pending)) { // held: greater than any sent
		h := o.pending[id]
		sendByInvestigation(o.sink, h.spans, h.trans, h.invs)
	}
	for i := range o.execs {
		o.sink.Execution(&o.execs[i])
	}
	o.spans, o.trans, o.invs, o.pending, o.execs = nil, nil, nil, nil, nil
	row, err := o.sink.Finish(events)
	if err != nil {
		return nil // left to replay, which says what is wrong
	}
	for _, name := range unknown {
		if i := metric.Index(name); i >= 0 {
			row.Values[i] = math.NaN()
		}
	}
	m, err := NewMetrics(runID, row.Values, row.TerminationReasons, row.Currency)
	if err != nil {
		return err
	}
	t := o.sink.Tables(runID)
	o.tables, o.metrics = &t, &m
	return nil
}

// store stores the run's derived tables, once it is committed (the caller holds deriveMu).
func (o *storedOrder) store(ctx context.Context, db *DB, runID string) error {
	if o.tables == nil {
		return nil
	}
	t, m := *o.tables, o.metrics
	o.tables, o.metrics = nil, nil
	return db.storeDerived(ctx, runID, t, m)
}
