package analysis

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/klauspost/compress/zstd"
	"github.com/mayday-sim/mayday/traces"
)

// Reading OTLP trace data for mayday import: the OpenTelemetry Collector file exporter's
// JSON lines, OTLP/JSON request bodies and OTLP protobuf (one request, or requests each
// after its length as a varint), optionally gzipped. Every request is handed on as soon as
// it is decoded, so a file of any size is read in pieces of one request. The files are the
// attacker's: every read is bounded (ReadLimits), only regular files are opened, and an
// error quotes at most a short, escaped excerpt of what a file holds.

// ErrBadTraceInput marks input that is not OTLP trace data; its message names the file and
// the line (JSON) or message (protobuf).
var ErrBadTraceInput = errors.New("not OTLP trace data")

// traceExts are the file names ImportFiles reads from a folder.
var traceExts = []string{".json", ".jsonl", ".ndjson", ".pb", ".binpb", ".protobuf", ".otlp"}

// uncompressedName is a file's name without its .gz or .zst.
func uncompressedName(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".zst")
}

// utf8BOM is the byte-order mark some editors write at the start of a UTF-8 file.
const utf8BOM = "\xef\xbb\xbf"

// maxZstdWindow is the largest window a zstd frame may ask the decoder to hold (zstd's
// --long=27): a frame asking more is refused rather than given the memory.
const maxZstdWindow = 128 << 20

// ReadLimits bound what an import reads, so that a hostile file is refused in bounded time
// and memory rather than read without end. A zero field takes its default.
type ReadLimits struct {
	Message int64         // one JSON line, JSON request body or protobuf message, decompressed
	File    int64         // one file, decompressed
	Total   int64         // every file of the import together, decompressed
	Spread  time.Duration // from the earliest start to the latest end of one run's spans
	Runs    int           // runs made by one import (one per service.name, one per run of a mayday export)
}

// The default limits: far above what a collector writes (an OTLP request is a few MiB; a
// file exporter rotates its files at 100 MiB by default), far below what would exhaust a
// machine.
const (
	DefaultMaxMessage = 64 << 20
	DefaultMaxFile    = 16 << 30
	DefaultMaxTotal   = 64 << 30
	DefaultMaxSpread  = 31 * 24 * time.Hour
	// DefaultMaxRuns: each run is stored, and its metrics computed, on its own (some 40 ms
	// for a run of a few spans), so a file of a span per service.name would otherwise take
	// minutes per megabyte.
	DefaultMaxRuns = 1000
)

func (l ReadLimits) withDefaults() ReadLimits {
	l.Message = cmp.Or(l.Message, DefaultMaxMessage)
	l.File = cmp.Or(l.File, DefaultMaxFile)
	l.Total = cmp.Or(l.Total, DefaultMaxTotal)
	l.Spread = cmp.Or(l.Spread, DefaultMaxSpread)
	l.Runs = cmp.Or(l.Runs, DefaultMaxRuns)
	return l
}

// inputError is refused input: its message names the file (and line, message or span) and
// what is wrong; it is an ErrBadTraceInput.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadTraceInput }

func refuse(format string, args ...any) error { return &inputError{fmt.Sprintf(format, args...)} }

// limitError is input past one of the ReadLimits; the message names the limit and its flag.
type limitError struct {
	what, flag string
	limit      int64
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s is larger than %s (--%s; raise it to read this input)", e.what, sizeText(e.limit), e.flag)
}
func (e *limitError) Is(target error) bool { return target == ErrBadTraceInput }

// sizeText prints a byte count in the unit it is a whole number of.
func sizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// excerpt is a short, escaped piece of untrusted text for an error message: never more
// than 60 characters of it, quoted, control characters and invalid UTF-8 escaped.
func excerpt(s string) string {
	const max = 60
	cut := ""
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s, cut = string(r[:max]), "…"
	}
	return strconv.Quote(s) + cut
}

// clipError is a decoder's message cut short: decoders quote the input they stumble on,
// and that input is the attacker's.
func clipError(err error) string {
	msg := err.Error()
	if len(msg) <= 160 && utf8.ValidString(msg) && !strings.ContainsFunc(msg, unicode.IsControl) {
		return msg
	}
	q := excerpt(msg)
	return q[1 : len(q)-1]
}

