package collab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// DocAt returns the document id at version, for any version from the
// store's oldest kept step on (store.Head.Oldest) up to the current one,
// and at every checkpoint's version: the newest snapshot (or checkpoint)
// at or below version with the steps after it replayed, so that its cost
// is at most Config.SnapshotEvery steps applied after decoding one
// snapshot. It fails with ErrInvalidVersion for a negative version or
// one ahead of the document's, ErrHistoryGone for a version whose steps
// are pruned, and ErrNotFound for an unknown document (it never creates
// one). A loaded document at version is answered from memory.
//
// The memory it holds while it reads (the snapshot, the steps, the
// document rebuilt) is reserved in the memory budget; it fails with an
// error matching ErrOverloaded when that does not fit.
func (a *Authority) DocAt(ctx context.Context, id string, version int64) (*model.Node, error) {
	r := a.Reserve(fmt.Sprintf("%q at version %d", id, version))
	defer r.Release()
	return a.DocAtReserved(ctx, id, version, r)
}

// DocAtReserved is DocAt with the memory of the document it rebuilds
// from the store held in r when it returns, for a caller that goes on
// using it (an answer being written): the caller releases r when done. A
// document answered from memory adds nothing to r.
func (a *Authority) DocAtReserved(ctx context.Context, id string, version int64, r *Reservation) (*model.Node, error) {
	if a.isClosed() {
		return nil, ErrClosed
	}
	if version < 0 {
		return nil, &versionError{version: version}
	}
	a.mu.Lock()
	d := a.docs[id]
	loaded := d != nil && d.loaded
	a.mu.Unlock()
	if loaded {
		d.mu.Lock()
		st, deleted := d.st, d.deleted
		d.mu.Unlock()
		if !deleted && st.version == version {
			return st.node, nil
		}
	}
	base := r.Size()
	for try := 0; ; try++ {
		r.Resize(base)
		node, err := a.docAt(ctx, id, version, r)
		// A snapshot by another writer may prune steps between the reads.
		if errors.Is(err, store.ErrCompacted) && try < 3 {
			continue
		}
		if errors.Is(err, store.ErrCompacted) {
			return nil, fmt.Errorf("collab: %q at version %d: %w", id, version, ErrHistoryGone)
		}
		return node, err
	}
}

// docAt is DocAt from the store, growing r by the memory it holds; its
// error matches store.ErrCompacted when steps were pruned while it read
// them.
func (a *Authority) docAt(ctx context.Context, id string, version int64, r *Reservation) (*model.Node, error) {
	head, schema, err := a.head(ctx, id)
	if err != nil {
		return nil, err
	}
	if version > head.Version {
		return nil, &versionError{version: version}
	}
	snap, err := a.store.SnapshotAt(ctx, id, version)
	if errors.Is(err, store.ErrCompacted) {
		return nil, fmt.Errorf("collab: %q at version %d: %w", id, version, ErrHistoryGone)
	}
	if err != nil {
		return nil, storeFailed(err, "collab: snapshot of %q at %d", id, version)
	}
	if snap.Version < version && snap.Version < head.Oldest {
		return nil, fmt.Errorf("collab: %q at version %d (oldest kept %d): %w", id, version, head.Oldest, ErrHistoryGone)
	}
	if limit := a.maxDocMemory(); limit > 0 && int64(len(snap.Doc)) > limit {
		return nil, fmt.Errorf("collab: %q: snapshot at version %d: %w", id, snap.Version, a.docMemoryError(int64(len(snap.Doc))))
	}
	// The snapshot and the nodes made of it (about as many bytes again).
	base := r.Size()
	if err := r.Resize(base + 2*int64(len(snap.Doc))); err != nil {
		return nil, err
	}
	node, err := schema.NodeFromJSON(snap.Doc)
	if err != nil {
		return nil, fmt.Errorf("collab: %q: snapshot at version %d: %w", id, snap.Version, err)
	}
	snap.Doc = nil
	if err := r.Resize(base + node.MemSize()); err != nil {
		return nil, err
	}
	if snap.Version == version {
		return node, nil
	}
	err = a.readSteps(ctx, id, snap.Version, version, 0, r.what, nil, func(steps []store.Step) (bool, error) {
		var err error
		if node, err = a.replaySteps(node, steps, make([]StepRecord, len(steps)), nil); err != nil {
			return false, fmt.Errorf("collab: %q at version %d: %w", id, version, err)
		}
		return true, r.Resize(base + node.MemSize())
	})
	if err != nil {
		return nil, err
	}
	return node, nil
}

