package analysis

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/klauspost/compress/s2"
)

// An import holds the spans of its runs in memory until the last file is read, then builds
// each run from them (import_build.go, import_native.go). Past spillSpans spans held, it
// stops holding them: every span read is written to a spill file beside the database, and
// only what the run-wide decisions read is kept (per trace: its first start, its span count
// and the traces it is joined to by a link or a session id; the run's time 0; its tool call
// ids, hashed, until one repeats). Once the input is read, the traces joined to one another
// form groups, the groups are cut into parts of about partSpans spans in order of their
// first start, and each part is read back, built and loaded before the next: the memory an
// import needs is then that of one part, whatever the input's size. docs/import.md ("Speed
// and memory") has the rule.

// spillSpans is how many spans an import holds (all its runs together) before it spills,
// and the size of a part built at once. A variable so that tests can make parts of a few spans.
var spillSpans int64 = 50_000

// partSpans is the size of a part: half of spillSpans, since a part is built while the one
// before it is sent to the load (importRun), and the two are held at once.
func partSpans() int64 { return max(spillSpans/2, 1) }

// spillRun is the spill of one run: the file, and what the run-wide decisions need.
type spillRun struct {
	dir    string // the import's spill folder
	f      *os.File
	chunks spillChunks // the spill as written to f
	buf    []byte      // the record being written
	body   []byte      // its body, before its length

	traceIdx map[[16]byte]int32 // trace id -> its index in first, count and join
	first    []int64            // per trace: its first span's start
	count    []int64            // per trace: spans written
	join     []int32            // per trace: union-find parent (traces joined by a link or a session)
	lo, hi   []int32            // per trace: the first and last chunk that hold its spans
	partOf   []int32            // per trace, once the run is cut into parts read from the chunks: its part
	last     []int64            // per trace: its last span's end (math.MaxInt64 while a span never ended)
	// sessions maps a session id to the traces that named it (joined by joinSessions). Its
	// values are pointers, so that adding a trace never assigns to the map: assigning to a
	// key already there stores the new key in its place, and the id read from a span is a
	// part of its request, whose memory is read into again later.
	sessions map[string]*[]int32
	zero     int64             // the earliest start written
	callIDs  map[uint64]uint64 // hash of a tool call id -> hash of the first tool span's key with it
	repeat   bool              // some tool call id is on two different tool spans
	// byReading: the groups are taken in the order they were read, not of their first
	// start (a mayday export's run: see groups).
	byReading bool
	// callIDs holds 64-bit hashes, not the ids, to keep a run's memory small: two ids (or
	// two span keys) that collide would read as a repeat (or as one span), a chance of
	// about n²/2^65 for n ids, far below anything a real fleet sends.
}

func newSpillRun(dir string) (*spillRun, error) {
	f, err := os.CreateTemp(dir, "spans-*.spill")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSpill, err)
	}
	return &spillRun{dir: dir, f: f, chunks: spillChunks{f: f}, traceIdx: map[[16]byte]int32{},
		sessions: map[string]*[]int32{}, callIDs: map[uint64]uint64{}, zero: math.MaxInt64}, nil
}

// trace is the index of the trace whose id is hex (32 hex digits), made on first sight.
func (sp *spillRun) trace(hexID string) int32 {
	var id [16]byte
	hex.Decode(id[:], []byte(hexID)) // the key's hex is ours: it always decodes
	if i, ok := sp.traceIdx[id]; ok {
		return i
	}
	i := int32(len(sp.first))
	sp.traceIdx[id] = i
	sp.first = append(sp.first, math.MaxInt64)
	sp.last = append(sp.last, math.MinInt64)
	sp.count = append(sp.count, 0)
	sp.join = append(sp.join, i)
	sp.lo, sp.hi = append(sp.lo, math.MaxInt32), append(sp.hi, -1)
	return i
}

func (sp *spillRun) find(i int32) int32 {
	for sp.join[i] != i {
		sp.join[i] = sp.join[sp.join[i]]
		i = sp.join[i]
	}
	return i
}

func (sp *spillRun) union(a, b int32) {
	a, b = sp.find(a), sp.find(b)
	if a != b {
		sp.join[max(a, b)] = min(a, b)
	}
}

