//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// loadQueue is how many record batches may wait for the loader. With the batch being built
// and the one being inserted, it bounds a load's memory to a few batches, and it makes the
// simulation wait (backpressure) when DuckDB is the slower of the two.
const loadQueue = 2

// errLoaderStopped is what the writer sees once the loader has failed; Finish returns the
// loader's own error.
var errLoaderStopped = errors.New("analysis: the loader stopped")

// Load streams the records of one run into the database. It is a record.Sink: records are
// redacted and batched by a traces.Writer on the sender's goroutine, and each full batch
// goes over a small bounded queue to one loader goroutine that inserts it through DuckDB's
// Arrow interface. The whole run is one transaction, committed by Finish, so a failed or
// abandoned load leaves no rows behind, and the runs row is written last.
//
// Rows of each table are stored in the order they were sent; the digest is computed on the
// sender's goroutine before the queue, so neither depends on goroutine timing.
type Load struct {
	db    *DB
	runID string
	ctx   context.Context
	w     *traces.Writer
	opts  traces.Options

	queue   chan loadItem
	done    chan struct{}
	failed  atomic.Bool
	err     error // the loader's first error; read after done
	aborted atomic.Bool

	finishOnce sync.Once
	finishErr  error
	seq        uint64 // names the load's Arrow views (Load.view)
}

type loadItem struct {
	table traces.Table
	rec   arrow.RecordBatch
	exec  string // a statement to run in the load's transaction instead of a batch
	args  []driver.NamedValue
}

var _ record.Sink = (*Load)(nil)

// Load starts loading the run runID. Send it the run's records, then call Finish. The
// context is for the records' sake only: once it is cancelled the run is stored as
// partial; the loader itself always drains what it was sent, so a cancelled run still
// ends in a consistent database.
func (db *DB) Load(ctx context.Context, runID string, opts traces.Options) (*Load, error) {
	if db.readOnly {
		return nil, fmt.Errorf("analysis: loading run %q into %s: %w", runID, db.name(), ErrReadOnly)
	}
	if runID == "" {
		return nil, errors.New("analysis: loading a run: empty run id")
	}
	var n int
	if err := db.db.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE run_id = ?", runID).Scan(&n); err != nil {
		return nil, fmt.Errorf("analysis: loading run %q into %s: %w", runID, db.name(), err)
	}
	if n > 0 {
		return nil, fmt.Errorf("analysis: loading run %q into %s: %w: the database already holds it", runID, db.name(), ErrDuplicateRun)
	}
	conn, err := db.db.Conn(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("analysis: loading run %q into %s: %w", runID, db.name(), err)
	}
	l := &Load{
		db:    db,
		runID: runID,
		ctx:   ctx,
		opts:  opts,
		queue: make(chan loadItem, loadQueue),
		done:  make(chan struct{}),
		seq:   loadSeq.Add(1),
	}
	l.w, err = traces.NewWriter(runID, opts, l.emit)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("analysis: loading run %q: %w", runID, err)
	}
	if err := db.addLoad(l); err != nil {
		l.w.Close()
		conn.Close()
		return nil, fmt.Errorf("analysis: loading run %q into %s: %w", runID, db.name(), err)
	}
	go l.loop(conn)
	return l, nil
}

// addLoad registers an unfinished load. While any load runs, DuckDB works with one thread:
// a single Arrow stream does not scan in parallel, and a second DuckDB thread would only
// compete, spinning on locks, with the simulation that feeds the load. Measured with
// 65,536-row span batches on two busy cores: 4x the rows per second of two threads.
func (db *DB) addLoad(l *Load) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.loads) == 0 {
		ctx := context.Background()
		if err := db.db.QueryRowContext(ctx, "SELECT current_setting('threads')").Scan(&db.threads); err != nil {
			return err
		}
		if _, err := db.db.ExecContext(ctx, "SET threads = 1"); err != nil {
			return err
		}
	}
	db.loads[l] = struct{}{}
	return nil
}

