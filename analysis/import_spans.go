package analysis

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mayday-sim/mayday/traces"
)

// The spans of an import, kept in a compact form until every file is read (a trace's
// spans may arrive in any order, children before parents, across files).

// Conventions an import maps.
const (
	ConvAuto          = "auto"
	ConvGenAI         = "genai"
	ConvOpenInference = "openinference"
	ConvOpenLLMetry   = "openllmetry"
	ConvAISDK         = "aisdk"
	ConvADK           = "adk"
	ConvLangSmith     = "langsmith"
	ConvLangfuse      = "langfuse"
	ConvMayday        = "mayday" // a mayday export: gen_ai.* plus mayday.*
)

// spanRole is what an imported span is to mayday.
type spanRole int

const (
	roleOther     spanRole = iota // kept only as a link between its parent and children
	roleAgent                     // an investigation (invoke_agent, AGENT)
	roleModel                     // a model turn (chat, LLM)
	roleTool                      // a tool attempt (execute_tool, TOOL, RETRIEVER)
	roleHuman                     // a human step (a span named for a human review)
	roleSupervise                 // a supervisor step (a span named for a supervisor)
	roleValidate                  // mayday exports only: a validation
	roleInspect                   // mayday exports only: a lookup
	roleTakeover                  // mayday exports only: a crashed worker's takeover
)

// inSpan is one imported span.
type inSpan struct {
	run          *inRun
	key, parent  string       // trace id + span id (hex), the parent's; parent "" for a root
	up           *inSpan      // the parent span in the run or part being built, nil when it is not in the data (linkParents)
	anc          spanAncestry // its nearest agent and the top of its chain (findAncestry)
	otlpID       string       // the span id alone (hex)
	name         string
	start, end   int64 // Unix nanoseconds
	code         tracepb.Status_StatusCode
	msg          string
	attrs        []spanAttr
	events       []spanEvent // every event of a mayday export's span but those rows carry; only exceptions otherwise
	rows         *nativeRows // the rows a mayday export's span carries in its events (nil: none)
	links        []spanLink
	traceHex     string
	conv         string      // the convention's name (ConvMayday for a mayday export)
	cv           *convention // the convention (nil for a mayday export)
	role         spanRole
	inv          *inInv // the investigation it belongs to
	id           uint64 // mayday span id
	errType      string // error.type, else the last exception event's type
	failureClass string
	status       string
	cycle        bool // its parent link closed a loop and was cut
	chain        bool // of one of its convention's ChainKinds: an agent where it stands (agentChains)
	missingRoot  bool // it stands for a trace's root span that is not in the data
}

// spanAncestry is a span's nearest agent ancestor (itself when it is one; nil when it has
// none) and the top of its chain (the trace's root, or the top of an orphan fragment); top
// is nil until findAncestry has reached the span.
type spanAncestry struct{ agent, top *inSpan }

// inRun collects the spans of one run: every span of a mayday export's run (its resource
// names mayday.run_id), or of one service (service.name) of everything else imported.
type inRun struct {
	id       string
	native   bool
	service  string // service.name of a run of plain spans ("" when the resource names none)
	resource map[string]*commonpb.AnyValue
	spans    []*inSpan
	byKey    map[string]*inSpan
	convs    map[string]int64       // spans by conventions
	interned map[string]string      // attribute keys and short string values, each held once
	recent   *[recentStrings]string // the strings interned last, in front of interned (recentSlot)
	spill    *spillRun              // the spill its spans go to once the import holds too many (nil: held in spans)
	// While it spills: the span being written, its attributes and events (newSpan).
	spilling    inSpan
	spillAttrs  []spanAttr
	spillEvents []spanEvent
	spillEvAt   []int      // where each event's attributes start in spillAttrs
	spillRows   nativeRows // the rows it carries
	// A part read back from the spill makes its spans, attributes and events in blocks
	// (arena): one allocation for many, given back with the part (release).
	spanArena  arena[inSpan]
	attrArena  arena[spanAttr]
	eventArena arena[spanEvent]
	text       arena[byte] // the blocks partText copies into
}

// release lets the run's spans go once its records are built: nothing reads them after,
// and the blocks they were made in go back to their pools for the parts after it.
func (r *inRun) release() {
	r.spans, r.byKey, r.interned, r.recent, r.text = nil, nil, nil, nil, arena[byte]{}
	r.spanArena.giveBack(&spanBlocks, maxPoolBlocks, true)
	r.attrArena.giveBack(&attrBlocks, maxPoolBlocks, true)
	r.eventArena.giveBack(&eventBlocks, maxPoolBlocks, true)
}

