//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

//go:embed tables.sql
var tablesSQL string

// storedEnums is the members of every ENUM column of tables.sql, by "table.column": the
// values the column can hold.
var storedEnums = sync.OnceValue(func() map[string][]string {
	enums := map[string][]string{}
	for col, m := range layoutColumns(enumColumn) {
		var members []string
		for _, q := range strings.Split(m[0], ", ") {
			members = append(members, strings.Trim(q, "'"))
		}
		enums[col] = members
	}
	return enums
})

// layoutColumns gives, by "table.column", the submatches after the column's name of every
// column line of tables.sql that re matches (re's first group is the column's name).
func layoutColumns(re *regexp.Regexp) map[string][]string {
	out := map[string][]string{}
	table := ""
	for _, line := range strings.Split(tablesSQL, "\n") {
		if m := createTable.FindStringSubmatch(line); m != nil {
			table = m[1]
		} else if m := re.FindStringSubmatch(line); m != nil {
			out[table+"."+m[1]] = m[2:]
		}
	}
	return out
}

var enumColumn = regexp.MustCompile(`^\s+(\w+)\s+ENUM\(([^)]*)\)`)

// ErrReadOnly reports a write to a database opened with Open.
var ErrReadOnly = errors.New("database is opened read-only")

// DB is one mayday DuckDB database: the trace tables of every run loaded into it, and the
// views over them.
type DB struct {
	db       *sql.DB
	conn     *duckdb.Connector
	path     string // "" = in memory
	key      string // in the open registry
	readOnly bool

	// A database opened with Open (sandbox.go): its limits, the private folder it spills
	// to, the deadline of its reads, the base tables of the file, and whether a statement
	// changed its settings (it then answers nothing more).
	sandbox  bool
	limits   Limits
	spill    string
	deadline time.Time
	tables   map[string]bool
	tainted  bool

	mu      sync.Mutex
	loads   map[*Load]struct{} // not yet finished
	threads int64              // DuckDB's threads setting before the first unfinished load
	buffers uint64             // DuckDB's memory_limit in bytes as mayday last set it (0 = DuckDB's own or a user's)

	// A database Create made defines its views on a goroutine of its own, while the first
	// run loads: views is closed once they are defined (viewsErr says whether they were),
	// and everything but Load waits for it (waitViews). nil when nothing is pending.
	views    chan struct{}
	viewsErr error

	// deriveMu keeps two fills of the stored rows (derive.go) from storing one run twice.
	deriveMu sync.Mutex
}

// DuckDB keeps one database instance per file and process; opening a file that is already
// open for writing, or opening for writing a file open read-only, blocks inside DuckDB, so
// the process refuses it up front. Read-only opens share the instance.
var open = struct {
	sync.Mutex
	paths map[string]opened // by absolute path
}{paths: map[string]opened{}}

type opened struct {
	readOnly bool
	n        int
}

// Create makes a new database file at path with the trace tables and views. It refuses a
// path that exists. An empty path makes an in-memory database (for tests).
func Create(path string) (*DB, error) {
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("analysis: database %s: %w; choose another path", path, ErrExists)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("analysis: database %s: %w", path, err)
		}
		if _, err := os.Stat(path + ".wal"); err == nil {
			return nil, fmt.Errorf("analysis: database %s: a write-ahead log %s.wal is left from an earlier database; remove it first", path, path)
		}
	}
	db, err := openDB(path, false)
	if err != nil {
		return nil, err
	}
	// One transaction for the whole schema: each statement committed on its own wrote and
	// synced the write-ahead log once, about twenty syncs before a run's first record.
	ctx := context.Background()
	schema := "BEGIN TRANSACTION;\n" + tablesSQL + ";\n" + strings.Join(derivedDDL(), ";\n") + ";\nCOMMIT"
	_, err = db.db.ExecContext(ctx, schema)
	if err != nil {
		db.Close()
		if path != "" {
			os.Remove(path)
		}
		return nil, fmt.Errorf("analysis: creating the trace tables in %s: %w", db.name(), err)
	}
	// Defining the views takes DuckDB 0.1-0.2 s of binding, which a run's first records
	// need not wait for: the lanes insert into the tables meanwhile.
	db.views = make(chan struct{})
	delay := delayViews
	go func() {
		defer close(db.views)
		if delay != nil {
			delay()
		}
		db.viewsErr = db.createViews(context.Background())
		if failViews != nil {
			db.viewsErr = failViews
		}
	}()
	return db, nil
}

