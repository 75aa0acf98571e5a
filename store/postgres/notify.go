package postgres

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmauthority/pmauthority/store"
)

// channel is the NOTIFY channel of every Store on a database.
const channel = "pmauthority"

// maxPayload is the longest payload sent: PostgreSQL takes less than
// 8000 bytes.
const maxPayload = 7999

// allPayload is the payload of a notice whose document id is too long to
// send: every subscriber checks every document it has.
const allPayload = "*"

// payload returns the NOTIFY payload of a document's change:
// "version flag id" with flag m for metadata alone, s otherwise, and the
// id in unpadded URL base64 (a payload is text without NUL; an id is any
// bytes).
func payload(id string, version int64, metaOnly bool) string {
	flag := "s"
	if metaOnly {
		flag = "m"
	}
	p := strconv.FormatInt(version, 10) + " " + flag + " " + base64.RawURLEncoding.EncodeToString([]byte(id))
	if len(p) > maxPayload {
		return allPayload
	}
	return p
}

// parsePayload returns the notice of a payload; one it cannot read (or
// allPayload) is Notice{ID: ""}, which makes the subscribers check
// everything.
func parsePayload(p string) store.Notice {
	parts := strings.SplitN(p, " ", 3)
	if len(parts) != 3 || parts[1] != "s" && parts[1] != "m" {
		return store.Notice{}
	}
	version, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return store.Notice{}
	}
	id, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(id) == 0 {
		return store.Notice{}
	}
	return store.Notice{ID: string(id), Version: version, MetaOnly: parts[1] == "m"}
}

// Back-off of the listener's reconnections.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// The listener pings its connection after pingEvery without a notice, so
// that a connection lost without a word (a network gone silent) is
// noticed and replaced; a ping unanswered within pingTimeout fails it.
const (
	pingEvery   = 30 * time.Second
	pingTimeout = 10 * time.Second
)

// notifier is the Store's listener and its subscribers. The listener
// runs on its own connection from the first Subscribe until Close, and
// calls the subscribers on its goroutine, in the order PostgreSQL
// delivers the notices (commit order).
type notifier struct {
	store *Store

	mu      sync.Mutex
	connCfg *pgx.ConnConfig // of the listener's connection
	ping    time.Duration   // pingEvery, shorter in tests; set before the listener starts
	subs    []*subscriber   // replaced, never modified in place
	cancel  context.CancelFunc
	done    chan struct{} // closed when the listener ends
	stopped bool
}

type subscriber struct {
	fn        func(store.Notice)
	cancelled atomic.Bool
}

// Subscribe implements store.Notifier. fn is called on the Store's
// listener goroutine, for the commits of every Store on the database, in
// commit order; after the listener (re)connects, which may have missed
// notices, with store.Notice{ID: ""}. fn may call the Store. A call of fn
// already running may end after cancel returns; none starts afterwards.
func (s *Store) Subscribe(fn func(store.Notice)) (cancel func()) {
	return s.notes.subscribe(fn)
}

// subscribe adds fn, starting the listener at the first call.
func (n *notifier) subscribe(fn func(store.Notice)) func() {
	sub := &subscriber{fn: fn}
	n.mu.Lock()
	n.subs = append(slices.Clip(n.subs), sub)
	n.mu.Unlock()
	n.start()
	var once sync.Once
	return func() {
		once.Do(func() {
			sub.cancelled.Store(true)
			n.mu.Lock()
			n.subs = slices.DeleteFunc(slices.Clone(n.subs), func(s *subscriber) bool { return s == sub })
			n.mu.Unlock()
		})
	}
}

// start starts the listener unless it runs (or ran).
func (n *notifier) start() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done == nil && !n.stopped {
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel, n.done = cancel, make(chan struct{})
		go n.listen(ctx)
	}
}

// stop ends the listener and waits for it.
func (n *notifier) stop() {
	n.mu.Lock()
	n.stopped = true
	cancel, done := n.cancel, n.done
	n.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// deliver calls the subscribers with notice.
func (n *notifier) deliver(notice store.Notice) {
	n.mu.Lock()
	subs := n.subs
	n.mu.Unlock()
	for _, sub := range subs {
		if !sub.cancelled.Load() {
			sub.fn(notice)
		}
	}
}

// wait returns the next notice of conn, pinging it after every n.ping
// without one. It fails when the connection does, and when ctx is done.
func (n *notifier) wait(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, n.ping)
		note, err := conn.WaitForNotification(wctx)
		timedOut := wctx.Err() != nil
		cancel()
		if err == nil || ctx.Err() != nil || !timedOut || conn.IsClosed() {
			return note, err
		}
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return nil, err
		}
	}
}

// listen connects, LISTENs, and delivers the notices until ctx is done,
// reconnecting with back-off when the connection fails. After every
// LISTEN, the first included, it delivers Notice{ID: ""}: the commits
// before it (since the connection was lost, or since Subscribe) were not
// heard.
func (n *notifier) listen(ctx context.Context) {
	defer close(n.done)
	backoff := minBackoff
	for ctx.Err() == nil {
		n.mu.Lock()
		cfg := n.connCfg.Copy()
		n.mu.Unlock()
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			// The broadcasts' channel first: the connection's last
			// query (in pg_stat_activity) is then the notices' LISTEN.
			_, err = conn.Exec(ctx, "LISTEN "+castChannel)
			if err == nil {
				_, err = conn.Exec(ctx, "LISTEN "+channel)
			}
			if err != nil {
				conn.Close(context.Background())
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if l := n.store.logger; l != nil {
				l.Warn("postgres: the listener cannot connect; retrying", "err", err, "in", backoff)
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = minBackoff
		n.deliver(store.Notice{})
		for {
			note, err := n.wait(ctx, conn)
			if err != nil {
				if ctx.Err() == nil {
					if l := n.store.logger; l != nil {
						l.Warn("postgres: the listener lost its connection; reconnecting", "err", err)
					}
				}
				break
			}
			if note.Channel == castChannel {
				n.store.casts.deliver(note.Payload)
				continue
			}
			n.deliver(parsePayload(note.Payload))
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx)
		cancel()
	}
}
