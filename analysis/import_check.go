package analysis

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mayday-sim/mayday/sim/record"
)

// Checking what an import reads before it is kept: the files are the attacker's, so every
// value that becomes a column, a bucket count or a sum is checked here, and refused with
// the file, the span and the attribute named, rather than overflowing, looping or
// exhausting memory further on. docs/import.md ("Untrusted input") lists the rules.

// The instants a span may carry: a trace recorded between these years. Minute buckets are
// counted from a run's first span, so one span far from the others would cost a bucket
// per minute between them.
var (
	minTraceTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTraceTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// maxCount is the largest count (tokens, attempts, ids) an import takes: 2^53, the largest
// integer a double (JSON, DuckDB's sums of doubles) holds exactly; far above any real one.
const maxCount = 1 << 53

// attrRules says, by attribute key, what the checks read of an attribute (one lookup an
// attribute). A count is read as a number (tokens, attempts) by some convention: it must be
// a whole count from 0 to maxCount. A name becomes a column or a name printed
// (runs.scenario, spans.tool, spans.model, a termination reason, summary.json, a fitted
// scenario): it is redacted by shape, as any string is, before anything reads it. Both are
// taken from the registered conventions, once they have registered; the mayday.* keys of
// an export (maydayAttrs) carry their kind.
var (
	attrSets  sync.Once
	attrRules map[string]attrRule
)

type attrRule struct {
	count, name, mayday bool
	kind                valueKind
	countFields         []string // fields of a JSON object in the value that are counts (key#field)
	// As a column of a row an export carries (recordColumns, enumAttrs): its kind, and the
	// ENUM column ("table.column") that holds its values.
	column   valueKind
	isColumn bool
	enum     string
}

func attrKinds() {
	attrSets.Do(func() {
		attrRules = map[string]attrRule{}
		mark := func(set func(*attrRule), keys ...string) {
			for _, k := range keys {
				r := attrRules[k]
				set(&r)
				attrRules[k] = r
			}
		}
		// a count is an attribute's value, or a field of the JSON object it holds (key#field)
		counts := func(keys ...string) {
			for _, k := range keys {
				if base, field, ok := strings.Cut(k, "#"); ok {
					mark(func(r *attrRule) { r.countFields = append(r.countFields, field) }, base)
				} else {
					mark(func(r *attrRule) { r.count = true }, k)
				}
			}
		}
		name := func(r *attrRule) { r.name = true }
		mark(name, "service.name", "mayday.scenario", "mayday.tool", "mayday.model", "error.type", "exception.type")
		for _, c := range conventions {
			for _, list := range [][]string{c.Attempt, c.Resend, c.InputTokens, c.OutputTokens, c.TotalTokens} {
				counts(list...)
			}
			for _, list := range [][]string{c.Tool, c.Model, c.ErrorType} {
				mark(name, list...)
			}
		}
		for k, kind := range maydayAttrs {
			mark(func(r *attrRule) { r.mayday, r.kind = true, kind }, k)
		}
		for k, kind := range recordColumns {
			mark(func(r *attrRule) { r.isColumn, r.column = true, kind }, k)
		}
		for k, col := range enumAttrs {
			mark(func(r *attrRule) { r.enum = col }, k)
		}
	})
}

// valueKind is what a mayday.* attribute of an export must hold.
type valueKind int

const (
	kindText      valueKind = iota // any string (redacted as any string is)
	kindCount                      // a whole number from 0 to maxCount
	kindCount32                    // a whole number from 0 to 2^31-1 (an INTEGER column)
	kindSeconds                    // a finite number of seconds from 0 to maxCount
	kindNumber                     // a finite number
	kindTime                       // Unix nanoseconds within the trace years
	kindRunID                      // a run id, as --run-id takes
	kindSeed                       // a seed: a whole number from 0 to 2^64-1
	kindName                       // a name: printable, at most 200 bytes
	kindHex                        // a digest: hex digits
	kindJSON                       // a JSON object
	kindOpKey                      // <investigation>/<step>/<revision>
	kindOperation                  // one of mayday's operations
	kindStatus                     // one of mayday's span statuses
	kindRunStatus                  // complete or partial
	kindID                         // a fault id
)

// maydayAttrs are the mayday.* attributes of an export's resource and spans, checked as the
// flags and columns that set them are.
var maydayAttrs = map[string]valueKind{
	"mayday.run_id": kindRunID, "mayday.scenario": kindName, "mayday.seed": kindSeed,
	"mayday.run.status": kindRunStatus, "mayday.digest": kindHex, "mayday.config_hash": kindHex,
	"mayday.config": kindJSON, "mayday.events": kindCount, "mayday.sweep.point": kindCount,
	"mayday.operation": kindOperation, "mayday.status": kindStatus, "mayday.span_id": kindCount,
	"mayday.investigation_id": kindCount, "mayday.agent_id": kindCount, "mayday.row": kindCount,
	"mayday.compute": kindSeconds, "mayday.queue_wait": kindSeconds, "mayday.input_tokens": kindCount,
	"mayday.output_tokens": kindCount, "mayday.tool": kindName, "mayday.failure_class": kindName,
	"mayday.fault_id": kindID, "mayday.op_key": kindOpKey, "mayday.attempt": kindCount32,
	"mayday.idempotency": kindName, "mayday.tool_version": kindName, "mayday.model": kindName,
	"mayday.worker": kindCount, "mayday.zone": kindName, "mayday.link": kindName,
}

// recordColumns are the columns of the rows an export carries as events (investigations,
// transitions, executions) and resource lists (faults, tool samples, workers), by kind;
// the others are text.
var recordColumns = map[string]valueKind{
	"mayday.row": kindCount, "investigation_id": kindCount, "parent_id": kindCount, "root_id": kindCount,
	"tokens": kindCount, "depth": kindCount32, "steps": kindCount32, "attempts": kindCount32,
	"revisions": kindCount32, "escalations": kindCount32, "crashes": kindCount32, "execution": kindCount32,
	"attempt": kindCount32, "queued": kindCount32, "in_service": kindCount32, "parked": kindCount32,
	"failures": kindCount32, "retries": kindCount32, "compute": kindSeconds, "budget_tokens": kindNumber,
	"arrived_at": kindTime, "ended_at": kindTime, "at": kindTime, "start": kindTime, "end": kindTime,
	"window_start": kindTime, "window_end": kindTime, "fault_id": kindID, "worker": kindCount,
}

// isRowEvent reports whether a span event of an export, by its name, carries a row of
// investigations, transitions or executions.
func isRowEvent(name string) bool {
	switch name {
	case "mayday.investigation", "mayday.transition", "mayday.execution":
		return true
	}
	return false
}

var (
	hexShape     = regexp.MustCompile(`^[0-9a-f]{0,128}$`)
	faultIDShape = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,200}$`)
	opKeyShape   = regexp.MustCompile(`^[0-9]{1,16}/[0-9]{1,9}/[0-9]{1,9}$`)
)

// timeBounds is the earliest and latest instant of one run's spans so far.
type timeBounds struct {
	lo, hi int64
	set    bool
}

// resourceNames is the export run id (mayday.run_id) and the service.name a resource's
// attributes give, each "" when absent; the last of an attribute sent twice counts.
func resourceNames(attrs []*commonpb.KeyValue) (runID, service string) {
	for _, kv := range attrs {
		switch kv.Key {
		case "mayday.run_id":
			runID = kv.Value.GetStringValue()
		case "service.name":
			service = kv.Value.GetStringValue()
		}
	}
	return runID, service
}

// readEvent is the span event a run of plain spans reads for failures (inSpan.outcome),
// besides the events some convention reads a tool's arguments or tokens from (readEvents); a
// mayday export's spans carry rows in events of their own, all read.
const readEvent = "exception"

// readsEvent reports whether an import reads (and so checks) a span's event of this name.
func readsEvent(native bool, name string) bool {
	return native || name == readEvent || readEvents[name]
}

// eventReading is which span events the fast decoders keep. A run of plain spans reads
// only its spans' exception events; the others (an export's rows read as plain spans, a
// library's logs) were a third of the work of decoding a protobuf export read with
// --conventions, for nothing. Events left out are still checked as the decoder would
// decode them, so what a request is accepted as does not change.
type eventReading uint8

const (
	allEvents          eventReading = iota // every event
	plainEvents                            // every resource's spans are plain spans (--conventions names one)
	plainUnlessExports                     // plain spans unless the resource names an export run
)

// plain reports whether the spans of a resource with attributes attrs are read as plain
// spans, whose events other than readEvent the decoder leaves out. seen says the resource
// was decoded before them: when it comes after them (protobuf and JSON allow any order),
// whether they are an export's is not known, and every event is kept.
func (r eventReading) plain(attrs []*commonpb.KeyValue, seen bool) bool {
	switch r {
	case plainEvents:
		return true
	case plainUnlessExports:
		runID, _ := resourceNames(attrs)
		return seen && runID == ""
	}
	return false
}

// accept checks and redacts one request in place before it is kept; where names it.
func (rd *traceReader) accept(req *coltracepb.ExportTraceServiceRequest, where string) error {
	attrKinds()
	maxText := rd.lim.Message
	for _, rs := range req.ResourceSpans {
		var attrs []*commonpb.KeyValue
		if rs.Resource != nil {
			attrs = rs.Resource.Attributes
		}
		runID, service := resourceNames(attrs)
		native := runID != "" && !rd.forced
		rd.redact(attrs)
		if err := checkResource(attrs, native, maxText); err != nil {
			return refuse("%s: the resource: %v", where, err)
		}
		key := "run:" + runID // the run the spans go to, as spanSet.add picks it
		if !native {
			key = "service:" + rd.red.Text(service)
		}
		b := rd.bounds[key]
		if b == nil {
			b = &timeBounds{}
			if native { // an export run's buckets count from its time 0
				zero := exportTimeZero(attrs)
				b.lo, b.hi, b.set = zero, zero, true
			}
			rd.bounds[key] = b
		}
		if native {
			if err := rd.resourceTimes(attrs, b); err != nil {
				return refuse("%s: the resource: %v", where, err)
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				sp.Name = rd.red.Text(sp.Name)
				if sp.Status != nil {
					sp.Status.Message = rd.red.Text(sp.Status.Message)
				}
				if err := rd.checkSpan(sp, native, maxText); err != nil {
					return refuse("%s: span %s: %v", where, spanRef(sp), err)
				}
				if err := rd.spanTimes(sp, native, b); err != nil {
					return refuse("%s: span %s: %v", where, spanRef(sp), err)
				}
			}
		}
	}
	return nil
}

func spanRef(sp *tracepb.Span) string {
	return fmt.Sprintf("%s (%x)", excerpt(sp.Name), sp.SpanId)
}

// redact replaces the values of the name attributes (attrRules) by their redacted text (a
// bytes value as its text, bytesText).
func (rd *traceReader) redact(attrs []*commonpb.KeyValue) {
	for _, kv := range attrs {
		rd.redactValue(kv, attrRules[kv.Key])
	}
}

// redactValue redacts kv's value when its rule says it is a name.
func (rd *traceReader) redactValue(kv *commonpb.KeyValue, rule attrRule) {
	if !rule.name {
		return
	}
	switch x := kv.Value.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		x.StringValue = rd.red.Text(x.StringValue)
	case *commonpb.AnyValue_BytesValue:
		kv.Value.Value = &commonpb.AnyValue_StringValue{StringValue: rd.red.Text(bytesText(x.BytesValue))}
	}
}

// checkResource checks a resource's attributes; an export's (native) mayday.* ones as the
// flags that set them.
func checkResource(attrs []*commonpb.KeyValue, native bool, maxText int64) error {
	attrKinds()
	for _, kv := range attrs {
		if err := checkValue(kv.Key, kv.Value, attrRules[kv.Key], native, maxText); err != nil {
			return err
		}
		if !native {
			continue
		}
		if !isCarried(kv.Key) {
			continue
		}
		for i, row := range kv.Value.GetArrayValue().GetValues() {
			for _, c := range row.GetKvlistValue().GetValues() {
				if err := checkColumn(c.Key, c.Value, attrRules[c.Key]); err != nil {
					return fmt.Errorf("%s row %d: %w", kv.Key, i+1, err)
				}
			}
		}
	}
	return nil
}

// checkSpan checks one span: its ids, its times, and the attributes an import reads as
// numbers (and, in an export, its mayday.* attributes and the rows its events carry). Its
// name attributes, and its events', are redacted first (redactValue), as they are read.
func (rd *traceReader) checkSpan(sp *tracepb.Span, native bool, maxText int64) error {
	attrKinds()
	rd.rowTimes = rd.rowTimes[:0]
	if len(sp.TraceId) != 16 || len(sp.SpanId) != 8 {
		return fmt.Errorf("trace id of %d bytes and span id of %d bytes (want 16 and 8)", len(sp.TraceId), len(sp.SpanId))
	}
	if n := len(sp.ParentSpanId); n != 0 && n != 8 {
		return fmt.Errorf("parent span id of %d bytes (want 8, or none for a root)", n)
	}
	if err := checkTime("starts", sp.StartTimeUnixNano); err != nil {
		return err
	}
	if sp.EndTimeUnixNano != 0 { // 0: the span never ended
		if err := checkTime("ends", sp.EndTimeUnixNano); err != nil {
			return err
		}
		if sp.EndTimeUnixNano < sp.StartTimeUnixNano {
			return fmt.Errorf("ends at %s, before it starts at %s", instant(sp.EndTimeUnixNano), instant(sp.StartTimeUnixNano))
		}
	}
	for _, kv := range sp.Attributes {
		rule := attrRules[kv.Key] // one lookup for the redaction and the checks
		rd.redactValue(kv, rule)
		if err := checkValue(kv.Key, kv.Value, rule, native, maxText); err != nil {
			return err
		}
	}
	for _, e := range sp.Events {
		if !readsEvent(native, e.Name) {
			rd.redact(e.Attributes)
			continue // not read, so not checked: the fast decoders leave it out
		}
		rows := native && isRowEvent(e.Name)
		for _, kv := range e.Attributes {
			rule := attrRules[kv.Key]
			rd.redactValue(kv, rule)
			err := checkValue(kv.Key, kv.Value, rule, false, maxText)
			if err == nil && rows {
				err = checkColumn(kv.Key, kv.Value, rule)
				if rule.isColumn && rule.column == kindTime {
					rd.rowTimes = append(rd.rowTimes, rowTime{e.Name, kv})
				}
			}
			if err != nil {
				return fmt.Errorf("event %s: %w", excerpt(e.Name), err)
			}
		}
	}
	return nil
}

// checkTime refuses an instant outside the trace years (which includes every one past
// 2262, where Unix nanoseconds leave int64).
func checkTime(what string, ns uint64) error {
	if ns < uint64(minTraceTime.UnixNano()) || ns >= uint64(maxTraceTime.UnixNano()) {
		return fmt.Errorf("%s at %s: want a time from %d to %d", what, instant(ns), minTraceTime.Year(), maxTraceTime.Year()-1)
	}
	return nil
}

// instant prints Unix nanoseconds as a UTC time, or as a number past int64.
func instant(ns uint64) string {
	if ns > math.MaxInt64 {
		return strconv.FormatUint(ns, 10) + " ns (past the year 2262)"
	}
	return time.Unix(0, int64(ns)).UTC().Format(time.RFC3339Nano)
}

// spanTimes widens the run's bounds by the span (and, in an export, by the times of the
// rows its events carry, which checkSpan, called just before, noted), refusing a run that
// would cover more than ReadLimits.Spread.
func (rd *traceReader) spanTimes(sp *tracepb.Span, native bool, b *timeBounds) error {
	if err := rd.widen(b, "starts", int64(sp.StartTimeUnixNano)); err != nil {
		return err
	}
	if sp.EndTimeUnixNano != 0 {
		if err := rd.widen(b, "ends", int64(sp.EndTimeUnixNano)); err != nil {
			return err
		}
	}
	if !native {
		return nil
	}
	for _, t := range rd.rowTimes {
		if err := rd.widen(b, "event "+t.event+" has "+t.kv.Key, t.kv.Value.GetIntValue()); err != nil {
			return err
		}
	}
	return nil
}

// rowTime is a time column of a row an export's span carries in an event (checkSpan
// notes them, in order, for spanTimes).
type rowTime struct {
	event string
	kv    *commonpb.KeyValue
}

// exportTimeZero is time 0 of an export's run, as the views count it: the simulated epoch,
// or, for a run imported from traces and exported, its $.import.time_zero_us (checked to be
// in the trace years, else the epoch stands).
func exportTimeZero(attrs []*commonpb.KeyValue) int64 {
	for _, kv := range attrs {
		if kv.Key != "mayday.config" {
			continue
		}
		var cfg struct {
			Import struct {
				TimeZeroUS *int64 `json:"time_zero_us"`
			} `json:"import"`
		}
		if json.Unmarshal([]byte(kv.Value.GetStringValue()), &cfg) == nil && cfg.Import.TimeZeroUS != nil {
			if us := *cfg.Import.TimeZeroUS; us > minTraceTime.UnixMicro() && us < maxTraceTime.UnixMicro() {
				return us * 1000
			}
		}
	}
	return record.Epoch
}

// resourceTimes widens an export run's bounds by its tool samples (faults may name windows
// past the run's end, which no bucket counts).
func (rd *traceReader) resourceTimes(attrs []*commonpb.KeyValue, b *timeBounds) error {
	for _, kv := range attrs {
		if kv.Key != "mayday.tool_samples" {
			continue
		}
		for _, row := range kv.Value.GetArrayValue().GetValues() {
			for _, c := range row.GetKvlistValue().GetValues() {
				if c.Key == "at" {
					if err := rd.widen(b, "a tool sample is", c.Value.GetIntValue()); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// widen adds the instant t to b; what says what is at t.
func (rd *traceReader) widen(b *timeBounds, what string, t int64) error {
	if !b.set {
		b.lo, b.hi, b.set = t, t, true
		return nil
	}
	lo, hi := min(b.lo, t), max(b.hi, t)
	if time.Duration(hi-lo) > rd.lim.Spread || hi-lo < 0 {
		return fmt.Errorf("%s %s, which makes its run cover %s (from %s to %s), more than %s (--max-spread): "+
			"import a shorter capture (split the files by time) or raise --max-spread",
			what, instant(uint64(t)), days(hi-lo), instant(uint64(lo)), instant(uint64(hi)), days(int64(rd.lim.Spread)))
	}
	b.lo, b.hi = lo, hi
	return nil
}

func days(ns int64) string {
	d := time.Duration(ns)
	if d < 48*time.Hour {
		return d.String()
	}
	return strconv.FormatFloat(d.Hours()/24, 'f', 1, 64) + " days"
}

// checkValue checks one attribute: its text stays within maxText, a count is a count,
// and, in an export, a mayday.* attribute holds what its kind says.
func checkValue(key string, v *commonpb.AnyValue, rule attrRule, native bool, maxText int64) error {
	if n := textSize(v); n > float64(maxText) {
		return fmt.Errorf("attribute %s: its value, as text, is longer than %s (--max-message)", excerpt(key), sizeText(maxText))
	}
	if rule.count {
		if err := checkKind(v, kindCount); err != nil {
			return fmt.Errorf("attribute %s: %w", key, err)
		}
	}
	if len(rule.countFields) > 0 {
		if err := checkCountFields(v, rule.countFields); err != nil {
			return fmt.Errorf("attribute %s: %w", key, err)
		}
	}
	if rule.mayday && native {
		if err := errors.Join(checkKind(v, rule.kind), checkEnum(rule.enum, v)); err != nil {
			return fmt.Errorf("attribute %s: %w", key, err)
		}
	}
	return nil
}

// checkCountFields checks the count fields of a JSON object held as a string (Langfuse's
// usage_details): each present is a whole number from 0 to maxCount. A value that is no
// JSON object is left alone (the import reads no count from it), as is a field that is no
// number.
func checkCountFields(v *commonpb.AnyValue, fields []string) error {
	obj := jsonObject(v.GetStringValue(), fields)
	for _, f := range fields {
		if n, ok := obj[f]; ok {
			if err := checkKind(n.anyValue(), kindCount); err != nil {
				return fmt.Errorf("field %s: %w", excerpt(f), err)
			}
		}
	}
	return nil
}

// jsonNumber is a number field of a JSON object, as its text.
type jsonNumber json.Number

// anyValue is the number as an attribute value: an int when it is a whole number that fits,
// else a double.
func (n jsonNumber) anyValue() *commonpb.AnyValue {
	if i, err := json.Number(n).Int64(); err == nil {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	x, _ := json.Number(n).Float64()
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: x}}
}

// jsonObject reads the named number fields of text as a JSON object (nil when it is not
// one). A field is a key of the object, else a path of keys joined by dots into the objects
// it holds (Genkit's model output: usage.inputTokens).
func jsonObject(text string, fields []string) map[string]jsonNumber {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return nil
	}
	d := json.NewDecoder(strings.NewReader(t))
	d.UseNumber()
	var obj map[string]any
	if d.Decode(&obj) != nil {
		return nil
	}
	out := map[string]jsonNumber{}
	for _, f := range fields {
		if n, ok := jsonPath(obj, f).(json.Number); ok {
			out[f] = jsonNumber(n)
		}
	}
	return out
}

// jsonPath is the value at path in obj: the key path, else the key before a dot and the
// rest of the path in the object it holds; nil when there is none.
func jsonPath(obj map[string]any, path string) any {
	if v, ok := obj[path]; ok {
		return v
	}
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		if inner, ok := obj[path[:i]].(map[string]any); ok {
			if v := jsonPath(inner, path[i+1:]); v != nil {
				return v
			}
		}
	}
	return nil
}

// checkColumn checks one column of a row an export carries.
func checkColumn(key string, v *commonpb.AnyValue, rule attrRule) error {
	if rule.isColumn {
		if err := checkKind(v, rule.column); err != nil {
			return fmt.Errorf("%s: %w", excerpt(key), err)
		}
	}
	if err := checkEnum(rule.enum, v); err != nil {
		return fmt.Errorf("%s: %w", excerpt(key), err)
	}
	return nil
}

// enumAttrs are the attributes and row columns of an export stored in an ENUM column of
// tables.sql ("table.column"), which holds no other value: one is checked against it, so
// that a value outside it is refused, naming it, rather than failing the load.
var enumAttrs = map[string]string{
	"mayday.failure_class": "spans.failure_class",
	"from_state":           "transitions.from_state", "to_state": "transitions.to_state",
	"failure_class": "transitions.failure_class", "action": "transitions.action",
	"decided_by": "transitions.decided_by", "outcome": "executions.outcome",
}

// checkEnum refuses a string value of an attribute of enumAttrs that its column col
// ("table.column", "" for none) does not hold. (A value of another type is read as "",
// which every such column holds.)
func checkEnum(col string, v *commonpb.AnyValue) error {
	if col == "" {
		return nil
	}
	s, ok := v.GetValue().(*commonpb.AnyValue_StringValue)
	if !ok {
		return nil
	}
	members := storedEnums()[col]
	if slices.Contains(members, s.StringValue) {
		return nil
	}
	return fmt.Errorf("%s: want one of %s", excerpt(s.StringValue), strings.Join(slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == "" }), ", "))
}

// checkKind checks v against kind k. A value of another type than the kind's is left to
// the import, which reads it as zero or empty: only a value that would be read wrongly is
// refused.
func checkKind(v *commonpb.AnyValue, k valueKind) error {
	switch k {
	case kindCount, kindCount32, kindSeconds, kindNumber, kindTime:
		return checkNumber(v, k)
	case kindSeed:
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_IntValue:
			if x.IntValue < 0 {
				return fmt.Errorf("%d: want a seed from 0 to 18446744073709551615", x.IntValue)
			}
		case *commonpb.AnyValue_StringValue:
			if _, err := strconv.ParseUint(x.StringValue, 10, 64); err != nil {
				return fmt.Errorf("%s: want a seed from 0 to 18446744073709551615", excerpt(x.StringValue))
			}
		}
		return nil
	}
	s, ok := v.GetValue().(*commonpb.AnyValue_StringValue)
	if !ok {
		return nil
	}
	t := s.StringValue
	var bad string
	switch k {
	case kindRunID:
		if err := CheckRunID(t); err != nil {
			return fmt.Errorf("%s: a run id must be letters, digits, '.', '_' and '-', starting with a letter or digit (as --run-id)", excerpt(t))
		}
	case kindName:
		if len(t) > 200 || !utf8.ValidString(t) || strings.ContainsFunc(t, unicode.IsControl) {
			bad = "printable text of at most 200 bytes"
		}
	case kindHex:
		if !hexShape.MatchString(t) {
			bad = "lower-case hex digits"
		}
	case kindJSON:
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &obj) != nil {
			bad = "a JSON object"
		}
	case kindOpKey:
		if !opKeyShape.MatchString(t) {
			bad = "<investigation>/<step>/<revision>"
		}
	case kindOperation:
		if maydayRole(t) == roleOther {
			bad = "one of mayday's operations (invoke_agent, plan, execute_tool, human_review, supervise, validate, inspect, takeover)"
		}
	case kindStatus:
		if !slices.Contains([]record.Status{record.StatusOK, record.StatusError, record.StatusTimeout, record.StatusBlocked,
			record.StatusInvalid, record.StatusUnset}, record.Status(t)) {
			bad = "ok, error, timeout, blocked, invalid or unset"
		}
	case kindRunStatus:
		if t != "complete" && t != "partial" {
			bad = "complete or partial"
		}
	case kindID:
		if !faultIDShape.MatchString(t) {
			bad = "letters, digits, '.', '_' and '-'"
		}
	}
	if bad != "" {
		return fmt.Errorf("%s: want %s", excerpt(t), bad)
	}
	return nil
}

// checkNumber checks a numeric value of kind k: finite, and for a count a whole number in
// range. A string is checked when it reads as a number (the import reads "120" as 120).
func checkNumber(v *commonpb.AnyValue, k valueKind) error {
	// The text of a number is made only for the error: most values fit.
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_IntValue:
		if !intFits(x.IntValue, k) {
			return wantErr(strconv.FormatInt(x.IntValue, 10), k)
		}
	case *commonpb.AnyValue_DoubleValue:
		if !floatFits(x.DoubleValue, k) {
			return wantErr(strconv.FormatFloat(x.DoubleValue, 'g', -1, 64), k)
		}
	case *commonpb.AnyValue_StringValue:
		t := strings.TrimSpace(x.StringValue)
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			if !intFits(i, k) {
				return wantErr(excerpt(x.StringValue), k)
			}
			return nil
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			if !floatFits(f, k) {
				return wantErr(excerpt(x.StringValue), k)
			}
			return nil
		}
		if _, err := strconv.ParseInt(t, 10, 64); errors.Is(err, strconv.ErrRange) {
			return wantErr(excerpt(x.StringValue), k) // past any float: +Inf fits no kind
		}
	}
	return nil // not a number: the import does not read it as one
}

// wantErr is the error of a number, written text, that does not fit kind k.
func wantErr(text string, k valueKind) error { return fmt.Errorf("%s: want %s", text, wantOf(k)) }

// wantOf says what a number of kind k must be.
func wantOf(k valueKind) string {
	switch k {
	case kindCount:
		return "a whole count from 0 to 2^53"
	case kindCount32:
		return "a whole number from 0 to 2^31-1"
	case kindSeconds:
		return "a finite number of seconds from 0 to 2^53"
	case kindTime:
		return fmt.Sprintf("Unix nanoseconds from %d to %d", minTraceTime.Year(), maxTraceTime.Year()-1)
	}
	return "a finite number"
}

// intFits reports whether the integer i is a number of kind k.
func intFits(i int64, k valueKind) bool {
	switch k {
	case kindCount, kindSeconds:
		return i >= 0 && i <= maxCount
	case kindCount32:
		return i >= 0 && i <= math.MaxInt32
	case kindTime:
		return i >= minTraceTime.UnixNano() && i < maxTraceTime.UnixNano()
	}
	return true
}

// floatFits reports whether f is a number of kind k: finite, and in its range.
func floatFits(f float64, k valueKind) bool {
	ok := !math.IsNaN(f) && !math.IsInf(f, 0)
	switch k {
	case kindCount:
		ok = ok && f >= 0 && f <= maxCount && f == math.Trunc(f)
	case kindCount32:
		ok = ok && f >= 0 && f <= math.MaxInt32 && f == math.Trunc(f)
	case kindSeconds:
		ok = ok && f >= 0 && f <= maxCount
	case kindTime:
		ok = ok && f >= float64(minTraceTime.UnixNano()) && f < float64(maxTraceTime.UnixNano())
	}
	return ok
}

// textSize bounds from above the length of the value as the import stores it (anyText):
// a string is itself; an array or map quotes each element (strconv.Quote: at most 4 bytes
// for one, \xNN, and 2 for the quotes), and quoting text that was quoted before at most
// doubles it (only '"' and '\' are escaped again), so a value nested n deep grows up to
// 2^n times: that is what the bound catches.
func textSize(v *commonpb.AnyValue) float64 {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return float64(len(x.StringValue))
	case *commonpb.AnyValue_BytesValue:
		return float64(len(x.BytesValue)*4/3 + 4)
	case *commonpb.AnyValue_ArrayValue:
		n := 2.0
		for _, e := range x.ArrayValue.GetValues() {
			n += quotedSize(e) + 1
		}
		return n
	case *commonpb.AnyValue_KvlistValue:
		n := 2.0
		for _, kv := range x.KvlistValue.GetValues() {
			n += float64(4*len(kv.Key)+2) + 1 + quotedSize(kv.Value) + 1
		}
		return n
	}
	return 32 // a number or a bool
}

// quotedSize bounds the length of strconv.Quote(anyText(v)).
func quotedSize(v *commonpb.AnyValue) float64 {
	switch v.GetValue().(type) {
	case *commonpb.AnyValue_ArrayValue, *commonpb.AnyValue_KvlistValue:
		return 2*textSize(v) + 2
	}
	return 4*textSize(v) + 2
}

// bytesText is a bytes attribute as text: the bytes themselves when they are UTF-8 text
// without control characters other than tab and line breaks (so that a key held as bytes
// is text the redactor recognises), else their standard base64.
func bytesText(b []byte) string {
	if utf8.Valid(b) && !slices.ContainsFunc([]rune(string(b)), func(r rune) bool {
		return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
	}) {
		return string(b)
	}
	return base64.StdEncoding.EncodeToString(b)
}
