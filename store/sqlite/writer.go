package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"

	"github.com/pmauthority/pmauthority/store"
)

// maxBatch bounds the operations committed together, so that one commit
// does not keep the first callers of a long queue waiting for long.
const maxBatch = 256

// After loneBatches batches in a row of one operation each, the writer
// yields before one batch in loneYieldEvery only (see writeLoop).
const (
	loneBatches    = 4
	loneYieldEvery = 8
)

// op is one queued write. run executes it in the writer's open
// transaction; done receives its outcome once the transaction is over. run
// may run more than once (see writer.commit), and it returns one of the
// store's refusals (store.ErrConflict, errInvalid …) only before it changed
// anything.
type op struct {
	ctx  context.Context
	run  func(w *writer) error
	done chan error
}

// writer is the state of the writer goroutine: its connection and the
// statements prepared on it. Only that goroutine uses it, holding mu, and
// tests that drive the writer directly.
type writer struct {
	mu      sync.Mutex
	conn    *sql.Conn
	stmts   []*sql.Stmt
	commits atomic.Int64 // transactions committed, for tests and benchmarks

	begin, commitTx, rollback     *sql.Stmt
	savepoint, release, undo      *sql.Stmt
	createDoc, createSnap         *sql.Stmt
	createMeta                    *sql.Stmt
	advance, docVersion           *sql.Stmt
	putSnap, latestSnap, dropSnap *sql.Stmt
	pruneSteps, setOldest         *sql.Stmt
	deleteSteps, deleteSnaps      *sql.Stmt
	deleteLog, deleteDoc          *sql.Stmt
	foldLog, clearLog             *sql.Stmt
	insertMeta, metaState         *sql.Stmt
	setMetaBase, dropMeta         *sql.Stmt
	deleteMeta, deleteBase        *sql.Stmt
	snapBelow, addCheckpoint      *sql.Stmt
	deleteCheckpoints             *sql.Stmt
	firstVersion, bury            *sql.Stmt
	checkpointDoc                 *sql.Stmt

	// insertSteps[n-1] inserts n steps into the log, prepared on first
	// use.
	insertSteps [maxStepRows]*sql.Stmt

	// pending holds the arguments of the log rows that insertStepRows
	// has yet to insert. While deferRows (in a transaction without
	// savepoints), it leaves them there, and the transaction inserts them
	// all together before it commits (see transact).
	pending   []any
	deferRows bool

	// logRows and logBytes approximate what the log holds: they count
	// the rows and bytes inserted since the last fold, of rolled back
	// transactions too. foldRows and foldBytes are the thresholds at
	// which maintain folds.
	logRows, logBytes   int64
	foldRows, foldBytes int64
	folds               atomic.Int64 // folds committed, for tests

	// walPath is the write-ahead log's file; maintain makes sure that it
	// does not grow much past walLimit bytes (see boundWAL).
	walPath  string
	walLimit int64
	batches  int64         // batches committed, counted by maintain
	readers  *sync.RWMutex // held for reading by the Store's reads

	// The reserve (reserve.go): its file, its size (≤ 0: none) and
	// whether it is allocated; incremental is set when the file can
	// shrink (PRAGMA auto_vacuum is INCREMENTAL), and shrinking while
	// pages freed by a Delete are left to give back.
	reservePath string
	reserveSize int64
	reserved    bool
	incremental bool
	shrinking   bool
}

// The thresholds at which the writer folds the step log into steps. A
// fold dirties each document's pages of steps once for all the steps it
// moves, and readers scan the log, so that it is kept short.
const (
	foldRows  = 4096
	foldBytes = 4 << 20
)

// maxStepRows bounds the rows of one INSERT into the log.
const maxStepRows = 32