// forget unregisters a finished load; the last one gives DuckDB its threads back.
func (l *Load) forget() {
	db := l.db
	db.mu.Lock()
	defer db.mu.Unlock()
	delete(db.loads, l)
	if len(db.loads) == 0 && db.threads > 0 {
		db.db.ExecContext(context.Background(), "SET threads = "+strconv.FormatInt(db.threads, 10))
	}
}

// emit hands a full batch to the loader; it runs on the sender's goroutine.
func (l *Load) emit(t traces.Table, rec arrow.RecordBatch) error {
	if l.failed.Load() {
		rec.Release()
		return errLoaderStopped
	}
	l.queue <- loadItem{table: t, rec: rec}
	return nil
}

// loop is the loader goroutine: it owns the connection and DuckDB's Arrow interface, which
// are not safe for concurrent use.
func (l *Load) loop(conn *sql.Conn) {
	defer close(l.done)
	// The loader inserts whatever it was sent, whatever the caller's context: a run's
	// consistency rests on its one transaction, not on cancellation.
	ctx := context.Background()
	err := conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("analysis: DuckDB connection is a %T", dc)
		}
		ar, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return err
		}
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return fmt.Errorf("analysis: DuckDB connection %T cannot execute statements", dc)
		}
		exec := func(q string, args []driver.NamedValue) error {
			_, err := ex.ExecContext(ctx, q, args)
			return err
		}
		if err := exec("BEGIN TRANSACTION", nil); err != nil {
			return err
		}
		views := make([]bool, len(traces.Tables())) // tables with a registered view
		for it := range l.queue {
			if err != nil || l.aborted.Load() {
				if it.rec != nil {
					it.rec.Release()
				}
				continue
			}
			if it.rec == nil {
				if err = exec(it.exec, it.args); err != nil {
					err = fmt.Errorf("%s: %w", strings.Fields(it.exec)[0], err)
					l.failed.Store(true)
				}
				continue
			}
			views[it.table] = true
			if err = insertVia(ar, exec, it.table, l.view(it.table), it.rec); err != nil {
				l.failed.Store(true)
			}
		}
		if err != nil || l.aborted.Load() {
			return errors.Join(err, exec("ROLLBACK", nil)) // the views go with the transaction
		}
		// The registered views point at released streams: drop them so that nobody who
		// gets this pooled connection later can read through them.
		for t, used := range views {
			if used && err == nil {
				err = exec("DROP VIEW IF EXISTS "+l.view(traces.Table(t)), nil)
			}
		}
		if err != nil {
			return errors.Join(err, exec("ROLLBACK", nil))
		}
		return exec("COMMIT", nil)
	})
	l.err = errors.Join(err, conn.Close())
}

// loadSeq numbers the loads of the process. DuckDB registers an Arrow view in the main
// catalog, not as a temporary one, so two loads running at once into one database (a
// sweep's workers) need views of their own names, or their transactions conflict.
var loadSeq atomic.Uint64

func (l *Load) view(t traces.Table) string {
	return "mayday_load_" + t.String() + "_" + strconv.FormatUint(l.seq, 10)
}

// insert copies one batch into its table through a registered Arrow view, and releases it.
// It always reads every column of the view: DuckDB 1.5.6 misreads (and may crash on) a list
// or map column of a registered Arrow stream when a query reads only some of the columns.
func insert(ar *duckdb.Arrow, exec func(string, []driver.NamedValue) error, t traces.Table, rec arrow.RecordBatch) error {
	return insertVia(ar, exec, t, "mayday_load_"+t.String(), rec)
}