// TraceInputs expands the arguments of mayday import: a file is itself (but mayday's own
// export.json manifest is skipped), a folder its trace
// files (by extension, also with .gz, in name order, recursively; an export folder's
// export.json is not one). A missing path, and anything but a regular file (a named pipe,
// a device, a socket), is an error; in a folder, so is a symbolic link to a file outside it.
func TraceInputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, errors.Join(ErrBadTraceInput, err))
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				return nil, refuse("%s: %s, not a regular file: mayday import reads regular files only", a, fileKind(st.Mode()))
			}
			if !IsExportManifest(a) { // export.json of DIR/*.json: not trace data
				out = append(out, a)
			}
			continue
		}
		found, err := folderInputs(a)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: %w: the folder holds no .json, .jsonl or .pb file", a, ErrBadTraceInput)
		}
		out = append(out, found...)
	}
	return out, nil
}

// folderInputs lists the trace files of folder dir. Symbolic links to folders are not
// followed (filepath.WalkDir); a link to a file is read when the file is inside dir.
func folderInputs(dir string) ([]string, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, errors.Join(ErrBadTraceInput, err))
	}
	var found []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() == ManifestFile || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if !slices.Contains(traceExts, filepath.Ext(uncompressedName(d.Name()))) {
			return nil
		}
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return refuse("%s: a symbolic link to nothing readable", p)
			}
			if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return refuse("%s: a symbolic link to a file outside %s: mayday import follows no link out of the folder it reads (name the file itself to read it)", p, dir)
			}
			st, err := os.Stat(target)
			if err != nil {
				return fmt.Errorf("%s: %w", p, errors.Join(ErrBadTraceInput, err))
			}
			mode = st.Mode()
		}
		if !mode.IsRegular() {
			return refuse("%s: %s, not a regular file: mayday import reads regular files only", p, fileKind(mode))
		}
		found = append(found, p)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrBadTraceInput) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", dir, errors.Join(ErrBadTraceInput, err))
	}
	slices.Sort(found)
	return found, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	}
	return "not a file"
}

// traceReader reads the files of one import within its limits, checks every resource and
// span (import_check.go) and redacts the names that become columns before handing each
// request on.
type traceReader struct {
	lim    ReadLimits
	forced bool // --conventions names one: no mayday export is read as one
	red    *traces.Redactor
	total  int64                  // bytes read so far, decompressed, every file
	bounds map[string]*timeBounds // by run: an export's run id, else the service
	dec    decodeQueue            // requests being decoded, in the order they were read
	mem    requestMemory          // what requests are read and decoded into, given back once added
	// rowTimes are the time columns of the rows the span checkSpan last checked carries
	// (an export's), for spanTimes.
	rowTimes []rowTime
}

func newTraceReader(lim ReadLimits, conventions string, redact []string) *traceReader {
	rd := &traceReader{lim: lim.withDefaults(), forced: conventions != ConvAuto && conventions != "",
		red: traces.NewRedactor(nil, redact, nil), bounds: map[string]*timeBounds{}}
	rd.mem.reading = plainUnlessExports
	if rd.forced {
		rd.mem.reading = plainEvents
	}
	return rd
}

// read decodes every request of the file path and calls fn with each, and where it came
// from ("file:line" or "file: message n").
func (rd *traceReader) read(path string, fn func(req *coltracepb.ExportTraceServiceRequest, where string) error) error {
	if err := rd.readOn(path, fn); err != nil {
		rd.dec.abandon()
		return err
	}
	return rd.dec.flush()
}

// readOn is read, but the file's last requests may still be decoding when it returns
// (rd.dec): rd.dec.flush hands them on, rd.dec.abandon drops them. A file read next goes on
// reading while they decode, and its own requests are handed on after them. When reading
// the file fails, the requests read before it are handed on first, and the error of the
// first of them that has one is returned, as though each had been handed on when read.
func (rd *traceReader) readOn(path string, fn func(req *coltracepb.ExportTraceServiceRequest, where string) error) error {
	err := rd.readFile(path, fn)
	if err != nil {
		if ferr := rd.dec.flush(); ferr != nil {
			return ferr
		}
	}
	return err
}

