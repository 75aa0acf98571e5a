package collab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// document is a loaded document. Its fields are guarded in layers: sem
// serializes the writers (Submit, Delete, unload, Close), mu guards the
// state that readers see, and Authority.mu guards the bookkeeping of
// loading and unloading. Locks are taken in the order sem, Authority.mu,
// mu (List and Close read documents under Authority.mu).
type document struct {
	auth  *Authority // for the users timer (users.go)
	id    string
	ready chan struct{} // closed once loaded, or once the load failed

	// Set before ready is closed.
	err error // why the load failed

	// Guarded by Authority.mu.
	loaded     bool
	refs       int // requests using the document, waiters included
	lastActive time.Time
	mem        int64 // the memory accounted for the document (memory.go)

	sem    chan struct{} // a one-slot semaphore held by writers
	snapMu sync.Mutex    // serializes snapshots

	mu       sync.Mutex
	st       docState
	docJSON  []byte        // st.node's JSON, nil until asked for
	wake     chan struct{} // closed (and replaced) at every publish
	deleted  bool
	snapping bool  // a background snapshot is running
	snapVer  int64 // version of the latest snapshot in the store
	stored   int64 // the bytes it holds in the store, -1 until measured (quota.go)
	// snapMeta is the comment entry that the latest snapshot of this
	// Authority folded into the store's comment base, and snapMetaBytes
	// the docState.metaBytes of that snapshot (both 0 after a reload).
	snapMeta, snapMetaBytes int64
	users                   map[string]*userEntry
	// nextPrune is when the first user not waiting expires (zero when no
	// user can expire).
	nextPrune time.Time
	// The wake-ups of waiters on user-count changes (users.go).
	usersWake     chan struct{} // closed (and replaced) when users came or went
	usersDirty    bool          // users came or went since usersWake was last closed
	usersWoken    time.Time     // when usersWake was last closed
	listeners     int           // subscriptions of users (waiting long polls)
	subs          int           // subscriptions, of users or not (stream.go)
	usersTimer    stopper       // nil when not armed
	usersTimerAt  time.Time     // when usersTimer is due, by Config.Now
	usersTimerSeq uint64        // counts the arming of usersTimer
	// appending is the store append in flight, nil when there is none.
	appending *appendCall
	// commits are the commits waiting to be decided together (group.go).
	commits []*pendingCommit
	// clients are the client ids in use, by their string (clientid.go).
	clients map[string]*clientUse
	pres    presence // presence.go
}

// appendCall is a store append in flight: a submission at its base can
// only conflict, unless it fails.
type appendCall struct {
	base, to int64         // the versions before and after
	done     chan struct{} // closed once it is over, and published if it succeeded
}

// docState is what a document is at a version. Its slices are never
// modified in place, so that what readers were given stays valid.
type docState struct {
	schema     *model.Schema
	schemaName string
	node       *model.Node
	version    int64
	// steps holds the last steps: steps[i] made version
	// version-len(steps)+i+1.
	steps    []StepRecord
	histMem  int64 // historyMem(steps)
	comments commentLog
	// metaSeq is the number of the store's latest comment entry that
	// comments include (store.Head.MetaSeq).
	metaSeq int64
	// metaBase is the store's comment base when the document was loaded
	// (store.Head.MetaBase), and metaBytes counts the bytes of the
	// entries after it, read or written since.
	metaBase, metaBytes int64
	// owners records who first used each suggestion id (suggestions.go).
	owners suggestionOwners
}

// Snapshots for comments: one is due once the store holds this many
// comment entries, or this many bytes of them (Config.MaxCommentBytes
// when larger), after its comment base, so that a load replays few.
const (
	commentSnapshotEntries = 100
	commentSnapshotBytes   = 1 << 20
)

func newDocument(a *Authority, id string) *document {
	return &document{
		auth:      a,
		id:        id,
		ready:     make(chan struct{}),
		sem:       make(chan struct{}, 1),
		wake:      make(chan struct{}),
		users:     make(map[string]*userEntry),
		usersWake: make(chan struct{}),
		stored:    -1,
	}
}

