// Package postgres is a store.Store on PostgreSQL, for several servers
// sharing one database (a cluster): any node serves any document, and
// the database arbitrates. It is a store.MetaSwapper, a store.Notifier,
// a store.Broadcaster (broadcast.go) and a store.Checker.
//
// The version is the arbiter: an Append is one statement that moves the
// document's row from base to base+n only while it is at base (and, for
// AppendIf, its metadata sequence number is the expected one), and
// inserts the steps under the unique key (doc_id, version). Of two nodes
// appending at one version exactly one commits; the other gets
// store.ErrConflict and nothing of its append is kept. A method returns
// once its transaction has committed. Concurrent Appends are committed
// together, in one transaction (see commit.go), while two such
// transactions are in flight.
//
// Every committed Create, Append and Delete sends a NOTIFY on the channel
// "pmauthority" with the document's id and version (never its steps),
// delivered by PostgreSQL after the commit. A Store listens on one
// connection of its own, from its first Subscribe until Close; when that
// connection is lost it reconnects with back-off and then sends its
// subscribers store.Notice{ID: ""}, since notices may have been missed
// meanwhile.
//
// Open applies the schema's migrations (tables pma_docs, pma_steps,
// pma_meta_entries, pma_snapshots, pma_checkpoints, pma_tombstones and
// pma_migrations) in one transaction under an advisory lock, so that
// several processes may start at once.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmauthority/pmauthority/store"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// MaxConns is the most connections to the database that the Store's
	// pool opens (the listener's is one more); 0 is pgxpool's default,
	// the larger of 4 and the number of CPUs.
	MaxConns int32
	// StatementTimeout, when positive, is the database's
	// statement_timeout for the Store's connections: a statement running
	// longer is cancelled and its method fails. A method also gives up by
	// itself once it has taken StatementTimeout plus the connect timeout
	// (for a database that cannot tell it: a network gone silent), failing
	// as when the database is unreachable; whether an Append given up so
	// committed is then unknown, as when its connection fails.
	StatementTimeout time.Duration
	// Logger, when not nil, is told when the listener loses its
	// connection and reconnects.
	Logger *slog.Logger
	// Observer, when not nil, is told the duration and the number of
	// Appends of every batch of Appends committed together.
	Observer store.CommitObserver
}

// connectTimeout bounds a connection attempt when the URL sets no
// connect_timeout.
const connectTimeout = 10 * time.Second

// Store is a store.Store on a PostgreSQL database. Open it with Open.
type Store struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	where  string // the database, for Where

	// mu is held shared by every method while it uses the pool, and
	// exclusively by Close, so that Close waits for them.
	mu     sync.RWMutex
	closed bool

	opTimeout time.Duration // what a method takes at most (bound), 0 for no limit

	notes   notifier
	casts   caster
	commits committer
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.MetaSwapper = (*Store)(nil)
	_ store.Notifier    = (*Store)(nil)
	_ store.Checker     = (*Store)(nil)
	_ store.Broadcaster = (*Store)(nil)
	_ store.Sizer       = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a
// key=value connection string, as libpq takes), checks that it can be
// reached and brings its schema up to date. Its errors never contain the
// password. The connections' application_name is pmauthority unless the
// URL sets one, and a connection attempt gives up after 10 seconds unless
// the URL sets connect_timeout.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn's parse errors show the URL with its password masked.
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("postgres: pool size %d: must not be negative", opts.MaxConns)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.StatementTimeout < 0 {
		return nil, fmt.Errorf("postgres: statement timeout %v: must not be negative", opts.StatementTimeout)
	}
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(opts.StatementTimeout.Milliseconds(), 1), 10)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "pmauthority"
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A database that does not answer (a network dropping packets)
		// fails a connection attempt instead of holding it for minutes.
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	where := fmt.Sprintf("database %q on %s port %d as %q", cfg.ConnConfig.Database, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.User)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: cannot reach %s: %w", where, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: migrating the schema of %s: %w", where, err)
	}
	s := &Store{pool: pool, logger: opts.Logger, where: where}
	if opts.StatementTimeout > 0 {
		s.opTimeout = opts.StatementTimeout + cfg.ConnConfig.ConnectTimeout
	}
	s.notes.store = s
	s.notes.connCfg = cfg.ConnConfig.Copy()
	s.notes.ping = pingEvery
	s.casts.store, s.casts.node = s, newNodeID()
	s.commits = committer{pool: pool, max: max(1, min(maxInFlight, int(cfg.MaxConns)/2)), timeout: s.opTimeout, obs: opts.Observer, sql: appendSQL}
	return s, nil
}

