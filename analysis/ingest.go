//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/mayday-sim/mayday/metric/compute"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
)

// loadQueue is how many record batches of one table may wait for its lane. With the batch
// being built and the one being inserted, it bounds a load's memory to a few batches per
// table, and it makes the simulation wait (backpressure) when DuckDB is the slower side.
const loadQueue = 2

// errLoaderStopped is what the writer sees once a lane has failed; Finish returns the lane's
// own error.
var errLoaderStopped = errors.New("analysis: the loader stopped")

// Load streams the records of one run into the database. It is a record.Sink: records are
// redacted and batched by a traces.Writer on the sender's goroutine, and each full batch
// goes over a small bounded queue to the lane of its table: one goroutine per table, each
// with its own DuckDB connection and transaction, inserting through DuckDB's Arrow
// interface. The tables are independent, so their lanes insert (and compress) on as many
// cores as there are, while the simulation runs on its own.
//
// Finish closes the lanes' queues; each table's lane commits its transaction once it has
// drained, and then, last, the runs row's lane commits: a run is in the database when its
// runs row is. A failed or abandoned load rolls back every lane and deletes what a lane had
// already committed, so it leaves no rows behind.
//
// Rows of each table are stored in the order they were sent; the digest is computed on the
// sender's goroutine before the queues, so neither depends on goroutine timing.
type Load struct {
	db    *DB
	runID string
	ctx   context.Context
	w     *traces.Writer
	opts  traces.Options

	lanes   []*lane // by table, started by the first batch of their table
	failed  atomic.Bool
	aborted atomic.Bool

	metrics *Metrics        // the run's metrics row, stored with its runs row (SetMetrics)
	tables  *compute.Tables // the run's derived tables, stored once it is committed (SetTables)

	finishOnce sync.Once
	finishErr  error
	seq        uint64 // names the load's Arrow views (Load.view)
}

type loadItem struct {
	rec  arrow.RecordBatch
	exec string // a statement to run in the lane's transaction instead of a batch
	args []driver.NamedValue
}

// lane inserts the batches of one table, in order, on its own connection and transaction.
type lane struct {
	table   traces.Table
	queue   chan loadItem
	drained chan error // the lane's error (or nil) once its queue is closed and drained
	decide  chan bool  // then: true = commit, false = roll back
	done    chan error // the commit's or rollback's result
	told    bool       // decide was sent (owned by the sender's goroutine)
	early   bool       // the lane committed as soon as it drained (written before drained is sent)
}

var _ record.Sink = (*Load)(nil)

// failCommit, when set (by tests), makes the commit of a lane's table fail.
var failCommit func(traces.Table) bool

// laneStarts, when set (by tests), is called by each lane before it begins its transaction.
var laneStarts func(traces.Table)

// Load starts loading the run runID. Send it the run's records, then call Finish. The
// context is for the records' sake only: once it is cancelled the run is stored as
// partial; the lanes always drain what they were sent, so a cancelled run still ends in a
// consistent database.
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
	l := &Load{db: db, runID: runID, ctx: ctx, opts: opts, lanes: make([]*lane, len(traces.Tables())), seq: loadSeq.Add(1)}
	var err error
	l.w, err = traces.NewWriter(runID, opts, l.emit)
	if err != nil {
		return nil, fmt.Errorf("analysis: loading run %q: %w", runID, err)
	}
	if err := db.addLoad(l); err != nil {
		l.w.Close()
		return nil, fmt.Errorf("analysis: loading run %q into %s: %w", runID, db.name(), err)
	}
	return l, nil
}

// addLoad registers an unfinished load. While any load runs, DuckDB has no threads of its
// own: each lane's statements run on the lane's own thread, which is all a single Arrow
// batch can use, and scheduler threads would only spin on locks, competing with the lanes
// and the simulation that feeds them (measured: two DuckDB threads on two busy cores take
// twice the wall time of one).
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
	// Lowering is advice: DuckDB refuses a limit below what it cannot evict, and the load
	// then goes on under the limit it had.
	db.fitLoadBuffers(context.Background())
	return nil
}