func (rd *traceReader) readFile(path string, fn func(req *coltracepb.ExportTraceServiceRequest, where string) error) error {
	r, closeFile, err := rd.open(path, true)
	if err != nil {
		return err
	}
	defer closeFile()
	br := bufio.NewReaderSize(r, 1<<20)
	handle := func(req *coltracepb.ExportTraceServiceRequest, where string) error {
		if err := rd.accept(req, where); err != nil {
			return err
		}
		return fn(req, where)
	}
	switch filepath.Ext(uncompressedName(path)) {
	case ".pb", ".binpb", ".protobuf", ".otlp":
		return rd.readProto(path, br, r.stored, handle)
	}
	return rd.readJSON(path, br, handle)
}

// open opens path, a regular file (a named pipe put in its place since the folder was
// listed is refused, not waited on), gunzipped when it is .gz, counted against the limits
// (against the input's total too when total: a file read again is not more input).
func (rd *traceReader) open(path string, total bool) (*countingReader, func(), error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, errors.Join(ErrBadTraceInput, err))
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, errors.Join(ErrBadTraceInput, err))
		}
		return nil, nil, refuse("%s: %s, not a regular file: mayday import reads regular files only", path, fileKind(st.Mode()))
	}
	var r io.Reader = f
	closeFile := func() { f.Close() }
	stored := st.Size()
	switch {
	case strings.HasSuffix(path, ".gz"):
		stored = 0
		gz, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, nil, refuse("%s: not gzip data: %s", path, clipError(err))
		}
		r, closeFile = gz, func() { gz.Close(); f.Close() }
	case strings.HasSuffix(path, ".zst"):
		// The Collector's file exporter with compression: zstd writes one zstd stream, or a
		// frame per write; either reads back as the file it compressed.
		stored = 0
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			f.Close()
			return nil, nil, refuse("%s: not zstd data: %s", path, clipError(err))
		}
		r, closeFile = zr, func() { zr.Close(); f.Close() }
	}
	return &countingReader{r: r, rd: rd, total: total, stored: stored}, closeFile, nil
}

// countingReader counts the bytes of one file against ReadLimits.File and Total.
type countingReader struct {
	r      io.Reader
	rd     *traceReader
	n      int64
	total  bool
	stored int64 // the file's size when it is read as stored (not gunzipped), else 0
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	if c.total {
		c.rd.total += int64(k)
	}
	switch {
	case c.n > c.rd.lim.File:
		return k, &limitError{"the file, decompressed,", "max-file", c.rd.lim.File}
	case c.rd.total > c.rd.lim.Total:
		return k, &limitError{"the input, every file decompressed,", "max-input", c.rd.lim.Total}
	}
	return k, err
}

