package collab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmauthority/pmauthority/internal/defaults"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
)

// Config configures an Authority. Store and Schemas are required; zero
// values of the other fields take the defaults.
type Config struct {
	// Store keeps the documents durable. The Authority does not close it.
	Store store.Store
	// Schemas returns the schema of a name: the name given to Create, or
	// DefaultSchema, and recorded in the store with the document.
	Schemas func(name string) (*model.Schema, bool)
	// DefaultSchema is the schema of auto-created documents ("" means
	// "basic").
	DefaultSchema string
	// AutoCreate makes a request for an unknown document create it, as
	// the collab demo does. Without it such requests fail with
	// ErrNotFound.
	AutoCreate bool
	// History is how many steps of each document are kept in memory (and
	// reloaded after a restart) for Events (default 10,000).
	History int
	// KeepSteps is how many steps the store keeps behind the latest
	// version (default History; negative keeps all): a snapshot prunes
	// the older ones, stopping at the newest snapshot at or below them
	// (store.Store.SaveSnapshot). DocAt, StepLog and Authors reach the
	// versions kept; checkpoints keep theirs.
	KeepSteps int64
	// SnapshotEvery is how many steps after the last snapshot a new one
	// is saved (default 1,000). Documents are also snapshot when they are
	// unloaded and at Close.
	SnapshotEvery int
	// IdleUnload is how long a document stays loaded without requests
	// (default 10 minutes; negative never unloads).
	IdleUnload time.Duration
	// UsersWindow is how long a user counts as present after its last
	// request (default 1 minute). Users subscribed (Subscribe) always
	// count. A change of the count is news for the subscriptions.
	UsersWindow time.Duration
	// PeerRefresh, when the store is a store.Broadcaster (several
	// nodes), is how often the Authority sends the users and the
	// presence of its loaded documents to the other nodes (default 5
	// seconds); what it heard from a node counts for three refreshes
	// unless repeated, so the users and cursors of a node that died go
	// within four (peers.go).
	PeerRefresh time.Duration
	// PresenceEvery is the shortest time between two wake-ups of a
	// document's followers of presence, and between two sendings of its
	// presence to the other nodes (default DefaultPresenceEvery, 50 ms):
	// however fast its clients move, a document's presence goes out at
	// most that often (presence.go).
	PresenceEvery time.Duration
	// EditPresence is how long the editors see the server's client in
	// a document's presence after ShowEdit (default DefaultEditPresence,
	// 5 seconds).
	EditPresence time.Duration
	// Limits bound the documents and their clients (limits.go); zero
	// fields take the defaults. Embedded: a.cfg.MaxSteps is
	// a.cfg.Limits.MaxSteps.
	Limits

	// Strict also checks documents against their schema as Node.check()
	// does (content, marks, attributes), which the steps do not: a
	// submission whose steps make the document invalid is refused with a
	// *transform.StepError naming the first such step, and Create refuses
	// an invalid initial document. Off by default: what
	// prosemirror-transform accepts (and so what editors send), the
	// authority accepts.
	Strict bool
	// Now returns the current time (default time.Now); for tests.
	Now func() time.Time
	// Logger gets background errors: failed snapshots, failed catch-ups
	// with the store, hook errors and dropped commits (nil discards them).
	Logger *slog.Logger

	// OnLoad gives the initial content of a document that a request asks
	// for and the store does not have, when AutoCreate is on. It is
	// called before the document is created, and returns its schema's
	// name ("" means DefaultSchema) and its document (nil means the
	// schema's empty document), which must be of that schema and is
	// checked as Create checks it (MaxDocSize, Strict). An error that
	// wraps ErrNotFound refuses: the request fails with ErrNotFound and
	// nothing is created. Any other error fails the request with it
	// (wrapped); nothing is created and the next request calls OnLoad
	// again. Requests for the document wait for OnLoad; it runs once for
	// them all. Nil creates DefaultSchema's empty document.
	OnLoad func(ctx context.Context, id string) (schema string, doc *model.Node, err error)

	// BeforeSubmit is called for every submission that would change a
	// document (steps or comment events), once its steps are applied in
	// memory (and checked, with Strict), before anything is stored. A
	// non-nil error refuses the submission: Submit returns
	// &RefusedError{Err: err} and nothing is stored or published. It
	// runs with the document's writer lock held, so it must be quick and
	// must not call the Authority for the same document (that would
	// deadlock); submissions to other documents proceed meanwhile.
	BeforeSubmit func(ctx context.Context, p *Proposal) error

	// AfterCommit is called after a submission to this Authority is
	// durable and published (not for changes made through other
	// Authorities sharing the store), in commit order, by one goroutine
	// of the Authority. It never delays editing: commits wait in a queue
	// of AfterCommitQueue entries, and when it is full a commit is
	// dropped, logged at WARN and counted (DroppedCommits). An error is
	// logged at WARN. Close runs the queued commits before it returns.
	AfterCommit func(ctx context.Context, c Commit) error
	// AfterCommitQueue is the length of AfterCommit's queue (default
	// DefaultAfterCommitQueue).
	AfterCommitQueue int

	// OnUnload is called after a document was unloaded from memory: when
	// it was idle for IdleUnload, and for every loaded document at Close.
	// It runs outside the Authority's locks. It is not called for a
	// deleted document.
	OnUnload func(id string, version int64)

	// Observer, when not nil, is told the steps accepted and the number
	// of documents loaded (for metrics; see Observer).
	Observer Observer
}

