package analysis

import (
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

	spans   []tracepb.Span
	events  []tracepb.Span_Event
	links   []tracepb.Span_Link
	kvs     []commonpb.KeyValue
	avs     []commonpb.AnyValue
	strs    []commonpb.AnyValue_StringValue
	ints    []commonpb.AnyValue_IntValue
	ids     []byte
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

// newSlabs returns the slabs of request b, whose text is a copy of b.
func newSlabs(b []byte) slabs { return slabsOf(b, string(b)) }

// newSlabsOver returns the slabs of request b, whose text is b itself, not a copy: b must
// not change for as long as anything decoded from it is in use. Copying a request's text
// took 0.9 CPU-s of importing 922 MB of OTLP/JSON, on the goroutine that decodes, which
// every other step waits on: a large fresh allocation each time, written once.
func newSlabsOver(b []byte) slabs { return slabsOf(b, unsafe.String(unsafe.SliceData(b), len(b))) }

func slabsOf(b []byte, text string) slabs {
	return slabs{base: b, text: text, n: min(max(len(b)/bytesPerObject, 4), slabSize)}
}

// take returns the next object of slab, of s's slabs, making a new slab when it is used up.
func take[T any](s *slabs, slab *[]T) *T {
	if len(*slab) == 0 {
		*slab = make([]T, s.n)
	}
	x := &(*slab)[0]
	*slab = (*slab)[1:]
	return x
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
