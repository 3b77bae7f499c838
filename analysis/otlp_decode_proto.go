package analysis

import (
	"math"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// unmarshalRequest decodes one OTLP protobuf request as proto.Unmarshal does. The generic
// unmarshal was a quarter of the CPU of importing a protobuf export (2.1 s of 128,787
// spans); fastOTLPProtoIn decodes the fields OTLP defines directly, and anything it does not
// read exactly as proto.Unmarshal would (an unknown field, a field of the wrong wire type, a
// singular message sent twice, which proto merges, invalid UTF-8, nesting past
// maxFastDepth) is left to proto.Unmarshal, so what is accepted and every error are its.
// TestFastProtoMatchesUnmarshal and FuzzFastProto hold the two equal.
func unmarshalRequest(b []byte, req *coltracepb.ExportTraceServiceRequest) error {
	_, err := unmarshalRequestIn(b, req, newSlabsOver(b), allEvents)
	return err
}

// unmarshalRequestIn is unmarshalRequest decoding into s (whose text is b) and keeping the
// events that reading says. It returns the slabs req was decoded into, or nil (s given
// back, recycle) when proto.Unmarshal decoded it.
func unmarshalRequestIn(b []byte, req *coltracepb.ExportTraceServiceRequest, s slabs, reading eventReading) (*slabs, error) {
	ok, used := fastOTLPProtoIn(b, req, s, reading)
	if ok {
		return used, nil
	}
	used.recycle()
	proto.Reset(req)
	return nil, proto.Unmarshal(b, req)
}

// fastOTLPProtoIn decodes b into req, into s (whose text is b), which it returns, keeping
// the events that reading says, and reports whether it could, exactly. req's strings and
// ids are parts of b (newSlabsOver): b must not change while req is in use. Every caller
// reads each request into a buffer of its own, which nothing writes to after.
func fastOTLPProtoIn(b []byte, req *coltracepb.ExportTraceServiceRequest, s slabs, reading eventReading) (bool, *slabs) {
	p := &pdec{slabs: s, reading: reading}
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		if num != 1 || typ != protowire.BytesType {
			return false
		}
		rs := &tracepb.ResourceSpans{}
		req.ResourceSpans = append(req.ResourceSpans, rs)
		return p.resourceSpans(v, rs)
	}), &p.slabs
}

// pdec decodes nested messages; depth counts the AnyValues open. Its objects and strings
// come from its slabs.
type pdec struct {
	depth   int
	reading eventReading // which span events are kept
	plain   bool         // the spans being read are plain spans: only their readEvent events are kept
	slabs
}

// str is v, a field of the request, as a proto3 string: valid UTF-8 only (proto.Unmarshal
// refuses the rest).
func (p *pdec) str(v []byte) (string, bool) {
	if !utf8.Valid(v) {
		return "", false
	}
	return p.sub(v), true
}

// id is v, a field of the request, as a bytes field: nil when empty, as proto.Unmarshal
// leaves it.
func (p *pdec) id(v []byte) []byte {
	if len(v) == 0 {
		return nil
	}
	b := p.idBytes(len(v))
	copy(b, v)
	return b
}

// fields calls fn with each field of the message b: its number and wire type, the bytes of
// a length-delimited field, the value of a varint or fixed one. A malformed field stops it.
func (p *pdec) fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		default:
			return false
		}
		if n < 0 || !fn(num, typ, v, x) {
			return false
		}
		b = b[n:]
	}
	return true
}

func (p *pdec) resourceSpans(b []byte, rs *tracepb.ResourceSpans) bool {
	p.plain = p.reading.plain(nil, false)
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		if typ != protowire.BytesType {
			return false
		}
		switch num {
		case 1:
			if rs.Resource != nil {
				return false
			}
			rs.Resource = &resourcepb.Resource{}
			ok := p.resource(v, rs.Resource)
			p.plain = p.reading.plain(rs.Resource.Attributes, true)
			return ok
		case 2:
			ss := &tracepb.ScopeSpans{}
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
			return p.scopeSpans(v, ss)
		case 3:
			s, ok := p.str(v)
			rs.SchemaUrl = s
			return ok
		}
		return false
	})
}

