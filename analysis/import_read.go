package analysis

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Reading OTLP trace data for mayday import: the OpenTelemetry Collector file exporter's
// JSON lines, OTLP/JSON request bodies and OTLP protobuf (one request, or requests each
// after its length as a varint), optionally gzipped. Every request is handed on as soon as
// it is decoded, so a file of any size is read in pieces of one request.

// ErrBadTraceInput marks input that is not OTLP trace data; its message names the file and
// the line (JSON) or message (protobuf).
var ErrBadTraceInput = errors.New("not OTLP trace data")

// traceExts are the file names ImportFiles reads from a folder.
var traceExts = []string{".json", ".jsonl", ".ndjson", ".pb", ".binpb", ".protobuf", ".otlp"}

// TraceInputs expands the arguments of mayday import: a file is itself (but mayday's own
// export.json manifest is skipped), a folder its trace
// files (by extension, also with .gz, in name order, recursively; an export folder's
// export.json is not one). A missing path is an error.
func TraceInputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, errors.Join(ErrBadTraceInput, err))
		}
		if !st.IsDir() {
			if !IsExportManifest(a) { // export.json of DIR/*.json: not trace data
				out = append(out, a)
			}
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || d.Name() == ManifestFile || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			if slices.Contains(traceExts, filepath.Ext(strings.TrimSuffix(d.Name(), ".gz"))) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: %w: the folder holds no .json, .jsonl or .pb file", a, ErrBadTraceInput)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// readTraceFile decodes every request of the file path and calls fn with each, and where
// it came from ("file:line" or "file: message n").
func readTraceFile(path string, fn func(req *coltracepb.ExportTraceServiceRequest, where string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, errors.Join(ErrBadTraceInput, err))
	}
	defer f.Close()
	var r io.Reader = f
	name := path
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w: %v", path, ErrBadTraceInput, err)
		}
		defer gz.Close()
		r, name = gz, strings.TrimSuffix(name, ".gz")
	}
	br := bufio.NewReaderSize(r, 1<<20)
	switch filepath.Ext(name) {
	case ".pb", ".binpb", ".protobuf", ".otlp":
		return readProto(path, br, fn)
	}
	return readJSON(path, br, fn)
}

// readJSON reads JSON lines, or, when the first line is not a whole JSON value, one
// (pretty-printed) request body. A .jsonl or .ndjson file, and a file whose first line is
// longer than the read buffer (a compact request body is one line too), are read as lines.
func readJSON(path string, br *bufio.Reader, fn func(*coltracepb.ExportTraceServiceRequest, string) error) error {
	first, whole, err := peekLine(br)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(bytes.TrimSpace(first)) == 0 && whole {
		if rest, _ := br.Peek(len(first) + 1); len(bytes.TrimSpace(rest)) == 0 {
			return fmt.Errorf("%s: %w: the file is empty", path, ErrBadTraceInput)
		}
	}
	ext := filepath.Ext(strings.TrimSuffix(path, ".gz"))
	if ext != ".jsonl" && ext != ".ndjson" && whole && !json.Valid(first) {
		b, err := io.ReadAll(br)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		req, err := decodeOTLPJSON(b)
		if err != nil {
			return fmt.Errorf("%s:%d: %w: %v", path, jsonErrLine(b, err), ErrBadTraceInput, err)
		}
		return fn(req, path)
	}
	lines := 0
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			lines++
			req, derr := decodeOTLPJSON(b)
			if derr != nil {
				return fmt.Errorf("%s:%d: %w: %v", path, line, ErrBadTraceInput, derr)
			}
			if ferr := fn(req, fmt.Sprintf("%s:%d", path, line)); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			if lines == 0 {
				return fmt.Errorf("%s: %w: the file is empty", path, ErrBadTraceInput)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

// peekLine returns the first line without consuming it, and whether it ended within the
// reader's buffer (a newline, or the end of the file).
func peekLine(br *bufio.Reader) ([]byte, bool, error) {
	b, err := br.Peek(br.Size())
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], true, nil
	}
	switch err {
	case io.EOF:
		return b, true, nil
	case nil, bufio.ErrBufferFull:
		return b, false, nil
	}
	return nil, false, err
}