// add writes s (classified) to the spill and notes what the run-wide decisions read of it.
func (sp *spillRun) add(s *inSpan) error {
	t := sp.trace(s.traceHex)
	sp.first[t] = min(sp.first[t], s.start)
	if s.end == 0 {
		sp.last[t] = math.MaxInt64 // never ended: running still
	} else {
		sp.last[t] = max(sp.last[t], s.end)
	}
	sp.count[t]++
	sp.zero = min(sp.zero, s.start)
	for _, l := range s.links {
		if l.ok {
			sp.union(t, sp.trace(l.key[:32]))
		}
	}
	if s.cv != nil {
		if id := s.str(s.cv.Session...); id != "" {
			if ts, ok := sp.sessions[id]; !ok {
				sp.sessions[strings.Clone(id)] = &[]int32{t} // the key not a part of the request (slabs)
			} else if (*ts)[len(*ts)-1] != t {
				*ts = append(*ts, t)
			}
		}
	}
	if s.role == roleTool && !sp.repeat && s.conv != ConvMayday {
		if id := s.str(s.convention().CallID...); id != "" {
			h, k := hash64(id), hash64(s.key)
			if o, ok := sp.callIDs[h]; ok && o != k {
				sp.repeat, sp.callIDs = true, nil
			} else if !ok {
				sp.callIDs[h] = k
			}
		}
	}
	sp.buf, sp.body = appendSpill(sp.buf[:0], sp.body, t, s)
	if err := sp.chunks.add(sp.buf); err != nil {
		return err
	}
	c := sp.chunks.filling()
	sp.lo[t], sp.hi[t] = min(sp.lo[t], c), c
	return nil
}

// errSpill marks an error writing or reading a spill: the machine's, not the input's.
var errSpill = errors.New("import: spill")

func hash64(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}

// close removes the spill file.
func (sp *spillRun) close() {
	if sp.f != nil {
		sp.f.Close()
		os.Remove(sp.f.Name())
		sp.f = nil
	}
}

// spillPart is one part of a spilled run: its traces' spans, in the order they were read,
// in a file of its own (path), or else in the spill's chunks from first to last.
type spillPart struct {
	path        string
	spans       int64
	first, last int32
}

// parts cuts the run's groups of joined traces, in order of their first start, into parts
// (a group is never cut: a part holds at least one). Parts of about smallPartSpans spans
// are taken when reading each from the chunks that hold its spans reads no more than
// smallScan times the spill; else parts of about partSpans spans, read from the chunks when
// that reads no more than directScan times the spill (readChunks); and otherwise parts of
// about filedPartSpans, each written to a file of its own in one pass over the spill (or
// read from the chunks, if these smaller parts happen to lie within directScan).
func (sp *spillRun) parts() ([]spillPart, error) {
	if err := sp.chunks.flush(); err != nil { // the last chunk; the file stays open
		return nil, err
	}
	parts, partOf, inPlace := sp.cut()
	if spillReadInPlace != nil {
		spillReadInPlace(inPlace)
	}
	if inPlace {
		return parts, nil
	}
	if err := sp.writeParts(parts, partOf); err != nil {
		return nil, err
	}
	sp.close()
	return parts, nil
}

// cut cuts the run into parts as parts describes, and reports whether they are to be read
// in place.
func (sp *spillRun) cut() ([]spillPart, map[int32]int, bool) {
	groups := sp.groups()
	if small := int64(smallPartSpans); small < partSpans() {
		parts, partOf := cutParts(groups, small)
		if sp.readInPlace(parts, partOf, min(smallScan, directScan)) {
			return parts, partOf, true
		}
	}
	parts, partOf := cutParts(groups, partSpans())
	if sp.readInPlace(parts, partOf, directScan) {
		return parts, partOf, true
	}
	if size := filedPartSpans(groups); size < partSpans() {
		parts, partOf = cutParts(groups, size)
		return parts, partOf, sp.readInPlace(parts, partOf, directScan)
	}
	return parts, partOf, false
}

