// Package store keeps pmauthority's documents durable: for each document
// its step log (one row per version), periodic snapshots of the document,
// and its metadata (the collab package's comments): a base blob with a log
// of small entries after it, so that a change of the metadata writes only
// what changed and a step writes nothing of it. It is
// a narrow interface with several backends that pass one shared test suite
// (store/storetest): an in-memory one for tests (store/memstore) and SQLite
// as the embedded default (store/sqlite).
//
// The store does not understand documents or steps: it keeps the bytes it
// is given. The version counter is its only invariant: a document's steps
// are numbered 1, 2, 3 … without gaps (from its first version on, see
// below), and Append at a version that is not the document's latest fails
// with ErrConflict, so that the store is the arbiter when several servers
// share one.
//
// Versions never repeat under one id: Delete remembers the last version a
// document reached (a tombstone, kept for as long as the store), and a
// document created again under its id starts after it. So a client that
// still holds a version of a deleted document cannot take the new one's
// steps for the continuation of its own: its version is older than
// anything the new document has (Steps answers ErrCompacted for it).
package store

import (
	"context"
	"errors"
	"iter"
	"time"
)

// Errors that callers branch on.
var (
	// ErrNotFound is returned for a document that does not exist.
	ErrNotFound = errors.New("store: document not found")
	// ErrExists is returned by Create for a document that exists.
	ErrExists = errors.New("store: document already exists")
	// ErrConflict is returned by Append and AppendIf when the base
	// version is not the document's latest version, and by AppendIf when
	// the metadata is no longer the one it was asked to replace.
	ErrConflict = errors.New("store: version conflict")
	// ErrCompacted is returned by Steps and MetaEntries when some of the
	// asked steps or entries were pruned.
	ErrCompacted = errors.New("store: steps compacted")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("store: closed")
)

// Step is one entry of a document's step log.
type Step struct {
	// Version is the version of the document after this step: the first
	// step of a document has version 1.
	Version int64
	// JSON is the step's JSON form.
	JSON []byte
	// ClientID is the JSON form of the submitting client's id (a number
	// or a string, as prosemirror-collab allows).
	ClientID []byte
	// Author is the principal that submitted the step (the id a server's
	// policy authenticated), "" when there was none.
	Author string
	// Time is when the step was accepted.
	Time time.Time
	// Commit is the record of the commit-mode commit that the step
	// begins (opaque to the store, kept byte for byte; nil on every other
	// step, and on steps written before it existed). A store returns nil
	// for an empty Commit.
	Commit []byte
}

// Snapshot is a document's JSON at a version, and optionally its
// metadata there.
type Snapshot struct {
	Version int64
	Doc     []byte
	// Meta, when not nil, is the metadata at Version with the entries up
	// to MetaSeq folded in: SaveSnapshot makes it the metadata base
	// (Head.Meta), unless the base is newer (its MetaBase or MetaVersion
	// is greater). Load returns no Meta here: the base is Head.Meta.
	Meta    []byte
	MetaSeq int64
}

// MetaEntry is one entry of a document's metadata log: a change of the
// metadata, made after the steps of the Append that added it.
type MetaEntry struct {
	// Seq numbers the entries of a document: the first after Create is 1.
	Seq int64
	// Version is the document's version after the Append that added the
	// entry: the entry applies after step Version and before the next.
	Version int64
	// JSON is the entry as given to Append.
	JSON []byte
}

// Head is what Load returns: everything needed to rebuild a document,
// that is its latest snapshot and the steps after it (read with Steps).
type Head struct {
	// Schema is the name of the document's schema, as given to Create.
	Schema string
	// Version is the document's latest version.
	Version int64
	// Meta is the metadata base: the metadata at MetaVersion with the
	// entries up to MetaBase folded in, as given to Create or to the
	// latest SaveSnapshot that replaced it.
	Meta []byte
	// MetaVersion is the version that Meta refers to (Oldest ≤
	// MetaVersion ≤ Version): the steps after it are kept, so that Meta
	// can be brought to Version.
	MetaVersion int64
	// MetaBase is the number of the last entry folded into Meta; the
	// entries after it are kept (MetaEntries).
	MetaBase int64
	// MetaSeq is the number of the latest metadata entry: 0 after Create,
	// one more after every Append or AppendIf with metadata.
	MetaSeq int64
	// Snapshot is the latest snapshot (Version ≤ Head.Version).
	Snapshot Snapshot
	// Oldest is the lowest from for which Steps(from, Version) succeeds:
	// the version before the oldest step still kept (the document's first
	// version, see Create, when nothing was pruned). Oldest ≤
	// Snapshot.Version always.
	Oldest int64
}

