package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/store"
)

// The broadcasts of store.Broadcaster travel as NOTIFYs on a channel of
// their own, castChannel, which the Store's listener LISTENs to beside
// the notices' channel. A payload is the sending node's id and a newline,
// then one or more messages, each "topic length\n" and length bytes of
// message:
//
//	3f9a…\npresence 42\n{"doc":…}users 17\n{…}
//
// One goroutine per Store (the caster) sends what Broadcast queued: all
// the messages queued meanwhile, packed into as few payloads as fit under
// PostgreSQL's 8000 bytes, with one statement (one transaction) per 64
// payloads, and then waits castEvery before the next. A transaction that
// NOTIFYs takes a lock that serializes the commits of every such
// transaction on the database, so the broadcasts of a node cost at most
// 1/castEvery of those commits per second, however many documents and
// editors it serves; the steps' commits take the lock once each, with
// their notice.

// castChannel is the NOTIFY channel of the broadcasts.
const castChannel = "pmauthority_cast"

// castEvery is the shortest time between two of a Store's broadcasting
// transactions: at most 50 a second.
const castEvery = 20 * time.Millisecond

// castQueueBytes bounds the messages queued and not yet sent; Broadcast
// fails beyond it.
const castQueueBytes = 4 << 20

// castPerStatement is the most payloads one statement sends.
const castPerStatement = 64

// castTimeout bounds one broadcasting statement.
const castTimeout = 10 * time.Second

// errCastFull is Broadcast's error when its queue is full.
var errCastFull = errors.New("postgres: broadcast queue full (the database is slow or away)")

// caster sends a Store's broadcasts and delivers those of other nodes to
// the subscribers.
type caster struct {
	store *Store
	node  string

	mu      sync.Mutex
	queue   []castMsg
	queued  int // bytes in queue
	running bool
	stopped bool
	signal  chan struct{} // has a value when queue is not empty
	quit    chan struct{} // closed by stop
	done    chan struct{} // closed when the sending goroutine ends
	subs    []*castSub    // replaced, never modified in place

	// Counted for tests and measurements.
	statements atomic.Int64 // broadcasting statements run
	payloads   atomic.Int64 // payloads sent
	received   atomic.Int64 // payloads of other nodes heard
}

type castMsg struct {
	topic string
	msg   []byte
}

type castSub struct {
	topic     string
	fn        func(node string, msg []byte)
	cancelled atomic.Bool
}

// newNodeID returns a random node id: 16 hexadecimal digits.
func newNodeID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Node implements store.Broadcaster.
func (s *Store) Node() string { return s.casts.node }

// Broadcast implements store.Broadcaster: msg is queued and sent with
// the others queued by the next broadcasting transaction, within
// castEvery of the previous one. It fails for a malformed topic or
// message, after Close, and when more than 4 MiB wait to be sent.
func (s *Store) Broadcast(topic string, msg []byte) error {
	if err := checkCast(topic, msg); err != nil {
		return err
	}
	return s.casts.add(topic, msg)
}

// SubscribeBroadcasts implements store.Broadcaster. fn is called on the
// Store's listener goroutine (which it starts, as Subscribe does).
func (s *Store) SubscribeBroadcasts(topic string, fn func(node string, msg []byte)) (cancel func()) {
	c := &s.casts
	sub := &castSub{topic: topic, fn: fn}
	c.mu.Lock()
	c.subs = append(slices.Clip(c.subs), sub)
	c.mu.Unlock()
	s.notes.start()
	var once sync.Once
	return func() {
		once.Do(func() {
			sub.cancelled.Store(true)
			c.mu.Lock()
			c.subs = slices.DeleteFunc(slices.Clone(c.subs), func(o *castSub) bool { return o == sub })
			c.mu.Unlock()
		})
	}
}

// checkCast returns why topic and msg cannot be broadcast, or nil.
func checkCast(topic string, msg []byte) error {
	if topic == "" || len(topic) > 64 {
		return fmt.Errorf("postgres: broadcast topic %q: want 1 to 64 letters, digits, '-' or '_'", topic)
	}
	for i := 0; i < len(topic); i++ {
		b := topic[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			return fmt.Errorf("postgres: broadcast topic %q: want 1 to 64 letters, digits, '-' or '_'", topic)
		}
	}
	if n := len(topic) + len(msg); n > store.MaxBroadcast {
		return fmt.Errorf("postgres: broadcast of %d bytes: at most %d", n, store.MaxBroadcast)
	}
	if !utf8.Valid(msg) || slices.Contains(msg, 0) {
		return errors.New("postgres: a broadcast message must be UTF-8 text without NUL")
	}
	return nil
}