// filedPartSpans is the size of the parts a run is cut into when each is written to a file
// of its own: smallPartSpans, so that the part being built and the one being loaded hold
// little of the heap and the collector has room (the LangGraph input, whose spans interleave
// across the whole spill: 42 collections of a live heap near 400 MB with parts of
// partSpans, 24 with these, and the import 9% faster), unless that would open more than
// maxPartFiles files at once; never more than partSpans.
func filedPartSpans(groups []*traceGroup) int64 {
	var spans int64
	for _, g := range groups {
		spans += g.spans
	}
	return min(partSpans(), max(smallPartSpans, (spans+maxPartFiles-1)/maxPartFiles))
}

// maxPartFiles bounds the files (each with its compressing writer and a pending chunk, about
// 200 KB) that cutting a run into files of parts of smallPartSpans opens at once.
const maxPartFiles = 256

// smallPartSpans is the size of the parts a run is cut into when their spans lie together
// in the spill: a part's records, built and written, then stay in the processor's caches,
// which made the import of research-fleet's export (431,142 spans read as plain spans)
// 3-5% faster than parts of partSpans (docs/performance.md, "Import: small parts where the
// spill keeps them together"). smallScan bounds what reading them in place may read: the
// last chunk of a part is often the first of the next, read twice.
const (
	smallPartSpans = 8_000
	smallScan      = 1.5
)

// traceGroup is a group of joined traces: its root (its lowest trace index), its first
// start, its spans.
type traceGroup struct {
	root  int32
	first int64
	spans int64
}

// joinSessions joins the traces of each session whose times overlap: an agent run joins
// through its session only a run of another trace that was running when it began
// (joinTraces), so a conversation whose turns are traces one after another (a chat of a
// thousand turns under one id) stays a thousand groups, each built on its own, rather than
// one group that holds every turn in memory at once.
func (sp *spillRun) joinSessions() {
	for _, p := range sp.sessions {
		ts := *p
		slices.SortFunc(ts, func(a, b int32) int { return cmp.Or(cmp.Compare(sp.first[a], sp.first[b]), cmp.Compare(a, b)) })
		prev, until := int32(-1), int64(math.MinInt64) // the latest trace of the overlapping run of traces, and its end
		for _, t := range ts {
			if prev >= 0 && t != prev && sp.first[t] <= until {
				sp.union(t, prev)
			}
			if prev < 0 || sp.first[t] > until {
				until = sp.last[t]
			} else {
				until = max(until, sp.last[t])
			}
			prev = t
		}
	}
	sp.sessions = nil
}

// groups are the run's groups of joined traces, in order of their first start.
func (sp *spillRun) groups() []*traceGroup {
	sp.joinSessions()
	byRoot := map[int32]*traceGroup{}
	var groups []*traceGroup
	for i := range sp.first {
		r := sp.find(int32(i))
		g := byRoot[r]
		if g == nil {
			g = &traceGroup{root: r, first: math.MaxInt64}
			byRoot[r] = g
			groups = append(groups, g)
		}
		g.first = min(g.first, sp.first[i])
		g.spans += sp.count[i]
	}
	// The root of a group is its lowest trace index, the first of its traces read: with
	// the first start, an order that does not depend on map iteration.
	if sp.byReading {
		// A mayday export writes its traces in the order of their root investigation's id,
		// and its parts' derived tables are computed in id order (storedOrder.flush),
		// each investigation held until every smaller id is sent. In order of first start,
		// a root that waited for a worker comes far after its id (research-fleet at 40,000
		// investigations over 44 hours held more than 300,000 records); read in order, only
		// subagents wait, for the roots that arrived before they started.
		slices.SortFunc(groups, func(x, y *traceGroup) int { return cmp.Compare(x.root, y.root) })
	} else {
		slices.SortFunc(groups, func(x, y *traceGroup) int { return cmp.Or(cmp.Compare(x.first, y.first), cmp.Compare(x.root, y.root)) })
	}
	return groups
}

