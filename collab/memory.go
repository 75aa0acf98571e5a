package collab

import (
	"errors"
	"fmt"
	"time"
)

// The memory budget (Config.MaxMemory). Every loaded document has an
// estimate of the memory it holds (docState.memSize), kept up to date
// when it is loaded, when a change is published and when it is unloaded;
// their sum is Authority.memUsed. A load or a submission that would take
// the sum over the budget first unloads idle documents (no request, poll
// or WebSocket using them), least recently used first, and fails with
// ErrOverloaded when that is not enough.

// ErrOverloaded is matched by the refusal of a load or a submission that
// would take the memory of the loaded documents over Config.MaxMemory even
// after unloading the idle ones (HTTP 503, with Retry-After). Nothing
// changed; the same request may succeed later, once documents are idle.
var ErrOverloaded = errors.New("memory budget exhausted")

// memoryError is a refusal for the memory budget: it matches
// ErrOverloaded.
type memoryError struct {
	id                 string
	need, used, budget int64
}

func (e *memoryError) Error() string {
	return fmt.Sprintf("collab: document %q needs about %d bytes of memory: the loaded documents in use hold %d of the memory budget of %d bytes (Limits.MaxMemory); try again later",
		e.id, e.need, e.used, e.budget)
}

func (e *memoryError) Is(target error) bool { return target == ErrOverloaded }

// The parts of a document's memory estimate besides its nodes: the
// document's bookkeeping, each step of the history besides its JSON, and
// each comment and reply besides its text.
const (
	docMem     = 4 << 10
	stepMem    = 192
	commentMem = 160
	replyMem   = 80
)

// memSize returns the estimated memory that a document in state st holds:
// its nodes, its JSON (the cache of Get and of snapshots; counted whether
// or not it is there now), the history of steps and the comments.
func (st docState) memSize() int64 {
	if st.node == nil {
		return 0
	}
	return docMem + st.node.MemSize() + int64(st.node.JSONSize()) + st.histMem + commentsMem(st.comments)
}

// historyMem returns the estimated memory of steps kept in a history.
func historyMem(steps []StepRecord) int64 {
	n := int64(0)
	for _, s := range steps {
		n += stepMem + int64(len(s.JSON)+len(s.ClientID)+len(s.commit))
	}
	return n
}

// commentsMem returns the estimated memory of a document's comments and
// their events.
func commentsMem(l commentLog) int64 {
	// l.bytes counts each comment's and reply's text as JSON plus its
	// fixed share.
	n := int64(l.bytes) + int64(len(l.notes))*commentMem + int64(l.replies)*replyMem
	return n + int64(len(l.pending))*32 + int64(len(l.events))*16 + int64(len(l.threadEvents))*8
}

// addHistory returns st with added appended to its history, keeping the
// last limit steps, and its history's memory estimate updated.
func (st docState) addHistory(added []StepRecord, limit int) docState {
	out := appendHistory(st.steps, added, limit)
	st.histMem += historyMem(added)
	// The front of st.steps followed by added was dropped.
	if dropped := len(st.steps) + len(added) - len(out); dropped <= len(st.steps) {
		st.histMem -= historyMem(st.steps[:dropped])
	} else {
		st.histMem -= historyMem(st.steps) + historyMem(added[:dropped-len(st.steps)])
	}
	st.steps = out
	return st
}

// maxDocMemory returns the most memory one document may hold: 0 without a
// budget.
func (a *Authority) maxDocMemory() int64 {
	return a.cfg.MaxDocMemory
}

// docMemoryError returns the LimitError of a document whose estimated
// memory is over MaxDocMemory.
func (a *Authority) docMemoryError(est int64) error {
	return &LimitError{What: "estimated bytes of document memory (Limits.MaxDocMemory)", Limit: int(a.cfg.MaxDocMemory), Value: int(est)}
}

// MemoryInUse returns the estimated memory, in bytes, that the loaded
// documents hold.
func (a *Authority) MemoryInUse() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.memUsed
}

// admit makes d, which is in the map (loading, or loaded) and in use by
// user, account for est bytes, unloading idle documents when the budget
// needs room. It fails with a *LimitError when est alone is over
// MaxDocMemory, and with an error matching ErrOverloaded when more would
// take user over its share (shares.go) or when the budget has no room
// even after unloading; then d's accounting is unchanged.
func (a *Authority) admit(d *document, est int64, user string) error {
	if limit := a.maxDocMemory(); limit > 0 && est > limit {
		return a.docMemoryError(est)
	}
	skip := map[*document]bool{d: true}
	for {
		a.mu.Lock()
		if a.docs[d.id] != d { // deleted meanwhile: nothing to account
			a.mu.Unlock()
			return nil
		}
		if est > d.mem {
			if err := a.shareLocked(d, user, est); err != nil {
				a.mu.Unlock()
				return err
			}
		}
		if budget := a.cfg.MaxMemory; budget <= 0 || est <= d.mem || a.memUsed-d.mem+est <= budget {
			a.memUsed += est - d.mem
			d.mem = est
			a.mu.Unlock()
			return nil
		}
		victim := a.leastRecentlyUsedLocked(skip)
		if victim == nil {
			err := &memoryError{id: d.id, need: est, used: a.memUsed - d.mem, budget: a.cfg.MaxMemory}
			a.mu.Unlock()
			return err
		}
		a.mu.Unlock()
		skip[victim] = true
		a.unload(victim, func(d *document, _ time.Time) bool { return d.refs == 0 })
	}
}

// leastRecentlyUsedLocked returns the loaded document without users that
// was used least recently, leaving out those in skip; nil when there is
// none. It is called with a.mu held.
func (a *Authority) leastRecentlyUsedLocked(skip map[*document]bool) *document {
	var lru *document
	for _, d := range a.docs {
		if d.loaded && d.refs == 0 && !skip[d] && (lru == nil || d.lastActive.Before(lru.lastActive)) {
			lru = d
		}
	}
	return lru
}

// account sets d's estimate to est, when d is still in the map.
func (a *Authority) account(d *document, est int64) {
	a.mu.Lock()
	if a.docs[d.id] == d {
		a.memUsed += est - d.mem
		d.mem = est
	}
	a.mu.Unlock()
}

// dropLocked removes d from the map and its estimate from the total. It
// is called with a.mu held, and d in the map.
func (a *Authority) dropLocked(d *document) {
	if d.loaded && a.cfg.Observer != nil && !a.closed {
		a.cfg.Observer.DocumentsLoaded(-1)
	}
	delete(a.docs, d.id)
	a.memUsed -= d.mem
	d.mem = 0
}

// MaxMemory returns the memory budget in effect (Config.MaxMemory; 0: none).
func (a *Authority) MaxMemory() int64 { return a.cfg.MaxMemory }
