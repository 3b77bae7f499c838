//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// canary is the content of a local file a tampered database tries to read into an output.
const canary = "CANARY-5c1e-local-file-must-not-leak"

// tamperedDB writes a run database and then changes it as a hostile colleague would, with
// tamper's statements on a plain writable handle. It returns the file, the canary file's
// path and the metrics of the untouched run.
func tamperedDB(t *testing.T, tamper ...string) (path, secret string, clean []Metrics) {
	t.Helper()
	dir := t.TempDir()
	secret = filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, DBFile)
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	loadSynthRun(t, db, "synthetic-s1", 1)
	ctx := context.Background()
	if clean, err = db.AllMetrics(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range tamper {
		q = strings.ReplaceAll(q, "SECRET", literal(secret))
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatalf("tampering: %s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, secret, clean
}

// Views a database stores under mayday's names are never run: the metrics, incidents and
// tool_stats a report or compare reads are mayday's own definitions over the file's tables,
// and the canary file read by the stored views never appears.
func TestOpenIgnoresStoredViews(t *testing.T) {
	path, _, clean := tamperedDB(t,
		"CREATE OR REPLACE VIEW metrics AS SELECT content AS run_id, 1e9 AS completion_rate FROM read_text(SECRET)",
		"CREATE OR REPLACE VIEW disruptions AS SELECT content AS tool FROM read_text(SECRET)",
		"CREATE OR REPLACE VIEW disruptions AS SELECT content AS tool FROM read_text(SECRET)",
		"CREATE VIEW old_view AS SELECT content FROM read_text(SECRET)",
	)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	got, err := db.AllMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", clean) { // %v: NaN equals NaN
		t.Errorf("metrics of a tampered database:\n%+v\nwant mayday's own, as stored before tampering:\n%+v", got, clean)
	}
	for _, q := range []string{"SELECT * FROM incidents", "SELECT * FROM tool_stats", "SELECT * FROM metrics", "SELECT * FROM old_view"} {
		_, rows, err := db.Query(ctx, q)
		if err != nil && !strings.Contains(err.Error(), "not mayday's") {
			t.Fatalf("%s: %v", q, err)
		}
		if s := fmt.Sprint(rows); strings.Contains(s, canary) {
			t.Errorf("%s ran the stored definition: %s", q, s)
		}
	}
	// The stored view itself, named explicitly, runs sandboxed: it cannot read the file.
	_, rows, err := db.Query(ctx, "SELECT * FROM "+srcAlias+".main.metrics")
	if err == nil || strings.Contains(fmt.Sprint(rows), canary) {
		t.Errorf("the stored view read a local file: %v %v", rows, err)
	}
}

// A trace table replaced by a view, or a table named like nothing mayday writes, is refused.
func TestOpenRefusesForeignLayout(t *testing.T) {
	for name, tamper := range map[string]string{
		"table as view": "DROP TABLE faults; CREATE VIEW faults AS SELECT * FROM read_text(SECRET)",
		"hostile name":  `CREATE TABLE "x; DROP TABLE runs" (run_id VARCHAR)`,
		"no runs":       "DROP TABLE runs",
		// A macro could shadow a function the views call.
		"macro": "CREATE MACRO main.quantile_cont(x, q) AS 12345.0",
	} {
		t.Run(name, func(t *testing.T) {
			path, _, _ := tamperedDB(t, tamper)
			db, err := Open(path)
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, ErrNotMayday) && !errors.Is(err, ErrIdentifier) {
				t.Errorf("%v; want ErrNotMayday or ErrIdentifier", err)
			}
		})
	}
}

