//go:build duckdb_arrow

package analysis

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullI32(v int32) any {
	if v == 0 {
		return nil
	}
	return v
}

func opKey(k record.OpKey) string {
	return strconv.FormatInt(k.Investigation, 10) + "/" + strconv.Itoa(int(k.Step)) + "/" + strconv.Itoa(int(k.Revision))
}

func query(t testing.TB, db *DB, q string) [][]any {
	t.Helper()
	_, rows, err := db.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// compareRows checks the stored rows of a table, in storage order, against the expected ones.
func compareRows(t testing.TB, table string, got, want [][]any, cols string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows stored, want %d", table, len(got), len(want))
	}
	names := strings.Split(cols, ", ")
	bad := 0
	for i := range want {
		for j := range want[i] {
			if !reflect.DeepEqual(got[i][j], want[i][j]) {
				if bad++; bad <= 10 {
					t.Errorf("%s row %d %s = %#v, want %#v", table, i, names[j], got[i][j], want[i][j])
				}
			}
		}
	}
}

// Records go into DuckDB and come back equal: timestamps, nulls, lists, maps, in order.
func TestRoundTrip(t *testing.T) {
	c := tracetest.Synthetic(3000, 7)
	// Edge values the synthetic run lacks.
	c.Investigations = append(c.Investigations, record.Investigation{InvestigationID: 1 << 40, ParentID: 1, RootID: 1,
		Depth: 2, ArrivedAt: 5e9, Ended: true, EndedAt: 7_000_001_000, FinalState: "terminated", TerminationReason: "budget"})
	c.Span(&record.Span{TraceID: 1, SpanID: 1<<63 + 5, ParentSpanID: 1<<63 + 4, Operation: record.OpSupervise,
		Status: record.StatusBlocked, Start: -1e9, End: 0, CausedBy: []uint64{1<<63 + 1, 2},
		Attrs: []record.Attr{{Key: "kind", Value: "edge"}, {Key: "point", Value: "p"}}})
	c.Span(&record.Span{TraceID: 1, SpanID: 1<<63 + 6, Operation: record.OpExecuteTool, Tool: "backtest", Status: record.StatusOK,
		Attrs: []record.Attr{{Key: "arg.strategy", Value: "other"}}}) // arguments unlike the tool's
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run := traces.Run{Scenario: "synthetic", Seed: 1<<64 - 1, Config: `{"name":"synthetic"}`, ConfigHash: "h",
		Version: "v0", Events: 42, Status: traces.StatusComplete, WallSeconds: 1.5}
	if err := LoadCollector(db, "rt", c, run); err != nil {
		t.Fatal(err)
	}

	spanCols := "trace_id, span_id, parent_span_id, investigation_id, agent_id, operation, tool, tool_version, model, op_key, attempt, " +
		"start, \"end\", queue_wait, status, failure_class, fault_id, input_tokens, output_tokens, compute, input_ref, output_ref, caused_by, kind"
	var want, wantAttrs [][]any
	for _, s := range c.Spans {
		var parent, key any
		if s.ParentSpanID != 0 {
			parent = int64(s.ParentSpanID)
		}
		if s.HasKey {
			key = opKey(s.OpKey)
		}
		caused := []any{}
		for _, id := range s.CausedBy {
			caused = append(caused, int64(id))
		}
		var kind any
		for _, a := range s.Attrs {
			v := a.Value
			if a.Key == "arg.api_key" {
				v = traces.NewRedactor(nil, nil, nil).Hash(v)
			}
			if a.Key == "kind" {
				kind = v
			}
			wantAttrs = append(wantAttrs, []any{int64(s.SpanID), a.Key, v})
		}
		want = append(want, []any{s.TraceID, int64(s.SpanID), parent, s.InvestigationID, s.AgentID, string(s.Operation),
			nullStr(s.Tool), nullStr(s.ToolVersion), nullStr(s.Model), key, nullI32(s.Attempt), at(s.Start), at(s.End),
			float64(s.QueueWait) / 1e9, string(s.Status), nullStr(s.FailureClass), nullStr(s.FaultID), s.InputTokens,
			s.OutputTokens, s.Compute, nullStr(s.InputRef), nullStr(s.OutputRef), caused, kind})
	}
	compareRows(t, "spans", query(t, db, "SELECT "+spanCols+" FROM spans WHERE run_id = 'rt' ORDER BY rowid"), want, spanCols)
	// Every attribute comes back through span_attributes, whichever table holds it.
	slices.SortFunc(wantAttrs, func(a, b []any) int {
		return cmp.Or(cmp.Compare(a[0].(int64), b[0].(int64)), cmp.Compare(a[1].(string), b[1].(string)), cmp.Compare(a[2].(string), b[2].(string)))
	})
	compareRows(t, "span_attributes", query(t, db, "SELECT span_id, key, value FROM span_attributes WHERE run_id = 'rt' "+
		"ORDER BY span_id, key, value"), wantAttrs, "span_id, key, value")
	if n := query(t, db, "SELECT count(*) FROM tool_args WHERE run_id = 'rt'")[0][0].(int64); n != 6 {
		t.Errorf("%d tool_args rows, want 6 (3 tools, 2 arguments each)", n)
	}

	invCols := "investigation_id, parent_id, root_id, depth, arrived_at, ended_at, final_state, termination_reason, steps, attempts, " +
		"revisions, escalations, tokens, compute, truly_valid, validated, crashes"
	want = nil
	for _, r := range c.Investigations {
		var parent, ended any
		if r.ParentID != 0 {
			parent = r.ParentID
		}
		if r.Ended {
			ended = at(r.EndedAt)
		}
		want = append(want, []any{r.InvestigationID, parent, r.RootID, r.Depth, at(r.ArrivedAt), ended, r.FinalState,
			nullStr(r.TerminationReason), r.Steps, r.Attempts, r.Revisions, r.Escalations, r.Tokens, r.Compute,
			r.TrulyValid, r.Validated, r.Crashes})
	}
	compareRows(t, "investigations", query(t, db, "SELECT "+invCols+" FROM investigations ORDER BY rowid"), want, invCols)

	trCols := "investigation_id, \"at\", from_state, to_state, event, failure_class, action, decided_by, reason, attempt"
	want = nil
	for _, r := range c.Transitions {
		want = append(want, []any{r.InvestigationID, at(r.At), nullStr(r.From), r.To, nullStr(r.Event), nullStr(r.FailureClass),
			nullStr(r.Action), nullStr(r.DecidedBy), nullStr(r.Reason), nullI32(r.Attempt)})
	}
	compareRows(t, "transitions", query(t, db, "SELECT "+trCols+" FROM transitions ORDER BY rowid"), want, trCols)

	exCols := "tool, op_key, investigation_id, execution, start, \"end\", outcome, delivered, compute, side_effects"
	want = nil
	for _, r := range c.Executions {
		want = append(want, []any{r.Tool, opKey(r.OpKey), r.InvestigationID, r.Execution, at(r.Start), at(r.End), r.Outcome,
			r.Delivered, r.Compute, r.SideEffects})
	}
	compareRows(t, "executions", query(t, db, "SELECT "+exCols+" FROM executions ORDER BY rowid"), want, exCols)

	fCols := "fault_id, kind, tool, start, \"end\", parameters, window_start, window_end, hits"
	want = nil
	red := traces.NewRedactor(nil, nil, nil)
	for _, r := range c.Faults {
		var ws, we any
		if r.Window {
			ws, we = at(r.Start), at(r.End)
		}
		want = append(want, []any{r.FaultID, r.Kind, nullStr(r.Tool), at(r.Start), at(r.End), red.JSON(r.Parameters), ws, we, nullStr(r.Hits)})
	}
	compareRows(t, "faults", query(t, db, "SELECT "+fCols+" FROM faults ORDER BY rowid"), want, fCols)

	sCols := "tool, \"at\", queued, in_service, parked, budget_tokens, breaker_state, attempts, failures, retries"
	want = nil
	for _, r := range c.Samples {
		var budget any
		if r.BudgetTokens >= 0 {
			budget = r.BudgetTokens
		}
		want = append(want, []any{r.Tool, at(r.At), r.Queued, r.InService, r.Parked, budget, r.BreakerState, r.Attempts, r.Failures, r.Retries})
	}
	compareRows(t, "tool_samples", query(t, db, "SELECT "+sCols+" FROM tool_samples ORDER BY rowid"), want, sCols)

	rCols := "run_id, scenario, seed, config, config_hash, version, events, status, wall_seconds"
	compareRows(t, "runs", query(t, db, "SELECT "+rCols+" FROM runs"), [][]any{{"rt", "synthetic", uint64(1<<64 - 1),
		`{"name":"synthetic"}`, "h", "v0", int64(42), "complete", 1.5}}, rCols)
}

