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

// derivedTable is one derived table: its name and the rows of a run's compute.Tables.
type derivedTable struct {
	name string
	typ  reflect.Type // the row type
	rows func(t *compute.Tables) any
}

// derivedTables are the derived tables, in the order they are stored.
var derivedTables = []derivedTable{
	{"recovery_episodes", reflect.TypeFor[compute.Episode](), func(t *compute.Tables) any { return t.Episodes }},
	{"recovery_curve", reflect.TypeFor[compute.CurvePoint](), func(t *compute.Tables) any { return t.Curve }},
	{"goodput", reflect.TypeFor[compute.GoodputMinute](), func(t *compute.Tables) any { return t.Goodput }},
	{"lifecycle", reflect.TypeFor[compute.LifecycleRow](), func(t *compute.Tables) any { return t.Lifecycle }},
	{"costs", reflect.TypeFor[compute.Cost](), func(t *compute.Tables) any { return t.Costs }},
	{"incidents", reflect.TypeFor[compute.Incident](), func(t *compute.Tables) any { return t.Incidents }},
	{"saturation", reflect.TypeFor[compute.Saturation](), func(t *compute.Tables) any { return t.Saturation }},
	{"tool_minutes", reflect.TypeFor[compute.ToolMinute](), func(t *compute.Tables) any { return t.ToolMinutes }},
	{"tool_stats", reflect.TypeFor[compute.ToolStat](), func(t *compute.Tables) any { return t.ToolStats }},
}

// derivedColumn is one column of a derived table.
type derivedColumn struct {
	name  string
	sql   string
	arrow arrow.DataType
	field int
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
		c := derivedColumn{name: name, field: i}
		switch f.Type {
		case reflect.TypeFor[int64](), reflect.TypeFor[compute.NullInt]():
			c.sql, c.arrow = "BIGINT", arrow.PrimitiveTypes.Int64
		case reflect.TypeFor[int32]():
			c.sql, c.arrow = "INTEGER", arrow.PrimitiveTypes.Int32
		case reflect.TypeFor[float64](), reflect.TypeFor[compute.NullFloat]():
			c.sql, c.arrow = "DOUBLE", arrow.PrimitiveTypes.Float64
		case reflect.TypeFor[string](), reflect.TypeFor[compute.NullString]():
			c.sql, c.arrow = "VARCHAR", arrow.BinaryTypes.String
		case reflect.TypeFor[bool](), reflect.TypeFor[compute.NullBool]():
			c.sql, c.arrow = "BOOLEAN", arrow.FixedWidthTypes.Boolean
		case reflect.TypeFor[compute.Time](), reflect.TypeFor[compute.NullTime]():
			c.sql, c.arrow = "TIMESTAMP", &arrow.TimestampType{Unit: arrow.Microsecond}
		case reflect.TypeFor[[]string]():
			c.sql, c.arrow = "VARCHAR[]", arrow.ListOf(arrow.BinaryTypes.String)
		default:
			panic("analysis: field " + typ.Name() + "." + f.Name + " has no SQL type")
		}
		cols = append(cols, c)
	}
	return cols
}

// createStatement is the CREATE TABLE statement of derived table d.
func (d derivedTable) createStatement() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", d.name)
	for i, c := range columnsOfRow(d.typ) {
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
	var out []string
	for _, c := range columnsOfRow(d.typ) {
		out = append(out, c.name+" "+c.sql)
	}
	return out
}

// batch returns the rows (a slice of d's row type) as an Arrow record batch, nil when there
// are none.
func (d derivedTable) batch(rows any) arrow.RecordBatch {
	v := reflect.ValueOf(rows)
	if v.Len() == 0 {
		return nil
	}
	cols := columnsOfRow(d.typ)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arrow, Nullable: true}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, c := range cols {
		fb := b.Field(i)
		for r := range v.Len() {
			appendValue(fb, v.Index(r).Field(c.field))
		}
	}
	return b.NewRecordBatch()
}

// appendValue appends one field's value to its column's builder.
func appendValue(b array.Builder, f reflect.Value) {
	switch x := f.Interface().(type) {
	case int64:
		b.(*array.Int64Builder).Append(x)
	case compute.NullInt:
		if !x.Valid {
			b.AppendNull()
		} else {
			b.(*array.Int64Builder).Append(x.V)
		}
	case int32:
		b.(*array.Int32Builder).Append(x)
	case float64:
		b.(*array.Float64Builder).Append(x)
	case compute.NullFloat:
		if !x.Valid {
			b.AppendNull()
		} else {
			b.(*array.Float64Builder).Append(x.V)
		}
	case string:
		b.(*array.StringBuilder).Append(x)
	case compute.NullString:
		if !x.Valid {
			b.AppendNull()
		} else {
			b.(*array.StringBuilder).Append(x.V)
		}
	case bool:
		b.(*array.BooleanBuilder).Append(x)
	case compute.NullBool:
		if !x.Valid {
			b.AppendNull()
		} else {
			b.(*array.BooleanBuilder).Append(x.V)
		}
	case compute.Time:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(x))
	case compute.NullTime:
		if !x.Valid {
			b.AppendNull()
		} else {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(x.V))
		}
	case []string:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StringBuilder)
		for _, s := range x {
			sb.Append(s)
		}
	}
}
