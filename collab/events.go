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
	// CommentVersion counts the comment events (creations and
	// deletions), ThreadVersion the thread operations.
	CommentVersion, ThreadVersion int64
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
	return *d.stateOf(st, js, users), nil
}

// stateOf returns the State of st, whose JSON is js (nil when not yet
// encoded), with users users. It is called without mu held: a document's
// JSON, encoded here when needed, can be large.
func (d *document) stateOf(st docState, js []byte, users int) *State {
	if js == nil {
		js = st.node.AppendJSON(nil)
		d.mu.Lock()
		if d.st.node == st.node {
			d.docJSON = js
		}
		d.mu.Unlock()
	}
	return &State{
		Doc:            st.node,
		DocJSON:        js,
		Version:        st.version,
		Comments:       st.comments.list(),
		CommentVersion: st.comments.version,
		ThreadVersion:  st.comments.threadVersion,
		Users:          users,
		Schema:         st.schemaName,
	}
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

	owner  owner  // who submitted it (clientid.go)
	commit []byte // the record of the commit it begins (commit.go), or nil
}

// Events is what happened to a document after some version and comment
// version.
type Events struct {
	// Version and CommentVersion are the document's current ones.
	Version, CommentVersion int64
	// Steps are the steps after the asked version, in order (do not
	// modify them).
	Steps []StepRecord
	// Comment are the comment events after the asked comment version:
	// creations and deletions of comments, as the collab demo knows them.
	Comment []CommentEvent
	// FollowsThreads tells whether the events follow threads
	// (EventsWithThreads, Subscription.FollowThreads): then
	// ThreadVersion is the document's thread version, and Threads the
	// threads that thread operations (CommentReply …) changed after the
	// asked thread version, in their current state, each once (every
	// comment when those operations are no longer kept, or the asked
	// version is not one the document had). The collab demo's client
	// knows nothing of threads: thread operations count in
	// ThreadVersion, not in CommentVersion, so that they change nothing
	// it sees.
	FollowsThreads bool
	ThreadVersion  int64
	Threads        []Comment
	// Users is the number of users seen recently.
	Users int
	// Size is the content size of the document at Version (what
	// positions in it may go up to).
	Size int
	// Presence and Left are, in the updates of a subscription that
	// follows presence, the entries that changed after its cursor (at
	// Version) and the client ids that left (presence.go). AppendJSON
	// leaves them out.
	Presence []Presence
	Left     []ClientID
}

// Events returns, without waiting, the steps and comment events of the
// document id after version and commentVersion, and counts user as one of
// its users. To wait for news, Subscribe.
//
// It fails with ErrInvalidVersion when either version is negative or
// ahead of the document's, and with ErrHistoryGone when some of the steps
// or comment events after them are no longer kept.
func (a *Authority) Events(ctx context.Context, id, user string, version, commentVersion int64) (Events, error) {
	return a.events(ctx, id, user, version, commentVersion, -1)
}

// EventsWithThreads is Events that also follows threads: the events
// give the threads changed after threadVersion (Events.Threads).
func (a *Authority) EventsWithThreads(ctx context.Context, id, user string, version, commentVersion, threadVersion int64) (Events, error) {
	return a.events(ctx, id, user, version, commentVersion, max(threadVersion, 0))
}

// events is Events, following threads after threadVersion unless it is
// negative.
func (a *Authority) events(ctx context.Context, id, user string, version, commentVersion, threadVersion int64) (Events, error) {
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return Events{}, err
	}
	defer a.release(d, user)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deleted {
		return Events{}, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	now := a.now()
	d.seen(user, now, a.cfg.UsersWindow)
	ev, _, err := d.eventsAfter(version, commentVersion)
	if err != nil {
		return Events{}, err
	}
	if threadVersion >= 0 {
		ev.withThreads(d.st.comments, threadVersion)
	}
	ev.Users = d.userCount(now, a.cfg.UsersWindow)
	return ev, nil
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
		Size:           st.node.Content.Size(),
	}
	ev.Comment = st.comments.eventsAfter(commentVersion)
	// As the ProseMirror demo server: an answer without steps or comment
	// events is not news, even when the comment version moved on (a
	// created comment that has since collapsed is left out). Its reference
	// client ignores such an answer and polls again at its old versions,
	// so answering at once would make it spin until the next change.
	return ev, len(ev.Steps) > 0 || len(ev.Comment) > 0, nil
}

// withThreads makes ev follow the threads of l after threadVersion.
func (ev *Events) withThreads(l commentLog, threadVersion int64) {
	ev.FollowsThreads, ev.ThreadVersion = true, l.threadVersion
	ev.Threads = l.threadsAfter(threadVersion)
}
