package record

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
)

// Digest is a Sink that hashes every record in emission order with a canonical binary
// encoding (table tag, then each field; strings length-prefixed). Two runs emit the same
// records in the same order exactly when their digests agree. It allocates nothing per record.
//
// The encodings collect in a chunk; each full chunk is hashed on a goroutine of its own
// while the sender fills the other one, so the hashing (a fifth of a run without a trace)
// overlaps the simulation. The bytes hashed and their order are the same as one record at a
// time: only where the work is done changes, never the sum.
type Digest struct {
	h     hash.Hash
	buf   []byte        // records not yet handed to the hash, the last one being encoded
	spare []byte        // the chunk being hashed while done is open; then free
	done  chan struct{} // closed when the chunk in flight is hashed; nil if none is
	n     int64
}

// digestChunk is how many bytes of encodings a chunk holds before it is hashed: large
// enough that a goroutine per chunk costs nothing next to its hashing, small enough to stay
// in cache.
const digestChunk = 128 << 10

// NewDigest returns an empty digest.
func NewDigest() *Digest {
	return &Digest{h: sha256.New(), buf: make([]byte, 0, digestChunk+512), spare: make([]byte, 0, digestChunk+512)}
}

// Rows returns how many records were hashed.
func (d *Digest) Rows() int64 { return d.n }

// Sum returns the hex SHA-256 of everything hashed so far.
func (d *Digest) Sum() string {
	d.wait()
	d.h.Write(d.buf)
	d.buf = d.buf[:0]
	return hex.EncodeToString(d.h.Sum(nil))
}

// flush ends a record's encoding; a full chunk goes to the hash.
func (d *Digest) flush() {
	d.n++
	if len(d.buf) < digestChunk {
		return
	}
	d.wait() // the previous chunk is hashed: its buffer is free
	full := d.buf
	d.buf, d.spare = d.spare[:0], full
	done := make(chan struct{})
	d.done = done
	go func() {
		d.h.Write(full)
		close(done)
	}()
}

// wait returns once no chunk is being hashed.
func (d *Digest) wait() {
	if d.done != nil {
		<-d.done
		d.done = nil
	}
}

func (d *Digest) i64(v int64)   { d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v)) }
func (d *Digest) u64(v uint64)  { d.buf = binary.LittleEndian.AppendUint64(d.buf, v) }
func (d *Digest) f64(v float64) { d.u64(math.Float64bits(v)) }
func (d *Digest) str(s string) {
	d.buf = binary.LittleEndian.AppendUint32(d.buf, uint32(len(s)))
	d.buf = append(d.buf, s...)
}
func (d *Digest) b(v bool) {
	if v {
		d.buf = append(d.buf, 1)
	} else {
		d.buf = append(d.buf, 0)
	}
}
func (d *Digest) key(k OpKey) { d.i64(k.Investigation); d.i64(int64(k.Step)); d.i64(int64(k.Revision)) }

func (d *Digest) Investigation(r *Investigation) {
	d.buf = append(d.buf, 'I')
	d.i64(r.InvestigationID)
	d.i64(r.ParentID)
	d.i64(r.RootID)
	d.i64(int64(r.Depth))
	d.i64(r.ArrivedAt)
	d.b(r.Ended)
	d.i64(r.EndedAt)
	d.str(r.FinalState)
	d.str(r.TerminationReason)
	d.i64(int64(r.Steps))
	d.i64(int64(r.Attempts))
	d.i64(int64(r.Revisions))
	d.i64(int64(r.Escalations))
	d.i64(r.Tokens)
	d.f64(r.Compute)
	d.b(r.TrulyValid)
	d.b(r.Validated)
	d.i64(int64(r.Crashes))
	if r.Scope == ScopeReduced {
		// Only a reduced scope is hashed, so traces without reduced work keep their digests.
		d.str(r.Scope)
	}
	d.flush()
}

func (d *Digest) Span(r *Span) {
	d.buf = append(d.buf, 'S')
	d.i64(r.TraceID)
	d.u64(r.SpanID)
	d.u64(r.ParentSpanID)
	d.i64(r.InvestigationID)
	d.i64(r.AgentID)
	d.str(string(r.Operation))
	d.str(r.Tool)
	d.str(r.ToolVersion)
	d.str(r.Model)
	d.b(r.HasKey)
	d.key(r.OpKey)
	d.i64(int64(r.Attempt))
	d.i64(r.Start)
	d.i64(r.End)
	d.i64(r.QueueWait)
	d.str(string(r.Status))
	d.str(r.FailureClass)
	d.str(r.FaultID)
	d.i64(r.InputTokens)
	d.i64(r.OutputTokens)
	d.f64(r.Compute)
	d.str(r.InputRef)
	d.str(r.OutputRef)
	d.i64(int64(len(r.CausedBy)))
	for _, c := range r.CausedBy {
		d.u64(c)
	}
	d.i64(int64(len(r.Attrs)))
	for _, a := range r.Attrs {
		d.str(a.Key)
		d.str(a.Value)
	}
	if r.Worker != 0 {
		// Only a span run on a worker hashes it, so traces with unlimited workers keep
		// their digests.
		d.buf = append(d.buf, 'w')
		d.i64(r.Worker)
	}
	d.flush()
}

