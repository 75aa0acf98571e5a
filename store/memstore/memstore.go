// Package memstore is an in-memory store.Store for tests and for running
// pmauthority without a disk. Nothing survives the process; otherwise it
// behaves like the durable backends and passes the same suite
// (store/storetest). Byte slices are copied on the way in and out, so that
// callers can neither change stored data nor see later changes.
package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// Store is an in-memory store.Store, store.MetaSwapper and
// store.Notifier: several Authorities over one Store see each other's
// changes. The zero value is
// not usable: call New.
type Store struct {
	mu   sync.RWMutex
	docs map[string]*doc
	// tombs holds the last version of each deleted document, by id.
	tombs  map[string]int64
	closed bool
	now    func() time.Time

	notes notifier
}

// doc is one document: steps holds versions oldest+1 … version in order,
// entries the metadata entries metaBase+1 … metaSeq.
type doc struct {
	schema      string
	version     int64
	oldest      int64
	meta        []byte // the metadata base
	metaVersion int64
	metaBase    int64
	metaSeq     int64
	entries     []store.MetaEntry
	// snaps are the kept snapshots (Doc only), oldest first: the last is
	// the latest.
	snaps       []store.Snapshot
	checkpoints []store.Checkpoint
	steps       []store.Step
	updated     time.Time
}

// latest returns the latest snapshot.
func (d *doc) latest() store.Snapshot { return d.snaps[len(d.snaps)-1] }

// New returns an empty store.
func New() *Store {
	return &Store{docs: make(map[string]*doc), tombs: make(map[string]int64), now: time.Now}
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.MetaSwapper = (*Store)(nil)
	_ store.Notifier    = (*Store)(nil)
	_ store.Sizer       = (*Store)(nil)
)

// check returns the error a method answers before looking at its
// arguments: ErrClosed, then the context's error. It is called with s.mu
// held, as is lookup.
func (s *Store) check(ctx context.Context) error {
	if s.closed {
		return store.ErrClosed
	}
	return ctx.Err()
}

// lookup returns the document id, or check's error, or ErrNotFound.
func (s *Store) lookup(ctx context.Context, id string) (*doc, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	d, ok := s.docs[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	return d, nil
}

// Create implements store.Store.
func (s *Store) Create(ctx context.Context, id, schema string, docJSON, meta []byte) error {
	defer s.notes.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	if _, ok := s.docs[id]; ok {
		return fmt.Errorf("store: create %q: %w", id, store.ErrExists)
	}
	first := int64(0)
	if last, ok := s.tombs[id]; ok {
		first = last + 1
	}
	s.docs[id] = &doc{
		schema:      schema,
		version:     first,
		oldest:      first,
		meta:        clone(meta),
		metaVersion: first,
		snaps:       []store.Snapshot{{Version: first, Doc: clone(docJSON)}},
		updated:     s.now(),
	}
	s.notes.queue(store.Notice{ID: id, Version: first})
	return nil
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, id string) (store.Head, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, err)
	}
	return d.head(), nil
}

// LoadHead implements store.HeadLoader.
func (s *Store) LoadHead(ctx context.Context, id string) (store.Head, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return store.Head{}, fmt.Errorf("store: load %q: %w", id, err)
	}
	h := d.head()
	h.Meta, h.Snapshot.Doc = nil, nil
	return h, nil
}

// head returns a copy of d's head. It is called with s.mu held.
func (d *doc) head() store.Head {
	return store.Head{
		Schema:      d.schema,
		Version:     d.version,
		Meta:        clone(d.meta),
		MetaVersion: d.metaVersion,
		MetaBase:    d.metaBase,
		MetaSeq:     d.metaSeq,
		Snapshot:    store.Snapshot{Version: d.latest().Version, Doc: clone(d.latest().Doc)},
		Oldest:      d.oldest,
	}
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

// append is Append, and AppendIf when metaSeq is not negative.
func (s *Store) append(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) error {
	defer s.notes.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return fmt.Errorf("store: append %q at %d: %w", id, base, err)
	}
	if base != d.version {
		return fmt.Errorf("store: append %q at %d (latest %d): %w", id, base, d.version, store.ErrConflict)
	}
	if metaSeq >= 0 && metaSeq != d.metaSeq {
		return fmt.Errorf("store: append %q at %d with metadata %d (latest %d): %w", id, base, metaSeq, d.metaSeq, store.ErrConflict)
	}
	now := s.now()
	for i, st := range steps {
		t := st.Time
		if t.IsZero() {
			t = now
		}
		d.steps = append(d.steps, store.Step{
			Version:  base + 1 + int64(i),
			JSON:     clone(st.JSON),
			ClientID: clone(st.ClientID),
			Author:   st.Author,
			Time:     t,
			Commit:   record(st.Commit),
		})
	}
	d.version += int64(len(steps))
	if meta != nil {
		d.metaSeq++
		d.entries = append(d.entries, store.MetaEntry{Seq: d.metaSeq, Version: d.version, JSON: clone(meta)})
	}
	d.updated = now
	s.notes.queue(store.Notice{ID: id, Version: d.version, MetaOnly: len(steps) == 0})
	return nil
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, id string, from, to int64) ([]store.Step, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: steps of %q: %w", id, err)
	}
	from = max(from, 0)
	to = min(to, d.version)
	if to <= from {
		return nil, nil
	}
	if from < d.oldest {
		return nil, fmt.Errorf("store: steps of %q after %d (oldest %d): %w", id, from, d.oldest, store.ErrCompacted)
	}
	// d.steps[0] has version d.oldest+1.
	out := make([]store.Step, 0, to-from)
	for _, st := range d.steps[from-d.oldest : to-d.oldest] {
		st.JSON = clone(st.JSON)
		st.ClientID = clone(st.ClientID)
		st.Commit = clone(st.Commit)
		out = append(out, st)
	}
	return out, nil
}

