package collab

import "time"

// Hooks for the external tests.

// UnloadIdle runs one round of the janitor.
func (a *Authority) UnloadIdle() { a.unloadIdle() }

// WaitBackground waits for the background snapshots started so far.
func (a *Authority) WaitBackground() { a.bg.Wait() }

// Loaded reports whether the document id is in memory, and how many
// requests (waiters included) use it.
func (a *Authority) Loaded(id string) (loaded bool, refs int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.docs[id]
	if d == nil {
		return false, 0
	}
	return d.loaded, d.refs
}

// SetTimerFunc makes the users timers of a use f instead of
// time.AfterFunc. Call it before any request.
func (a *Authority) SetTimerFunc(f func(time.Duration, func()) interface{ Stop() bool }) {
	a.timerFunc = func(d time.Duration, fn func()) stopper { return f(d, fn) }
}

// UsersTimers returns the number of users timers armed and not yet
// stopped or run.
func (a *Authority) UsersTimers() int64 { return a.usersTimers.Load() }

// UsersWokenAt returns when the waiters of the document id were last
// woken by a user-count change (zero when never, or not loaded).
func (a *Authority) UsersWokenAt(id string) time.Time {
	a.mu.Lock()
	d := a.docs[id]
	a.mu.Unlock()
	if d == nil {
		return time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.usersWoken
}

// Waiting returns the number of subscriptions of users (waiting long
// polls) of the document id; 0 when it is not loaded.
func (a *Authority) Waiting(id string) int {
	a.mu.Lock()
	d := a.docs[id]
	a.mu.Unlock()
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.listeners
}