// LoadBufferPerRun is DuckDB's buffer memory (memory_limit) for each run loading into a
// database, while any does: a load only writes, and what DuckDB keeps beyond the row groups
// it is filling is a cache of blocks already written, which nothing reads before the load
// ends. At the default limit that cache filled it: research-fleet at 300,000 investigations
// peaked at 932 MB in 69.0 s, and at 701 MB in 62.8 s with 160 MB; at 96 MB a million
// investigations peak at 887 MB, under 0.9 GiB, where 160 MB took them to 974-993 MB, and
// runs of 10,000 investigations and the M/M/8 model take the same time (docs/performance.md).
// The limit never rises above the database's own while loads run, and is the database's
// own again when the last load has finished (its commit included).
const LoadBufferPerRun = 96e6

// fitLoadBuffers sets DuckDB's memory limit for the loads under way: LoadBufferPerRun for
// each, at most the limit mayday set on the database (db.buffers), and that limit again once
// none is left. A limit mayday did not set (MemoryEnv's, DuckDB's own in a database held in
// memory, whose tables live in its buffers) is left alone. The caller holds db.mu.
func (db *DB) fitLoadBuffers(ctx context.Context) error {
	if db.buffers == 0 {
		return nil
	}
	limit := db.buffers
	if len(db.loads) > 0 {
		limit = min(limit, uint64(LoadBufferPerRun)*uint64(len(db.loads))>>20<<20) // whole MiB
	}
	_, err := db.db.ExecContext(ctx, "SET memory_limit = '"+strconv.FormatUint(limit>>10, 10)+"KiB'")
	return err
}

// forget unregisters a finished load; the last one gives DuckDB its threads and its memory
// limit back.
func (l *Load) forget() {
	db := l.db
	db.mu.Lock()
	defer db.mu.Unlock()
	delete(db.loads, l)
	db.fitLoadBuffers(context.Background())
	if len(db.loads) == 0 && db.threads > 0 {
		db.db.ExecContext(context.Background(), "SET threads = "+strconv.FormatInt(db.threads, 10))
	}
}

// emit hands a full batch to its table's lane, starting the lane with the table's first
// batch; it runs on the sender's goroutine.
func (l *Load) emit(t traces.Table, rec arrow.RecordBatch) error {
	if l.failed.Load() {
		rec.Release()
		return errLoaderStopped
	}
	ln, err := l.lane(t)
	if err != nil {
		rec.Release()
		l.failed.Store(true)
		return err
	}
	ln.queue <- loadItem{rec: rec}
	return nil
}

// lane returns the lane of table t, starting it on a connection of its own.
func (l *Load) lane(t traces.Table) (*lane, error) {
	if ln := l.lanes[t]; ln != nil {
		return ln, nil
	}
	conn, err := l.db.db.Conn(context.Background())
	if err != nil {
		return nil, err
	}
	ln := &lane{
		table:   t,
		queue:   make(chan loadItem, loadQueue),
		drained: make(chan error, 1),
		decide:  make(chan bool, 1),
		done:    make(chan error, 1),
	}
	l.lanes[t] = ln
	go l.runLane(ln, conn)
	return ln, nil
}