// A run id that would be a path never reaches one: listing the runs refuses it, so export
// writes nothing, inside --out or outside it.
func TestHostileRunIDRefused(t *testing.T) {
	path, _, _ := tamperedDB(t,
		"UPDATE runs SET run_id = '../../x/PWNED'",
		"UPDATE spans SET run_id = '../../x/PWNED'")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := t.TempDir()
	out := filepath.Join(base, "a", "b", "export")
	for _, f := range []string{FormatOTLP, FormatParquet} {
		_, err := Export(context.Background(), db, out, ExportOptions{Format: f})
		if !errors.Is(err, ErrIdentifier) {
			t.Errorf("%s export of run id ../../x/PWNED: %v; want ErrIdentifier", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("export wrote outside --out: %v", err)
	}
	for _, id := range []string{"..", "a/b", `a\b`, "", ".hidden", "a..b", "x\x00", strings.Repeat("a", 201)} {
		if CheckRunID(id) == nil {
			t.Errorf("CheckRunID(%q) accepted it", id)
		}
	}
	for _, id := range []string{"research-fleet-s42", "fleet-p3-s18446744073709551615", "a_b.c"} {
		if err := CheckRunID(id); err != nil {
			t.Errorf("CheckRunID(%q): %v", id, err)
		}
	}
}

// Reads cannot touch other files, change settings or load extensions; enable_logging, which
// DuckDB runs inside a SELECT despite lock_configuration, is refused or its result withheld.
func TestOpenSandboxStatements(t *testing.T) {
	path, secret, _ := tamperedDB(t)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		"SELECT * FROM read_text(" + literal(secret) + ")",
		"SET enable_external_access = true",
		"SET lock_configuration = false",
		"ATTACH " + literal(filepath.Join(t.TempDir(), "y.duckdb")) + " AS y",
		"LOAD httpfs",
		"SELECT * FROM enable_logging()",
		"SELECT * FROM enable_logging('QueryLog', storage = 'stdout')",
		"CALL enable_logging(level = 'DEBUG')",
		"SELECT * FROM query('SELECT * FROM enable_logging()')",
	} {
		if _, rows, err := db.Query(ctx, q); err == nil {
			t.Errorf("%s: ran (%v)", q, rows)
		}
	}
	_, rows, err := db.Query(ctx, "SELECT current_setting('enable_logging')::BOOLEAN, current_setting('enable_external_access')::BOOLEAN")
	if err != nil || rows[0][0] != false || rows[0][1] != false {
		t.Errorf("settings after the attempts: %v %v", rows, err)
	}
	// Named by its qualified name, DuckDB's own enable_logging runs: the handle withholds its
	// result and refuses every later statement.
	if _, _, err := db.Query(ctx, "SELECT * FROM system.main.enable_logging()"); !errors.Is(err, ErrNotQuery) {
		t.Errorf("system.main.enable_logging(): %v; want ErrNotQuery", err)
	}
	if _, _, err := db.Query(ctx, "SELECT 1"); !errors.Is(err, ErrNotQuery) {
		t.Errorf("a statement after the settings changed: %v; want ErrNotQuery", err)
	}
}

// A runaway read stops at the time limit and at the memory limit, with errors naming them;
// it spills into a private folder that Close removes, never beside the file, even when the
// run folder holds a symlink where DuckDB's default spill folder would be.
func TestOpenLimits(t *testing.T) {
	path, _, _ := tamperedDB(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	db, err := OpenLimited(path, Limits{Memory: "64MB", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	spill := db.spill
	ctx := context.Background()
	start := time.Now()
	_, _, err = db.Query(ctx, "SELECT count(*) FROM range(100000000) a, range(100000000) b")
	if !errors.Is(err, ErrTimeLimit) || time.Since(start) > 5*time.Second {
		t.Errorf("runaway query: %v after %s; want ErrTimeLimit within seconds", err, time.Since(start))
	}
	db.Close()
	if _, err := os.Stat(spill); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the spill folder %s is left after Close: %v", spill, err)
	}

	db, err = OpenLimited(path, Limits{Memory: "64MB", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, _, err = db.Query(ctx, "SELECT list(range) FROM range(40000000)")
	if !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("a read over the memory limit: %v; want ErrMemoryLimit", err)
	}
	// A sort larger than memory spills, and finishes.
	_, rows, err := db.Query(ctx, "SELECT count(*) FROM (SELECT range FROM range(12000000) ORDER BY hash(range))")
	if err != nil || rows[0][0] != int64(12000000) {
		t.Errorf("a spilling sort: %v %v", rows, err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("DuckDB spilled through the run folder's symlink: %v", entries)
	}
}

// A handle opened for one statement (Limits.Statement, as mayday query opens one) defines
// the views that statement names and those they read, with the rows of a full handle; every
// other view of mayday's fails when read, even through SQL built at run time, and even
// under a count that reads no column: neither the file's view of that name nor an empty
// answer stands in for it.
func TestStatementHandleDefinesOnlyItsViews(t *testing.T) {
	path, _, _ := tamperedDB(t,
		"CREATE OR REPLACE VIEW disruptions AS SELECT content AS tool FROM read_text(SECRET)",
		"CREATE OR REPLACE VIEW disruptions AS SELECT 42 AS tool",
	)
	ctx := context.Background()
	full, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	for _, q := range []string{
		"SELECT * FROM metrics ORDER BY run_id",
		"SELECT * FROM incidents ORDER BY ALL",
		"SELECT * FROM recovery_episodes ORDER BY ALL",
		"SELECT run_id, count(*) FROM lifecycle GROUP BY ALL ORDER BY ALL",
		"select tool, attempts from TOOL_STATS order by all",
		`SELECT * FROM "disruptions" ORDER BY ALL`,
		"SELECT sim_minute('any', sim_epoch()) AS m",
	} {
		db, err := OpenLimited(path, Limits{Statement: q})
		if err != nil {
			t.Fatal(err)
		}
		_, want, err := full.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s, full handle: %v", q, err)
		}
		_, got, err := db.Query(ctx, q)
		if err != nil {
			t.Errorf("%s, its own handle: %v", q, err)
		} else if fmt.Sprintf("%v", got) != fmt.Sprintf("%v", want) || len(want) == 0 {
			t.Errorf("%s: %v on its own handle, %v on a full one", q, got, want)
		}
		db.Close()
	}
	q := "SELECT * FROM metrics"
	db, err := OpenLimited(path, Limits{Statement: q})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, other := range []string{
		"SELECT count(*) FROM query('SELECT * FROM disrup' || 'tions')",
		"SELECT count(*) FROM query('SELECT * FROM ro' || 'ots')",
		"SELECT * FROM query_table('call' || '_rows')",
	} {
		_, rows, err := db.Query(ctx, other)
		if err == nil || !strings.Contains(err.Error(), "not defined on this handle") {
			t.Errorf("%s on a handle opened for %q: %v, %v; want the view refused", other, q, rows, err)
		}
	}
}

// neededViews: a statement's views and those they read; metrics needs metrics_recomputed only
// when the stored rows are not read, and metrics_recomputed (one statement) needs no other.
func TestNeededViews(t *testing.T) {
	files := viewSQL()
	for _, c := range []struct {
		statement string
		want      []string
	}{
		{"SELECT * FROM metrics", []string{"metrics"}},
		{"SELECT 1", nil},
		{"SELECT * FROM Disruptions", []string{"disruptions", "call_rows", "attempts"}},
		{"SELECT * FROM token_costs", []string{"token_costs"}},
	} {
		got := neededViews(files, c.statement)
		var names []string
		for _, f := range files {
			if got[f.view] {
				names = append(names, f.view)
			}
		}
		want := slices.Clone(c.want)
		slices.Sort(want)
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("%q: %v, want %v", c.statement, names, want)
		}
	}
	if neededViews(files, "") != nil {
		t.Error("no statement: not every view")
	}
}

// Share keeps views as rows for some runs: each shared view, and each view that reads one,
// gives those runs the rows it gives on a handle that computes them, and no row of another
// run; it refuses a database opened for writing, a name that is not a view of mayday's and
// an order in which a view comes before one it may read.
func TestShare(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DBFile)
	specs := batchSpecs(t)[:2]
	runsInto(t, path, specs, nil)
	ctx := context.Background()
	full, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	shared := []string{"run_clock", "call_rows", "calls", "disruptions"}
	if err := db.Share(ctx, []string{specs[0].RunID}, shared...); err != nil {
		t.Fatal(err)
	}
	nonEmpty := 0
	for _, v := range append(slices.Clone(shared), "tool_stats", "incidents", "tool_minutes", "recovery_curve", "lifecycle", "goodput") {
		q := "SELECT * FROM " + v + " WHERE run_id = '" + specs[0].RunID + "' ORDER BY ALL"
		_, want, err := full.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := db.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %d rows shared, %d computed, or other values", v, len(got), len(want))
		}
		if len(want) > 0 {
			nonEmpty++
		}
		_, other, err := db.Query(ctx, "SELECT count(*) FROM "+v+" WHERE run_id = '"+specs[1].RunID+"'")
		if err != nil {
			t.Fatal(err)
		}
		if n := other[0][0].(int64); n != 0 && slices.Contains(shared, v) {
			t.Errorf("%s shared for %s holds %d rows of %s", v, specs[0].RunID, n, specs[1].RunID)
		}
	}
	if nonEmpty < 8 {
		t.Errorf("only %d of the views have rows for %s: the comparison says little", nonEmpty, specs[0].RunID)
	}
	if err := db.Share(ctx, nil, "disruptions", "calls"); err == nil {
		t.Error("Share of disruptions before calls: no error")
	}
	if err := db.Share(ctx, nil, "runs"); err == nil {
		t.Error("Share of a table: no error")
	}
	w, err := Create(filepath.Join(dir, "w.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Share(ctx, nil, "calls"); err == nil {
		t.Error("Share on a database opened for writing: no error")
	}
}