// jsonErrLine is the line of a JSON syntax error, when the error says where; else 1.
func jsonErrLine(b []byte, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset <= int64(len(b)) {
		return 1 + bytes.Count(b[:se.Offset], []byte{'\n'})
	}
	return 1
}

// decodeOTLPJSON decodes one OTLP/JSON request (or a file exporter line, TracesData, which
// has the same shape). Ids are hex in OTLP/JSON; unknown fields are an error.
func decodeOTLPJSON(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	if req, ok := fastOTLPJSON(b); ok {
		return req, nil
	}
	if err := json.Unmarshal(b, new(json.RawMessage)); err != nil {
		return nil, err
	}
	b, err := base64IDs(b)
	if err != nil {
		return nil, err
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := protojson.Unmarshal(b, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// readProto streams length-delimited requests one at a time; a file that does not read
// that way from its first message is read as one request. A file that stops reading as
// length-delimited after its first message (cut short, or corrupt) is read once more as
// one request, and when that fails too the error names the message that broke (a span
// handed on twice is kept once).
func readProto(path string, br *bufio.Reader, fn func(*coltracepb.ExportTraceServiceRequest, string) error) error {
	n, err := streamDelimited(br, func(req *coltracepb.ExportTraceServiceRequest, i int) error {
		return fn(req, fmt.Sprintf("%s: message %d", path, i))
	})
	var bad *delimitedError
	if err == nil || !errors.As(err, &bad) {
		return err
	}
	whole, rerr := reread(path)
	if rerr != nil {
		return fmt.Errorf("%s: %w", path, rerr)
	}
	if len(whole) == 0 {
		return fmt.Errorf("%s: %w: the file is empty", path, ErrBadTraceInput)
	}
	var req coltracepb.ExportTraceServiceRequest
	if uerr := proto.Unmarshal(whole, &req); uerr != nil || len(req.ResourceSpans) == 0 {
		if n > 0 {
			return fmt.Errorf("%s: message %d: %w: %s", path, n+1, ErrBadTraceInput, bad.msg)
		}
		return fmt.Errorf("%s: %w: neither one OTLP protobuf request nor length-delimited ones (%s)", path, ErrBadTraceInput, bad.msg)
	}
	return fn(&req, path)
}

// delimitedError is input that is not (or no longer) length-delimited requests.
type delimitedError struct{ msg string }

func (e *delimitedError) Error() string { return e.msg }

// streamDelimited reads requests each after its length as a varint, calling fn with each
// and its number, and returns how many it read.
func streamDelimited(br *bufio.Reader, fn func(*coltracepb.ExportTraceServiceRequest, int) error) (int, error) {
	n := 0
	for {
		if _, err := br.Peek(1); err == io.EOF {
			if n == 0 {
				return 0, &delimitedError{"the file is empty"}
			}
			return n, nil
		}
		size, err := binary.ReadUvarint(br)
		if err != nil || size == 0 || size > 1<<31 {
			return n, &delimitedError{"no message length"}
		}
		buf := make([]byte, size)
		if k, err := io.ReadFull(br, buf); err != nil {
			return n, &delimitedError{fmt.Sprintf("truncated (it declares %d bytes, %d remain)", size, k)}
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(buf, &req); err != nil || len(req.ResourceSpans) == 0 {
			return n, &delimitedError{fmt.Sprintf("not an OTLP request (%v)", err)}
		}
		n++
		if err := fn(&req, n); err != nil {
			return n, err
		}
	}
}

// reread reads the whole file again (gunzipped when it is .gz).
func reread(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		r = gz
	}
	return io.ReadAll(r)
}
