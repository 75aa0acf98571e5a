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
type creations struct {
	mu      sync.Mutex
	counted bool // count holds the store's documents
	count   int
	perUser *ratelimit.Table // of MaxCreatesPerHour; nil until used
}

// allowCreate is called before a document is created for user ("" for
// Create, which only MaxDocuments bounds). It counts the creation, or
// refuses it: a *RateError when user went over MaxCreatesPerHour, an
// error matching ErrTooManyDocuments when the store holds MaxDocuments.
// A creation that then fails gives its place back (createFailed).
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
		return fmt.Errorf("collab: create %q: %w: the store holds the limit of %d (Config.MaxDocuments, serve --max-documents)",
			id, ErrTooManyDocuments, a.cfg.MaxDocuments)
	}
	if user != "" {
		if c.perUser == nil {
			n := float64(a.cfg.MaxCreatesPerHour)
			c.perUser = ratelimit.NewTable(n/3600, n)
		}
		if ok, wait := c.perUser.Take(user, a.now()); !ok {
			return &RateError{RetryAfter: wait,
				Msg: "too many new documents: over " + strconv.Itoa(a.cfg.MaxCreatesPerHour) +
					" per hour from this client (Config.MaxCreatesPerHour, serve --max-creates)"}
		}
	}
	c.count++
	return nil
}

// createFailed gives back the place that allowCreate counted for a
// creation that did not happen.
func (a *Authority) createFailed() {
	c := &a.creations
	c.mu.Lock()
	c.count--
	c.mu.Unlock()
}

// deleted counts a deleted document.
func (a *Authority) deleted() {
	c := &a.creations
	c.mu.Lock()
	if c.counted {
		c.count--
	}
	c.mu.Unlock()
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
