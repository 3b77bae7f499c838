package compute

import (
	"encoding/binary"
	"slices"
)

// packedList is a multiset of uint64 values kept compactly until it is read in order: the
// values come in blocks of packedBlock, each sorted when full and stored as the
// differences between neighbours in varints. Values that arrive nearly in order (the
// instants of a run's calls and results, which the records bring roughly by time) differ
// by a few bytes' worth, so a value costs about 2–4 bytes instead of 8. A run of a million
// investigations keeps tens of millions of them for the incident rule and goodput.
type packedList struct {
	blocks [][]byte // sorted blocks: the first value, then each difference to the one before
	tail   []uint64 // the values since the last full block
	n      int      // values in all
	buf    [10]byte // one varint being written
}

// packedBlock is how many values a block holds: large enough that a block's first value
// (a full varint) costs little per value, small enough that the unsorted tail stays small.
const packedBlock = 4096

func (p *packedList) add(v uint64) {
	p.tail = append(p.tail, v)
	p.n++
	if len(p.tail) == packedBlock {
		p.seal()
	}
}

// seal sorts the tail and stores it as a block.
func (p *packedList) seal() {
	if len(p.tail) == 0 {
		return
	}
	slices.Sort(p.tail)
	b := make([]byte, 0, 3*len(p.tail))
	prev := uint64(0)
	for _, v := range p.tail {
		b = append(b, p.buf[:binary.PutUvarint(p.buf[:], v-prev)]...)
		prev = v
	}
	p.blocks = append(p.blocks, slices.Clip(b))
	p.tail = p.tail[:0]
}

// len is the number of values.
func (p *packedList) len() int { return p.n }

// decodeSorted returns every value of p, each through conv, appended to dst[:0] and
// sorted; conv must keep the values' order (orderedBits' inverse does).
func decodeSorted[T ~uint64 | int64](p *packedList, dst []T, conv func(uint64) T) []T {
	dst = slices.Grow(dst[:0], p.n)
	for _, b := range p.blocks {
		prev := uint64(0)
		for len(b) > 0 {
			d, k := binary.Uvarint(b)
			b = b[k:]
			prev += d
			dst = append(dst, conv(prev))
		}
	}
	for _, v := range p.tail {
		dst = append(dst, conv(v))
	}
	slices.Sort(dst)
	return dst
}

// orderedBits maps an int64 to a uint64 of the same order (and back: it is its own inverse
// in the other direction through fromOrderedBits).
func orderedBits(v int64) uint64 { return uint64(v) ^ 1<<63 }

func fromOrderedBits(u uint64) int64 { return int64(u ^ 1<<63) }