// Defaults of Config.
const (
	DefaultHistory       = 10_000
	DefaultSnapshotEvery = 1_000
	DefaultIdleUnload    = 10 * time.Minute
	DefaultUsersWindow   = time.Minute
	DefaultPeerRefresh   = 5 * time.Second
)

// Authority is the central authority of many collaboratively edited
// documents: it orders their steps, keeps them durable in a store and
// tells clients what changed. Documents are loaded on first use and
// unloaded when idle. All methods are safe for concurrent use.
type Authority struct {
	cfg   Config
	store store.Store
	// swapper is the store when it is a store.MetaSwapper: every append
	// of metadata is then conditional on the metadata read or written
	// last.
	swapper store.MetaSwapper
	log     *slog.Logger

	mu      sync.Mutex
	docs    map[string]*document
	memUsed int64                 // the documents' memory estimates added up (memory.go), and reserved
	uses    map[string]clientUses // the documents in use by each client (shares.go)
	closed  bool
	bg      sync.WaitGroup // background snapshots, added under mu while !closed

	// reserved is the memory that reads hold outside the documents
	// (Reservation, reserve.go), guarded by mu.
	reserved int64

	done        chan struct{} // closed by Close
	janitorDone chan struct{}

	// The users timers (users.go): timerFunc replaces time.AfterFunc in
	// tests; usersTimers counts the timers armed and not yet stopped or
	// run.
	timerFunc   func(time.Duration, func()) stopper
	usersTimers atomic.Int64

	commits *commitQueue // nil without Config.AfterCommit

	creations creations // against MaxDocuments and MaxCreatesPerHour (creations.go)
	quota     quota     // MaxDocStorage and MaxClientStorage (quota.go)

	// Notices of a store.Notifier (notify.go); unsubscribe is nil
	// without one.
	unsubscribe func()
	notices     noticeQueue
	noticeDone  chan struct{} // closed when the notice goroutine ended
	noticeStop  context.CancelFunc

	// The users and presence of other nodes, with a store.Broadcaster
	// (peers.go).
	peers peerUsers
}

