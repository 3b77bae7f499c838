package analysis

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// OTLP/JSON differs from the standard protobuf JSON mapping in one respect: trace and span
// ids (traceId, spanId, parentSpanId, in spans and links) are hex strings, not base64.
// protojson writes base64, so the export rewrites those three fields after marshalling,
// and ReadOTLP rewrites them back before unmarshalling. Nothing else is touched: a key
// inside a string value has its quotes escaped (\"spanId\"), so it never matches.

var idKeys = [][]byte{[]byte(`"traceId"`), []byte(`"spanId"`), []byte(`"parentSpanId"`)}

// hexIDs rewrites the id fields of protojson output from base64 to hex.
func hexIDs(b []byte) ([]byte, error) {
	return rewriteIDs(b, func(v []byte) ([]byte, error) {
		raw, err := base64.StdEncoding.DecodeString(string(v))
		if err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(raw)), nil
	})
}

// base64IDs rewrites the id fields of OTLP/JSON from hex to base64, for protojson. An id
// already in base64 (what protojson itself writes, and so what a program that marshals the
// OTLP protos with it writes) is kept.
func base64IDs(b []byte) ([]byte, error) {
	return rewriteIDs(b, func(v []byte) ([]byte, error) {
		if _, ok := base64ID(string(v)); ok {
			return v, nil
		}
		raw, err := hex.DecodeString(string(v))
		if err != nil {
			return nil, err
		}
		return []byte(base64.StdEncoding.EncodeToString(raw)), nil
	})
}

// base64ID decodes a trace or span id written in base64 (16 or 8 bytes: 24 or 12
// characters, 22 or 11 without padding), which no hex id is (32 or 16 characters).
func base64ID(v string) ([]byte, bool) {
	if len(v) != 24 && len(v) != 22 && len(v) != 12 && len(v) != 11 {
		return nil, false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if raw, err := enc.DecodeString(v); err == nil && (len(raw) == 16 || len(raw) == 8) && enc.EncodedLen(len(raw)) == len(v) {
			return raw, true
		}
	}
	return nil, false
}

// rewriteIDs replaces the string value of every id key by conv(value).
func rewriteIDs(b []byte, conv func([]byte) ([]byte, error)) ([]byte, error) {
	out := make([]byte, 0, len(b)+len(b)/8)
	for {
		at, key := nextIDKey(b)
		if at < 0 {
			return append(out, b...), nil
		}
		i := at + len(key)
		for i < len(b) && (b[i] == ' ' || b[i] == ':' || b[i] == '\n' || b[i] == '\t') {
			i++
		}
		if i >= len(b) || b[i] != '"' {
			return nil, fmt.Errorf("OTLP JSON: %s is not followed by a string", key)
		}
		end := bytes.IndexByte(b[i+1:], '"')
		if end < 0 {
			return nil, fmt.Errorf("OTLP JSON: unterminated %s value", key)
		}
		v, err := conv(b[i+1 : i+1+end])
		if err != nil {
			return nil, fmt.Errorf("OTLP JSON: %s %q: %w", key, b[i+1:i+1+end], err)
		}
		out = append(out, b[:i+1]...)
		out = append(out, v...)
		b = b[i+1+end:]
	}
}

// nextIDKey finds the first id key in b. Each ends in Id", so one scan for that suffix
// keeps the rewrite linear in the size of the file.
func nextIDKey(b []byte) (int, []byte) {
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(`Id"`))
		if i < 0 {
			return -1, nil
		}
		end := off + i + len(`Id"`)
		for _, k := range idKeys {
			if bytes.HasSuffix(b[:end], k) {
				return end - len(k), k
			}
		}
		off = end
	}
}

// ReadOTLP reads one file of an OTLP export back into the official Go types.
func ReadOTLP(path string) (*coltracepb.ExportTraceServiceRequest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if b, err = base64IDs(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := protojson.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &req, nil
}