// failViews, when set (by tests), is the error the views of a new database end with;
// delayViews, when set, runs before they are defined (a slow machine, for the tests).
var (
	failViews  error
	delayViews func()
)

// waitViews waits until the views Create defines are defined and returns why they were not.
func (db *DB) waitViews() error {
	if db.views == nil {
		return nil
	}
	<-db.views
	return db.viewsErr
}

// OpenWrite opens an existing database for writing, to load or merge more runs into it.
// Its views are defined again, as this version defines them, and the runs that lack a
// stored metrics row get one.
func OpenWrite(path string) (*DB, error) {
	if err := exists(path); err != nil {
		return nil, err
	}
	db, err := openDB(path, false)
	if err != nil {
		return nil, err
	}
	if err := db.createViews(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("analysis: %s: %w", db.name(), err)
	}
	return db, nil
}

func exists(path string) error {
	if path == "" {
		return errors.New("analysis: empty database path")
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("analysis: database %s does not exist (a run folder holds %s)", path, DBFile)
		}
		return fmt.Errorf("analysis: database %s: %w", path, err)
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, DBFile)); err == nil {
			return fmt.Errorf("analysis: %s is a folder; its database is %s", path, filepath.Join(path, DBFile))
		}
		return fmt.Errorf("analysis: %s is a folder, not a database", path)
	}
	return nil
}

func openDB(path string, readOnly bool) (*DB, error) { return openDBWith(path, readOnly, initConn) }

func openDBWith(path string, readOnly bool, init func(driver.ExecerContext) error) (*DB, error) {
	db := &DB{path: path, readOnly: readOnly, loads: map[*Load]struct{}{}}
	dsn := path
	if path != "" {
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("analysis: database path %q: '?' and '#' are not allowed in a database path", path)
		}
		if err := db.register(path, readOnly); err != nil {
			return nil, err
		}
		if readOnly {
			dsn += "?access_mode=READ_ONLY"
		}
	}
	c, err := duckdb.NewConnector(dsn, init)
	if err != nil {
		db.release()
		return nil, fmt.Errorf("analysis: opening %s: %w", db.name(), err)
	}
	db.conn = c
	db.db = sql.OpenDB(c)
	if !readOnly && path != "" {
		if _, err := db.db.ExecContext(context.Background(), "SET memory_limit = "+literal(memoryLimit())); err != nil {
			db.Close()
			return nil, fmt.Errorf("analysis: %s: DuckDB memory limit %q (%s): %w", db.name(), memoryLimit(), MemoryEnv, err)
		}
		if strings.TrimSpace(os.Getenv(MemoryEnv)) == "" {
			db.buffers = memoryBytes()
		}
		for _, set := range []string{writeEachRowGroup, keepRowGroups} {
			if _, err := db.db.ExecContext(context.Background(), set); err != nil {
				db.Close()
				return nil, fmt.Errorf("analysis: %s: %w", db.name(), err)
			}
		}
	}
	return db, nil
}

// writeEachRowGroup has DuckDB compress and write each row group of a transaction to the
// file as soon as it is full. Its default (since 1.3) holds five per table uncompressed and
// writes them together, and a load's tables rarely fill five, so nearly all of a run's
// compression waited for its commit: one core, after the simulation had ended (research-
// fleet: 1.2-1.4 s of Finish, against 0.5-0.7 s with this setting; analysis
// BenchmarkEndToEnd went from 1.56x DuckDB's own copy to 1.25x, the median of 23 runs). The
// lanes now compress while the simulation runs, and a table's transaction holds about one
// row group uncompressed instead of five.
const writeEachRowGroup = "SET write_buffer_row_group_count = 1"

