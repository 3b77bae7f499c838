//go:build duckdb_arrow

package analysis

import (
	"math"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf encoding of a span, written by hand as the JSON one is: the generic marshal
// (proto.Size, then MarshalAppend) took 5.2 s of the 18.7-20 s of CPU a protobuf export of
// research-fleet at 10,000 investigations cost. Fields are written in field-number order,
// scalars at their zero value left out and a oneof's value always written, as
// proto.Marshal does; TestSpanProtoMatchesMarshal holds the two equal. Each message's
// length prefix needs its size first: the size functions below walk what they measure
// once more, which costs far less than the generic marshal's reflection.

// appendSpanProto appends s as field num of its parent: tag, length, message.
func appendSpanProto(b []byte, num protowire.Number, s *tracepb.Span) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(spanSize(s)))
	b = appendLenField(b, 1, s.TraceId)
	b = appendLenField(b, 2, s.SpanId)
	b = appendLenField(b, 3, s.TraceState)
	b = appendLenField(b, 4, s.ParentSpanId)
	b = appendLenField(b, 5, s.Name)
	b = appendVarintField(b, 6, uint64(s.Kind))
	b = appendFixed64Field(b, 7, s.StartTimeUnixNano)
	b = appendFixed64Field(b, 8, s.EndTimeUnixNano)
	for _, kv := range s.Attributes {
		b = appendKVProto(b, 9, kv)
	}
	b = appendVarintField(b, 10, uint64(s.DroppedAttributesCount))
	for _, e := range s.Events {
		b = protowire.AppendTag(b, 11, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(eventSize(e)))
		b = appendFixed64Field(b, 1, e.TimeUnixNano)
		b = appendLenField(b, 2, e.Name)
		for _, kv := range e.Attributes {
			b = appendKVProto(b, 3, kv)
		}
		b = appendVarintField(b, 4, uint64(e.DroppedAttributesCount))
	}
	b = appendVarintField(b, 12, uint64(s.DroppedEventsCount))
	for _, l := range s.Links {
		b = protowire.AppendTag(b, 13, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(linkSize(l)))
		b = appendLenField(b, 1, l.TraceId)
		b = appendLenField(b, 2, l.SpanId)
		b = appendLenField(b, 3, l.TraceState)
		for _, kv := range l.Attributes {
			b = appendKVProto(b, 4, kv)
		}
		b = appendVarintField(b, 5, uint64(l.DroppedAttributesCount))
		b = appendFixed32Field(b, 6, l.Flags)
	}
	b = appendVarintField(b, 14, uint64(s.DroppedLinksCount))
	if st := s.Status; st != nil {
		b = protowire.AppendTag(b, 15, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(statusSize(st)))
		b = appendLenField(b, 2, st.Message)
		b = appendVarintField(b, 3, uint64(st.Code))
	}
	return appendFixed32Field(b, 16, s.Flags)
}

func spanSize(s *tracepb.Span) int {
	n := bytesFieldSize(1, len(s.TraceId)) + bytesFieldSize(2, len(s.SpanId)) + bytesFieldSize(3, len(s.TraceState)) +
		bytesFieldSize(4, len(s.ParentSpanId)) + bytesFieldSize(5, len(s.Name)) + varintFieldSize(6, uint64(s.Kind)) +
		fixed64FieldSize(7, s.StartTimeUnixNano) + fixed64FieldSize(8, s.EndTimeUnixNano) +
		varintFieldSize(10, uint64(s.DroppedAttributesCount)) + varintFieldSize(12, uint64(s.DroppedEventsCount)) +
		varintFieldSize(14, uint64(s.DroppedLinksCount)) + fixed32FieldSize(16, s.Flags)
	for _, kv := range s.Attributes {
		n += messageFieldSize(9, kvSize(kv))
	}
	for _, e := range s.Events {
		n += messageFieldSize(11, eventSize(e))
	}
	for _, l := range s.Links {
		n += messageFieldSize(13, linkSize(l))
	}
	if s.Status != nil {
		n += messageFieldSize(15, statusSize(s.Status))
	}
	return n
}