// prepare prepares the statements that the operations use.
func (w *writer) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.begin, "BEGIN IMMEDIATE"},
		{&w.commitTx, "COMMIT"},
		{&w.rollback, "ROLLBACK"},
		{&w.savepoint, "SAVEPOINT op"},
		{&w.release, "RELEASE op"},
		{&w.undo, "ROLLBACK TO op"},
		{&w.createDoc, `INSERT INTO docs (id, schema, version, oldest, created, updated)
			VALUES (?1, ?2, ?4, ?4, ?3, ?3) ON CONFLICT (id) DO NOTHING`},
		{&w.createMeta, "INSERT INTO meta_bases (doc_id, version, seq, meta) VALUES (?, ?, 0, ?)"},
		{&w.createSnap, "INSERT INTO snapshots (doc_id, version, doc, time) VALUES (?, ?, ?, ?)"},
		{&w.firstVersion, "SELECT coalesce(max(version) + 1, 0) FROM tombstones WHERE id = ?"},
		{&w.bury, `INSERT INTO tombstones (id, version) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET version = max(version, excluded.version)`},
		// A negative ?6 appends whatever the metadata sequence number.
		{&w.advance, `UPDATE docs SET version = ?1, updated = ?2, meta_seq = meta_seq + ?3
			WHERE id = ?4 AND version = ?5 AND (?6 < 0 OR meta_seq = ?6) RETURNING meta_seq`},
		{&w.docVersion, "SELECT version, oldest FROM docs WHERE id = ?"},
		{&w.insertMeta, "INSERT INTO meta_log (doc_id, seq, version, json) VALUES (?, ?, ?, ?)"},
		{&w.metaState, `SELECT b.version, b.seq, d.meta_seq FROM meta_bases b JOIN docs d ON d.id = b.doc_id
			WHERE b.doc_id = ?`},
		{&w.setMetaBase, "UPDATE meta_bases SET meta = ?, version = ?, seq = ? WHERE doc_id = ?"},
		{&w.dropMeta, "DELETE FROM meta_log WHERE doc_id = ? AND seq <= ?"},
		{&w.deleteMeta, "DELETE FROM meta_log WHERE doc_id = ?"},
		{&w.deleteBase, "DELETE FROM meta_bases WHERE doc_id = ?"},
		{&w.putSnap, "INSERT OR REPLACE INTO snapshots (doc_id, version, doc, time) VALUES (?, ?, ?, ?)"},
		{&w.latestSnap, "SELECT max(version) FROM snapshots WHERE doc_id = ?"},
		{&w.dropSnap, "DELETE FROM snapshots WHERE doc_id = ? AND version < ?"},
		{&w.snapBelow, "SELECT coalesce(max(version), -1) FROM snapshots WHERE doc_id = ? AND version <= ?"},
		{&w.addCheckpoint, `INSERT INTO checkpoints (doc_id, name, version, doc, author, time)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (doc_id, name) DO NOTHING`},
		{&w.deleteCheckpoints, "DELETE FROM checkpoints WHERE doc_id = ?"},
		{&w.checkpointDoc, "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE doc_id = ? AND version = ? AND doc IS NOT NULL)"},
		{&w.pruneSteps, "DELETE FROM steps WHERE doc_id = ? AND version <= ?"},
		{&w.setOldest, "UPDATE docs SET oldest = ? WHERE id = ?"},
		{&w.deleteSteps, "DELETE FROM steps WHERE doc_id = ?"},
		{&w.deleteSnaps, "DELETE FROM snapshots WHERE doc_id = ?"},
		{&w.deleteLog, "DELETE FROM log WHERE doc_id = ?"},
		{&w.deleteDoc, "DELETE FROM docs WHERE id = ? RETURNING version"},
		// Steps pruned while in the log (at or before oldest) are left
		// out; the order makes SQLite fill each document's pages of steps
		// in turn.
		{&w.foldLog, `INSERT OR ROLLBACK INTO steps (doc_id, version, json, client_id, author, time, commit_rec)
			SELECT l.doc_id, l.version, l.json, l.client_id, l.author, l.time, l.commit_rec
			FROM log l JOIN docs d ON d.id = l.doc_id
			WHERE l.version > d.oldest
			ORDER BY l.doc_id, l.version`},
		{&w.clearLog, "DELETE FROM log"},
	} {
		stmt, err := w.conn.PrepareContext(ctx, p.sql)
		if err != nil {
			return err
		}
		*p.stmt = stmt
		w.stmts = append(w.stmts, stmt)
	}
	return nil
}

