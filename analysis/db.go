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
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

//go:embed tables.sql
var tablesSQL string

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

	mu      sync.Mutex
	loads   map[*Load]struct{} // not yet finished
	threads int64              // DuckDB's threads setting before the first unfinished load
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
	ctx := context.Background()
	if _, err := db.db.ExecContext(ctx, tablesSQL); err != nil {
		db.Close()
		if path != "" {
			os.Remove(path)
		}
		return nil, fmt.Errorf("analysis: creating the trace tables in %s: %w", db.name(), err)
	}
	if err := db.CreateViews(ctx); err != nil {
		db.Close()
		if path != "" {
			os.Remove(path)
		}
		return nil, err
	}
	return db, nil
}

// Open opens an existing database read-only (DuckDB access_mode READ_ONLY): every
// statement that would change it fails with an error that wraps ErrReadOnly.
func Open(path string) (*DB, error) {
	if err := exists(path); err != nil {
		return nil, err
	}
	return openDB(path, true)
}

// OpenWrite opens an existing database for writing, to load or merge more runs into it.
func OpenWrite(path string) (*DB, error) {
	if err := exists(path); err != nil {
		return nil, err
	}
	return openDB(path, false)
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

func openDB(path string, readOnly bool) (*DB, error) {
	db := &DB{path: path, readOnly: readOnly, loads: map[*Load]struct{}{}}
	dsn := path
	if path != "" {
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("analysis: database path %q: '?' and '#' are not allowed in a database path", path)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("analysis: database %s: %w", path, err)
		}
		open.Lock()
		if o, busy := open.paths[abs]; busy && !(o.readOnly && readOnly) {
			open.Unlock()
			return nil, fmt.Errorf("analysis: database %s is already open in this process; close it first", path)
		}
		o := open.paths[abs]
		open.paths[abs] = opened{readOnly: readOnly, n: o.n + 1}
		open.Unlock()
		db.key = abs
		if readOnly {
			dsn += "?access_mode=READ_ONLY"
		}
	}
	c, err := duckdb.NewConnector(dsn, initConn)
	if err != nil {
		db.release()
		return nil, fmt.Errorf("analysis: opening %s: %w", db.name(), err)
	}
	db.conn = c
	db.db = sql.OpenDB(c)
	return db, nil
}

// initConn makes every connection read and write timestamps in UTC, whatever the host's
// time zone: the Arrow columns are UTC instants and the tables hold UTC wall times.
func initConn(execer driver.ExecerContext) error {
	_, err := execer.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
	return err
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
func (db *DB) SQL() *sql.DB { return db.db }

// Close closes the database. A load not yet finished is rolled back (its rows are not
// kept); Close must not run while records are still being sent to it.
func (db *DB) Close() error {
	db.mu.Lock()
	var pending []*Load
	for l := range db.loads {
		pending = append(pending, l)
	}
	db.mu.Unlock()
	var errs []error
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
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("analysis: closing %s: %w", db.name(), err)
	}
	return nil
}

// Query runs one SQL statement and returns its column names and every row. Values are as
// the DuckDB driver returns them: int64, float64, string, bool, time.Time (UTC), []any for
// lists, duckdb.OrderedMap for maps, nil for NULL.
func (db *DB) Query(ctx context.Context, query string) (cols []string, rows [][]any, err error) {
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
