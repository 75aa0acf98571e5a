package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pmauthority/pmauthority/store"
)

// Group commit: concurrent Appends are committed together. An Append
// queues its statement; while fewer than committer.max batches are in
// flight a new one starts, taking everything queued (up to maxBatch
// statements, maxBatchBytes of arguments). A batch is sent as one
// pipeline, which PostgreSQL runs as one implicit transaction: one round
// trip and one commit for all of them. A stale Append is no error in the
// statement (it updates no row and inserts nothing), so a conflict in one
// does not fail the others. A statement that does fail rolls the whole
// batch back, and its Appends are then run one by one, each on its own.
// The statements of a batch are in the order of their document ids, so
// that two batches (of this process or another) lock the documents' rows
// in the same order and cannot deadlock.

// Bounds of a batch.
const (
	maxBatch      = 128
	maxBatchBytes = 8 << 20
)

// maxInFlight bounds the batches in flight (and half the pool, so that
// reads keep connections). A batch NOTIFYs, and PostgreSQL commits the
// transactions that NOTIFY one at a time, holding a lock of the whole
// server through the commit's WAL flush: more batches in flight do not
// commit more often, they only make each batch smaller. With two, one
// batch runs its statements while the other commits. Against five (see
// BenchmarkInFlight and bench/RESULTS.md, "Cluster on PostgreSQL"):
// 0.8-2.1 times the Appends/s of 100 documents in the store, and about
// 1.2 times the steps/s of three nodes at 0.8 times their CPU per step.
const maxInFlight = 2

// appendReq is one queued Append.
type appendReq struct {
	ctx     context.Context
	id      string
	base    int64
	metaSeq int64 // -1 for Append
	args    []any // appendSQL's
	bytes   int   // about the size of args

	// The results, set before done is closed.
	updated int
	version *int64 // the version seen, nil when there is no document
	seq     *int64
	err     error
	done    chan struct{}
}

// committer runs the batches of a Store's Appends.
type committer struct {
	pool    *pgxpool.Pool
	max     int           // batches in flight at most
	timeout time.Duration // what a batch takes at most, 0 for no limit (Store.bound)
	obs     store.CommitObserver
	sql     string // the statement of an Append: appendSQL

	mu      sync.Mutex
	queue   []*appendReq
	running int
}

// do runs r in a batch and waits for its result, or for ctx (then the
// Append may or may not commit, as when a connection fails).
func (c *committer) do(r *appendReq) error {
	r.done = make(chan struct{})
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if c.running < c.max {
		c.running++
		go c.run()
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// run executes batches until the queue is empty.
func (c *committer) run() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.running--
			c.mu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(c.queue) && n < maxBatch && (n == 0 || size+c.queue[n].bytes <= maxBatchBytes) {
			size += c.queue[n].bytes
			n++
		}
		batch := slices.Clone(c.queue[:n])
		c.queue = slices.Delete(c.queue, 0, n)
		c.mu.Unlock()
		c.exec(batch)
	}
}

// exec executes one batch and sets the results of its requests; the
// observer is told of the commit before any of its callers returns.
func (c *committer) exec(batch []*appendReq) {
	var start time.Time
	if c.obs != nil {
		start = time.Now()
	}
	defer func() {
		if c.obs != nil {
			c.obs.ObserveCommit(time.Since(start), len(batch))
		}
		for _, r := range batch {
			close(r.done)
		}
	}()
	// The requests whose caller gave up are not sent.
	live := make([]*appendReq, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
		} else {
			live = append(live, r)
		}
	}
	if len(live) == 1 {
		c.single(live[0])
		return
	}
	if len(live) == 0 {
		return
	}
	slices.SortStableFunc(live, func(a, b *appendReq) int { return strings.Compare(a.id, b.id) })
	b := &pgx.Batch{}
	for _, r := range live {
		b.Queue(c.sql, r.args...)
	}
	// The batch runs to its end whatever its callers' contexts do: they
	// may stop waiting, but it commits or not for all of them. Only the
	// Store's own bound ends it.
	ctx := context.Background()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.timeout, errOpTimeout)
		defer cancel()
	}
	br := c.pool.SendBatch(ctx, b)
	var failed, rolledBack error
	for _, r := range live {
		var notified int
		r.err = br.QueryRow().Scan(&r.updated, &notified, &r.version, &r.seq)
		if r.err != nil && failed == nil {
			failed = r.err
		}
		var pgErr *pgconn.PgError
		if errors.As(r.err, &pgErr) && rolledBack == nil {
			rolledBack = r.err
		}
	}
	if err := br.Close(); err != nil && failed == nil {
		failed = err
	}
	switch {
	case rolledBack != nil:
		// A statement failed: the transaction is rolled back, nothing
		// of the batch is kept. Each Append is run again on its own.
		for _, r := range live {
			r.updated, r.version, r.seq, r.err = 0, nil, nil, nil
			c.single(r)
		}
	case failed != nil:
		// The connection failed: whether the batch committed is
		// unknown, and it is not run again.
		for _, r := range live {
			r.err = failed
		}
	}
}

// single runs one Append in its own implicit transaction.
func (c *committer) single(r *appendReq) {
	var notified int
	r.err = c.pool.QueryRow(r.ctx, c.sql, r.args...).Scan(&r.updated, &notified, &r.version, &r.seq)
}
