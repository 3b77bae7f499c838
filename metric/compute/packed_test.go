package compute

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A packedList gives back exactly the values added, sorted: values nearly in order (as a
// run's instants come), in any order, repeated, at the extremes of uint64, and across
// several blocks and a partial tail.
func TestPackedListSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, packedBlock - 1, packedBlock, packedBlock + 1, 5*packedBlock + 17} {
		for _, shape := range []string{"near", "random", "extreme"} {
			var p packedList
			want := make([]uint64, 0, n)
			at := uint64(1e9)
			for range n {
				var v uint64
				switch shape {
				case "near":
					at += uint64(r.IntN(1000))
					v = at - uint64(r.IntN(5000)) // a little out of order
				case "random":
					v = r.Uint64()
				default:
					v = []uint64{0, math.MaxUint64, 1, math.MaxUint64 - 1}[r.IntN(4)]
				}
				p.add(v)
				want = append(want, v)
			}
			slices.Sort(want)
			if got := decodeSorted(&p, nil, func(u uint64) uint64 { return u }); p.len() != n || !slices.Equal(got, want) {
				t.Fatalf("%s, %d values: got %d values (len %d), not the %d added, sorted", shape, n, len(got), p.len(), n)
			}
		}
	}
}

// Signed instants keep their order through orderedBits, negative ones included.
func TestPackedListSignedInstants(t *testing.T) {
	vals := []int64{5, -3, math.MinInt64, 0, math.MaxInt64, -1, 7, 5}
	var p packedList
	for _, v := range vals {
		p.add(orderedBits(v))
	}
	want := slices.Sorted(slices.Values(vals))
	if got := decodeSorted(&p, nil, fromOrderedBits); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
