package memstore

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pmauthority/pmauthority/store"
)

// notifier fans notices out to subscribers. Committing calls queue their
// notice while they hold the Store's lock, so the queue is in commit
// order, and deliver it after releasing the lock. One goroutine at a time
// delivers, everything queued until the queue is empty: so notices keep
// their order, and a subscriber that commits from its callback (on the
// delivering goroutine) does not deadlock: its notice is delivered by the
// same loop.
type notifier struct {
	subscribers atomic.Int64 // the number of subscribers, read by queue

	mu         sync.Mutex
	subs       []*subscriber // replaced, never modified in place
	queued     []store.Notice
	delivering bool
}

type subscriber struct {
	fn        func(store.Notice)
	cancelled atomic.Bool
}

// subscribe adds fn and returns the function that removes it.
func (n *notifier) subscribe(fn func(store.Notice)) func() {
	sub := &subscriber{fn: fn}
	n.mu.Lock()
	n.subs = append(slices.Clip(n.subs), sub)
	n.subscribers.Add(1)
	n.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			sub.cancelled.Store(true)
			n.mu.Lock()
			n.subs = slices.DeleteFunc(slices.Clone(n.subs), func(s *subscriber) bool { return s == sub })
			n.subscribers.Add(-1)
			n.mu.Unlock()
		})
	}
}

// queue records a notice to deliver. It is called with the Store's lock
// held, once the change is made.
func (n *notifier) queue(notice store.Notice) {
	if n.subscribers.Load() == 0 {
		return
	}
	n.mu.Lock()
	n.queued = append(n.queued, notice)
	n.mu.Unlock()
}

// deliver calls the subscribers with the queued notices, unless another
// goroutine is doing so (it then delivers these too). It is called
// without the Store's lock.
func (n *notifier) deliver() {
	n.mu.Lock()
	if n.delivering || len(n.queued) == 0 {
		n.mu.Unlock()
		return
	}
	n.delivering = true
	for len(n.queued) > 0 {
		batch, subs := n.queued, n.subs
		n.queued = nil
		n.mu.Unlock()
		for _, notice := range batch {
			for _, sub := range subs {
				if !sub.cancelled.Load() {
					sub.fn(notice)
				}
			}
		}
		n.mu.Lock()
	}
	n.delivering = false
	n.mu.Unlock()
}