// withDefaults returns cfg with its zero fields set to the defaults.
func (cfg Config) withDefaults() Config {
	defaults.Fill(&cfg, Config{History: DefaultHistory, SnapshotEvery: DefaultSnapshotEvery,
		UsersWindow: DefaultUsersWindow, PeerRefresh: DefaultPeerRefresh, PresenceEvery: DefaultPresenceEvery,
		EditPresence:     DefaultEditPresence,
		AfterCommitQueue: DefaultAfterCommitQueue})
	if cfg.KeepSteps == 0 {
		cfg.KeepSteps = int64(cfg.History)
	}
	if cfg.IdleUnload == 0 { // negative: never
		cfg.IdleUnload = DefaultIdleUnload
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// New returns an Authority over cfg.Store and starts its janitor, which
// unloads idle documents until Close. When the store is a
// store.Notifier, the Authority subscribes to it until Close and brings
// its loaded documents up to date with the changes of other writers (see
// Notifier in package store). When the store is a store.MetaSwapper,
// every append is conditional on the comment events that the Authority
// last read or wrote.
func New(cfg Config) (*Authority, error) {
	if cfg.Store == nil {
		return nil, errors.New("collab: Config.Store is nil")
	}
	if cfg.Schemas == nil {
		return nil, errors.New("collab: Config.Schemas is nil")
	}
	if cfg.DefaultSchema == "" {
		cfg.DefaultSchema = "basic"
	}
	if cfg.AutoCreate {
		if _, ok := cfg.Schemas(cfg.DefaultSchema); !ok {
			return nil, fmt.Errorf("collab: unknown default schema %q", cfg.DefaultSchema)
		}
	}
	cfg = cfg.withDefaults()
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Authority{
		cfg:         cfg,
		store:       cfg.Store,
		log:         logger,
		docs:        make(map[string]*document),
		done:        make(chan struct{}),
		janitorDone: make(chan struct{}),
	}
	if cfg.AfterCommit != nil {
		a.commits = newCommitQueue(a, cfg.AfterCommit, cfg.AfterCommitQueue)
	}
	a.swapper, _ = cfg.Store.(store.MetaSwapper)
	a.quota = newQuota(cfg)
	a.follow()
	a.followPeers()
	if cfg.IdleUnload > 0 {
		go a.janitor(min(max(cfg.IdleUnload/4, 10*time.Millisecond), time.Minute))
	} else {
		close(a.janitorDone)
	}
	return a, nil
}

// Close stops the janitor and the store's notices, makes waiting
// subscriptions return ErrClosed, waits for the submissions in flight and
// snapshots every loaded document that moved on since its last snapshot.
// Then it runs the commits queued for Config.AfterCommit and calls
// Config.OnUnload for every loaded document. It does not close the store.
// Every method fails with ErrClosed afterwards.
func (a *Authority) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	close(a.done)
	docs := make([]*document, 0, len(a.docs))
	for _, d := range a.docs {
		if d.loaded {
			docs = append(docs, d)
			d.mu.Lock()
			d.stopUsersTimer() // and no more are armed after done is closed
			d.mu.Unlock()
		}
	}
	if a.cfg.Observer != nil && len(docs) > 0 {
		// A closed Authority counts no document as loaded (and reports
		// no more changes: dropLocked, load).
		a.cfg.Observer.DocumentsLoaded(-len(docs))
	}
	a.mu.Unlock()
	a.stopFollowing()
	a.stopPeers()
	<-a.janitorDone
	a.bg.Wait()
	var errs []error
	versions := make([]int64, len(docs))
	for i, d := range docs {
		d.sem <- struct{}{}
		if err := a.snapshot(context.Background(), d); err != nil {
			errs = append(errs, fmt.Errorf("collab: snapshot of %q: %w", d.id, err))
		}
		versions[i] = d.state().version
		<-d.sem
	}
	if a.commits != nil {
		a.commits.close()
	}
	if a.cfg.OnUnload != nil {
		for i, d := range docs {
			a.cfg.OnUnload(d.id, versions[i])
		}
	}
	return errors.Join(errs...)
}

// isClosed reports whether Close was called.
func (a *Authority) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// now returns the current time.
func (a *Authority) now() time.Time { return a.cfg.Now() }

// janitor unloads idle documents every interval until Close.
func (a *Authority) janitor(interval time.Duration) {
	defer close(a.janitorDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-t.C:
			a.unloadIdle()
		}
	}
}

