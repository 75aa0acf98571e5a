package collab

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// DefaultAfterCommitQueue is the default of Config.AfterCommitQueue.
const DefaultAfterCommitQueue = 1024

// Proposal is a submission that would change a document, as
// Config.BeforeSubmit sees it: its steps applied in memory, nothing
// stored yet. Its fields must not be modified.
type Proposal struct {
	// ID is the document's id.
	ID string
	// Author is Submission.Author.
	Author string
	// ClientID is the submitting client's id (nil for a submission of
	// comment events alone).
	ClientID ClientID
	// Version is the version the steps apply to: the document's current
	// version.
	Version int64
	// Steps are the decoded steps, in order.
	Steps []transform.Step
	// StepsJSON are the steps' JSON forms as they would be stored
	// (re-encoded from Steps).
	StepsJSON [][]byte
	// Before is the document at Version; After is the document after
	// Steps (Before itself when there are none).
	Before, After *model.Node
	// Comments are the submission's comment events.
	Comments []CommentEvent
}

// Commit is a submission that an Authority made durable and published, as
// Config.AfterCommit sees it. Its fields must not be modified.
type Commit struct {
	// ID is the document's id.
	ID string
	// Author is Submission.Author.
	Author string
	// ClientID is the submitting client's id (nil for a submission of
	// comment events alone).
	ClientID ClientID
	// From and To are the document's versions before and after the
	// submission (equal for comment events alone).
	From, To int64
	// Steps are the accepted steps (versions From+1 … To), maps included.
	Steps []StepRecord
	// Comments are the submission's comment events.
	Comments []CommentEvent
	// CommentVersion is the comment version after the submission.
	CommentVersion int64
	// Time is when the steps were accepted (their time in the store).
	Time time.Time
}

// commitQueue runs Config.AfterCommit on one goroutine, in commit order,
// for commits that never wait for it: when the queue is full a commit is
// dropped.
type commitQueue struct {
	a       *Authority
	fn      func(context.Context, Commit) error
	mu      sync.Mutex // guards closed and the sends on ch
	closed  bool
	ch      chan Commit
	done    chan struct{} // closed when the goroutine has run everything
	dropped atomic.Int64
}

func newCommitQueue(a *Authority, fn func(context.Context, Commit) error, size int) *commitQueue {
	q := &commitQueue{a: a, fn: fn, ch: make(chan Commit, size), done: make(chan struct{})}
	go q.run()
	return q
}

// add queues c without waiting; a full queue drops it.
func (q *commitQueue) add(c Commit) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	select {
	case q.ch <- c:
		q.mu.Unlock()
		return
	default:
	}
	q.mu.Unlock()
	n := q.dropped.Add(1)
	q.a.log.Warn("collab: AfterCommit queue full, commit dropped", "doc", c.ID, "from", c.From, "to", c.To, "dropped", n)
}

// run calls the hook for every queued commit until close.
func (q *commitQueue) run() {
	defer close(q.done)
	for c := range q.ch {
		if err := q.fn(context.Background(), c); err != nil {
			q.a.log.Warn("collab: AfterCommit failed", "doc", c.ID, "from", c.From, "to", c.To, "err", err)
		}
	}
}

// close stops taking commits and waits until the queued ones have run.
func (q *commitQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
	q.mu.Unlock()
	<-q.done
}

// DroppedCommits returns how many commits Config.AfterCommit missed
// because its queue was full.
func (a *Authority) DroppedCommits() int64 {
	if a.commits == nil {
		return 0
	}
	return a.commits.dropped.Load()
}
