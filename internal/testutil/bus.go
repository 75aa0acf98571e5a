package testutil

import (
	"slices"
	"strconv"
	"sync"

	"github.com/pmauthority/pmauthority/store"
)

// Bus connects the stores it makes as the nodes of a cluster: each is a
// store.Broadcaster whose messages reach the subscribers of the others,
// in the order sent, on a goroutine of the bus. A node can be cut off (its
// messages lost, as when its process dies). The zero value is ready.
type Bus struct {
	mu      sync.Mutex
	nodes   int
	subs    []*busSub
	cut     map[string]bool
	sent    map[string]int // messages by topic
	queue   []busMsg
	running bool
}

type busMsg struct {
	node, topic string
	msg         []byte
}

type busSub struct {
	node, topic string
	fn          func(node string, msg []byte)
	cancelled   bool
}

// Node returns st as a node of the bus: a store.Store (with st's
// store.Notifier, when it is one) that is also a store.Broadcaster.
func (b *Bus) Node(st store.Store) store.Store {
	b.mu.Lock()
	b.nodes++
	id := "node" + strconv.Itoa(b.nodes)
	b.mu.Unlock()
	c := busCaster{bus: b, node: id}
	if n, ok := st.(store.Notifier); ok {
		return &busNotifierStore{busStore{st, c}, n}
	}
	return &busStore{st, c}
}

// Cut loses every message of node from now on.
func (b *Bus) Cut(node string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut == nil {
		b.cut = make(map[string]bool)
	}
	b.cut[node] = true
}

// Sent returns the number of messages sent on topic.
func (b *Bus) Sent(topic string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sent[topic]
}

type busCaster struct {
	bus  *Bus
	node string
}

type busStore struct {
	store.Store
	busCaster
}

type busNotifierStore struct {
	busStore
	n store.Notifier
}

func (s *busNotifierStore) Subscribe(fn func(store.Notice)) func() { return s.n.Subscribe(fn) }

// Node implements store.Broadcaster.
func (c busCaster) Node() string { return c.node }

// Broadcast implements store.Broadcaster.
func (c busCaster) Broadcast(topic string, msg []byte) error {
	b := c.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sent == nil {
		b.sent = make(map[string]int)
	}
	b.sent[topic]++
	if b.cut[c.node] {
		return nil
	}
	b.queue = append(b.queue, busMsg{c.node, topic, slices.Clone(msg)})
	if !b.running {
		b.running = true
		go b.deliver()
	}
	return nil
}

// deliver delivers the queued messages until the queue is empty.
func (b *Bus) deliver() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		m := b.queue[0]
		b.queue = b.queue[1:]
		subs := b.subs
		b.mu.Unlock()
		for _, s := range subs {
			b.mu.Lock()
			ok := !s.cancelled && s.node != m.node && s.topic == m.topic
			b.mu.Unlock()
			if ok {
				s.fn(m.node, slices.Clone(m.msg))
			}
		}
	}
}

// SubscribeBroadcasts implements store.Broadcaster.
func (c busCaster) SubscribeBroadcasts(topic string, fn func(node string, msg []byte)) func() {
	b := c.bus
	s := &busSub{node: c.node, topic: topic, fn: fn}
	b.mu.Lock()
	b.subs = append(slices.Clip(b.subs), s)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		s.cancelled = true
		b.subs = slices.DeleteFunc(slices.Clone(b.subs), func(o *busSub) bool { return o == s })
		b.mu.Unlock()
	}
}
