//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// A database mayday did not just write itself (a shard, a colleague's run, a CI artifact)
// is input, and input can be hostile: its stored views can say anything, its run ids can
// name paths, its tables can carry generated columns. Every command that reads such a
// database opens it with Open, the one way in:
//
//   - the file is attached read-only (alias srcAlias) to a private in-memory database,
//     whose own catalog holds a view per trace table (SELECT * FROM the file's table) and
//     mayday's metric views, created from mayday's embedded SQL: a view, macro or table the
//     file stores under a view's name is never read, and the file's schema is not on the
//     search path, so its macros cannot shadow the functions the views call;
//   - DuckDB refuses every file and network access but the database (enable_external_access
//     off), loads and installs no extension, and refuses every later SET (lock_configuration);
//   - memory is capped (Limits.Memory) and spills into a private temporary folder, never
//     beside the file, removed by Close; reads stop at a time limit (Limits.Timeout);
//   - identifiers read from the data (run ids, table names) are checked before they become
//     part of a path or of SQL (CheckRunID, checkTableName).

// Limits bound what reading one database may cost.
type Limits struct {
	// Memory is DuckDB's memory limit, in DuckDB's spelling ("1GiB", "512MB"); "" is
	// DefaultReadMemory.
	Memory string
	// Timeout bounds every read through the handle, counted from Open; 0 is DefaultTimeout.
	Timeout time.Duration
	// Statement, when set, is the one statement the handle is opened for (mayday query):
	// only the views it names, and those they read, are defined, which saves the binding of
	// the others (about 0.1 s); any other view of mayday's fails when read.
	Statement string
}

// DefaultReadMemory caps the memory of a database opened with Open: well under any machine
// mayday runs on, and enough for the metric views of the largest shipped scenarios (they
// spill beyond it).
const DefaultReadMemory = "1GiB"

// DefaultTimeout bounds the reads of a database opened with Open: a report or an export of
// a large sweep reads for minutes, a runaway read is stopped.
const DefaultTimeout = time.Hour

// DefaultQueryTimeout bounds a statement of mayday query, unless --timeout says otherwise.
const DefaultQueryTimeout = 5 * time.Minute

// maxSpill bounds what a read may spill to its private temporary folder.
const maxSpill = "8GiB"

// srcAlias is the name under which Open attaches the file.
const srcAlias = "mayday_file"

// ErrTimeLimit reports a read stopped by Limits.Timeout.
var ErrTimeLimit = errors.New("time limit reached")

// ErrNotMayday reports a file that is not a mayday database: no runs table, a trace table
// that is a view, a table name mayday never writes.
var ErrNotMayday = errors.New("not a mayday database")

// ErrIdentifier reports an identifier read from a database (a run id, a table name) that
// mayday does not write, and so will not put into a path or into SQL.
var ErrIdentifier = errors.New("an identifier mayday does not write")

// Open opens an existing database for reading with the default Limits.
func Open(path string) (*DB, error) { return OpenLimited(path, Limits{}) }

// OpenLimited opens an existing database for reading, sandboxed as described above. Every
// statement that would change the file fails with an error wrapping ErrReadOnly.
func OpenLimited(path string, lim Limits) (*DB, error) {
	if err := exists(path); err != nil {
		return nil, err
	}
	if lim.Memory == "" {
		lim.Memory = DefaultReadMemory
	}
	if !memorySpelling.MatchString(strings.TrimSpace(lim.Memory)) {
		return nil, fmt.Errorf("analysis: memory limit %q: want a size such as 512MB, 2GB or 1.5GiB", lim.Memory)
	}
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	db := &DB{path: path, readOnly: true, sandbox: true, limits: lim, loads: map[*Load]struct{}{}}
	if err := db.register(path, true); err != nil {
		return nil, err
	}
	spill, err := os.MkdirTemp("", "mayday-read-")
	if err != nil {
		db.release()
		return nil, fmt.Errorf("analysis: a temporary folder for %s: %w", path, err)
	}
	db.spill = spill
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("analysis: opening %s: %w", path, err)
	}
	db.conn, db.db = c, sql.OpenDB(c)
	// One connection: the settings below are locked once made, so a later connection could
	// not be given its time zone; database/sql keeps this one for the handle's life.
	db.db.SetMaxOpenConns(1)
	db.db.SetMaxIdleConns(1)
	db.db.SetConnMaxLifetime(0)
	db.db.SetConnMaxIdleTime(0)
	if err := db.lockDown(context.Background(), path); err != nil {
		db.Close()
		return nil, err
	}
	db.deadline = time.Now().Add(lim.Timeout)
	return db, nil
}

