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

	sem    chan struct{} // a one-slot semaphore held by writers
	snapMu sync.Mutex    // serializes snapshots

	mu       sync.Mutex
	st       docState
	docJSON  []byte        // st.node's JSON, nil until asked for
	wake     chan struct{} // closed (and replaced) at every publish
	deleted  bool
	snapping bool  // a background snapshot is running
	snapVer  int64 // version of the latest snapshot in the store
	users    map[string]*userEntry
	// nextPrune is when the first user not waiting expires (zero when no
	// user can expire).
	nextPrune time.Time
	// The wake-ups of waiters on user-count changes (users.go).
	usersWake     chan struct{} // closed (and replaced) when users came or went
	usersDirty    bool          // users came or went since usersWake was last closed
	usersWoken    time.Time     // when usersWake was last closed
	listeners     int           // Events calls of users waiting now
	usersTimer    stopper       // nil when not armed
	usersTimerAt  time.Time     // when usersTimer is due, by Config.Now
	usersTimerSeq uint64        // counts the arming of usersTimer
	// appending is the store append in flight, nil when there is none.
	appending *appendCall
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
	comments commentLog
	// metaSeq is the store's sequence number of the metadata that
	// comments were read from or written as (store.Head.MetaSeq).
	metaSeq int64
}

func newDocument(a *Authority, id string) *document {
	return &document{
		auth:      a,
		id:        id,
		ready:     make(chan struct{}),
		sem:       make(chan struct{}, 1),
		wake:      make(chan struct{}),
		users:     make(map[string]*userEntry),
		usersWake: make(chan struct{}),
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
// returns whether the document is past version.
func (d *document) awaitAppend(ctx context.Context, version int64) (bool, error) {
	for {
		d.mu.Lock()
		c, stale := d.appending, version < d.st.version && !d.deleted
		d.mu.Unlock()
		if stale || c == nil || c.base != version {
			return stale, nil
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// publish makes st the document's state and wakes the waiters. It is
// called with sem held, once st is durable.
func (d *document) publish(st docState) {
	d.mu.Lock()
	if d.deleted {
		d.mu.Unlock()
		return
	}
	if st.node != d.st.node {
		d.docJSON = nil
	}
	d.st = st
	close(d.wake)
	d.wake = make(chan struct{})
	d.mu.Unlock()
}

// state returns the current state.
func (d *document) state() docState {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
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
			a.createFailed()
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
	schema, node, err := a.initialDoc(schemaName, node)
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
	return docState{schema: schema, schemaName: schemaName, node: node}, 0, nil
}

// loadState rebuilds the document id from the store: its latest snapshot
// with the steps after it replayed, the last History steps for Events,
// and the comments of the meta blob. It also returns the snapshot's
// version.
func (a *Authority) loadState(ctx context.Context, id string) (docState, int64, error) {
	for try := 0; ; try++ {
		st, snapVer, err := a.loadOnce(ctx, id)
		// A snapshot by another server may prune steps between Load and
		// Steps: load again.
		if errors.Is(err, store.ErrCompacted) && try < 3 {
			continue
		}
		return st, snapVer, err
	}
}

func (a *Authority) loadOnce(ctx context.Context, id string) (docState, int64, error) {
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
	node, err := schema.NodeFromJSON(head.Snapshot.Doc)
	if err != nil {
		return st, 0, fmt.Errorf("collab: load %q: snapshot at version %d: %w", id, head.Snapshot.Version, err)
	}
	comments, err := decodeMeta(head.Meta)
	if err != nil {
		return st, 0, fmt.Errorf("collab: load %q: meta: %w", id, err)
	}
	// The steps to read: those after the snapshot, to replay, and the last
	// History ones still kept, for Events.
	histFrom := max(head.Oldest, head.Version-int64(a.cfg.History))
	from := min(head.Snapshot.Version, histFrom)
	var steps []store.Step
	if from < head.Version {
		steps, err = a.store.Steps(ctx, id, from, head.Version)
		if err != nil {
			return st, 0, storeFailed(err, "collab: load %q: steps after %d", id, from)
		}
	}
	if int64(len(steps)) != head.Version-from {
		return st, 0, fmt.Errorf("collab: load %q: the store returned %d steps after version %d, want %d", id, len(steps), from, head.Version-from)
	}
	all := make([]StepRecord, len(steps))
	for i, s := range steps {
		if v := from + int64(i) + 1; s.Version != v {
			return st, 0, fmt.Errorf("collab: load %q: the store returned step %d where %d was due", id, s.Version, v)
		}
		all[i] = StepRecord{JSON: s.JSON, ClientID: s.ClientID}
	}
	// The steps after the snapshot are replayed; the last History ones
	// are kept for Events.
	replayFrom := head.Snapshot.Version - from
	if node, err = replaySteps(node, steps[replayFrom:], all[replayFrom:]); err != nil {
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
		comments:   comments,
		metaSeq:    head.MetaSeq,
	}, head.Snapshot.Version, nil
}

// catchUp brings d up to date with the store's head, which other writers
// sharing the store may have moved on: after a notice (notify.go), and
// after an Append that failed with ErrConflict or whose outcome is
// unknown. It reads and applies the steps that memory lacks and adopts
// the head's comments. At the same version it adopts the head's comments
// when they changed: with a store.MetaSwapper, when the head's MetaSeq is
// not the one memory has (the store arbitrates the metadata, and the
// comment version it holds never goes back); with another store, when they
// are newer, or as new but different (the store's last word is then what
// every writer keeps). A document that the store no longer has is removed
// (its waiters answer ErrNotFound). When the steps cannot be read (pruned)
// or replayed, or the store is behind memory (the document was deleted and
// created again), d is reloaded from the store instead. It is called with
// sem held; failures are logged, and d stays as it was.
func (a *Authority) catchUp(ctx context.Context, d *document) {
	head, err := a.store.Load(ctx, d.id)
	if errors.Is(err, store.ErrNotFound) {
		a.remove(d)
		return
	}
	if err != nil {
		a.log.Warn("collab: catching up with the store failed", "doc", d.id, "err", err)
		return
	}
	st := d.state()
	switch {
	case head.Version == st.version:
		if a.swapper == nil || head.MetaSeq != st.metaSeq {
			comments, err := decodeMeta(head.Meta)
			if err != nil {
				a.log.Warn("collab: catching up with the store failed", "doc", d.id, "err", fmt.Errorf("meta: %w", err))
				return
			}
			if a.swapper != nil || comments.version > st.comments.version ||
				comments.version == st.comments.version && !comments.equal(st.comments) {
				st.comments, st.metaSeq = comments, head.MetaSeq
				d.publish(st)
			}
		}
		a.noteSnapshot(d, head.Snapshot.Version)
		return
	case head.Version > st.version:
		next, err := a.replay(ctx, d.id, st, head)
		if err == nil {
			d.publish(next)
			a.noteSnapshot(d, head.Snapshot.Version)
			a.maybeSnapshot(d)
			return
		}
		if errors.Is(err, store.ErrNotFound) {
			a.remove(d)
			return
		}
		a.log.Info("collab: catching up step by step failed, reloading", "doc", d.id, "err", err)
	}
	st, snapVer, err := a.loadState(ctx, d.id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			a.remove(d)
		} else {
			a.log.Warn("collab: reloading from the store failed", "doc", d.id, "err", err)
		}
		return
	}
	d.publish(st)
	d.mu.Lock()
	d.snapVer = snapVer
	d.mu.Unlock()
	a.maybeSnapshot(d)
}

// replay returns st brought to head by the steps after st.version read
// from the store, with the head's comments: with a store.MetaSwapper
// always, with another store unless they are older than st's.
func (a *Authority) replay(ctx context.Context, id string, st docState, head store.Head) (docState, error) {
	if head.Schema != st.schemaName {
		return st, fmt.Errorf("the schema changed from %q to %q", st.schemaName, head.Schema)
	}
	comments, err := decodeMeta(head.Meta)
	if err != nil {
		return st, fmt.Errorf("meta: %w", err)
	}
	stored, err := a.store.Steps(ctx, id, st.version, head.Version)
	if err != nil {
		return st, fmt.Errorf("steps after %d: %w", st.version, err)
	}
	if int64(len(stored)) != head.Version-st.version {
		return st, fmt.Errorf("the store returned %d steps after version %d, want %d", len(stored), st.version, head.Version-st.version)
	}
	added := make([]StepRecord, len(stored))
	for i, s := range stored {
		if v := st.version + int64(i) + 1; s.Version != v {
			return st, fmt.Errorf("the store returned step %d where %d was due", s.Version, v)
		}
		added[i] = StepRecord{JSON: s.JSON, ClientID: s.ClientID}
	}
	node, err := replaySteps(st.node, stored, added)
	if err != nil {
		return st, err
	}
	st.node = node
	st.version = head.Version
	st.steps = appendHistory(st.steps, added, a.cfg.History)
	st.metaSeq = head.MetaSeq
	if a.swapper != nil || comments.version >= st.comments.version {
		st.comments = comments
	} else {
		// A store that does not arbitrate the metadata let another
		// writer's steps carry comments older than ours: keep ours,
		// mapped, so that the comment version never goes back; the next
		// comment event of either writer makes them agree again.
		maps := make([]*transform.StepMap, len(added))
		for i, r := range added {
			maps[i] = r.Map
		}
		st.comments, _ = st.comments.mapThrough(maps)
		a.log.Warn("collab: another writer's comments are older than ours: kept ours", "doc", id,
			"commentVersion", st.comments.version, "store", comments.version)
	}
	return st, nil
}

// noteSnapshot records that the store holds a snapshot of d at version.
func (a *Authority) noteSnapshot(d *document, version int64) {
	d.mu.Lock()
	d.snapVer = max(d.snapVer, version)
	d.mu.Unlock()
}

// snapshot saves a snapshot of d when it moved on since the latest one.
func (a *Authority) snapshot(ctx context.Context, d *document) error {
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	d.mu.Lock()
	st, js := d.st, d.docJSON
	skip := d.deleted || st.version <= d.snapVer
	d.mu.Unlock()
	if skip {
		return nil
	}
	if js == nil {
		js = st.node.AppendJSON(nil)
	}
	snap := store.Snapshot{Version: st.version, Doc: js}
	if err := a.store.SaveSnapshot(ctx, d.id, snap, a.cfg.KeepSteps); err != nil {
		return err
	}
	d.mu.Lock()
	d.snapVer = max(d.snapVer, st.version)
	if d.docJSON == nil && d.st.node == st.node {
		d.docJSON = js
	}
	d.mu.Unlock()
	return nil
}

// maybeSnapshot starts a background snapshot of d when it is
// SnapshotEvery steps past the latest one and none is running.
func (a *Authority) maybeSnapshot(d *document) {
	d.mu.Lock()
	start := !d.snapping && !d.deleted && d.st.version-d.snapVer >= int64(a.cfg.SnapshotEvery)
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
// once), and sets the Map and Size of recs[i] for each steps[i]. Its error
// names the version of the step that failed.
func replaySteps(node *model.Node, steps []store.Step, recs []StepRecord) (*model.Node, error) {
	node, err := apply.Steps(node, len(steps), func(i int) []byte { return steps[i].JSON }, apply.StepOptions{},
		func(i int, step transform.Step, _, after *model.Node) error {
			recs[i].Map, recs[i].Size = step.GetMap(), after.Content.Size()
			return nil
		})
	var se *apply.StepError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("replaying step %d: %w", steps[se.Index].Version, se.Err)
	}
	return node, err
}