// head returns the store's head of id and its schema.
func (a *Authority) head(ctx context.Context, id string) (store.Head, *model.Schema, error) {
	head, err := a.loadHead(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return head, nil, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return head, nil, storeFailed(err, "collab: load %q", id)
	}
	schema, ok := a.cfg.Schemas(head.Schema)
	if !ok {
		return head, nil, fmt.Errorf("collab: %q: unknown schema %q", id, head.Schema)
	}
	return head, schema, nil
}

// StepPage is a page of a document's step log (StepLog).
type StepPage struct {
	// Steps are the steps, oldest first, with their version, client id,
	// author and time.
	Steps []store.Step
	// Version is the document's latest version, and Oldest the version
	// before its oldest kept step.
	Version, Oldest int64
}

// StepLog returns the steps of the document id after version from, as the
// store keeps them: at most limit, and no more than maxBytes of them
// (their JSON, client ids, authors and commit records; 0 means 4 MiB) besides the first,
// which is there however large; a negative from means the oldest kept
// (StepPage.Oldest: 0 unless steps were pruned or the document was
// created again after a Delete). The memory of the steps returned is held
// in r, which the caller releases once done with them (nil: it is
// released when StepLog returns). The store is read in parts, each
// reserved in the memory budget before it is read (with a
// store.StepSizer). It fails with ErrInvalidVersion for a from ahead of
// the document's, ErrHistoryGone when the steps after from are pruned,
// ErrNotFound for an unknown document, ErrInvalidRequest for a limit
// below 1, and an error matching ErrOverloaded when the steps do not fit
// in the memory budget.
func (a *Authority) StepLog(ctx context.Context, id string, from int64, limit int, maxBytes int64, r *Reservation) (StepPage, error) {
	if a.isClosed() {
		return StepPage{}, ErrClosed
	}
	if limit < 1 {
		return StepPage{}, invalidf("limit %d is not positive", limit)
	}
	if maxBytes <= 0 {
		maxBytes = stepChunkBytes
	}
	head, _, err := a.head(ctx, id)
	if err != nil {
		return StepPage{}, err
	}
	if from < 0 {
		from = head.Oldest
	}
	if from > head.Version {
		return StepPage{}, &versionError{version: from}
	}
	if from < head.Oldest {
		return StepPage{}, fmt.Errorf("collab: steps of %q after %d (oldest kept %d): %w", id, from, head.Oldest, ErrHistoryGone)
	}
	what := fmt.Sprintf("the steps of %q after %d", id, from)
	if r == nil {
		r = a.Reserve(what)
		defer r.Release()
	}
	base := r.Size()
	steps := []store.Step{}
	bytes := int64(0)
	err = a.readSteps(ctx, id, from, min(head.Version, from+int64(limit)), maxBytes, what, nil, func(part []store.Step) (bool, error) {
		for _, s := range part {
			n := stepSize(s)
			if len(steps) > 0 && bytes+n > maxBytes {
				return false, nil
			}
			if err := r.Grow(n + stepMem); err != nil {
				return false, err
			}
			steps = append(steps, s)
			bytes += n
		}
		return true, nil
	})
	if errors.Is(err, store.ErrCompacted) {
		err = fmt.Errorf("collab: steps of %q after %d: %w", id, from, ErrHistoryGone)
	}
	if err != nil {
		r.Resize(base)
		return StepPage{}, err
	}
	return StepPage{Steps: steps, Version: head.Version, Oldest: head.Oldest}, nil
}

// stepSize returns the bytes of a stored step: its JSON, client id,
// author and commit record (as store.StepSizer counts them).
func stepSize(s store.Step) int64 {
	return int64(len(s.JSON) + len(s.ClientID) + len(s.Author) + len(s.Commit))
}

// MaxCheckpointName is the longest checkpoint name, in bytes.
const MaxCheckpointName = 256