// add queues msg, starting the sending goroutine at the first call.
func (c *caster) add(topic string, msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return store.ErrClosed
	}
	if c.queued+len(msg) > castQueueBytes {
		return errCastFull
	}
	c.queue = append(c.queue, castMsg{topic: topic, msg: slices.Clone(msg)})
	c.queued += len(msg)
	if !c.running {
		c.running = true
		c.signal = make(chan struct{}, 1)
		c.quit = make(chan struct{})
		c.done = make(chan struct{})
		go c.run()
	}
	select {
	case c.signal <- struct{}{}:
	default:
	}
	return nil
}

// take returns the queued messages and empties the queue.
func (c *caster) take() []castMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue, c.queued = nil, 0
	return q
}

// run sends the queued messages until stop, and then what is queued.
func (c *caster) run() {
	defer close(c.done)
	for {
		select {
		case <-c.signal:
		case <-c.quit:
			c.send(c.take())
			return
		}
		c.send(c.take())
		select {
		case <-time.After(castEvery):
		case <-c.quit:
			c.send(c.take())
			return
		}
	}
}

// send broadcasts msgs; a failure loses them (a broadcast is sent at
// most once) and is logged.
func (c *caster) send(msgs []castMsg) {
	if len(msgs) == 0 {
		return
	}
	payloads := packCasts(c.node, msgs)
	for len(payloads) > 0 {
		n := min(len(payloads), castPerStatement)
		var q strings.Builder
		args := make([]any, 0, n+1)
		args = append(args, castChannel)
		q.WriteString("SELECT ")
		for i := range n {
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "pg_notify($1, $%d)", i+2)
			args = append(args, payloads[i])
		}
		ctx, cancel := context.WithTimeout(context.Background(), castTimeout)
		_, err := c.store.pool.Exec(ctx, q.String(), args...)
		cancel()
		if err != nil {
			if l := c.store.logger; l != nil {
				l.Warn("postgres: broadcasts lost", "payloads", len(payloads), "err", err)
			}
			return
		}
		c.statements.Add(1)
		c.payloads.Add(int64(n))
		payloads = payloads[n:]
	}
}

// stop sends what is queued and ends the sending goroutine.
func (c *caster) stop() {
	c.mu.Lock()
	c.stopped = true
	running := c.running
	c.mu.Unlock()
	if running {
		close(c.quit)
		<-c.done
	}
}

// packCasts returns the payloads that carry msgs, in order, each under
// maxPayload bytes (a message of at most store.MaxBroadcast bytes always
// fits in one).
func packCasts(node string, msgs []castMsg) []string {
	var out []string
	var b strings.Builder
	for _, m := range msgs {
		head := m.topic + " " + strconv.Itoa(len(m.msg)) + "\n"
		if b.Len() > 0 && b.Len()+len(head)+len(m.msg) > maxPayload {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(node)
			b.WriteByte('\n')
		}
		b.WriteString(head)
		b.Write(m.msg)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// parseCasts returns the node and the messages of a payload, or ok false
// when it is malformed (nothing of it is then delivered).
func parseCasts(p string) (node string, msgs []castMsg, ok bool) {
	node, rest, found := strings.Cut(p, "\n")
	if !found || node == "" {
		return "", nil, false
	}
	for rest != "" {
		head, after, found := strings.Cut(rest, "\n")
		if !found {
			return "", nil, false
		}
		topic, size, found := strings.Cut(head, " ")
		n, err := strconv.Atoi(size)
		if !found || topic == "" || err != nil || n < 0 || n > len(after) {
			return "", nil, false
		}
		msgs = append(msgs, castMsg{topic: topic, msg: []byte(after[:n])})
		rest = after[n:]
	}
	return node, msgs, len(msgs) > 0
}

// deliver calls the subscribers with the messages of a payload from
// another node.
func (c *caster) deliver(payload string) {
	node, msgs, ok := parseCasts(payload)
	if !ok || node == c.node {
		return
	}
	c.received.Add(1)
	c.mu.Lock()
	subs := c.subs
	c.mu.Unlock()
	for _, m := range msgs {
		for _, sub := range subs {
			if sub.topic == m.topic && !sub.cancelled.Load() {
				sub.fn(node, slices.Clone(m.msg))
			}
		}
	}
}
