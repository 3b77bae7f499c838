//go:build duckdb_arrow

package analysis

import (
	"bytes"
	"math"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The hand-written encoding of a span is byte for byte what proto.Marshal writes, on spans
// that set every field of a span, an event, a link and a status, and every kind of value
// (zero values of a oneof, negative numbers, nested arrays and lists, bytes), and on an
// empty span.
func TestSpanProtoMatchesMarshal(t *testing.T) {
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	values := []*commonpb.AnyValue{
		str("text"), str(""),
		{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}, {Value: &commonpb.AnyValue_BoolValue{}},
		{Value: &commonpb.AnyValue_IntValue{IntValue: -7}}, {Value: &commonpb.AnyValue_IntValue{}},
		{Value: &commonpb.AnyValue_IntValue{IntValue: math.MaxInt64}},
		{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: -0.5}}, {Value: &commonpb.AnyValue_DoubleValue{}},
		{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.Inf(1)}},
		{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 2}}}, {Value: &commonpb.AnyValue_BytesValue{}},
		{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{str("a"), {}}}}},
		{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}},
		{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{Key: "k", Value: str("v")}, {Key: "none"}}}}},
		{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{}}},
		{},
	}
	var attrs []*commonpb.KeyValue
	for i, v := range values {
		attrs = append(attrs, &commonpb.KeyValue{Key: string(rune('a' + i)), Value: v})
	}
	attrs = append(attrs, &commonpb.KeyValue{Key: "no value"}, &commonpb.KeyValue{Value: str("no key")})
	long := bytes.Repeat([]byte("x"), 300) // a length of two varint bytes
	full := &tracepb.Span{
		TraceId: bytes.Repeat([]byte{0xab}, 16), SpanId: bytes.Repeat([]byte{0xcd}, 8), TraceState: "k=v",
		ParentSpanId: bytes.Repeat([]byte{0xef}, 8), Flags: 0x301, Name: string(long), Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: 1 << 62, EndTimeUnixNano: math.MaxUint64, Attributes: attrs, DroppedAttributesCount: 3,
		Events: []*tracepb.Span_Event{
			{TimeUnixNano: 5, Name: "exception", Attributes: attrs[:3], DroppedAttributesCount: 1},
			{},
		},
		DroppedEventsCount: 300,
		Links: []*tracepb.Span_Link{
			{TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8), TraceState: "a=b", Attributes: attrs[3:5], DroppedAttributesCount: 2, Flags: 1},
			{},
		},
		DroppedLinksCount: 1,
		Status:            &tracepb.Status{Message: "boom", Code: tracepb.Status_STATUS_CODE_ERROR},
	}
	for name, s := range map[string]*tracepb.Span{
		"full": full, "empty": {}, "empty status": {Status: &tracepb.Status{}}, "negative kind": {Kind: -1, Status: &tracepb.Status{Code: -2}},
	} {
		m, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		want := protowire.AppendTag(nil, 2, protowire.BytesType)
		want = protowire.AppendBytes(want, m)
		if got := appendSpanProto(nil, 2, s); !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes written, proto.Marshal %d:\n got  %x\n want %x", name, len(got), len(want), got, want)
		}
	}
}