// insertStepRows inserts steps into the log as versions base+1 … of the
// document id. Steps with a zero Time get now. While w.deferRows, it only
// adds them to w.pending.
func (w *writer) insertStepRows(id string, base int64, steps []store.Step, now time.Time) error {
	for i, st := range steps {
		t := st.Time
		if t.IsZero() {
			t = now
		}
		var author, commit any // NULL for none
		if st.Author != "" {
			author = st.Author
		}
		if len(st.Commit) > 0 {
			commit = st.Commit
		}
		w.pending = append(w.pending, id, base+1+int64(i), st.JSON, st.ClientID, author, t.UnixNano(), commit)
		w.logBytes += int64(len(st.JSON) + len(st.ClientID) + len(st.Author) + len(st.Commit))
	}
	w.logRows += int64(len(steps))
	if w.deferRows {
		return nil
	}
	if err := w.flushRows(); err != nil {
		if len(steps) == 1 {
			return fmt.Errorf("step %d: %w", base+1, err)
		}
		return fmt.Errorf("steps %d to %d: %w", base+1, base+int64(len(steps)), err)
	}
	return nil
}

// flushRows inserts the rows in w.pending into the log, with at most
// maxStepRows rows per statement, and empties it.
func (w *writer) flushRows() error {
	args := w.pending
	defer func() {
		clear(w.pending) // let the steps' bytes go
		w.pending = w.pending[:0]
	}()
	for len(args) > 0 {
		n := min(len(args)/logColumns, maxStepRows)
		stmt := w.insertSteps[n-1]
		if stmt == nil {
			var err error
			q := "INSERT INTO log (doc_id, version, json, client_id, author, time, commit_rec) VALUES " +
				strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?)"
			if stmt, err = w.conn.PrepareContext(context.Background(), q); err != nil {
				return err
			}
			w.insertSteps[n-1] = stmt
			w.stmts = append(w.stmts, stmt)
		}
		if _, err := stmt.Exec(args[:n*logColumns]...); err != nil {
			return err
		}
		args = args[n*logColumns:]
	}
	return nil
}

// logColumns is the number of columns insertStepRows fills in a log row.
const logColumns = 7

// close closes the statements and the connection.
func (w *writer) close() error {
	var errs []error
	for _, stmt := range w.stmts {
		errs = append(errs, stmt.Close())
	}
	return errors.Join(append(errs, w.conn.Close())...)
}

