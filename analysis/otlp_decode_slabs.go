package analysis

import (
	"sync"
	"unsafe"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// slabs is where the fast decoders (otlp_decode.go, otlp_decode_proto.go) take what a
// request is decoded into. Decoding made one object for each span, event, attribute and
// value, one string for each key and value, and a list grown by appending for each span's
// attributes: an import of 431,142 spans spent a fifth of its CPU allocating and collecting
// them. Here objects come from slabs of up to slabSize, a request's strings are parts of
// text (the request as one string: a copy, or the request's own bytes, newSlabsOver), and
// lists of attributes are gathered in scratch and cut at their length from one slab.
//
// What a decoded request holds therefore keeps alive the text and the slabs it came from:
// an import copies what it keeps past the request (inRun.intern, inRun.own, ownValue).
type slabs struct {
	base []byte // the request, as read
	text string // the request as one string
	n    int    // how many objects of a kind a slab holds

	spans   slab[tracepb.Span]
	events  slab[tracepb.Span_Event]
	links   slab[tracepb.Span_Link]
	kvs     slab[commonpb.KeyValue]
	avs     slab[commonpb.AnyValue]
	strs    slab[commonpb.AnyValue_StringValue]
	ints    slab[commonpb.AnyValue_IntValue]
	dbls    slab[commonpb.AnyValue_DoubleValue]
	bools   slab[commonpb.AnyValue_BoolValue]
	ids     []byte
	texts   arena[byte]          // the strings of the request that are not parts of it (copyText)
	textsOf *freeSlabs[byte]     // the pool texts' blocks come from and go back to (nil: none)
	scratch []*commonpb.KeyValue // the lists of attributes being read, innermost last
	lists   []*commonpb.KeyValue // the slab the lists are cut from
}

// slabSize is the most objects of a kind a decoder makes at once; a small request's slabs
// are smaller (a JSON line of one short trace would otherwise make a few hundred of each
// kind for a dozen), one object for every bytesPerObject bytes of the request.
const (
	slabSize       = 256
	bytesPerObject = 64
)

// newSlabsOver returns the slabs of request b, whose text is b itself, not a copy: b must
// not change for as long as anything decoded from it is in use. Copying a request's text
// took 0.9 CPU-s of importing 922 MB of OTLP/JSON, on the goroutine that decodes, which
// every other step waits on: a large fresh allocation each time, written once.
func newSlabsOver(b []byte) slabs { return slabsOf(b, unsafe.String(unsafe.SliceData(b), len(b))) }

func slabsOf(b []byte, text string) slabs {
	return slabs{base: b, text: text, n: min(max(len(b)/bytesPerObject, 4), slabSize)}
}

// slab is the objects of one kind a request is decoded into: what is left of the slab
// being used and, when its slabs go back to a pool, the pool and the full-size slabs taken.
type slab[T any] struct {
	cur   []T
	taken [][]T
	free  *freeSlabs[T]
}

// take returns the next object of slab, of s's slabs, making a new slab when it is used up.
func take[T any](s *slabs, slab *slab[T]) *T {
	if len(slab.cur) == 0 {
		slab.cur = slab.next(s.n)
	}
	x := &slab.cur[0]
	slab.cur = slab.cur[1:]
	return x
}

// setString, setInt, setDouble and setBool set the value of a, an AnyValue, as both
// decoders make it: its oneof's member from the slabs (member).
func (s *slabs) setString(a *commonpb.AnyValue, v string) {
	a.Value = member(s, &s.strs, commonpb.AnyValue_StringValue{StringValue: v})
}

func (s *slabs) setInt(a *commonpb.AnyValue, x int64) {
	a.Value = member(s, &s.ints, commonpb.AnyValue_IntValue{IntValue: x})
}

func (s *slabs) setDouble(a *commonpb.AnyValue, x float64) {
	a.Value = member(s, &s.dbls, commonpb.AnyValue_DoubleValue{DoubleValue: x})
}

func (s *slabs) setBool(a *commonpb.AnyValue, x bool) {
	a.Value = member(s, &s.bools, commonpb.AnyValue_BoolValue{BoolValue: x})
}

// member is the next object of slab, of s's slabs, set to m.
func member[T any](s *slabs, slab *slab[T], m T) *T {
	x := take(s, slab)
	*x = m
	return x
}

// next is a new slab of n objects: one given back (cleared) by an earlier request when
// there is one of that size.
func (sl *slab[T]) next(n int) []T {
	if sl.free == nil || n != slabSize {
		return make([]T, n)
	}
	b := sl.free.get()
	if b == nil {
		b = make([]T, slabSize)
	}
	sl.taken = append(sl.taken, b)
	return b
}

// slabMark is where a decoder's slabs of events and attributes stood; rewind gives back
// what was taken from them after it.
type slabMark struct {
	events []tracepb.Span_Event
	kvs    []commonpb.KeyValue
	avs    []commonpb.AnyValue
	strs   []commonpb.AnyValue_StringValue
	ints   []commonpb.AnyValue_IntValue
	dbls   []commonpb.AnyValue_DoubleValue
	bools  []commonpb.AnyValue_BoolValue
	lists  []*commonpb.KeyValue
}

func (s *slabs) mark() slabMark {
	return slabMark{s.events.cur, s.kvs.cur, s.avs.cur, s.strs.cur, s.ints.cur, s.dbls.cur, s.bools.cur, s.lists}
}

// rewind clears the events and attributes taken since m and takes them again next, for a
// decoded event the import does not read: nothing may point to them. What a slab begun
// since m holds is left to the request's end.
func (s *slabs) rewind(m slabMark) {
	s.events.cur = rewound(s.events.cur, m.events)
	s.kvs.cur = rewound(s.kvs.cur, m.kvs)
	s.avs.cur = rewound(s.avs.cur, m.avs)
	s.strs.cur = rewound(s.strs.cur, m.strs)
	s.ints.cur = rewound(s.ints.cur, m.ints)
	s.dbls.cur = rewound(s.dbls.cur, m.dbls)
	s.bools.cur = rewound(s.bools.cur, m.bools)
	s.lists = rewound(s.lists, m.lists)
}

// rewound is was, its part taken since cleared, when cur is what is left of it (the two
// end at the same place); otherwise cur.
func rewound[T any](cur, was []T) []T {
	if len(cur) > len(was) || lastOf(cur) != lastOf(was) {
		return cur
	}
	clear(was[:len(was)-len(cur)])
	return was
}

// lastOf is the address of the last element of x's capacity (nil when it has none).
func lastOf[T any](x []T) *T {
	if cap(x) == 0 {
		return nil
	}
	return &x[:cap(x)][cap(x)-1]
}

// slabPool holds the full-size slabs of requests no longer in use, cleared, for the
// requests decoded after them. A fresh slab's memory is first touched by the decoder, and
// that first touch faulted and flushed the other core's TLB: an eighth of importing
// research-fleet's OTLP/JSON export, measured on a 2-core virtual machine.
type slabPool struct {
	spans  freeSlabs[tracepb.Span]
	events freeSlabs[tracepb.Span_Event]
	links  freeSlabs[tracepb.Span_Link]
	kvs    freeSlabs[commonpb.KeyValue]
	avs    freeSlabs[commonpb.AnyValue]
	strs   freeSlabs[commonpb.AnyValue_StringValue]
	ints   freeSlabs[commonpb.AnyValue_IntValue]
	dbls   freeSlabs[commonpb.AnyValue_DoubleValue]
	bools  freeSlabs[commonpb.AnyValue_BoolValue]
	texts  freeSlabs[byte]
}

// maxFreeSlabs bounds the slabs of one kind a pool keeps (at most 16 MB, for the largest
// kind): about what the requests decoding and queued at once take.
const maxFreeSlabs = 1024

// freeSlabs is the slabs of one kind given back, shared by the goroutines that take them:
// a request's decoded objects (slabPool), and the blocks of an arena: its unescaped text
// (copyText), a spill part's spans, attributes and events.
type freeSlabs[T any] struct {
	mu    sync.Mutex
	slabs [][]T
}

// get returns a slab given back, or nil.
func (f *freeSlabs[T]) get() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.slabs)
	if n == 0 {
		return nil
	}
	b := f.slabs[n-1]
	f.slabs[n-1] = nil
	f.slabs = f.slabs[:n-1]
	return b
}

