package compute

// maxDense bounds the investigation ids whose flags are kept in a slice; the simulator
// numbers them 1, 2, ...
const maxDense = 1 << 26

// idFlags holds flags per investigation id: in a slice for the ids the simulator gives (1,
// 2, ...), in a map for others (an import's, a hand-made trace's).
type idFlags[T uint8 | uint16] struct {
	dense  []T
	sparse map[int64]T
}

// newIDFlags returns empty flags with room for ids up to n.
func newIDFlags[T uint8 | uint16](n int) idFlags[T] {
	return idFlags[T]{dense: make([]T, min(max(n+1, 1024), maxDense)), sparse: map[int64]T{}}
}

// get returns the flags of investigation id (0 until set).
func (f *idFlags[T]) get(id int64) T {
	if id >= 0 && id < int64(len(f.dense)) {
		return f.dense[id]
	}
	return f.sparse[id]
}

// set adds bits to the flags of investigation id.
func (f *idFlags[T]) set(id int64, bits T) {
	if id < 0 || id >= maxDense {
		f.sparse[id] |= bits
		return
	}
	if id >= int64(len(f.dense)) {
		grown := make([]T, max(int64(2*len(f.dense)), id+1, 1024))
		copy(grown, f.dense)
		f.dense = grown
	}
	f.dense[id] |= bits
}

// each calls fn on the flags of every id that has some.
func (f *idFlags[T]) each(fn func(T)) {
	for _, v := range f.dense {
		if v != 0 {
			fn(v)
		}
	}
	for _, v := range f.sparse {
		fn(v)
	}
}