// keepRowGroups has DuckDB's checkpoints leave the row groups already written as they are.
// By default a checkpoint merges adjacent row groups that would fit in fewer ("vacuum"):
// it reads them back, decompresses, appends and compresses them again. A database mayday
// writes grows a run at a time, and each run ends every large table with a partial row
// group, so every checkpoint of a sweep rewrote the last runs' rows, on one thread, and the
// blocks they freed were not reused: a sweep of research-fleet at 4,000 investigations, 4
// runs on 2 workers, took 4.16-4.40 s and wrote 55.6 MB with it, 3.42-3.87 s and 46.9 MB
// without (docs/performance.md). A scan reads a few more, smaller row groups; the rows of
// a run deleted after a failed commit stay in the file, marked deleted.
const keepRowGroups = "SET max_vacuum_tasks = 0"

// DefaultMemory is DuckDB's memory limit in a database mayday writes, unless MemoryEnv says
// otherwise. DuckDB's own default is 80% of the machine; capped, it writes the blocks it has
// compressed out to the file and lets them go, and large queries spill to a temporary folder
// beside the file (removed when the database is closed), so a run's memory stays bounded at
// any size. Measured on research-fleet at 100,000 investigations at ten times its arrival
// rate (BenchmarkPeakMemory100kTenfold, whole process): about 2,000 MiB with no
// cap, 1,113 MiB at 512MB, 896 MiB at 384MB; on the shipped capacity (...Overload, 24M
// span and transition rows) 942 MiB at 384MB, the metric views spilling but finishing.
const DefaultMemory = "384MB"

// MemoryEnv names the environment variable that overrides DefaultMemory, in DuckDB's
// spelling ("1GB", "800MB").
const MemoryEnv = "MAYDAY_DUCKDB_MEMORY"

// The thresholds of glibc's malloc that TuneMalloc fixes. DuckDB allocates with the C
// library's malloc, a 256 KiB block at a time and larger buffers besides, from a thread per
// table during a load. Left to itself glibc adjusts both thresholds as memory is freed, and
// a load then keeps handing memory back to the kernel (munmap, trimming the top of each
// thread's heap) and faulting it in again, page by page, as the next blocks are written:
// about a fifth of a traced run's CPU went to the kernel's page faults. With the thresholds
// fixed, allocations up to MallocMmapThreshold come from the heaps, and a heap keeps up to
// MallocTrimThreshold of free memory at its top for the next ones. docs/performance.md
// ("The C allocator") has the measurements: a third fewer page faults and 8-12% less wall
// time on a traced run, the same peak memory.
const (
	MallocMmapThreshold = 4 << 20
	MallocTrimThreshold = 16 << 20
)

// TuneMalloc fixes glibc's malloc thresholds (MallocMmapThreshold, MallocTrimThreshold)
// unless GLIBC_TUNABLES already sets malloc's, and reports whether it did. It does nothing
// where the C library is not glibc. The binary calls it once at start, before DuckDB
// allocates; the peak-memory benchmarks do, so that they measure what it runs.
func TuneMalloc() bool {
	if strings.Contains(os.Getenv("GLIBC_TUNABLES"), "glibc.malloc.") {
		return false
	}
	return tuneMalloc()
}

// ReleaseAbove is how much memory the Go runtime may hold from the operating system
// (mapped and not yet returned) when a load has drained before ReleaseGoMemory returns its
// free part at once. A run's records pass through Arrow batches of every table, and the
// collector frees them once the load has drained, but the runtime keeps the pages and
// returns them only gradually: the commit and the metric views, DuckDB's heaviest part,
// ran on top of them (research-fleet at 100,000 investigations: 326 MiB held by the Go
// runtime, 2 MiB of it live, while the metric views ran). A run of 10,000 investigations
// holds about 220 MiB and stays below it, so a batch of small runs does not pay for a
// full collection after each.
const ReleaseAbove = 256 << 20

// ReleaseGoMemory runs a full collection and returns the Go heap's free memory to the
// operating system, when the runtime holds more than ReleaseAbove; a load calls it once its
// batches are inserted.
func ReleaseGoMemory() {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 &&
		s[0].Value.Uint64()-s[1].Value.Uint64() > ReleaseAbove {
		debug.FreeOSMemory()
	}
}

