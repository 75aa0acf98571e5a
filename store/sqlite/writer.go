package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"

	"github.com/pmauthority/pmauthority/store"
)

// maxBatch bounds the operations committed together, so that one commit
// does not keep the first callers of a long queue waiting for long.
const maxBatch = 256

// op is one queued write. run executes it in the writer's open
// transaction; done receives its outcome once the transaction is over.
type op struct {
	ctx  context.Context
	run  func(w *writer) error
	done chan error
}

// writer is the state of the writer goroutine: its connection and the
// statements prepared on it. Only that goroutine uses it.
type writer struct {
	conn    *sql.Conn
	stmts   []*sql.Stmt
	commits atomic.Int64 // transactions committed, for tests and benchmarks

	createDoc, createSnap         *sql.Stmt
	advance, docVersion           *sql.Stmt
	insertStep                    *sql.Stmt
	putSnap, latestSnap, dropSnap *sql.Stmt
	pruneSteps, setOldest         *sql.Stmt
	deleteSteps, deleteSnaps      *sql.Stmt
	deleteDoc                     *sql.Stmt
}

// prepare prepares the statements that the operations use.
func (w *writer) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.createDoc, `INSERT INTO docs (id, schema, version, oldest, meta, created, updated)
			VALUES (?1, ?2, 0, 0, ?3, ?4, ?4) ON CONFLICT (id) DO NOTHING`},
		{&w.createSnap, "INSERT INTO snapshots (doc_id, version, doc, time) VALUES (?, 0, ?, ?)"},
		{&w.advance, `UPDATE docs SET version = ?1, updated = ?2, meta = CASE WHEN ?3 THEN ?4 ELSE meta END
			WHERE id = ?5 AND version = ?6`},
		{&w.docVersion, "SELECT version, oldest FROM docs WHERE id = ?"},
		{&w.insertStep, "INSERT INTO steps (doc_id, version, json, client_id, time) VALUES (?, ?, ?, ?, ?)"},
		{&w.putSnap, "INSERT OR REPLACE INTO snapshots (doc_id, version, doc, time) VALUES (?, ?, ?, ?)"},
		{&w.latestSnap, "SELECT max(version) FROM snapshots WHERE doc_id = ?"},
		{&w.dropSnap, "DELETE FROM snapshots WHERE doc_id = ? AND version < ?"},
		{&w.pruneSteps, "DELETE FROM steps WHERE doc_id = ? AND version <= ?"},
		{&w.setOldest, "UPDATE docs SET oldest = ? WHERE id = ?"},
		{&w.deleteSteps, "DELETE FROM steps WHERE doc_id = ?"},
		{&w.deleteSnaps, "DELETE FROM snapshots WHERE doc_id = ?"},
		{&w.deleteDoc, "DELETE FROM docs WHERE id = ?"},
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

// exec runs a statement of the writer's own (BEGIN, SAVEPOINT …).
func (w *writer) exec(sql string) error {
	_, err := w.conn.ExecContext(context.Background(), sql)
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
	for o := range s.queue {
		batch = append(batch[:0], o)
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
		s.w.commit(batch, errs[:len(batch)])
		for i, o := range batch {
			o.done <- errs[i]
			batch[i], errs[i] = nil, nil
		}
	}
}