// readJSON reads JSON lines, or, when the first line is not a whole JSON value, one
// (pretty-printed) request body. A .jsonl or .ndjson file, and a file whose first line is
// longer than the read buffer (a compact request body is one line too), are read as lines.
func (rd *traceReader) readJSON(path string, br *bufio.Reader, fn func(*coltracepb.ExportTraceServiceRequest, string) error) error {
	if b, _ := br.Peek(len(utf8BOM)); string(b) == utf8BOM {
		br.Discard(len(utf8BOM)) // an editor's byte-order mark: not JSON, and not the data
	}
	first, whole, err := peekLine(br)
	if err != nil {
		return fmt.Errorf("%s: %w", path, readFailure(err))
	}
	if len(bytes.TrimSpace(first)) == 0 && whole {
		if rest, _ := br.Peek(len(first) + 1); len(bytes.TrimSpace(rest)) == 0 {
			return fmt.Errorf("%s: %w: the file is empty", path, ErrBadTraceInput)
		}
	}
	ext := filepath.Ext(uncompressedName(path))
	if ext != ".jsonl" && ext != ".ndjson" && whole && !json.Valid(first) {
		b, err := io.ReadAll(io.LimitReader(br, rd.lim.Message+1))
		if err != nil {
			return fmt.Errorf("%s: %w", path, readFailure(err))
		}
		if int64(len(b)) > rd.lim.Message {
			return fmt.Errorf("%s: %w", path, &limitError{"the request body", "max-message", rd.lim.Message})
		}
		// b is read for this request alone: the request is decoded over it.
		return rd.dec.add(b, rd.mem.decodeJSON, func(req *coltracepb.ExportTraceServiceRequest, err error) error {
			if err != nil {
				return fmt.Errorf("%s:%d: %w: %s", path, jsonErrLine(b, err), ErrBadTraceInput, clipError(err))
			}
			return fn(req, path)
		})
	}
	lines := 0
	lr := lineReader{br: br}
	for line := 1; ; line++ {
		buf, err := lr.readLine(rd.mem.get(), rd.lim.Message)
		if len(bytes.TrimSpace(buf)) > 0 && (err == nil || err == io.EOF) {
			lines++
			derr := rd.dec.add(buf, rd.mem.decodeJSON, rd.mem.holding(buf, func(req *coltracepb.ExportTraceServiceRequest, derr error) error {
				if derr != nil {
					return fmt.Errorf("%s:%d: %w: %s", path, line, ErrBadTraceInput, clipError(derr))
				}
				return fn(req, fmt.Sprintf("%s:%d", path, line))
			}))
			if derr != nil {
				return derr
			}
		} else {
			rd.mem.put(buf)
		}
		if err == io.EOF {
			if lines == 0 {
				return fmt.Errorf("%s: %w: the file is empty", path, ErrBadTraceInput)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, readFailure(err))
		}
	}
}

// decodeAhead is how many requests (JSON lines and bodies, protobuf bodies) are decoded at
// once, each on a goroutine of its own, while the input goes on being read: decoding was
// the reading goroutine's work, and the limit of an import's reading (research-fleet
// exported as OTLP, and traces from agent libraries; docs/performance.md, "Import:
// requests decoded side by side"). Requests are handed on in the order they were read,
// whatever order they decode in.
var decodeAhead = min(runtime.GOMAXPROCS(0), 4)

// decodeBytes bounds the text of the requests added and not yet handed on, past the first
// decodeAhead of them: requests of a few kilobytes (an exporter's batches) queue up to
// twice decodeAhead, so that a long one being handed on does not leave the other decoders
// idle, while requests of many megabytes (a file's whole body), whose decoded form is
// several times their text, are held decodeAhead at a time.
const decodeBytes = 16 << 20

// decodeQueue holds the requests being decoded, oldest first.
type decodeQueue struct {
	jobs    []*decodeJob
	bytes   int           // the text of jobs
	running chan struct{} // one token a request decoding: at most decodeAhead at once
}

type decodeJob struct {
	done    chan struct{}
	size    int
	req     *coltracepb.ExportTraceServiceRequest
	err     error
	deliver func(*coltracepb.ExportTraceServiceRequest, error) error
}

// add decodes b with decode on a goroutine of its own and, once every request added
// before it has been handed on, hands on its request (or its error) to deliver. It first
// hands on the oldest requests while the queue is full (decodeAhead requests, or up to
// twice that many within decodeBytes), and returns the first error deliver returned (the
// requests after it are dropped).
func (q *decodeQueue) add(b []byte, decode func([]byte) (*coltracepb.ExportTraceServiceRequest, error), deliver func(*coltracepb.ExportTraceServiceRequest, error) error) error {
	ahead := max(decodeAhead, 1)
	for len(q.jobs) >= 2*ahead || len(q.jobs) >= ahead && q.bytes+len(b) > decodeBytes {
		if err := q.next(); err != nil {
			q.abandon()
			return err
		}
	}
	j := &decodeJob{done: make(chan struct{}), size: len(b), deliver: deliver}
	if ahead == 1 {
		j.req, j.err = decode(b)
		close(j.done)
	} else {
		if q.running == nil {
			q.running = make(chan struct{}, ahead)
		}
		go func() {
			defer close(j.done)
			q.running <- struct{}{}
			defer func() { <-q.running }()
			j.req, j.err = decode(b)
		}()
	}
	q.bytes += len(b)
	q.jobs = append(q.jobs, j)
	return nil
}

