package traces

import "github.com/mayday-sim/mayday/sim/record"

// Digester is a record.Sink that redacts each record as a Writer does and hashes the
// redacted records: a Writer's digest (runs.digest) without the Arrow tables, for a run
// that stores no trace. A Writer hashes through one.
type Digester struct {
	red *Redactor
	dig *record.Digest

	span  record.Span   // the redacted span
	attrs []record.Attr // its attrs
	inv   record.Investigation
	tr    record.Transition
	fault record.Fault
}

var _ record.Sink = (*Digester)(nil)

// NewDigester returns an empty digester that redacts with opts' key, patterns and secrets.
func NewDigester(opts Options) *Digester {
	return &Digester{red: NewRedactor(opts.RedactKey, opts.Redact, opts.Secrets), dig: record.NewDigest()}
}

// Sum returns the hex SHA-256 (record.Digest) over every redacted record received so far,
// in the order received: a Writer's Digest for the same records and options.
func (d *Digester) Sum() string { return d.dig.Sum() }

// Redactor returns the redactor the digester (and its writer) redacts with.
func (d *Digester) Redactor() *Redactor { return d.red }

// investigation hashes r with its termination reason redacted and returns what it hashed.
func (d *Digester) investigation(r *record.Investigation) *record.Investigation {
	reason := d.red.Text(r.TerminationReason)
	if reason == r.TerminationReason {
		d.dig.Investigation(r)
		return r
	}
	d.inv = *r
	d.inv.TerminationReason = reason
	d.dig.Investigation(&d.inv)
	return &d.inv
}

// redactSpan hashes r with its refs and attributes redacted and returns what it hashed, a
// copy the digester reuses (its CausedBy is the sender's).
func (d *Digester) redactSpan(r *record.Span) *record.Span {
	s := &d.span
	*s = *r
	s.InputRef = d.red.Text(r.InputRef)
	s.OutputRef = d.red.Text(r.OutputRef)
	d.attrs = d.attrs[:0]
	for _, a := range r.Attrs {
		d.attrs = append(d.attrs, record.Attr{Key: a.Key, Value: d.red.Attr(a.Key, a.Value)})
	}
	s.Attrs = d.attrs
	d.dig.Span(s)
	return s
}

// transition hashes r with its reason redacted and returns what it hashed.
func (d *Digester) transition(r *record.Transition) *record.Transition {
	reason := d.red.Text(r.Reason)
	if reason == r.Reason {
		d.dig.Transition(r)
		return r
	}
	d.tr = *r
	d.tr.Reason = reason
	d.dig.Transition(&d.tr)
	return &d.tr
}

// redactFault hashes r with its parameters redacted and returns what it hashed.
func (d *Digester) redactFault(r *record.Fault) *record.Fault {
	params := d.red.JSON(r.Parameters)
	if params == r.Parameters {
		d.dig.Fault(r)
		return r
	}
	d.fault = *r
	d.fault.Parameters = params
	d.dig.Fault(&d.fault)
	return &d.fault
}

// Investigation hashes an investigation.
func (d *Digester) Investigation(r *record.Investigation) { d.investigation(r) }

// Span hashes a span.
func (d *Digester) Span(r *record.Span) {
	s := d.redactSpan(r)
	s.CausedBy, s.Attrs = nil, nil // do not keep the sender's slice
}

// Transition hashes a transition.
func (d *Digester) Transition(r *record.Transition) { d.transition(r) }

// Execution hashes an execution.
func (d *Digester) Execution(r *record.Execution) { d.dig.Execution(r) }

// Fault hashes a fault.
func (d *Digester) Fault(r *record.Fault) { d.redactFault(r) }

// Sample hashes a tool sample.
func (d *Digester) Sample(r *record.Sample) { d.dig.Sample(r) }

// Worker hashes a worker.
func (d *Digester) Worker(r *record.Worker) { d.dig.Worker(r) }
