//go:build duckdb_arrow

package analysis

import (
	"bufio"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Writing one OTLP file span by span: the file is one ExportTraceServiceRequest holding one
// resource, one scope and the spans, in OTLP/JSON (written as the spans come, nothing held)
// or protobuf (the OTLP/HTTP protobuf body; its length prefixes need the size of what they
// wrap, so a file's spans are held encoded, a few MB, until the file ends). Either may be
// gzipped. The JSON is OTLP/JSON as receivers and protojson read it: lowerCamelCase names,
// hex trace and span ids, enums as integers, 64-bit integers as strings, fields at their
// zero value left out.

// OTLP encodings.
const (
	EncodingJSON  = "json"
	EncodingProto = "proto"
)

// otlpFile is one OTLP file being written.
type otlpFile struct {
	f     *os.File
	bw    *bufio.Writer
	gz    *gzip.Writer
	w     io.Writer // bw, or gz over bw
	proto bool
	head  []byte // proto: resource and scope, encoded
	body  []byte // proto: the spans, each with its field tag and length
	buf   []byte // json: scratch for one span
	spans int
}

func createOTLPFile(path string, encoding string, gz bool, res *resourcepb.Resource, scope *commonpb.InstrumentationScope) (*otlpFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	o := &otlpFile{f: f, bw: bufio.NewWriterSize(f, 1<<20), proto: encoding == EncodingProto}
	o.w = o.bw
	if gz {
		// BestSpeed: the files compress about as well (they repeat attribute keys) at a
		// fraction of the default level's time.
		o.gz, _ = gzip.NewWriterLevel(o.bw, gzip.BestSpeed)
		o.w = o.gz
	}
	if o.proto {
		// resource_spans{1: resource, 2: scope_spans{1: scope, 2: span...}}
		o.head, err = protoField(nil, 1, res)
		if err == nil {
			o.body, err = protoField(nil, 1, scope)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return o, nil
	}
	b := append([]byte(nil), `{"resourceSpans":[{"resource":`...)
	b = appendResourceJSON(b, res)
	b = append(b, `,"scopeSpans":[{"scope":`...)
	b = appendScopeJSON(b, scope)
	b = append(b, `,"spans":[`...)
	if _, err := o.w.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	return o, nil
}

// add writes one span.
func (o *otlpFile) add(s *tracepb.Span) error {
	o.spans++
	if o.proto {
		o.body = appendSpanProto(o.body, 2, s)
		return nil
	}
	b := o.buf[:0]
	if o.spans > 1 {
		b = append(b, ',')
	}
	b = appendSpanJSON(b, s)
	o.buf = b
	_, err := o.w.Write(b)
	return err
}

// close ends the request and the file.
func (o *otlpFile) close() error {
	var err error
	if o.proto {
		// request{1: resource_spans{1: resource, 2: scope_spans{1: scope, 2: span...}}}
		rs := len(o.head) + protowire.SizeTag(2) + protowire.SizeBytes(len(o.body))
		b := protowire.AppendTag(nil, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(rs))
		b = append(b, o.head...)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(len(o.body)))
		if _, err = o.w.Write(b); err == nil {
			_, err = o.w.Write(o.body)
		}
	} else {
		_, err = io.WriteString(o.w, "]}]}]}\n")
	}
	if o.gz != nil {
		if cerr := o.gz.Close(); err == nil {
			err = cerr
		}
	}
	if ferr := o.bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort closes the file after an error; the staging folder it is in is removed.
func (o *otlpFile) abort() { o.f.Close() }

// protoField appends m as field num of its parent message: tag, length, bytes.
func protoField(b []byte, num protowire.Number, m proto.Message) ([]byte, error) {
	size := proto.Size(m)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(b, m)
}

// OTLP/JSON.

func appendResourceJSON(b []byte, r *resourcepb.Resource) []byte {
	b = append(b, '{')
	if len(r.GetAttributes()) > 0 {
		b = append(b, `"attributes":`...)
		b = appendKVsJSON(b, r.Attributes)
	}
	return append(b, '}')
}

func appendScopeJSON(b []byte, s *commonpb.InstrumentationScope) []byte {
	b = append(b, '{')
	sep := false
	if s.GetName() != "" {
		b = appendKey(b, "name", &sep)
		b = appendString(b, s.Name)
	}
	if s.GetVersion() != "" {
		b = appendKey(b, "version", &sep)
		b = appendString(b, s.Version)
	}
	return append(b, '}')
}

func appendSpanJSON(b []byte, s *tracepb.Span) []byte {
	b = append(b, '{')
	sep := false
	b = appendHexField(b, "traceId", s.TraceId, &sep)
	b = appendHexField(b, "spanId", s.SpanId, &sep)
	b = appendHexField(b, "parentSpanId", s.ParentSpanId, &sep)
	if s.Name != "" {
		b = appendKey(b, "name", &sep)
		b = appendString(b, s.Name)
	}
	if s.Kind != 0 {
		b = appendKey(b, "kind", &sep)
		b = strconv.AppendInt(b, int64(s.Kind), 10)
	}
	b = appendUint64Field(b, "startTimeUnixNano", s.StartTimeUnixNano, &sep)
	b = appendUint64Field(b, "endTimeUnixNano", s.EndTimeUnixNano, &sep)
	if len(s.Attributes) > 0 {
		b = appendKey(b, "attributes", &sep)
		b = appendKVsJSON(b, s.Attributes)
	}
	if len(s.Events) > 0 {
		b = appendKey(b, "events", &sep)
		b = append(b, '[')
		for i, e := range s.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			esep := false
			b = appendUint64Field(b, "timeUnixNano", e.TimeUnixNano, &esep)
			if e.Name != "" {
				b = appendKey(b, "name", &esep)
				b = appendString(b, e.Name)
			}
			if len(e.Attributes) > 0 {
				b = appendKey(b, "attributes", &esep)
				b = appendKVsJSON(b, e.Attributes)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(s.Links) > 0 {
		b = appendKey(b, "links", &sep)
		b = append(b, '[')
		for i, l := range s.Links {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			lsep := false
			b = appendHexField(b, "traceId", l.TraceId, &lsep)
			b = appendHexField(b, "spanId", l.SpanId, &lsep)
			if len(l.Attributes) > 0 {
				b = appendKey(b, "attributes", &lsep)
				b = appendKVsJSON(b, l.Attributes)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if st := s.Status; st != nil {
		b = appendKey(b, "status", &sep)
		b = append(b, '{')
		ssep := false
		if st.Message != "" {
			b = appendKey(b, "message", &ssep)
			b = appendString(b, st.Message)
		}
		if st.Code != 0 {
			b = appendKey(b, "code", &ssep)
			b = strconv.AppendInt(b, int64(st.Code), 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendKVsJSON(b []byte, kvs []*commonpb.KeyValue) []byte {
	b = append(b, '[')
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, kv.Key)
		b = append(b, `,"value":`...)
		b = appendAnyJSON(b, kv.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendAnyJSON(b []byte, v *commonpb.AnyValue) []byte {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		b = append(b, `{"stringValue":`...)
		b = appendString(b, x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		b = append(b, `{"boolValue":`...)
		b = strconv.AppendBool(b, x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		b = append(b, `{"intValue":"`...)
		b = strconv.AppendInt(b, x.IntValue, 10)
		b = append(b, '"')
	case *commonpb.AnyValue_DoubleValue:
		b = append(b, `{"doubleValue":`...)
		b = appendDouble(b, x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendAnyJSON(b, e)
		}
		b = append(b, "]}"...)
	case *commonpb.AnyValue_KvlistValue:
		b = append(b, `{"kvlistValue":{"values":`...)
		b = appendKVsJSON(b, x.KvlistValue.GetValues())
		b = append(b, '}')
	case *commonpb.AnyValue_BytesValue:
		b = append(b, `{"bytesValue":"`...)
		b = base64.StdEncoding.AppendEncode(b, x.BytesValue)
		b = append(b, '"')
	default:
		return append(b, "{}"...)
	}
	return append(b, '}')
}

// appendDouble writes a double as protojson does: a number, or "NaN", "Infinity",
// "-Infinity" as strings.
func appendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendKey(b []byte, k string, sep *bool) []byte {
	if *sep {
		b = append(b, ',')
	}
	*sep = true
	b = append(b, '"')
	b = append(b, k...)
	return append(b, `":`...)
}

func appendHexField(b []byte, k string, id []byte, sep *bool) []byte {
	if len(id) == 0 {
		return b
	}
	b = appendKey(b, k, sep)
	b = append(b, '"')
	b = hex.AppendEncode(b, id)
	return append(b, '"')
}

func appendUint64Field(b []byte, k string, v uint64, sep *bool) []byte {
	if v == 0 {
		return b
	}
	b = appendKey(b, k, sep)
	b = append(b, '"')
	b = strconv.AppendUint(b, v, 10)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string; invalid UTF-8 (which a protobuf string cannot
// hold) becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