func (p *pdec) resource(b []byte, r *resourcepb.Resource) bool {
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		switch {
		case num == 1 && typ == protowire.BytesType:
			return p.appendKV(v, &r.Attributes)
		case num == 2 && typ == protowire.VarintType:
			r.DroppedAttributesCount = uint32(x)
			return true
		}
		return false
	})
}

func (p *pdec) scopeSpans(b []byte, ss *tracepb.ScopeSpans) bool {
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		if typ != protowire.BytesType {
			return false
		}
		switch num {
		case 1:
			if ss.Scope != nil {
				return false
			}
			ss.Scope = &commonpb.InstrumentationScope{}
			return p.scope(v, ss.Scope)
		case 2:
			s := take(&p.slabs, &p.spans)
			ss.Spans = append(ss.Spans, s)
			return p.span(v, s)
		case 3:
			s, ok := p.str(v)
			ss.SchemaUrl = s
			return ok
		}
		return false
	})
}

func (p *pdec) scope(b []byte, s *commonpb.InstrumentationScope) bool {
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		var ok bool
		switch {
		case num == 1 && typ == protowire.BytesType:
			s.Name, ok = p.str(v)
		case num == 2 && typ == protowire.BytesType:
			s.Version, ok = p.str(v)
		case num == 3 && typ == protowire.BytesType:
			ok = p.appendKV(v, &s.Attributes)
		case num == 4 && typ == protowire.VarintType:
			s.DroppedAttributesCount, ok = uint32(x), true
		}
		return ok
	})
}

func (p *pdec) span(b []byte, s *tracepb.Span) bool {
	list := p.openList()
	defer func() { s.Attributes = p.closeList(list) }()
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		ok := true
		switch {
		case typ == protowire.BytesType && num == 1:
			s.TraceId = p.id(v)
		case typ == protowire.BytesType && num == 2:
			s.SpanId = p.id(v)
		case typ == protowire.BytesType && num == 3:
			s.TraceState, ok = p.str(v)
		case typ == protowire.BytesType && num == 4:
			s.ParentSpanId = p.id(v)
		case typ == protowire.BytesType && num == 5:
			s.Name, ok = p.str(v)
		case typ == protowire.VarintType && num == 6:
			s.Kind = tracepb.Span_SpanKind(int32(x))
		case typ == protowire.Fixed64Type && num == 7:
			s.StartTimeUnixNano = x
		case typ == protowire.Fixed64Type && num == 8:
			s.EndTimeUnixNano = x
		case typ == protowire.BytesType && num == 9:
			var kv *commonpb.KeyValue
			kv, ok = p.keyValue(v)
			p.appendAttr(kv)
		case typ == protowire.VarintType && num == 10:
			s.DroppedAttributesCount = uint32(x)
		case typ == protowire.BytesType && num == 11:
			if p.plain {
				if read, ok := p.skimEvent(v); !ok || !read {
					return ok
				}
			}
			e := take(&p.slabs, &p.events)
			s.Events = append(s.Events, e)
			ok = p.event(v, e)
		case typ == protowire.VarintType && num == 12:
			s.DroppedEventsCount = uint32(x)
		case typ == protowire.BytesType && num == 13:
			l := take(&p.slabs, &p.links)
			s.Links = append(s.Links, l)
			ok = p.link(v, l)
		case typ == protowire.VarintType && num == 14:
			s.DroppedLinksCount = uint32(x)
		case typ == protowire.BytesType && num == 15:
			if s.Status != nil {
				return false
			}
			s.Status = &tracepb.Status{}
			ok = p.status(v, s.Status)
		case typ == protowire.Fixed32Type && num == 16:
			s.Flags = uint32(x)
		default:
			return false
		}
		return ok
	})
}

func (p *pdec) event(b []byte, e *tracepb.Span_Event) bool {
	list := p.openList()
	defer func() { e.Attributes = p.closeList(list) }()
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		var ok bool
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			e.TimeUnixNano, ok = x, true
		case num == 2 && typ == protowire.BytesType:
			e.Name, ok = p.str(v)
		case num == 3 && typ == protowire.BytesType:
			var kv *commonpb.KeyValue
			kv, ok = p.keyValue(v)
			p.appendAttr(kv)
		case num == 4 && typ == protowire.VarintType:
			e.DroppedAttributesCount, ok = uint32(x), true
		}
		return ok
	})
}

