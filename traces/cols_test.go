package traces

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Each column type builds, batch after batch, the same array as arrow-go's builder given the
// same values and nulls: nulls at every position in a byte (first, last, only, none, all),
// batches of lengths around multiples of 8, and batches after a shorter or longer one, so
// that the capacity carried over from the last batch never shows.
func TestColumnsMatchArrowBuilders(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	lengths := []int{1, 7, 8, 9, 16, 17, 64, 1000, 3, 0, 513}
	nullRates := []float64{0, 1, 0.5, 0.02}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	var (
		i64  fixedCol[int64]
		f64  fixedCol[float64]
		str  strCol
		bl   boolCol
		list i64ListCol
	)
	for _, p := range nullRates {
		for _, n := range lengths {
			name := fmt.Sprintf("null rate %v, %d rows", p, n)
			bi := array.NewInt64Builder(mem)
			bf := array.NewFloat64Builder(mem)
			bs := array.NewStringBuilder(mem)
			bb := array.NewBooleanBuilder(mem)
			bl64 := array.NewListBuilderWithField(mem, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Int64})
			bv := bl64.ValueBuilder().(*array.Int64Builder)
			for range n {
				null := r.Float64() < p
				v := r.Int64N(1000) - 500
				s := fmt.Sprint("value-", v)
				if null {
					i64.AppendNull()
					bi.AppendNull()
					f64.AppendNull()
					bf.AppendNull()
					str.AppendNull()
					bs.AppendNull()
				} else {
					i64.Append(v)
					bi.Append(v)
					f64.Append(float64(v) / 3)
					bf.Append(float64(v) / 3)
					if v%2 == 0 {
						str.Append(s)
					} else {
						str.AppendBytes([]byte(s))
					}
					bs.Append(s)
				}
				bl.Append(v%3 == 0)
				bb.Append(v%3 == 0)
				list.Next()
				bl64.Append(true)
				for k := range int(v % 4) {
					list.Add(int64(k) * v)
					bv.Append(int64(k) * v)
				}
			}
			for _, c := range []struct {
				col   column
				b     array.Builder
				type_ arrow.DataType
			}{
				{&i64, bi, arrow.PrimitiveTypes.Int64},
				{&f64, bf, arrow.PrimitiveTypes.Float64},
				{&str, bs, arrow.BinaryTypes.String},
				{&bl, bb, arrow.FixedWidthTypes.Boolean},
				{&list, bl64, arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int64)},
			} {
				if got := c.col.length(); got != n {
					t.Errorf("%s, %s: length %d, want %d", name, c.type_, got, n)
				}
				want := c.b.NewArray()
				got := c.col.array(c.type_, mem)
				if !array.Equal(got, want) {
					t.Errorf("%s, %s:\n got %v\nwant %v", name, c.type_, got, want)
				}
				if got.NullN() != want.NullN() {
					t.Errorf("%s, %s: %d nulls, want %d", name, c.type_, got.NullN(), want.NullN())
				}
				if c.col.length() != 0 {
					t.Errorf("%s, %s: %d values left after the handover", name, c.type_, c.col.length())
				}
				got.Release()
				want.Release()
				c.b.Release()
			}
		}
	}
}

// A column's array does not change when the column goes on to the next batch.
func TestColumnHandoverIsFinal(t *testing.T) {
	var c strCol
	c.Append("first")
	c.AppendNull()
	a := c.array(arrow.BinaryTypes.String, nil)
	defer a.Release()
	for range 100 {
		c.Append("overwrite?")
	}
	c.AppendNull()
	s := a.(*array.String)
	if s.Len() != 2 || s.Value(0) != "first" || !s.IsNull(1) {
		t.Errorf("the handed-over array changed: %v", s)
	}
}
