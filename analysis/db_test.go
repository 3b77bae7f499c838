//go:build duckdb_arrow

package analysis

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

// The DuckDB tables have exactly the columns of the Arrow schemas, in the same order.
func TestTablesMatchSchemas(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tb := range traces.Tables() {
		_, rows, err := db.Query(context.Background(),
			"SELECT column_name FROM information_schema.columns WHERE table_name = '"+tb.String()+"' ORDER BY ordinal_position")
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, r := range rows {
			got = append(got, r[0].(string))
		}
		for _, f := range traces.Schema(tb).Fields() {
			want = append(want, f.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("table %s has columns %v; the Arrow schema has %v", tb, got, want)
		}
	}
}

func TestCreateOpenErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DBFile)
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Errorf("opening a database this process holds: %v; want an 'already open' error, not a hang", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path); !errors.Is(err, ErrExists) {
		t.Errorf("Create over an existing file: %v; want ErrExists", err)
	}
	if _, err := Open(filepath.Join(dir, "nope.duckdb")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open of a missing file: %v", err)
	}
	if _, err := OpenWrite(dir); err == nil || !strings.Contains(err.Error(), DBFile) {
		t.Errorf("OpenWrite of a run folder: %v; want a hint at %s", err, DBFile)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.duckdb.wal"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(filepath.Join(dir, "x.duckdb")); err == nil || !strings.Contains(err.Error(), "write-ahead log") {
		t.Errorf("Create beside a stale WAL: %v", err)
	}
}

// A database opened with Open refuses every write with ErrReadOnly, and still answers.
func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBFile)
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := LoadCollector(db, "r1", tracetest.Synthetic(100, 1), traces.Run{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ro2, err := Open(path) // read-only opens share DuckDB's instance
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenWrite(path); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Errorf("OpenWrite of a file open read-only: %v; want an 'already open' error, not a hang", err)
	}
	ctx := context.Background()
	if _, rows, err := ro2.Query(ctx, "SELECT count(*) FROM runs"); err != nil || rows[0][0] != int64(1) {
		t.Errorf("second read-only handle: %v %v", rows, err)
	}
	if err := ro2.Close(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO runs (run_id) VALUES ('x')",
		"CREATE TABLE z (a INTEGER)",
		"DELETE FROM spans",
		"DROP TABLE spans",
	} {
		_, _, err := ro.Query(ctx, q)
		if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s on a read-only database: %v; want ErrReadOnly naming %s", q, err, path)
		}
	}
	if _, err := ro.Load(ctx, "r2", traces.Options{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Load on a read-only database: %v", err)
	}
	_, rows, err := ro.Query(ctx, "SELECT count(*) FROM spans")
	if err != nil || rows[0][0].(int64) == 0 {
		t.Errorf("reading a read-only database: %v %v", rows, err)
	}
}

// The metrics view has exactly the columns of the metric table (metric.All) besides run_id
// and termination_reasons: a metric added to one and not the other fails here. (The view
// keeps its own column order, which `SELECT *` users see.)
func TestMetricsViewMatchesTable(t *testing.T) {
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, rows, err := db.Query(context.Background(),
		"SELECT column_name FROM information_schema.columns WHERE table_name = 'metrics' ORDER BY ordinal_position")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r[0].(string))
	}
	want := slices.Concat([]string{"run_id", "termination_reasons"}, MetricNames)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the metrics view has columns\n%v\nthe metric table says\n%v", got, want)
	}
}

// An out-of-memory error from DuckDB says how a mayday user raises the limit; any other
// error is left as it is.
func TestMemoryHint(t *testing.T) {
	oom := memoryHint(errors.New("Out of Memory Error: could not allocate block"))
	if !strings.Contains(oom.Error(), MemoryEnv+"=") || !strings.Contains(oom.Error(), "could not allocate") {
		t.Errorf("out of memory: %v; want DuckDB's text and %s", oom, MemoryEnv)
	}
	other := errors.New("Binder Error: no such column")
	if got := memoryHint(other); got != other {
		t.Errorf("another error became %v", got)
	}
}