// Checkpoint is a named version of a document: its document there is
// kept from pruning (see AddCheckpoint).
type Checkpoint struct {
	// Name identifies the checkpoint among the document's.
	Name    string
	Version int64
	// Author is the principal that recorded it ("" when there was none).
	Author string
	// Time is when it was recorded.
	Time time.Time
	// Doc is the document's JSON at Version (nil in Checkpoints).
	Doc []byte
}

// DocInfo describes a stored document in List.
type DocInfo struct {
	ID      string
	Schema  string
	Version int64
	Updated time.Time
}

// Store is a durable store of documents. All methods are safe for
// concurrent use. A method returns only once its effect is durable
// (committed, and synced as the backend's configuration says).
type Store interface {
	// Create records a new document with the given schema name, initial
	// document and metadata. It fails with ErrExists when id is taken.
	// Its first version is 0 for an id never used, and otherwise one past
	// the last version of every document of that id that Delete deleted:
	// the initial document is its snapshot there, and Head.Version,
	// Oldest and MetaVersion are that version, with no steps before it.
	Create(ctx context.Context, id, schema string, doc []byte, meta []byte) error

	// Load returns a document's head (ErrNotFound when there is none).
	Load(ctx context.Context, id string) (Head, error)

	// Append adds steps to a document whose latest version is base: they
	// get versions base+1 … base+len(steps). A non-nil meta is added to
	// the metadata log after them, as entry Head.MetaSeq+1 at version
	// base+len(steps). It fails with ErrConflict, changing nothing, when
	// the latest version is not base. Appending no steps with meta at the
	// current version only adds the entry. Backends commit concurrent
	// Appends of many documents together.
	Append(ctx context.Context, id string, base int64, steps []Step, meta []byte) error

	// MetaEntries returns the metadata entries with from < Seq ≤ to in
	// order. It fails with ErrCompacted when some of them were folded
	// into the base and dropped (from < Head.MetaBase), and with
	// ErrNotFound for an unknown document. Asking beyond the latest entry
	// returns what exists.
	MetaEntries(ctx context.Context, id string, from, to int64) ([]MetaEntry, error)

	// Steps returns the steps with from < Version ≤ to in order. It fails
	// with ErrCompacted when some of them were pruned, and with ErrNotFound
	// for an unknown document. Asking beyond the latest version returns
	// what exists.
	Steps(ctx context.Context, id string, from, to int64) ([]Step, error)

	// SaveSnapshot records a snapshot; its version must be between the
	// latest snapshot's and the document's latest version, and its
	// MetaSeq at most the latest entry's. With snap.Meta it replaces the
	// metadata base (Head.Meta, MetaVersion = snap.Version, MetaBase =
	// snap.MetaSeq) and drops the entries up to snap.MetaSeq, unless the
	// base is newer (MetaBase > snap.MetaSeq or MetaVersion >
	// snap.Version). The caller guarantees that the entries after
	// snap.MetaSeq have versions ≥ snap.Version (it read the snapshot
	// from one state of the store). Steps at or before the snapshot and
	// the metadata base that are older than keep steps before the latest
	// version (Version ≤ latest−keep) are pruned; keep < 0 prunes
	// nothing. Pruning stops at a snapshot: the new Oldest is the
	// version of the newest kept snapshot at or below that bound, so
	// that every version from Oldest on can be rebuilt from a snapshot
	// and the steps after it (SnapshotAt). The snapshots older than the
	// new Oldest are dropped; the others are kept.
	SaveSnapshot(ctx context.Context, id string, snap Snapshot, keep int64) error

	// SnapshotAt returns the kept snapshot, or checkpoint's document,
	// with the greatest Version ≤ version (its Version and Doc; no
	// Meta). It fails with ErrCompacted when there is none, and with
	// ErrNotFound for an unknown document. When its Version is at least
	// Head.Oldest, the steps after it (Steps) rebuild every later version.
	SnapshotAt(ctx context.Context, id string, version int64) (Snapshot, error)

	// AddCheckpoint records cp under its name, with its document (the
	// document's JSON at cp.Version, 0 ≤ cp.Version ≤ the latest
	// version), which pruning keeps for as long as the document exists.
	// Checkpoints at one version share one stored copy of the document:
	// the first one's (cp.Doc of later ones is not stored, and may be
	// nil).
	// It fails with ErrExists when the document has a checkpoint of that
	// name, and with ErrNotFound for an unknown document. A zero Time is
	// the current time.
	AddCheckpoint(ctx context.Context, id string, cp Checkpoint) error

	// Checkpoints returns the checkpoints of a document ordered by
	// Version, then Name, without their Doc (ErrNotFound for an unknown
	// document).
	Checkpoints(ctx context.Context, id string) ([]Checkpoint, error)

	// List returns every stored document, ordered by id.
	List(ctx context.Context) ([]DocInfo, error)

	// Delete removes a document with its steps, snapshots, checkpoints
	// and metadata (ErrNotFound when there is none). It keeps the last
	// version the document reached, under its id, so that a document
	// created again there starts after it (see Create).
	Delete(ctx context.Context, id string) error

	// Close waits for pending writes and releases the backend.
	Close() error
}