// cutParts cuts groups, in their order, into parts of about size spans, and gives the part
// of each group by its root.
func cutParts(groups []*traceGroup, size int64) ([]spillPart, map[int32]int) {
	partOf := map[int32]int{}
	var parts []spillPart
	for _, g := range groups {
		if g.spans == 0 {
			continue // a trace only linked to
		}
		if len(parts) == 0 || parts[len(parts)-1].spans+g.spans > size && parts[len(parts)-1].spans > 0 {
			parts = append(parts, spillPart{})
		}
		partOf[g.root] = len(parts) - 1
		parts[len(parts)-1].spans += g.spans
	}
	return parts, partOf
}

// spillReadInPlace, set only by tests, is told of each spilled run whether its parts are
// read from the spill's chunks (else from files of their own).
var spillReadInPlace func(inPlace bool)

// directScan bounds what reading the parts from the spill's chunks may read, as a multiple
// of the spill: past it, a pass that copies each record into its part's file (read once,
// written once, read once more) reads less. A variable for tests.
var directScan = 2.0

// readInPlace sets each part's range of chunks, and each trace's part, and reports whether
// the parts are to be read from the chunks (the ranges read at most scan times the spill; a
// chunk read for two parts counts twice).
func (sp *spillRun) readInPlace(parts []spillPart, partOf map[int32]int, scan float64) bool {
	for i := range parts {
		parts[i].first, parts[i].last = math.MaxInt32, -1
	}
	sp.partOf = make([]int32, len(sp.first))
	for t := range sp.first {
		p, ok := partOf[sp.find(int32(t))]
		if !ok || sp.hi[t] < 0 {
			sp.partOf[t] = -1 // a trace only linked to
			continue
		}
		sp.partOf[t] = int32(p)
		parts[p].first, parts[p].last = min(parts[p].first, sp.lo[t]), max(parts[p].last, sp.hi[t])
	}
	read := 0
	for _, p := range parts {
		read += int(p.last-p.first) + 1
	}
	if float64(read) > scan*float64(len(sp.chunks.at)) {
		sp.partOf = nil
		return false
	}
	return true
}

// writeParts writes each record of the spill to the file of its part (partOf, by the root
// of its trace's group), naming the files in parts.
func (sp *spillRun) writeParts(parts []spillPart, partOf map[int32]int) error {
	files := make([]*os.File, len(parts))
	writers := make([]*s2.Writer, len(parts))
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	defer closeAll()
	for i := range parts {
		f, err := os.CreateTemp(sp.dir, "part-*.spill")
		if err != nil {
			return fmt.Errorf("%w: %w", errSpill, err)
		}
		files[i], writers[i], parts[i].path = f, newSpillWriter(f, 64<<10), f.Name()
	}
	// The spill is read and its records sorted into their parts here, while a goroutine of
	// its own compresses and writes each part's records: the two halves of the work take
	// about as long, and nothing else runs meanwhile. Records go over in chunks of one
	// part's records, in the order they were read, so each part file holds its records in
	// spill order.
	type chunk struct {
		part int
		b    []byte
	}
	const chunkSize = 64 << 10
	chunks, spare := make(chan chunk, 8), make(chan []byte, 16)
	written := make(chan error, 1)
	go func() {
		var err error
		for c := range chunks {
			if err == nil {
				_, err = writers[c.part].Write(c.b)
			}
			select {
			case spare <- c.b[:0]:
			default:
			}
		}
		for _, w := range writers {
			err = errors.Join(err, w.Close())
		}
		written <- err
	}()
	pending := make([][]byte, len(parts)) // each part's chunk being filled; nil: none yet
	cr := chunkReader{c: &sp.chunks}
	var rerr error
	for i := range sp.chunks.filling() {
		recs, err := cr.read(i)
		if err == nil {
			err = eachRecord(recs, func(t int32, rec []byte) error {
				if int(t) >= len(sp.first) {
					return errSpillCorrupt
				}
				part := partOf[sp.find(t)]
				if pending[part] == nil {
					select {
					case pending[part] = <-spare:
					default:
						pending[part] = make([]byte, 0, chunkSize)
					}
				}
				pending[part] = append(pending[part], rec...)
				if len(pending[part]) >= chunkSize {
					chunks <- chunk{part, pending[part]}
					pending[part] = nil
				}
				return nil
			})
		}
		if err != nil {
			rerr = err
			break
		}
	}
	for part, b := range pending {
		if len(b) > 0 {
			chunks <- chunk{part, b}
		}
	}
	close(chunks)
	if werr := <-written; rerr == nil && werr != nil {
		rerr = fmt.Errorf("%w: %w", errSpill, werr)
	}
	return rerr
}