// runLane is a lane's goroutine: it owns the connection and its Arrow interface, which are
// not safe for concurrent use.
func (l *Load) runLane(ln *lane, conn *sql.Conn) {
	// A lane inserts whatever it was sent, whatever the caller's context: a run's
	// consistency rests on its transactions, not on cancellation.
	ctx := context.Background()
	decided := false
	if laneStarts != nil {
		laneStarts(ln.table)
	}
	err := conn.Raw(func(dc any) error {
		ar, exec, err := arrowOn(ctx, dc)
		if err != nil {
			return err
		}
		err = exec("BEGIN TRANSACTION", nil)
		err = errors.Join(err, l.insertAll(ln, ar, exec, err != nil))
		// A table's lane commits as soon as it has drained, while the other lanes still
		// insert their last batches: DuckDB compresses a table's last row group as it
		// commits, one table at a time, and the run waited for the slowest lane first. The
		// runs row still commits last, once every table has; a load that fails after a lane
		// committed deletes that lane's rows again (finish).
		if err == nil && ln.table != traces.Runs && !l.aborted.Load() && !l.failed.Load() {
			if err = commitLane(ln.table, exec); err == nil {
				ln.early = true
			}
		}
		ln.drained <- err
		commit := <-ln.decide
		decided = true
		if err != nil || ln.early {
			return err // never begun, rolled back below, or already committed
		}
		if !commit {
			return exec("ROLLBACK", nil)
		}
		return commitLane(ln.table, exec)
	})
	if !decided { // conn.Raw failed before the lane could report
		l.failed.Store(true)
		for it := range ln.queue {
			if it.rec != nil {
				it.rec.Release()
			}
		}
		ln.drained <- err
		<-ln.decide
	}
	ln.done <- errors.Join(err, conn.Close())
}

// commitLane commits a lane's transaction (failCommit refuses it for tests).
func commitLane(t traces.Table, exec func(string, []driver.NamedValue) error) error {
	if failCommit != nil && failCommit(t) {
		return errors.Join(errors.New("commit refused (test)"), exec("ROLLBACK", nil))
	}
	return exec("COMMIT", nil)
}

// arrowOn returns the Arrow interface of a raw DuckDB connection (inside sql.Conn.Raw) and a
// function that runs a statement on it.
func arrowOn(ctx context.Context, dc any) (*duckdb.Arrow, func(string, []driver.NamedValue) error, error) {
	dconn, ok := dc.(driver.Conn)
	ex, ok2 := dc.(driver.ExecerContext)
	if !ok || !ok2 {
		return nil, nil, fmt.Errorf("analysis: DuckDB connection %T cannot take Arrow batches", dc)
	}
	ar, err := duckdb.NewArrowFromConn(dconn)
	if err != nil {
		return nil, nil, err
	}
	return ar, func(q string, args []driver.NamedValue) error {
		_, err := ex.ExecContext(ctx, q, args)
		return err
	}, nil
}

// insertAll inserts the lane's items until its queue is closed; after the first error (or when
// the load is aborted) it only releases them. On an error the transaction is rolled back.
func (l *Load) insertAll(ln *lane, ar *duckdb.Arrow, exec func(string, []driver.NamedValue) error, broken bool) error {
	var err error
	used := false
	for it := range ln.queue {
		if broken || err != nil || l.aborted.Load() {
			if it.rec != nil {
				it.rec.Release()
			}
			continue
		}
		if it.rec == nil {
			if err = exec(it.exec, it.args); err != nil {
				err = fmt.Errorf("%s: %w", strings.Fields(it.exec)[0], err)
			}
		} else {
			used = true
			err = insertVia(ar, exec, ln.table, l.view(ln.table), it.rec)
		}
		if err != nil {
			l.failed.Store(true)
		}
	}
	if broken {
		return nil // the caller reports why
	}
	// The registered view points at a released stream: drop it so that nobody who gets this
	// pooled connection later can read through it.
	if err == nil && used {
		err = exec("DROP VIEW IF EXISTS "+l.view(ln.table), nil)
	}
	if err != nil {
		return errors.Join(err, exec("ROLLBACK", nil)) // the view goes with the transaction
	}
	return nil
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
	return insertInto(ar, exec, t.String(), view, rec)
}