// Checkpoint records the current version of the document id under name,
// by author for user, and returns it (without its Doc). The store keeps
// the document at that version from pruning (store.AddCheckpoint), so
// that DocAt and Restore reach it however old it gets; checkpoints at one
// version share one copy. It fails with ErrCheckpointExists when the
// document has a checkpoint of that name, a *LimitError when it has
// Config.MaxCheckpoints already, a *QuotaError when the copy would go
// over Config.MaxDocStorage or user's Config.MaxClientStorage,
// ErrInvalidRequest for a name that is empty, longer than
// MaxCheckpointName bytes or not UTF-8, and ErrNotFound for an unknown
// document.
func (a *Authority) Checkpoint(ctx context.Context, id, user, name, author string) (store.Checkpoint, error) {
	switch {
	case name == "":
		return store.Checkpoint{}, invalidf("empty checkpoint name")
	case len(name) > MaxCheckpointName:
		return store.Checkpoint{}, invalidf("checkpoint name of %d bytes (at most %d)", len(name), MaxCheckpointName)
	case !utf8.ValidString(name):
		return store.Checkpoint{}, invalidf("checkpoint name not UTF-8")
	}
	if a.isClosed() {
		return store.Checkpoint{}, ErrClosed
	}
	list, err := a.Checkpoints(ctx, id)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if n := len(list); n >= a.cfg.MaxCheckpoints {
		return store.Checkpoint{}, &LimitError{What: "checkpoints (Limits.MaxCheckpoints)", Limit: a.cfg.MaxCheckpoints, Value: n + 1}
	}
	head, _, err := a.head(ctx, id)
	if err != nil {
		return store.Checkpoint{}, err
	}
	cp := store.Checkpoint{Name: name, Version: head.Version, Author: author, Time: a.now()}
	add := int64(len(name) + len(author))
	// A checkpoint at this version has the document, for this one too
	// (store.AddCheckpoint).
	if !slices.ContainsFunc(list, func(c store.Checkpoint) bool { return c.Version == cp.Version }) {
		node, err := a.DocAt(ctx, id, head.Version)
		if err != nil {
			return store.Checkpoint{}, err
		}
		cp.Doc = node.AppendJSON(nil)
		add += int64(len(cp.Doc))
	}
	if err := a.allowCheckpoint(ctx, id, user, add); err != nil {
		return store.Checkpoint{}, err
	}
	err = a.store.AddCheckpoint(ctx, id, cp)
	switch {
	case errors.Is(err, store.ErrExists):
		return store.Checkpoint{}, fmt.Errorf("collab: checkpoint %q of %q: %w", name, id, ErrCheckpointExists)
	case errors.Is(err, store.ErrNotFound):
		return store.Checkpoint{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	case err != nil:
		return store.Checkpoint{}, storeFailed(err, "collab: checkpoint %q of %q", name, id)
	}
	a.mu.Lock()
	d := a.docs[id]
	a.mu.Unlock()
	if d != nil {
		d.storedMore(add)
	}
	cp.Doc = nil
	return cp, nil
}

// allowCheckpoint checks the storage quotas for a checkpoint of the
// document id that adds add bytes to the store, for user (allowStorage),
// with the document's size as the store tells it now.
func (a *Authority) allowCheckpoint(ctx context.Context, id, user string, add int64) error {
	var stored int64
	if a.quota.sizer != nil {
		var err error
		stored, err = a.quota.sizer.Size(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("collab: %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return storeFailed(err, "collab: size of %q", id)
		}
	}
	return a.allowStorage(id, user, stored, add)
}

// Checkpoints returns the checkpoints of the document id, ordered by
// version, then name (ErrNotFound for an unknown document).
func (a *Authority) Checkpoints(ctx context.Context, id string) ([]store.Checkpoint, error) {
	if a.isClosed() {
		return nil, ErrClosed
	}
	list, err := a.store.Checkpoints(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, storeFailed(err, "collab: checkpoints of %q", id)
	}
	if list == nil {
		list = []store.Checkpoint{}
	}
	return list, nil
}

// CheckpointVersion returns the version of the checkpoint name of the
// document id (ErrNotFound when there is none).
func (a *Authority) CheckpointVersion(ctx context.Context, id, name string) (int64, error) {
	list, err := a.Checkpoints(ctx, id)
	if err != nil {
		return 0, err
	}
	for _, cp := range list {
		if cp.Name == name {
			return cp.Version, nil
		}
	}
	return 0, fmt.Errorf("collab: checkpoint %q of %q: %w", name, id, ErrNotFound)
}

// RestoreClientID is the client id of the steps that Restore submits.
var RestoreClientID = ClientID(`"restore"`)

// restoreTries bounds how often Restore submits again when editors'
// submissions keep winning the race for the next version.
const restoreTries = 20

// Restore makes the document id equal to what it was at version again,
// as a new submission by author (with RestoreClientID) for user: one
// replace step of the part that differs, which every client receives like
// any other step, so that history stays linear and nobody reloads. When
// editors' steps come first, it diffs against the newer document and
// submits again. It returns the submission's Result (the current version
// when the document is already equal). Its errors are DocAt's and
// Submit's (a BeforeSubmit hook sees the step).
func (a *Authority) Restore(ctx context.Context, id, user string, version int64, author string) (Result, error) {
	target, err := a.DocAt(ctx, id, version)
	if err != nil {
		return Result{}, err
	}
	for try := 0; ; try++ {
		st, err := a.Get(ctx, id, user)
		if err != nil {
			return Result{}, err
		}
		step, err := restoreStep(st.Doc, target)
		if err != nil {
			return Result{}, fmt.Errorf("collab: restore %q to version %d: %w", id, version, err)
		}
		if step == nil {
			return Result{Version: st.Version, CommentVersion: st.CommentVersion}, nil
		}
		res, err := a.submit(ctx, id, user, Submission{
			Version:  st.Version,
			Steps:    [][]byte{step.AppendJSON(nil)},
			ClientID: RestoreClientID,
			Author:   author,
		}, true)
		if errors.Is(err, ErrConflict) && try < restoreTries {
			continue
		}
		return res, err
	}
}

// restoreStep returns a replace step that makes cur equal to target: the
// range between their common start and end replaced with target's, or,
// should that not give target, the whole content replaced. It is nil when
// they are equal.
func restoreStep(cur, target *model.Node) (transform.Step, error) {
	start, differ := cur.Content.FindDiffStart(target.Content, 0)
	if !differ {
		return nil, nil
	}
	endA, endB, _ := cur.Content.FindDiffEnd(target.Content, cur.Content.Size(), target.Content.Size())
	// A common end overlapping the common start (repeated content, as in
	// "aa" to "a") is moved after it.
	if overlap := start - min(endA, endB); overlap > 0 {
		endA, endB = endA+overlap, endB+overlap
	}
	if slice, err := target.Slice(start, endB, false); err == nil {
		step := &transform.ReplaceStep{From: start, To: endA, Slice: slice}
		if doc, err := step.Apply(cur); err == nil && doc.Eq(target) {
			return step, nil
		}
	}
	step := &transform.ReplaceStep{From: 0, To: cur.Content.Size(), Slice: model.NewSlice(target.Content, 0, 0)}
	doc, err := step.Apply(cur)
	if err != nil {
		return nil, err
	}
	if !doc.Eq(target) {
		return nil, errors.New("replacing the whole content does not give the version's document")
	}
	return step, nil
}

// AuthorRange is a range of a document and who inserted it (Authors).
type AuthorRange struct {
	// From and To are positions in the document (From < To).
	From, To int
	// Version is the version of the step that inserted the range, or
	// Authorship.Oldest for content older than the kept steps.
	Version int64
	// Author is the principal that submitted the step ("" when there was
	// none, and for content older than the kept steps).
	Author string
	// ClientID is the submitting client's id (nil for content older than
	// the kept steps).
	ClientID ClientID
}

// Authorship is who inserted each part of a document (Authors).
type Authorship struct {
	// Version is the version of the document described.
	Version int64
	// Oldest is the version from which on steps were read: content that
	// was there before (the initial document, or what pruned steps made)
	// is attributed to no one at version Oldest.
	Oldest int64
	// Ranges cover the document's content, [0, its size], in order;
	// adjacent ranges of one step are merged.
	Ranges []AuthorRange
}

// Authors returns who inserted each part of the current document id: the
// kept steps are read in order, and the ranges found so far are mapped
// through each step's map (as transform.Mapping maps positions), the
// ranges a step's map replaces being attributed to that step. A replace
// step inserts its slice; a replaceAround step inserts its slice's open
// and close tokens around the content it keeps (that content keeps its
// authors); mark and attribute steps insert nothing, so formatting does
// not change authorship. Content older than the kept steps has no author.
// It fails with ErrNotFound for an unknown document.
func (a *Authority) Authors(ctx context.Context, id string) (Authorship, error) {
	if a.isClosed() {
		return Authorship{}, ErrClosed
	}
	for try := 0; ; try++ {
		au, err := a.authors(ctx, id)
		if errors.Is(err, store.ErrCompacted) && try < 3 {
			continue
		}
		if errors.Is(err, store.ErrCompacted) {
			return Authorship{}, fmt.Errorf("collab: authors of %q: %w", id, ErrHistoryGone)
		}
		return au, err
	}
}

func (a *Authority) authors(ctx context.Context, id string) (Authorship, error) {
	head, schema, err := a.head(ctx, id)
	if err != nil {
		return Authorship{}, err
	}
	r := a.Reserve(fmt.Sprintf("the authors of %q", id))
	defer r.Release()
	doc, err := a.DocAtReserved(ctx, id, head.Version, r)
	if err != nil {
		return Authorship{}, err
	}
	// Of each step, its map and who made it; the steps are read in parts.
	type made struct {
		version  int64
		author   string
		clientID ClientID
	}
	var maps []*transform.StepMap
	var steps []made
	size := doc.Content.Size() // the size at Oldest, once the steps' changes are taken back
	err = a.readSteps(ctx, id, head.Oldest, head.Version, 0, r.what, nil, func(part []store.Step) (bool, error) {
		held := int64(0)
		for _, s := range part {
			step, err := transform.StepFromJSON(schema, s.JSON)
			if err != nil {
				return false, fmt.Errorf("collab: %q: step %d: %w", id, s.Version, err)
			}
			m := step.GetMap()
			m.ForEach(func(oldStart, oldEnd, newStart, newEnd int) {
				size -= (newEnd - newStart) - (oldEnd - oldStart)
				held += 32
			})
			maps = append(maps, m)
			steps = append(steps, made{s.Version, s.Author, s.ClientID})
			held += stepMem + int64(len(s.Author)+len(s.ClientID))
		}
		return true, r.Grow(held)
	})
	if err != nil {
		return Authorship{}, err
	}
	var spans []span
	if size > 0 {
		spans = append(spans, span{from: 0, to: size, step: -1})
	}
	for i, m := range maps {
		spans = mapSpans(spans, m, i)
	}
	au := Authorship{Version: head.Version, Oldest: head.Oldest, Ranges: make([]AuthorRange, 0, len(spans))}
	pos := 0
	for _, sp := range spans {
		if sp.from != pos {
			return Authorship{}, fmt.Errorf("collab: authors of %q: a gap or overlap at %d", id, pos)
		}
		pos = sp.to
		r := AuthorRange{From: sp.from, To: sp.to, Version: head.Oldest}
		if sp.step >= 0 {
			s := steps[sp.step]
			r.Version, r.Author, r.ClientID = s.version, s.author, s.clientID
		}
		au.Ranges = append(au.Ranges, r)
	}
	if pos != doc.Content.Size() {
		return Authorship{}, fmt.Errorf("collab: authors of %q: the ranges end at %d, the document at %d", id, pos, doc.Content.Size())
	}
	return au, nil
}

// span is a range of a document inserted by the step of index step (-1:
// before the steps read).
type span struct {
	from, to int
	step     int
}

// mapSpans returns spans, ordered and adjacent, mapped through m, the map
// of the step of index step, with the ranges m inserts attributed to it.
// A span is first cut where a changed range starts or ends inside it,
// so that no span covers what m inserts.
func mapSpans(spans []span, m *transform.StepMap, step int) []span {
	type change struct{ oldStart, oldEnd, newStart, newEnd int }
	var changes []change
	m.ForEach(func(oldStart, oldEnd, newStart, newEnd int) {
		changes = append(changes, change{oldStart, oldEnd, newStart, newEnd})
	})
	if len(changes) == 0 {
		return spans
	}
	out := make([]span, 0, len(spans)+3*len(changes))
	add := func(sp span) {
		if sp.from >= sp.to {
			return
		}
		if n := len(out); n > 0 && out[n-1].step == sp.step && out[n-1].to == sp.from {
			out[n-1].to = sp.to
			return
		}
		out = append(out, sp)
	}
	c := 0 // the next change to insert
	insertBefore := func(pos int) {
		for ; c < len(changes) && changes[c].newStart <= pos; c++ {
			add(span{from: changes[c].newStart, to: changes[c].newEnd, step: step})
		}
	}
	// piece adds the part from–to of a span (in the old document), unless
	// a change replaces it.
	piece := func(from, to, step int) {
		for _, ch := range changes {
			if ch.oldStart <= from && to <= ch.oldEnd {
				return
			}
		}
		sp := span{from: m.Map(from, 1), to: m.Map(to, -1), step: step}
		insertBefore(sp.from)
		add(sp)
	}
	for _, sp := range spans {
		// The span's pieces between the changes' bounds.
		from := sp.from
		for _, ch := range changes {
			for _, cut := range [2]int{ch.oldStart, ch.oldEnd} {
				if from < cut && cut < sp.to {
					piece(from, cut, sp.step)
					from = cut
				}
			}
		}
		piece(from, sp.to, sp.step)
	}
	insertBefore(int(^uint(0) >> 1))
	return out
}
