package compute

import "github.com/mayday-sim/mayday/sim/record"

// packedMap is a map whose keys (structs of two or three integers) are held as one uint64
// where their fields fit, and as themselves where they do not (an import's ids and steps
// can be anything). Go hashes a uint64 key on its fast path; a struct key goes through the
// generic hash and lookup: the operations' and the tools' minutes' lookups took 1.5 of
// the 26.8 CPU-s of research-fleet at 100,000 investigations, and 0.64 with their keys
// packed (docs/performance.md, "The metrics sink's maps keyed by one integer").
type packedMap[K comparable, V any] struct {
	pack   func(K) (uint64, bool)
	packed map[uint64]V
	other  map[K]V
}

func newPackedMap[K comparable, V any](pack func(K) (uint64, bool)) packedMap[K, V] {
	return packedMap[K, V]{pack: pack, packed: map[uint64]V{}, other: map[K]V{}}
}

func (m *packedMap[K, V]) get(k K) (V, bool) {
	if p, ok := m.pack(k); ok {
		v, ok := m.packed[p]
		return v, ok
	}
	v, ok := m.other[k]
	return v, ok
}

func (m *packedMap[K, V]) put(k K, v V) {
	if p, ok := m.pack(k); ok {
		m.packed[p] = v
		return
	}
	m.other[k] = v
}

func (m *packedMap[K, V]) delete(k K) {
	if p, ok := m.pack(k); ok {
		delete(m.packed, p)
		return
	}
	delete(m.other, k)
}

func (m *packedMap[K, V]) len() int { return len(m.packed) + len(m.other) }

// each calls fn with every key, in no order.
func (m *packedMap[K, V]) each(fn func(K), unpack func(uint64) K) {
	for p := range m.packed {
		fn(unpack(p))
	}
	for k := range m.other {
		fn(k)
	}
}

// packOp packs an operation's key: an investigation id below 2^36, a step below 2^20 and a
// revision below 2^8.
func packOp(k record.OpKey) (uint64, bool) {
	if uint64(k.Investigation) >= 1<<36 || uint32(k.Step) >= 1<<20 || uint32(k.Revision) >= 1<<8 {
		return 0, false
	}
	return uint64(k.Investigation)<<28 | uint64(k.Step)<<8 | uint64(k.Revision), true
}

// packMinute packs a tool's minute: the tool's index plus one (noTool is -1) below 2^16, and
// a minute from 0 below 2^48.
func packMinute(k tm) (uint64, bool) {
	t := uint64(k.tool + 1)
	if k.tool < noTool || t >= 1<<16 || uint64(k.minute) >= 1<<48 {
		return 0, false
	}
	return t<<48 | uint64(k.minute), true
}

func unpackMinute(p uint64) tm { return tm{tool: int32(p>>48) - 1, minute: int64(p & (1<<48 - 1))} }