// parts are the spill files run r is built from: nil when it holds its spans.
func (r *inRun) parts() ([]spillPart, error) {
	if r.spill == nil {
		return nil, nil
	}
	return r.spill.parts()
}

// eachPart calls fn with the run's spans a part at a time, first telling the first part:
// r itself when it holds its spans (parts nil), else each of parts read back in turn (its
// file removed once read). It counts each part's spans and conventions in ir first.
func (r *inRun) eachPart(ctx context.Context, parts []spillPart, conventions string, ir *ImportedRun, fn func(first bool, in *inRun) error) error {
	counted := func(first bool, in *inRun) error {
		for c, n := range in.convs {
			ir.Conventions[c] += n
		}
		ir.Spans += int64(len(in.spans))
		return fn(first, in)
	}
	if parts == nil {
		return counted(true, r)
	}
	// Each part is read back on a goroutine of its own while the one before it is built:
	// reading (decompressing, decoding, sharing the strings) was half of the goroutine that
	// builds them, the slower stage of a mayday export's load. One part waits read ahead.
	type readBack struct {
		in  *inRun
		err error
	}
	ahead, stop := make(chan readBack, 1), make(chan struct{})
	var reading sync.WaitGroup
	reading.Go(func() {
		defer close(ahead)
		for i, part := range parts {
			rb := readBack{err: ctx.Err()}
			if rb.err == nil {
				rb.in = &inRun{id: r.id, native: r.native, service: r.service, resource: r.resource, byKey: map[string]*inSpan{}, convs: map[string]int64{}}
				if part.path == "" {
					rb.err = r.spill.readChunks(int32(i), part, rb.in, conventions)
				} else {
					rb.err = readPart(part.path, rb.in, conventions)
					os.Remove(part.path)
				}
			}
			select {
			case ahead <- rb:
			case <-stop:
				return
			}
			if rb.err != nil {
				return
			}
		}
	})
	defer func() {
		close(stop)
		reading.Wait()
		r.spill.close() // the chunks the parts were read from, when they were, once nothing reads them
	}()
	i := 0
	for rb := range ahead {
		if rb.err != nil {
			return rb.err
		}
		if err := counted(i == 0, rb.in); err != nil {
			return err
		}
		i++
	}
	return nil
}

// eachPartAhead is eachPart with each part built (build, on a goroutine of its own) while
// the one before it is sent to the load (send, on the caller's: redacted, digested,
// batched): the two were one goroutine's work, and the limit of a spilled import's load.
// Parts are built and sent in order, each built after the one before it.
func eachPartAhead[T any](ctx context.Context, r *inRun, parts []spillPart, conventions string, ir *ImportedRun,
	build func(first bool, in *inRun) (T, error), send func(T)) error {
	ready := make(chan T)
	var berr error
	go func() {
		defer close(ready)
		berr = r.eachPart(ctx, parts, conventions, ir, func(first bool, in *inRun) error {
			x, err := build(first, in)
			if err == nil {
				ready <- x
			}
			return err
		})
	}()
	// Every part built is sent: the loop ends when the building ends (a cancelled context
	// ends it between parts), and berr is set before ready closes.
	for x := range ready {
		send(x)
	}
	return berr
}