// lock takes d's writer semaphore, or fails when ctx is done first.
func (d *document) lock(ctx context.Context) error {
	select {
	case d.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockAt takes d's writer semaphore for a submission at version. A
// submission that can only conflict does not wait for it: lockAt fails
// with ErrConflict at once when d is past version, and when the store
// append in flight started from version, as soon as that append is
// durable and published (awaitAppend). It fails with ctx's error when
// ctx is done first.
func (d *document) lockAt(ctx context.Context, version int64) error {
	if err := d.awaitAppend(ctx, version); err != nil {
		return err
	}
	return d.lock(ctx)
}

// unlock releases d's writer semaphore.
func (d *document) unlock() { <-d.sem }

// startAppend records that the holder of sem appends to the store at
// base, reaching version to, until endAppend.
func (d *document) startAppend(base, to int64) *appendCall {
	c := &appendCall{base: base, to: to, done: make(chan struct{})}
	d.mu.Lock()
	d.appending = c
	d.mu.Unlock()
	return c
}

// endAppend records that c is over, once its outcome (if any) is
// published.
func (d *document) endAppend(c *appendCall) {
	d.mu.Lock()
	d.appending = nil
	d.mu.Unlock()
	close(c.done)
}

// awaitAppend waits while a store append at version is in flight, since
// a submission at version can only conflict with it unless it fails, and
// returns ErrConflict when the document is past version. A negative
// version (one the document never had: the core refuses it) is not
// waited for.
func (d *document) awaitAppend(ctx context.Context, version int64) error {
	if version < 0 {
		return nil
	}
	for {
		d.mu.Lock()
		c, stale := d.appending, version < d.st.version && !d.deleted
		d.mu.Unlock()
		if stale {
			return ErrConflict
		}
		if c == nil || c.base != version {
			return nil
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// publish makes st the document's state and wakes the waiters. It is
// called with sem held, once st is durable. Unless reloaded (from the
// store, as a document of its own), st continues the current state: its
// history is the current one with steps appended.
func (d *document) publish(st docState, reloaded bool) {
	est := st.memSize()
	d.mu.Lock()
	if d.deleted {
		d.mu.Unlock()
		return
	}
	if st.node != d.st.node {
		d.docJSON = nil
	}
	d.indexStepsLocked(d.st, st, reloaded)
	d.mapPresenceLocked(d.st, st, reloaded)
	d.st = st
	close(d.wake)
	d.wake = make(chan struct{})
	d.mu.Unlock()
	d.auth.account(d, est)
}

// state returns the current state.
func (d *document) state() docState {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
}

// view returns what a submission under the client id cid is decided on
// (core.go), read at once.
func (d *document) view(cid ClientID) view {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := view{st: d.st, deleted: d.deleted}
	if u := d.clients[string(cid)]; len(cid) > 0 && u != nil {
		v.client = *u
	}
	return v
}

// open loads the document id, or creates it when it does not exist and
// Config.AutoCreate is on, with the content that Config.OnLoad gives, for
// user (within the creation limits, allowCreate).
func (a *Authority) open(ctx context.Context, id, user string) (st docState, snapVer int64, err error) {
	st, snapVer, err = a.loadState(ctx, id)
	if !errors.Is(err, ErrNotFound) || !a.cfg.AutoCreate {
		return st, snapVer, err
	}
	if err := a.allowCreate(ctx, id, user); err != nil {
		return st, 0, err
	}
	created := false
	defer func() {
		if !created {
			a.createFailed(user)
		}
	}()
	schemaName := a.cfg.DefaultSchema
	var node *model.Node
	if a.cfg.OnLoad != nil {
		name, doc, err := a.cfg.OnLoad(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return st, 0, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return st, 0, fmt.Errorf("collab: OnLoad of %q: %w", id, err)
		}
		if name != "" {
			schemaName = name
		}
		node = doc
	}
	_, node, err = a.initialDoc(schemaName, node)
	if err != nil {
		return st, 0, fmt.Errorf("collab: initial document of %q: %w", id, err)
	}
	err = a.store.Create(ctx, id, schemaName, node.AppendJSON(nil), commentLog{}.appendMeta(nil))
	if errors.Is(err, store.ErrExists) {
		// Created meanwhile by another server sharing the store.
		return a.loadState(ctx, id)
	}
	if err != nil {
		return st, 0, storeFailed(err, "collab: create %q", id)
	}
	created = true
	a.created(id, user)
	// Its first version is the store's: after those of the documents
	// deleted under its id, if any (store.Store.Create).
	return a.loadState(ctx, id)
}

// loadState rebuilds the document id from the store: its latest snapshot
// with the steps after it replayed, the last History steps for Events,
// and the comments of the meta blob. It also returns the snapshot's
// version. What it reads is reserved in the memory budget while it reads
// (an error matching ErrOverloaded when that does not fit), and released
// when it returns: the caller accounts the state it returns.
func (a *Authority) loadState(ctx context.Context, id string) (docState, int64, error) {
	r := a.Reserve(fmt.Sprintf("%q (loading it)", id))
	defer r.Release()
	for try := 0; ; try++ {
		r.Resize(0)
		st, snapVer, err := a.loadOnce(ctx, id, r)
		// A snapshot by another server may prune steps between Load and
		// Steps: load again.
		if errors.Is(err, store.ErrCompacted) && try < 3 {
			continue
		}
		return st, snapVer, err
	}
}

func (a *Authority) loadOnce(ctx context.Context, id string, r *Reservation) (docState, int64, error) {
	var st docState
	head, err := a.store.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return st, 0, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return st, 0, storeFailed(err, "collab: load %q", id)
	}
	schema, ok := a.cfg.Schemas(head.Schema)
	if !ok {
		return st, 0, fmt.Errorf("collab: load %q: unknown schema %q", id, head.Schema)
	}
	if limit := a.maxDocMemory(); limit > 0 && int64(len(head.Snapshot.Doc)) > limit {
		// Its nodes would take more than its JSON.
		return st, 0, fmt.Errorf("collab: load %q: snapshot at version %d: %w", id, head.Snapshot.Version, a.docMemoryError(int64(len(head.Snapshot.Doc))))
	}
	if err := r.Resize(2*int64(len(head.Snapshot.Doc)) + int64(len(head.Meta))); err != nil {
		return st, 0, err
	}
	node, err := schema.NodeFromJSON(head.Snapshot.Doc)
	if err != nil {
		return st, 0, fmt.Errorf("collab: load %q: snapshot at version %d: %w", id, head.Snapshot.Version, err)
	}
	if err := r.Resize(node.MemSize() + int64(len(head.Meta))); err != nil {
		return st, 0, err
	}
	comments, err := decodeMeta(head.Meta)
	if err != nil {
		return st, 0, fmt.Errorf("collab: load %q: meta: %w", id, err)
	}
	if head.MetaVersion < head.Oldest || head.MetaVersion > head.Version {
		return st, 0, fmt.Errorf("collab: load %q: the comments refer to version %d, outside [%d, %d]", id, head.MetaVersion, head.Oldest, head.Version)
	}
	// The steps to read: those after the snapshot, to replay, those after
	// the comments' version, to map them, and the last History ones still
	// kept, for Events.
	histFrom := max(head.Oldest, head.Version-int64(a.cfg.History))
	from := min(head.Snapshot.Version, histFrom, head.MetaVersion)
	// They are read in parts, reserved as they are kept; a document
	// whose steps alone are over MaxDocMemory is refused before all are
	// read.
	var steps []store.Step
	err = a.readSteps(ctx, id, from, head.Version, 0, r.what, r, func(part []store.Step) (bool, error) {
		if limit, held := a.maxDocMemory(), r.Size(); limit > 0 && held > limit {
			return false, fmt.Errorf("collab: load %q: steps after %d: %w", id, from, a.docMemoryError(held))
		}
		steps = append(steps, part...)
		return true, nil
	})
	if err != nil {
		return st, 0, err
	}
	if int64(len(steps)) != head.Version-from {
		return st, 0, fmt.Errorf("collab: load %q: the store returned %d steps after version %d, want %d", id, len(steps), from, head.Version-from)
	}
	all := make([]StepRecord, len(steps))
	for i, s := range steps {
		if v := from + int64(i) + 1; s.Version != v {
			return st, 0, fmt.Errorf("collab: load %q: the store returned step %d where %d was due", id, s.Version, v)
		}
		all[i] = StepRecord{JSON: s.JSON, ClientID: s.ClientID, owner: owner{author: s.Author}, commit: s.Commit}
	}
	// The steps after the snapshot are replayed; the last History ones
	// are kept for Events.
	replayFrom := head.Snapshot.Version - from
	var owners suggestionOwners
	if node, err = a.replaySteps(node, steps[replayFrom:], all[replayFrom:], &owners); err != nil {
		return st, 0, fmt.Errorf("collab: load %q: %w", id, err)
	}
	// The comments are brought from their version to the latest one.
	maps := make([]*transform.StepMap, head.Version-head.MetaVersion)
	for i := range maps {
		k := head.MetaVersion - from + int64(i)   // the index of the step in steps and all
		if maps[i] = all[k].Map; maps[i] == nil { // a step at or before the snapshot
			step, err := transform.StepFromJSON(schema, steps[k].JSON)
			if err != nil {
				return st, 0, fmt.Errorf("collab: load %q: step %d: %w", id, steps[k].Version, err)
			}
			maps[i] = step.GetMap()
		}
	}
	entries, err := a.metaEntries(ctx, id, head.MetaBase, head.MetaSeq)
	if err != nil {
		return st, 0, err
	}
	if comments, err = comments.replay(head.MetaVersion, maps, entries); err != nil {
		return st, 0, fmt.Errorf("collab: load %q: %w", id, err)
	}
	records := all[histFrom-from:]
	if histFrom > from {
		records = slices.Clone(records) // the steps before are not kept
	}
	return docState{
		schema:     schema,
		schemaName: head.Schema,
		node:       node,
		version:    head.Version,
		steps:      records,
		histMem:    historyMem(records),
		comments:   comments,
		metaSeq:    head.MetaSeq,
		metaBase:   head.MetaBase,
		metaBytes:  entryBytes(entries),
		owners:     owners,
	}, head.Snapshot.Version, nil
}

// metaEntries reads the comment entries of id with from < Seq ≤ to.
func (a *Authority) metaEntries(ctx context.Context, id string, from, to int64) ([]store.MetaEntry, error) {
	if to <= from {
		return nil, nil
	}
	entries, err := a.store.MetaEntries(ctx, id, from, to)
	if err != nil {
		return nil, storeFailed(err, "collab: %q: comment entries after %d", id, from)
	}
	if int64(len(entries)) != to-from {
		return nil, fmt.Errorf("collab: %q: the store returned %d comment entries after %d, want %d", id, len(entries), from, to-from)
	}
	for i, e := range entries {
		if want := from + int64(i) + 1; e.Seq != want {
			return nil, fmt.Errorf("collab: %q: the store returned comment entry %d where %d was due", id, e.Seq, want)
		}
	}
	return entries, nil
}

// entryBytes returns the bytes of entries' JSON.
func entryBytes(entries []store.MetaEntry) int64 {
	var n int64
	for _, e := range entries {
		n += int64(len(e.JSON))
	}
	return n
}

// loadHead returns the store's head of id, without its documents when
// the store can leave them out (store.HeadLoader).
func (a *Authority) loadHead(ctx context.Context, id string) (store.Head, error) {
	if hl, ok := a.store.(store.HeadLoader); ok {
		return hl.LoadHead(ctx, id)
	}
	return a.store.Load(ctx, id)
}

// catchUp brings d up to date with the store's head, which other writers
// sharing the store may have moved on: after a notice (notify.go), and
// after an Append that failed with ErrConflict or whose outcome is
// unknown. It reads and applies the steps and the comment entries that
// memory lacks (the store orders both; with a store.MetaSwapper no
// writer appends on entries it has not seen). A document that the store
// no longer has is removed (its waiters answer ErrNotFound). When the
// steps or entries cannot be read (pruned) or replayed, or the store is
// behind memory (the document was deleted and created again), d is
// reloaded from the store instead. It is called with sem held; a failure
// of the store is logged and returned, and d stays as it was.
func (a *Authority) catchUp(ctx context.Context, d *document) error {
	head, err := a.loadHead(ctx, d.id)
	if errors.Is(err, store.ErrNotFound) {
		a.remove(d)
		return nil
	}
	if err != nil {
		a.log.Warn("collab: catching up with the store failed", "doc", d.id, "err", err)
		return err
	}
	st := d.state()
	if head.Version == st.version && head.MetaSeq == st.metaSeq {
		a.noteSnapshot(d, head)
		return nil
	}
	// Without a store.MetaSwapper, another writer's comment entries may
	// have been numbered as memory numbered its own: reload them.
	if head.Version >= st.version && (a.swapper != nil || head.MetaSeq == st.metaSeq) {
		next, err := a.replay(ctx, d.id, st, head)
		if err == nil {
			d.publish(next, false)
			a.noteSnapshot(d, head)
			a.maybeSnapshot(d)
			return nil
		}
		if errors.Is(err, store.ErrNotFound) {
			a.remove(d)
			return nil
		}
		a.log.Info("collab: catching up step by step failed, reloading", "doc", d.id, "err", err)
	}
	st, snapVer, err := a.loadState(ctx, d.id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			a.remove(d)
			return nil
		}
		a.log.Warn("collab: reloading from the store failed", "doc", d.id, "err", err)
		return err
	}
	d.publish(st, true)
	d.mu.Lock()
	d.snapVer, d.snapMeta, d.snapMetaBytes = snapVer, 0, 0
	d.mu.Unlock()
	a.maybeSnapshot(d)
	return nil
}

// replay returns st brought to head by the steps and the comment entries
// after st's read from the store.
func (a *Authority) replay(ctx context.Context, id string, st docState, head store.Head) (docState, error) {
	if head.Schema != st.schemaName {
		return st, fmt.Errorf("the schema changed from %q to %q", st.schemaName, head.Schema)
	}
	if head.MetaSeq < st.metaSeq {
		return st, fmt.Errorf("the store has %d comment entries, memory %d", head.MetaSeq, st.metaSeq)
	}
	var stored []store.Step
	if head.Version > st.version {
		var err error
		if stored, err = a.store.Steps(ctx, id, st.version, head.Version); err != nil {
			return st, fmt.Errorf("steps after %d: %w", st.version, err)
		}
	}
	if int64(len(stored)) != head.Version-st.version {
		return st, fmt.Errorf("the store returned %d steps after version %d, want %d", len(stored), st.version, head.Version-st.version)
	}
	entries, err := a.metaEntries(ctx, id, st.metaSeq, head.MetaSeq)
	if err != nil {
		return st, err
	}
	added := make([]StepRecord, len(stored))
	for i, s := range stored {
		if v := st.version + int64(i) + 1; s.Version != v {
			return st, fmt.Errorf("the store returned step %d where %d was due", s.Version, v)
		}
		added[i] = StepRecord{JSON: s.JSON, ClientID: s.ClientID, owner: owner{author: s.Author}, commit: s.Commit}
	}
	owners := st.owners
	node, err := a.replaySteps(st.node, stored, added, &owners)
	if err != nil {
		return st, err
	}
	maps := make([]*transform.StepMap, len(added))
	for i, r := range added {
		maps[i] = r.Map
	}
	comments, err := st.comments.replay(st.version, maps, entries)
	if err != nil {
		return st, err
	}
	st.node = node
	st.owners = owners
	st.version = head.Version
	if len(added) > 0 {
		st = st.addHistory(added, a.cfg.History)
	}
	st.comments = comments
	st.metaSeq = head.MetaSeq
	st.metaBytes += entryBytes(entries)
	return st, nil
}

// noteSnapshot records the snapshot and the comment base of head, which
// another writer may have saved.
func (a *Authority) noteSnapshot(d *document, head store.Head) {
	d.mu.Lock()
	d.snapVer = max(d.snapVer, head.Snapshot.Version)
	d.snapMeta = max(d.snapMeta, head.MetaBase)
	d.mu.Unlock()
}

// commentsDue reports whether d's comment entries after the store's
// comment base call for a snapshot. It is called with d.mu held.
func (a *Authority) commentsDue(d *document) bool {
	st := d.st
	return st.metaSeq-max(st.metaBase, d.snapMeta) >= commentSnapshotEntries ||
		st.metaBytes-d.snapMetaBytes >= max(commentSnapshotBytes, int64(a.cfg.MaxCommentBytes))
}

// snapshot saves a snapshot of d, with its comments as the store's
// comment base, when it moved on since the latest one.
func (a *Authority) snapshot(ctx context.Context, d *document) error {
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	d.mu.Lock()
	st, js := d.st, d.docJSON
	skip := d.deleted || st.version <= d.snapVer && st.metaSeq <= max(st.metaBase, d.snapMeta)
	d.mu.Unlock()
	if skip {
		return nil
	}
	if js == nil {
		js = st.node.AppendJSON(nil)
	}
	snap := store.Snapshot{Version: st.version, Doc: js, Meta: st.comments.appendMeta(nil), MetaSeq: st.metaSeq}
	if err := a.store.SaveSnapshot(ctx, d.id, snap, a.cfg.KeepSteps); err != nil {
		return err
	}
	d.mu.Lock()
	if a.quota.sizer != nil {
		d.stored = -1 // pruned: measure again
	}
	d.snapVer = max(d.snapVer, st.version)
	if st.metaSeq >= d.snapMeta {
		d.snapMeta, d.snapMetaBytes = st.metaSeq, st.metaBytes
	}
	if d.docJSON == nil && d.st.node == st.node {
		d.docJSON = js
	}
	d.mu.Unlock()
	return nil
}

// maybeSnapshot starts a background snapshot of d when it is
// SnapshotEvery steps past the latest one, or its comment entries are due
// (commentsDue), and none is running.
func (a *Authority) maybeSnapshot(d *document) {
	d.mu.Lock()
	start := !d.snapping && !d.deleted && (d.st.version-d.snapVer >= int64(a.cfg.SnapshotEvery) || a.commentsDue(d))
	if start {
		d.snapping = true
	}
	d.mu.Unlock()
	if !start {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		d.mu.Lock()
		d.snapping = false
		d.mu.Unlock()
		return
	}
	a.bg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.bg.Done()
		if err := a.snapshot(context.Background(), d); err != nil {
			a.log.Warn("collab: snapshot failed", "doc", d.id, "err", err)
		}
		d.mu.Lock()
		d.snapping = false
		d.mu.Unlock()
	}()
}

// replaySteps applies steps read from the store to node with the one step
// loop (apply.Steps), without a submission's limits (they were accepted
// once) but within MaxDocMemory (a document's JSON is less than its nodes
// take), and sets the Map and Size of recs[i] for each steps[i]. With
// owners, and a schema with the suggestion marks, the suggestion ids that
// the steps bring in are recorded there as their authors'. Its error
// names the version of the step that failed.
func (a *Authority) replaySteps(node *model.Node, steps []store.Step, recs []StepRecord, owners *suggestionOwners) (*model.Node, error) {
	opts := apply.StepOptions{MaxDocBytes: a.maxDocMemory()}
	marks, suggestions := suggestionMarks(node.Type.Schema)
	node, err := apply.Steps(node, len(steps), func(i int) []byte { return steps[i].JSON }, opts,
		func(i int, step transform.Step, _, after *model.Node) error {
			recs[i].Map, recs[i].Size = step.GetMap(), after.Content.Size()
			if owners != nil && suggestions {
				*owners = replayedSuggestions(*owners, marks, step, steps[i])
			}
			return nil
		})
	var se *apply.StepError
	if errors.As(err, &se) && se.Kind == apply.ErrDocTooLarge {
		return nil, fmt.Errorf("replaying step %d: %w", steps[se.Index].Version, a.docMemoryError(int64(se.Size)))
	}
	if errors.As(err, &se) {
		return nil, fmt.Errorf("replaying step %d: %w", steps[se.Index].Version, se.Err)
	}
	return node, err
}