// Where describes the database: its name, host and user, never the
// password.
func (s *Store) Where() string { return s.where }

// begin returns the error a method answers before using the database
// (ErrClosed, then the context's error), holding s.mu shared when it is
// nil: the caller then calls s.mu.RUnlock.
func (s *Store) begin(ctx context.Context) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		s.mu.RUnlock()
		return err
	}
	return nil
}

// errOpTimeout is the cause of a context of bound's that ran out.
var errOpTimeout = errors.New("postgres: the database did not answer in time")

// bound returns ctx limited to s.opTimeout, if any, with the cause
// errOpTimeout.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.opTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, s.opTimeout, errOpTimeout)
}

// dbErr is err as a method returns it: the context's error when the
// caller's context ended (pgx may report it otherwise), ErrConflict for a
// unique violation (the key (doc_id, version) arbitrating). A timeout of
// the Store's own (bound's, or pgx's connect_timeout) while the caller's
// context goes on is a *timeoutError, which matches no context error:
// the store failed (the database unreachable), the caller did not give
// up.
func dbErr(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr != nil && context.Cause(ctx) == errOpTimeout {
		return &timeoutError{msg: err.Error()}
	}
	if cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	if cerr == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return &timeoutError{msg: err.Error()}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w (%v)", store.ErrConflict, err)
	}
	return err
}

// timeoutError is a timeout of the database's (see dbErr).
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg + " (the database did not answer in time)" }

// Timeout reports true, as a net.Error's.
func (e *timeoutError) Timeout() bool { return true }

// nanos returns t as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

