package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/pmauthority/pmauthority/store"
)

// Sync says when a write counts as durable.
type Sync int

const (
	// SyncFull (the default) syncs the write-ahead log to disk at every
	// commit (PRAGMA synchronous=FULL): an acknowledged write survives a
	// crash of the process, of the operating system and a power loss.
	SyncFull Sync = iota
	// SyncNormal syncs only when the write-ahead log is checkpointed into
	// the database (PRAGMA synchronous=NORMAL): an acknowledged write
	// survives a crash of the process, but the last commits before an
	// operating system crash or a power loss may be lost (the database
	// stays consistent). It saves one fsync per group commit.
	SyncNormal
)

// String returns the PRAGMA synchronous value of y.
func (y Sync) String() string {
	switch y {
	case SyncFull:
		return "FULL"
	case SyncNormal:
		return "NORMAL"
	}
	return fmt.Sprintf("Sync(%d)", int(y))
}

// Options configures Open. The zero value is the durable default.
type Options struct {
	// Sync says how durable a write is before it is acknowledged.
	Sync Sync
	// BusyTimeout is how long an operation waits for a lock that another
	// process holds on the file (default 5 s).
	BusyTimeout time.Duration
	// Observer, when not nil, is told the duration and the number of
	// operations of every batch the writer commits.
	Observer store.CommitObserver
	// Reserve is the size in bytes of the spare file kept allocated next
	// to the database (its path plus "-reserve"), which a Delete on a
	// full disk removes to make room for itself (default DefaultReserve;
	// negative: none, and a Delete fails on a full disk like any write).
	Reserve int64
}

// readConns is the number of connections that serve Load, Steps and List.
const readConns = 4

// walLimit is the size in bytes that the write-ahead log's file may not
// exceed for long (see writer.boundWAL).
const walLimit = 64 << 20

// Store is a store.Store in a SQLite file. Open one with Open.
type Store struct {
	path string
	rdb  *sql.DB // read-only pool
	wdb  *sql.DB // the writer's one connection
	w    *writer

	// mu guards closed against sends on queue: submit holds it for
	// reading while it sends, Close for writing while it closes queue.
	mu     sync.RWMutex
	closed atomic.Bool
	queue  chan *op
	done   chan struct{} // closed when the writer has drained queue
	now    func() time.Time
	obs    store.CommitObserver // Options.Observer, or nil

	// files watches the database file and its write-ahead log (files.go).
	files *files

	// readers is held for reading by Load, Steps and List, so that the
	// writer can wait for a moment without readers (see writer.boundWAL).
	readers sync.RWMutex
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.MetaSwapper = (*Store)(nil)
	_ store.Sizer       = (*Store)(nil)
)

// Open opens the store in the SQLite file at path, creating the file and
// its parent directories when they do not exist.
func Open(path string, opts Options) (*Store, error) {
	if opts.Sync != SyncFull && opts.Sync != SyncNormal {
		return nil, fmt.Errorf("store: open %s: unknown %v", path, opts.Sync)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Reserve == 0 {
		opts.Reserve = DefaultReserve
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{path: path, queue: make(chan *op, maxBatch), done: make(chan struct{}), now: time.Now, obs: opts.Observer}
	if err := s.open(opts); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	go s.writeLoop()
	return s, nil
}

// open opens the writer connection, creates or checks the tables, and
// then opens the read pool.
func (s *Store) open(opts Options) error {
	ctx := context.Background()
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", opts.BusyTimeout.Milliseconds())
	var err error
	s.wdb, err = sql.Open("sqlite", dsn(s.path, busy, "_pragma=synchronous("+opts.Sync.String()+")",
		fmt.Sprintf("_pragma=journal_size_limit(%d)", walLimit)))
	if err != nil {
		return err
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetConnMaxIdleTime(0)
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	s.w = &writer{conn: conn, foldRows: foldRows, foldBytes: foldBytes,
		walPath: s.path + "-wal", walLimit: walLimit, readers: &s.readers,
		reservePath: s.path + "-reserve", reserveSize: opts.Reserve}
	// A new file lets Delete give the pages it frees back to the file
	// system (reserve.go); it must be set before the file is written
	// (an older file keeps its setting).
	if _, err := conn.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return err
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("cannot use WAL mode (journal_mode is %s)", mode)
	}
	if err := migrate(ctx, conn, s.path); err != nil {
		return err
	}
	if err := s.w.prepare(ctx); err != nil {
		return err
	}
	// Start with an empty log, so that it stays short whatever happened
	// before.
	var logged bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM log)").Scan(&logged); err != nil {
		return err
	}
	if logged {
		if err := s.w.fold(); err != nil {
			return err
		}
	}
	if s.files, err = watchFiles(s.path); err != nil {
		return err
	}
	var vacuum int
	if err := conn.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&vacuum); err != nil {
		return err
	}
	s.w.incremental = vacuum == 2
	s.w.reserve()
	s.rdb, err = sql.Open("sqlite", dsn(s.path, busy, "_query_only=1"))
	if err != nil {
		return err
	}
	s.rdb.SetMaxOpenConns(readConns)
	s.rdb.SetMaxIdleConns(readConns)
	return s.rdb.PingContext(ctx)
}

