package analysis

import (
	"encoding/binary"
	"math"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/mayday-sim/mayday/sim/record"
)

// nativeRows are the rows the events of a span of a mayday export carry (isRowEvent):
// its investigations, transitions and executions, read as records when the span is taken
// in, each with its row in the exported table (mayday.row). An export carries every
// transition of a run as an event of about ten attributes; held as attributes, each went
// through the spill and back as one, and was read again by key: the largest part of
// importing an export as mayday's own (docs/performance.md, "Import: an export's rows as
// records").
type nativeRows struct {
	invs      []record.Investigation
	invRows   []int64
	trans     []record.Transition
	transRows []int64
	execs     []record.Execution
	execRows  []int64
}

// reset empties n for the next span, keeping its memory.
func (n *nativeRows) reset() {
	*n = nativeRows{invs: n.invs[:0], invRows: n.invRows[:0], trans: n.trans[:0], transRows: n.transRows[:0],
		execs: n.execs[:0], execRows: n.execRows[:0]}
}

// rowValues reads the attributes of a row event as the records' fields read them: the
// last attribute of a key counts; an integer field reads an integer value (else 0), a
// float an integer or a double, a text a string, a flag a boolean; a time is Unix
// nanoseconds read as simulated time. own makes a string the run's.
type rowValues struct {
	kvs []*commonpb.KeyValue
	own func(string) string
}

func (v rowValues) get(k string) *commonpb.AnyValue {
	for i := len(v.kvs) - 1; i >= 0; i-- {
		if v.kvs[i].Key == k {
			if v.kvs[i].Value == nil {
				return noValue
			}
			return v.kvs[i].Value
		}
	}
	return nil
}

// noValue is the value of an attribute sent without one: there, and of no kind.
var noValue = &commonpb.AnyValue{}

// asIs is a string as it is: the own of rowValues whose strings are the run's already, or
// are copied at once (a spill's).
func asIs(s string) string { return s }

func (v rowValues) has(k string) bool   { return v.get(k) != nil }
func (v rowValues) int(k string) int64  { return v.get(k).GetIntValue() }
func (v rowValues) time(k string) int64 { return v.int(k) - record.Epoch }
func (v rowValues) bool(k string) bool  { return v.get(k).GetBoolValue() }
func (v rowValues) str(k string) string { return v.own(v.get(k).GetStringValue()) }

