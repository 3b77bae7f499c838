package analysis

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// fastOTLPJSONIn decodes one OTLP/JSON request (ids in hex) straight into the protobuf
// types, into s (whose text is b, or a copy of it), which it returns: in one pass and
// without reflection, where protojson, after the rewrite of ids it needs, costs about ten
// times as much. It reads what protojson reads (either spelling of a field's name, enums
// as numbers or names, 64-bit integers as numbers or strings, null for a default) and gives
// up (ok false) on anything else: a syntax error, an unknown field, a field sent twice, a
// value of the wrong type, invalid UTF-8. The caller then decodes with protojson, which
// says precisely what is wrong, so this path never changes what is accepted or the message
// of a refusal.
func fastOTLPJSONIn(b []byte, s slabs, reading eventReading) (req *coltracepb.ExportTraceServiceRequest, _ *slabs, ok bool) {
	d := &jdec{b: b, slabs: s, reading: reading}
	req = &coltracepb.ExportTraceServiceRequest{}
	if !d.objectB(func(key []byte) bool {
		switch string(key) {
		case "resourceSpans", "resource_spans":
			return d.array(func() bool {
				rs := &tracepb.ResourceSpans{}
				req.ResourceSpans = append(req.ResourceSpans, rs)
				return d.resourceSpans(rs)
			})
		}
		return false
	}) {
		return nil, &d.slabs, false
	}
	d.ws()
	return req, &d.slabs, d.i == len(d.b)
}

// jdec is a cursor over one JSON value.
type jdec struct {
	b       []byte
	i       int
	buf     []byte       // a string with escapes, unescaped (then copied to the slabs' text)
	depth   int          // AnyValues nested: past maxFastDepth, protojson (which bounds recursion) decides
	reading eventReading // which span events are kept
	plain   bool         // the spans being read are plain spans: only their readEvent events are kept
	slabs                // what the request is decoded into
}

// maxFastDepth bounds the recursion of anyValue: a hostile line of AnyValues nested
// millions deep would otherwise overflow the stack.
const maxFastDepth = 64