// lockDown attaches the file, builds mayday's catalog over it and locks the instance.
func (db *DB) lockDown(ctx context.Context, path string) error {
	run := func(qs ...string) error {
		for _, q := range qs {
			if _, err := db.db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("analysis: %s: %s: %w", path, q, err)
			}
		}
		return nil
	}
	settings := []string{
		"SET autoload_known_extensions = false",
		"SET autoinstall_known_extensions = false",
		"SET allow_community_extensions = false",
		"SET GLOBAL TimeZone = 'UTC'",
		"SET memory_limit = " + literal(strings.TrimSpace(db.limits.Memory)),
		"SET temp_directory = " + literal(db.spill),
		"SET max_temp_directory_size = " + literal(maxSpill),
	}
	if set := threadsSetting(); set != "" {
		settings = append(settings, set)
	}
	if err := run(settings...); err != nil {
		return err
	}
	if _, err := db.db.ExecContext(ctx, "ATTACH "+literal(path)+" AS "+srcAlias+" (READ_ONLY)"); err != nil {
		return fmt.Errorf("analysis: %s: %w: DuckDB cannot read it: %w", path, ErrNotMayday, err)
	}
	if err := db.mirrorTables(ctx, path); err != nil {
		return err
	}
	if err := db.CreateViews(ctx); err != nil {
		return fmt.Errorf("analysis: %s: %w: mayday's views do not fit its tables (written by another version?): %w", path, ErrNotMayday, err)
	}
	if err := db.readerDerived(ctx); err != nil {
		return fmt.Errorf("analysis: %s: %w", path, err)
	}
	return run(append(shadowedFunctions(),
		"SET enable_external_access = false",
		"SET lock_configuration = true")...)
}

// mirrorTables builds the in-memory catalog over the file. Unqualified names resolve in it
// first and in the file's main schema after it (search_path), so the file's tables are read
// as they are (with their rowid), while every view the file stores is shadowed: mayday's
// own views replace those of its names, and any other stored view is replaced by one that
// fails. A table the file lacks (an older layout) is an empty table of tables.sql's layout.
// A trace table stored as a view, a function (macro) stored in the file other than mayday's
// own, or a name mayday never writes is refused.
func (db *DB) mirrorTables(ctx context.Context, path string) error {
	in := "database_name = '" + srcAlias + "' AND NOT internal"
	names, err := queryStrings(ctx, db.db, "SELECT table_name FROM duckdb_tables() WHERE "+in+" AND schema_name = 'main' ORDER BY table_name")
	if err != nil {
		return fmt.Errorf("analysis: %s: listing tables: %w", path, err)
	}
	views, err := queryStrings(ctx, db.db, "SELECT view_name FROM duckdb_views() WHERE "+in+" ORDER BY view_name")
	if err != nil {
		return fmt.Errorf("analysis: %s: listing views: %w", path, err)
	}
	funcs, err := queryStrings(ctx, db.db, "SELECT DISTINCT function_name FROM duckdb_functions() WHERE "+in+" ORDER BY 1")
	if err != nil {
		return fmt.Errorf("analysis: %s: listing functions: %w", path, err)
	}
	// mayday's own macros (the simulated clock) are stored with its views; the catalog
	// defines them again, and its definitions come first on the search path.
	funcs = slices.DeleteFunc(funcs, func(f string) bool { return slices.Contains(macros, f) })
	if len(funcs) > 0 {
		return fmt.Errorf("analysis: %s: %w: it stores functions (%s), which mayday never writes", path, ErrNotMayday, strings.Join(funcs, ", "))
	}
	db.tables = map[string]bool{}
	for _, n := range append(slices.Clone(names), views...) {
		if err := checkTableName(n); err != nil {
			return fmt.Errorf("analysis: %s: %w", path, err)
		}
	}
	for _, n := range names {
		db.tables[n] = true
	}
	if !db.tables["runs"] {
		return fmt.Errorf("analysis: %s: %w: it has no runs table; give a run folder, a sweep folder or the %s inside one", path, ErrNotMayday, DBFile)
	}
	known := append(append(layoutTables(), "sweep_params", storedMetrics), derivedNames()...)
	stmts := []string{tablesSQL}
	for _, t := range layoutTables() {
		if db.tables[t] {
			stmts = append(stmts, "DROP TABLE main."+ident(t))
		}
	}
	// A derived table the file lacks (an older version's) is an empty one here until
	// readerDerived computes its rows.
	for i, n := range derivedNames() {
		if !db.tables[n] {
			stmts = append(stmts, derivedDDL()[i])
		}
	}
	for _, v := range views {
		if slices.Contains(known, v) {
			return fmt.Errorf("analysis: %s: %w: its %s is a view, and mayday stores a table there", path, ErrNotMayday, v)
		}
		if !slices.Contains(Views, v) {
			stmts = append(stmts, "CREATE VIEW main."+ident(v)+" AS SELECT error("+
				literal("the view "+v+" stored in the database is not mayday's; mayday does not run it")+") AS refused")
		}
	}
	stmts = append(stmts, "SET search_path = 'memory.main,"+srcAlias+".main'")
	for _, q := range stmts {
		if _, err := db.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("analysis: %s: %w", path, err)
		}
	}
	return nil
}

