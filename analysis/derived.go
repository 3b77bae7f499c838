//go:build duckdb_arrow

package analysis

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mayday-sim/mayday/metric/compute"
)

// The derived tables: every quantity mayday derives from a run's records, beyond its
// metrics row, stored with the run as rows of a table (docs/tables.md). Package
// metric/compute defines and computes them, once, from the run's records: a simulated run's
// while it loads, any other run's (an import, a merged run, a run of an older database) by
// replaying its stored records (derive.go). Their layout is the Go row type's: a column per
// field, named by its db tag, of the SQL type of the field's type (compute.Tables).

// derivedTable is one derived table: its name, its columns (from its row type), the number
// of rows of a run's compute.Tables and a range of them (a slice of the row type).
type derivedTable struct {
	name  string
	cols  []derivedColumn
	count func(t *compute.Tables) int
	rows  func(t *compute.Tables, from, to int) any
}

// ranged describes derived table name of row type T, of count(t) rows made a range at a
// time by rows(t, from, to).
func ranged[T any](name string, count func(t *compute.Tables) int, rows func(t *compute.Tables, from, to int) []T) derivedTable {
	return derivedTable{name: name, cols: columnsOfRow(reflect.TypeFor[T]()), count: count,
		rows: func(t *compute.Tables, from, to int) any { return rows(t, from, to) }}
}

// table describes derived table name of row type T, whose rows are a slice.
func table[T any](name string, rows func(t *compute.Tables) []T) derivedTable {
	return ranged(name, func(t *compute.Tables) int { return len(rows(t)) },
		func(t *compute.Tables, from, to int) []T { return rows(t)[from:to] })
}

// derivedTables are the derived tables, in the order they are stored.
var derivedTables = []derivedTable{
	ranged("recovery_episodes", (*compute.Tables).EpisodeCount, func(t *compute.Tables, from, to int) []compute.Episode {
		return t.EpisodeRange(make([]compute.Episode, 0, to-from), from, to)
	}),
	table("recovery_curve", func(t *compute.Tables) []compute.CurvePoint { return t.Curve }),
	table("goodput", func(t *compute.Tables) []compute.GoodputMinute { return t.Goodput }),
	table("lifecycle", func(t *compute.Tables) []compute.LifecycleRow { return t.Lifecycle }),
	table("costs", func(t *compute.Tables) []compute.Cost { return t.Costs }),
	table("incidents", func(t *compute.Tables) []compute.Incident { return t.Incidents }),
	table("saturation", func(t *compute.Tables) []compute.Saturation { return t.Saturation }),
	table("tool_minutes", func(t *compute.Tables) []compute.ToolMinute { return t.ToolMinutes }),
	table("tool_stats", func(t *compute.Tables) []compute.ToolStat { return t.ToolStats }),
}

// derivedColumn is one column of a derived table: the field it comes from and how its
// values are appended to an Arrow builder.
type derivedColumn struct {
	name   string
	sql    string
	arrow  arrow.DataType
	field  int
	append func(b array.Builder, f reflect.Value) // f: the field's value in one row
}

// columnKind is how a Go field type is stored: its SQL type, its Arrow type, its appender.
type columnKind struct {
	sql    string
	arrow  arrow.DataType
	append func(b array.Builder, f reflect.Value)
}