// StepSizes implements store.StepSizer.
func (s *Store) StepSizes(ctx context.Context, id string, from, to int64) ([]int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: step sizes of %q: %w", id, err)
	}
	from = max(from, 0)
	to = min(to, d.version)
	if to <= from {
		return nil, nil
	}
	if from < d.oldest {
		return nil, fmt.Errorf("store: step sizes of %q after %d (oldest %d): %w", id, from, d.oldest, store.ErrCompacted)
	}
	out := make([]int64, 0, to-from)
	for _, st := range d.steps[from-d.oldest : to-d.oldest] {
		out = append(out, int64(len(st.JSON)+len(st.ClientID)+len(st.Author)+len(st.Commit)))
	}
	return out, nil
}

// MetaEntries implements store.Store.
func (s *Store) MetaEntries(ctx context.Context, id string, from, to int64) ([]store.MetaEntry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: metadata entries of %q: %w", id, err)
	}
	from = max(from, 0)
	to = min(to, d.metaSeq)
	if to <= from {
		return nil, nil
	}
	if from < d.metaBase {
		return nil, fmt.Errorf("store: metadata entries of %q after %d (base %d): %w", id, from, d.metaBase, store.ErrCompacted)
	}
	// d.entries[0] is entry d.metaBase+1.
	out := make([]store.MetaEntry, 0, to-from)
	for _, e := range d.entries[from-d.metaBase : to-d.metaBase] {
		e.JSON = clone(e.JSON)
		out = append(out, e)
	}
	return out, nil
}

// SaveSnapshot implements store.Store.
func (s *Store) SaveSnapshot(ctx context.Context, id string, snap store.Snapshot, keep int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return fmt.Errorf("store: snapshot of %q at %d: %w", id, snap.Version, err)
	}
	if latest := d.latest().Version; snap.Version < latest || snap.Version > d.version {
		return fmt.Errorf("store: snapshot of %q at %d: outside [%d, %d]", id, snap.Version, latest, d.version)
	}
	if snap.Meta != nil && (snap.MetaSeq < 0 || snap.MetaSeq > d.metaSeq) {
		return fmt.Errorf("store: snapshot of %q at %d: metadata entry %d outside [0, %d]", id, snap.Version, snap.MetaSeq, d.metaSeq)
	}
	kept := store.Snapshot{Version: snap.Version, Doc: clone(snap.Doc)}
	if d.latest().Version == snap.Version {
		d.snaps[len(d.snaps)-1] = kept
	} else {
		d.snaps = append(d.snaps, kept)
	}
	if snap.Meta != nil && snap.MetaSeq >= d.metaBase && snap.Version >= d.metaVersion {
		d.meta, d.metaVersion = clone(snap.Meta), snap.Version
		// Copy the kept entries so that the dropped ones can be collected.
		d.entries = slices.Clone(d.entries[snap.MetaSeq-d.metaBase:])
		d.metaBase = snap.MetaSeq
	}
	if keep >= 0 {
		bound := min(snap.Version, d.version-keep, d.metaVersion)
		// The newest snapshot at or below bound: pruning stops there.
		i := len(d.snaps) - 1
		for i > 0 && d.snaps[i].Version > bound {
			i--
		}
		if cut := d.snaps[i].Version; cut > d.oldest && cut <= bound {
			// Copy the kept steps and snapshots so that the pruned ones
			// can be collected.
			d.steps = slices.Clone(d.steps[cut-d.oldest:])
			d.snaps = slices.Clone(d.snaps[i:])
			d.oldest = cut
		}
	}
	return nil
}