// skimEvent checks an event as event would decode it, without decoding it, and reports
// whether it is one a run of plain spans reads (named readEvent).
func (p *pdec) skimEvent(b []byte) (read, ok bool) {
	ok = p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		switch {
		case num == 1 && typ == protowire.Fixed64Type, num == 4 && typ == protowire.VarintType:
			return true
		case num == 2 && typ == protowire.BytesType:
			read = string(v) == readEvent || readEvents[string(v)] // readsEvent, without a string per event
			return utf8.Valid(v)
		case num == 3 && typ == protowire.BytesType:
			return p.skimKeyValue(v)
		}
		return false
	})
	return read, ok
}

// skimKeyValue checks a KeyValue as keyValue would decode it, without decoding it.
func (p *pdec) skimKeyValue(b []byte) bool {
	value := false
	for len(b) > 0 {
		num, v, rest, ok := lenField(b)
		if !ok {
			return false
		}
		b = rest
		switch {
		case num == 1 && !utf8.Valid(v), num == 2 && value, num != 1 && num != 2:
			return false
		case num == 2:
			value = true
			if !p.skimAnyValue(v) {
				return false
			}
		}
	}
	return true
}

// skimAnyValue checks an AnyValue as anyValue would decode it, without decoding it.
func (p *pdec) skimAnyValue(b []byte) bool {
	if p.depth++; p.depth > maxFastDepth {
		p.depth--
		return false
	}
	defer func() { p.depth-- }()
	var last protowire.Number // the oneof's member so far
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
		again := num == last
		last = num
		switch {
		case num == 1 && typ == protowire.BytesType:
			return utf8.Valid(v)
		case num == 2 && typ == protowire.VarintType, num == 3 && typ == protowire.VarintType,
			num == 4 && typ == protowire.Fixed64Type, num == 7 && typ == protowire.BytesType:
			return true
		case num == 5 && typ == protowire.BytesType && !again:
			return p.fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
				return num == 1 && typ == protowire.BytesType && p.skimAnyValue(v)
			})
		case num == 6 && typ == protowire.BytesType && !again:
			return p.fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
				return num == 1 && typ == protowire.BytesType && p.skimKeyValue(v)
			})
		}
		return false
	})
}

func (p *pdec) link(b []byte, l *tracepb.Span_Link) bool {
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		ok := true
		switch {
		case num == 1 && typ == protowire.BytesType:
			l.TraceId = p.id(v)
		case num == 2 && typ == protowire.BytesType:
			l.SpanId = p.id(v)
		case num == 3 && typ == protowire.BytesType:
			l.TraceState, ok = p.str(v)
		case num == 4 && typ == protowire.BytesType:
			ok = p.appendKV(v, &l.Attributes)
		case num == 5 && typ == protowire.VarintType:
			l.DroppedAttributesCount = uint32(x)
		case num == 6 && typ == protowire.Fixed32Type:
			l.Flags = uint32(x)
		default:
			return false
		}
		return ok
	})
}

func (p *pdec) status(b []byte, st *tracepb.Status) bool {
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		var ok bool
		switch {
		case num == 2 && typ == protowire.BytesType:
			st.Message, ok = p.str(v)
		case num == 3 && typ == protowire.VarintType:
			st.Code, ok = tracepb.Status_StatusCode(int32(x)), true
		}
		return ok
	})
}

// appendKV decodes a KeyValue and appends it to kvs.
func (p *pdec) appendKV(b []byte, kvs *[]*commonpb.KeyValue) bool {
	kv, ok := p.keyValue(b)
	*kvs = append(*kvs, kv)
	return ok
}