// The digest stored in runs is the writer's, and equal runs store equal rows and digests.
func TestDigestStoredAndDeterministic(t *testing.T) {
	c := tracetest.Synthetic(2000, 9)
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var digests []string
	for i, batch := range []int{0, 333} {
		id := fmt.Sprintf("run-%d", i)
		l, err := db.Load(ctx, id, traces.Options{BatchRows: batch})
		if err != nil {
			t.Fatal(err)
		}
		c.Replay(l)
		if err := l.Finish(traces.Run{}); err != nil {
			t.Fatal(err)
		}
		digests = append(digests, l.Digest())
		if got := query(t, db, "SELECT digest FROM runs WHERE run_id = '"+id+"'"); got[0][0] != l.Digest() {
			t.Errorf("runs.digest %v, Load.Digest %s", got[0][0], l.Digest())
		}
	}
	if digests[0] != digests[1] {
		t.Errorf("digests differ: %v", digests)
	}
	for _, tb := range traces.Tables()[1:] {
		q := fmt.Sprintf("SELECT count(*) FROM (SELECT * EXCLUDE (run_id) FROM %[1]s WHERE run_id = 'run-0' EXCEPT ALL SELECT * EXCLUDE (run_id) FROM %[1]s WHERE run_id = 'run-1')", tb)
		if n := query(t, db, q)[0][0].(int64); n != 0 {
			t.Errorf("%s: %d rows of run-0 not in run-1", tb, n)
		}
	}
	if _, err := db.Load(ctx, "run-0", traces.Options{}); !errors.Is(err, ErrDuplicateRun) {
		t.Errorf("loading run-0 twice: %v; want ErrDuplicateRun", err)
	}
}