// unloadIdle unloads the documents that had no request for
// Config.IdleUnload, after snapshotting those that moved on since their
// last snapshot.
func (a *Authority) unloadIdle() {
	now := a.now()
	idle := func(d *document, now time.Time) bool {
		return d.refs == 0 && now.Sub(d.lastActive) >= a.cfg.IdleUnload
	}
	a.mu.Lock()
	var docs []*document
	for _, d := range a.docs {
		if d.loaded && idle(d, now) {
			docs = append(docs, d)
		}
	}
	a.mu.Unlock()
	for _, d := range docs {
		a.unload(d, idle)
	}
}

// unload unloads d, a loaded document, after snapshotting it when it moved
// on since its last snapshot, if it is not busy and idle(d, now) holds
// (checked under a.mu) once it is snapshot. It reports whether it
// unloaded d.
func (a *Authority) unload(d *document, idle func(d *document, now time.Time) bool) bool {
	select {
	case d.sem <- struct{}{}:
	default:
		return false // busy after all
	}
	if err := a.snapshot(context.Background(), d); err != nil {
		// Keep it loaded: unloading would lose nothing (the steps are
		// durable) but the next load would replay them all again.
		a.log.Warn("collab: snapshot before unload failed", "doc", d.id, "err", err)
		<-d.sem
		return false
	}
	// Nothing changed since the snapshot: submissions need the
	// semaphore, which this holds.
	a.mu.Lock()
	unloaded := a.docs[d.id] == d && idle(d, a.now())
	if unloaded {
		a.dropLocked(d)
	}
	a.mu.Unlock()
	version := d.state().version
	<-d.sem
	if unloaded && a.cfg.OnUnload != nil {
		a.cfg.OnUnload(d.id, version)
	}
	return unloaded
}

// acquire returns the document id, loading it (or creating it, with
// AutoCreate) when it is not loaded, and holds it loaded, in use by user,
// until release. A document created is created for user (see
// allowCreate). A first use by user fails when the document would take
// user over its share of the memory budget (shares.go).
func (a *Authority) acquire(ctx context.Context, id, user string) (*document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, invalidf("empty document id")
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, ErrClosed
	}
	d := a.docs[id]
	first := false // the first use of d by user, loaded by another call
	if d == nil {
		d = newDocument(a, id)
		d.refs = 1
		a.docs[id] = d
		a.useLocked(d, user)
		a.mu.Unlock()
		a.load(ctx, d, user)
	} else {
		d.refs++
		first = a.useLocked(d, user)
		a.mu.Unlock()
		select {
		case <-d.ready:
		case <-ctx.Done():
			a.release(d, user)
			return nil, ctx.Err()
		}
	}
	if d.err != nil {
		a.release(d, user)
		return nil, d.err
	}
	if first {
		if err := a.checkShare(d, user); err != nil {
			a.release(d, user)
			return nil, err
		}
	}
	return d, nil
}

// load loads (or creates) d, which acquire just added, and signals
// whoever waits for it. A failed load leaves the map, so that the next
// request tries again.
func (a *Authority) load(ctx context.Context, d *document, user string) {
	// The load serves every request waiting for the document, not only
	// the one that started it.
	st, snapVer, err := a.open(context.WithoutCancel(ctx), d.id, user)
	if err == nil {
		err = a.admit(d, st.memSize(), user)
	}
	a.mu.Lock()
	if err != nil {
		d.err = err
		if a.docs[d.id] == d {
			a.dropLocked(d)
		}
	} else {
		d.st, d.snapVer = st, snapVer
		d.mu.Lock()
		d.indexStepsLocked(docState{}, st, true)
		d.mu.Unlock()
		d.loaded = true
		if a.cfg.Observer != nil && a.docs[d.id] == d && !a.closed {
			a.cfg.Observer.DocumentsLoaded(1)
		}
	}
	a.mu.Unlock()
	close(d.ready)
	if err == nil {
		a.maybeSnapshot(d)
	}
}

// release ends a use of d by user begun by acquire.
func (a *Authority) release(d *document, user string) {
	a.mu.Lock()
	d.refs--
	a.unuseLocked(d, user)
	d.lastActive = a.now()
	a.mu.Unlock()
}