// execOne runs stmt and reports whether it changed a row.
func execOne(stmt *sql.Stmt, args ...any) (bool, error) {
	res, err := stmt.Exec(args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// execute runs one of the writer's own statements (BEGIN, SAVEPOINT …).
func execute(stmt *sql.Stmt) error {
	_, err := stmt.Exec()
	return err
}

// submit queues run and waits for its outcome. A context that is done
// before the writer reaches the operation cancels it; once the writer ran
// it, submit waits for the commit, so that an error always means that the
// operation did not take effect.
func (s *Store) submit(ctx context.Context, run func(w *writer) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o := &op{ctx: ctx, run: run, done: make(chan error, 1)}
	s.mu.RLock()
	if s.closed.Load() {
		s.mu.RUnlock()
		return store.ErrClosed
	}
	select {
	case s.queue <- o:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	return <-o.done
}

// writeLoop commits the queued operations in batches until Close closes
// the queue and it is empty.
func (s *Store) writeLoop() {
	defer close(s.done)
	batch := make([]*op, 0, maxBatch)
	errs := make([]error, maxBatch)
	lone := 0 // batches in a row that held one operation
	for o := range s.queue {
		batch = append(batch[:0], o)
		// The first operation's sender woke this goroutine, and Go's
		// scheduler runs a goroutine woken that way next, ahead of the
		// others that are runnable: among them callers about to queue
		// their operations. Yield to them, so that they join this batch.
		// Without it, on one CPU (GOMAXPROCS=1), every batch held one
		// operation: the runtime leaves the CPU to the writer through the
		// commit's system calls (fsync included), and the next caller to
		// queue woke the writer ahead of the others again.
		// When batches hold one operation all the same (one busy
		// document, whose next append waits for this one's answer), the
		// yield only puts the commit behind whatever else is runnable:
		// then only one batch in loneYieldEvery yields, to notice other
		// writers coming back.
		if lone < loneBatches || lone%loneYieldEvery == 0 {
			runtime.Gosched()
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case o, ok := <-s.queue:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		if len(batch) == 1 {
			lone++
		} else {
			lone = 0
		}
		s.w.mu.Lock()
		if err := s.files.check(); err != nil {
			s.rescue()
			err = s.files.check()
			for i := range batch {
				errs[i] = err
			}
		} else if s.obs == nil {
			s.w.commit(batch, errs[:len(batch)])
		} else {
			start := time.Now()
			s.w.commit(batch, errs[:len(batch)])
			s.obs.ObserveCommit(time.Since(start), len(batch))
		}
		for i, o := range batch {
			o.done <- errs[i]
			batch[i], errs[i] = nil, nil
		}
		s.w.maintain()
		s.w.mu.Unlock()
	}
}

// rescue runs when the files check fails. When only the write-ahead log
// was deleted or replaced, the writer's connection still holds the log it
// opened, so one checkpoint copies the writes acknowledged from it into
// the database file, where a restart finds them. The error that refuses
// every write from now on says whether that worked.
func (s *Store) rescue() {
	f := s.files
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rescued || !f.walOnly {
		return
	}
	f.rescued = true
	var busy, logged, moved int
	err := s.w.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved)
	switch {
	case err != nil:
		f.err = fmt.Errorf("%w; copying the writes of the deleted log into the database file failed: %v", f.err, err)
	case busy != 0:
		f.err = fmt.Errorf("%w; the writes of the deleted log could not all be copied into the database file (busy)", f.err)
	default:
		f.err = fmt.Errorf("%w; the writes acknowledged before were copied into the database file", f.err)
	}
}

// maintain does the writer's housekeeping between batches, once their
// operations have their outcome: it folds the step log when it has grown
// past the thresholds, and bounds the write-ahead log.
func (w *writer) maintain() {
	w.batches++
	folded := false
	if w.logRows >= w.foldRows || w.logBytes >= w.foldBytes {
		// A failed fold leaves the log as it was, which readers see as
		// well: it is tried again once as much has been appended again.
		folded = w.fold() == nil
		w.logRows, w.logBytes = 0, 0
	}
	if folded || w.batches%walCheckEvery == 0 {
		w.boundWAL()
	}
	if w.shrinking {
		w.shrink(1)
	}
	if w.batches%reserveEvery == 0 {
		w.reserve()
	}
}

// walCheckEvery is how many batches maintain lets pass between looks at
// the write-ahead log's size.
const walCheckEvery = 16

// boundWAL bounds the write-ahead log. SQLite checkpoints it into the
// database every 1000 pages (PRAGMA wal_autocheckpoint, in the COMMIT
// that passes them) and the next commit starts it over from its
// beginning, but only when no reader still reads an older state from it:
// a checkpoint that finds one copies what it can and leaves the log as it
// is. Readers here are short, so that this hardly happens twice in a row;
// when it does, under reads that overlap without pause, the log would
// grow without bound. Once its file is larger than walLimit, boundWAL
// holds off new readers (Store.Load, Steps and List wait for readers)
// while the current ones finish and a RESTART checkpoint copies the whole
// log, so that the next commit starts it over, and SQLite truncates the
// file to walLimit (PRAGMA journal_size_limit). The file thus stays below
// walLimit plus the commits of walCheckEvery batches or one fold,
// whichever is larger.
func (w *writer) boundWAL() {
	fi, err := os.Stat(w.walPath)
	if err != nil || fi.Size() <= w.walLimit {
		return
	}
	// Readers in other processes may outlast the busy timeout: the next
	// look tries again.
	w.readers.Lock()
	defer w.readers.Unlock()
	_, _ = w.conn.ExecContext(context.Background(), "PRAGMA wal_checkpoint(RESTART)")
}

// fold moves the step log into steps in one transaction. Append writes
// steps to the log, a table in commit order, so that a commit of many
// documents' steps writes a few pages at its end; in steps, keyed by
// document and version, it would write at least a page per document, and
// each page is a frame to write to the write-ahead log and to copy at the
// next checkpoint. The fold then writes each document's pages of steps
// once for all the steps it moves.
func (w *writer) fold() (err error) {
	if err := execute(w.begin); err != nil {
		return fmt.Errorf("store: fold: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = execute(w.rollback) // fails when SQLite has rolled back already
			err = fmt.Errorf("store: fold: %w", err)
		}
	}()
	if _, err := w.foldLog.Exec(); err != nil {
		return err
	}
	if _, err := w.clearLog.Exec(); err != nil {
		return err
	}
	if err := execute(w.commitTx); err != nil {
		return err
	}
	w.folds.Add(1)
	return nil
}

// commit runs batch in one transaction and sets errs[i] to the outcome of
// batch[i]. An operation that fails must change nothing, while the others
// commit. The store's refusals (a conflicting Append, say) come before an
// operation changes anything, so that a first attempt runs the operations
// without savepoints, where appends leave their steps pending and the
// transaction inserts them all together before it commits (a few
// statements instead of one per append); only when an operation, or that
// insert, fails in a way that may leave part of its changes behind (a
// constraint, say) is the batch rolled back and run again with a
// savepoint around each operation, each append inserting its own steps.
func (w *writer) commit(batch []*op, errs []error) {
	if w.transact(batch, errs, false) {
		return
	}
	clear(errs)
	w.transact(batch, errs, true)
}

// transact runs batch in one transaction as commit says, with a savepoint
// around each operation when savepoints is true. It returns false, having
// rolled back, when savepoints is false and an operation may have been
// left half done.
func (w *writer) transact(batch []*op, errs []error, savepoints bool) bool {
	// failAll rolls back and fails with err the operations that have no
	// outcome yet.
	failAll := func(err error) bool {
		_ = execute(w.rollback) // fails when SQLite has rolled back already
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return true
	}
	if err := execute(w.begin); err != nil {
		return failAll(fmt.Errorf("store: begin: %w", err))
	}
	w.deferRows = !savepoints
	defer func() {
		w.deferRows = false
		clear(w.pending)
		w.pending = w.pending[:0]
	}()
	applied := 0
	for i, o := range batch {
		if err := o.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if savepoints {
			if err := execute(w.savepoint); err != nil {
				return failAll(fmt.Errorf("store: savepoint: %w", err))
			}
		}
		err := o.run(w)
		if err == nil {
			if savepoints {
				if err := execute(w.release); err != nil {
					return failAll(fmt.Errorf("store: release savepoint: %w", err))
				}
			}
			applied++
			continue
		}
		errs[i] = err
		switch {
		case !undoable(err):
			// The transaction may be gone (SQLite rolls back on I/O
			// errors, for one): nothing of the batch is certain.
			return failAll(fmt.Errorf("store: batch rolled back after: %w", err))
		case !savepoints && refused(err):
			// Nothing to undo.
		case !savepoints:
			// Perhaps half done: start again with savepoints.
			if err := execute(w.rollback); err != nil {
				return failAll(fmt.Errorf("store: rollback: %w", err))
			}
			return false
		default:
			if err := execute(w.undo); err != nil {
				return failAll(fmt.Errorf("store: rollback to savepoint: %w", err))
			}
			if err := execute(w.release); err != nil {
				return failAll(fmt.Errorf("store: release savepoint: %w", err))
			}
		}
	}
	if applied == 0 {
		if err := execute(w.rollback); err != nil {
			failAll(fmt.Errorf("store: rollback: %w", err))
		}
		return true
	}
	if err := w.flushRows(); err != nil {
		if !undoable(err) {
			return failAll(fmt.Errorf("store: batch rolled back after: %w", err))
		}
		// Some append's steps do not fit: find out which with savepoints.
		if err := execute(w.rollback); err != nil {
			return failAll(fmt.Errorf("store: rollback: %w", err))
		}
		return false
	}
	if err := execute(w.commitTx); err != nil {
		return failAll(fmt.Errorf("store: commit: %w", err))
	}
	w.commits.Add(1)
	return true
}

// errInvalid marks errors of operations that were refused before they
// changed anything, such as a snapshot out of range.
var errInvalid = errors.New("invalid operation")

// refused reports whether err is one of the store's refusals. An
// operation refuses before it changes anything, so that a refused
// operation needs no undoing.
func refused(err error) bool {
	for _, e := range []error{store.ErrConflict, store.ErrNotFound, store.ErrExists, errInvalid} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// undoable reports whether an operation that failed with err can be
// undone alone, by rolling back to its savepoint: the store's own
// refusals and SQLite errors that concern one statement.
func undoable(err error) bool {
	if refused(err) {
		return true
	}
	var serr *sqlite3.Error
	if errors.As(err, &serr) {
		switch serr.Code() & 0xff {
		case sqlitelib.SQLITE_CONSTRAINT, sqlitelib.SQLITE_TOOBIG, sqlitelib.SQLITE_MISMATCH, sqlitelib.SQLITE_RANGE:
			return true
		}
	}
	return false
}

// Create implements store.Store.
func (s *Store) Create(ctx context.Context, id, schema string, doc, meta []byte) error {
	if err := s.submit(ctx, s.createOp(id, schema, doc, meta)); err != nil {
		return fmt.Errorf("store: create %q: %w", id, err)
	}
	return nil
}

// createOp returns Create's operation.
func (s *Store) createOp(id, schema string, doc, meta []byte) func(w *writer) error {
	return func(w *writer) error {
		now := s.now().UnixNano()
		var first int64
		if err := w.firstVersion.QueryRow(id).Scan(&first); err != nil {
			return err
		}
		created, err := execOne(w.createDoc, id, schema, now, first)
		if err != nil {
			return err
		} else if !created {
			return store.ErrExists
		}
		if _, err := w.createMeta.Exec(id, first, meta); err != nil {
			return err
		}
		_, err = w.createSnap.Exec(id, first, doc, now)
		return err
	}
}

// Append implements store.Store. Steps with a zero Time get the current
// time.
func (s *Store) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	if err := s.submit(ctx, s.appendOp(id, base, steps, -1, meta)); err != nil {
		return fmt.Errorf("store: append %q at %d: %w", id, base, err)
	}
	return nil
}

// AppendIf implements store.MetaSwapper. Steps with a zero Time get the
// current time.
func (s *Store) AppendIf(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) error {
	if metaSeq < 0 {
		return fmt.Errorf("store: append %q at %d: negative metadata sequence number %d", id, base, metaSeq)
	}
	if err := s.submit(ctx, s.appendOp(id, base, steps, metaSeq, meta)); err != nil {
		return fmt.Errorf("store: append %q at %d with metadata %d: %w", id, base, metaSeq, err)
	}
	return nil
}

// appendOp returns the operation of Append, and of AppendIf when metaSeq
// is not negative.
func (s *Store) appendOp(id string, base int64, steps []store.Step, metaSeq int64, meta []byte) func(w *writer) error {
	return func(w *writer) error {
		now := s.now()
		version := base + int64(len(steps))
		entries := 0
		if meta != nil {
			entries = 1
		}
		var seq int64
		err := w.advance.QueryRow(version, now.UnixNano(), entries, id, base, metaSeq).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			var latest, oldest int64
			err := w.docVersion.QueryRow(id).Scan(&latest, &oldest)
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			} else if err != nil {
				return err
			}
			if latest == base {
				return fmt.Errorf("metadata moved on: %w", store.ErrConflict)
			}
			return fmt.Errorf("latest is %d: %w", latest, store.ErrConflict)
		} else if err != nil {
			return err
		}
		if meta != nil {
			if _, err := w.insertMeta.Exec(id, seq, version, meta); err != nil {
				return err
			}
		}
		return w.insertStepRows(id, base, steps, now)
	}
}

// SaveSnapshot implements store.Store. The snapshots from the oldest kept
// step on are kept.
func (s *Store) SaveSnapshot(ctx context.Context, id string, snap store.Snapshot, keep int64) error {
	if err := s.submit(ctx, s.snapshotOp(id, snap, keep)); err != nil {
		return fmt.Errorf("store: snapshot of %q at %d: %w", id, snap.Version, err)
	}
	return nil
}

// snapshotOp returns SaveSnapshot's operation.
func (s *Store) snapshotOp(id string, snap store.Snapshot, keep int64) func(w *writer) error {
	return func(w *writer) error {
		var version, oldest int64
		err := w.docVersion.QueryRow(id).Scan(&version, &oldest)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		} else if err != nil {
			return err
		}
		var latest int64
		if err := w.latestSnap.QueryRow(id).Scan(&latest); err != nil {
			return err
		}
		if snap.Version < latest || snap.Version > version {
			return fmt.Errorf("%w: version outside [%d, %d]", errInvalid, latest, version)
		}
		var metaVersion, metaBase, metaSeq int64
		if err := w.metaState.QueryRow(id).Scan(&metaVersion, &metaBase, &metaSeq); err != nil {
			return err
		}
		if snap.Meta != nil && (snap.MetaSeq < 0 || snap.MetaSeq > metaSeq) {
			return fmt.Errorf("%w: metadata entry %d outside [0, %d]", errInvalid, snap.MetaSeq, metaSeq)
		}
		if _, err := w.putSnap.Exec(id, snap.Version, snap.Doc, s.now().UnixNano()); err != nil {
			return err
		}
		if snap.Meta != nil && snap.MetaSeq >= metaBase && snap.Version >= metaVersion {
			if _, err := w.setMetaBase.Exec(snap.Meta, snap.Version, snap.MetaSeq, id); err != nil {
				return err
			}
			if _, err := w.dropMeta.Exec(id, snap.MetaSeq); err != nil {
				return err
			}
			metaVersion = snap.Version
		}
		if keep < 0 {
			return nil
		}
		// Pruning stops at the newest snapshot at or below the bound.
		var cut int64
		if err := w.snapBelow.QueryRow(id, min(snap.Version, version-keep, metaVersion)).Scan(&cut); err != nil {
			return err
		}
		if cut > oldest {
			if _, err := w.pruneSteps.Exec(id, cut); err != nil {
				return err
			}
			if _, err := w.setOldest.Exec(cut, id); err != nil {
				return err
			}
			if _, err := w.dropSnap.Exec(id, cut); err != nil {
				return err
			}
		}
		return nil
	}
}

