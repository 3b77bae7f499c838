package traces

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The writer's columns: plain Go slices that a full batch hands over to Arrow without a copy
// (arrow-go's builders zeroed every buffer twice, once on allocation and once on growth, and
// cost more per value than building the record: a fifth of a traced run's CPU). Each column
// starts the next batch with the capacity the last one ended with, so a batch rarely grows
// a buffer. The memory is the Go heap's, freed by the collector once every Arrow reference
// to the batch is released.

// column is one column of the batch being built.
type column interface {
	// array hands the column's values over as an Arrow array of type dt (built with mem
	// when it is not nil, see Options.Allocator) and starts the next batch empty.
	array(dt arrow.DataType, mem memory.Allocator) arrow.Array
	length() int
}

// validity is a column's validity bitmap, kept only once the batch has a null.
type validity struct {
	bits  []byte // nil while every value is valid
	nulls int
}

// null marks value i (the column's last, with i values before it) as null.
func (v *validity) null(i int) {
	if v.bits == nil {
		v.bits = make([]byte, i/8+1, max(i/4, 64))
		for j := range i / 8 {
			v.bits[j] = 0xff
		}
		v.bits[i/8] = byte(1)<<(i%8) - 1
	} else {
		v.grow(i)
	}
	v.nulls++
}

// valid marks value i valid; it costs nothing until the batch has a null.
func (v *validity) valid(i int) {
	if v.bits != nil {
		v.grow(i)
		v.bits[i/8] |= 1 << (i % 8)
	}
}

func (v *validity) grow(i int) {
	if i%8 == 0 {
		v.bits = append(v.bits, 0)
	}
}

// buffer hands the bitmap over (nil without nulls) and resets it.
func (v *validity) buffer(mem memory.Allocator) (*memory.Buffer, int) {
	bits, nulls := v.bits, v.nulls
	v.bits, v.nulls = nil, 0
	if bits == nil {
		return nil, 0
	}
	return buffer(bits, mem), nulls
}

// buffer wraps b as an Arrow buffer; with an allocator, as a copy the allocator accounts for.
func buffer(b []byte, mem memory.Allocator) *memory.Buffer {
	if mem == nil {
		return memory.NewBufferBytes(b)
	}
	c := mem.Allocate(len(b))
	copy(c, b)
	return memory.NewBufferWithAllocator(c, mem)
}