// readChunks reads the spans of part p (numbered i) into r from the chunks that hold
// them, as readPart reads a part's file.
func (sp *spillRun) readChunks(i int32, p spillPart, r *inRun, forced string) error {
	cr := chunkReader{c: &sp.chunks}
	for c := p.first; c <= p.last; c++ {
		recs, err := cr.read(c)
		if err != nil {
			return err
		}
		err = eachRecord(recs, func(t int32, rec []byte) error {
			if int(t) >= len(sp.partOf) {
				return errSpillCorrupt
			}
			if sp.partOf[t] != i {
				return nil
			}
			return addSpilled(rec, r, forced)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readPart reads the spans of a part into r (a run holding no spans), as addSpan would
// have: an exporter's duplicate of a span is dropped, the rest classified.
func readPart(path string, r *inRun, forced string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := newSpillReader(f, 1<<20)
	var rec []byte
	for {
		_, body, err := readSpillRecord(rd, &rec)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := addSpilled(body, r, forced); err != nil {
			return err
		}
	}
}

// addSpilled adds the span of record rec to r (a part being read), as addSpan would have:
// an exporter's duplicate of a span is dropped, the rest classified.
func addSpilled(rec []byte, r *inRun, forced string) error {
	s, err := decodeSpill(rec, r)
	if err != nil {
		return err
	}
	if _, dup := r.byKey[s.key]; dup {
		return nil
	}
	s.classify(forced)
	r.convs[s.conv]++
	r.byKey[s.key] = s
	r.spans = append(r.spans, s)
	return nil
}

var errSpillCorrupt = fmt.Errorf("%w: a spill file is corrupt", errSpill)

// Spill files are compressed with S2 (github.com/klauspost/compress/s2), a block at a time
// on the goroutine that writes: traces from agent libraries carry prompts and messages
// that repeat from span to span, and written uncompressed their spill, written once and
// copied again into parts, was most of an import's system time and held the page cache's
// writeback busy (docs/performance.md, "Redaction of long values, again, and spills
// compressed").

// newSpillWriter compresses to f in blocks of up to block bytes. Close writes the last.
func newSpillWriter(f io.Writer, block int) *s2.Writer {
	return s2.NewWriter(f, s2.WriterConcurrency(1), s2.WriterBlockSize(block))
}

// newSpillReader reads what newSpillWriter wrote, through a buffer of size bytes.
func newSpillReader(f io.Reader, size int) *bufio.Reader {
	return bufio.NewReaderSize(s2.NewReader(f, s2.ReaderMaxBlockSize(1<<20)), size)
}

// A spill record: its length (uvarint, counting what follows), the trace index (uvarint),
// then the span: key, parent, name, start, end, status code, status message, attributes,
// events, links, and the rows an export's span carries (appendRows). Strings are a uvarint
// length and the bytes; an attribute its key, its kind and its value (a string, a uvarint,
// or a protobuf AnyValue for the other kinds).

// appendSpill appends the record of s, of trace index trace, to b. body is scratch space
// for the record's body, returned grown for the next record: a spill writes millions.
func appendSpill(b, body []byte, trace int32, s *inSpan) (rec, scratch []byte) {
	body = binary.AppendUvarint(body[:0], uint64(trace))
	body = appendStr(body, s.key)
	body = appendStr(body, s.parent)
	body = appendStr(body, s.name)
	body = binary.AppendVarint(body, s.start)
	body = binary.AppendVarint(body, s.end)
	body = binary.AppendVarint(body, int64(s.code))
	body = appendStr(body, s.msg)
	body = appendAttrs(body, s.attrs)
	body = binary.AppendUvarint(body, uint64(len(s.events)))
	for _, e := range s.events {
		body = appendStr(body, e.name)
		body = appendAttrs(body, e.attrs)
	}
	body = binary.AppendUvarint(body, uint64(len(s.links)))
	for _, l := range s.links {
		body = appendStr(body, l.key)
		ok := byte(0)
		if l.ok {
			ok = 1
		}
		body = append(body, ok)
	}
	body = appendRows(body, s.rows)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...), body
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendAttrs(b []byte, attrs []spanAttr) []byte {
	b = binary.AppendUvarint(b, uint64(len(attrs)))
	for _, a := range attrs {
		b = appendStr(b, a.key)
		b = append(b, byte(a.val.kind))
		switch a.val.kind {
		case attrString:
			b = appendStr(b, a.val.s)
		case attrInt, attrDouble, attrBool:
			b = binary.AppendUvarint(b, a.val.n)
		case attrOther:
			v, _ := proto.MarshalOptions{Deterministic: true}.Marshal(a.val.v) // a value decoded from a request marshals
			b = appendStr(b, string(v))
		}
	}
	return b
}

// readSpillRecord reads one record into *buf and returns its trace index and the whole
// record (length prefix included, ready to be written to a part as it is).
func readSpillRecord(rd *bufio.Reader, buf *[]byte) (int32, []byte, error) {
	n, err := binary.ReadUvarint(rd)
	if err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		return 0, nil, errSpillCorrupt
	}
	if n > math.MaxInt32 {
		return 0, nil, errSpillCorrupt
	}
	*buf = binary.AppendUvarint((*buf)[:0], n)
	head := len(*buf)
	*buf = slices.Grow(*buf, int(n))[:head+int(n)]
	if _, err := io.ReadFull(rd, (*buf)[head:]); err != nil {
		return 0, nil, errSpillCorrupt
	}
	t, err := spillTrace((*buf)[head:])
	return t, *buf, err
}

// spillTrace is the trace index a record's body begins with.
func spillTrace(body []byte) (int32, error) {
	t, k := binary.Uvarint(body)
	if k <= 0 || t > math.MaxInt32 {
		return 0, errSpillCorrupt
	}
	return int32(t), nil
}

// spillReader reads the fields of a record's body.
type spillReader struct {
	b   []byte
	err bool
}

func (d *spillReader) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *spillReader) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *spillReader) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = true, nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *spillReader) str() string { return string(d.bytes()) }