// Delete implements store.Store. The document's last version is kept
// in the table tombstones.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.submit(ctx, deleteOp(id))
	if diskFull(err) {
		err = s.deleteOnFullDisk(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("store: delete %q: %w", id, err)
	}
	s.settle()
	return nil
}

// deleteOp returns Delete's operation.
func deleteOp(id string) func(w *writer) error {
	return func(w *writer) error {
		// Steps of this document that appends in the transaction left
		// pending are to be deleted too.
		if err := w.flushRows(); err != nil {
			return err
		}
		var version int64
		err := w.deleteDoc.QueryRow(id).Scan(&version)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		} else if err != nil {
			return err
		}
		for _, stmt := range []*sql.Stmt{w.deleteSteps, w.deleteLog, w.deleteSnaps, w.deleteMeta, w.deleteBase, w.deleteCheckpoints} {
			if _, err := stmt.Exec(id); err != nil {
				return err
			}
		}
		// Its last version stays, for a document created again under
		// its id to start after it (written last, where the pages just
		// freed can take it).
		_, err = w.bury.Exec(id, version)
		return err
	}
}

// AddCheckpoint implements store.Store.
func (s *Store) AddCheckpoint(ctx context.Context, id string, cp store.Checkpoint) error {
	if err := s.submit(ctx, s.checkpointOp(id, cp)); err != nil {
		return fmt.Errorf("store: checkpoint %q of %q: %w", cp.Name, id, err)
	}
	return nil
}

// checkpointOp returns AddCheckpoint's operation.
func (s *Store) checkpointOp(id string, cp store.Checkpoint) func(w *writer) error {
	return func(w *writer) error {
		var version, oldest int64
		err := w.docVersion.QueryRow(id).Scan(&version, &oldest)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		} else if err != nil {
			return err
		}
		if cp.Version < 0 || cp.Version > version {
			return fmt.Errorf("%w: version %d outside [0, %d]", errInvalid, cp.Version, version)
		}
		t := cp.Time
		if t.IsZero() {
			t = s.now()
		}
		var author any // NULL for none
		if cp.Author != "" {
			author = cp.Author
		}
		// The first checkpoint at a version keeps the document for all
		// (SnapshotAt reads it); the others have none (NULL).
		doc := cp.Doc
		var shared bool
		if err := w.checkpointDoc.QueryRow(id, cp.Version).Scan(&shared); err != nil {
			return err
		}
		if shared {
			doc = nil
		}
		added, err := execOne(w.addCheckpoint, id, cp.Name, cp.Version, doc, author, t.UnixNano())
		if err != nil {
			return err
		} else if !added {
			return store.ErrExists
		}
		return nil
	}
}