// bytesOf is the memory of s as bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// makeData builds the array data of type dt from buffers and releases them to it.
func makeData(dt arrow.DataType, n, nulls int, bufs []*memory.Buffer, children []arrow.ArrayData) arrow.ArrayData {
	d := array.NewData(dt, n, bufs, children, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return d
}

// arrayOf makes the array of d and releases d to it.
func arrayOf(d arrow.ArrayData) arrow.Array {
	a := array.MakeFromData(d)
	d.Release()
	return a
}

// sized returns s, or when it has no memory yet, an empty slice of the capacity the last
// batch ended with: a batch allocates its buffers when it takes its first value, at the size
// they will likely need, not when the last one is handed over (the last batch of a run would
// allocate them for nothing).
func sized[T any](s []T, last int) []T {
	if cap(s) == 0 && last > 0 {
		return make([]T, 0, last)
	}
	return s
}

// fixedCol is a column of fixed-width values: integers, floats, timestamps.
type fixedCol[T int32 | int64 | uint64 | float64 | arrow.Timestamp] struct {
	vals []T
	last int // the capacity the last batch ended with
	validity
}

func (c *fixedCol[T]) Append(v T) {
	c.valid(len(c.vals))
	c.push(v)
}

func (c *fixedCol[T]) AppendNull() {
	c.null(len(c.vals))
	var zero T
	c.push(zero)
}

func (c *fixedCol[T]) push(v T) {
	if len(c.vals) == cap(c.vals) {
		c.vals = sized(c.vals, c.last)
	}
	c.vals = append(c.vals, v)
}

func (c *fixedCol[T]) length() int { return len(c.vals) }

// data hands the values over as array data and starts the next batch empty.
func (c *fixedCol[T]) data(dt arrow.DataType, mem memory.Allocator) arrow.ArrayData {
	n := len(c.vals)
	valid, nulls := c.buffer(mem)
	d := makeData(dt, n, nulls, []*memory.Buffer{valid, buffer(bytesOf(c.vals), mem)}, nil)
	c.vals, c.last = nil, cap(c.vals)
	return d
}

func (c *fixedCol[T]) array(dt arrow.DataType, mem memory.Allocator) arrow.Array {
	return arrayOf(c.data(dt, mem))
}

// boolCol is a column of booleans, bit-packed as Arrow keeps them.
type boolCol struct {
	bits []byte
	n    int
	last int // the capacity the last batch ended with
	validity
}

func (c *boolCol) Append(v bool) {
	c.valid(c.n)
	c.push(v)
}

func (c *boolCol) AppendNull() {
	c.null(c.n)
	c.push(false)
}

func (c *boolCol) push(v bool) {
	if c.n%8 == 0 {
		c.bits = append(sized(c.bits, c.last), 0)
	}
	if v {
		c.bits[c.n/8] |= 1 << (c.n % 8)
	}
	c.n++
}

func (c *boolCol) length() int { return c.n }

func (c *boolCol) array(dt arrow.DataType, mem memory.Allocator) arrow.Array {
	n := c.n
	valid, nulls := c.buffer(mem)
	a := arrayOf(makeData(dt, n, nulls, []*memory.Buffer{valid, buffer(c.bits, mem)}, nil))
	c.bits, c.n, c.last = nil, 0, cap(c.bits)
	return a
}

// offsets are the 32-bit offsets of a column of variable-length values (strings, lists):
// values + 1 of them once the batch has begun.
type offsets struct {
	o    []int32
	last int // the capacity the last batch ended with
}

// begin starts the batch with its first offset, 0, unless it has begun.
func (c *offsets) begin() {
	if len(c.o) == 0 {
		c.o = append(sized(c.o, c.last), 0)
	}
}

func (c *offsets) length() int { return max(len(c.o)-1, 0) }

// take hands the offsets over (the batch begun, so at least one) and starts the next batch.
func (c *offsets) take() []int32 {
	c.begin()
	o := c.o
	c.o, c.last = nil, cap(o)
	return o
}

// strCol is a column of UTF-8 strings: offsets into the values' bytes.
type strCol struct {
	offsets
	bytes     []byte
	lastBytes int // the capacity of bytes the last batch ended with
	validity
}

func (c *strCol) Append(s string) { appendString(c, s) }

// AppendBytes appends b as a string.
func (c *strCol) AppendBytes(b []byte) { appendString(c, b) }

func appendString[S string | []byte](c *strCol, s S) {
	c.begin()
	c.valid(len(c.o) - 1)
	c.bytes = append(sized(c.bytes, c.lastBytes), s...)
	c.o = append(c.o, int32(len(c.bytes)))
}

func (c *strCol) AppendNull() {
	c.begin()
	c.null(len(c.o) - 1)
	c.o = append(c.o, int32(len(c.bytes)))
}

func (c *strCol) array(dt arrow.DataType, mem memory.Allocator) arrow.Array {
	o := c.take()
	valid, nulls := c.buffer(mem)
	a := arrayOf(makeData(dt, len(o)-1, nulls, []*memory.Buffer{valid, buffer(bytesOf(o), mem), buffer(c.bytes, mem)}, nil))
	c.bytes, c.lastBytes = nil, cap(c.bytes)
	return a
}

// i64ListCol is a column of lists of int64, none of them null.
type i64ListCol struct {
	offsets
	vals fixedCol[int64]
}

// Next starts the next list; Add appends to it.
func (c *i64ListCol) Next() {
	c.begin()
	c.o = append(c.o, int32(len(c.vals.vals)))
}

// Add appends v to the list Next started.
func (c *i64ListCol) Add(v int64) {
	c.vals.Append(v)
	c.o[len(c.o)-1]++
}

func (c *i64ListCol) array(dt arrow.DataType, mem memory.Allocator) arrow.Array {
	o := c.take()
	child := c.vals.data(dt.(*arrow.ListType).Elem(), mem)
	d := makeData(dt, len(o)-1, 0, []*memory.Buffer{nil, buffer(bytesOf(o), mem)}, []arrow.ArrayData{child})
	child.Release() // the list's data holds it
	return arrayOf(d)
}