// columnKinds are the field types a row may have. Each Null type (a struct of the value,
// field 0, and Valid, field 1) is stored as the type of its value (nullOf), NULL unless Valid.
var (
	columnKinds = map[reflect.Type]columnKind{
		reflect.TypeFor[int64]():        {"BIGINT", arrow.PrimitiveTypes.Int64, colInt64},
		reflect.TypeFor[int32]():        {"INTEGER", arrow.PrimitiveTypes.Int32, colInt32},
		reflect.TypeFor[float64]():      {"DOUBLE", arrow.PrimitiveTypes.Float64, colFloat},
		reflect.TypeFor[string]():       {"VARCHAR", arrow.BinaryTypes.String, colString},
		reflect.TypeFor[bool]():         {"BOOLEAN", arrow.FixedWidthTypes.Boolean, colBool},
		reflect.TypeFor[compute.Time](): {"TIMESTAMP", &arrow.TimestampType{Unit: arrow.Microsecond}, colTime},
		reflect.TypeFor[[]string]():     {"VARCHAR[]", arrow.ListOf(arrow.BinaryTypes.String), colStrings},
	}
	nullOf = map[reflect.Type]reflect.Type{
		reflect.TypeFor[compute.NullInt]():    reflect.TypeFor[int64](),
		reflect.TypeFor[compute.NullFloat]():  reflect.TypeFor[float64](),
		reflect.TypeFor[compute.NullString](): reflect.TypeFor[string](),
		reflect.TypeFor[compute.NullBool]():   reflect.TypeFor[bool](),
		reflect.TypeFor[compute.NullTime]():   reflect.TypeFor[compute.Time](),
	}
)

// nullable wraps a value's appender for a Null type: NULL unless Valid.
func nullable(a func(array.Builder, reflect.Value)) func(array.Builder, reflect.Value) {
	return func(b array.Builder, f reflect.Value) {
		if !f.Field(1).Bool() {
			b.AppendNull()
			return
		}
		a(b, f.Field(0))
	}
}

func colInt64(b array.Builder, f reflect.Value) { b.(*array.Int64Builder).Append(f.Int()) }
func colInt32(b array.Builder, f reflect.Value) { b.(*array.Int32Builder).Append(int32(f.Int())) }
func colFloat(b array.Builder, f reflect.Value) { b.(*array.Float64Builder).Append(f.Float()) }
func colString(b array.Builder, f reflect.Value) {
	b.(*array.StringBuilder).Append(f.String())
}
func colBool(b array.Builder, f reflect.Value) { b.(*array.BooleanBuilder).Append(f.Bool()) }
func colTime(b array.Builder, f reflect.Value) {
	b.(*array.TimestampBuilder).Append(arrow.Timestamp(f.Int()))
}
func colStrings(b array.Builder, f reflect.Value) {
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	sb := lb.ValueBuilder().(*array.StringBuilder)
	for i := range f.Len() {
		sb.Append(f.Index(i).String())
	}
}

// columnsOfRow returns the columns of row type typ.
func columnsOfRow(typ reflect.Type) []derivedColumn {
	var cols []derivedColumn
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := f.Tag.Get("db")
		if name == "" {
			panic("analysis: field " + typ.Name() + "." + f.Name + " has no db tag")
		}
		k, ok := columnKinds[f.Type]
		if base, null := nullOf[f.Type]; null {
			k = columnKinds[base]
			k.append, ok = nullable(k.append), true
		}
		if !ok {
			panic("analysis: field " + typ.Name() + "." + f.Name + " has no SQL type")
		}
		c := derivedColumn{name: name, field: i, sql: k.sql, arrow: k.arrow, append: k.append}
		cols = append(cols, c)
	}
	return cols
}

// createStatement is the CREATE TABLE statement of derived table d.
func (d derivedTable) createStatement() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", d.name)
	for i, c := range d.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", ident(c.name), c.sql)
	}
	b.WriteString(")")
	return b.String()
}

// layout is the table's columns as "name TYPE" (what columnsOf reads back).
func (d derivedTable) layout() []string {
	out := make([]string, len(d.cols))
	for i, c := range d.cols {
		out[i] = c.name + " " + c.sql
	}
	return out
}

// batch returns the rows (a slice of d's row type, at least one) as an Arrow record batch.
func (d derivedTable) batch(v reflect.Value) arrow.RecordBatch {
	fields := make([]arrow.Field, len(d.cols))
	for i, c := range d.cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arrow, Nullable: true}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, c := range d.cols {
		fb := b.Field(i)
		fb.Reserve(v.Len())
		for r := range v.Len() {
			c.append(fb, v.Index(r).Field(c.field))
		}
	}
	return b.NewRecordBatch()
}