// remove drops d from memory (after a Delete, or when the store lost it)
// and wakes its waiters, who then answer ErrNotFound.
func (a *Authority) remove(d *document) {
	a.mu.Lock()
	if a.docs[d.id] == d {
		a.dropLocked(d)
	}
	a.mu.Unlock()
	d.mu.Lock()
	if !d.deleted {
		d.deleted = true
		close(d.wake)
	}
	d.mu.Unlock()
}

// Check reports whether the Authority can accept changes: ErrClosed after
// Close, an error matching ErrUnavailable when its store says it cannot
// take writes (a store.Checker), nil otherwise.
func (a *Authority) Check() error {
	if a.isClosed() {
		return ErrClosed
	}
	if c, ok := a.store.(store.Checker); ok {
		if err := c.Check(); err != nil {
			return storeFailed(err, "collab: store check")
		}
	}
	return nil
}

// Exists reports whether the document id exists (loaded, or in the
// store), without loading or creating it.
func (a *Authority) Exists(ctx context.Context, id string) (bool, error) {
	a.mu.Lock()
	d := a.docs[id]
	closed, loaded := a.closed, d != nil && d.loaded
	a.mu.Unlock()
	if closed {
		return false, ErrClosed
	}
	if loaded {
		return true, nil
	}
	_, err := a.loadHead(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, storeFailed(err, "collab: load %q", id)
	}
	return true, nil
}

// DocInfo describes a document in List.
type DocInfo struct {
	ID string
	// Users is the number of users of the document: of a loaded one,
	// and those that the other nodes sharing the store count (with a
	// store.Broadcaster); 0 when it has none.
	Users int
	// Version is the document's stored version, and Updated when the
	// store last changed it.
	Version int64
	Updated time.Time
}

