package collab

import (
	"context"
	"errors"
	"fmt"
)

// A document's stream. Every change of a document is published once
// (document.publish), and the transports read what they need from a
// Subscription: a cursor on the document's versions that moves only when
// its reader takes an update. An update holds the steps after the cursor
// with their maps and the document's size after each, their client ids,
// the comment events and the user count; Wait waits for the next one.
// The steps come from the document's history, so a subscription costs no
// copy of them, and one that falls behind the history (Config.History)
// learns it as ErrHistoryGone.
//
// A long poll subscribes at its client's versions and takes one update
// (Next); the WebSocket hub of a document subscribes once at the current
// versions, takes each update to push it to all its connections, and
// answers a joining connection with Join, at the cursor.

// Subscription is a cursor on the stream of a document. Its methods may
// be called from several goroutines; Close ends it.
type Subscription struct {
	a    *Authority
	d    *document
	user string // counted as a waiting user while subscribed ("" for none)

	// Guarded by d.mu.
	version, commentVersion int64
	users                   int // the user count last delivered
	closed                  bool
	// Of a follower of presence (presence.go): the presence changes
	// delivered.
	following   bool
	presenceSeq uint64
	// Of a follower of threads (FollowThreads): the thread version
	// delivered.
	threads       bool
	threadVersion int64
}

// FollowThreads makes the subscription follow threads after
// threadVersion (negative: the document's current one): its updates
// give the threads changed (Events.Threads), and a change is news, as
// steps and comment events are.
func (s *Subscription) FollowThreads(threadVersion int64) {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if threadVersion < 0 {
		threadVersion = d.st.comments.threadVersion
	}
	s.threads, s.threadVersion = true, threadVersion
}

// news reports whether ev, after the cursor, is news for s besides the
// user count. It is called with d.mu held.
func (s *Subscription) news(ev Events) bool {
	return len(ev.Steps) > 0 || len(ev.Comment) > 0 || s.threads && s.d.st.comments.threadVersion != s.threadVersion
}

// Subscribe returns a subscription to the document id after version and
// commentVersion, loading the document (or creating it for user, with
// Config.AutoCreate) when needed. A negative version subscribes at the
// document's current versions. A non-empty user counts as one of the
// document's users until Close, as a waiting long poll does.
//
// It fails with ErrInvalidVersion when a version is ahead of the
// document's and with ErrHistoryGone when some of the steps or comment
// events after them are no longer kept.
func (a *Authority) Subscribe(ctx context.Context, id, user string, version, commentVersion int64) (*Subscription, error) {
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.deleted {
		d.mu.Unlock()
		a.release(d, user)
		return nil, fmt.Errorf("collab: %q: %w", id, ErrNotFound)
	}
	if version < 0 {
		version, commentVersion = d.st.version, d.st.comments.version
	}
	if _, _, err := d.eventsAfter(version, commentVersion); err != nil {
		d.mu.Unlock()
		a.release(d, user)
		return nil, err
	}
	now := a.now()
	d.seen(user, now, a.cfg.UsersWindow)
	d.wait(user, 1, now, a.cfg.UsersWindow)
	d.subs++
	d.scheduleUsers(now)
	s := &Subscription{a: a, d: d, user: user, version: version, commentVersion: commentVersion}
	s.users = d.userCount(now, a.cfg.UsersWindow)
	d.mu.Unlock()
	return s, nil
}

// Close ends the subscription. It may be called more than once.
func (s *Subscription) Close() {
	d := s.d
	d.mu.Lock()
	if s.closed {
		d.mu.Unlock()
		return
	}
	s.closed = true
	d.unfollowLocked(s)
	now := s.a.now()
	d.wait(s.user, -1, now, s.a.cfg.UsersWindow)
	d.subs--
	d.scheduleUsers(now)
	d.mu.Unlock()
	s.a.release(d, s.user)
}

// Version returns the versions of the subscription's cursor: those of the
// last update taken.
func (s *Subscription) Version() (version, commentVersion int64) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	return s.version, s.commentVersion
}

// Wait waits until the document has news for the subscription: steps or
// comment events after its cursor (or changed threads, FollowThreads), or a user count other than the one
// last taken. Changes of the user count are noticed at most every 250
// milliseconds. It returns ctx's error when ctx is done first, ErrClosed
// when the Authority closes, ErrNotFound when the document is deleted, and
// ErrHistoryGone when the steps after the cursor are no longer kept.
func (s *Subscription) Wait(ctx context.Context) error {
	d, a := s.d, s.a
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if s.closed {
			return ErrClosed
		}
		if d.deleted {
			return fmt.Errorf("collab: %q: %w", d.id, ErrNotFound)
		}
		ev, _, err := d.eventsAfter(s.version, s.commentVersion)
		if err != nil || s.news(ev) || d.userCount(a.now(), a.cfg.UsersWindow) != s.users ||
			s.following && d.pres.flushed > s.presenceSeq {
			return err
		}
		wake, usersWake, presenceWake := d.wake, d.usersWake, d.pres.wake
		if !s.following {
			presenceWake = nil // never ready
		}
		d.mu.Unlock()
		select {
		case <-wake:
		case <-usersWake:
		case <-presenceWake:
		case <-ctx.Done():
		case <-a.done:
		}
		d.mu.Lock()
		d.scheduleUsers(a.now())
		if !chanClosed(wake) && !chanClosed(usersWake) && !chanClosed(presenceWake) {
			if err := ctx.Err(); err != nil {
				return err
			}
			return ErrClosed
		}
	}
}