func (d *jdec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// null consumes a null, reporting whether there was one.
func (d *jdec) null() bool {
	d.ws()
	if d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// object reads an object (or null), calling member for each key with the cursor on its
// value; member consumes the value and reports whether it could.
func (d *jdec) object(member func(key string) bool) bool {
	return d.objectB(func(key []byte) bool { return member(string(key)) })
}

// objectB is object with the key as bytes, valid only during the call (no allocation for
// the switch on it).
func (d *jdec) objectB(member func(key []byte) bool) bool {
	if d.null() {
		return true
	}
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return false
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return true
	}
	// The members read so far, by their name in one spelling: protojson refuses a field
	// sent twice, under either of its names, so the decoder gives up on it too.
	var seen [24]uint64
	n := 0
	for {
		d.ws()
		key, ok := d.keyBytes()
		if !ok {
			return false
		}
		h := fieldName(key)
		if slices.Contains(seen[:n], h) || n == len(seen) {
			return false // a member twice (or a hash shared by two: protojson decides), or too many
		}
		seen[n], n = h, n+1
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return false
		}
		d.i++
		d.ws()
		if !member(key) {
			return false
		}
		d.ws()
		if d.i >= len(d.b) {
			return false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// fieldName is a hash (FNV-1a) of a member's name with its underscores left out and its
// letters lower-cased: the same for a field's two JSON names ("traceId", "trace_id").
func fieldName(key []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range key {
		if c == '_' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// array reads an array (or null), calling elem with the cursor on each element.
func (d *jdec) array(elem func() bool) bool {
	if d.null() {
		return true
	}
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return false
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return true
	}
	for {
		d.ws()
		if !elem() {
			return false
		}
		d.ws()
		if d.i >= len(d.b) {
			return false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// keyBytes reads a member name without allocating when it has no escapes.
func (d *jdec) keyBytes() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	var high byte // the bits of every byte read: a member name is almost always ASCII
	for j := d.i + 1; j < len(d.b); j++ {
		c := d.b[j]
		high |= c
		switch {
		case c == '"':
			k := d.b[d.i+1 : j]
			d.i = j + 1
			return k, high < utf8.RuneSelf || utf8.Valid(k)
		case c == '\\':
			s, ok := d.escaped(d.i + 1)
			return []byte(s), ok
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string, unescaping it; it refuses invalid UTF-8 as protojson does.
func (d *jdec) str() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	j := start
	var high byte // the bits of every byte read: only text past ASCII is checked as UTF-8
	for j < len(d.b) && !jsonSpecial[d.b[j]] {
		high |= d.b[j]
		j++
	}
	if j >= len(d.b) {
		return "", false
	}
	switch d.b[j] {
	case '"':
		s := d.b[start:j]
		d.i = j + 1
		if high >= utf8.RuneSelf && !utf8.Valid(s) {
			return "", false
		}
		return d.sub(s), true
	case '\\':
		return d.escaped(start)
	}
	return "", false // a control byte
}

// escaped reads a string with escapes, from start (just after the opening quote).
func (d *jdec) escaped(start int) (string, bool) {
	out := d.buf[:0]
	j := start
	for j < len(d.b) {
		// The run of plain bytes up to the next quote, backslash or control byte is
		// copied at once: values can be whole prompts, JSON text within JSON text.
		k := j
		for k < len(d.b) && !jsonSpecial[d.b[k]] {
			k++
		}
		out = append(out, d.b[j:k]...)
		if j = k; j >= len(d.b) {
			break
		}
		c := d.b[j]
		switch {
		case c == '"':
			d.i = j + 1
			d.buf = out
			if !utf8.Valid(out) {
				return "", false
			}
			return d.copyText(out), true
		case c < 0x20:
			return "", false
		}
		if j+1 >= len(d.b) { // c is a backslash
			return "", false
		}
		switch e := d.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := d.hex4(j + 2)
			if n < 0 {
				return "", false
			}
			j += 4
			if utf16.IsSurrogate(r) {
				if j+7 < len(d.b) && d.b[j+2] == '\\' && d.b[j+3] == 'u' {
					if r2, n2 := d.hex4(j + 4); n2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							j += 6
							break
						}
					}
				}
				return "", false
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// jsonSpecial holds the bytes that end a run of plain bytes in a JSON string: the quote
// that ends it, the backslash that begins an escape, and the control bytes it may not hold.
var jsonSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (d *jdec) hex4(at int) (rune, int) {
	if at+4 > len(d.b) {
		return 0, -1
	}
	n, err := strconv.ParseUint(string(d.b[at:at+4]), 16, 16)
	if err != nil {
		return 0, -1
	}
	return rune(n), 4
}

// number returns the text of a JSON number, or of a string holding one (protojson's form
// of 64-bit integers), without consuming anything else.
func (d *jdec) number() (string, bool) {
	var t string
	if d.i < len(d.b) && d.b[d.i] == '"' {
		var ok bool
		if t, ok = d.str(); !ok {
			return "", false
		}
	} else {
		start := d.i
		for d.i < len(d.b) {
			c := d.b[d.i]
			if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				d.i++
				continue
			}
			break
		}
		t = string(d.b[start:d.i])
	}
	if len(t) == 0 || t[0] == '+' || len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '9' ||
		len(t) > 2 && t[0] == '-' && t[1] == '0' && t[2] >= '0' && t[2] <= '9' {
		return "", false // not a JSON number
	}
	return t, true
}

func (d *jdec) int64v() (int64, bool) {
	if d.null() {
		return 0, true
	}
	t, ok := d.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	return n, err == nil
}

func (d *jdec) uint64v() (uint64, bool) {
	if d.null() {
		return 0, true
	}
	t, ok := d.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(t, 10, 64)
	return n, err == nil
}

func (d *jdec) uint32v() (uint32, bool) {
	n, ok := d.uint64v()
	return uint32(n), ok && n <= math.MaxUint32
}

func (d *jdec) float64v() (float64, bool) {
	if d.null() {
		return 0, true
	}
	if d.i < len(d.b) && d.b[d.i] == '"' {
		s, ok := d.str()
		switch s {
		case "NaN":
			return math.NaN(), ok
		case "Infinity":
			return math.Inf(1), ok
		case "-Infinity":
			return math.Inf(-1), ok
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, ok && err == nil
	}
	t, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}

func (d *jdec) boolv() (bool, bool) {
	if d.null() {
		return false, true
	}
	switch {
	case d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, true
	case d.i+5 <= len(d.b) && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

func (d *jdec) strv(dst *string) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	*dst = s
	return ok
}

// id reads a trace or span id: hex under its OTLP/JSON name, base64 (protojson's bytes)
// under its protobuf name, as the protojson path reads them.
func (d *jdec) idAs(key []byte, dst *[]byte) bool {
	if bytes.IndexByte(key, '_') >= 0 {
		if d.null() {
			return true
		}
		s, ok := d.str()
		b, err := decodeBase64(s)
		*dst = b
		return ok && err == nil
	}
	return d.id(dst)
}

// id reads a trace or span id: hex, as OTLP/JSON writes it, or base64 (base64ID).
func (d *jdec) id(dst *[]byte) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	if !ok {
		return false
	}
	if s == "" {
		return true
	}
	if raw, ok := base64ID(s); ok {
		*dst = append(d.idBytes(len(raw))[:0], raw...)
		return true
	}
	if len(s)%2 != 0 {
		return false
	}
	b := d.idBytes(len(s) / 2)
	_, err := hex.Decode(b, []byte(s))
	*dst = b
	return err == nil
}

// enum reads an enum as its number or its name.
func (d *jdec) enum(names map[string]int32) (int32, bool) {
	if d.null() {
		return 0, true
	}
	if d.i < len(d.b) && d.b[d.i] == '"' {
		s, ok := d.str()
		n, known := names[s]
		return n, ok && known
	}
	n, ok := d.int64v()
	return int32(n), ok && n >= math.MinInt32 && n <= math.MaxInt32
}

func (d *jdec) resourceSpans(rs *tracepb.ResourceSpans) bool {
	d.plain = d.reading.plain(nil, false)
	return d.objectB(func(key []byte) bool {
		switch string(key) {
		case "resource":
			rs.Resource = &resourcepb.Resource{}
			defer func() { d.plain = d.reading.plain(rs.Resource.Attributes, true) }()
			return d.objectB(func(key []byte) bool {
				switch string(key) {
				case "attributes":
					return d.keyValues(&rs.Resource.Attributes)
				case "droppedAttributesCount", "dropped_attributes_count":
					n, ok := d.uint32v()
					rs.Resource.DroppedAttributesCount = n
					return ok
				}
				return false
			})
		case "scopeSpans", "scope_spans":
			return d.array(func() bool {
				ss := &tracepb.ScopeSpans{}
				rs.ScopeSpans = append(rs.ScopeSpans, ss)
				return d.scopeSpans(ss)
			})
		case "schemaUrl", "schema_url":
			return d.strv(&rs.SchemaUrl)
		}
		return false
	})
}

func (d *jdec) scopeSpans(ss *tracepb.ScopeSpans) bool {
	return d.objectB(func(key []byte) bool {
		switch string(key) {
		case "scope":
			ss.Scope = &commonpb.InstrumentationScope{}
			return d.objectB(func(key []byte) bool {
				switch string(key) {
				case "name":
					return d.strv(&ss.Scope.Name)
				case "version":
					return d.strv(&ss.Scope.Version)
				case "attributes":
					return d.keyValues(&ss.Scope.Attributes)
				case "droppedAttributesCount", "dropped_attributes_count":
					n, ok := d.uint32v()
					ss.Scope.DroppedAttributesCount = n
					return ok
				}
				return false
			})
		case "spans":
			return d.array(func() bool {
				sp := take(&d.slabs, &d.spans)
				ss.Spans = append(ss.Spans, sp)
				return d.span(sp)
			})
		case "schemaUrl", "schema_url":
			return d.strv(&ss.SchemaUrl)
		}
		return false
	})
}

func (d *jdec) span(sp *tracepb.Span) bool {
	return d.objectB(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "traceId", "trace_id":
			return d.idAs(key, &sp.TraceId)
		case "spanId", "span_id":
			return d.idAs(key, &sp.SpanId)
		case "parentSpanId", "parent_span_id":
			return d.idAs(key, &sp.ParentSpanId)
		case "traceState", "trace_state":
			return d.strv(&sp.TraceState)
		case "flags":
			sp.Flags, ok = d.uint32v()
		case "name":
			return d.strv(&sp.Name)
		case "kind":
			var k int32
			k, ok = d.enum(tracepb.Span_SpanKind_value)
			sp.Kind = tracepb.Span_SpanKind(k)
		case "startTimeUnixNano", "start_time_unix_nano":
			sp.StartTimeUnixNano, ok = d.uint64v()
		case "endTimeUnixNano", "end_time_unix_nano":
			sp.EndTimeUnixNano, ok = d.uint64v()
		case "attributes":
			return d.keyValues(&sp.Attributes)
		case "droppedAttributesCount", "dropped_attributes_count":
			sp.DroppedAttributesCount, ok = d.uint32v()
		case "events":
			return d.array(func() bool {
				m := d.mark()
				e := take(&d.slabs, &d.events)
				if !d.event(e) {
					return false
				}
				if d.plain && !readsEvent(false, e.Name) {
					d.rewind(m) // checked as decoded, and left out
				} else {
					sp.Events = append(sp.Events, e)
				}
				return true
			})
		case "droppedEventsCount", "dropped_events_count":
			sp.DroppedEventsCount, ok = d.uint32v()
		case "links":
			return d.array(func() bool {
				l := take(&d.slabs, &d.links)
				sp.Links = append(sp.Links, l)
				return d.link(l)
			})
		case "droppedLinksCount", "dropped_links_count":
			sp.DroppedLinksCount, ok = d.uint32v()
		case "status":
			sp.Status = &tracepb.Status{}
			return d.objectB(func(key []byte) bool {
				switch string(key) {
				case "message":
					return d.strv(&sp.Status.Message)
				case "code":
					c, ok := d.enum(tracepb.Status_StatusCode_value)
					sp.Status.Code = tracepb.Status_StatusCode(c)
					return ok
				}
				return false
			})
		}
		return ok
	})
}

func (d *jdec) event(e *tracepb.Span_Event) bool {
	return d.objectB(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "timeUnixNano", "time_unix_nano":
			e.TimeUnixNano, ok = d.uint64v()
		case "name":
			return d.strv(&e.Name)
		case "attributes":
			return d.keyValues(&e.Attributes)
		case "droppedAttributesCount", "dropped_attributes_count":
			e.DroppedAttributesCount, ok = d.uint32v()
		}
		return ok
	})
}

func (d *jdec) link(l *tracepb.Span_Link) bool {
	return d.objectB(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "traceId", "trace_id":
			return d.idAs(key, &l.TraceId)
		case "spanId", "span_id":
			return d.idAs(key, &l.SpanId)
		case "traceState", "trace_state":
			return d.strv(&l.TraceState)
		case "attributes":
			return d.keyValues(&l.Attributes)
		case "droppedAttributesCount", "dropped_attributes_count":
			l.DroppedAttributesCount, ok = d.uint32v()
		case "flags":
			l.Flags, ok = d.uint32v()
		}
		return ok
	})
}

// keyValues reads a list of attributes; a list sent twice is read as one.
func (d *jdec) keyValues(dst *[]*commonpb.KeyValue) bool {
	list := d.openList()
	ok := d.array(func() bool {
		kv := take(&d.slabs, &d.kvs)
		d.appendAttr(kv)
		return d.keyValue(kv)
	})
	if kvs := d.closeList(list); *dst == nil {
		*dst = kvs
	} else {
		*dst = append(*dst, kvs...)
	}
	return ok
}

func (d *jdec) keyValue(kv *commonpb.KeyValue) bool {
	if d.compactKeyValue(kv) {
		return true
	}
	return d.objectB(func(key []byte) bool {
		switch string(key) {
		case "key":
			return d.strv(&kv.Key)
		case "value":
			if d.null() {
				return true
			}
			kv.Value = take(&d.slabs, &d.avs)
			return d.anyValue(kv.Value)
		}
		return false
	})
}

// The members of an attribute as exporters write it, compactly: a key and a string,
// integer, double or boolean value.
var (
	jsonKeyOpen   = []byte(`{"key":`)
	jsonValueOpen = []byte(`,"value":{"`)
	jsonStringVal = []byte(`stringValue":`)
	jsonIntVal    = []byte(`intValue":`)
	jsonDoubleVal = []byte(`doubleValue":`)
	jsonBoolVal   = []byte(`boolValue":`)
	jsonTwoClose  = []byte(`}}`)
)

// compactKeyValue reads an attribute written as exporters write nearly every one, with no
// space: {"key":"k","value":{"stringValue":"v"}}, {"key":"k","value":{"intValue":n}} (n a
// number or a string), or the same with doubleValue or boolValue, into kv as keyValue
// would. Anything else leaves the cursor and kv as they were and reports false, for
// keyValue's general reading (member order, spacing, other kinds, null).
func (d *jdec) compactKeyValue(kv *commonpb.KeyValue) bool {
	start := d.i
	if !d.skip(jsonKeyOpen) {
		return false
	}
	if key, ok := d.str(); ok && d.skip(jsonValueOpen) && d.i < len(d.b) {
		a := take(&d.slabs, &d.avs) // left unused when the form does not match
		read := false
		switch d.b[d.i] { // the kind's first letter, then the kind
		case 's':
			read = d.skip(jsonStringVal) && kindValue(a, d.str, d.setString)
		case 'i':
			read = d.skip(jsonIntVal) && kindValue(a, d.int64v, d.setInt)
		case 'd':
			read = d.skip(jsonDoubleVal) && kindValue(a, d.float64v, d.setDouble)
		case 'b':
			read = d.skip(jsonBoolVal) && kindValue(a, d.boolv, d.setBool)
		}
		// The value's object and the attribute's close together. A kind set to null is no
		// kind (anyValue), which the general reading makes: of the values read here, only
		// null ends in an 'l'.
		if read && d.b[d.i-1] != 'l' && bytes.HasPrefix(d.b[d.i:], jsonTwoClose) {
			d.i += len(jsonTwoClose)
			kv.Key, kv.Value = key, a
			return true
		}
	}
	d.i = start
	return false
}

// skip moves the cursor past prefix when the text there begins with it, and reports whether
// it did.
func (d *jdec) skip(prefix []byte) bool {
	if !bytes.HasPrefix(d.b[d.i:], prefix) {
		return false
	}
	d.i += len(prefix)
	return true
}

// kindValue reads a value with read (d.str; d.int64v: a number, or a string of one;
// d.float64v: also NaN and the infinities as strings; d.boolv) and sets it as a's with set.
func kindValue[T any](a *commonpb.AnyValue, read func() (T, bool), set func(*commonpb.AnyValue, T)) bool {
	x, ok := read()
	set(a, x)
	return ok
}

// anyValue reads an AnyValue: one of its kinds, or none ({}).
func (d *jdec) anyValue(v *commonpb.AnyValue) bool {
	if d.depth++; d.depth > maxFastDepth {
		return false
	}
	defer func() { d.depth-- }()
	return d.objectB(func(key []byte) bool {
		if v.Value != nil {
			return false // two kinds in one value: protojson refuses it
		}
		if d.null() {
			return true // a kind set to null is no kind
		}
		switch string(key) {
		case "stringValue", "string_value":
			return kindValue(v, d.str, d.setString)
		case "boolValue", "bool_value":
			return kindValue(v, d.boolv, d.setBool)
		case "intValue", "int_value":
			return kindValue(v, d.int64v, d.setInt)
		case "doubleValue", "double_value":
			return kindValue(v, d.float64v, d.setDouble)
		case "bytesValue", "bytes_value":
			s, ok := d.str()
			b, err := decodeBase64(s)
			v.Value = &commonpb.AnyValue_BytesValue{BytesValue: b}
			return ok && err == nil
		case "arrayValue", "array_value":
			arr := &commonpb.ArrayValue{}
			v.Value = &commonpb.AnyValue_ArrayValue{ArrayValue: arr}
			return d.objectB(func(key []byte) bool {
				if string(key) != "values" {
					return false
				}
				return d.array(func() bool {
					e := &commonpb.AnyValue{}
					arr.Values = append(arr.Values, e)
					return d.anyValue(e)
				})
			})
		case "kvlistValue", "kvlist_value":
			kvl := &commonpb.KeyValueList{}
			v.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: kvl}
			return d.objectB(func(key []byte) bool {
				if string(key) != "values" {
					return false
				}
				return d.keyValues(&kvl.Values)
			})
		}
		return false
	})
}

// decodeBase64 reads bytes as protojson does: standard or URL alphabet, padded or not.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return base64.StdEncoding.DecodeString(s)
}
