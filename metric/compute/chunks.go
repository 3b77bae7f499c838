package compute

// chunks is a list that grows a block at a time: appending never copies what it holds, so a
// list of millions (a large run's recovery episodes, 88 bytes each) is never held twice
// while it grows, as a slice is when append moves it. Every block but the last is full.
type chunks[T any] struct {
	blocks [][]T
	n      int
}

// chunkBits sets a block's size: 1<<chunkBits values.
const chunkBits = 14

// add appends v and returns its index.
func (c *chunks[T]) add(v T) int {
	if len(c.blocks) == 0 || len(c.blocks[len(c.blocks)-1]) == 1<<chunkBits {
		size := 1 << chunkBits
		if len(c.blocks) == 0 {
			size = 64 // a small run's list stays small; the first block grows as a slice to its size
		}
		c.blocks = append(c.blocks, make([]T, 0, size))
	}
	last := &c.blocks[len(c.blocks)-1]
	*last = append(*last, v)
	c.n++
	return c.n - 1
}

// len is the number of values.
func (c *chunks[T]) len() int { return c.n }

// at is the value at index i, which the caller may change.
func (c *chunks[T]) at(i int) *T { return &c.blocks[i>>chunkBits][i&(1<<chunkBits-1)] }