func (d *spillReader) byte1() byte {
	if len(d.b) == 0 {
		d.err = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// count reads a list's length, no more than the bytes left could hold.
func (d *spillReader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = true, nil
		return 0
	}
	return int(n)
}

func (d *spillReader) attrs(r *inRun) []spanAttr {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := r.attrArena.take(&attrBlocks, n, arenaBlock)
	for i := range out {
		out[i].key = r.internBytes(d.bytes())
		kind := attrKind(d.byte1())
		out[i].val.kind = kind
		switch kind {
		case attrString:
			out[i].val.s = r.internBytes(d.bytes())
		case attrInt, attrDouble, attrBool:
			out[i].val.n = d.uvarint()
		case attrOther:
			v := &commonpb.AnyValue{}
			if proto.Unmarshal(d.bytes(), v) != nil {
				d.err = true
			}
			out[i].val.v = v
		case attrNil, attrNone:
		default:
			d.err = true
		}
	}
	return out
}

// decodeSpill is the span of a record (as readSpillRecord returns it), in run r.
func decodeSpill(rec []byte, r *inRun) (*inSpan, error) {
	d := &spillReader{b: rec}
	n := d.uvarint()
	if d.err || n != uint64(len(d.b)) {
		return nil, errSpillCorrupt
	}
	d.uvarint() // the trace index
	s := &r.spanArena.take(&spanBlocks, 1, arenaBlock)[0]
	s.run = r
	s.key = r.partText(d.bytes())
	s.parent = r.partText(d.bytes())
	s.name = r.internBytes(d.bytes())
	s.start, s.end = d.varint(), d.varint()
	s.code = tracepb.Status_StatusCode(d.varint())
	s.msg = d.str()
	s.attrs = d.attrs(r)
	if n := d.count(); n > 0 {
		s.events = r.eventArena.take(&eventBlocks, n, arenaBlock)
		for i := range s.events {
			s.events[i] = spanEvent{name: r.internBytes(d.bytes()), attrs: d.attrs(r)}
		}
	}
	if n := d.count(); n > 0 {
		s.links = make([]spanLink, n)
		for i := range s.links {
			s.links[i] = spanLink{key: r.partText(d.bytes()), ok: d.byte1() == 1}
		}
	}
	s.rows = d.rows(r)
	if d.err || len(d.b) != 0 || len(s.key) != 48 {
		return nil, errSpillCorrupt
	}
	s.traceHex, s.otlpID = s.key[:32], s.key[32:]
	return s, nil
}

// spillDir is the folder an import spills to: a new folder beside the database (where
// the user has room for the data), or in the system's temporary folder for a database
// in memory.
func spillDir(dbPath string) (string, error) {
	parent := os.TempDir()
	if dbPath != "" {
		parent = filepath.Dir(dbPath)
	}
	dir, err := os.MkdirTemp(parent, "import-spill-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", errSpill, err)
	}
	return dir, nil
}
