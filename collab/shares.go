package collab

import (
	"context"
	"fmt"
	"sync"
)

// Fair shares of the memory budget (Config.MaxClientMemory). A document
// is in use by a client (the user of Get, Events, Submit and Hold) while
// a call of that client holds it: a request, a waiting poll, a WebSocket.
// Documents in use cannot be unloaded, so without a share one client
// could keep the whole budget in use and every other load would fail.
// The memory of a document counts, whole, for every client that has it
// in use; a client's documents in use together may hold its share,
// except that one document alone may always hold up to MaxDocMemory
// (the share cannot make a document that the budget takes unusable).
//
// A client over its share is refused where it asks for more memory: when
// it begins to use a document (acquire), and when a document it uses
// grows by a load or a submission of its own (admit). What it already
// holds stays; documents that other clients grow count for it as they
// grow, without refusing them.

// clientUses are the documents that one client has in use, each with the
// number of its calls using it. Guarded by Authority.mu.
type clientUses map[*document]int

// clientMemoryError is the refusal of a client over its share of the
// memory budget: it matches ErrOverloaded (HTTP 503, with Retry-After).
type clientMemoryError struct {
	id                string
	need, held, share int64
}

func (e *clientMemoryError) Error() string {
	return fmt.Sprintf("collab: document %q needs about %d bytes of memory: the other documents that this client has in use hold %d bytes of its share of %d bytes of the memory budget (Limits.MaxClientMemory); try again once it uses fewer",
		e.id, e.need, e.held, e.share)
}

func (e *clientMemoryError) Is(target error) bool { return target == ErrOverloaded }

// useLocked counts a use of d by user and reports whether user had not
// been using d. It is called with a.mu held.
func (a *Authority) useLocked(d *document, user string) bool {
	if user == "" {
		return false
	}
	if a.uses == nil {
		a.uses = make(map[string]clientUses)
	}
	u := a.uses[user]
	if u == nil {
		u = make(clientUses)
		a.uses[user] = u
	}
	u[d]++
	return u[d] == 1
}

// unuseLocked ends a use of d by user that useLocked counted. It is
// called with a.mu held.
func (a *Authority) unuseLocked(d *document, user string) {
	u := a.uses[user]
	if u == nil {
		return
	}
	if u[d] > 1 {
		u[d]--
		return
	}
	delete(u, d)
	if len(u) == 0 {
		delete(a.uses, user)
	}
}

// shareLocked returns the refusal of est bytes for d, which user uses,
// when they would take user over its share, nil otherwise. It is called
// with a.mu held.
func (a *Authority) shareLocked(d *document, user string, est int64) error {
	share := a.cfg.MaxClientMemory
	uses := a.uses[user]
	if share <= 0 || user == "" || len(uses) == 1 && uses[d] > 0 {
		return nil // no share, or d is the only document user has in use
	}
	held := int64(0) // by the other documents in use
	for o := range uses {
		if o != d {
			held += o.mem
		}
	}
	if held == 0 || held+est <= share {
		return nil
	}
	return &clientMemoryError{id: d.id, need: est, held: held, share: share}
}

// checkShare refuses the first use of d by user (d loaded by another
// call) when d would take user over its share.
func (a *Authority) checkShare(d *document, user string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.shareLocked(d, user, d.mem)
}

// Hold loads the document id (or creates it, with Config.AutoCreate) as
// Get does, and keeps it loaded and in use by user until release is
// called: for a transport's connection that follows the document (a
// WebSocket), which the share of the memory budget of user
// (Config.MaxClientMemory) then counts. It fails as Get does, and with
// an error matching ErrOverloaded when user is over its share.
func (a *Authority) Hold(ctx context.Context, id, user string) (release func(), err error) {
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() { a.release(d, user) }), nil
}
