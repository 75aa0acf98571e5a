package collab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// Submission is what a client sends: steps made on the document at
// Version, and comment events.
type Submission struct {
	// Version is the version the steps were made on.
	Version int64
	// Steps are the steps' JSON forms.
	Steps [][]byte
	// ClientID identifies the client in Events (required with steps).
	ClientID ClientID
	// Comments are comment events, applied after the steps.
	Comments []CommentEvent
	// Author is the principal submitting (its id, as the server's policy
	// authenticated it; "" when anonymous). It is given to the hooks, and
	// recorded as the author of the steps and of the comments created.
	Author string
	// OwnComments restricts the comment deletes to the comments that
	// Author created: deleting another's comment (or an anonymous one) is
	// refused with an error matching ErrForbidden. The server sets it
	// for principals that may comment but not edit.
	OwnComments bool
}

// Result is the answer to an accepted submission.
type Result struct {
	Version, CommentVersion int64
}

// Submit applies a client's submission to the document id and returns
// its new version and comment version, once the change is durable.
//
// The version is checked first: a version ahead of the document (or
// negative) fails with ErrInvalidVersion, an older one with ErrConflict.
// Then each step is decoded with the document's schema and applied; a step
// that fails either way gives a *transform.StepError naming it. Comments
// are mapped through the steps, then the comment events are applied: a
// created comment's range refers to the document after the steps. A
// submission without steps at the current version changes only comments
// (or nothing) and keeps the version.
//
// Submit is all or nothing: when it fails, neither the document nor the
// store changed. Submissions to one document are applied one at a time;
// submissions to different documents proceed in parallel.
//
// A submission that can only conflict does not wait for those before it:
// one at a version older than the document's fails with ErrConflict at
// once, and one at the version that a store append in flight started from
// waits for that append alone, and fails with ErrConflict as soon as it
// is durable and published. So ErrConflict always means that Events has
// newer steps to show: should the append fail after all, nothing changed,
// and the submission goes on as if it had not been in flight. Likewise,
// when the store is a store.MetaSwapper shared with other writers and the
// append conflicts on the metadata alone (another writer's comment events
// at the same version), the submission's comment events are applied again
// to the latest comments and appended again, a few times at most.
//
// A submission with steps under a client id that belongs to another
// principal on the document (or, anonymous, to another user) fails with
// a *ClientIDError, as does one under RestoreClientID (see HoldClientID
// for how long a client id belongs to whom).
func (a *Authority) Submit(ctx context.Context, id, user string, s Submission) (Result, error) {
	return a.submit(ctx, id, user, s, false)
}