func (v rowValues) float(k string) float64 {
	switch x := v.get(k).GetValue().(type) {
	case *commonpb.AnyValue_IntValue:
		return float64(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	}
	return 0
}

// add reads the row of the event name (one isRowEvent names) from its attributes.
func (n *nativeRows) add(name string, kvs []*commonpb.KeyValue, own func(string) string) {
	v := rowValues{kvs, own}
	switch name {
	case "mayday.investigation":
		inv := record.Investigation{InvestigationID: v.int("investigation_id"), ParentID: v.int("parent_id"),
			RootID: v.int("root_id"), Depth: int32(v.int("depth")), ArrivedAt: v.time("arrived_at"),
			FinalState: v.str("final_state"), TerminationReason: v.str("termination_reason"),
			Steps: int32(v.int("steps")), Attempts: int32(v.int("attempts")), Revisions: int32(v.int("revisions")),
			Escalations: int32(v.int("escalations")), Tokens: v.int("tokens"), Compute: v.float("compute"),
			TrulyValid: v.bool("truly_valid"), Validated: v.bool("validated"), Crashes: int32(v.int("crashes")),
			Scope: v.str("scope")}
		if v.has("ended_at") {
			inv.Ended, inv.EndedAt = true, v.time("ended_at")
		}
		n.invs = append(n.invs, inv)
		n.invRows = append(n.invRows, v.int("mayday.row"))
	case "mayday.transition":
		n.trans = append(n.trans, record.Transition{InvestigationID: v.int("investigation_id"),
			At: v.time("at"), From: v.str("from_state"), To: v.str("to_state"), Event: v.str("event"),
			FailureClass: v.str("failure_class"), Action: v.str("action"), DecidedBy: v.str("decided_by"),
			Reason: v.str("reason"), Attempt: int32(v.int("attempt"))})
		n.transRows = append(n.transRows, v.int("mayday.row"))
	case "mayday.execution":
		key, _ := parseOpKey(v.str("op_key"))
		n.execs = append(n.execs, record.Execution{Tool: v.str("tool"), OpKey: key,
			InvestigationID: v.int("investigation_id"), Execution: int32(v.int("execution")),
			Start: v.time("start"), End: v.time("end"), Outcome: v.str("outcome"), Delivered: v.bool("delivered"),
			Compute: v.float("compute"), SideEffects: v.bool("side_effects")})
		n.execRows = append(n.execRows, v.int("mayday.row"))
	}
}

// appendRows appends the spill encoding of n (nil: none) to b: each kind's count, then
// each record's fields and row.
func appendRows(b []byte, n *nativeRows) []byte {
	if n == nil {
		return append(b, 0, 0, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(n.invs)))
	for i, r := range n.invs {
		b = appendInts(b, r.InvestigationID, r.ParentID, r.RootID, int64(r.Depth), r.ArrivedAt,
			int64(r.Steps), int64(r.Attempts), int64(r.Revisions), int64(r.Escalations), r.Tokens,
			int64(math.Float64bits(r.Compute)), int64(r.Crashes), r.EndedAt, flags(r.Ended, r.TrulyValid, r.Validated), n.invRows[i])
		b = appendStr(appendStr(appendStr(b, r.FinalState), r.TerminationReason), r.Scope)
	}
	b = binary.AppendUvarint(b, uint64(len(n.trans)))
	for i, r := range n.trans {
		b = appendInts(b, r.InvestigationID, r.At, int64(r.Attempt), n.transRows[i])
		for _, s := range [...]string{r.From, r.To, r.Event, r.FailureClass, r.Action, r.DecidedBy, r.Reason} {
			b = appendStr(b, s)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(n.execs)))
	for i, r := range n.execs {
		b = appendInts(b, r.OpKey.Investigation, int64(r.OpKey.Step), int64(r.OpKey.Revision), r.InvestigationID,
			int64(r.Execution), r.Start, r.End, int64(math.Float64bits(r.Compute)), flags(r.Delivered, r.SideEffects), n.execRows[i])
		b = appendStr(appendStr(b, r.Tool), r.Outcome)
	}
	return b
}

func appendInts(b []byte, vs ...int64) []byte {
	for _, v := range vs {
		b = binary.AppendVarint(b, v)
	}
	return b
}

// flags packs booleans into bits, the first the lowest.
func flags(bs ...bool) int64 {
	var f int64
	for i, b := range bs {
		if b {
			f |= 1 << i
		}
	}
	return f
}

// rows reads what appendRows wrote (nil when the span carries no row).
func (d *spillReader) rows(r *inRun) *nativeRows {
	text := func() string { return r.internBytes(d.bytes()) }
	var n nativeRows
	if k := d.count(); k > 0 {
		n.invs, n.invRows = make([]record.Investigation, k), make([]int64, k)
		for i := range n.invs {
			v := &n.invs[i]
			v.InvestigationID, v.ParentID, v.RootID, v.Depth, v.ArrivedAt = d.varint(), d.varint(), d.varint(), int32(d.varint()), d.varint()
			v.Steps, v.Attempts, v.Revisions, v.Escalations, v.Tokens = int32(d.varint()), int32(d.varint()), int32(d.varint()), int32(d.varint()), d.varint()
			v.Compute, v.Crashes, v.EndedAt = math.Float64frombits(uint64(d.varint())), int32(d.varint()), d.varint()
			f := d.varint()
			v.Ended, v.TrulyValid, v.Validated = f&1 != 0, f&2 != 0, f&4 != 0
			n.invRows[i] = d.varint()
			v.FinalState, v.TerminationReason, v.Scope = text(), text(), text()
		}
	}
	if k := d.count(); k > 0 {
		n.trans, n.transRows = make([]record.Transition, k), make([]int64, k)
		for i := range n.trans {
			v := &n.trans[i]
			v.InvestigationID, v.At, v.Attempt = d.varint(), d.varint(), int32(d.varint())
			n.transRows[i] = d.varint()
			v.From, v.To, v.Event, v.FailureClass, v.Action, v.DecidedBy, v.Reason = text(), text(), text(), text(), text(), text(), text()
		}
	}
	if k := d.count(); k > 0 {
		n.execs, n.execRows = make([]record.Execution, k), make([]int64, k)
		for i := range n.execs {
			v := &n.execs[i]
			v.OpKey = record.OpKey{Investigation: d.varint(), Step: int32(d.varint()), Revision: int32(d.varint())}
			v.InvestigationID, v.Execution, v.Start, v.End = d.varint(), int32(d.varint()), d.varint(), d.varint()
			v.Compute = math.Float64frombits(uint64(d.varint()))
			f := d.varint()
			v.Delivered, v.SideEffects = f&1 != 0, f&2 != 0
			n.execRows[i] = d.varint()
			v.Tool, v.Outcome = text(), text()
		}
	}
	if n.invs == nil && n.trans == nil && n.execs == nil {
		return nil
	}
	return &n
}
