package collab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pmauthority/pmauthority/transform"
)

// EditClientID is the client id of the steps that Transact submits: the
// server's own client, which editors' clients may not use.
var EditClientID = ClientID(`"server"`)

// transactTries bounds how often Transact runs its function again when
// editors' submissions keep winning the race for the next version.
const transactTries = 20

// ErrNoChange is what a Transact function returns to end the transaction
// without submitting anything (Transact then returns the current
// version and no error). A function that adds no step does the same.
var ErrNoChange = errors.New("collab: no change")

// Transact edits the document id from the server: fn builds the edit
// with tr, a transform of the current document, and its steps are
// submitted as one submission of the server's client (EditClientID) by
// author, through Config.BeforeSubmit and the limits like any other.
// When an editor's steps came first, fn runs again on the newer
// document, a few times at most (then ErrContended). It returns the
// submission's Result, or the current version when fn added no step. An
// error of fn is returned as it is, and nothing is submitted.
func (a *Authority) Transact(ctx context.Context, id, author string, fn func(tr *transform.Transform) error) (Result, error) {
	return a.TransactSince(ctx, id, author, -1, func(tr *transform.Transform, _ *transform.Mapping) error {
		return fn(tr)
	})
}

// TransactSince is Transact for an edit made against an older version
// base of the document, such as a backend that read the document a while
// ago: fn also gets the mapping through the steps from base to tr's
// document, to map what it found at base (Mapping.MapResult tells what a
// step since deleted). A base older than the kept history gives
// ErrHistoryGone, one ahead of the document an error matching
// ErrInvalidVersion; a negative base asks for no mapping (nil).
func (a *Authority) TransactSince(ctx context.Context, id, author string, base int64, fn func(tr *transform.Transform, since *transform.Mapping) error) (Result, error) {
	for try := 1; ; try++ {
		st, err := a.current(ctx, id)
		if err != nil {
			return Result{}, err
		}
		var since *transform.Mapping
		if base >= 0 {
			if since, err = st.mappingSince(base); err != nil {
				return Result{}, err
			}
		}
		tr := transform.New(st.node)
		if err := fn(tr, since); errors.Is(err, ErrNoChange) {
			return Result{Version: st.version, CommentVersion: st.comments.version}, nil
		} else if err != nil {
			return Result{}, err
		}
		if !tr.DocChanged() {
			return Result{Version: st.version, CommentVersion: st.comments.version}, nil
		}
		steps := make([][]byte, len(tr.Steps))
		for i, s := range tr.Steps {
			steps[i] = s.AppendJSON(nil)
		}
		res, err := a.submit(ctx, id, "", Submission{
			Version:  st.version,
			Steps:    steps,
			ClientID: EditClientID,
			Author:   author,
		}, true)
		if !errors.Is(err, ErrConflict) {
			return res, err
		}
		if try == transactTries {
			return Result{}, ErrContended
		}
	}
}

// current returns the document id's state, loading it when needed.
func (a *Authority) current(ctx context.Context, id string) (docState, error) {
	d, err := a.acquire(ctx, id, "")
	if err != nil {
		return docState{}, err
	}
	defer a.release(d, "")
	d.mu.Lock()
	st, deleted := d.st, d.deleted
	d.mu.Unlock()
	if deleted {
		return docState{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	return st, nil
}

// mappingSince returns the mapping through the kept steps after version
// base.
func (st docState) mappingSince(base int64) (*transform.Mapping, error) {
	behind := st.version - base
	if behind < 0 {
		return nil, fmt.Errorf("%w %d", ErrInvalidVersion, base)
	}
	if behind > int64(len(st.steps)) {
		return nil, ErrHistoryGone
	}
	m := &transform.Mapping{}
	for _, r := range st.steps[len(st.steps)-int(behind):] {
		if r.Map == nil {
			return nil, ErrHistoryGone
		}
		m.AppendMap(r.Map, -1)
	}
	return m, nil
}

// DefaultEditPresence is the default Config.EditPresence.
const DefaultEditPresence = 5 * time.Second

// ShowEdit shows the server's client (EditClientID) in the presence of
// the document id, when it is loaded and followed, for
// Config.EditPresence:
// with info (a JSON object, as a transport's presence entries have) and
// a cursor at pos of version, where a server edit ended. A later
// ShowEdit replaces it.
func (a *Authority) ShowEdit(id string, info []byte, version int64, pos int) {
	a.mu.Lock()
	d := a.docs[id]
	a.mu.Unlock()
	if d == nil {
		return
	}
	select {
	case <-d.ready:
	default:
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pres.slots == nil || d.deleted {
		return // nobody follows the presence
	}
	anchor, head, ok := d.mapSelectionLocked(version, pos, pos)
	if !ok {
		anchor, head = -1, -1
	}
	sl := d.slotLocked(EditClientID)
	e := &presenceEntry{info: info, anchor: anchor, head: head, at: d.st.version, refs: 1}
	sl.local = e
	d.markPresenceLocked(sl)
	time.AfterFunc(a.cfg.EditPresence, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if sl := d.pres.slots[string(EditClientID)]; sl != nil && sl.local == e {
			sl.local = nil
			d.markPresenceLocked(sl)
		}
	})
}