// dsn returns the driver's data source name for the file at path with
// the given query parameters.
func dsn(path string, params ...string) string {
	// SQLite URIs take the path as is but for these three.
	path = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + path + "?" + strings.Join(params, "&")
}

// Check reports whether the store can take writes: an error when its
// database file or write-ahead log was deleted or replaced while open (a
// store.Checker).
func (s *Store) Check() error { return s.files.check() }

// Close waits for the queued writes to commit and closes the file.
// Later calls of every method return store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return store.ErrClosed
	}
	s.closed.Store(true)
	close(s.queue)
	s.mu.Unlock()
	<-s.done
	return s.closeDBs()
}

// closeDBs closes what open opened.
func (s *Store) closeDBs() error {
	var errs []error
	if s.w != nil {
		errs = append(errs, s.w.close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// readErr returns err, or store.ErrClosed when a read failed because
// Close ran meanwhile.
func (s *Store) readErr(err error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return err
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, id string) (store.Head, error) {
	if s.closed.Load() {
		return store.Head{}, store.ErrClosed
	}
	s.readers.RLock()
	defer s.readers.RUnlock()
	h, err := loadHead(ctx, s.rdb, id)
	if err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, s.readErr(err))
	}
	return h, nil
}

// LoadHead implements store.HeadLoader.
func (s *Store) LoadHead(ctx context.Context, id string) (store.Head, error) {
	if s.closed.Load() {
		return store.Head{}, store.ErrClosed
	}
	s.readers.RLock()
	defer s.readers.RUnlock()
	var h store.Head
	err := s.rdb.QueryRowContext(ctx, `
		SELECT d.schema, d.version, d.oldest, b.version, b.seq, d.meta_seq, s.version
		FROM docs d JOIN snapshots s ON s.doc_id = d.id JOIN meta_bases b ON b.doc_id = d.id
		WHERE d.id = ? ORDER BY s.version DESC LIMIT 1`, id).
		Scan(&h.Schema, &h.Version, &h.Oldest, &h.MetaVersion, &h.MetaBase, &h.MetaSeq, &h.Snapshot.Version)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, s.readErr(err))
	}
	return h, nil
}

// loadHead reads the head of the document id with q (the read pool or a
// transaction), failing with store.ErrNotFound when there is none.
func loadHead(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, id string) (store.Head, error) {
	var h store.Head
	err := q.QueryRowContext(ctx, `
		SELECT d.schema, d.version, d.oldest, b.meta, b.version, b.seq, d.meta_seq, s.version, s.doc
		FROM docs d JOIN snapshots s ON s.doc_id = d.id JOIN meta_bases b ON b.doc_id = d.id
		WHERE d.id = ? ORDER BY s.version DESC LIMIT 1`, id).
		Scan(&h.Schema, &h.Version, &h.Oldest, &h.Meta, &h.MetaVersion, &h.MetaBase, &h.MetaSeq, &h.Snapshot.Version, &h.Snapshot.Doc)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Head{}, store.ErrNotFound
	}
	return h, err
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, id string, from, to int64) ([]store.Step, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	steps, err := s.steps(ctx, id, from, to)
	if err != nil {
		return nil, fmt.Errorf("store: steps of %q after %d: %w", id, from, s.readErr(err))
	}
	return steps, nil
}

func (s *Store) steps(ctx context.Context, id string, from, to int64) ([]store.Step, error) {
	return readLog(ctx, s, id, from, to, "json, client_id, author, time, commit_rec", func(rows *sql.Rows) (int64, store.Step, error) {
		st, err := scanStep(rows)
		return st.Version, st, err
	})
}