// memoryHint adds to DuckDB's out-of-memory error how a user raises the limit: DuckDB's own
// advice (SET memory_limit) is not something a mayday user can type.
func memoryHint(err error) error {
	if err == nil || !strings.Contains(err.Error(), "Out of Memory") {
		return err
	}
	return fmt.Errorf("%w\nDuckDB's memory limit here is %s; raise it with %s=2GB (or more) and run again", err, memoryLimit(), MemoryEnv)
}

var memorySpelling = regexp.MustCompile(`(?i)^\d+(\.\d+)?\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)$`)

// ThreadsEnv names the environment variable that caps DuckDB's threads in every database
// mayday opens (a whole number, 1 or more); unset, DuckDB uses one per core. make test sets
// it to 1: its many small databases gained nothing from a second thread, whose hand-offs cost
// a fifth of the DuckDB tests' CPU (docs/testing.md).
const ThreadsEnv = "MAYDAY_DUCKDB_THREADS"

// threadsSetting is the statement that applies ThreadsEnv, "" when it is unset or invalid
// (CheckThreadsEnv refuses an invalid one before anything runs).
func threadsSetting() string {
	v := strings.TrimSpace(os.Getenv(ThreadsEnv))
	if n, err := strconv.Atoi(v); err == nil && n >= 1 {
		return "SET threads = " + strconv.Itoa(n)
	}
	return ""
}

// CheckThreadsEnv reports a ThreadsEnv value that is not a whole number of threads.
func CheckThreadsEnv() error {
	v := strings.TrimSpace(os.Getenv(ThreadsEnv))
	if v == "" || threadsSetting() != "" {
		return nil
	}
	return fmt.Errorf("%s=%q: want a whole number of threads, 1 or more", ThreadsEnv, v)
}

// CheckMemoryEnv reports a MemoryEnv value DuckDB would not take, before anything runs.
func CheckMemoryEnv() error {
	v := strings.TrimSpace(os.Getenv(MemoryEnv))
	if v == "" || memorySpelling.MatchString(v) {
		return nil
	}
	return fmt.Errorf("%s=%q: want a size such as 512MB, 2GB or 1.5GiB (DuckDB's memory limit)", MemoryEnv, v)
}

func memoryLimit() string {
	if v := strings.TrimSpace(os.Getenv(MemoryEnv)); v != "" {
		return v
	}
	return strconv.FormatUint(memoryBytes()/1e6, 10) + "MB"
}

// memoryBytes is the memory limit of a database mayday writes when MemoryEnv is unset:
// DefaultMemory, or CapMemory's cap (in whole MB, at least 16).
func memoryBytes() uint64 {
	if c := memoryCap.Load(); c > 0 {
		return max(c/1e6, 16) * 1e6
	}
	return defaultMemoryBytes
}

// memoryCap is CapMemory's cap in bytes; 0 = DefaultMemory.
var memoryCap atomic.Uint64

// CapMemory lowers DuckDB's memory limit, for databases opened from now on, to bytes when
// that is below DefaultMemory (MemoryEnv, when set, still decides), until the returned
// function restores the previous cap: a command given a memory limit of its own leaves
// DuckDB its share of it.
func CapMemory(bytes uint64) (restore func()) {
	old := memoryCap.Load()
	if bytes > 0 && bytes < defaultMemoryBytes {
		memoryCap.Store(bytes)
	}
	return func() { memoryCap.Store(old) }
}

// defaultMemoryBytes is DefaultMemory in bytes.
const defaultMemoryBytes = 384e6

// initConn makes every connection read and write timestamps in UTC, whatever the host's
// time zone: the Arrow columns are UTC instants and the tables hold UTC wall times. It
// applies ThreadsEnv too.
func initConn(execer driver.ExecerContext) error {
	_, err := execer.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
	if set := threadsSetting(); set != "" && err == nil {
		_, err = execer.ExecContext(context.Background(), set, nil)
	}
	return err
}