// Next waits for news (Wait) and takes it (Take).
func (s *Subscription) Next(ctx context.Context) (Events, error) {
	if err := s.Wait(ctx); err != nil {
		return Events{}, err
	}
	ev, _, err := s.Take()
	return ev, err
}

// Take returns, without waiting, the update after the subscription's
// cursor and moves the cursor to the document's current versions: the
// steps and comment events since, the user count and the size. It
// reports whether the update is news: steps, comment events, or a user
// count other than the last one taken. When the steps after the cursor are no
// longer kept, it moves the cursor all the same and returns an update
// without steps and ErrHistoryGone: what happened meanwhile cannot be
// told.
func (s *Subscription) Take() (Events, bool, error) {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	return s.takeLocked()
}

// takeLocked is Take with d.mu held.
func (s *Subscription) takeLocked() (Events, bool, error) {
	d, a := s.d, s.a
	if s.closed {
		return Events{}, false, ErrClosed
	}
	if d.deleted {
		return Events{}, false, fmt.Errorf("collab: %q: %w", d.id, ErrNotFound)
	}
	ev, _, err := d.eventsAfter(s.version, s.commentVersion)
	if errors.Is(err, ErrHistoryGone) {
		ev = Events{Version: d.st.version, CommentVersion: d.st.comments.version, Size: d.st.node.Content.Size()}
	} else if err != nil {
		return Events{}, false, err
	}
	ev.Users = d.userCount(a.now(), a.cfg.UsersWindow)
	news := s.news(ev) || ev.Users != s.users
	if s.threads {
		ev.withThreads(d.st.comments, s.threadVersion)
		s.threadVersion = ev.ThreadVersion
	}
	s.version, s.commentVersion, s.users = ev.Version, ev.CommentVersion, ev.Users
	s.presenceAfterLocked(&ev)
	return ev, news, err
}

// Welcome is what a client joining a subscription's stream is sent: the
// events after the client's versions up to the cursor, or, when the
// client asked for it or those events are no longer kept, the state at
// the cursor.
type Welcome struct {
	// Events are the events after the client's versions, when State is
	// nil.
	Events Events
	// State is the document at the cursor, for a client that needs a
	// snapshot.
	State *State
	// Presence is every entry of the document's presence at the cursor,
	// for a follower of presence (FollowPresence).
	Presence []Presence
}

// Join takes the update after the cursor (as Take, whose results it
// returns first) and answers a client
// of user that joins the stream at the new cursor: the welcome for a
// client at version and commentVersion (following threads after
// threadVersion unless it is negative), or, with snapshot set, the
// document's state. user counts as one of the document's users, in the
// update too. The update is for the clients that joined before; the
// welcome brings the new one to the same versions.
//
// An update that fails with ErrHistoryGone is returned with that error
// and no welcome; Join may then be called again. A version of the client
// ahead of the document's fails with ErrInvalidVersion.
func (s *Subscription) Join(user string, version, commentVersion, threadVersion int64, snapshot bool) (Events, bool, Welcome, error) {
	d, a := s.d, s.a
	d.mu.Lock()
	now := a.now()
	if !s.closed && !d.deleted {
		// Before the update, which then tells the others of user.
		d.seen(user, now, a.cfg.UsersWindow)
	}
	ev, news, err := s.takeLocked()
	if err != nil {
		d.mu.Unlock()
		return ev, news, Welcome{}, err
	}
	var w Welcome
	if s.following {
		w.Presence = d.allPresenceLocked()
	}
	if !snapshot {
		w.Events, _, err = d.eventsAfter(version, commentVersion)
		switch {
		case errors.Is(err, ErrHistoryGone):
			snapshot = true
		case err != nil:
			d.mu.Unlock()
			return ev, news, Welcome{}, err
		default:
			w.Events.Users = d.userCount(now, a.cfg.UsersWindow)
			if threadVersion >= 0 {
				w.Events.withThreads(d.st.comments, threadVersion)
			}
		}
	}
	if !snapshot {
		d.mu.Unlock()
		return ev, news, w, nil
	}
	st, js := d.st, d.docJSON
	users := d.userCount(now, a.cfg.UsersWindow)
	d.mu.Unlock()
	w.State = d.stateOf(st, js, users)
	return ev, news, w, nil
}

// Seen counts user as one of the document's users again (users count
// while seen within Config.UsersWindow): a transport whose client shows
// it is there without a request, such as a WebSocket that answers pings.
func (s *Subscription) Seen(user string) {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !s.closed && !d.deleted {
		d.seen(user, s.a.now(), s.a.cfg.UsersWindow)
	}
}