// record returns a step's commit record as read, nil for an empty one.
func record(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Create implements store.Store, in one transaction that inserts the
// document's row first and only then reads its id's tombstone (the last
// version of a deleted document of that id, pma_tombstones): an insert
// that meets the row of a Delete in flight waits for it, so that the
// tombstone read afterwards is that Delete's.
func (s *Store) Create(ctx context.Context, id, schema string, doc, meta []byte) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	bid := []byte(id)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			INSERT INTO pma_docs (id, schema_name, version, meta, snap_doc, updated)
			VALUES ($1, $2, 0, $3, $4, $5)
			ON CONFLICT (id) DO NOTHING`,
			bid, []byte(schema), meta, doc, nanos(time.Now()))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrExists
		}
		var first int64
		err = tx.QueryRow(ctx, `
			UPDATE pma_docs d SET version = t.version + 1, oldest = t.version + 1,
				meta_version = t.version + 1, snap_version = t.version + 1
			FROM pma_tombstones t WHERE d.id = $1 AND t.id = $1
			RETURNING d.version`, bid).Scan(&first)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload(id, first, false))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create %q: %w", id, dbErr(ctx, err))
	}
	return nil
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, id string) (store.Head, error) {
	if err := s.begin(ctx); err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var h store.Head
	var schema []byte
	err := s.pool.QueryRow(ctx, `
		SELECT schema_name, version, meta, meta_version, meta_base, meta_seq, snap_version, snap_doc, oldest
		FROM pma_docs WHERE id = $1`, []byte(id)).
		Scan(&schema, &h.Version, &h.Meta, &h.MetaVersion, &h.MetaBase, &h.MetaSeq, &h.Snapshot.Version, &h.Snapshot.Doc, &h.Oldest)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, dbErr(ctx, err))
	}
	h.Schema = string(schema)
	return h, nil
}

// LoadHead implements store.HeadLoader.
func (s *Store) LoadHead(ctx context.Context, id string) (store.Head, error) {
	if err := s.begin(ctx); err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var h store.Head
	var schema []byte
	err := s.pool.QueryRow(ctx, `
		SELECT schema_name, version, meta_version, meta_base, meta_seq, snap_version, oldest
		FROM pma_docs WHERE id = $1`, []byte(id)).
		Scan(&schema, &h.Version, &h.MetaVersion, &h.MetaBase, &h.MetaSeq, &h.Snapshot.Version, &h.Oldest)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, dbErr(ctx, err))
	}
	h.Schema = string(schema)
	return h, nil
}

// Append implements store.Store. Steps with a zero Time get the current
// time.
func (s *Store) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	return s.append(ctx, id, base, steps, -1, meta)
}

// AppendIf implements store.MetaSwapper. Steps with a zero Time get the
// current time.
func (s *Store) AppendIf(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) error {
	if metaSeq < 0 {
		return fmt.Errorf("store: append %q at %d: negative metadata sequence number %d", id, base, metaSeq)
	}
	return s.append(ctx, id, base, steps, metaSeq, meta)
}

// appendSQL is Append in one statement: the conditional update of the
// document's row, the steps and the metadata entry inserted only when
// it updated a row, and the notice. It returns whether it updated the
// row, and the version and metadata sequence number it saw (for the
// error of a conflict; NULL when there is no document).
const appendSQL = `
	WITH upd AS (
		UPDATE pma_docs SET version = $2::bigint + $3::bigint, meta_seq = meta_seq + $4::bigint, updated = $5
		WHERE id = $1 AND version = $2::bigint AND ($6::bigint < 0 OR meta_seq = $6::bigint)
		RETURNING meta_seq),
	ins AS (
		INSERT INTO pma_steps (doc_id, version, json, client_id, author, time, commit_rec)
		SELECT $1, $2::bigint + s.i, s.json, s.client_id, s.author, s.time, s.commit_rec
		FROM upd, unnest($7::bytea[], $8::bytea[], $9::bytea[], $10::bigint[], $14::bytea[])
			WITH ORDINALITY AS s(json, client_id, author, time, commit_rec, i)),
	ent AS (
		INSERT INTO pma_meta_entries (doc_id, seq, version, json)
		SELECT $1, upd.meta_seq, $2::bigint + $3::bigint, $11 FROM upd WHERE $4::bigint = 1)
	SELECT
		(SELECT count(*) FROM upd),
		(SELECT count(*) FROM (SELECT pg_notify($12, $13) FROM upd) AS n),
		(SELECT version FROM pma_docs WHERE id = $1),
		(SELECT meta_seq FROM pma_docs WHERE id = $1)`

// append is Append, and AppendIf when metaSeq is not negative.
func (s *Store) append(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("store: append %q at %d: %w", id, base, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	r := newAppendReq(ctx, id, base, steps, metaSeq, meta)
	return r.result(s.commits.do(r))
}

// newAppendReq returns the request of an Append.
func newAppendReq(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) *appendReq {
	now := time.Now()
	jsons := make([][]byte, len(steps))
	clients := make([][]byte, len(steps))
	authors := make([][]byte, len(steps))
	times := make([]int64, len(steps))
	commits := make([][]byte, len(steps)) // nil (NULL) for none
	r := &appendReq{ctx: ctx, id: id, base: base, metaSeq: metaSeq, bytes: len(id) + len(meta)}
	for i, st := range steps {
		jsons[i] = st.JSON
		if jsons[i] == nil {
			jsons[i] = []byte{}
		}
		clients[i] = st.ClientID
		authors[i] = []byte(st.Author)
		if len(st.Commit) > 0 {
			commits[i] = st.Commit
		}
		t := st.Time
		if t.IsZero() {
			t = now
		}
		times[i] = nanos(t)
		r.bytes += len(jsons[i]) + len(clients[i]) + len(authors[i]) + len(commits[i]) + 8
	}
	var m int64
	if meta != nil {
		m = 1
	}
	n := int64(len(steps))
	r.args = []any{[]byte(id), base, n, m, nanos(now), metaSeq,
		jsons, clients, authors, times, meta,
		channel, payload(id, base+n, n == 0), commits}
	return r
}

// result returns the error of the Append r, which ended with err.
func (r *appendReq) result(err error) error {
	id, base := r.id, r.base
	switch {
	case err != nil:
		return fmt.Errorf("store: append %q at %d: %w", id, base, dbErr(r.ctx, err))
	case r.updated == 1:
		return nil
	case r.version == nil:
		return fmt.Errorf("store: append %q at %d: %w", id, base, store.ErrNotFound)
	case r.metaSeq >= 0 && *r.version == base:
		return fmt.Errorf("store: append %q at %d with metadata %d (latest %d): %w", id, base, r.metaSeq, *r.seq, store.ErrConflict)
	default:
		return fmt.Errorf("store: append %q at %d (latest %d): %w", id, base, *r.version, store.ErrConflict)
	}
}

// Steps implements store.Store. One statement reads the document's
// range and its steps, so that they agree.
func (s *Store) Steps(ctx context.Context, id string, from, to int64) ([]store.Step, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("store: steps of %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	from = max(from, 0)
	rows, err := s.pool.Query(ctx, `
		SELECT d.version, d.oldest, s.version, s.json, s.client_id, s.author, s.time, s.commit_rec
		FROM pma_docs AS d
		LEFT JOIN pma_steps AS s ON s.doc_id = d.id AND s.version > $2 AND s.version <= $3 AND $2 >= d.oldest
		WHERE d.id = $1
		ORDER BY s.version`, []byte(id), from, to)
	if err != nil {
		return nil, fmt.Errorf("store: steps of %q: %w", id, dbErr(ctx, err))
	}
	defer rows.Close()
	var (
		out             []store.Step
		found           bool
		latest, oldest  int64
		version, tnanos *int64
		json, client    []byte
		author, commit  []byte
	)
	for rows.Next() {
		if err := rows.Scan(&latest, &oldest, &version, &json, &client, &author, &tnanos, &commit); err != nil {
			return nil, fmt.Errorf("store: steps of %q: %w", id, dbErr(ctx, err))
		}
		found = true
		if version != nil {
			out = append(out, store.Step{Version: *version, JSON: json, ClientID: client, Author: string(author), Time: time.Unix(0, *tnanos), Commit: record(commit)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: steps of %q: %w", id, dbErr(ctx, err))
	}
	if !found {
		return nil, fmt.Errorf("store: steps of %q: %w", id, store.ErrNotFound)
	}
	if min(to, latest) <= from {
		return nil, nil
	}
	if from < oldest {
		return nil, fmt.Errorf("store: steps of %q after %d (oldest %d): %w", id, from, oldest, store.ErrCompacted)
	}
	return out, nil
}

// StepSizes implements store.StepSizer, reading like Steps.
func (s *Store) StepSizes(ctx context.Context, id string, from, to int64) ([]int64, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("store: step sizes of %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	from = max(from, 0)
	rows, err := s.pool.Query(ctx, `
		SELECT d.version, d.oldest, s.version,
			coalesce(octet_length(s.json), 0) + coalesce(octet_length(s.client_id), 0) + coalesce(octet_length(s.author), 0) +
			coalesce(octet_length(s.commit_rec), 0)
		FROM pma_docs AS d
		LEFT JOIN pma_steps AS s ON s.doc_id = d.id AND s.version > $2 AND s.version <= $3 AND $2 >= d.oldest
		WHERE d.id = $1
		ORDER BY s.version`, []byte(id), from, to)
	if err != nil {
		return nil, fmt.Errorf("store: step sizes of %q: %w", id, dbErr(ctx, err))
	}
	defer rows.Close()
	var (
		out            []int64
		found          bool
		latest, oldest int64
		version, size  *int64
	)
	for rows.Next() {
		if err := rows.Scan(&latest, &oldest, &version, &size); err != nil {
			return nil, fmt.Errorf("store: step sizes of %q: %w", id, dbErr(ctx, err))
		}
		found = true
		if version != nil {
			if *version != from+int64(len(out))+1 {
				return nil, fmt.Errorf("store: step sizes of %q: step %d is missing", id, from+int64(len(out))+1)
			}
			out = append(out, *size)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: step sizes of %q: %w", id, dbErr(ctx, err))
	}
	if !found {
		return nil, fmt.Errorf("store: step sizes of %q: %w", id, store.ErrNotFound)
	}
	if min(to, latest) <= from {
		return nil, nil
	}
	if from < oldest {
		return nil, fmt.Errorf("store: step sizes of %q after %d (oldest %d): %w", id, from, oldest, store.ErrCompacted)
	}
	return out, nil
}

// MetaEntries implements store.Store, reading like Steps.
func (s *Store) MetaEntries(ctx context.Context, id string, from, to int64) ([]store.MetaEntry, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("store: metadata entries of %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	from = max(from, 0)
	rows, err := s.pool.Query(ctx, `
		SELECT d.meta_seq, d.meta_base, e.seq, e.version, e.json
		FROM pma_docs AS d
		LEFT JOIN pma_meta_entries AS e ON e.doc_id = d.id AND e.seq > $2 AND e.seq <= $3 AND $2 >= d.meta_base
		WHERE d.id = $1
		ORDER BY e.seq`, []byte(id), from, to)
	if err != nil {
		return nil, fmt.Errorf("store: metadata entries of %q: %w", id, dbErr(ctx, err))
	}
	defer rows.Close()
	var (
		out          []store.MetaEntry
		found        bool
		latest, base int64
		seq, version *int64
		json         []byte
	)
	for rows.Next() {
		if err := rows.Scan(&latest, &base, &seq, &version, &json); err != nil {
			return nil, fmt.Errorf("store: metadata entries of %q: %w", id, dbErr(ctx, err))
		}
		found = true
		if seq != nil {
			out = append(out, store.MetaEntry{Seq: *seq, Version: *version, JSON: json})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: metadata entries of %q: %w", id, dbErr(ctx, err))
	}
	if !found {
		return nil, fmt.Errorf("store: metadata entries of %q: %w", id, store.ErrNotFound)
	}
	if min(to, latest) <= from {
		return nil, nil
	}
	if from < base {
		return nil, fmt.Errorf("store: metadata entries of %q after %d (base %d): %w", id, from, base, store.ErrCompacted)
	}
	return out, nil
}

// errBadSnapshot marks a SaveSnapshot refused for its arguments.
var errBadSnapshot = errors.New("bad snapshot")

// SaveSnapshot implements store.Store, in one transaction that locks the
// document's row first, so that the statements after it see the
// document as it is then.
func (s *Store) SaveSnapshot(ctx context.Context, id string, snap store.Snapshot, keep int64) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("store: snapshot of %q at %d: %w", id, snap.Version, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	bid := []byte(id)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var version, snapVersion, metaVersion, metaBase, metaSeq, oldest int64
		err := tx.QueryRow(ctx, `
			SELECT version, snap_version, meta_version, meta_base, meta_seq, oldest
			FROM pma_docs WHERE id = $1 FOR UPDATE`, bid).
			Scan(&version, &snapVersion, &metaVersion, &metaBase, &metaSeq, &oldest)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if snap.Version < snapVersion || snap.Version > version {
			return fmt.Errorf("%w: outside [%d, %d]", errBadSnapshot, snapVersion, version)
		}
		if snap.Meta != nil && (snap.MetaSeq < 0 || snap.MetaSeq > metaSeq) {
			return fmt.Errorf("%w: metadata entry %d outside [0, %d]", errBadSnapshot, snap.MetaSeq, metaSeq)
		}
		// The row's snapshot, when older, joins the older ones.
		if _, err := tx.Exec(ctx, `INSERT INTO pma_snapshots (doc_id, version, doc)
			SELECT id, snap_version, snap_doc FROM pma_docs WHERE id = $1 AND snap_version < $2
			ON CONFLICT (doc_id, version) DO NOTHING`, bid, snap.Version); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE pma_docs SET snap_version = $2, snap_doc = $3 WHERE id = $1", bid, snap.Version, snap.Doc); err != nil {
			return err
		}
		if snap.Meta != nil && snap.MetaSeq >= metaBase && snap.Version >= metaVersion {
			if _, err := tx.Exec(ctx, "UPDATE pma_docs SET meta = $2, meta_version = $3, meta_base = $4 WHERE id = $1",
				bid, snap.Meta, snap.Version, snap.MetaSeq); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM pma_meta_entries WHERE doc_id = $1 AND seq <= $2", bid, snap.MetaSeq); err != nil {
				return err
			}
			metaVersion = snap.Version
		}
		if keep >= 0 {
			// Pruning stops at the newest snapshot at or below the bound.
			bound := min(snap.Version, version-keep, metaVersion)
			cut := int64(-1)
			if snap.Version <= bound {
				cut = snap.Version
			} else if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), -1) FROM pma_snapshots WHERE doc_id = $1 AND version <= $2",
				bid, bound).Scan(&cut); err != nil {
				return err
			}
			if cut > oldest {
				if _, err := tx.Exec(ctx, "UPDATE pma_docs SET oldest = $2 WHERE id = $1", bid, cut); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "DELETE FROM pma_steps WHERE doc_id = $1 AND version <= $2", bid, cut); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "DELETE FROM pma_snapshots WHERE doc_id = $1 AND version < $2", bid, cut); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: snapshot of %q at %d: %w", id, snap.Version, dbErr(ctx, err))
	}
	return nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context) ([]store.DocInfo, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, "SELECT id, schema_name, version, updated FROM pma_docs ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", dbErr(ctx, err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.DocInfo, error) {
		var id, schema []byte
		var info store.DocInfo
		var updated int64
		err := row.Scan(&id, &schema, &info.Version, &updated)
		info.ID, info.Schema, info.Updated = string(id), string(schema), time.Unix(0, updated)
		return info, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", dbErr(ctx, err))
	}
	return out, nil
}

// Delete implements store.Store, in one transaction that locks the
// document's row first (waiting for an Append in flight), so that the
// steps and entries it deletes are all of them and the version it keeps
// as the id's tombstone (pma_tombstones) is the last.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("store: delete %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	bid := []byte(id)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var version int64
		err := tx.QueryRow(ctx, "SELECT version FROM pma_docs WHERE id = $1 FOR UPDATE", bid).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO pma_tombstones (id, version) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET version = greatest(pma_tombstones.version, excluded.version)`, bid, version)
		if err != nil {
			return err
		}
		for _, q := range []string{
			"DELETE FROM pma_steps WHERE doc_id = $1",
			"DELETE FROM pma_meta_entries WHERE doc_id = $1",
			"DELETE FROM pma_snapshots WHERE doc_id = $1",
			"DELETE FROM pma_checkpoints WHERE doc_id = $1",
			"DELETE FROM pma_docs WHERE id = $1",
		} {
			if _, err := tx.Exec(ctx, q, bid); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload(id, -1, false))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete %q: %w", id, dbErr(ctx, err))
	}
	return nil
}