// commit runs batch in one transaction, one SAVEPOINT per operation, and
// sets errs[i] to the outcome of batch[i].
func (w *writer) commit(batch []*op, errs []error) {
	failAll := func(err error) {
		_ = w.exec("ROLLBACK") // fails when SQLite has rolled back already
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	if err := w.exec("BEGIN IMMEDIATE"); err != nil {
		failAll(fmt.Errorf("store: begin: %w", err))
		return
	}
	applied := 0
	for i, o := range batch {
		if err := o.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if err := w.exec("SAVEPOINT op"); err != nil {
			failAll(fmt.Errorf("store: savepoint: %w", err))
			return
		}
		err := o.run(w)
		if err == nil {
			if err := w.exec("RELEASE op"); err != nil {
				failAll(fmt.Errorf("store: release savepoint: %w", err))
				return
			}
			applied++
			continue
		}
		errs[i] = err
		if !undoable(err) {
			// The transaction may be gone (SQLite rolls back on I/O
			// errors, for one): nothing of the batch is certain.
			failAll(fmt.Errorf("store: batch rolled back after: %w", err))
			return
		}
		if err := w.exec("ROLLBACK TO op; RELEASE op"); err != nil {
			failAll(fmt.Errorf("store: rollback to savepoint: %w", err))
			return
		}
	}
	if applied == 0 {
		if err := w.exec("ROLLBACK"); err != nil {
			failAll(fmt.Errorf("store: rollback: %w", err))
		}
		return
	}
	if err := w.exec("COMMIT"); err != nil {
		failAll(fmt.Errorf("store: commit: %w", err))
		return
	}
	w.commits.Add(1)
}

// errInvalid marks errors of operations that were refused before they
// changed anything, such as a snapshot out of range.
var errInvalid = errors.New("invalid operation")

// undoable reports whether an operation that failed with err can be
// undone alone, by rolling back to its savepoint: the store's own
// refusals and SQLite errors that concern one statement.
func undoable(err error) bool {
	for _, e := range []error{store.ErrConflict, store.ErrNotFound, store.ErrExists, errInvalid} {
		if errors.Is(err, e) {
			return true
		}
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
		created, err := execOne(w.createDoc, id, schema, meta, now)
		if err != nil {
			return err
		} else if !created {
			return store.ErrExists
		}
		_, err = w.createSnap.Exec(id, doc, now)
		return err
	}
}

// Append implements store.Store. Steps with a zero Time get the current
// time.
func (s *Store) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	if err := s.submit(ctx, s.appendOp(id, base, steps, meta)); err != nil {
		return fmt.Errorf("store: append %q at %d: %w", id, base, err)
	}
	return nil
}

// appendOp returns Append's operation.
func (s *Store) appendOp(id string, base int64, steps []store.Step, meta []byte) func(w *writer) error {
	return func(w *writer) error {
		now := s.now()
		version := base + int64(len(steps))
		advanced, err := execOne(w.advance, version, now.UnixNano(), meta != nil, meta, id, base)
		if err != nil {
			return err
		} else if !advanced {
			var latest, oldest int64
			err := w.docVersion.QueryRow(id).Scan(&latest, &oldest)
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			} else if err != nil {
				return err
			}
			return fmt.Errorf("latest is %d: %w", latest, store.ErrConflict)
		}
		for i, st := range steps {
			t := st.Time
			if t.IsZero() {
				t = now
			}
			if _, err := w.insertStep.Exec(id, base+1+int64(i), st.JSON, st.ClientID, t.UnixNano()); err != nil {
				return fmt.Errorf("step %d: %w", base+1+int64(i), err)
			}
		}
		return nil
	}
}

// SaveSnapshot implements store.Store. Only the latest snapshot is kept.
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
		if _, err := w.putSnap.Exec(id, snap.Version, snap.Doc, s.now().UnixNano()); err != nil {
			return err
		}
		if _, err := w.dropSnap.Exec(id, snap.Version); err != nil {
			return err
		}
		if keep < 0 {
			return nil
		}
		if cut := min(snap.Version, version-keep); cut > oldest {
			if _, err := w.pruneSteps.Exec(id, cut); err != nil {
				return err
			}
			if _, err := w.setOldest.Exec(cut, id); err != nil {
				return err
			}
		}
		return nil
	}
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.submit(ctx, deleteOp(id)); err != nil {
		return fmt.Errorf("store: delete %q: %w", id, err)
	}
	return nil
}

// deleteOp returns Delete's operation.
func deleteOp(id string) func(w *writer) error {
	return func(w *writer) error {
		deleted, err := execOne(w.deleteDoc, id)
		if err != nil {
			return err
		} else if !deleted {
			return store.ErrNotFound
		}
		if _, err := w.deleteSteps.Exec(id); err != nil {
			return err
		}
		_, err = w.deleteSnaps.Exec(id)
		return err
	}
}
