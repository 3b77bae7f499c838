package analysis

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/recovery"
	"github.com/mayday-sim/mayday/sim/record"
)

// Every ENUM column of tables.sql holds every value its producers write: the recovery
// engine's names (states, failure classes, actions, deciders), mayday's operations, span
// statuses and execution outcomes, and "" (read for a value of another type). A name
// added to one of them without its column fails here rather than failing a run's load.
// Members are in byte order, so that ORDER BY, min and max give what they gave as VARCHAR.
func TestStoredEnumsHoldEveryName(t *testing.T) {
	names := recovery.Names()
	var ops, statuses []string
	for _, op := range []record.Operation{record.OpInvokeAgent, record.OpExecuteTool, record.OpInspect, record.OpSupervise,
		record.OpHumanReview, record.OpValidate, record.OpPlan, record.OpTakeover} {
		ops = append(ops, string(op))
	}
	for _, st := range []record.Status{record.StatusOK, record.StatusError, record.StatusTimeout, record.StatusBlocked,
		record.StatusInvalid, record.StatusUnset} {
		statuses = append(statuses, string(st))
	}
	want := map[string][]string{
		"spans.operation": ops, "spans.status": statuses, "spans.failure_class": names.Classes,
		"transitions.from_state": names.States, "transitions.to_state": names.States,
		"transitions.failure_class": names.Classes, "transitions.action": names.Actions,
		"transitions.decided_by": names.Deciders, "executions.outcome": {"ok", "lost", "cancelled"},
	}
	enums := storedEnums()
	if len(enums) != len(want) {
		t.Errorf("tables.sql has %d ENUM columns, want %d", len(enums), len(want))
	}
	for col, names := range want {
		members, ok := enums[col]
		if !ok {
			t.Errorf("%s is no ENUM column", col)
			continue
		}
		for _, n := range append(names, "") {
			if !slices.Contains(members, n) {
				t.Errorf("%s does not hold %q", col, n)
			}
		}
		if !slices.IsSortedFunc(members, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) }) {
			t.Errorf("%s: members not in byte order: %q", col, members)
		}
	}
	// Every ENUM attribute of an export is checked against its column.
	for key, col := range enumAttrs {
		if _, ok := enums[col]; !ok {
			t.Errorf("%s is checked against %s, no ENUM column", key, col)
		}
	}
}

// An ENUM column reads as the text it holds, by database/sql and through Arrow (replay
// reads records as Arrow batches), and sorts as that text does.
func TestStoredEnumsReadAsText(t *testing.T) {
	db, err := Create(filepath.Join(t.TempDir(), "e.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	loadSynthRun(t, db, "r1", 3)
	var sorted, asText string
	q := "SELECT string_agg(status, ',' ORDER BY status, span_id), string_agg(status, ',' ORDER BY status::VARCHAR, span_id) FROM spans"
	if err := db.SQL().QueryRow(q).Scan(&sorted, &asText); err != nil {
		t.Fatal(err)
	}
	if sorted != asText || !strings.Contains(sorted, "ok") {
		t.Errorf("spans sorted by status: %.80s; by its text: %.80s", sorted, asText)
	}
	conn, err := db.SQL().Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var got []string
	err = conn.Raw(func(dc any) error {
		ar, _, err := arrowOn(context.Background(), dc)
		if err != nil {
			return err
		}
		rr, err := ar.QueryContext(context.Background(), "SELECT status FROM spans ORDER BY span_id")
		if err != nil {
			return err
		}
		r := newArrowRows(rr)
		defer r.close()
		for r.next() {
			got = append(got, r.str(0))
		}
		return r.err()
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	rows, err := db.SQL().Query("SELECT coalesce(status::VARCHAR, '') FROM spans ORDER BY span_id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		want = append(want, s)
	}
	rows.Close()
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("read through Arrow: %d statuses, first %q; want %d, first %q", len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
	}
}
