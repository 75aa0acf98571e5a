package collab

import (
	"time"
)

// The users of a document are the client addresses (or other names) that
// the server passes with each request, counted while seen within
// Config.UsersWindow or subscribed (a waiting long poll). As in the
// ProseMirror collab demo, a change of the count is news for the
// document's subscriptions (stream.go): a waiting long poll answers with
// no steps, so that clients update the count they show.
//
// How this differs from the demo (src/collab/server/instance.js, whose
// registerUser and collectUsers call sendUpdates):
//   - The demo answers every waiter whenever the count changes; here a
//     waiter answers only when the count differs from the one it began
//     waiting with, so users that come and go between two wake-ups (or
//     join just before a waiter starts) answer nobody.
//   - The demo rebuilds its users every 5 seconds from the waiters and the
//     requests since; here each user expires Config.UsersWindow after its
//     last request, and a timer notices it then.
//   - Wake-ups are coalesced (usersWakeEvery), where the demo answers all
//     waiters at every new user: n users joining at once would otherwise
//     cost n² answers.

// usersWakeEvery is the shortest time between two wake-ups of a
// document's waiters on user-count changes. The first change after a
// quiet time wakes them at once; the changes within usersWakeEvery of a
// wake-up wake them together at its end. A quarter of a second is well
// below what a person notices in a "N users" display, and bounds the
// answers to a burst of n joining users to n per wake-up rather than n
// per user.
const usersWakeEvery = 250 * time.Millisecond

// userEntry is a user seen recently.
type userEntry struct {
	last    time.Time
	waiting int    // subscriptions of this user (waiting long polls)
	hash    uint64 // userHash, by which other nodes know it
}

// stopper is a timer, as time.AfterFunc returns.
type stopper interface {
	// Stop prevents the timer from firing; it reports false when it
	// has fired already (its function runs, or ran).
	Stop() bool
}

// afterFunc calls f in its own goroutine after dur, as time.AfterFunc
// does (or as Authority.timerFunc does, in tests).
func (a *Authority) afterFunc(dur time.Duration, f func()) stopper {
	if a.timerFunc != nil {
		return a.timerFunc(dur, f)
	}
	return time.AfterFunc(dur, f)
}

// seen records a request of user (none when user is empty). It is called
// with mu held.
func (d *document) seen(user string, now time.Time, window time.Duration) {
	if user == "" {
		return
	}
	u := d.users[user]
	if u == nil {
		u = &userEntry{hash: userHash(user)}
		d.users[user] = u
		d.usersDirty = true
		d.auth.peers.changed(d.id)
	}
	u.last = now
	if u.waiting == 0 {
		d.expireAt(now.Add(window))
	}
	d.scheduleUsers(now)
}

// wait records that a subscription of user starts (delta 1) or ends
// (delta −1). It is called with mu held.
func (d *document) wait(user string, delta int, now time.Time, window time.Duration) {
	if user == "" {
		return
	}
	u := d.users[user]
	if u == nil {
		u = &userEntry{last: now, hash: userHash(user)}
		d.users[user] = u
		d.usersDirty = true
		d.auth.peers.changed(d.id)
	}
	u.waiting += delta
	d.listeners += delta
	if u.waiting == 0 {
		u.last = now
		d.expireAt(now.Add(window))
	}
	d.scheduleUsers(now)
}

// expireAt notes that a user may expire at t.
func (d *document) expireAt(t time.Time) {
	if d.nextPrune.IsZero() || t.Before(d.nextPrune) {
		d.nextPrune = t
	}
}

// userCount returns the number of users seen within window or waiting,
// forgetting the others, with those of the other nodes (peers.go). It is
// called with mu held.
func (d *document) userCount(now time.Time, window time.Duration) int {
	if !d.nextPrune.IsZero() && !now.Before(d.nextPrune) {
		d.nextPrune = time.Time{}
		for name, u := range d.users {
			if u.waiting > 0 {
				continue
			}
			exp := u.last.Add(window)
			if !now.Before(exp) {
				delete(d.users, name)
				d.usersDirty = true
				d.auth.peers.changed(d.id)
			} else {
				d.expireAt(exp)
			}
		}
		d.scheduleUsers(now)
	}
	return d.auth.peers.count(d.id, d.users)
}

// scheduleUsers wakes the waiters of users when users came or went and
// the last wake-up is usersWakeEvery ago, and arms the users timer for
// the next thing to do: the delayed wake-up, or the expiry of the first
// user that can expire. Only a document with waiting users has the timer,
// so an idle document (which is unloaded) has none. It is called with mu
// held whenever users or waiters change.
func (d *document) scheduleUsers(now time.Time) {
	if d.subs == 0 || d.deleted || chanClosed(d.auth.done) {
		// Nobody to wake: a waiter starts from the count it finds.
		d.usersDirty = false
		d.stopUsersTimer()
		return
	}
	var due time.Time
	if d.usersDirty {
		if next := d.usersWoken.Add(usersWakeEvery); now.Before(next) {
			due = next
		} else {
			d.usersDirty = false
			d.usersWoken = now
			close(d.usersWake)
			d.usersWake = make(chan struct{})
		}
	}
	if !d.nextPrune.IsZero() && (due.IsZero() || d.nextPrune.Before(due)) {
		due = d.nextPrune
	}
	if due.IsZero() {
		d.stopUsersTimer()
		return
	}
	if d.usersTimer != nil && d.usersTimerAt.Equal(due) {
		return
	}
	d.stopUsersTimer()
	d.usersTimerSeq++
	seq := d.usersTimerSeq
	d.usersTimerAt = due
	d.auth.usersTimers.Add(1)
	d.usersTimer = d.auth.afterFunc(due.Sub(now), func() { d.usersTick(seq) })
}

// usersTick runs when the users timer armed as seq fires: it forgets the
// expired users, which may wake the waiters, and arms the timer again.
func (d *document) usersTick(seq uint64) {
	a := d.auth
	a.usersTimers.Add(-1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.usersTimer == nil || seq != d.usersTimerSeq {
		return // stopped, or replaced, after it fired
	}
	d.usersTimer = nil
	now := a.now()
	d.userCount(now, a.cfg.UsersWindow)
	d.scheduleUsers(now)
}

// stopUsersTimer stops the users timer if it is armed. It is called with
// mu held.
func (d *document) stopUsersTimer() {
	if d.usersTimer == nil {
		return
	}
	if d.usersTimer.Stop() {
		d.auth.usersTimers.Add(-1) // else usersTick runs and counts it
	}
	d.usersTimer = nil
}