// Sizer is implemented by stores that can tell how many bytes a document
// takes, for a quota on what a document stores (collab.Config.
// MaxDocStorage).
type Sizer interface {
	// Size returns the bytes that the document id holds in the store:
	// its kept steps (JSON, client id, author and commit record), its
	// snapshots' documents, its checkpoints' documents (one copy per
	// version, see AddCheckpoint) and names, and its metadata base and
	// entries. The backend's own overhead (keys, indexes, pages) is not
	// counted. It fails with ErrNotFound for an unknown document.
	Size(ctx context.Context, id string) (int64, error)
}

// HeadLoader is implemented by stores that can read a document's head
// without its documents: what an Authority needs to tell whether it is
// up to date, on every notice of another writer, costs then a few
// numbers, not the snapshot's JSON.
type HeadLoader interface {
	// LoadHead returns what Load does, without Meta and Snapshot.Doc
	// (both nil).
	LoadHead(ctx context.Context, id string) (Head, error)
}

// Notice tells that a document moved on: it is at Version now. It is
// sent after the change is durable, never before.
type Notice struct {
	// ID is the document's id; "" means that notices may have been
	// missed (a listener reconnected): every loaded document must be
	// checked against the store.
	ID string
	// Version is the document's version after the change: its first
	// version after a Create (0 for an id never used), -1 when the
	// document was deleted.
	Version int64
	// MetaOnly is set for an Append of no steps (a metadata entry alone
	// was added, at the same version): a subscriber cannot tell from the
	// version whether it has the latest metadata, and reads the head.
	MetaOnly bool
}

// MetaSwapper is implemented by stores that several writers share: the
// version arbitrates their steps, and MetaSeq their metadata entries, so
// that a writer cannot add an entry (or steps) made on metadata that
// lacks another writer's entry. A store that only one writer uses
// (SQLite embedded in one process) need not implement it.
//
// A SQL backend keeps the sequence number in the document's row and
// implements AppendIf with one conditional UPDATE in the transaction
// that inserts the steps and the entry:
//
//	UPDATE docs SET version = $base + $n, meta_seq = meta_seq + $m
//	WHERE id = $id AND version = $base AND meta_seq = $seq
//
// where no row updated (and the document exists) is ErrConflict and rolls
// the transaction back.
type MetaSwapper interface {
	// AppendIf is Append when the document's latest version is base and
	// its Head.MetaSeq is metaSeq, and fails with ErrConflict, changing
	// nothing, otherwise. An entry (meta not nil) makes MetaSeq
	// metaSeq+1; a nil meta keeps MetaSeq.
	AppendIf(ctx context.Context, id string, base int64, steps []Step, metaSeq int64, meta []byte) error
}