// arenaBlock is how many elements a block of a part's arena holds.
const arenaBlock = 4096

// arena is the blocks objects of one kind are made in, many at a time (a part's spans,
// attributes and events; a request's unescaped text): cur is what is left of the block in
// use, taken every block the arena took.
type arena[T any] struct {
	cur   []T
	taken [][]T
}

// take returns n elements of the block in use, starting a new block of block elements (one
// given back to pool, when pool is not nil and has one) when it has too few left; more than
// a block's n are a list of their own. The elements are the caller's, capped so that
// appending to them copies, and zero unless pool gives back its blocks uncleared.
func (a *arena[T]) take(pool *freeSlabs[T], n, block int) []T {
	if n > block {
		return make([]T, n)
	}
	if cap(a.cur)-len(a.cur) < n {
		var b []T
		if pool != nil {
			b = pool.get()[:0]
		}
		if cap(b) == 0 {
			b = make([]T, 0, block)
		}
		a.taken = append(a.taken, b)
		a.cur = b
	}
	i := len(a.cur)
	a.cur = a.cur[:i+n]
	return a.cur[i : i+n : i+n]
}

// giveBack gives the blocks the arena took to pool (none when it is nil), which keeps up
// to keep and clears them when clearing. A part's blocks are given back cleared: a fresh
// block was zeroed by the allocator anyway, and the part's spans, attributes and events
// were most of what a spilled import allocated, and so of its collections
// (docs/performance.md, "Import: fewer copies, lookups and allocations").
func (a *arena[T]) giveBack(pool *freeSlabs[T], keep int, clearing bool) {
	if pool != nil {
		pool.put(a.taken, keep, clearing)
	}
	a.cur, a.taken = nil, nil
}

// maxPoolBlocks is how many blocks of a kind the parts' pools keep: two parts of 25,000
// spans' worth (a block of spans is 1.2 MB). An import empties them as it ends
// (dropPartBlocks).
const maxPoolBlocks = 16

// dropPartBlocks lets go of the blocks the parts' pools keep.
func dropPartBlocks() {
	spanBlocks.drop()
	attrBlocks.drop()
	eventBlocks.drop()
}

// The blocks of parts released, for the parts read after them (on another goroutine).
var (
	spanBlocks  freeSlabs[inSpan]
	attrBlocks  freeSlabs[spanAttr]
	eventBlocks freeSlabs[spanEvent]
)

// maxInterned bounds the strings a run shares (what passes it is held as it came), and
// maxInternLen the length of a value shared: keys and values such as tool, model and
// status names repeat on span after span, ids and messages do not.
const (
	maxInterned  = 1 << 16
	maxInternLen = 64
)

// intern returns the run's copy of text, so that the spans of a run share one copy of
// each attribute key and short value and the request they came in is let go.
//
// A span's strings are parts of the whole request it was decoded from (slabs): a run that
// holds its spans takes copies, so that what it holds is what it keeps and not every
// request whole; a run that spills writes its spans out at once and keeps no string but
// those it shares.
func (r *inRun) intern(text string) string {
	if len(text) > maxInternLen {
		return r.own(text)
	}
	return r.shared(text)
}

// internBytes is intern for b, a part of a spill record being read: the run's copy when it
// has one (looked up without making a string first), else a string of its own.
func (r *inRun) internBytes(b []byte) string {
	if len(b) > maxInternLen {
		return r.partText(b)
	}
	return r.shared(unsafe.String(unsafe.SliceData(b), len(b)))
}

// shared is the run's copy of text, a short one: found in front of interned (recentSlot)
// or in it, else a copy (text is a part of a request or of a spill record), shared while
// there is room.
func (r *inRun) shared(text string) string {
	slot := r.recentSlot(text)
	if *slot == text {
		return *slot
	}
	t, ok := r.interned[text]
	if !ok {
		t = r.share(strings.Clone(text))
	}
	*slot = t
	return t
}

// partText is b as a string of a part read back from the spill, for the strings nothing
// keeps past the part (span ids, long attribute values): copied into the part's current
// text block, one allocation for many strings instead of one each. A block is never
// written again where a string lies, nor reused: the collector frees it once no string
// points into it. A value longer than a quarter of a block has a string of its own.
// Measured on the LangGraph fixture copied 100 times, whose prompts are most of the
// spill: docs/performance.md, "Import: a part's strings in blocks".
func (r *inRun) partText(b []byte) string { return textIn(&r.text, nil, b, partTextBlock) }

