package collab

import (
	"context"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// The changes of other writers sharing the store reach an Authority as
// the notices of a store.Notifier. The subscription's callback only notes
// them, coalesced per document, and one goroutine brings the loaded
// documents up to date (catchUp), several side by side, each under its
// writer semaphore, so after any local submission in flight.

// noticeQueue holds the notices not yet handled: at most one entry per
// document, the latest.
type noticeQueue struct {
	mu      sync.Mutex
	pending map[string]pendingNotice
	all     bool          // check every loaded document
	signal  chan struct{} // has a value when there is something pending
}

// pendingNotice is what the notices of a document said since it was last
// handled.
type pendingNotice struct {
	version int64 // the latest notice's version
	// check asks to look at the store whatever the version: a notice was
	// for metadata alone, or for a deletion, which the version cannot
	// tell apart from what memory has.
	check bool
}

// follow subscribes to the store's notices when it is a store.Notifier.
func (a *Authority) follow() {
	n, ok := a.store.(store.Notifier)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.noticeStop = cancel
	a.noticeDone = make(chan struct{})
	a.notices.signal = make(chan struct{}, 1)
	go a.followNotices(ctx)
	a.unsubscribe = n.Subscribe(a.notice)
}

// stopFollowing ends the subscription and waits for the notice goroutine
// to end. Close calls it once.
func (a *Authority) stopFollowing() {
	if a.unsubscribe == nil {
		return
	}
	a.unsubscribe()
	a.noticeStop()
	<-a.noticeDone
}

// notice is the subscription's callback. It never blocks: it notes n for
// the notice goroutine, when n is about a document in memory.
func (a *Authority) notice(n store.Notice) {
	q := &a.notices
	if n.ID == "" {
		q.mu.Lock()
		q.all = true
		q.mu.Unlock()
		q.wake()
		return
	}
	a.mu.Lock()
	d := a.docs[n.ID]
	closed := a.closed
	a.mu.Unlock()
	if d == nil || closed {
		// Not in memory: a later load reads the change from the store.
		return
	}
	p := pendingNotice{version: n.Version, check: n.MetaOnly || n.Version < 0}
	if !p.check && d.covers(p.version) {
		return
	}
	q.add(n.ID, p)
}

// covers reports whether d is at version, or will be without a catch-up
// of the notice goroutine: a store append is in flight that reaches
// version or beyond. That append is the commit noticed (the notice of an
// own commit comes before Submit publishes it) or it conflicts, and
// Submit then catches up itself. So the notices of own commits cost
// nothing more.
func (d *document) covers(version int64) bool {
	select {
	case <-d.ready: // d.st is set
	default:
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st.version >= version || d.appending != nil && version <= d.appending.to
}

// add notes p for the document id, merged with what is pending for it.
func (q *noticeQueue) add(id string, p pendingNotice) {
	q.mu.Lock()
	if old, ok := q.pending[id]; ok {
		p.check = p.check || old.check
	}
	if q.pending == nil {
		q.pending = make(map[string]pendingNotice)
	}
	q.pending[id] = p
	q.mu.Unlock()
	q.wake()
}

// wake tells the notice goroutine that something is pending.
func (q *noticeQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns what is pending and empties the queue.
func (q *noticeQueue) take() (map[string]pendingNotice, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pending, all := q.pending, q.all
	q.pending, q.all = nil, false
	return pending, all
}

// Back-off of the notice goroutine's retries of the documents whose
// catch-up failed (the store unreachable): the first after minRecheck,
// doubling up to maxRecheck while they keep failing.
const (
	minRecheck = 100 * time.Millisecond
	maxRecheck = 5 * time.Second
)

// recheck has the notice goroutine bring the document id up to date with
// the store, when the Authority follows a store.Notifier: after a
// catch-up of Submit's that failed.
func (a *Authority) recheck(id string) {
	if a.notices.signal != nil {
		a.notices.add(id, pendingNotice{check: true})
	}
}

// maxCatchUps is how many documents the notice goroutine brings up to
// date at once.
const maxCatchUps = 8

// catchUps are the notice goroutine's catch-ups in flight: at most one
// per document, and maxCatchUps at once, so that a document whose store
// read is slow holds up no other.
type catchUps struct {
	mu      sync.Mutex
	running map[string]bool
	again   map[string]pendingNotice // notices of running documents, for when they end
	retry   map[string]pendingNotice // notices whose catch-up failed
	slots   chan struct{}
	wg      sync.WaitGroup
}

// merge returns the notices p and old of one document as one.
func merge(p, old pendingNotice) pendingNotice {
	p.check = p.check || old.check
	p.version = max(p.version, old.version)
	return p
}

// start reports whether a catch-up of id may start; otherwise one runs,
// and p is kept for when it ends.
func (c *catchUps) start(id string, p pendingNotice) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] {
		if old, ok := c.again[id]; ok {
			p = merge(p, old)
		}
		c.again[id] = p
		return false
	}
	c.running[id] = true
	return true
}

// end records the end of the catch-up of id after p, which failed
// unless ok, and returns the notice that came for id meanwhile, if any.
func (c *catchUps) end(id string, p pendingNotice, ok bool) (pendingNotice, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, id)
	if !ok {
		if old, had := c.retry[id]; had {
			p = merge(p, old)
		}
		c.retry[id] = p
	}
	next, more := c.again[id]
	delete(c.again, id)
	return next, more
}