// SnapshotAt implements store.Store.
func (s *Store) SnapshotAt(ctx context.Context, id string, version int64) (store.Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, err)
	}
	best := store.Snapshot{Version: -1}
	for _, sn := range d.snaps {
		if sn.Version <= version && sn.Version > best.Version {
			best = sn
		}
	}
	for _, cp := range d.checkpoints {
		if cp.Version <= version && cp.Version > best.Version {
			best = store.Snapshot{Version: cp.Version, Doc: cp.Doc}
		}
	}
	if best.Version < 0 {
		return store.Snapshot{}, fmt.Errorf("store: snapshot of %q at %d: %w", id, version, store.ErrCompacted)
	}
	return store.Snapshot{Version: best.Version, Doc: clone(best.Doc)}, nil
}

// AddCheckpoint implements store.Store.
func (s *Store) AddCheckpoint(ctx context.Context, id string, cp store.Checkpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return fmt.Errorf("store: checkpoint %q of %q: %w", cp.Name, id, err)
	}
	if cp.Version < 0 || cp.Version > d.version {
		return fmt.Errorf("store: checkpoint %q of %q at %d: outside [0, %d]", cp.Name, id, cp.Version, d.version)
	}
	for _, c := range d.checkpoints {
		if c.Name == cp.Name {
			return fmt.Errorf("store: checkpoint %q of %q: %w", cp.Name, id, store.ErrExists)
		}
	}
	if cp.Time.IsZero() {
		cp.Time = s.now()
	}
	cp.Doc = clone(cp.Doc)
	for _, c := range d.checkpoints {
		if c.Version == cp.Version {
			cp.Doc = c.Doc // the copy of the first at this version
			break
		}
	}
	d.checkpoints = append(d.checkpoints, cp)
	return nil
}

// Size implements store.Sizer.
func (s *Store) Size(ctx context.Context, id string) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("store: size of %q: %w", id, err)
	}
	n := int64(len(d.meta))
	for _, st := range d.steps {
		n += int64(len(st.JSON) + len(st.ClientID) + len(st.Author) + len(st.Commit))
	}
	for _, e := range d.entries {
		n += int64(len(e.JSON))
	}
	for _, sn := range d.snaps {
		n += int64(len(sn.Doc))
	}
	versions := make(map[int64]bool, len(d.checkpoints))
	for _, cp := range d.checkpoints {
		n += int64(len(cp.Name) + len(cp.Author))
		if !versions[cp.Version] {
			versions[cp.Version] = true
			n += int64(len(cp.Doc))
		}
	}
	return n, nil
}

// Checkpoints implements store.Store.
func (s *Store) Checkpoints(ctx context.Context, id string) ([]store.Checkpoint, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints of %q: %w", id, err)
	}
	out := make([]store.Checkpoint, len(d.checkpoints))
	for i, cp := range d.checkpoints {
		cp.Doc = nil
		out[i] = cp
	}
	slices.SortFunc(out, compareCheckpoints)
	return out, nil
}

// compareCheckpoints orders checkpoints by version, then name.
func compareCheckpoints(a, b store.Checkpoint) int {
	if a.Version != b.Version {
		return cmp.Compare(a.Version, b.Version)
	}
	return strings.Compare(a.Name, b.Name)
}

// List implements store.Store.
func (s *Store) List(ctx context.Context) ([]store.DocInfo, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	out := make([]store.DocInfo, 0, len(s.docs))
	for id, d := range s.docs {
		out = append(out, store.DocInfo{ID: id, Schema: d.schema, Version: d.version, Updated: d.updated})
	}
	slices.SortFunc(out, func(a, b store.DocInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Delete implements store.Store. The last version of the document is
// kept for as long as the Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	defer s.notes.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(ctx, id)
	if err != nil {
		return fmt.Errorf("store: delete %q: %w", id, err)
	}
	s.tombs[id] = d.version
	delete(s.docs, id)
	s.notes.queue(store.Notice{ID: id, Version: -1})
	return nil
}

// Close implements store.Store. It drops every document; a second Close
// returns store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.closed = true
	s.docs, s.tombs = nil, nil
	return nil
}

// Subscribe implements store.Notifier. fn is called after every
// committed Create, Append and Delete, once the Store's lock is released,
// on the goroutine of one of the committing calls, with the notices of
// all documents in commit order; fn may call the Store. A call of fn
// already running may end after cancel returns; none starts afterwards.
func (s *Store) Subscribe(fn func(store.Notice)) (cancel func()) {
	return s.notes.subscribe(fn)
}

// clone copies b, keeping nil as nil.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// record returns a copy of a step's commit record, nil for an empty one.
func record(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return clone(b)
}