// SnapshotAt implements store.Store: the row's snapshot, the older
// ones and the checkpoints' documents are its candidates.
func (s *Store) SnapshotAt(ctx context.Context, id string, version int64) (store.Snapshot, error) {
	if err := s.begin(ctx); err != nil {
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, err)
	}
	defer s.mu.RUnlock()
	var exists bool
	snap := store.Snapshot{Version: -1}
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM pma_docs WHERE id = $1),
			coalesce(c.version, -1), c.doc
		FROM (SELECT 1) AS one LEFT JOIN (
			SELECT snap_version AS version, snap_doc AS doc FROM pma_docs WHERE id = $1 AND snap_version <= $2
			UNION ALL
			SELECT version, doc FROM pma_snapshots WHERE doc_id = $1 AND version <= $2
			UNION ALL
			SELECT version, doc FROM pma_checkpoints WHERE doc_id = $1 AND version <= $2 AND doc IS NOT NULL
			ORDER BY version DESC LIMIT 1) AS c ON true`, []byte(id), version).Scan(&exists, &snap.Version, &snap.Doc)
	switch {
	case err != nil:
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, dbErr(ctx, err))
	case !exists:
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, store.ErrNotFound)
	case snap.Version < 0:
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, store.ErrCompacted)
	}
	return snap, nil
}

// errBadCheckpoint marks an AddCheckpoint refused for its arguments.
var errBadCheckpoint = errors.New("bad checkpoint")

// AddCheckpoint implements store.Store, in one transaction that locks the
// document's row first.
func (s *Store) AddCheckpoint(ctx context.Context, id string, cp store.Checkpoint) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("store: checkpoint %q of %q: %w", cp.Name, id, err)
	}
	defer s.mu.RUnlock()
	bid := []byte(id)
	t := cp.Time
	if t.IsZero() {
		t = time.Now()
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var version int64
		err := tx.QueryRow(ctx, "SELECT version FROM pma_docs WHERE id = $1 FOR UPDATE", bid).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if cp.Version < 0 || cp.Version > version {
			return fmt.Errorf("%w: version %d outside [0, %d]", errBadCheckpoint, cp.Version, version)
		}
		// The first checkpoint at a version keeps the document for all
		// (SnapshotAt reads it); the others have none (NULL).
		tag, err := tx.Exec(ctx, `INSERT INTO pma_checkpoints (doc_id, name, version, doc, author, time)
			VALUES ($1, $2, $3, CASE WHEN EXISTS (SELECT 1 FROM pma_checkpoints
				WHERE doc_id = $1 AND version = $3 AND doc IS NOT NULL) THEN NULL ELSE $4::bytea END, $5, $6)
			ON CONFLICT (doc_id, name) DO NOTHING`,
			bid, []byte(cp.Name), cp.Version, cp.Doc, []byte(cp.Author), nanos(t))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrExists
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: checkpoint %q of %q: %w", cp.Name, id, dbErr(ctx, err))
	}
	return nil
}

// Size implements store.Sizer, in one query.
func (s *Store) Size(ctx context.Context, id string) (int64, error) {
	if err := s.begin(ctx); err != nil {
		return 0, fmt.Errorf("store: size of %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	var n *int64
	err := s.pool.QueryRow(ctx, `
		SELECT CASE WHEN d.id IS NOT NULL THEN (coalesce(octet_length(d.meta), 0) + coalesce(octet_length(d.snap_doc), 0) +
			(SELECT coalesce(sum(octet_length(json) + coalesce(octet_length(client_id), 0) + octet_length(author) +
				coalesce(octet_length(commit_rec), 0)), 0)
				FROM pma_steps WHERE doc_id = $1) +
			(SELECT coalesce(sum(octet_length(json)), 0) FROM pma_meta_entries WHERE doc_id = $1) +
			(SELECT coalesce(sum(coalesce(octet_length(doc), 0)), 0) FROM pma_snapshots WHERE doc_id = $1) +
			(SELECT coalesce(sum(coalesce(octet_length(doc), 0) + octet_length(name) + octet_length(author)), 0)
				FROM pma_checkpoints WHERE doc_id = $1))::bigint END
		FROM (SELECT 1) AS one LEFT JOIN pma_docs AS d ON d.id = $1`, []byte(id)).Scan(&n)
	switch {
	case err != nil:
		return 0, fmt.Errorf("store: size of %q: %w", id, dbErr(ctx, err))
	case n == nil:
		return 0, fmt.Errorf("store: size of %q: %w", id, store.ErrNotFound)
	}
	return *n, nil
}

// Checkpoints implements store.Store, in one read-only transaction.
func (s *Store) Checkpoints(ctx context.Context, id string) ([]store.Checkpoint, error) {
	if err := s.begin(ctx); err != nil {
		return nil, fmt.Errorf("store: checkpoints of %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	bid := []byte(id)
	var out []store.Checkpoint
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, "SELECT 1 FROM pma_docs WHERE id = $1", bid).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT name, version, author, time FROM pma_checkpoints WHERE doc_id = $1 ORDER BY version, name", bid)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Checkpoint, error) {
			var name, author []byte
			var cp store.Checkpoint
			var t int64
			err := row.Scan(&name, &cp.Version, &author, &t)
			cp.Name, cp.Author, cp.Time = string(name), string(author), time.Unix(0, t)
			return cp, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints of %q: %w", id, dbErr(ctx, err))
	}
	return out, nil
}

// Check implements store.Checker: the database answers within five
// seconds and takes writes (it is not a standby, nor read-only).
func (s *Store) Check() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	var recovery bool
	var readOnly string
	err := s.pool.QueryRow(ctx, "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')").Scan(&recovery, &readOnly)
	switch {
	case err != nil:
		return fmt.Errorf("postgres: check: %w", dbErr(ctx, err))
	case recovery:
		return errors.New("postgres: the database is a standby (in recovery): it takes no writes")
	case readOnly == "on":
		return errors.New("postgres: the database's transactions are read-only")
	}
	return nil
}

// Close implements store.Store: it waits for the methods in flight, stops
// the listener and closes the connections. A second Close returns
// store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.casts.stop()
	s.notes.stop()
	s.pool.Close()
	return nil
}
