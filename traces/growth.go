package traces

import "github.com/apache/arrow-go/v18/arrow/array"

// growth sizes one builder for the next batch like the last one: a builder that starts a
// batch at its final size never copies its buffers while it grows, which otherwise costs
// more than building the values.
type growth struct {
	b    array.Builder
	s    *array.BinaryBuilder // nil unless a string builder
	n    int                  // values in the last batch
	data int                  // string bytes in the last batch
}

func growths(bs []array.Builder, out []growth) []growth {
	for _, b := range bs {
		g := growth{b: b}
		switch b := b.(type) {
		case *array.StringBuilder:
			g.s = b.BinaryBuilder
		case *array.ListBuilder:
			out = growths([]array.Builder{b.ValueBuilder()}, out)
		case *array.MapBuilder:
			out = growths([]array.Builder{b.KeyBuilder(), b.ItemBuilder()}, out)
		}
		out = append(out, g)
	}
	return out
}

func (g *growth) measure() {
	g.n = g.b.Len()
	if g.s != nil {
		g.data = g.s.DataLen()
	}
}

func (g *growth) reserve() {
	g.b.Reserve(g.n)
	if g.s != nil {
		g.s.ReserveData(g.data)
	}
}