// next hands on the oldest request, once decoded.
func (q *decodeQueue) next() error {
	j := q.jobs[0]
	q.jobs[0] = nil
	q.jobs = q.jobs[1:]
	q.bytes -= j.size
	<-j.done
	return j.deliver(j.req, j.err)
}

// flush hands on every request added, in order, and returns the first error; the rest are
// then dropped.
func (q *decodeQueue) flush() error {
	for len(q.jobs) > 0 {
		if err := q.next(); err != nil {
			q.abandon()
			return err
		}
	}
	return nil
}

// abandon waits for the requests being decoded and drops them.
func (q *decodeQueue) abandon() {
	for _, j := range q.jobs {
		<-j.done
	}
	q.jobs, q.bytes = nil, 0
}

// requestMemory is what requests are read and decoded into and given back once each is
// added (recycle), for the requests after it: the buffers JSON lines are read into, and
// the slabs the requests are decoded into.
//
// A line's request is decoded over its buffer (its strings are parts of it, newSlabsOver),
// so the buffer is held until the request has been added and only then read into again.
// Copying each line's text for its request instead made a new allocation of the line's
// size each time, written once. Slabs are taken from a pool, cleared, for the same reason
// (slabPool).
type requestMemory struct {
	mu    sync.Mutex
	free  [][]byte
	held  map[*coltracepb.ExportTraceServiceRequest]*heldMemory
	slabs slabPool

	reading eventReading // which span events the decoders keep
}

// heldMemory is what one request was read or decoded into.
type heldMemory struct {
	buf   []byte
	slabs *slabs
}

// get is a line buffer that nothing holds.
func (m *requestMemory) get() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.free); n > 0 {
		b := m.free[n-1]
		m.free[n-1] = nil
		m.free = m.free[:n-1]
		return b[:0]
	}
	return nil
}

// put gives a buffer back: at most a few are kept (the requests decoding, queued and being
// added at once), none larger than maxKeptBuffer.
func (m *requestMemory) put(b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b != nil && cap(b) <= maxKeptBuffer && len(m.free) <= 2*decodeAhead+readAhead {
		m.free = append(m.free, b[:0])
	}
}

// maxKeptBuffer bounds the buffers requestMemory keeps for the next requests: a file or line
// larger than this (up to --max-message) is read into a buffer of its own, which the garbage
// collector takes back, so that the few kept never hold more than a few times this. Request
// bodies and lines are rarely larger: mayday's export writes files of about 5 MiB
// (protobuf) and 11 MiB (OTLP/JSON), and an OTLP/gRPC receiver takes messages of at most
// 4 MiB unless configured otherwise.
const maxKeptBuffer = 16 << 20

// holding is deliver for a request decoded over buf, a buffer of get: buf is held with the
// request, until recycle gives both back, or given back at once when buf did not decode.
func (m *requestMemory) holding(buf []byte, deliver func(*coltracepb.ExportTraceServiceRequest, error) error) func(*coltracepb.ExportTraceServiceRequest, error) error {
	return func(req *coltracepb.ExportTraceServiceRequest, err error) error {
		if err != nil {
			m.put(buf)
		} else {
			m.note(req, func(h *heldMemory) { h.buf = buf })
		}
		return deliver(req, err)
	}
}

// note records in req's entry what set writes there.
func (m *requestMemory) note(req *coltracepb.ExportTraceServiceRequest, set func(*heldMemory)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held = map[*coltracepb.ExportTraceServiceRequest]*heldMemory{}
	}
	h := m.held[req]
	if h == nil {
		h = &heldMemory{}
		m.held[req] = h
	}
	set(h)
}

// recycle gives back what req was read and decoded into: nothing may read req after.
func (m *requestMemory) recycle(req *coltracepb.ExportTraceServiceRequest) {
	m.mu.Lock()
	h := m.held[req]
	delete(m.held, req)
	m.mu.Unlock()
	if h == nil {
		return
	}
	if h.slabs != nil {
		h.slabs.recycle()
	}
	m.put(h.buf)
}