// partTextBlock is the size of a part's text blocks: small enough that a string kept past
// its part (none is meant to be) holds little memory with it.
const partTextBlock = 64 << 10

// recentStrings is how many strings a run remembers in front of interned, each in the slot
// its text hashes to: the keys and values of a run's spans come back span after span, and
// comparing one slot is a fraction of a lookup in a map of up to maxInterned strings
// (docs/performance.md, "Import: fewer copies, lookups and allocations").
const recentStrings = 1 << 11

// recentSlot is the slot of recent that text belongs in. The hash mixes the length and the
// first and last eight bytes (every byte of a shorter text): a slot holding another
// string is a miss, never a wrong answer, since the caller compares the whole text.
func (r *inRun) recentSlot(text string) *string {
	if r.recent == nil {
		r.recent = new([recentStrings]string)
	}
	const mul = 0x9e3779b97f4a7c15
	h := uint64(len(text))
	if n := len(text); n >= 8 {
		h = (h ^ le64(text)) * mul
		h ^= le64(text[n-8:])
	} else {
		for i := 0; i < n; i++ {
			h = h<<8 | uint64(text[i])
		}
	}
	return &r.recent[(h*mul)>>(64-11)]
}

// le64 is the first eight bytes of s (at least eight long), little-endian.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// share adds text, a string of the run's own, to the strings its spans share, while there
// is room, and returns it.
func (r *inRun) share(text string) string {
	if r.interned == nil {
		r.interned = map[string]string{}
	}
	if len(r.interned) < maxInterned {
		r.interned[text] = text
	}
	return text
}

// own is text as the run keeps it: a copy, unless the run spills.
func (r *inRun) own(text string) string {
	if r.spill != nil {
		return text
	}
	return strings.Clone(text)
}

// spanSet is every span read so far, by run.
type spanSet struct {
	runs     []*inRun
	byID     map[string]*inRun
	forced   string // --conventions, or ConvAuto
	defRunID string
	service  string           // --service: keep only this service's spans ("" = every service)
	skipped  map[string]int64 // spans of other services than --service, by service
	spans    int64
	dbPath   string // the database's file, beside which the runs spill ("" = in memory)
	maxRuns  int    // ReadLimits.Runs (0: no cap)
	spillTo  string // the spill folder, once made
}

// spillIfFull makes every run spill (import_spill.go) once the runs hold more than
// spillSpans spans together; a run that begins after that spills from its first span.
func (s *spanSet) spillIfFull() error {
	if s.spillTo != "" {
		return nil
	}
	held := int64(0)
	for _, r := range s.runs {
		held += int64(len(r.spans))
	}
	if held <= spillSpans {
		return nil
	}
	dir, err := spillDir(s.dbPath)
	if err != nil {
		return err
	}
	s.spillTo = dir
	for _, r := range s.runs {
		if err := r.startSpill(dir); err != nil {
			return err
		}
	}
	return nil
}

// closeSpill removes the spill folder and everything in it.
func (s *spanSet) closeSpill() {
	for _, r := range s.runs {
		if r.spill != nil {
			r.spill.close()
		}
	}
	if s.spillTo != "" {
		os.RemoveAll(s.spillTo)
	}
}

// startSpill writes the spans r holds to a new spill and lets them go; r's later spans go
// to the spill as they are read.
func (r *inRun) startSpill(dir string) error {
	sp, err := newSpillRun(dir)
	if err != nil {
		return err
	}
	r.spill = sp
	sp.byReading = r.native
	for _, x := range r.spans {
		if err := sp.add(x); err != nil {
			return err
		}
	}
	r.spans, r.byKey, r.convs = nil, map[string]*inSpan{}, map[string]int64{}
	return nil
}

func newSpanSet(conventions, runID, service string) *spanSet {
	return &spanSet{byID: map[string]*inRun{}, forced: conventions, defRunID: runID, service: service, skipped: map[string]int64{}}
}

