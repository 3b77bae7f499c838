package compute

import "testing"

// A chunked list holds what was added, in order, across the first block's growth and the
// later blocks' boundaries, and its values can be changed in place.
func TestChunks(t *testing.T) {
	var c chunks[int64]
	const n = 3<<chunkBits + 17
	for i := range n {
		if got := c.add(int64(i) * 3); got != i {
			t.Fatalf("add %d returned index %d", i, got)
		}
	}
	if c.len() != n {
		t.Fatalf("len %d, want %d", c.len(), n)
	}
	for i := range n {
		if v := *c.at(i); v != int64(i)*3 {
			t.Fatalf("at(%d) = %d, want %d", i, v, int64(i)*3)
		}
	}
	*c.at(1 << chunkBits) = -1
	if *c.at(1 << chunkBits) != -1 || *c.at(1<<chunkBits - 1) != (1<<chunkBits-1)*3 {
		t.Error("a value changed in place is not what is read back, or changed its neighbour")
	}
	for i, b := range c.blocks[:len(c.blocks)-1] {
		if len(b) != 1<<chunkBits {
			t.Errorf("block %d of %d holds %d values: every block but the last is full", i, len(c.blocks), len(b))
		}
	}
}