// decodeJSON decodes one OTLP/JSON request (or a file exporter line, TracesData, which has
// the same shape; ids are hex, unknown fields an error): with the fast decoder, over b (b
// must not change while the request is in use) and into slabs of the pool, else with
// protojson, which says what is wrong.
func (m *requestMemory) decodeJSON(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	req, s, ok := fastOTLPJSONIn(b, m.slabs.slabsOver(b), m.reading)
	if !ok {
		s.recycle()
		return protoOTLPJSON(b)
	}
	m.note(req, func(h *heldMemory) { h.slabs = s })
	return req, nil
}

// decodeBody is unmarshalBody into slabs of the pool: what the fast decoder gives up on
// goes to proto.Unmarshal at once, not through the fast decoder a second time.
func (m *requestMemory) decodeBody(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	req := &coltracepb.ExportTraceServiceRequest{}
	s, err := unmarshalRequestIn(b, req, m.slabs.slabsOver(b), m.reading)
	if err != nil || len(req.ResourceSpans) == 0 {
		if s != nil {
			s.recycle()
		}
		return nil, errNotRequest
	}
	if s != nil {
		m.note(req, func(h *heldMemory) { h.slabs = s })
	}
	return req, nil
}

// lineReader reads the lines of a file. A line longer than the reader's buffer (a whole
// request on one line: mayday's own OTLP/JSON export writes 10-12 MB lines) is read past
// the buffer, straight into the line's own: one copy of its bytes instead of two. What
// such a read takes past the line's end is carried to the lines after it.
type lineReader struct {
	br    *bufio.Reader
	carry []byte // bytes read past the last line's end: the start of the next lines
	spare []byte // carry's memory
}

