package collab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// Reads hold memory outside the loaded documents: steps read from the
// store, a document rebuilt at a past version, an answer being written.
// They reserve it in the memory budget (Config.MaxMemory), where it counts
// with the documents' estimates in Authority.memUsed, so that a read that
// does not fit unloads idle documents or is refused with ErrOverloaded
// instead of taking the process over its memory.

// Reservation is memory that a reader holds outside the loaded documents,
// counted in the memory budget until it is released. Its methods are safe
// for concurrent use; the zero of a *Reservation (nil) reserves nothing
// and takes everything.
type Reservation struct {
	a    *Authority
	what string // what the memory is for, in the refusal
	n    int64  // guarded by a.mu
}

// Reserve returns a Reservation of nothing yet for the memory of what (a
// short description, such as `the steps of "doc"`, for its refusals), to
// grow with Resize as the reader takes memory and to Release when done.
func (a *Authority) Reserve(what string) *Reservation {
	return &Reservation{a: a, what: what}
}

// readMemoryError refuses a read whose memory does not fit in the budget:
// it matches ErrOverloaded.
type readMemoryError struct {
	what               string
	need, used, budget int64
}

func (e *readMemoryError) Error() string {
	return fmt.Sprintf("collab: reading %s needs about %d bytes of memory: the loaded documents in use and the reads in flight hold %d of the memory budget of %d bytes (Limits.MaxMemory); try again later",
		e.what, e.need, e.used, e.budget)
}

func (e *readMemoryError) Is(target error) bool { return target == ErrOverloaded }

// Size returns the bytes that r holds.
func (r *Reservation) Size() int64 {
	if r == nil {
		return 0
	}
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	return r.n
}

// Grow adds n bytes to r (Resize to its size plus n).
func (r *Reservation) Grow(n int64) error {
	if r == nil || n <= 0 {
		return nil
	}
	r.a.mu.Lock()
	total := r.n + n
	r.a.mu.Unlock()
	return r.Resize(total)
}

// Resize makes r hold n bytes. Shrinking always succeeds; growing unloads
// idle documents (least recently used first) when the budget needs room,
// and fails with an error matching ErrOverloaded, r unchanged, when it
// has none even so.
func (r *Reservation) Resize(n int64) error {
	if r == nil {
		return nil
	}
	a := r.a
	n = max(n, 0)
	skip := map[*document]bool{}
	for {
		a.mu.Lock()
		if budget := a.cfg.MaxMemory; budget <= 0 || n <= r.n || a.memUsed-r.n+n <= budget {
			a.memUsed += n - r.n
			a.reserved += n - r.n
			r.n = n
			a.mu.Unlock()
			return nil
		}
		victim := a.leastRecentlyUsedLocked(skip)
		if victim == nil {
			err := &readMemoryError{what: r.what, need: n - r.n, used: a.memUsed, budget: a.cfg.MaxMemory}
			a.mu.Unlock()
			return err
		}
		a.mu.Unlock()
		skip[victim] = true
		a.unload(victim, func(d *document, _ time.Time) bool { return d.refs == 0 })
	}
}

// Release gives back all that r holds; r may be used again.
func (r *Reservation) Release() {
	if r != nil {
		r.Resize(0)
	}
}

// ReservedMemory returns the bytes that reads hold in the memory budget
// (Reservation), besides the loaded documents.
func (a *Authority) ReservedMemory() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reserved
}

// Reading the step log in parts.
const (
	// stepChunkBytes is the most bytes of steps that a reader of the
	// step log holds at once (a larger step alone).
	stepChunkBytes = 4 << 20
	// stepChunkSteps is the most steps read at once from a store that is
	// no store.StepSizer, whose steps' sizes are only known once read.
	stepChunkSteps = 16
	// sizeWindow is the most step sizes asked of a store.StepSizer at
	// once.
	sizeWindow = 4096
)

// stepHeld returns the memory that a step read from the store holds: its
// bytes, their parsed form (a reader replays or maps it) and the record.
func stepHeld(size int64) int64 { return 2*size + stepMem }

// readSteps calls fn with the steps of id with from < Version ≤ to, in
// order, in parts of at most maxBytes of steps (a larger step alone; 0
// means stepChunkBytes), each part reserved in the budget (for what)
// while fn runs and released after; with keep, the parts are reserved in
// keep instead, and stay there (for a caller that keeps the steps). fn
// returns whether to go on. From a store.StepSizer the sizes are known
// before the steps are read, so no part is read that does not fit; from
// another store a part of stepChunkSteps steps is reserved once read. It fails as store.Steps does (its error not
// wrapped when it is store.ErrCompacted, else a store failure), with fn's
// error, with ErrOverloaded when a part does not fit, and when the store
// returns other steps than asked.
func (a *Authority) readSteps(ctx context.Context, id string, from, to, maxBytes int64, what string, keep *Reservation, fn func([]store.Step) (bool, error)) error {
	if maxBytes <= 0 {
		maxBytes = stepChunkBytes
	}
	r, held := keep, func(size int64) int64 { return size + stepMem }
	if keep == nil {
		r, held = a.Reserve(what), stepHeld
		defer r.Release()
	}
	base := r.Size()
	sizer, _ := a.store.(store.StepSizer)
	var sizes []int64 // of the steps after from, when known
	for from < to {
		end := min(to, from+stepChunkSteps)
		part := int64(0)
		if sizer != nil {
			if len(sizes) == 0 {
				var err error
				if sizes, err = sizer.StepSizes(ctx, id, from, min(to, from+sizeWindow)); err != nil {
					return readFailed(err, id, from)
				}
				if len(sizes) == 0 {
					return fmt.Errorf("collab: %q: the store has no step sizes after version %d, want %d", id, from, to-from)
				}
			}
			n, bytes := 0, int64(0)
			for n < len(sizes) && (n == 0 || bytes+sizes[n] <= maxBytes) {
				bytes += sizes[n]
				part += held(sizes[n])
				n++
			}
			sizes = sizes[n:]
			end = from + int64(n)
			if err := r.Resize(base + part); err != nil {
				return err
			}
		}
		steps, err := a.store.Steps(ctx, id, from, end)
		if err != nil {
			return readFailed(err, id, from)
		}
		if int64(len(steps)) != end-from {
			return fmt.Errorf("collab: %q: the store returned %d steps after version %d, want %d", id, len(steps), from, end-from)
		}
		if sizer == nil {
			for _, s := range steps {
				part += held(stepSize(s))
			}
			if err := r.Resize(base + part); err != nil {
				return err
			}
		}
		for i, s := range steps {
			if v := from + int64(i) + 1; s.Version != v {
				return fmt.Errorf("collab: %q: the store returned step %d where %d was due", id, s.Version, v)
			}
		}
		more, err := fn(steps)
		if err != nil || !more {
			return err
		}
		if keep != nil {
			base += part
		}
		from = end
	}
	return nil
}

// readFailed returns the error of a read of the steps of id after from:
// store.ErrCompacted as it is (its callers read again), other errors as
// store failures.
func readFailed(err error, id string, from int64) error {
	if errors.Is(err, store.ErrCompacted) {
		return err
	}
	return storeFailed(err, "collab: steps of %q after %d", id, from)
}