func (d *Digest) Worker(r *Worker) {
	d.buf = append(d.buf, 'W')
	d.i64(r.Worker)
	d.str(r.Zone)
	d.flush()
}

func (d *Digest) Transition(r *Transition) {
	d.buf = append(d.buf, 'T')
	d.i64(r.InvestigationID)
	d.i64(r.At)
	d.str(r.From)
	d.str(r.To)
	d.str(r.Event)
	d.str(r.FailureClass)
	d.str(r.Action)
	d.str(r.DecidedBy)
	d.str(r.Reason)
	d.i64(int64(r.Attempt))
	d.flush()
}

func (d *Digest) Execution(r *Execution) {
	d.buf = append(d.buf, 'E')
	d.str(r.Tool)
	d.key(r.OpKey)
	d.i64(r.InvestigationID)
	d.i64(int64(r.Execution))
	d.i64(r.Start)
	d.i64(r.End)
	d.str(r.Outcome)
	d.b(r.Delivered)
	d.f64(r.Compute)
	// SideEffects follows from the tool's idempotency, part of the scenario. It is hashed as
	// false, the value every execution carried before the simulator set it, so digests of
	// earlier traces still hold.
	d.b(false)
	d.flush()
}

func (d *Digest) Fault(r *Fault) {
	d.buf = append(d.buf, 'F')
	d.str(r.FaultID)
	d.str(r.Kind)
	d.str(r.Tool)
	d.i64(r.Start)
	d.i64(r.End)
	d.str(r.Parameters)
	// Window and Hits follow from Kind (each kind is one or the other), so they add nothing
	// to the digest, and digests of traces written before they existed still hold.
	d.flush()
}

func (d *Digest) Sample(r *Sample) {
	d.buf = append(d.buf, 'P')
	d.str(r.Tool)
	d.i64(r.At)
	d.i64(int64(r.Queued))
	d.i64(int64(r.InService))
	d.i64(int64(r.Parked))
	d.f64(r.BudgetTokens)
	d.str(r.BreakerState)
	d.i64(int64(r.Attempts))
	d.i64(int64(r.Failures))
	d.i64(int64(r.Retries))
	d.flush()
}

var _ Sink = (*Digest)(nil)

// Tee sends every record to each sink in order.
type Tee []Sink

func (t Tee) Investigation(r *Investigation) {
	for _, s := range t {
		s.Investigation(r)
	}
}
func (t Tee) Span(r *Span) {
	for _, s := range t {
		s.Span(r)
	}
}
func (t Tee) Transition(r *Transition) {
	for _, s := range t {
		s.Transition(r)
	}
}
func (t Tee) Execution(r *Execution) {
	for _, s := range t {
		s.Execution(r)
	}
}
func (t Tee) Fault(r *Fault) {
	for _, s := range t {
		s.Fault(r)
	}
}
func (t Tee) Sample(r *Sample) {
	for _, s := range t {
		s.Sample(r)
	}
}

func (t Tee) Worker(r *Worker) {
	for _, s := range t {
		s.Worker(r)
	}
}

var _ Sink = Tee(nil)

// Collector keeps a copy of every record in memory; for tests and small runs.
type Collector struct {
	Investigations []Investigation
	Spans          []Span
	Transitions    []Transition
	Executions     []Execution
	Faults         []Fault
	Samples        []Sample
	Workers        []Worker
}

func (c *Collector) Investigation(r *Investigation) { c.Investigations = append(c.Investigations, *r) }
func (c *Collector) Span(r *Span) {
	s := *r
	s.CausedBy = append([]uint64(nil), r.CausedBy...)
	s.Attrs = append([]Attr(nil), r.Attrs...)
	c.Spans = append(c.Spans, s)
}
func (c *Collector) Transition(r *Transition) { c.Transitions = append(c.Transitions, *r) }
func (c *Collector) Execution(r *Execution)   { c.Executions = append(c.Executions, *r) }
func (c *Collector) Fault(r *Fault)           { c.Faults = append(c.Faults, *r) }
func (c *Collector) Sample(r *Sample)         { c.Samples = append(c.Samples, *r) }
func (c *Collector) Worker(r *Worker)         { c.Workers = append(c.Workers, *r) }

// Replay sends every collected record, table by table, to s.
func (c *Collector) Replay(s Sink) {
	for i := range c.Faults {
		s.Fault(&c.Faults[i])
	}
	for i := range c.Spans {
		s.Span(&c.Spans[i])
	}
	for i := range c.Transitions {
		s.Transition(&c.Transitions[i])
	}
	for i := range c.Executions {
		s.Execution(&c.Executions[i])
	}
	for i := range c.Investigations {
		s.Investigation(&c.Investigations[i])
	}
	for i := range c.Samples {
		s.Sample(&c.Samples[i])
	}
	for i := range c.Workers {
		s.Worker(&c.Workers[i])
	}
}

var _ Sink = (*Collector)(nil)