// Every Arrow buffer of a load is released once DuckDB has read it, on success and on
// failure.
func TestLoadReleasesEverything(t *testing.T) {
	c := tracetest.Synthetic(3000, 2)
	for _, fail := range []bool{false, true} {
		db, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		if fail {
			if _, err := db.SQL().Exec("DROP TABLE transitions"); err != nil {
				t.Fatal(err)
			}
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		l, err := db.Load(context.Background(), "leak", traces.Options{BatchRows: 500, Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		c.Replay(l)
		err = l.Finish(traces.Run{})
		if (err != nil) != fail {
			t.Errorf("fail=%v: Finish returned %v", fail, err)
		}
		mem.AssertSize(t, 0)
		db.Close()
	}
}

// A cancelled context stores a consistent, partial run.
func TestCancelledLoadIsPartial(t *testing.T) {
	c := tracetest.Synthetic(1000, 3)
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	l, err := db.Load(ctx, "p", traces.Options{BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Spans[:500] {
		l.Span(&c.Spans[i])
	}
	cancel()
	if err := l.Finish(traces.Run{Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	got := query(t, db, "SELECT status, (SELECT count(*) FROM spans WHERE run_id = 'p') FROM runs WHERE run_id = 'p'")
	if got[0][0] != "partial" || got[0][1] != int64(500) {
		t.Errorf("cancelled run: status %v with %v spans; want partial with 500", got[0][0], got[0][1])
	}
}

// A load that fails keeps nothing of its run and leaves the database usable.
func TestFailedLoadKeepsNothing(t *testing.T) {
	db := withToolSamplesAway(t)
	err := LoadCollector(db, "bad", tracetest.Synthetic(5000, 1), traces.Run{})
	if err == nil || !strings.Contains(err.Error(), "tool_samples") {
		t.Fatalf("load into a broken table: %v; want an error naming tool_samples", err)
	}
	t.Log(err)
	keepsNothing(t, db)
	if _, err := db.SQL().Exec("ALTER TABLE samples_away RENAME TO tool_samples"); err != nil {
		t.Fatal(err)
	}
	if err := LoadCollector(db, "good", tracetest.Synthetic(100, 1), traces.Run{}); err != nil {
		t.Errorf("loading after a failed load: %v", err)
	}
}

// A commit that fails after other tables' lanes have committed takes their rows back out:
// whichever table's commit fails, the run leaves no row in any table.
func TestFailedCommitKeepsNothing(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer func() { failCommit = nil }()
	for _, bad := range []traces.Table{traces.Runs, traces.Spans, traces.ToolSamples} {
		failCommit = func(t traces.Table) bool { return t == bad }
		err := LoadCollector(db, "bad-"+bad.String(), tracetest.Synthetic(2000, 1), traces.Run{})
		if err == nil || !strings.Contains(err.Error(), bad.String()) {
			t.Errorf("commit of %s refused: Finish returned %v; want an error naming %s", bad, err, bad)
		}
		for _, tb := range traces.Tables() {
			if n := query(t, db, "SELECT count(*) FROM "+tb.String())[0][0].(int64); n != 0 {
				t.Errorf("commit of %s refused: %s keeps %d rows", bad, tb, n)
			}
		}
	}
	failCommit = nil
	if err := LoadCollector(db, "good", tracetest.Synthetic(100, 1), traces.Run{}); err != nil {
		t.Errorf("loading after failed commits: %v", err)
	}
}

// A run stored as `mayday run` stores it, with its metrics row and derived tables, keeps no
// row of either when its runs row's commit fails; and the same run then loads whole.
func TestFailedCommitKeepsNoDerivedRows(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc, err := scenarios.Load("transient-errors", []string{"workload.investigations=60"})
	if err != nil {
		t.Fatal(err)
	}
	failCommit = func(tb traces.Table) bool { return tb == traces.Runs }
	_, ferr := simulateLiveFinish(t, db, sc, 1, "r", false)
	failCommit = nil
	if ferr == nil || !strings.Contains(ferr.Error(), "runs") {
		t.Fatalf("commit of runs refused: Finish returned %v; want an error naming runs", ferr)
	}
	for _, name := range append(derivedTableNames(), derivedRuns) {
		if n := query(t, db, "SELECT count(*) FROM "+name)[0][0].(int64); n != 0 {
			t.Errorf("%s keeps %d rows of a run whose commit failed", name, n)
		}
	}
	keepsNothingIn(t, db, nil)
	simulateLive(t, db, sc, 1, "r", false)
	if n := query(t, db, "SELECT count(*) FROM recovery_episodes WHERE run_id = 'r'")[0][0].(int64); n == 0 {
		t.Error("the run loaded again has no recovery episodes")
	}
}

// A lane that fails after other lanes have committed (each commits as soon as it has
// drained) leaves nothing either: the tables already committed are emptied of the run
// again, and the table that cannot be written is not touched. The tool_samples lane waits,
// before it writes, until the spans of the run are committed.
func TestFailedLoadAfterEarlyCommitsKeepsNothing(t *testing.T) {
	db := withToolSamplesAway(t)
	committed := false
	laneStarts = func(tb traces.Table) {
		if tb != traces.ToolSamples {
			return
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			var n int64
			if db.SQL().QueryRow("SELECT count(*) FROM spans WHERE run_id = 'bad'").Scan(&n) == nil && n > 0 {
				committed = true
				return
			}
		}
	}
	defer func() { laneStarts = nil }()
	err := LoadCollector(db, "bad", tracetest.Synthetic(5000, 1), traces.Run{})
	if !committed {
		t.Fatal("the spans lane did not commit before the tool_samples lane began: the test tested nothing")
	}
	if err == nil || !strings.Contains(err.Error(), "tool_samples") {
		t.Fatalf("load into a broken table after early commits: %v; want an error naming tool_samples", err)
	}
	keepsNothing(t, db)
}

// withToolSamplesAway is a new database in memory whose tool_samples table is renamed
// samples_away, so that a load's tool_samples lane fails.
func withToolSamplesAway(t *testing.T) *DB {
	t.Helper()
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.SQL().Exec("ALTER TABLE tool_samples RENAME TO samples_away"); err != nil {
		t.Fatal(err)
	}
	return db
}

// keepsNothing fails the test unless every trace table of db (tool_samples renamed
// samples_away) is empty.
func keepsNothing(t *testing.T, db *DB) {
	t.Helper()
	keepsNothingIn(t, db, map[traces.Table]string{traces.ToolSamples: "samples_away"})
}

// keepsNothingIn fails the test unless every trace table of db is empty; renamed gives the
// names of tables a test renamed.
func keepsNothingIn(t *testing.T, db *DB, renamed map[traces.Table]string) {
	t.Helper()
	for _, tb := range traces.Tables() {
		name := tb.String()
		if r, ok := renamed[tb]; ok {
			name = r
		}
		if n := query(t, db, "SELECT count(*) FROM "+name)[0][0].(int64); n != 0 {
			t.Errorf("%s keeps %d rows of a failed load", tb, n)
		}
	}
}

// An abandoned load keeps nothing, not even the rows its lanes had inserted (more than a
// batch of each large table), Finish reports it, and the run can be loaded again.
func TestAbandonKeepsNothing(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := db.Load(context.Background(), "gone", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tracetest.Synthetic(20000, 1).Replay(l)
	l.Abandon()
	if err := l.Finish(traces.Run{}); err == nil {
		t.Error("Finish after Abandon: no error; want one")
	}
	for _, tb := range traces.Tables() {
		if n := query(t, db, "SELECT count(*) FROM "+tb.String())[0][0].(int64); n != 0 {
			t.Errorf("an abandoned load left %d rows in %s", n, tb)
		}
	}
	if err := LoadCollector(db, "gone", tracetest.Synthetic(100, 1), traces.Run{}); err != nil {
		t.Errorf("loading the abandoned run again: %v", err)
	}
}

// Timestamps are stored as UTC whatever the session's time zone.
func TestTimeZoneIndependent(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL().Exec("SET GLOBAL TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	c := &record.Collector{}
	c.Transition(&record.Transition{InvestigationID: 1, At: 3600e9, To: "running"})
	if err := LoadCollector(db, "tz", c, traces.Run{}); err != nil {
		t.Fatal(err)
	}
	got := query(t, db, `SELECT strftime("at", '%Y-%m-%d %H:%M:%S') FROM transitions`)
	if got[0][0] != "2026-01-01 01:00:00" {
		t.Errorf("transition at 1h of simulated time stored as %v, want 2026-01-01 01:00:00", got[0][0])
	}
}

// executions.side_effects is what the simulator recorded, whatever runs.config says.
func TestSideEffects(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := &record.Collector{}
	want := []any{true, false, true}
	for i, tool := range []string{"backtest", "fetch_data", "notify"} {
		c.Execution(&record.Execution{Tool: tool, Execution: 1, Outcome: "ok", SideEffects: want[i].(bool)})
	}
	cfg := `{"name":"x","tools":[{"name":"backtest","idempotency":"natural"},{"name":"fetch_data","idempotency":"keyed"}]}`
	if err := LoadCollector(db, "cfg", c, traces.Run{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	got := query(t, db, "SELECT side_effects FROM executions ORDER BY rowid")
	for i := range want {
		if got[i][0] != want[i] {
			t.Errorf("side_effects of %s = %v, want %v", c.Executions[i].Tool, got[i][0], want[i])
		}
	}
}

// The canary secret planted in a tool argument, a fault parameter, a transition reason and
// the run's config reaches no file of the run folder and no value of any table.
func TestRedactionCanary(t *testing.T) {
	const control = "control-value-8d1e6b" // under a key that is not secret: must be found
	dir := t.TempDir()
	path := filepath.Join(dir, DBFile)
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Stored uncompressed, both strings would be visible in the file's bytes: the scan below
	// finds the control, so it would find the canary.
	if _, err := db.SQL().Exec("SET force_compression = 'uncompressed'"); err != nil {
		t.Fatal(err)
	}
	c := tracetest.Synthetic(2000, 5)
	c.Spans[0].Attrs = append(c.Spans[0].Attrs, record.Attr{Key: "note", Value: control})
	c.Transitions[0].Reason = "retry with api_key=" + tracetest.Canary
	cfg := `{"name":"canary","tools":[{"name":"backtest","idempotency":"keyed","arguments":[{"key":"strategy","value":"momentum"},{"key":"api_key","value":"` + tracetest.Canary + `"}]}]}`
	if err := LoadCollector(db, "canary", c, traces.Run{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{tracetest.Canary, control} {
		for _, tb := range traces.Tables() {
			n := query(t, db, fmt.Sprintf("SELECT count(*) FROM %s AS t WHERE t::VARCHAR LIKE '%%%s%%'", tb, s))[0][0].(int64)
			if s == tracetest.Canary && n > 0 {
				t.Errorf("the canary is in %d rows of %s", n, tb)
			}
			if s == control && tb == traces.SpanAttrs && n != 1 {
				t.Errorf("the control is in %d rows of span_attrs, want 1: the search is blind", n)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range []string{tracetest.Canary, control} {
			if bytes.Contains(b, []byte(s)) {
				found[s] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found[control] {
		t.Fatalf("the control string is not in the files of %s: the byte scan is blind", dir)
	}
	if found[tracetest.Canary] {
		t.Errorf("the canary is in the files of %s", dir)
	}
}

// The same canary, planted as a tool argument of a real scenario and carried by the
// simulator into its spans (arg.api_key) and into runs.config, reaches no file.
func TestRedactionCanarySimulated(t *testing.T) {
	const control = "control-argument-5c2a90"
	s, err := scenarios.Load("research-fleet", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Workload.Investigations = 50
	s.Tools[0].Arguments = []scenarios.Argument{{Key: "strategy", Value: control}, {Key: "api_key", Value: tracetest.Canary}}
	dir := t.TempDir()
	db, err := Create(filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec("SET force_compression = 'uncompressed'"); err != nil {
		t.Fatal(err)
	}
	l, err := db.Load(context.Background(), "sim", traces.ScenarioOptions(s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Run(context.Background(), s, s.Seed, l, sim.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(traces.Run{Scenario: s.Name, Seed: s.Seed, Config: string(s.JSON()), ConfigHash: s.Hash()}); err != nil {
		t.Fatal(err)
	}
	n := query(t, db, "SELECT count(*) FROM span_attributes WHERE key = 'arg.api_key' AND value LIKE 'redacted:hmac-sha256:%'")[0][0].(int64)
	if n == 0 {
		t.Fatal("no span carries the redacted tool argument: the simulator did not record it, so this test shows nothing")
	}
	if n := query(t, db, "SELECT count(*) FROM tool_args WHERE key = 'api_key' AND value LIKE 'redacted:hmac-sha256:%'")[0][0].(int64); n != 1 {
		t.Errorf("%d redacted api_key rows in tool_args, want 1", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var all []byte
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(control)) {
		t.Fatal("the control argument is not in the run folder's bytes: the scan is blind")
	}
	if bytes.Contains(all, []byte(tracetest.Canary)) {
		t.Error("the canary tool argument is in the run folder's bytes")
	}
}