// Notifier is implemented by stores that several writers share (several
// Authorities over one store in a process, several nodes over one
// database): it tells every subscriber about every committed change, made
// by any writer, its own included. Such a store must also be a
// MetaSwapper, or the writers' metadata replacements can overwrite each
// other.
type Notifier interface {
	// Subscribe calls fn with a Notice after every committed Create,
	// Append and Delete, until cancel is called (a call already running
	// may end after cancel returns). fn must not block: it may run on the
	// committing goroutine. Notices of one document arrive in commit
	// order; a backend that may have missed some sends Notice{ID: ""}.
	Subscribe(fn func(Notice)) (cancel func())
}

// Checker is implemented by stores that can tell whether they can take
// writes now (the SQLite store: its files are still the ones it opened).
// Check returns nil when they can, and why not otherwise.
type Checker interface {
	Check() error
}

// Scanner is implemented by stores that can show a document as it is
// stored, for a check of its integrity (collab.Verify, pmauthority
// verify): the rows as they are, in one consistent state of the store,
// without the checks that Load and Steps make on them.
//
// A store keeps every snapshot from Oldest on (see SaveSnapshot): the
// kept steps replay from the oldest of them through the later ones to the
// latest, and a check compares each with the replay. Checkpoints'
// documents are not among them.
type Scanner interface {
	// Scan calls fn with document id's Head, its kept snapshots older
	// than Head.Snapshot (oldest first), and an iterator over its stored
	// steps, all read from one state of the store (a transaction), and
	// returns fn's error; it fails with ErrNotFound when there is no such
	// document. steps yields the step rows with Version > Oldest in
	// version order, without checking that the versions follow on or end
	// at Head.Version, and stops after yielding a read error. steps must
	// not be used after fn returns.
	Scan(ctx context.Context, id string, fn func(head Head, older []Snapshot, steps iter.Seq2[Step, error]) error) error
}

// StepSizer is implemented by stores that can tell the sizes of steps
// without reading them, so that a reader of a long step log reads it in
// parts of bounded size, each of which it can reserve memory for before
// reading it (collab's reads of the step log).
type StepSizer interface {
	// StepSizes returns the sizes in bytes of the steps with from <
	// Version ≤ to, in order: of each, its JSON, client id, author and
	// commit record together. It fails as Steps does (ErrCompacted, ErrNotFound), and
	// returns what exists when asked beyond the latest version.
	StepSizes(ctx context.Context, id string, from, to int64) ([]int64, error)
}

// MaxBroadcast is the longest message, its topic included, that every
// Broadcaster takes.
const MaxBroadcast = 7000

// Broadcaster is implemented by stores that several nodes share (several
// server processes over one database): it carries small passing messages
// between the nodes, such as the presence of a document's editors and its
// user counts, which the store does not keep. A message reaches the
// subscribers of its topic on every other node, in the order its node
// sent it, at most once: a node that is away (its connection lost, its
// process restarting) misses it. So a user of a Broadcaster sends what it
// knows again now and then, and lets what it heard from a node expire when
// that node stops repeating it: that is also how a node that died stops
// counting. A store that one process uses alone need not implement it.
type Broadcaster interface {
	// Node returns the id of this node, as other nodes' subscribers are
	// given it: unique among the nodes, new every time the store is
	// opened.
	Node() string

	// Broadcast sends msg on topic to the subscribers of topic on the
	// other nodes. topic is a short name of letters, digits, '-' and '_';
	// msg is text (valid UTF-8 without NUL) and len(topic)+len(msg) at
	// most MaxBroadcast. It returns once msg is queued, before it is
	// sent: the backend sends the messages queued together, and fails
	// when its queue is full.
	Broadcast(topic string, msg []byte) error

	// SubscribeBroadcasts calls fn with every message on topic of
	// another node (never this node's own), with the sending node's id,
	// until cancel is called (a call already running may end after
	// cancel returns). fn must not block; msg is its own.
	SubscribeBroadcasts(topic string, fn func(node string, msg []byte)) (cancel func())
}

// CommitObserver is told about every commit of a store that commits
// several writers' operations together (group commit: the SQLite store's
// writer, the PostgreSQL store's batches of appends): how long the commit
// took and how many operations it held. It is called on the committing
// goroutine, so it must be quick and must not block; metrics are its use
// (package metrics implements it with Prometheus).
type CommitObserver interface {
	ObserveCommit(d time.Duration, batch int)
}