// readerDerived has a reader's derived tables read the file's when they are this version's
// and complete; otherwise they are computed, for every run, from the file's records, into
// tables of the private catalog that stand in for the file's (the file is not touched).
func (db *DB) readerDerived(ctx context.Context) error {
	current, err := db.derivedCurrent(ctx)
	if err != nil || current {
		return err
	}
	for i, n := range derivedNames() {
		if _, err := db.db.ExecContext(ctx, "DROP TABLE IF EXISTS memory.main."+ident(n)); err != nil {
			return err
		}
		if _, err := db.db.ExecContext(ctx, strings.Replace(derivedDDL()[i], "CREATE TABLE ", "CREATE TABLE memory.main.", 1)); err != nil {
			return err
		}
	}
	return db.fillDerived(ctx)
}

// layoutTables lists the tables tables.sql creates.
func layoutTables() []string {
	var out []string
	for _, m := range createTable.FindAllStringSubmatch(tablesSQL, -1) {
		out = append(out, m[1])
	}
	return out
}

var createTable = regexp.MustCompile(`(?m)^CREATE TABLE (\w+) \(`)

// shadowedFunctions defines, in the in-memory catalog (searched before DuckDB's own), table
// macros named like the functions that change the instance's logging despite
// lock_configuration, so that a statement calling them fails instead. A statement that
// names DuckDB's own by its qualified name is caught after it ran (checkSettings).
func shadowedFunctions() []string {
	var out []string
	for _, f := range []string{"enable_logging", "disable_logging", "truncate_duckdb_logs"} {
		out = append(out, "CREATE MACRO main."+f+"(storage := NULL, level := NULL, storage_config := NULL, storage_path := NULL, "+
			"storage_buffer_size := NULL, a := NULL) AS TABLE SELECT error('"+f+" is refused here: a query may not change DuckDB''s settings') AS refused")
	}
	return out
}

// checkSettings reports whether the last statement changed the instance's logging: DuckDB's
// enable_logging() does, even inside a SELECT, despite lock_configuration. The result of such
// a statement is not handed out.
func (db *DB) checkSettings(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var on bool
	var storage string
	err := q.QueryRowContext(context.WithoutCancel(ctx),
		"SELECT current_setting('enable_logging')::BOOLEAN, current_setting('logging_storage')::VARCHAR").Scan(&on, &storage)
	if err == nil && !on && storage == "memory" {
		return nil
	}
	db.tainted = true
	return fmt.Errorf("%w: the statement changed DuckDB's settings (enable_logging); its result is withheld", ErrNotQuery)
}