// readLine reads one line into buf (reused), refusing one longer than limit. The buffer
// doubles as it grows, up to limit, so refusing a line allocates less than twice limit.
func (lr *lineReader) readLine(buf []byte, limit int64) ([]byte, error) {
	tooLong := &limitError{"the line", "max-message", limit}
	if len(lr.carry) > 0 {
		end, found := len(lr.carry), false
		if i := bytes.IndexByte(lr.carry, '\n'); i >= 0 {
			end, found = i+1, true
		}
		if int64(len(buf)+end) > limit {
			return buf[:0], tooLong
		}
		buf = append(growLine(buf, end, limit), lr.carry[:end]...)
		lr.carry = lr.carry[end:]
		if found {
			return buf, nil
		}
	}
	frag, err := lr.br.ReadSlice('\n')
	if int64(len(buf)+len(frag)) > limit {
		return buf[:0], tooLong
	}
	buf = append(growLine(buf, len(frag), limit), frag...)
	if err != bufio.ErrBufferFull {
		return buf, err
	}
	// The reader's buffer is spent: the rest of the line is read straight into buf, as much
	// as it has room for at a time (a read of at least the reader's size bypasses its
	// buffer), never past limit.
	for {
		if int64(len(buf)) >= limit {
			if _, err := lr.br.Peek(1); err == io.EOF {
				return buf, io.EOF // the file's last line, without a newline, at the limit
			}
			return buf[:0], tooLong // the next byte, a newline or not, makes it longer
		}
		left := limit - int64(len(buf))
		buf = growLine(buf, int(min(int64(lr.br.Size()), left)), limit)
		room := buf[len(buf):cap(buf)]
		room = room[:min(int64(len(room)), left)]
		n, err := lr.br.Read(room)
		got := room[:n]
		if i := bytes.IndexByte(got, '\n'); i >= 0 {
			lr.carry = append(lr.spare[:0], got[i+1:]...)
			lr.spare = lr.carry[:0]
			return buf[:len(buf)+i+1], nil
		}
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
}

// growLine returns buf with room for n more bytes (len(buf)+n at most limit), doubling as
// it grows, up to limit.
func growLine(buf []byte, n int, limit int64) []byte {
	need := len(buf) + n
	if need <= cap(buf) {
		return buf
	}
	grown := make([]byte, len(buf), min(int64(max(2*cap(buf), need)), limit))
	copy(grown, buf)
	return grown
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

// protoOTLPJSON decodes what the fast decoder gives up on (a field it does not know among
// them), with protojson (which copies what it keeps), and says what is wrong.
func protoOTLPJSON(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	if err := json.Unmarshal(b, new(json.RawMessage)); err != nil {
		return nil, err
	}
	b, err := base64IDs(b)
	if err != nil {
		return nil, err
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := otlpJSONOptions.Unmarshal(b, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// otlpJSONOptions decodes OTLP/JSON as the OTLP specification requires of a receiver: a
// field of an unknown name is ignored (a newer OTLP adds fields), as the protobuf decoder
// ignores an unknown field number.
var otlpJSONOptions = protojson.UnmarshalOptions{DiscardUnknown: true}

// readProto streams length-delimited requests one at a time; a file that does not read
// that way from its first message is read as one request. A file that stops reading as
// length-delimited after its first message (cut short, or corrupt) is read once more as
// one request, and when that fails too the error names the message that broke (a span
// handed on twice is kept once). size is the file's size when known (0 otherwise), which
// a request body's buffer is made for.
func (rd *traceReader) readProto(path string, br *bufio.Reader, size int64, fn func(*coltracepb.ExportTraceServiceRequest, string) error) error {
	// Length-delimited requests are decoded as they are read (whether the file reads that
	// way depends on each decoding) and handed on at once, after the requests before them.
	inline := func(req *coltracepb.ExportTraceServiceRequest, where string) error {
		if err := rd.dec.flush(); err != nil {
			return err
		}
		return fn(req, where)
	}
	var head recording
	n, err := streamDelimited(br, &head, rd.lim.Message, func(req *coltracepb.ExportTraceServiceRequest, i int) error {
		return inline(req, fmt.Sprintf("%s: message %d", path, i))
	})
	var bad *delimitedError
	if err == nil || !errors.As(err, &bad) {
		var lim *limitError
		if errors.As(err, &lim) {
			return fmt.Errorf("%s: message %d: %w", path, n+1, err)
		}
		return err
	}
	var whole []byte
	var rerr error
	if n == 0 {
		// Not length-delimited from its first message (a request body, as mayday's own
		// export writes): the file is what the first try read and the rest, read on.
		whole, rerr = head.rest(br, rd.mem.get(), rd.lim.Message, size)
	} else {
		whole, rerr = rd.reread(path)
	}
	if rerr != nil {
		if n > 0 {
			return fmt.Errorf("%s: message %d: %w: %s", path, n+1, ErrBadTraceInput, bad.msg)
		}
		return fmt.Errorf("%s: %w", path, readFailure(rerr))
	}
	if len(whole) == 0 {
		return fmt.Errorf("%s: %w: the file is empty", path, ErrBadTraceInput)
	}
	refused := func() error {
		if n > 0 {
			return fmt.Errorf("%s: message %d: %w: %s", path, n+1, ErrBadTraceInput, bad.msg)
		}
		return fmt.Errorf("%s: %w: neither one OTLP protobuf request nor length-delimited ones (%s)", path, ErrBadTraceInput, bad.msg)
	}
	if n > 0 { // a file that broke after its first messages, read again: at once
		req, err := unmarshalBody(whole)
		if err != nil {
			return refused()
		}
		return inline(req, path)
	}
	// A request body (mayday's own export, an OTLP/HTTP body): decoded like a JSON line,
	// on a goroutine of its own while the next file is read, over whole, held like a line's
	// buffer.
	return rd.dec.add(whole, rd.mem.decodeBody, rd.mem.holding(whole, func(req *coltracepb.ExportTraceServiceRequest, err error) error {
		if err != nil {
			return refused()
		}
		return fn(req, path)
	}))
}

// errNotRequest is a protobuf body that is no OTLP request (or holds no spans).
var errNotRequest = errors.New("not an OTLP request")

// unmarshalBody decodes a protobuf request body.
func unmarshalBody(b []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	var req coltracepb.ExportTraceServiceRequest
	if err := unmarshalRequest(b, &req); err != nil || len(req.ResourceSpans) == 0 {
		return nil, errNotRequest
	}
	return &req, nil
}

// delimitedError is input that is not (or no longer) length-delimited requests.
type delimitedError struct{ msg string }

func (e *delimitedError) Error() string { return e.msg }

// streamDelimited reads requests each after its length as a varint, calling fn with each
// and its number, and returns how many it read. A length above max is not read: the file
// is then not length-delimited (or, when it is one request, read whole within max).
func streamDelimited(br *bufio.Reader, head *recording, max int64, fn func(*coltracepb.ExportTraceServiceRequest, int) error) (int, error) {
	n := 0
	head.r = br
	defer func() { head.r = nil }()
	for {
		if _, err := br.Peek(1); err == io.EOF {
			if n == 0 {
				return 0, &delimitedError{"the file is empty"}
			}
			return n, nil
		} else if lim := asLimit(err); lim != nil {
			return n, lim
		}
		// The first message is read through head, which keeps what it read: when the file
		// turns out to be one request, that is where the request begins.
		var src interface {
			io.Reader
			io.ByteReader
		} = br
		if n == 0 {
			src = head
		}
		size, err := binary.ReadUvarint(src)
		if lim := asLimit(err); lim != nil {
			return n, lim
		}
		if err != nil || size == 0 {
			return n, &delimitedError{"no message length"}
		}
		if size > uint64(max) {
			return n, &delimitedError{fmt.Sprintf("it declares %d bytes, more than %s (--max-message)", size, sizeText(max))}
		}
		buf, err := io.ReadAll(io.LimitReader(src, int64(size)))
		if lim := asLimit(err); lim != nil {
			return n, lim
		}
		if uint64(len(buf)) < size {
			return n, &delimitedError{fmt.Sprintf("truncated (it declares %d bytes, %d remain)", size, len(buf))}
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := unmarshalRequest(buf, &req); err != nil || len(req.ResourceSpans) == 0 {
			return n, &delimitedError{fmt.Sprintf("not an OTLP request (%v)", err)}
		}
		n++
		if err := fn(&req, n); err != nil {
			return n, err
		}
	}
}

// recording reads from r and keeps every byte it read.
type recording struct {
	r    *bufio.Reader
	read []byte
}

func (h *recording) ReadByte() (byte, error) {
	c, err := h.r.ReadByte()
	if err == nil {
		h.read = append(h.read, c)
	}
	return c, err
}

func (h *recording) Read(p []byte) (int, error) {
	k, err := h.r.Read(p)
	h.read = append(h.read, p[:k]...)
	return k, err
}

// rest is what h read and the rest of br, in buf (reused), refused past limit bytes; size,
// when known, is about how many bytes that is, which the buffer is made for at once.
func (h *recording) rest(br *bufio.Reader, buf []byte, limit, size int64) ([]byte, error) {
	if want := size + bytes.MinRead; size > int64(len(h.read)) && size <= limit && int64(cap(buf)) < want {
		buf = make([]byte, 0, want) // the end of the file is found with MinRead bytes to spare
	}
	b := bytes.NewBuffer(append(buf[:0], h.read...))
	h.read = nil
	if _, err := b.ReadFrom(io.LimitReader(br, limit+1-int64(b.Len()))); err != nil {
		return nil, err
	}
	if int64(b.Len()) > limit {
		return nil, &limitError{"the file, read as one request,", "max-message", limit}
	}
	return b.Bytes(), nil
}

// readFailure is an error reading a file (a corrupt gzip stream, an I/O error) as refused
// input; a limit passed stays as it is.
func readFailure(err error) error {
	if errors.Is(err, ErrBadTraceInput) {
		return err
	}
	return refuse("cannot be read: %s", clipError(err))
}

func asLimit(err error) *limitError {
	var lim *limitError
	if errors.As(err, &lim) {
		return lim
	}
	return nil
}

// reread reads the whole file again (gunzipped when it is .gz), as one message.
func (rd *traceReader) reread(path string) ([]byte, error) {
	r, closeFile, err := rd.open(path, false)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	b, err := io.ReadAll(io.LimitReader(r, rd.lim.Message+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > rd.lim.Message {
		return nil, &limitError{"the file, read as one request,", "max-message", rd.lim.Message}
	}
	return b, nil
}