// insertInto copies one batch into table through a registered Arrow view of the given name,
// and releases it.
func insertInto(ar *duckdb.Arrow, exec func(string, []driver.NamedValue) error, table, view string, rec arrow.RecordBatch) error {
	naive := naiveTimes(rec)
	rec.Release()
	rr, err := array.NewRecordReader(naive.Schema(), []arrow.RecordBatch{naive})
	naive.Release() // the reader holds its own reference
	if err != nil {
		return fmt.Errorf("%s batch: %w", table, err)
	}
	release, err := ar.RegisterView(rr, view)
	rr.Release() // the exported stream holds its own reference
	if err != nil {
		return fmt.Errorf("%s batch: registering the Arrow view: %w", table, err)
	}
	err = exec("INSERT INTO "+table+" BY NAME SELECT * FROM "+view, nil)
	release()
	if err != nil {
		return fmt.Errorf("inserting a %s batch: %w", table, err)
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
func (l *Load) Worker(r *record.Worker)               { l.w.Worker(r) }

// Digest returns the digest over every (redacted) record sent so far: runs.digest.
func (l *Load) Digest() string { return l.w.Digest() }

// Rows returns how many rows of table t were sent.
func (l *Load) Rows(t traces.Table) int64 { return l.w.Rows(t) }

// RunID returns the id of the run being loaded.
func (l *Load) RunID() string { return l.runID }

// Finish flushes what is left, writes the runs row (its digest from the writer), waits for
// the lanes and commits the run: every table's transaction, then the runs row's. It returns
// the first error; then nothing of the run is kept. When the load's context was cancelled,
// the run is stored with status partial. Calling it again returns the same result.
func (l *Load) Finish(run traces.Run) error {
	l.finishOnce.Do(func() { l.finishErr = l.finish(run) })
	return l.finishErr
}

func (l *Load) finish(run traces.Run) error {
	defer l.forget()
	if run.RunID != "" && run.RunID != l.runID {
		l.rollback()
		return fmt.Errorf("analysis: finishing run %q: the load is of run %q", run.RunID, l.runID)
	}
	if l.ctx.Err() != nil {
		run.Status = traces.StatusPartial
	}
	var merr error
	if l.metrics != nil {
		// The runs row's transaction must begin once run_metrics exists, for it to see
		// the table: the views of a new database are defined on the side (Create).
		merr = l.db.waitViews()
	}
	werr := l.w.WriteRun(run)
	cerr := l.w.Close()
	if merr == nil && werr == nil && cerr == nil && l.metrics != nil {
		merr = l.queueMetrics()
	}
	err := errors.Join(werr, cerr, merr, l.drain())
	ReleaseGoMemory() // the Arrow batches are inserted: what follows is DuckDB's
	if err == nil {
		err = l.commit()
	} else {
		err = errors.Join(err, l.decideAll(false), l.deleteEarly())
	}
	if err != nil {
		return fmt.Errorf("analysis: loading run %q into %s: %w", l.runID, l.db.name(), err)
	}
	if l.tables != nil && l.ctx.Err() == nil {
		// A run stopped early (partial) has them computed from what was stored.
		// Under deriveMu: a new database's views, defined meanwhile, fill the rows of the
		// runs that lack them (prepareStored), this one included once it is committed; two
		// stores at once would each delete nothing and insert, and the run's rows be doubled.
		l.db.deriveMu.Lock()
		defer l.db.deriveMu.Unlock()
		return l.db.storeDerived(context.Background(), l.runID, *l.tables, nil)
	}
	return nil
}

// SetMetrics gives the run's metrics row (computed from its records, by package
// metric/compute), which Finish stores in run_metrics in the transaction of the runs row.
// Without it the row is computed from the stored records (derive.go) when the metrics are
// next read or the database next opened for writing. It must not race with Finish.
func (l *Load) SetMetrics(m Metrics) {
	m.RunID = l.runID
	l.metrics = &m
}

// SetTables gives the run's derived tables (computed from its records by package
// metric/compute), which Finish stores once the run is committed. Without them they are
// computed from the stored records when the database is next opened or its metrics read.
// It must not race with Finish.
func (l *Load) SetTables(t compute.Tables) { l.tables = &t }

// queueMetrics sends the statement that stores the run's metrics row to the lane of the
// runs table, so that it commits with the runs row.
func (l *Load) queueMetrics() error {
	q, args, err := l.db.storeStatement(*l.metrics)
	if err != nil {
		return err
	}
	ln, err := l.lane(traces.Runs)
	if err != nil {
		return err
	}
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	ln.queue <- loadItem{exec: q, args: named}
	return nil
}

// drain closes every lane's queue and waits until each has inserted what it was sent.
func (l *Load) drain() error {
	var errs []error
	for _, ln := range l.lanes {
		if ln != nil {
			close(ln.queue)
		}
	}
	for _, ln := range l.lanes {
		if ln != nil {
			if err := <-ln.drained; err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ln.table, err))
			}
		}
	}
	return errors.Join(errs...)
}

