package collab

import (
	"context"
	"fmt"
	"slices"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// State is a document as Get returns it.
type State struct {
	// Doc is the document.
	Doc *model.Node
	// DocJSON is Doc's JSON form, cached: do not modify it.
	DocJSON []byte
	// Version is the document's version: the number of steps applied
	// since it was created.
	Version int64
	// Comments are the document's comments (do not modify them).
	Comments []Comment
	// CommentVersion counts the comment events.
	CommentVersion int64
	// Users is the number of users seen recently.
	Users int
	// Schema is the name of the document's schema.
	Schema string
}

// Get returns the current state of the document id, loading it (or
// creating it, with Config.AutoCreate) when needed, and counts user (when
// not empty) as one of its users.
func (a *Authority) Get(ctx context.Context, id, user string) (State, error) {
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return State{}, err
	}
	defer a.release(d, user)
	now := a.now()
	d.mu.Lock()
	d.seen(user, now, a.cfg.UsersWindow)
	st, js, deleted := d.st, d.docJSON, d.deleted
	users := d.userCount(now, a.cfg.UsersWindow)
	d.mu.Unlock()
	if deleted {
		return State{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if js == nil {
		// Encode outside the lock: documents can be large.
		js = st.node.AppendJSON(nil)
		d.mu.Lock()
		if d.st.node == st.node {
			d.docJSON = js
		}
		d.mu.Unlock()
	}
	return State{
		Doc:            st.node,
		DocJSON:        js,
		Version:        st.version,
		Comments:       st.comments.list(),
		CommentVersion: st.comments.version,
		Users:          users,
		Schema:         st.schemaName,
	}, nil
}

// StepRecord is an accepted step as Events reports it.
type StepRecord struct {
	// JSON is the step's JSON form.
	JSON []byte
	// ClientID is the id of the client that submitted the step.
	ClientID ClientID
	// Map is the step's map, as the authority computed it when it applied
	// the step (do not modify it). It is nil for a step loaded from the
	// store that was not replayed: one at or before the snapshot the
	// document was loaded from.
	Map *transform.StepMap
	// Size is the content size of the document after the step (what
	// positions at its version may go up to); meaningful only with Map.
	Size int

	owner owner // who submitted it (clientid.go)
}

// Events is what happened to a document after some version and comment
// version.
type Events struct {
	// Version and CommentVersion are the document's current ones.
	Version, CommentVersion int64
	// Steps are the steps after the asked version, in order (do not
	// modify them).
	Steps []StepRecord
	// Comment are the comment events after the asked comment version.
	Comment []CommentEvent
	// Users is the number of users seen recently.
	Users int
	// Size is the content size of the document at Version (what
	// positions in it may go up to).
	Size int
}

// Events returns the steps and comment events of the document id after
// version and commentVersion, and counts user as one of its users.
//
// It fails with ErrInvalidVersion when either version is negative or
// ahead of the document's, and with ErrHistoryGone when some of the steps
// or comment events after them are no longer kept. When there are no
// steps or comment events to return (even if the comment version moved on:
// the create event of a comment that collapsed since is left out) it
// returns an Events without them at once, or, when wait is true, waits
// for the next accepted change (steps or comments) and returns that; when
// ctx is done first it returns ctx's error.
//
// A waiting call with a user also returns, with no steps or comment
// events, as soon as the number of users differs from the number when it
// began to wait: a new user was seen, or users expired after
// Config.UsersWindow without a request. So clients show an up-to-date
// count, as with the ProseMirror demo server. The waiters of a document
// are woken for this at most every 250 milliseconds, all at once. A call
// without a user (such as a relay that pushes to clients of its own, and
// is no user itself) waits only for steps and comment events.
func (a *Authority) Events(ctx context.Context, id, user string, version, commentVersion int64, wait bool) (Events, error) {
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return Events{}, err
	}
	defer a.release(d, user)
	d.mu.Lock()
	now := a.now()
	d.seen(user, now, a.cfg.UsersWindow)
	base := -1 // the user count when the call began to wait (with a user)
	for {
		if d.deleted {
			d.mu.Unlock()
			return Events{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
		}
		ev, newer, err := d.eventsAfter(version, commentVersion)
		if err == nil {
			ev.Users = d.userCount(now, a.cfg.UsersWindow)
		}
		if err != nil || newer || !wait || base >= 0 && ev.Users != base {
			d.mu.Unlock()
			return ev, err
		}
		var usersWake chan struct{} // nil, never ready, without a user
		if user != "" {
			usersWake = d.usersWake
			if base < 0 {
				base = ev.Users
			}
		}
		wake := d.wake
		d.wait(user, 1, now, a.cfg.UsersWindow)
		d.mu.Unlock()
		select {
		case <-wake:
		case <-usersWake:
		case <-ctx.Done():
		case <-a.done:
		}
		d.mu.Lock()
		now = a.now()
		d.wait(user, -1, now, a.cfg.UsersWindow)
		if !chanClosed(wake) && !chanClosed(usersWake) {
			d.mu.Unlock()
			if err := ctx.Err(); err != nil {
				return Events{}, err
			}
			return Events{}, ErrClosed
		}
	}
}

// chanClosed reports whether c is closed (false for nil).
func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// eventsAfter returns the events after version and commentVersion and
// whether they hold any steps or comment events. It is called with mu held.
func (d *document) eventsAfter(version, commentVersion int64) (Events, bool, error) {
	st := d.st
	if version < 0 || version > st.version {
		return Events{}, false, &versionError{version: version}
	}
	if commentVersion < 0 || commentVersion > st.comments.version {
		return Events{}, false, &versionError{version: commentVersion, comment: true}
	}
	behind := st.version - version
	commentsBehind := st.comments.version - commentVersion
	if behind > int64(len(st.steps)) || commentsBehind > int64(len(st.comments.events)) {
		return Events{}, false, ErrHistoryGone
	}
	ev := Events{
		Version:        st.version,
		CommentVersion: st.comments.version,
		Steps:          slices.Clip(st.steps[len(st.steps)-int(behind):]),
		Comment:        st.comments.eventsAfter(commentVersion),
		Size:           st.node.Content.Size(),
	}
	// As the ProseMirror demo server: an answer without steps or comment
	// events is not news, even when the comment version moved on (a
	// created comment that has since collapsed is left out). Its reference
	// client ignores such an answer and polls again at its old versions,
	// so answering at once would make it spin until the next change.
	return ev, len(ev.Steps) > 0 || len(ev.Comment) > 0, nil
}