// readLog reads a row of each of the document id's versions after from
// up to to (at most its version), of the steps table and then of the log
// (the steps not yet folded), in one read transaction: the columns cols
// after the version, read by scan, which returns the row's version.
func readLog[T any](ctx context.Context, s *Store, id string, from, to int64, cols string, scan func(*sql.Rows) (int64, T, error)) ([]T, error) {
	s.readers.RLock()
	defer s.readers.RUnlock()
	// A transaction, so that the queries see the same state.
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var version, oldest int64
	err = tx.QueryRowContext(ctx, "SELECT version, oldest FROM docs WHERE id = ?", id).Scan(&version, &oldest)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	from, to = max(from, 0), min(to, version)
	if to <= from {
		return nil, nil
	}
	if from < oldest {
		return nil, fmt.Errorf("oldest kept is %d: %w", oldest, store.ErrCompacted)
	}
	out := make([]T, 0, to-from)
	for _, table := range []string{"steps", "log"} {
		next := from + int64(len(out))
		if next == to {
			break
		}
		rows, err := tx.QueryContext(ctx, "SELECT version, "+cols+" FROM "+table+" WHERE doc_id = ? AND version > ? AND version <= ? ORDER BY version", id, next, to)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			v, x, err := scan(rows)
			if err == nil && v != next+1 {
				err = fmt.Errorf("step %d is missing", next+1)
			}
			if err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, x)
			next++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	if int64(len(out)) != to-from {
		return nil, fmt.Errorf("steps %d to %d are missing", from+int64(len(out))+1, to)
	}
	return out, nil
}

// StepSizes implements store.StepSizer, reading like Steps.
func (s *Store) StepSizes(ctx context.Context, id string, from, to int64) ([]int64, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	sizes, err := s.stepSizes(ctx, id, from, to)
	if err != nil {
		return nil, fmt.Errorf("store: step sizes of %q after %d: %w", id, from, s.readErr(err))
	}
	return sizes, nil
}

func (s *Store) stepSizes(ctx context.Context, id string, from, to int64) ([]int64, error) {
	return readLog(ctx, s, id, from, to, "coalesce(length(json), 0) + coalesce(length(client_id), 0) + coalesce(length(CAST(author AS BLOB)), 0) + coalesce(length(commit_rec), 0)",
		func(rows *sql.Rows) (int64, int64, error) {
			var v int64
			var n sql.NullInt64
			err := rows.Scan(&v, &n)
			return v, n.Int64, err
		})
}

// scanStep reads a step from a row of version, json, client_id, author,
// time and commit_rec.
func scanStep(rows *sql.Rows) (store.Step, error) {
	var st store.Step
	var t int64
	var author sql.NullString
	if err := rows.Scan(&st.Version, &st.JSON, &st.ClientID, &author, &t, &st.Commit); err != nil {
		return store.Step{}, err
	}
	st.Author, st.Time = author.String, time.Unix(0, t)
	if len(st.Commit) == 0 {
		st.Commit = nil
	}
	return st, nil
}

// MetaEntries implements store.Store.
func (s *Store) MetaEntries(ctx context.Context, id string, from, to int64) ([]store.MetaEntry, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	entries, err := s.metaEntries(ctx, id, from, to)
	if err != nil {
		return nil, fmt.Errorf("store: metadata entries of %q after %d: %w", id, from, s.readErr(err))
	}
	return entries, nil
}

func (s *Store) metaEntries(ctx context.Context, id string, from, to int64) ([]store.MetaEntry, error) {
	s.readers.RLock()
	defer s.readers.RUnlock()
	// A transaction, so that both queries see the same state.
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var base, seq int64
	err = tx.QueryRowContext(ctx, `SELECT b.seq, d.meta_seq FROM docs d JOIN meta_bases b ON b.doc_id = d.id
		WHERE d.id = ?`, id).Scan(&base, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	from, to = max(from, 0), min(to, seq)
	if to <= from {
		return nil, nil
	}
	if from < base {
		return nil, fmt.Errorf("the base holds those up to %d: %w", base, store.ErrCompacted)
	}
	rows, err := tx.QueryContext(ctx, "SELECT seq, version, json FROM meta_log WHERE doc_id = ? AND seq > ? AND seq <= ? ORDER BY seq", id, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	entries := make([]store.MetaEntry, 0, to-from)
	for rows.Next() {
		var e store.MetaEntry
		if err := rows.Scan(&e.Seq, &e.Version, &e.JSON); err != nil {
			return nil, err
		}
		if e.Seq != from+int64(len(entries))+1 {
			return nil, fmt.Errorf("metadata entry %d is missing", from+int64(len(entries))+1)
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if int64(len(entries)) != to-from {
		return nil, fmt.Errorf("metadata entries %d to %d are missing", from+int64(len(entries))+1, to)
	}
	return entries, nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context) ([]store.DocInfo, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	list, err := s.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", s.readErr(err))
	}
	return list, nil
}

func (s *Store) list(ctx context.Context) ([]store.DocInfo, error) {
	s.readers.RLock()
	defer s.readers.RUnlock()
	rows, err := s.rdb.QueryContext(ctx, "SELECT id, schema, version, updated FROM docs ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.DocInfo{}
	for rows.Next() {
		var d store.DocInfo
		var t int64
		if err := rows.Scan(&d.ID, &d.Schema, &d.Version, &t); err != nil {
			return nil, err
		}
		d.Updated = time.Unix(0, t)
		list = append(list, d)
	}
	return list, rows.Err()
}

// SnapshotAt implements store.Store.
func (s *Store) SnapshotAt(ctx context.Context, id string, version int64) (store.Snapshot, error) {
	if s.closed.Load() {
		return store.Snapshot{}, store.ErrClosed
	}
	snap, err := s.snapshotAt(ctx, id, version)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, s.readErr(err))
	}
	return snap, nil
}

func (s *Store) snapshotAt(ctx context.Context, id string, version int64) (store.Snapshot, error) {
	s.readers.RLock()
	defer s.readers.RUnlock()
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.Snapshot{}, err
	}
	defer tx.Rollback()
	if err := docExists(ctx, tx, id); err != nil {
		return store.Snapshot{}, err
	}
	var snap store.Snapshot
	err = tx.QueryRowContext(ctx, `
		SELECT version, doc FROM snapshots WHERE doc_id = ?1 AND version <= ?2
		UNION ALL
		SELECT version, doc FROM checkpoints WHERE doc_id = ?1 AND version <= ?2 AND doc IS NOT NULL
		ORDER BY 1 DESC LIMIT 1`, id, version).Scan(&snap.Version, &snap.Doc)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Snapshot{}, store.ErrCompacted
	}
	return snap, err
}