// insertVia is insert through the view of the given name.
func insertVia(ar *duckdb.Arrow, exec func(string, []driver.NamedValue) error, t traces.Table, view string, rec arrow.RecordBatch) error {
	naive := naiveTimes(rec)
	rec.Release()
	rr, err := array.NewRecordReader(naive.Schema(), []arrow.RecordBatch{naive})
	naive.Release() // the reader holds its own reference
	if err != nil {
		return fmt.Errorf("%s batch: %w", t, err)
	}
	release, err := ar.RegisterView(rr, view)
	rr.Release() // the exported stream holds its own reference
	if err != nil {
		return fmt.Errorf("%s batch: registering the Arrow view: %w", t, err)
	}
	err = exec("INSERT INTO "+t.String()+" BY NAME SELECT * FROM "+view, nil)
	release()
	if err != nil {
		return fmt.Errorf("inserting a %s batch: %w", t, err)
	}
	return nil
}

// naiveTimes returns rec with its timestamp[ns, UTC] columns relabelled timestamp[ns]
// without copying: the same instants, as UTC wall times. DuckDB reads a zoned Arrow
// timestamp as TIMESTAMPTZ, and the cast into a TIMESTAMP column goes through ICU's calendar
// for every value; a naive one converts with one division, whatever the time zone.
func naiveTimes(rec arrow.RecordBatch) arrow.RecordBatch {
	schema := rec.Schema()
	var fields []arrow.Field
	cols := rec.Columns()
	for i, f := range schema.Fields() {
		ts, ok := f.Type.(*arrow.TimestampType)
		if !ok || ts.TimeZone == "" {
			continue
		}
		if fields == nil {
			fields = slices.Clone(schema.Fields())
			cols = slices.Clone(cols)
		}
		fields[i].Type = &arrow.TimestampType{Unit: ts.Unit}
		d := cols[i].Data()
		nd := array.NewData(fields[i].Type, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		cols[i] = array.MakeFromData(nd)
		nd.Release()
		defer cols[i].Release() // NewRecordBatch retains its columns
	}
	if fields == nil {
		rec.Retain()
		return rec
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// Investigation, Span, Transition, Execution, Fault and Sample implement record.Sink.
func (l *Load) Investigation(r *record.Investigation) { l.w.Investigation(r) }
func (l *Load) Span(r *record.Span)                   { l.w.Span(r) }
func (l *Load) Transition(r *record.Transition)       { l.w.Transition(r) }
func (l *Load) Execution(r *record.Execution)         { l.w.Execution(r) }
func (l *Load) Fault(r *record.Fault)                 { l.w.Fault(r) }
func (l *Load) Sample(r *record.Sample)               { l.w.Sample(r) }

// Digest returns the digest over every (redacted) record sent so far: runs.digest.
func (l *Load) Digest() string { return l.w.Digest() }

// Rows returns how many rows of table t were sent.
func (l *Load) Rows(t traces.Table) int64 { return l.w.Rows(t) }

// RunID returns the id of the run being loaded.
func (l *Load) RunID() string { return l.runID }

// Finish flushes what is left, writes the runs row (its digest from the writer), waits for
// the loader and commits the run. It returns the first error; then nothing of the run is
// kept. When the load's context was cancelled, the run is stored with status partial.
// Calling it again returns the same result.
func (l *Load) Finish(run traces.Run) error {
	l.finishOnce.Do(func() { l.finishErr = l.finish(run) })
	return l.finishErr
}

func (l *Load) finish(run traces.Run) error {
	defer l.forget()
	if run.RunID != "" && run.RunID != l.runID {
		l.abort()
		return fmt.Errorf("analysis: finishing run %q: the load is of run %q", run.RunID, l.runID)
	}
	if l.ctx.Err() != nil {
		run.Status = traces.StatusPartial
	}
	var fill string
	if l.opts.SideEffects == nil && run.Config != "" {
		fill = sideEffectsUpdate(run.Config)
	}
	werr := l.w.WriteRun(run)
	if werr == nil && fill != "" {
		l.queue <- loadItem{exec: fill, args: []driver.NamedValue{{Ordinal: 1, Value: l.runID}}}
	}
	cerr := l.w.Close()
	close(l.queue)
	<-l.done
	if l.err != nil {
		return fmt.Errorf("analysis: loading run %q into %s: %w", l.runID, l.db.name(), l.err)
	}
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("analysis: loading run %q into %s: %w", l.runID, l.db.name(), err)
	}
	return nil
}

// abort rolls the load back; for DB.Close and misuse. It must not race with senders.
func (l *Load) abort() {
	l.finishOnce.Do(func() {
		defer l.forget()
		l.aborted.Store(true)
		l.w.Close()
		close(l.queue)
		<-l.done
		l.finishErr = errors.New("analysis: load aborted")
	})
}

// sideEffectsUpdate derives executions.side_effects from the resolved scenario's tools when
// the load was not told (traces.Options.SideEffects); "" when config names no tools.
func sideEffectsUpdate(config string) string {
	var s scenarios.Scenario
	if err := json.Unmarshal([]byte(config), &s); err != nil || len(s.Tools) == 0 {
		return ""
	}
	var all, with []string
	for _, t := range s.Tools {
		all = append(all, quoteSQL(t.Name))
		if t.Idempotency != scenarios.Natural {
			with = append(with, quoteSQL(t.Name))
		}
	}
	with = append(with, "NULL") // IN (NULL) alone is never true: no tool has side effects
	// A tool the scenario does not name stays NULL (unknown), as with Options.SideEffects.
	return "UPDATE executions SET side_effects = CASE WHEN tool IN (" + strings.Join(all, ", ") +
		") THEN coalesce(tool IN (" + strings.Join(with, ", ") + "), false) END WHERE run_id = $1 AND side_effects IS NULL"
}

func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ScenarioOptions returns the writer options a run of s needs: the scenario's extra redact
// patterns, its tool arguments under secret-looking keys as known secrets, and which tools
// have side effects.
func ScenarioOptions(s *scenarios.Scenario) traces.Options {
	opts := traces.Options{Redact: s.Redact, SideEffects: map[string]bool{}}
	red := traces.NewRedactor(nil, s.Redact, nil)
	for _, t := range s.Tools {
		opts.SideEffects[t.Name] = t.Idempotency != scenarios.Natural
		for _, a := range t.Arguments {
			if a.Value != "" && red.SecretKey(a.Key) {
				opts.Secrets = append(opts.Secrets, a.Value)
			}
		}
	}
	return opts
}

// ParamRedactor redacts the values a sweep varies before they are stored (sweep_params,
// sweep.json) or printed: a value whose path ends in a secret-looking key (such as
// tools.fetch.arguments.api_key) is replaced by its keyed hash, and every other value is
// redacted as free text, with the scenario's known secrets, so a secret pasted into a grid
// value (or a flow mapping {api_key: ...}) never appears in plain text.
func ParamRedactor(s *scenarios.Scenario) func(path, value string) string {
	opts := ScenarioOptions(s)
	red := traces.NewRedactor(nil, opts.Redact, opts.Secrets)
	return func(path, value string) string {
		last := path
		if i := strings.LastIndexByte(path, '.'); i >= 0 {
			last = path[i+1:]
		}
		if red.SecretKey(last) {
			return red.Hash(value)
		}
		return red.Text(value)
	}
}

// LoadCollector loads the records of c as the run runID, table by table in Collector.Replay
// order, with the options of the scenario in run.Config when it holds one.
func LoadCollector(db *DB, runID string, c *record.Collector, run traces.Run) error {
	var opts traces.Options
	if run.Config != "" {
		var s scenarios.Scenario
		if err := json.Unmarshal([]byte(run.Config), &s); err == nil {
			opts = ScenarioOptions(&s)
		}
	}
	l, err := db.Load(context.Background(), runID, opts)
	if err != nil {
		return err
	}
	c.Replay(l)
	return l.Finish(run)
}
