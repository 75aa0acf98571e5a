package collab

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/pmauthority/pmauthority/internal/ratelimit"
)

// creations counts the documents of the store against
// Config.MaxDocuments, and the documents each user creates against
// Config.MaxCreatesPerHour.
//
// The count is the store's documents when the first creation is asked
// for, then this Authority's creations and deletions: documents that
// other writers sharing the store create or delete are not counted until
// a restart, so with a shared store MaxDocuments bounds each node's view,
// an approximation.
//
// Each user's share of MaxDocuments (MaxClientDocuments) counts the
// documents that this Authority created for the user and has not deleted
// since. The store does not record who created a document, so the count
// starts at 0 when the Authority starts: within one process a user
// cannot fill the store for the others; over restarts MaxCreatesPerHour
// bounds how fast one user takes more. The creators are kept in memory,
// one entry (about 100 bytes) per document created since the start.
type creations struct {
	mu      sync.Mutex
	counted bool // count holds the store's documents
	count   int
	perUser *ratelimit.Table // of MaxCreatesPerHour; nil until used
	// byUser counts the documents created (or being created) for each
	// user, and creator is the user of each document created.
	byUser  map[string]int
	creator map[string]string
}

// allowCreate is called before a document is created for user ("" for
// Create, which only MaxDocuments bounds). It counts the creation, or
// refuses it: an error matching ErrTooManyDocuments when the store holds
// MaxDocuments or user its share of them (MaxClientDocuments), a
// *RateError when user went over MaxCreatesPerHour. A creation that
// then fails gives its place back (createFailed); one that succeeds is
// recorded as user's (created).
func (a *Authority) allowCreate(ctx context.Context, id, user string) error {
	c := &a.creations
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.counted {
		docs, err := a.store.List(ctx)
		if err != nil {
			return storeFailed(err, "collab: create %q: counting the documents", id)
		}
		c.count, c.counted = len(docs), true
	}
	if c.count >= a.cfg.MaxDocuments {
		return fmt.Errorf("collab: create %q: %w: the store holds the limit of %d (Limits.MaxDocuments)",
			id, ErrTooManyDocuments, a.cfg.MaxDocuments)
	}
	if user != "" && c.byUser[user] >= a.cfg.MaxClientDocuments {
		return fmt.Errorf("collab: create %q: %w: this client created its share of %d of them (Limits.MaxClientDocuments)",
			id, ErrTooManyDocuments, a.cfg.MaxClientDocuments)
	}
	if user != "" {
		if c.perUser == nil {
			n := float64(a.cfg.MaxCreatesPerHour)
			c.perUser = ratelimit.NewTable(n/3600, n)
		}
		if ok, wait := c.perUser.Take(user, a.now()); !ok {
			return &RateError{RetryAfter: wait,
				Msg: "too many new documents: over " + strconv.Itoa(a.cfg.MaxCreatesPerHour) +
					" per hour from this client (Limits.MaxCreatesPerHour)"}
		}
	}
	c.count++
	if user != "" {
		if c.byUser == nil {
			c.byUser = make(map[string]int)
		}
		c.byUser[user]++
	}
	return nil
}

// createFailed gives back the place that allowCreate counted for a
// creation for user that did not happen.
func (a *Authority) createFailed(user string) {
	c := &a.creations
	c.mu.Lock()
	c.count--
	c.forgetLocked(user)
	c.mu.Unlock()
}

// created records user as the creator of the document id, which
// allowCreate counted for it.
func (a *Authority) created(id, user string) {
	if user == "" {
		return
	}
	c := &a.creations
	c.mu.Lock()
	if c.creator == nil {
		c.creator = make(map[string]string)
	}
	c.creator[id] = user
	c.mu.Unlock()
}

// deleted counts the deleted document id, and gives its creator's place
// back.
func (a *Authority) deleted(id string) {
	c := &a.creations
	c.mu.Lock()
	if c.counted {
		c.count--
	}
	if user, ok := c.creator[id]; ok {
		delete(c.creator, id)
		c.forgetLocked(user)
	}
	c.mu.Unlock()
}

// forgetLocked takes one document off user's count. It is called with
// mu held.
func (c *creations) forgetLocked(user string) {
	if n := c.byUser[user]; n > 1 {
		c.byUser[user] = n - 1
	} else {
		delete(c.byUser, user)
	}
}

// DocumentCount returns how many documents the Authority counts against
// Config.MaxDocuments (see MaxDocuments), and false before it has counted
// them (at the first creation).
func (a *Authority) DocumentCount() (int, bool) {
	c := &a.creations
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count, c.counted
}