// docExists returns nil when the document id exists, else ErrNotFound
// or the query's error.
func docExists(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM docs WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// Checkpoints implements store.Store.
func (s *Store) Checkpoints(ctx context.Context, id string) ([]store.Checkpoint, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	list, err := s.checkpoints(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints of %q: %w", id, s.readErr(err))
	}
	return list, nil
}

func (s *Store) checkpoints(ctx context.Context, id string) ([]store.Checkpoint, error) {
	s.readers.RLock()
	defer s.readers.RUnlock()
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := docExists(ctx, tx, id); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT name, version, author, time FROM checkpoints WHERE doc_id = ? ORDER BY version, name", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.Checkpoint{}
	for rows.Next() {
		var cp store.Checkpoint
		var author sql.NullString
		var t int64
		if err := rows.Scan(&cp.Name, &cp.Version, &author, &t); err != nil {
			return nil, err
		}
		cp.Author, cp.Time = author.String, time.Unix(0, t)
		list = append(list, cp)
	}
	return list, rows.Err()
}

// Size implements store.Sizer.
func (s *Store) Size(ctx context.Context, id string) (int64, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	n, err := s.size(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("store: size of %q: %w", id, s.readErr(err))
	}
	return n, nil
}

// sizeQuery adds up the bytes of the document ?1's rows. A checkpoint
// without a document shares that of the first at its version (see
// checkpointOp).
const sizeQuery = `SELECT
	(SELECT ifnull(sum(ifnull(length(json), 0) + ifnull(length(client_id), 0) + ifnull(length(CAST(author AS BLOB)), 0) +
		ifnull(length(commit_rec), 0)), 0)
		FROM steps WHERE doc_id = ?1) +
	(SELECT ifnull(sum(ifnull(length(json), 0) + ifnull(length(client_id), 0) + ifnull(length(CAST(author AS BLOB)), 0) +
		ifnull(length(commit_rec), 0)), 0)
		FROM log WHERE doc_id = ?1) +
	(SELECT ifnull(sum(ifnull(length(doc), 0)), 0) FROM snapshots WHERE doc_id = ?1) +
	(SELECT ifnull(sum(ifnull(length(doc), 0) + length(CAST(name AS BLOB)) + ifnull(length(CAST(author AS BLOB)), 0)), 0)
		FROM checkpoints WHERE doc_id = ?1) +
	(SELECT ifnull(sum(ifnull(length(meta), 0)), 0) FROM meta_bases WHERE doc_id = ?1) +
	(SELECT ifnull(sum(ifnull(length(json), 0)), 0) FROM meta_log WHERE doc_id = ?1)`

func (s *Store) size(ctx context.Context, id string) (int64, error) {
	s.readers.RLock()
	defer s.readers.RUnlock()
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := docExists(ctx, tx, id); err != nil {
		return 0, err
	}
	var n int64
	err = tx.QueryRowContext(ctx, sizeQuery, id).Scan(&n)
	return n, err
}