func eventSize(e *tracepb.Span_Event) int {
	n := fixed64FieldSize(1, e.TimeUnixNano) + bytesFieldSize(2, len(e.Name)) + varintFieldSize(4, uint64(e.DroppedAttributesCount))
	for _, kv := range e.Attributes {
		n += messageFieldSize(3, kvSize(kv))
	}
	return n
}

func linkSize(l *tracepb.Span_Link) int {
	n := bytesFieldSize(1, len(l.TraceId)) + bytesFieldSize(2, len(l.SpanId)) + bytesFieldSize(3, len(l.TraceState)) +
		varintFieldSize(5, uint64(l.DroppedAttributesCount)) + fixed32FieldSize(6, l.Flags)
	for _, kv := range l.Attributes {
		n += messageFieldSize(4, kvSize(kv))
	}
	return n
}

func statusSize(st *tracepb.Status) int {
	return bytesFieldSize(2, len(st.Message)) + varintFieldSize(3, uint64(st.Code))
}

// appendKVProto appends kv as field num: KeyValue{1: key, 2: value}.
func appendKVProto(b []byte, num protowire.Number, kv *commonpb.KeyValue) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(kvSize(kv)))
	b = appendLenField(b, 1, kv.Key)
	if kv.Value != nil {
		b = appendAnyProto(b, 2, kv.Value)
	}
	return b
}

func kvSize(kv *commonpb.KeyValue) int {
	n := bytesFieldSize(1, len(kv.Key))
	if kv.Value != nil {
		n += messageFieldSize(2, anySize(kv.Value))
	}
	return n
}

// appendAnyProto appends v as field num: AnyValue, whose oneof value is written even at its
// zero value (a false bool, an empty string).
func appendAnyProto(b []byte, num protowire.Number, v *commonpb.AnyValue) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(anySize(v)))
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(x.BoolValue))
	case *commonpb.AnyValue_IntValue:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(x.IntValue))
	case *commonpb.AnyValue_DoubleValue:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(x.DoubleValue))
	case *commonpb.AnyValue_ArrayValue:
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(arraySize(x.ArrayValue)))
		for _, e := range x.ArrayValue.GetValues() {
			b = appendAnyProto(b, 1, e)
		}
	case *commonpb.AnyValue_KvlistValue:
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(kvlistSize(x.KvlistValue)))
		for _, kv := range x.KvlistValue.GetValues() {
			b = appendKVProto(b, 1, kv)
		}
	case *commonpb.AnyValue_BytesValue:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		b = protowire.AppendBytes(b, x.BytesValue)
	}
	return b
}

func anySize(v *commonpb.AnyValue) int {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return protowire.SizeTag(1) + protowire.SizeBytes(len(x.StringValue))
	case *commonpb.AnyValue_BoolValue:
		return protowire.SizeTag(2) + 1
	case *commonpb.AnyValue_IntValue:
		return protowire.SizeTag(3) + protowire.SizeVarint(uint64(x.IntValue))
	case *commonpb.AnyValue_DoubleValue:
		return protowire.SizeTag(4) + 8
	case *commonpb.AnyValue_ArrayValue:
		return messageFieldSize(5, arraySize(x.ArrayValue))
	case *commonpb.AnyValue_KvlistValue:
		return messageFieldSize(6, kvlistSize(x.KvlistValue))
	case *commonpb.AnyValue_BytesValue:
		return protowire.SizeTag(7) + protowire.SizeBytes(len(x.BytesValue))
	}
	return 0
}

func arraySize(a *commonpb.ArrayValue) int {
	n := 0
	for _, e := range a.GetValues() {
		n += messageFieldSize(1, anySize(e))
	}
	return n
}

func kvlistSize(l *commonpb.KeyValueList) int {
	n := 0
	for _, kv := range l.GetValues() {
		n += messageFieldSize(1, kvSize(kv))
	}
	return n
}

// Fields of proto3 scalars, left out at their zero value.

// appendLenField appends a string or bytes field: tag, length, the bytes.
func appendLenField[T string | []byte](b []byte, num protowire.Number, v T) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64Field(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32Field(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func bytesFieldSize(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func varintFieldSize(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func fixed64FieldSize(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + 8
}

func fixed32FieldSize(num protowire.Number, v uint32) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + 4
}

// messageFieldSize is the size of a message of n bytes as field num, present even when empty.
func messageFieldSize(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}