// submit is Submit; a server submission (Restore's, under
// RestoreClientID) is not checked against the owners of client ids.
func (a *Authority) submit(ctx context.Context, id, user string, s Submission, server bool) (Result, error) {
	if n := len(s.Steps); n > a.cfg.MaxSteps {
		return Result{}, &LimitError{What: "steps", Limit: a.cfg.MaxSteps, Value: n}
	}
	if n := len(s.Comments); n > a.cfg.MaxSteps {
		return Result{}, &LimitError{What: "comment events", Limit: a.cfg.MaxSteps, Value: n}
	}
	for i, e := range s.Comments {
		if len(e.Text) > a.cfg.MaxCommentText {
			return Result{}, &LimitError{What: fmt.Sprintf("bytes in the text of comment event %d", i), Limit: a.cfg.MaxCommentText, Value: len(e.Text)}
		}
	}
	// The comments created are the submitter's, whatever the events say.
	if slices.ContainsFunc(s.Comments, func(e CommentEvent) bool { return e.Author != s.Author && e.Type == CommentCreate }) {
		events := slices.Clone(s.Comments)
		for i := range events {
			if events[i].Type == CommentCreate {
				events[i].Author = s.Author
			}
		}
		s.Comments = events
	}
	deleter := commentDeleter{author: s.Author, any: !s.OwnComments}
	var clientID ClientID
	if len(s.Steps) > 0 { // a comment-only submission's client id is unused
		var err error
		if clientID, err = ParseClientID(s.ClientID); err != nil {
			return Result{}, err
		}
	}
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return Result{}, err
	}
	defer a.release(d, user)
	d.mu.Lock()
	d.seen(user, a.now(), a.cfg.UsersWindow)
	d.mu.Unlock()
	if s.Version >= 0 { // a negative version is invalid (below)
		if stale, err := d.awaitAppend(ctx, s.Version); err != nil {
			return Result{}, err
		} else if stale {
			return Result{}, ErrConflict
		}
	}
	if err := d.lock(ctx); err != nil {
		return Result{}, err
	}
	defer d.unlock()
	if a.isClosed() {
		return Result{}, ErrClosed
	}
	d.mu.Lock()
	st, deleted := d.st, d.deleted
	var taken error
	if len(clientID) > 0 && !server {
		taken = d.checkClientLocked(clientID, ownerOf(s.Author, user))
	}
	d.mu.Unlock()
	if deleted {
		return Result{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if taken != nil {
		return Result{}, taken
	}
	if s.Version < 0 || s.Version > st.version {
		return Result{}, &versionError{version: s.Version}
	}
	if s.Version != st.version {
		return Result{}, ErrConflict
	}

	next, records, err := a.applySteps(st, s.Steps, clientID, ownerOf(s.Author, user), a.cfg.BeforeSubmit != nil)
	if err != nil {
		return Result{}, err
	}
	comments, changed, err := next.comments.apply(s.Comments, next.node.Content.Size(), a.commentLimits(), deleter)
	if err != nil {
		return Result{}, err
	}
	next.comments = comments
	if len(records) == 0 && !changed {
		return Result{Version: st.version, CommentVersion: st.comments.version}, nil
	}
	if a.cfg.BeforeSubmit != nil {
		p := &Proposal{
			ID:       id,
			Author:   s.Author,
			ClientID: clientID,
			Version:  st.version,
			Steps:    next.decoded,
			Before:   st.node,
			After:    next.node,
			Comments: s.Comments,
		}
		if len(records) > 0 {
			p.StepsJSON = make([][]byte, len(records))
			for i, r := range records {
				p.StepsJSON[i] = r.JSON
			}
		}
		if err := a.cfg.BeforeSubmit(ctx, p); err != nil {
			return Result{}, &RefusedError{Err: err}
		}
	}

	// Room in the store.
	metaBytes := 0
	if changed {
		metaBytes = len(encodeEntry(s.Comments))
	}
	add := stepBytes(records, metaBytes)
	stored, err := a.docStored(ctx, d)
	if err != nil {
		return Result{}, err
	}
	if err := a.allowStorage(id, user, stored, add); err != nil {
		return Result{}, err
	}

	// Room for the document as it will be. The estimate of what it is
	// is restored unless the submission is published (which accounts it).
	if err := a.admit(d, next.memSize(), user); err != nil {
		return Result{}, err
	}
	published := false
	defer func() {
		if !published {
			a.account(d, d.state().memSize())
		}
	}()

	// The append must not be abandoned halfway because the client went
	// away: its outcome would be unknown.
	call := d.startAppend(st.version, next.version)
	defer d.endAppend(call)
	for try := 1; ; try++ {
		err := a.appendNext(context.WithoutCancel(ctx), id, st, &next, records, s.Comments, changed)
		if err == nil {
			break
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			a.remove(d)
			return Result{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
		case errors.Is(err, store.ErrConflict):
			// Another writer moved the document on: catch up (or,
			// the store failing now, later).
			if a.catchUp(context.WithoutCancel(ctx), d) != nil {
				a.recheck(id)
			}
			d.mu.Lock()
			cur, deleted := d.st, d.deleted
			d.mu.Unlock()
			if deleted {
				return Result{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
			}
			if a.swapper == nil || cur.version != st.version || cur.node != st.node || try == maxMetaTries {
				return Result{}, ErrConflict
			}
			// Only the metadata moved on (the comments of another
			// writer): the same submission on the latest comments.
			st = cur
			if next, changed, err = rebase(next, st, s.Comments, a.commentLimits(), deleter); err != nil {
				return Result{}, err
			}
			if len(records) == 0 && !changed {
				return Result{Version: st.version, CommentVersion: st.comments.version}, nil
			}
			continue
		}
		// The append may have happened nevertheless (a lost
		// acknowledgement): look, now or, the store failing, later (its
		// notice, if it committed, was taken for this append's and
		// dropped).
		if a.catchUp(context.WithoutCancel(ctx), d) != nil {
			a.recheck(id)
		}
		return Result{}, storeFailed(err, "collab: append to %q", id)
	}
	d.storedMore(add)
	d.publish(next.docState, false)
	published = true
	if a.cfg.Observer != nil && len(records) > 0 {
		a.cfg.Observer.StepsAccepted(len(records))
	}
	a.maybeSnapshot(d)
	if a.commits != nil {
		c := Commit{
			ID:             id,
			Author:         s.Author,
			ClientID:       clientID,
			From:           st.version,
			To:             next.version,
			Comments:       s.Comments,
			CommentVersion: next.comments.version,
			Time:           a.now(),
		}
		if len(records) > 0 {
			c.Steps = next.added
			c.Time = records[0].Time
		}
		a.commits.add(c)
	}
	return Result{Version: next.version, CommentVersion: next.comments.version}, nil
}

// maxMetaTries is how many times Submit appends a submission whose
// appends conflict on the metadata alone (other writers' comments) before
// it gives up with ErrConflict.
const maxMetaTries = 8

// appendNext appends records, made on st, to the store, with the
// comment events as a metadata entry when they changed the comments. The
// store keeps no more than that: the comments moved by the steps are
// mapped again when the document is loaded (commentLog.replay), so that a
// step costs the same whatever the comments. With a store.MetaSwapper the
// append is conditional on st's metadata entries. next.metaSeq counts the
// entry when it succeeds.
func (a *Authority) appendNext(ctx context.Context, id string, st docState, next *applied, records []store.Step, events []CommentEvent, changed bool) error {
	var meta []byte
	if changed {
		meta = encodeEntry(events)
	}
	var err error
	if a.swapper != nil {
		err = a.swapper.AppendIf(ctx, id, st.version, records, st.metaSeq, meta)
	} else {
		err = a.store.Append(ctx, id, st.version, records, meta)
	}
	if err != nil {
		return err
	}
	next.metaSeq = st.metaSeq
	if changed {
		next.metaSeq++
		next.metaBytes = st.metaBytes + int64(len(meta))
	}
	return nil
}

// commentLimits returns the limits on comments of a.cfg.
func (a *Authority) commentLimits() commentLimits {
	return commentLimits{comments: a.cfg.MaxComments, bytes: a.cfg.MaxCommentBytes}
}

// rebase returns next, a submission's state made on a state at the
// same version and with the same document as st but other comments,
// remade on st: st's comments mapped through the submission's steps, with
// its comment events applied. It also returns whether the events changed
// anything.
func rebase(next applied, st docState, events []CommentEvent, lim commentLimits, by commentDeleter) (applied, bool, error) {
	maps := make([]*transform.StepMap, len(next.added))
	for i, r := range next.added {
		maps[i] = r.Map
	}
	comments := st.comments.mapThrough(maps)
	comments, changed, err := comments.apply(events, next.node.Content.Size(), lim, by)
	if err != nil {
		return next, false, err
	}
	next.comments, next.metaSeq, next.metaBytes = comments, st.metaSeq, st.metaBytes
	return next, changed, nil
}

// applied is a state after a submission's steps.
type applied struct {
	docState
	decoded []transform.Step // the steps, when asked for
	added   []StepRecord     // the steps as Events shows them
}

// applySteps decodes and applies steps to st and returns the new state
// (comments mapped through the steps, and the decoded steps when keep is
// set) and the steps to append, by clientID and its owner.
func (a *Authority) applySteps(st docState, steps [][]byte, clientID ClientID, by owner, keep bool) (applied, []store.Step, error) {
	if len(steps) == 0 {
		return applied{docState: st}, nil, nil
	}
	maps := make([]*transform.StepMap, len(steps))
	ends := make([]int, len(steps))  // where each step's JSON ends in buf
	sizes := make([]int, len(steps)) // the content size after each step
	scratch := jsonScratch.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 1<<20 { // keep no huge buffers
			jsonScratch.Put(scratch)
		}
	}()
	buf := (*scratch)[:0]
	var decoded []transform.Step
	if keep {
		decoded = make([]transform.Step, len(steps))
	}
	opts := apply.StepOptions{MaxDocSize: a.cfg.MaxDocSize, MaxDocBytes: a.cfg.MaxDocBytes, Strict: a.cfg.Strict}
	node, err := apply.Steps(st.node, len(steps), func(i int) []byte { return steps[i] }, opts,
		func(i int, step transform.Step, _, after *model.Node) error {
			if keep {
				decoded[i] = step
			}
			maps[i] = step.GetMap()
			sizes[i] = after.Content.Size()
			buf = step.AppendJSON(buf)
			ends[i] = len(buf)
			return nil
		})
	if err != nil {
		var se *apply.StepError
		if errors.As(err, &se) && se.Kind == apply.ErrDocTooLarge {
			what := "document size"
			if se.Bytes {
				what = "document bytes (JSON)"
			}
			return applied{}, nil, &LimitError{What: what, Limit: se.Limit, Value: se.Size}
		}
		if errors.As(err, &se) {
			return applied{}, nil, &transform.StepError{Index: se.Index, Err: se.Err}
		}
		return applied{}, nil, err
	}
	*scratch = buf
	// The steps' JSON stays in the history for long: one allocation of
	// the exact size holds all of it.
	all := bytes.Clone(buf)
	records := make([]store.Step, len(steps))
	added := make([]StepRecord, len(steps))
	now := a.now()
	start := 0
	for i, end := range ends {
		js := all[start:end:end]
		records[i] = store.Step{Version: st.version + int64(i) + 1, JSON: js, ClientID: clientID, Author: by.author, Time: now}
		added[i] = StepRecord{JSON: js, ClientID: clientID, Map: maps[i], Size: sizes[i], owner: by}
		start = end
	}
	next := st
	next.node = node
	next.version += int64(len(steps))
	next = next.addHistory(added, a.cfg.History)
	next.comments = st.comments.mapThrough(maps)
	return applied{docState: next, decoded: decoded, added: added}, records, nil
}

// jsonScratch holds buffers that a submission's steps are encoded into.
var jsonScratch = sync.Pool{New: func() any { return new([]byte) }}

// appendHistory returns history with added appended, keeping the last
// limit entries. Appending never overwrites what readers were given: they
// get slices clipped to the published length. The dropped front is freed
// when append next moves the slice to a larger array.
func appendHistory(history, added []StepRecord, limit int) []StepRecord {
	out := append(history, added...)
	return out[max(0, len(out)-limit):]
}