// takeRetry returns the notices whose catch-up failed, and forgets them.
func (c *catchUps) takeRetry() map[string]pendingNotice {
	c.mu.Lock()
	defer c.mu.Unlock()
	retry := c.retry
	c.retry = make(map[string]pendingNotice)
	return retry
}

// failing reports whether a catch-up failed since the last takeRetry.
func (c *catchUps) failing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.retry) > 0
}

// followNotices handles the pending notices until ctx is done, the
// documents side by side (catchUps). A notice whose catch-up fails is
// handled again after a back-off, until it succeeds: no other notice may
// come for that document.
func (a *Authority) followNotices(ctx context.Context) {
	var waiting sync.WaitGroup // for documents still loading
	c := &catchUps{running: map[string]bool{}, again: map[string]pendingNotice{},
		retry: map[string]pendingNotice{}, slots: make(chan struct{}, maxCatchUps)}
	defer func() {
		waiting.Wait()
		c.wg.Wait()
		close(a.noticeDone)
	}()
	var (
		retryC  <-chan time.Time
		backoff = minRecheck
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.notices.signal:
		case <-retryC:
			retryC = nil
			for id, p := range c.takeRetry() {
				a.notices.add(id, p)
			}
		}
		pending, all := a.notices.take()
		if all {
			if pending == nil {
				pending = make(map[string]pendingNotice)
			}
			a.mu.Lock()
			for id := range a.docs {
				pending[id] = pendingNotice{check: true}
			}
			a.mu.Unlock()
		}
		for id, p := range pending {
			if ctx.Err() != nil {
				return
			}
			a.mu.Lock()
			d := a.docs[id]
			a.mu.Unlock()
			if d == nil {
				continue
			}
			select {
			case <-d.ready:
			default:
				// The load may have read the store before the change:
				// handle the notice once it is over, without holding up
				// the other documents.
				waiting.Go(func() {
					select {
					case <-d.ready:
						a.notices.add(id, p)
					case <-ctx.Done():
					}
				})
				continue
			}
			if !c.start(id, p) {
				continue
			}
			select {
			case c.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			c.wg.Go(func() {
				ok := a.noticed(ctx, d, p)
				<-c.slots
				if next, more := c.end(id, p, ok); more {
					a.notices.add(id, next)
				} else if !ok {
					a.notices.wake() // for the back-off below
				}
			})
		}
		switch {
		case !c.failing():
			backoff = minRecheck
		case retryC == nil:
			retryC = time.After(backoff)
			backoff = min(2*backoff, maxRecheck)
		}
	}
}

// noticed brings the loaded document d up to date after notice p. It
// returns false when the store failed (d is as it was).
func (a *Authority) noticed(ctx context.Context, d *document, p pendingNotice) bool {
	if d.err != nil || !p.check && d.reached(ctx, p.version) {
		return true
	}
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return true
	}
	defer d.unlock()
	a.mu.Lock()
	current := a.docs[d.id] == d
	a.mu.Unlock()
	d.mu.Lock()
	deleted, version := d.deleted, d.st.version
	d.mu.Unlock()
	if !current || deleted || !p.check && version >= p.version {
		return true
	}
	return a.catchUp(ctx, d) == nil
}

// reached reports whether d is at version or past it (or deleted),
// waiting for the store append in flight, if any: the notice of an own
// commit comes before the commit is published, and then it costs no
// store read.
func (d *document) reached(ctx context.Context, version int64) bool {
	for {
		d.mu.Lock()
		reached := d.deleted || d.st.version >= version
		c := d.appending
		d.mu.Unlock()
		if reached {
			return true
		}
		if c == nil {
			return false
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return true
		}
	}
}