func (s *spanSet) run(key string, native bool) (*inRun, error) {
	if r, ok := s.byID[key]; ok {
		return r, nil
	}
	if s.maxRuns > 0 && len(s.runs) >= s.maxRuns {
		return nil, refuse("more than %d runs in the input (one per service.name, and one per run of a mayday export; --service NAME imports one service, --max-runs raises the cap)", s.maxRuns)
	}
	key = strings.Clone(key) // a run id can be a part of the request (slabs), whose memory is read into again
	r := &inRun{id: key, native: native, resource: map[string]*commonpb.AnyValue{}, byKey: map[string]*inSpan{}, convs: map[string]int64{}}
	s.byID[key] = r
	s.runs = append(s.runs, r)
	if s.spillTo != "" {
		if err := r.startSpill(s.spillTo); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// add takes the spans of one request; where names it for errors.
func (s *spanSet) add(req *coltracepb.ExportTraceServiceRequest, where string) error {
	for _, rs := range req.ResourceSpans {
		res := map[string]*commonpb.AnyValue{}
		if rs.Resource != nil {
			for _, kv := range rs.Resource.Attributes {
				res[kv.Key] = kv.Value
			}
		}
		service := res["service.name"].GetStringValue()
		var r *inRun
		var err error
		if v := res["mayday.run_id"].GetStringValue(); v != "" && s.forced == ConvAuto {
			r, err = s.run(v, true)
		} else {
			if s.service != "" && service != s.service {
				// Kept, so not a part of the request (slabs), whose memory is read into
				// again; every time, since assigning to a map replaces its string key.
				service = strings.Clone(service)
				for _, ss := range rs.ScopeSpans {
					s.skipped[service] += int64(len(ss.Spans))
				}
				continue
			}
			r, err = s.run("service:"+service, false)
			if r != nil && r.service != service {
				r.service = strings.Clone(service)
			}
		}
		if errors.Is(err, ErrBadTraceInput) {
			return fmt.Errorf("%s: %w", where, err)
		} else if err != nil {
			return err
		}
		for k, v := range res {
			if _, ok := r.resource[k]; !ok || isCarried(k) {
				r.resource[strings.Clone(k)] = ownValue(v)
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				if err := r.addSpan(sp, s.forced); err != nil {
					if errors.Is(err, errSpill) {
						return err
					}
					return fmt.Errorf("%s: %w: %v", where, ErrBadTraceInput, err)
				}
				s.spans++
			}
		}
	}
	return nil
}

// nameRuns gives the runs of plain spans their ids: --run-id when there is one service,
// else --run-id and the service's name (letters, digits, '.', '_' and '-'). It returns an
// error when a name is taken twice.
func (s *spanSet) nameRuns(red *traces.Redactor) error {
	var plain []*inRun
	for _, r := range s.runs {
		if !r.native {
			plain = append(plain, r)
		}
	}
	taken := map[string]bool{}
	for _, r := range s.runs {
		if r.native {
			taken[r.id] = true
		}
	}
	for _, r := range plain {
		r.id = s.defRunID
		if len(plain) > 1 {
			r.id = s.defRunID + "-" + slugID(red.Attr("service.name", r.service))
		}
		if taken[r.id] {
			return fmt.Errorf("%w: run id %q is taken twice (services %q); name the run with --run-id or keep one service with --service", ErrBadTraceInput, r.id, r.service)
		}
		taken[r.id] = true
	}
	return nil
}

// slugID is text as a run id's part: runs of other characters become one '-'.
func slugID(text string) string {
	var b strings.Builder
	dash := false
	for _, c := range text {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
		switch {
		case ok && b.Len() < 60:
			b.WriteRune(c)
			dash = false
		case !ok && !dash && b.Len() > 0 && b.Len() < 60:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(strings.ReplaceAll(b.String(), "..", "."), "-.")
	if out == "" {
		return "unnamed"
	}
	return out
}

func (r *inRun) addSpan(sp *tracepb.Span, forced string) error {
	if len(sp.TraceId) != 16 || len(sp.SpanId) != 8 {
		return fmt.Errorf("span %q: trace id of %d bytes and span id of %d bytes (want 16 and 8)", sp.Name, len(sp.TraceId), len(sp.SpanId))
	}
	if sp.EndTimeUnixNano != 0 && sp.EndTimeUnixNano < sp.StartTimeUnixNano {
		return fmt.Errorf("span %q (%x) ends before it starts", sp.Name, sp.SpanId)
	}
	// One string for the trace id and span id, one for the trace id and parent's span id.
	var text [48]byte
	hex.Encode(text[:32], sp.TraceId)
	hex.Encode(text[32:], sp.SpanId)
	key := string(text[:])
	th := key[:32]
	s := r.newSpan()
	*s = inSpan{run: r, key: key, traceHex: th, otlpID: key[32:], name: r.own(sp.Name),
		start: int64(sp.StartTimeUnixNano), end: int64(sp.EndTimeUnixNano),
	}
	if len(sp.ParentSpanId) == 8 {
		hex.Encode(text[32:], sp.ParentSpanId)
		s.parent = string(text[:])
	}
	if sp.Status != nil {
		s.code, s.msg = sp.Status.Code, r.own(sp.Status.Message)
	}
	if _, dup := r.byKey[s.key]; dup && r.spill == nil {
		return nil // the same span sent twice (an exporter's retry): keep the first (a spilled run drops it when it reads it back)
	}
	if r.spill != nil {
		// Written out at once: the span's attributes and events' go in the run's buffers.
		r.spillAttrs = r.appendAttrs(r.spillAttrs[:0], sp.Attributes)
		n := len(r.spillAttrs)
		s.attrs, s.events, r.spillEvAt = r.spillAttrs, r.spillEvents[:0], r.spillEvAt[:0]
		rows := &r.spillRows
		rows.reset()
		for _, e := range sp.Events {
			if r.native && isRowEvent(e.Name) {
				rows.add(e.Name, e.Attributes, asIs) // written out at once
				s.rows = rows
				continue
			}
			if r.keepsEvent(s, e.Name) {
				r.spillEvAt = append(r.spillEvAt, len(r.spillAttrs))
				r.spillAttrs = r.appendAttrs(r.spillAttrs, e.Attributes)
				s.events = append(s.events, spanEvent{name: r.intern(e.Name)})
			}
		}
		r.spillEvAt = append(r.spillEvAt, len(r.spillAttrs))
		s.attrs = r.spillAttrs[:n] // spillAttrs may have moved as the events' were added
		for i := range s.events {
			s.events[i].attrs = r.spillAttrs[r.spillEvAt[i]:r.spillEvAt[i+1]]
		}
		r.spillEvents = s.events
	} else {
		s.attrs = r.compactAttrs(sp.Attributes)
		for _, e := range sp.Events {
			if r.native && isRowEvent(e.Name) {
				if s.rows == nil {
					s.rows = &nativeRows{}
				}
				s.rows.add(e.Name, e.Attributes, r.intern)
				continue
			}
			if r.keepsEvent(s, e.Name) {
				s.events = append(s.events, spanEvent{name: r.intern(e.Name), attrs: r.compactAttrs(e.Attributes)})
			}
		}
	}
	if len(sp.Links) > 0 {
		s.links = make([]spanLink, len(sp.Links))
		for i, l := range sp.Links {
			s.links[i] = spanLink{key: hex.EncodeToString(l.TraceId) + hex.EncodeToString(l.SpanId), ok: len(l.TraceId) == 16 && len(l.SpanId) == 8}
		}
	}
	s.classify(forced)
	if r.spill != nil {
		return r.spill.add(s)
	}
	r.convs[s.conv]++
	r.byKey[s.key] = s
	r.spans = append(r.spans, s)
	return nil
}

// spanAttr is one attribute of a kept span, in a compact form: a request's protobuf
// objects for one attribute (a KeyValue, an AnyValue and its kind) cost about 200 bytes,
// this 56 and a key shared by every span that has it (spanSet.intern).
type spanAttr struct {
	key string
	val attrValue
}

// spanEvent is an event of a kept span: its name and attributes.
type spanEvent struct {
	name  string
	attrs []spanAttr
}

// spanLink is a link of a kept span: the linked span's trace id and span id (hex), and
// whether they have the lengths of ids (16 and 8 bytes).
type spanLink struct {
	key string
	ok  bool
}

// ownValue is a copy of v that shares no memory with the request it was decoded from (a
// decoded request's strings are parts of its whole text, slabs), for what outlives the
// request: a run's resource attributes, a held span's arrays and maps.
func ownValue(v *commonpb.AnyValue) *commonpb.AnyValue {
	switch x := v.GetValue().(type) {
	case nil:
		return v
	case *commonpb.AnyValue_StringValue:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: strings.Clone(x.StringValue)}}
	}
	b, err := proto.Marshal(v)
	out := &commonpb.AnyValue{}
	if err != nil || proto.Unmarshal(b, out) != nil {
		return proto.Clone(v).(*commonpb.AnyValue) // a value decoded always encodes; never reached
	}
	return out
}

// keepsEvent reports whether span s keeps an event of this name, after the events it kept
// so far.
func (r *inRun) keepsEvent(s *inSpan, name string) bool {
	if !readsEvent(r.native, name) {
		return false
	}
	// What a convention reads is in the first (a chat span repeats the conversation's messages).
	return r.native || name == readEvent || !slices.ContainsFunc(s.events, func(k spanEvent) bool { return k.name == name })
}

// newSpan is where addSpan makes a span: a new one while the run holds its spans, else
// the run's one span being spilled (written out at once, read back later), so that a
// spilling import makes no span and no list of attributes for each span it reads.
func (r *inRun) newSpan() *inSpan {
	if r.spill != nil {
		return &r.spilling
	}
	return &inSpan{}
}

// compactAttrs is attributes in the compact form.
func (r *inRun) compactAttrs(kvs []*commonpb.KeyValue) []spanAttr {
	if len(kvs) == 0 {
		return nil
	}
	return r.appendAttrs(make([]spanAttr, 0, len(kvs)), kvs)
}

// appendAttrs appends attributes in the compact form to out.
func (r *inRun) appendAttrs(out []spanAttr, kvs []*commonpb.KeyValue) []spanAttr {
	intern := r.intern
	if r.spill != nil {
		// Written out at once, read back (and shared then) with the run's part.
		intern = func(s string) string { return s }
	}
	for _, kv := range kvs {
		a := spanAttr{key: intern(kv.Key), val: compactValue(kv.Value, intern)}
		if a.val.kind == attrOther && r.spill == nil {
			a.val.v = ownValue(a.val.v)
		}
		out = append(out, a)
	}
	return out
}

// attrValue is an attribute's value: a string, an integer, a double or a boolean held as
// itself, any other kind (bytes, arrays, maps) as its protobuf value.
type attrValue struct {
	s    string
	n    uint64             // an integer, a double's bits, a boolean (1)
	v    *commonpb.AnyValue // bytes, arrays and maps
	kind attrKind
}

type attrKind uint8

const (
	attrNil  attrKind = iota // no value at all (a KeyValue without one): attr reads it as absent
	attrNone                 // a value of no kind
	attrString
	attrInt
	attrDouble
	attrBool
	attrOther // v
)

// compactValue is v as an attrValue; strings pass through intern.
func compactValue(v *commonpb.AnyValue, intern func(string) string) attrValue {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return attrValue{kind: attrString, s: intern(x.StringValue)}
	case *commonpb.AnyValue_IntValue:
		return attrValue{kind: attrInt, n: uint64(x.IntValue)}
	case *commonpb.AnyValue_DoubleValue:
		return attrValue{kind: attrDouble, n: math.Float64bits(x.DoubleValue)}
	case *commonpb.AnyValue_BoolValue:
		var n uint64
		if x.BoolValue {
			n = 1
		}
		return attrValue{kind: attrBool, n: n}
	case nil:
		if v == nil {
			return attrValue{}
		}
		return attrValue{kind: attrNone}
	}
	return attrValue{kind: attrOther, v: v}
}

// text is the value as anyText prints it.
func (a *attrValue) text() string {
	switch a.kind {
	case attrString:
		return a.s
	case attrInt:
		return strconv.FormatInt(int64(a.n), 10)
	case attrDouble:
		return strconv.FormatFloat(math.Float64frombits(a.n), 'g', -1, 64)
	case attrBool:
		return strconv.FormatBool(a.n == 1)
	case attrOther:
		return anyText(a.v)
	}
	return ""
}

func (a *attrValue) str() string {
	if a.kind == attrString {
		return a.s
	}
	return ""
}

func (a *attrValue) int() int64 {
	if a.kind == attrInt {
		return int64(a.n)
	}
	return 0
}

func (a *attrValue) bool() bool { return a.kind == attrBool && a.n == 1 }

// float is a double, or an integer as one.
func (a *attrValue) float() float64 {
	switch a.kind {
	case attrInt:
		return float64(int64(a.n))
	case attrDouble:
		return math.Float64frombits(a.n)
	}
	return 0
}

// attr returns the value of attribute key (the first of that key), or nil.
func (s *inSpan) attr(key string) *attrValue {
	for i := range s.attrs {
		if s.attrs[i].key == key {
			if s.attrs[i].val.kind == attrNil {
				return nil
			}
			return &s.attrs[i].val
		}
	}
	return nil
}

func (s *inSpan) str(keys ...string) string {
	for _, k := range keys {
		if v := s.attr(k); v != nil {
			if t := v.text(); t != "" {
				return t
			}
		}
	}
	return ""
}

func (s *inSpan) num(keys ...string) (int64, bool) {
	for _, k := range keys {
		var v *attrValue
		if base, field, ok := strings.Cut(k, "#"); ok {
			// a field of a JSON object held as a string (checked as a count on reading),
			// read as the attribute it would be
			if b := s.attr(base); b != nil && b.kind == attrString {
				if n, ok := jsonObject(b.s, []string{field})[field]; ok {
					a := compactValue(n.anyValue(), nil)
					v = &a
				}
			}
		} else {
			v = s.attr(k)
		}
		if v == nil {
			continue
		}
		switch v.kind {
		case attrInt:
			return int64(v.n), true
		case attrDouble:
			return int64(math.Float64frombits(v.n)), true
		case attrString:
			if n, err := strconv.ParseInt(v.s, 10, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// anyText is an attribute value as text: strings as they are, numbers and booleans as Go
// prints them, arrays and maps as JSON-like text.
func anyText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_BytesValue:
		return bytesText(x.BytesValue) // import_check.go
	case *commonpb.AnyValue_ArrayValue:
		parts := make([]string, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, strconv.Quote(anyText(e)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *commonpb.AnyValue_KvlistValue:
		parts := make([]string, 0, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			parts = append(parts, strconv.Quote(kv.Key)+":"+strconv.Quote(anyText(kv.Value)))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return ""
}

// classify finds the span's conventions and role, and its outcome.
func (s *inSpan) classify(forced string) {
	mayOp := s.str("mayday.operation")
	switch {
	case forced != ConvAuto:
		s.cv = conventionNamed(forced)
	case mayOp != "" && s.run.native:
		s.conv = ConvMayday
	default:
		s.cv = detectConvention(s)
	}
	if s.cv != nil {
		s.conv = s.cv.Name
	}
	if s.conv == ConvMayday {
		s.role = maydayRole(mayOp)
	} else {
		s.role = s.cv.role(s)
		s.chain = s.role == roleOther && s.cv.isChain(s)
		s.roleByName()
	}
	s.outcome()
}

// roleByName completes the role the convention gave a plain span. A span of no role is a
// human step when its name says so (a graph's human_review node, but not a chain at a
// trace's root, the agent of its graph), and a span of no kind at all a supervisor step.
// What the convention says a span is wins: an agent named supervisor, a tool named
// ask_human, and a graph's supervisor node, which is the agent that hands out the work, not
// an overseer. A handoff tool is a step.
func (s *inSpan) roleByName() {
	switch name := strings.ToLower(s.name); {
	case s.role == roleOther && strings.Contains(name, "human") && !(s.chain && s.parent == ""):
		s.role, s.chain = roleHuman, false
	case s.role == roleOther && strings.Contains(name, "supervis") && !s.chain:
		s.role = roleSupervise
	case s.role == roleTool && isHandoff(s.cv.toolName(s)):
		s.role = roleOther // the agent handing the work on, not a tool doing it
	}
}

func maydayRole(op string) spanRole {
	switch op {
	case "invoke_agent":
		return roleAgent
	case "plan":
		return roleModel
	case "execute_tool":
		return roleTool
	case "human_review":
		return roleHuman
	case "supervise":
		return roleSupervise
	case "validate":
		return roleValidate
	case "inspect":
		return roleInspect
	case "takeover":
		return roleTakeover
	}
	return roleOther
}

// outcome sets the span's status and failure class from its OTLP status, its error type
// (the convention's error.type, else the first exception event's exception.type) and the
// first line of its messages. A stack trace never decides a class: OpenInference and
// others put the whole stack in the status message, and the stack names timers, policies
// and budgets of the code it passed through.
func (s *inSpan) outcome() {
	keys := []string{"error.type"}
	if s.cv != nil {
		keys = s.cv.ErrorType
	}
	s.errType = s.str(keys...)
	excMsg, exception := "", false
	for _, e := range s.events {
		if e.name != "exception" {
			continue
		}
		exception = true
		for _, kv := range e.attrs {
			switch kv.key {
			case "exception.type":
				if t := firstLine(kv.val.text()); s.errType == "" || s.genericError(s.errType) && t != "" && !s.genericError(t) {
					s.errType = t
				}
			case "exception.message":
				if excMsg == "" {
					excMsg = firstLine(kv.val.text())
				}
			}
		}
	}
	if s.cv != nil && len(s.cv.ErrorLevel) > 0 && strings.EqualFold(s.str(s.cv.ErrorLevel...), "ERROR") {
		// the library's failure is a level: the span failed, with the message it wrote
		s.code = tracepb.Status_STATUS_CODE_ERROR
		if strings.TrimSpace(s.msg) == "" {
			s.msg = s.str(s.cv.ErrorMessage...)
		}
	}
	if !exception && s.errType == "" && s.cv != nil && s.cv.FailsWithException {
		// The producer records every failure of its own as an exception event: an error
		// status without one was set by something else, and is not this span's failure.
		s.code, s.msg = tracepb.Status_STATUS_CODE_UNSET, ""
	}
	if s.genericError(s.errType) || (s.errType == "" && (exception || s.code == tracepb.Status_STATUS_CODE_ERROR)) {
		// A bare Error (LangSmith JS writes it for every exception) says less than the
		// message's own "TimeoutError: ..." prefix, the error's name as JavaScript and Python
		// print it.
		if name := errorName(excMsg); name != "" {
			s.errType = name
		} else if name := errorName(firstLine(s.msg)); name != "" {
			s.errType = name
		}
	}
	if exception && s.errType == "" {
		s.errType = unnamedException
	}
	if exception && s.cv != nil && s.cv.ExceptionFails {
		// the convention records the event only for a failure: the span ended in error,
		// whatever status it kept
		s.code = tracepb.Status_STATUS_CODE_ERROR
	}
	failed := s.code == tracepb.Status_STATUS_CODE_ERROR || (s.code == tracepb.Status_STATUS_CODE_UNSET && s.errType != "")
	if !failed {
		s.status = "ok"
		return
	}
	code, _ := s.num("http.response.status_code", "http.status_code")
	s.status, s.failureClass = "error", classOf(s.errType+"\n"+firstLine(s.msg)+"\n"+excMsg, code)
	if s.failureClass == "uncertain_completion" {
		s.status = "timeout"
	}
}

// unnamedException is the error type of a span whose exception event names none, and whose
// messages name none either.
const unnamedException = "exception"

// genericErrorTypes are error types that name no error: the base classes, and the values
// instrumentations write when they know no type (the GenAI conventions' _OTHER; Mastra
// writes unknown).
var genericErrorTypes = map[string]bool{"Error": true, "Exception": true, "BaseException": true, "_OTHER": true, "unknown": true}

// isHandoff reports whether a tool is an agent handing the conversation to another agent:
// the tools LangGraph's supervisor and swarm (transfer_to_<agent>, transfer_back_to_<agent>)
// and the OpenAI Agents SDK (transfer_to_<agent>) give a model for it. A handoff is control
// flow, not work a tool does: counted as tool calls, each would dilute retry amplification.
func isHandoff(tool string) bool {
	return strings.HasPrefix(tool, "transfer_to_") || strings.HasPrefix(tool, "transfer_back_to_")
}

// genericError reports whether an error type names no error: one of genericErrorTypes, or
// a wrapper of s's convention (WrapperErrors).
func (s *inSpan) genericError(t string) bool {
	return genericErrorTypes[t] || s.cv != nil && slices.Contains(s.cv.WrapperErrors, t)
}

// errorName returns the first error name in msg printed as "Name: ..." (a dotted
// identifier ending in Error or Exception, as JavaScript's and Python's errors print
// themselves), at its start or inside it (the OpenAI Agents SDK wraps a run's error as
// `Error in agent run: {"error":"AgentGaveUpError: ..."}`), else "". A bare Error or
// Exception is no name.
func errorName(msg string) string {
	for rest := msg; ; {
		i := strings.Index(rest, ": ")
		if i < 0 {
			return ""
		}
		j := i
		for j > 0 && j > i-128 && isNameByte(rest[j-1]) {
			j--
		}
		if name := rest[j:i]; (j == 0 || !isNameByte(rest[j-1])) && !genericErrorTypes[name] &&
			(strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception")) && name[0] != '.' {
			return name
		}
		rest = rest[i+2:]
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// firstLine is the first line of text that is not blank, trimmed.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// classOf maps an error's type and the first lines of its messages (and an HTTP status
// code, 0 when none) to mayday's failure classes: a timeout is an uncertain completion (the
// work may have been done), a refusal by policy a policy violation, an exhausted budget or
// context a resource exhaustion; anything else is transient.
func classOf(text string, httpStatus int64) string {
	t := strings.ToLower(text)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(t, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("timeout", "timed out", "deadline", "etimedout") || httpStatus == 408 || httpStatus == 504:
		return "uncertain_completion"
	case has("policy", "forbidden", "permission", "not allowed", "guardrail"):
		return "policy_violation"
	case has("budget", "context_length", "context length", "max_tokens", "quota"):
		return "resource_exhaustion"
	}
	return "transient"
}