// drop lets go of every slab kept.
func (f *freeSlabs[T]) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slabs = nil
}

// put keeps those of the slabs taken there is room for (keep in all), cleared first when
// clearing: a slab of objects with pointers must not keep an old request's alive, and a
// part's objects are handed out as zero; bytes are written before they are read.
func (f *freeSlabs[T]) put(taken [][]T, keep int, clearing bool) {
	f.mu.Lock()
	room := keep - len(f.slabs)
	f.mu.Unlock()
	taken = taken[:min(len(taken), max(room, 0))]
	if clearing {
		for _, b := range taken {
			clear(b[:cap(b)])
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slabs = append(f.slabs, taken[:min(len(taken), max(keep-len(f.slabs), 0))]...)
}

// slabsOver is newSlabsOver whose full-size slabs come from, and go back to (recycle), p.
func (p *slabPool) slabsOver(b []byte) slabs {
	s := newSlabsOver(b)
	s.spans.free, s.events.free, s.links.free = &p.spans, &p.events, &p.links
	s.kvs.free, s.avs.free, s.strs.free, s.ints.free = &p.kvs, &p.avs, &p.strs, &p.ints
	s.dbls.free, s.bools.free = &p.dbls, &p.bools
	s.textsOf = &p.texts
	return s
}

// recycle gives the full-size slabs of s back to their pool: nothing may read the request
// decoded into them after.
func (s *slabs) recycle() {
	giveBack(&s.spans)
	giveBack(&s.events)
	giveBack(&s.links)
	giveBack(&s.kvs)
	giveBack(&s.avs)
	giveBack(&s.strs)
	giveBack(&s.ints)
	giveBack(&s.dbls)
	giveBack(&s.bools)
	s.texts.giveBack(s.textsOf, maxFreeTexts, false) // bytes are written before they are read
}

// textBlock is the size of a block of a request's text (textIn), and textOwn the longest
// string copyText writes in one: a longer one is an allocation of its own.
const (
	textBlock    = 256 << 10
	textOwn      = textBlock / 4
	maxFreeTexts = 64 // blocks a pool keeps: 16 MB
)

// copyText returns a copy of b written in the request's text blocks (texts), which go back
// to the pool with the request's slabs. A JSON string with escapes, unescaped, was a string
// of its own, made by copying the unescaped bytes once more: on traces of long prompts (JSON
// within JSON, escapes every few bytes) a third of everything the import allocated, and the
// collections that followed (docs/performance.md, "Import: fewer copies, lookups and
// allocations").
func (s *slabs) copyText(b []byte) string { return textIn(&s.texts, s.textsOf, b, textBlock) }

// textIn returns a copy of b as a string written in a's blocks of block bytes (taken from
// pool, when it is not nil and has one); a string of more than a quarter of a block is an
// allocation of its own. The bytes a string lies in are not written again until its
// blocks are given back.
func textIn(a *arena[byte], pool *freeSlabs[byte], b []byte, block int) string {
	if len(b) == 0 {
		return ""
	}
	var dst []byte
	if len(b) > block/4 {
		dst = make([]byte, len(b))
	} else {
		dst = a.take(pool, len(b), block)
	}
	copy(dst, b)
	return unsafe.String(unsafe.SliceData(dst), len(dst))
}

func giveBack[T any](sl *slab[T]) {
	if sl.free != nil && len(sl.taken) > 0 {
		sl.free.put(sl.taken, maxFreeSlabs, true)
	}
	sl.cur, sl.taken = nil, nil
}

// sub is v as a string: the request's text at v's place when v is a part of the request.
func (s *slabs) sub(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(s.base))))
	if off < 0 || off+len(v) > len(s.text) {
		return string(v)
	}
	return s.text[off : off+len(v)]
}

// idBytes is n bytes for an id, cut from a slab.
func (s *slabs) idBytes(n int) []byte {
	if len(s.ids) < n {
		s.ids = make([]byte, max(n, 24*s.n))
	}
	b := s.ids[:n:n]
	s.ids = s.ids[n:]
	return b
}

// openList starts a list of attributes: appendAttr adds to it until closeList.
func (s *slabs) openList() int { return len(s.scratch) }

func (s *slabs) appendAttr(kv *commonpb.KeyValue) { s.scratch = append(s.scratch, kv) }

// closeList ends the list opened at start: its attributes in a slice of their number
// (nil when there are none), cut from the slab.
func (s *slabs) closeList(start int) []*commonpb.KeyValue {
	n := len(s.scratch) - start
	if n == 0 {
		return nil
	}
	if len(s.lists) < n {
		s.lists = make([]*commonpb.KeyValue, max(n, 4*s.n))
	}
	out := s.lists[:n:n]
	s.lists = s.lists[n:]
	copy(out, s.scratch[start:])
	clear(s.scratch[start:])
	s.scratch = s.scratch[:start]
	return out
}