// keyValue decodes a KeyValue. Attributes are most of a request: its fields are read in
// a loop of their own, and a value of one string or one integer directly (scalarValue).
func (p *pdec) keyValue(b []byte) (*commonpb.KeyValue, bool) {
	kv := take(&p.slabs, &p.kvs)
	for len(b) > 0 {
		num, v, rest, ok := lenField(b)
		if !ok {
			return kv, false
		}
		b = rest
		switch num {
		case 1:
			k, ok := p.str(v)
			kv.Key = k
			if !ok {
				return kv, false
			}
		case 2:
			if kv.Value != nil {
				return kv, false
			}
			kv.Value = take(&p.slabs, &p.avs)
			if !p.scalarValue(v, kv.Value) && !p.anyValue(v, kv.Value) {
				return kv, false
			}
		default:
			return kv, false
		}
	}
	return kv, true
}

// lenField reads the first field of b, which must be LEN-typed (a KeyValue holds no other):
// its number, its value and the rest of b. Both readers of a KeyValue loop over its fields
// with it rather than through fields, whose closure costs more on the most frequent message.
func lenField(b []byte) (num protowire.Number, v, rest []byte, ok bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || typ != protowire.BytesType {
		return 0, nil, nil, false
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		return 0, nil, nil, false
	}
	return num, v, b[n+m:], true
}

// scalarValue decodes v into a when v is exactly one string field (valid UTF-8) or one
// integer field of an AnyValue, as anyValue would; anything else is left to anyValue.
func (p *pdec) scalarValue(v []byte, a *commonpb.AnyValue) bool {
	if len(v) < 2 {
		return false
	}
	switch v[0] {
	case 1<<3 | byte(protowire.BytesType): // string_value
		l, n := protowire.ConsumeVarint(v[1:])
		if n < 0 || uint64(len(v)-1-n) != l {
			return false
		}
		return p.stringValue(v[1+n:], a)
	case 3<<3 | byte(protowire.VarintType): // int_value
		x, n := protowire.ConsumeVarint(v[1:])
		if n < 0 || 1+n != len(v) {
			return false
		}
		p.setInt(a, int64(x))
		return true
	}
	return false
}

// anyValue decodes an AnyValue; its oneof takes the last value sent, as proto.Unmarshal's
// does (an array or list sent twice, which it would merge, is left to it).
func (p *pdec) anyValue(b []byte, a *commonpb.AnyValue) bool {
	if p.depth++; p.depth > maxFastDepth {
		return false
	}
	defer func() { p.depth-- }()
	return p.fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) bool {
		switch {
		case num == 1 && typ == protowire.BytesType:
			return p.stringValue(v, a)
		case num == 2 && typ == protowire.VarintType:
			p.setBool(a, x != 0)
		case num == 3 && typ == protowire.VarintType:
			p.setInt(a, int64(x))
		case num == 4 && typ == protowire.Fixed64Type:
			p.setDouble(a, math.Float64frombits(x))
		case num == 5 && typ == protowire.BytesType:
			if _, again := a.Value.(*commonpb.AnyValue_ArrayValue); again {
				return false
			}
			arr := &commonpb.ArrayValue{}
			a.Value = &commonpb.AnyValue_ArrayValue{ArrayValue: arr}
			return p.fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
				if num != 1 || typ != protowire.BytesType {
					return false
				}
				e := &commonpb.AnyValue{}
				arr.Values = append(arr.Values, e)
				return p.anyValue(v, e)
			})
		case num == 6 && typ == protowire.BytesType:
			if _, again := a.Value.(*commonpb.AnyValue_KvlistValue); again {
				return false
			}
			l := &commonpb.KeyValueList{}
			a.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: l}
			return p.fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) bool {
				if num != 1 || typ != protowire.BytesType {
					return false
				}
				return p.appendKV(v, &l.Values)
			})
		case num == 7 && typ == protowire.BytesType:
			a.Value = &commonpb.AnyValue_BytesValue{BytesValue: bytesOfValue(v)}
		default:
			return false
		}
		return true
	})
}

// stringValue sets v, a proto3 string (valid UTF-8 only), as the value of a.
func (p *pdec) stringValue(v []byte, a *commonpb.AnyValue) bool {
	t, ok := p.str(v)
	p.setString(a, t)
	return ok
}

// bytesOfValue is v as the bytes of a oneof: empty, not nil, when present and empty, as
// proto.Unmarshal sets a oneof's bytes.
func bytesOfValue(v []byte) []byte { return append([]byte{}, v...) }