// register records path in the open registry, refusing what DuckDB would block on.
func (db *DB) register(path string, readOnly bool) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("analysis: database %s: %w", path, err)
	}
	open.Lock()
	defer open.Unlock()
	if o, busy := open.paths[abs]; busy && !(o.readOnly && readOnly) {
		return fmt.Errorf("analysis: database %s is already open in this process; close it first", path)
	}
	o := open.paths[abs]
	open.paths[abs] = opened{readOnly: readOnly, n: o.n + 1}
	db.key = abs
	return nil
}

func (db *DB) release() {
	if db.key == "" {
		return
	}
	open.Lock()
	if o := open.paths[db.key]; o.n > 1 {
		open.paths[db.key] = opened{readOnly: o.readOnly, n: o.n - 1}
	} else {
		delete(open.paths, db.key)
	}
	open.Unlock()
	db.key = ""
}

func (db *DB) name() string {
	if db.path == "" {
		return "the in-memory database"
	}
	return db.path
}

// Path returns the database file ("" for an in-memory database).
func (db *DB) Path() string { return db.path }

// ReadOnly reports whether the database was opened with Open.
func (db *DB) ReadOnly() bool { return db.readOnly }

// SQL returns the database handle, for queries of any kind.
func (db *DB) SQL() *sql.DB {
	db.waitViews() // a statement that reads a view fails when they could not be defined
	return db.db
}

// Close closes the database. A load not yet finished is rolled back (its rows are not
// kept); Close must not run while records are still being sent to it.
func (db *DB) Close() error {
	viewsErr := db.waitViews()
	db.mu.Lock()
	var pending []*Load
	for l := range db.loads {
		pending = append(pending, l)
	}
	db.mu.Unlock()
	errs := []error{viewsErr}
	for _, l := range pending {
		l.abort()
	}
	if db.db != nil {
		errs = append(errs, db.db.Close())
		db.db = nil
	}
	if db.conn != nil {
		errs = append(errs, db.conn.Close())
		db.conn = nil
	}
	db.release()
	if db.spill != "" {
		errs = append(errs, os.RemoveAll(db.spill))
		db.spill = ""
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("analysis: closing %s: %w", db.name(), err)
	}
	return nil
}

// Query runs one SQL statement and returns its column names and every row. Values are as
// the DuckDB driver returns them: int64, float64, string, bool, time.Time (UTC), []any for
// lists, duckdb.OrderedMap for maps, nil for NULL.
func (db *DB) Query(parent context.Context, query string) (cols []string, rows [][]any, err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	if db.sandbox {
		return db.queryChecked(ctx, query)
	}
	if err := db.ready(ctx); err != nil {
		return nil, nil, err
	}
	rs, err := db.db.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, db.queryErr(err)
	}
	defer rs.Close()
	cols, err = rs.Columns()
	if err != nil {
		return nil, nil, db.queryErr(err)
	}
	for rs.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, db.queryErr(err)
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, db.queryErr(err)
	}
	return cols, rows, nil
}

func (db *DB) queryErr(err error) error {
	if db.readOnly && strings.Contains(err.Error(), "read-only mode") {
		return fmt.Errorf("analysis: %s: %w: %w", db.name(), ErrReadOnly, err)
	}
	return fmt.Errorf("analysis: query on %s: %w", db.name(), err)
}

// ErrNotQuery reports SQL that QueryEach refuses: several statements, or one that is not a
// read (SELECT, EXPLAIN, PRAGMA, CALL or DESCRIBE/SHOW/SUMMARIZE, which are SELECTs).
var ErrNotQuery = errors.New("not a single read-only statement")