// decideAll tells every lane not yet told to commit or roll back, and waits for them.
func (l *Load) decideAll(commit bool) error { return decide(l.lanes, commit) }

// decide tells the lanes among lanes not yet told to commit or roll back, and waits for
// them.
func decide(lanes []*lane, commit bool) error {
	var errs []error
	for _, ln := range lanes {
		if ln != nil && !ln.told {
			ln.decide <- commit
		}
	}
	for _, ln := range lanes {
		if ln != nil && !ln.told {
			ln.told = true
			if err := <-ln.done; err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ln.table, err))
			}
		}
	}
	return errors.Join(errs...)
}

// commit commits the tables' transactions, then the runs row's. If any commit fails, the
// rows already committed are deleted again, so that the run leaves nothing behind.
func (l *Load) commit() error {
	runs := l.lanes[traces.Runs]
	tables := slices.DeleteFunc(slices.Clone(l.lanes), func(ln *lane) bool { return ln == runs })
	err := decide(tables, true)
	err = errors.Join(err, decide([]*lane{runs}, err == nil))
	if err != nil {
		return errors.Join(err, l.deleteRun(nil))
	}
	return nil
}

// deleteRun removes the rows of this run from every table a lane wrote (of the lanes
// only picks, when given).
func (l *Load) deleteRun(only func(*lane) bool) error {
	ctx := context.Background()
	tx, err := l.db.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("removing the rows already committed: %w", err)
	}
	for _, ln := range l.lanes {
		if ln == nil || only != nil && !only(ln) {
			continue
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+ident(ln.table.String())+" WHERE run_id = ?", l.runID); err != nil {
			tx.Rollback()
			return fmt.Errorf("removing the rows already committed to %s: %w", ln.table, err)
		}
	}
	return tx.Commit()
}

// rollback abandons the load: the lanes drain what they hold and roll back. None has
// committed: a lane commits early only once its queue is closed, which drain does after
// aborted is set.
func (l *Load) rollback() {
	l.aborted.Store(true)
	l.w.Close()
	l.drain()
	l.decideAll(false)
}

// deleteEarly deletes the rows of the lanes that committed as they drained, once every
// lane has been told to roll back; the lanes' goroutines have ended. Only those tables:
// another lane may have failed because its table cannot be written at all.
func (l *Load) deleteEarly() error {
	if !slices.ContainsFunc(l.lanes, committedEarly) {
		return nil
	}
	return l.deleteRun(committedEarly)
}

func committedEarly(ln *lane) bool { return ln != nil && ln.early }

// Abandon rolls back a load whose records have all been sent (or none will be), instead of
// finishing it: nothing of the run is kept. Finish then returns an error. It must not race
// with senders.
func (l *Load) Abandon() { l.abort() }

// abort rolls the load back; for DB.Close and misuse. It must not race with senders.
func (l *Load) abort() {
	l.finishOnce.Do(func() {
		defer l.forget()
		l.rollback()
		l.finishErr = errors.New("analysis: load aborted")
	})
}
