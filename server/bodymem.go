package server

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// bodyMemoryWait is how long a request waits for room in the budget of
// request bodies before it is refused.
const bodyMemoryWait = 2 * time.Second

// bodyBudget bounds the bytes of request bodies being read or held by
// requests in flight (Limits.MaxBodyMemory): a request reserves its
// Content-Length (the body limit when it has none) before it reads its
// body, and releases it when its answer is written.
type bodyBudget struct {
	limit int64
	wait  time.Duration

	mu      sync.Mutex
	used    int64
	changed chan struct{} // closed (and replaced) when bytes are released
}

func newBodyBudget(limit int64, wait time.Duration) *bodyBudget {
	return &bodyBudget{limit: limit, wait: wait, changed: make(chan struct{})}
}

// reserve reserves n bytes, waiting up to b.wait for them while the budget
// is full, and reports whether it did. A request larger than the whole
// budget is let through when nothing else is reserved, so that it is
// refused by the body limit rather than never admitted.
func (b *bodyBudget) reserve(ctx context.Context, n int64) bool {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+n <= b.limit || b.used == 0 {
			b.used += n
			b.mu.Unlock()
			return true
		}
		changed := b.changed
		b.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// release gives back n reserved bytes.
func (b *bodyBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// inUse returns the bytes reserved.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// bodyMemoryError refuses a request whose body does not fit in the budget
// of request bodies (503 with Retry-After): it matches
// collab.ErrOverloaded.
type bodyMemoryError struct{ limit int64 }

func (e *bodyMemoryError) Error() string {
	return "server busy: the request bodies being read or held are at the limit of " +
		strconv.FormatInt(e.limit, 10) + " bytes (Limits.MaxBodyMemory); try again later"
}

func (e *bodyMemoryError) Is(target error) bool { return target == collab.ErrOverloaded }