// QueryEach runs exactly one reading statement and hands its column names to head, then
// each row to row as DuckDB's driver delivers it, so a caller can print a large result
// without holding it. Several statements separated by ';' are refused before any runs.
func (db *DB) QueryEach(parent context.Context, query string, head func(cols []string) error, row func([]any) error) (err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	if db.tainted {
		return fmt.Errorf("%w: an earlier statement changed DuckDB's settings", ErrNotQuery)
	}
	if err := db.ready(ctx); err != nil {
		return err
	}
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return db.queryErr(err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error { return checkOneRead(dc, query) }); err != nil {
		return err
	}
	rs, err := conn.QueryContext(ctx, query)
	if err != nil {
		return db.queryErr(err)
	}
	defer rs.Close()
	if db.sandbox {
		// DuckDB's driver has the whole result once QueryContext returns: a statement
		// that changed the settings is caught before any of its rows is handed out.
		if err := db.checkSettings(ctx, conn); err != nil {
			return err
		}
	}
	cols, err := rs.Columns()
	if err != nil {
		return db.queryErr(err)
	}
	if err := head(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return db.queryErr(err)
		}
		if err := row(vals); err != nil {
			return err
		}
	}
	if err := rs.Err(); err != nil {
		return db.queryErr(err)
	}
	return nil
}

// checkOneRead prepares query without running it (DuckDB's driver refuses to prepare
// several statements at once without running all but the last) and checks its kind.
func checkOneRead(dc any, query string) error {
	c, ok := dc.(driver.Conn)
	if !ok {
		return fmt.Errorf("analysis: unexpected driver connection %T", dc)
	}
	if strings.TrimSpace(strings.Trim(strings.TrimSpace(query), ";")) == "" {
		return fmt.Errorf("%w: the SQL is empty", ErrNotQuery)
	}
	st, err := c.Prepare(query)
	if err != nil {
		if strings.Contains(err.Error(), "multi-statement") {
			return fmt.Errorf("%w: the SQL holds several statements; run one per call", ErrNotQuery)
		}
		return fmt.Errorf("analysis: query: %w", err)
	}
	defer st.Close()
	ds, ok := st.(*duckdb.Stmt)
	if !ok {
		return fmt.Errorf("analysis: unexpected driver statement %T", st)
	}
	kind, err := ds.StatementType()
	if err != nil {
		return fmt.Errorf("analysis: query: %w", err)
	}
	switch kind {
	case duckdb.STATEMENT_TYPE_SELECT, duckdb.STATEMENT_TYPE_EXPLAIN, duckdb.STATEMENT_TYPE_PRAGMA, duckdb.STATEMENT_TYPE_CALL:
		return nil
	}
	return fmt.Errorf("%w: %s statements are refused; only SELECT, EXPLAIN, PRAGMA and CALL run here (files are written by mayday export)", ErrNotQuery, stmtKind(kind))
}

// stmtKind names a statement type the way SQL spells it.
func stmtKind(k duckdb.StmtType) string {
	names := map[duckdb.StmtType]string{
		duckdb.STATEMENT_TYPE_INSERT: "INSERT", duckdb.STATEMENT_TYPE_UPDATE: "UPDATE",
		duckdb.STATEMENT_TYPE_DELETE: "DELETE", duckdb.STATEMENT_TYPE_CREATE: "CREATE",
		duckdb.STATEMENT_TYPE_ALTER: "ALTER", duckdb.STATEMENT_TYPE_DROP: "DROP",
		duckdb.STATEMENT_TYPE_COPY: "COPY", duckdb.STATEMENT_TYPE_EXPORT: "EXPORT",
		duckdb.STATEMENT_TYPE_ATTACH: "ATTACH", duckdb.STATEMENT_TYPE_DETACH: "DETACH",
		duckdb.STATEMENT_TYPE_LOAD: "INSTALL/LOAD", duckdb.STATEMENT_TYPE_SET: "SET",
		duckdb.STATEMENT_TYPE_VARIABLE_SET: "SET VARIABLE", duckdb.STATEMENT_TYPE_TRANSACTION: "transaction",
		duckdb.STATEMENT_TYPE_VACUUM: "VACUUM", duckdb.STATEMENT_TYPE_PREPARE: "PREPARE",
		duckdb.STATEMENT_TYPE_EXECUTE: "EXECUTE", duckdb.STATEMENT_TYPE_CREATE_FUNC: "CREATE FUNCTION",
		duckdb.STATEMENT_TYPE_ANALYZE: "ANALYZE", duckdb.STATEMENT_TYPE_EXTENSION: "extension",
	}
	if n, ok := names[k]; ok {
		return n
	}
	return fmt.Sprintf("type-%d", int(k))
}