// A database mayday writes caps DuckDB's memory at DefaultMemory, MemoryEnv overrides it, and
// a value DuckDB cannot read is an error naming the variable.
func TestMemoryLimitApplied(t *testing.T) {
	limit := func() string {
		db, err := Create(filepath.Join(t.TempDir(), "m.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v string
		if err := db.SQL().QueryRow("SELECT current_setting('memory_limit')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := limit(); got != "366.2 MiB" { // 384 MB as DuckDB prints it
		t.Errorf("default memory_limit %q, want 366.2 MiB", got)
	}
	t.Setenv(MemoryEnv, "1GB")
	if err := CheckMemoryEnv(); err != nil {
		t.Errorf("CheckMemoryEnv with 1GB: %v", err)
	}
	if got := limit(); got != "953.6 MiB" {
		t.Errorf("%s=1GB: memory_limit %q, want 953.6 MiB", MemoryEnv, got)
	}
	t.Setenv(MemoryEnv, "lots")
	if err := CheckMemoryEnv(); err == nil || !strings.Contains(err.Error(), MemoryEnv) {
		t.Errorf("CheckMemoryEnv with %s=lots: %v; want an error naming it", MemoryEnv, err)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "bad.duckdb")); err == nil || !strings.Contains(err.Error(), MemoryEnv) {
		t.Errorf("%s=lots: Create returned %v; want an error naming %s", MemoryEnv, err, MemoryEnv)
	}
}

// A new database defines its views while its first run loads: a run loads in the meantime,
// every query sees the views, and views that could not be defined fail the queries and
// Close, so a run folder is not kept without them.
func TestViewsDefinedWhileLoading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.duckdb")
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	c := tracetest.Synthetic(300, 4)
	l, err := db.Load(context.Background(), "r1", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Replay(l)
	if err := l.Finish(traces.Run{Scenario: "synthetic"}); err != nil {
		t.Fatal(err)
	}
	_, rows, err := db.Query(context.Background(), "SELECT count(*) FROM metrics")
	if err != nil || len(rows) != 1 || rows[0][0] != int64(1) {
		t.Fatalf("metrics after the load: %v, %v; want one row", rows, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Views defined only after the run's records are in (a slow or busy machine): the
	// derived tables, which read the run's clock from them, wait for them.
	delayViews = func() { time.Sleep(300 * time.Millisecond) }
	db, err = Create("")
	delayViews = nil
	if err != nil {
		t.Fatal(err)
	}
	if err := LoadCollector(db, "slow", c, traces.Run{Scenario: "synthetic", Status: traces.StatusComplete}); err != nil {
		t.Fatalf("a run loaded before the views were defined: %v", err)
	}
	if _, rows, err := db.Query(context.Background(), "SELECT count(*) FROM tool_stats WHERE run_id = 'slow'"); err != nil || rows[0][0].(int64) == 0 {
		t.Errorf("tool_stats of a run loaded before the views: %v, %v; want rows", rows, err)
	}
	db.Close()

	failViews = errors.New("views refused (test)")
	defer func() { failViews = nil }()
	db, err = Create(filepath.Join(t.TempDir(), "f.duckdb"))
	if err != nil {
		t.Fatalf("Create does not wait for the views: %v", err)
	}
	if _, _, err := db.Query(context.Background(), "SELECT 1"); !errors.Is(err, failViews) {
		t.Errorf("a query after the views failed: %v, want their error", err)
	}
	if err := db.Close(); !errors.Is(err, failViews) {
		t.Errorf("Close after the views failed: %v, want their error", err)
	}
}

// A checkpoint of a database mayday writes leaves the row groups already written as they are
// (keepRowGroups): two appends of 130,000 rows each end in a partial row group of 7,120 rows
// each, and DuckDB's default checkpoint would merge the first partial one with the rows after
// it (the three row groups from it on fit in two), rewriting them.
func TestCheckpointKeepsRowGroups(t *testing.T) {
	ctx := context.Background()
	rowGroups := func(vacuum bool) int {
		db, err := Create(filepath.Join(t.TempDir(), "v.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		stmts := []string{
			"CREATE TABLE x AS SELECT range AS i FROM range(130000)",
			"INSERT INTO x SELECT range FROM range(130000)",
			"CHECKPOINT",
		}
		if vacuum {
			stmts = append([]string{"RESET max_vacuum_tasks"}, stmts...)
		}
		for _, q := range stmts {
			if _, err := db.SQL().ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('x')").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := rowGroups(false); got != 4 {
		t.Errorf("after a checkpoint, %d row groups; want the 4 written", got)
	}
	if got := rowGroups(true); got != 3 {
		t.Errorf("with DuckDB's default vacuum, %d row groups after a checkpoint; want 3 (the case no longer tells the two apart)", got)
	}
}

// ThreadsEnv caps DuckDB's threads in a database mayday writes and in one it reads (the
// sandbox); a value that is not a whole number of threads is refused by CheckThreadsEnv.
func TestThreadsEnvApplied(t *testing.T) {
	threads := func(db *DB) int {
		t.Helper()
		defer db.Close()
		var n int
		if err := db.SQL().QueryRow("SELECT current_setting('threads')").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	path := filepath.Join(t.TempDir(), "t.duckdb")
	t.Setenv(ThreadsEnv, "7")
	db, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	handRun(t, db, "hand-s1")
	if n := threads(db); n != 7 {
		t.Errorf("%s=7: a database written has %d threads", ThreadsEnv, n)
	}
	read, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := threads(read); n != 7 {
		t.Errorf("%s=7: a database read has %d threads", ThreadsEnv, n)
	}
	for _, bad := range []string{"0", "-1", "two", "1.5"} {
		t.Setenv(ThreadsEnv, bad)
		if err := CheckThreadsEnv(); err == nil || !strings.Contains(err.Error(), ThreadsEnv) {
			t.Errorf("CheckThreadsEnv with %s=%q: %v; want an error naming it", ThreadsEnv, bad, err)
		}
	}
	t.Setenv(ThreadsEnv, " 2 ")
	if err := CheckThreadsEnv(); err != nil {
		t.Errorf("CheckThreadsEnv with %q: %v", " 2 ", err)
	}
}

// While runs load into a database file, DuckDB's memory limit is LoadBufferPerRun for each
// (never above the database's own), and the database's own once the last has finished; a
// limit set with MemoryEnv, and a database in memory, keep theirs throughout.
func TestLoadsLowerTheBuffers(t *testing.T) {
	limit := func(db *DB) float64 {
		t.Helper()
		var v string
		if err := db.SQL().QueryRow("SELECT current_setting('memory_limit')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		b, ok := settingBytes(v)
		if !ok {
			t.Fatalf("memory_limit %q: not a size", v)
		}
		return b
	}
	// DuckDB shows a limit rounded to a tenth of its unit, and sets it in whole MiB here.
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.06*(1<<20)+want*1e-3 }
	c := tracetest.Synthetic(30, 4)
	for _, env := range []string{"", "300MB"} {
		t.Setenv(MemoryEnv, env)
		db, err := Create(filepath.Join(t.TempDir(), "m.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		own := limit(db)
		l1, err := db.Load(context.Background(), "r1", traces.Options{})
		if err != nil {
			t.Fatal(err)
		}
		during1 := limit(db)
		l2, err := db.Load(context.Background(), "r2", traces.Options{})
		if err != nil {
			t.Fatal(err)
		}
		during2 := limit(db)
		for _, l := range []*Load{l1, l2} {
			c.Replay(l)
			if err := l.Finish(traces.Run{Scenario: "synthetic"}); err != nil {
				t.Fatal(err)
			}
		}
		after := limit(db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		want1, want2 := float64(int64(LoadBufferPerRun)>>20<<20), float64(int64(2*LoadBufferPerRun)>>20<<20)
		if env != "" {
			want1, want2 = own, own
		}
		if !near(during1, want1) || !near(during2, min(want2, own)) || after != own {
			t.Errorf("%s=%q: limit %.0f, with one load %.0f (want %.0f), two %.0f (want %.0f), after %.0f (want %.0f)",
				MemoryEnv, env, own, during1, want1, during2, min(want2, own), after, own)
		}
	}
	t.Setenv(MemoryEnv, "")
	db, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	own := limit(db)
	l, err := db.Load(context.Background(), "r1", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := limit(db); got != own {
		t.Errorf("a database in memory: limit %.0f while loading; want its own %.0f", got, own)
	}
	c.Replay(l)
	if err := l.Finish(traces.Run{Scenario: "synthetic"}); err != nil {
		t.Fatal(err)
	}
}

// settingBytes reads a size as mayday sets DuckDB's memory limit ("384MB", "320MiB") or
// DuckDB shows it ("366.2 MiB", "1.0 GiB", "512 bytes").
func settingBytes(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, false
	}
	x, err := strconv.ParseFloat(v[:i], 64)
	scale := map[string]float64{"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[strings.TrimSpace(v[i:])]
	return x * scale, err == nil && scale > 0
}

func TestSettingBytes(t *testing.T) {
	for in, want := range map[string]float64{"366.2 MiB": 366.2 * (1 << 20), "1.0 GiB": 1 << 30, "512 bytes": 512, "2 GB": 2e9, "384MB": 384e6, "320MiB": 320 << 20} {
		if got, ok := settingBytes(in); !ok || got != want {
			t.Errorf("settingBytes(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "lots", "12", "-1 MiB", "3 parsecs"} {
		if _, ok := settingBytes(bad); ok {
			t.Errorf("settingBytes(%q) read as a size", bad)
		}
	}
}

// Every text column that tables.sql gives a compression method (USING COMPRESSION) is
// stored with that method once a loaded run is checkpointed: the declaration reaches
// DuckDB's storage, for each table, whatever the values. A column the synthetic run leaves
// NULL is stored uncompressed and skipped, so the test requires that most of the declared
// columns were seen.
func TestTextColumnsStoredAsDeclared(t *testing.T) {
	declared := map[string]string{} // "table.column" -> method
	for col, m := range layoutColumns(regexp.MustCompile(`^\s+(\w+)\s+VARCHAR USING COMPRESSION (\w+)`)) {
		declared[col] = m[0]
	}
	if len(declared) < 20 {
		t.Fatalf("tables.sql declares the compression of %d text columns; the layout names more than 20", len(declared))
	}
	db, err := Create(filepath.Join(t.TempDir(), "c.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	loadSynthRun(t, db, "r1", 7) // every trace table filled
	if _, err := db.SQL().Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tb := range traces.Tables() {
		rows, err := db.SQL().Query("SELECT DISTINCT column_name, lower(compression) FROM pragma_storage_info('" +
			tb.String() + "') WHERE segment_type = 'VARCHAR'")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var col, method string
			if err := rows.Scan(&col, &method); err != nil {
				t.Fatal(err)
			}
			want, ok := declared[tb.String()+"."+col]
			if !ok {
				continue
			}
			var values int64
			if err := db.SQL().QueryRow("SELECT count(" + col + ") FROM " + tb.String()).Scan(&values); err != nil {
				t.Fatal(err)
			}
			if values == 0 {
				continue // a column of NULLs only is stored uncompressed, whatever its method
			}
			seen++
			if method != strings.ToLower(want) {
				t.Errorf("%s.%s is stored with %s; tables.sql declares %s", tb, col, method, want)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if seen < len(declared)*2/3 {
		t.Errorf("saw the storage of %d of the %d declared columns; the synthetic run fills most of them", seen, len(declared))
	}
}