var runIDShape = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$`)

// CheckRunID refuses a run id mayday does not write (a scenario name, "-s", a seed): run ids
// become file names of exports, so one such as "../../x" must never reach a path.
func CheckRunID(id string) error {
	if !runIDShape.MatchString(id) || strings.Contains(id, "..") {
		return fmt.Errorf("%w: run id %q (mayday writes letters, digits, '.', '_' and '-', starting with a letter or digit)", ErrIdentifier, id)
	}
	return nil
}

var tableShape = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// checkTableName refuses a table name mayday does not write.
func checkTableName(name string) error {
	if !tableShape.MatchString(name) {
		return fmt.Errorf("%w: table name %q", ErrIdentifier, name)
	}
	return nil
}

// limit bounds ctx by the handle's time limit (a database opened with Open).
func (db *DB) limit(ctx context.Context) (context.Context, context.CancelFunc) {
	if db.deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, db.deadline)
}

// Limit bounds ctx by the time limit of a database opened with Open (for callers reading
// through SQL()); for any other database it only adds a cancel.
func (db *DB) Limit(ctx context.Context) (context.Context, context.CancelFunc) {
	return db.limit(ctx)
}

// limitErr names the time limit when it, and not the caller, stopped a read; and the memory
// limit when DuckDB ran out of it.
func (db *DB) limitErr(parent, ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("analysis: reading %s: %w (%s); stopped", db.name(), ErrTimeLimit, db.limits.Timeout)
	}
	if db.sandbox && strings.Contains(err.Error(), "Out of Memory") {
		return fmt.Errorf("%w\nthe memory limit for reading %s is %s: %w", err, db.name(), db.limits.Memory, ErrMemoryLimit)
	}
	return err
}

// ErrMemoryLimit reports a read that needed more than Limits.Memory.
var ErrMemoryLimit = errors.New("memory limit reached")

// queryChecked is Query on a database opened with Open: one reading statement only (a write
// fails with ErrReadOnly, as the file is read-only), its settings checked like QueryEach's.
func (db *DB) queryChecked(ctx context.Context, query string) (cols []string, rows [][]any, err error) {
	err = db.QueryEach(ctx, query, func(c []string) error {
		cols = append([]string(nil), c...)
		return nil
	}, func(vals []any) error {
		rows = append(rows, append([]any(nil), vals...))
		return nil
	})
	if errors.Is(err, ErrNotQuery) || (err != nil && writes(query)) {
		return nil, nil, fmt.Errorf("analysis: %s: %w: %w", db.name(), ErrReadOnly, err)
	}
	return cols, rows, err
}

// CheckMemory reports a memory limit DuckDB would not take.
func CheckMemory(v string) error {
	if !memorySpelling.MatchString(strings.TrimSpace(v)) {
		return fmt.Errorf("%q: want a size such as 512MB, 2GB or 1.5GiB", v)
	}
	return nil
}

// Abandon gives up a handle whose statement does not return (DuckDB did not honour an
// interrupt): it removes the private spill folder, and leaves the handle to the process's
// end. Nothing else may use it afterwards.
func (db *DB) Abandon() {
	if db.spill != "" {
		_ = os.RemoveAll(db.spill)
	}
}

// writes says whether a statement begins with a keyword that changes a database, for naming
// the refusal: such a statement fails against the read-only file or mayday's views.
func writes(query string) bool {
	f := strings.Fields(strings.ToUpper(query))
	return len(f) > 0 && slices.Contains([]string{"INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "COPY", "TRUNCATE", "MERGE"}, f[0])
}

// Share computes views of a database opened with Open once, for the runs runIDs, and keeps
// their rows: in the handle's private catalog each view becomes a table of those rows, under
// its name, so that every later statement that reads it, directly or through another view,
// reads the rows instead of computing them again. A report reads disruptions, tool_minutes
// and recovery_episodes through four or five views each. views must be named in an order
// where a view comes after those it reads (the order of Views); the rows are those the view
// gives, so every statement's answer is unchanged for those runs, and has no row of any
// other run. The file is not touched.
func (db *DB) Share(ctx context.Context, runIDs []string, views ...string) error {
	if !db.sandbox {
		return fmt.Errorf("analysis: sharing views of %s: only a database opened read-only keeps views as rows", db.name())
	}
	if db.tainted {
		return fmt.Errorf("%w: an earlier statement changed DuckDB's settings", ErrNotQuery)
	}
	last := -1
	for _, v := range views {
		i := slices.Index(Views, v)
		if i < 0 {
			return fmt.Errorf("analysis: sharing views: %s is not a view of mayday's", v)
		}
		if i < last {
			return fmt.Errorf("analysis: sharing views: %s comes before a view it may read", v)
		}
		last = i
		for _, q := range []string{
			"CREATE TABLE memory.main.mayday_shared AS SELECT * FROM memory.main." + ident(v) + " WHERE list_contains(?, run_id)",
			"DROP VIEW memory.main." + ident(v),
			"ALTER TABLE memory.main.mayday_shared RENAME TO " + ident(v),
		} {
			var args []any
			if strings.Contains(q, "?") {
				args = []any{runIDs}
			}
			if _, err := db.db.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("analysis: sharing view %s: %w", v, memoryHint(err))
			}
		}
	}
	return nil
}