// List returns every stored document, ordered by id.
func (a *Authority) List(ctx context.Context) ([]DocInfo, error) {
	if a.isClosed() {
		return nil, ErrClosed
	}
	stored, err := a.store.List(ctx)
	if err != nil {
		return nil, storeFailed(err, "collab: list")
	}
	now := a.now()
	users := map[string]int{}
	a.mu.Lock()
	for id, d := range a.docs {
		if d.loaded {
			d.mu.Lock()
			users[id] = d.userCount(now, a.cfg.UsersWindow)
			d.mu.Unlock()
		}
	}
	a.mu.Unlock()
	out := make([]DocInfo, len(stored))
	for i, s := range stored {
		n, ok := users[s.ID]
		if !ok {
			n = a.peers.count(s.ID, nil)
		}
		out[i] = DocInfo{ID: s.ID, Users: n, Version: s.Version, Updated: s.Updated}
	}
	slices.SortFunc(out, func(x, y DocInfo) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// Create creates the document id with the given schema ("" means
// Config.DefaultSchema) and initial document (nil means the schema's top
// node, filled to be valid), and returns its first version: 0 for an id
// never used, and otherwise one past the last version of every document
// deleted under it, so that a client of a deleted document never takes
// the new one's versions for its own (see Delete). It fails with
// ErrExists when id is taken. The document is loaded on first use. It is
// CreateFor without a user: only Config.MaxDocuments bounds it.
func (a *Authority) Create(ctx context.Context, id, schemaName string, doc *model.Node) (int64, error) {
	return a.CreateFor(ctx, id, "", schemaName, doc)
}

// CreateFor is Create for user (when not empty), the client asking, whose
// creations count against Config.MaxCreatesPerHour (a *RateError over
// it) and Config.MaxClientDocuments (an error matching
// ErrTooManyDocuments) as those of AutoCreate do.
func (a *Authority) CreateFor(ctx context.Context, id, user, schemaName string, doc *model.Node) (int64, error) {
	if id == "" {
		return 0, invalidf("empty document id")
	}
	if schemaName == "" {
		schemaName = a.cfg.DefaultSchema
	}
	_, doc, err := a.initialDoc(schemaName, doc)
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	closed, loaded := a.closed, a.docs[id] != nil
	a.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
	if loaded {
		return 0, fmt.Errorf("collab: create %q: %w", id, ErrExists)
	}
	if err := a.allowCreate(ctx, id, user); err != nil {
		return 0, err
	}
	err = a.store.Create(ctx, id, schemaName, doc.AppendJSON(nil), commentLog{}.appendMeta(nil))
	if err != nil {
		a.createFailed(user)
	} else {
		a.created(id, user)
	}
	if errors.Is(err, store.ErrExists) {
		return 0, fmt.Errorf("collab: create %q: %w", id, ErrExists)
	}
	if err != nil {
		return 0, storeFailed(err, "collab: create %q", id)
	}
	// The store chose the first version. Other writers sharing the store
	// may have moved the document on since, or deleted it.
	head, err := a.loadHead(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return 0, storeFailed(err, "collab: load %q", id)
	}
	return head.Oldest, nil
}

// initialDoc returns the schema of a new document and its initial
// document doc (nil means the schema's empty document), checked against
// the limits and, with Strict, the schema.
func (a *Authority) initialDoc(schemaName string, doc *model.Node) (*model.Schema, *model.Node, error) {
	schema, ok := a.cfg.Schemas(schemaName)
	if !ok {
		return nil, nil, invalidf("unknown schema %q", schemaName)
	}
	if doc == nil {
		var err error
		if doc, err = emptyDoc(schema, schemaName); err != nil {
			return nil, nil, err
		}
	} else if doc.Type.Schema != schema {
		return nil, nil, invalidf("the document is not of schema %q", schemaName)
	}
	if size := doc.Content.Size(); size > a.cfg.MaxDocSize {
		return nil, nil, &LimitError{What: "document size", Limit: a.cfg.MaxDocSize, Value: size}
	}
	if size := doc.JSONSize(); int64(size) > a.cfg.MaxDocBytes {
		return nil, nil, &LimitError{What: "document bytes (JSON)", Limit: int(a.cfg.MaxDocBytes), Value: size}
	}
	if a.cfg.Strict {
		if err := doc.Check(); err != nil {
			return nil, nil, invalidf("invalid document: %v", err)
		}
	}
	return schema, doc, nil
}

// emptyDoc returns the schema's top node, filled to be valid.
func emptyDoc(schema *model.Schema, name string) (*model.Node, error) {
	doc, err := schema.TopNodeType.CreateAndFill(nil, model.Fragment{}, nil)
	if err == nil && doc == nil {
		err = errors.New("its top node cannot be filled")
	}
	if err != nil {
		return nil, fmt.Errorf("collab: empty document of schema %q: %w", name, err)
	}
	return doc, nil
}

// Delete deletes the document id from the store and from memory. Its
// subscriptions and queued submissions answer ErrNotFound. The
// store keeps its last version: a document created again under id
// starts after it, so that the clients of this one, at its versions, get
// ErrHistoryGone (HTTP 410) from the new one's Events and ErrConflict
// from its Submit, and reload.
func (a *Authority) Delete(ctx context.Context, id string) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	d := a.docs[id]
	if d != nil {
		d.refs++
	}
	a.mu.Unlock()
	if d != nil {
		defer a.release(d, "")
		select {
		case <-d.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if d.err == nil {
			if err := d.lock(ctx); err != nil {
				return err
			}
			defer d.unlock()
		}
	}
	err := a.store.Delete(ctx, id)
	if err == nil {
		a.deleted(id)
	}
	if d != nil && d.err == nil && (err == nil || errors.Is(err, store.ErrNotFound)) {
		a.remove(d)
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("collab: delete %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return storeFailed(err, "collab: delete %q", id)
	}
	return nil
}

// AutoCreates reports whether a request for an unknown document creates
// it (Config.AutoCreate).
func (a *Authority) AutoCreates() bool { return a.cfg.AutoCreate }

// Schema returns the schema of a name ("" means Config.DefaultSchema)
// and the name it resolved to; ok is false for an unknown name.
func (a *Authority) Schema(name string) (schema *model.Schema, resolved string, ok bool) {
	if name == "" {
		name = a.cfg.DefaultSchema
	}
	schema, ok = a.cfg.Schemas(name)
	return schema, name, ok
}
