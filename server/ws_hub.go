package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// WebSocket tuning. The protocol fixes the ping interval (docs/protocol.md,
// "Liveness"); the others bound the memory a connection or a hub holds.
const (
	// wsPingEvery is how often the server pings a connection; one that
	// shows no sign of life for twice as long is closed.
	wsPingEvery = 30 * time.Second
	// wsQueueLen is the most messages waiting to be written to one
	// connection; a connection over it is closed with 4008.
	wsQueueLen = 256
	// wsQueueBytes bounds the bytes waiting for one connection (a single
	// larger message, such as a snapshot, is still queued alone).
	wsQueueBytes = 32 << 20
)

// wsHubs holds the WebSocket connections of a Server and one hub per
// document that has some. The tuning fields are for tests and are set
// before the first connection.
type wsHubs struct {
	s *api

	mu       sync.Mutex
	hubs     map[string]*wsHub
	conns    map[*wsConn]struct{}
	closing  bool          // the server shuts down: no new connections
	drained  chan struct{} // closed when closing and no handler runs
	watching bool          // the shutdown hook is installed, pingAll runs

	// Zero values take the defaults above.
	pingEvery time.Duration
	queueLen  int
}

func (hs *wsHubs) pingInterval() time.Duration {
	if hs.pingEvery > 0 {
		return hs.pingEvery
	}
	return wsPingEvery
}

func (hs *wsHubs) maxQueue() int {
	if hs.queueLen > 0 {
		return hs.queueLen
	}
	return wsQueueLen
}

// register adds a connection, or reports false when the server shuts
// down. The first one installs the shutdown hook and starts the pings.
func (hs *wsHubs) register(c *wsConn) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closing {
		return false
	}
	if !hs.watching {
		hs.watching = true
		context.AfterFunc(hs.s.polls, hs.closeAll)
		go hs.pingAll(hs.s.polls)
	}
	if hs.conns == nil {
		hs.conns = make(map[*wsConn]struct{})
	}
	hs.conns[c] = struct{}{}
	if hs.s.obs != nil {
		hs.s.obs.Connections(TransportWebSocket, 1)
	}
	return true
}

// unregister removes a connection whose handler returns.
func (hs *wsHubs) unregister(c *wsConn) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.conns, c)
	hs.s.dropConn(c.user)
	if hs.s.obs != nil {
		hs.s.obs.Connections(TransportWebSocket, -1)
	}
	if hs.closing && len(hs.conns) == 0 && hs.drained != nil {
		close(hs.drained)
		hs.drained = nil
	}
}

// closeAll closes every WebSocket connection with 1012 and refuses
// new ones. It runs when the server shuts down.
func (hs *wsHubs) closeAll() {
	hs.mu.Lock()
	if !hs.closing {
		hs.closing = true
		if len(hs.conns) > 0 {
			hs.drained = make(chan struct{})
		}
	}
	conns := make([]*wsConn, 0, len(hs.conns))
	for c := range hs.conns {
		conns = append(conns, c)
	}
	hs.mu.Unlock()
	for _, c := range conns {
		c.closeAfterQueue(wsCloseRestart, "server restarting")
	}
}

// wait closes every WebSocket connection with 1012 and waits
// until their handlers have returned, or ctx is done. Serve calls it
// after http.Server.Shutdown, which leaves hijacked connections alone.
func (hs *wsHubs) wait(ctx context.Context) {
	hs.closeAll()
	hs.mu.Lock()
	drained := hs.drained
	hs.mu.Unlock()
	if drained == nil {
		return
	}
	select {
	case <-drained:
	case <-ctx.Done():
	}
}

// acquire returns the hub of document id, creating it for the first
// connection. Each call is paired with release.
func (hs *wsHubs) acquire(id string) *wsHub {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.hubs[id]
	if h == nil {
		if hs.hubs == nil {
			hs.hubs = make(map[string]*wsHub)
		}
		h = &wsHub{s: hs.s, hubs: hs, id: id}
		h.ctx, h.cancel = context.WithCancel(hs.s.polls)
		hs.hubs[id] = h
	}
	h.refs++
	return h
}

// release ends a use of h; the last one stops it.
func (hs *wsHubs) release(h *wsHub) {
	hs.mu.Lock()
	h.refs--
	last := h.refs == 0
	if last && hs.hubs[h.id] == h {
		delete(hs.hubs, h.id)
	}
	hs.mu.Unlock()
	if last {
		h.stop()
	}
}

// forget removes a failed hub from the registry, so that the next
// connection to its document starts a new one.
func (hs *wsHubs) forget(h *wsHub) {
	hs.mu.Lock()
	if hs.hubs[h.id] == h {
		delete(hs.hubs, h.id)
	}
	hs.mu.Unlock()
}

// wsHub serves the WebSocket connections of one document. It relays the
// document's stream (collab.Subscription, following presence): one
// goroutine (run) waits for news and pushes each update, encoded once, to
// all connections; the connections' reader goroutines join and submit
// under mu, and set their presence on the subscription. Every update is
// taken from the subscription under mu and pushed to every joined
// connection, so all of them are at the subscription's cursor and one
// message fits all (but for a presence message, which leaves out each
// connection's own entry).
type wsHub struct {
	s    *api
	hubs *wsHubs
	id   string
	refs int // guarded by wsHubs.mu

	ctx    context.Context // done when the hub stops
	cancel context.CancelFunc

	mu      sync.Mutex
	sub     *collab.Subscription // set by the first join (start)
	stopped bool                 // no more messages
	err     error                // why the hub failed
	version int64                // of the last update relayed
	conns   []*wsConn            // joined connections; wsConn.idx is the index
	scratch []byte
}

// stop ends the hub: run returns and nothing more is sent.
func (h *wsHub) stop() {
	h.cancel()
	h.mu.Lock()
	h.stopped = true
	sub := h.sub
	h.mu.Unlock()
	if sub != nil {
		sub.Close()
	}
}

// start subscribes to the document's stream at its current versions and
// starts run. It is called with mu held, by the first join (whose client
// id hold created the document when it did not exist).
func (h *wsHub) start(ctx context.Context) error {
	sub, err := h.s.collab.Subscribe(ctx, h.id, "", -1, 0)
	if err != nil {
		return err
	}
	ev, _, err := sub.Take()
	if err != nil {
		sub.Close()
		return err
	}
	sub.FollowPresence()
	sub.FollowThreads(-1)
	h.sub, h.version = sub, ev.Version
	go h.run()
	return nil
}

// run waits for the news of the document's stream and relays it, until
// the hub stops or the stream fails.
func (h *wsHub) run() {
	for {
		err := h.sub.Wait(h.ctx)
		if h.ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		if err == nil || errors.Is(err, collab.ErrHistoryGone) {
			h.relayNewsLocked()
		} else {
			h.failLocked(err)
		}
		failed := h.err != nil
		h.mu.Unlock()
		if failed {
			return
		}
	}
}

// relayNewsLocked takes the update of the stream that waits, if any, and
// relays it. It is called with mu held.
func (h *wsHub) relayNewsLocked() {
	if h.err != nil || h.sub == nil {
		return
	}
	ev, news, err := h.sub.Take()
	switch {
	case errors.Is(err, collab.ErrHistoryGone):
		h.resyncLocked(ev)
	case err != nil:
		h.failLocked(err)
	default:
		h.relayLocked(ev, news)
	}
}

// resyncLocked moves the hub to ev, the document's current versions, when
// the steps before them are no longer kept: a submission of more steps
// than collab's Config.History, or a hub that was late by as many. Those
// steps cannot be pushed, so every connection is closed as one whose
// queue is full, with 4008 "too slow: resync": its client reconnects with
// hello at its version and is sent a snapshot (docs/protocol.md). The hub
// goes on for the connections that join next. It is called with mu held.
func (h *wsHub) resyncLocked(ev collab.Events) {
	for len(h.conns) > 0 {
		c := h.conns[len(h.conns)-1]
		c.closeAfterQueue(wsCloseTooSlow, "too slow: resync")
		h.removeLocked(c)
	}
	h.s.log.Info("websocket: history gone behind the document hub: its clients resync", "doc", h.id,
		"from", h.version, "to", ev.Version)
	h.version = ev.Version
}

// failLocked ends the hub after an error of the authority: every
// connection gets the error and is closed. It is called with mu held.
func (h *wsHub) failLocked(err error) {
	if h.err != nil {
		return
	}
	h.err = err
	h.stopped = true
	h.cancel()
	code, reason := wsHubCloseOf(err)
	var msg []byte
	if !errors.Is(err, collab.ErrClosed) {
		a := answerOf(err)
		msg = appendWSError(nil, nil, a.status, a.step, a.msg, h.s.names)
		h.s.log.Warn("websocket: document hub failed", "doc", h.id, "err", err)
	}
	for _, c := range h.conns {
		if msg != nil {
			c.send(msg)
		}
		c.closeAfterQueue(code, reason)
	}
	h.hubs.forget(h)
}

// relayLocked pushes ev, the update after the hub's version, to every
// connection: its steps, comment events and user count when they are
// news, then its presence changes. It is called with mu held.
func (h *wsHub) relayLocked(ev collab.Events, news bool) {
	h.version = ev.Version
	var gone []*wsConn
	if news {
		h.scratch = ev.AppendJSON(h.scratch[:0])
		msg := appendStepsPush(make([]byte, 0, len(h.scratch)+16), h.scratch)
		for _, c := range h.conns {
			if !c.send(msg) {
				gone = append(gone, c)
			}
		}
	}
	if len(ev.Presence) > 0 || len(ev.Left) > 0 {
		gone = h.relayPresenceLocked(ev, gone)
	}
	for _, c := range gone {
		if c.joined {
			h.removeLocked(c)
		}
	}
}

// relayPresenceLocked pushes the presence changes of ev: one message for
// the connections whose client is not among them, and one without its
// own entry for each that is. It appends the connections that could not
// be sent it to gone. It is called with mu held.
func (h *wsHub) relayPresenceLocked(ev collab.Events, gone []*wsConn) []*wsConn {
	changed := make(map[string]bool, len(ev.Presence))
	for _, p := range ev.Presence {
		changed[string(p.ClientID)] = true
	}
	shared := appendPresence(nil, ev.Version, ev.Presence, ev.Left, nil)
	for _, c := range h.conns {
		msg := shared
		if changed[string(c.clientID)] {
			if len(ev.Presence) == 1 && len(ev.Left) == 0 {
				continue // its own entry alone
			}
			msg = appendPresence(nil, ev.Version, ev.Presence, ev.Left, c.clientID)
		}
		if !c.send(msg) {
			gone = append(gone, c)
		}
	}
	return gone
}

// join adds c to the hub after its hello: it sends the welcome (the events
// after version and commentVersion, the threads after threadVersion) or, for a null version or history that
// is gone, the snapshot, both at the stream's cursor, after relaying to the
// other connections what came before it. It returns why c cannot join,
// which the hello answers (nil when the hub stops: c is being closed).
func (h *wsHub) join(ctx context.Context, c *wsConn, version, commentVersion, threadVersion int64, snapshot bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped && h.err == nil {
		c.closeAfterQueue(wsCloseRestart, "server restarting")
		return nil
	}
	if h.sub == nil && h.err == nil {
		if err := h.start(ctx); err != nil {
			return err
		}
	}
	if h.err != nil {
		return h.err
	}
	ev, news, w, err := h.sub.Join(c.user, version, commentVersion, threadVersion, snapshot)
	if errors.Is(err, collab.ErrHistoryGone) {
		// Behind the hub, not the client: the cursor is current now.
		h.resyncLocked(ev)
		ev, news, w, err = h.sub.Join(c.user, version, commentVersion, threadVersion, snapshot)
	}
	switch {
	case errors.Is(err, collab.ErrInvalidVersion):
		h.relayLocked(ev, news)
		return err
	case err != nil:
		h.failLocked(err)
		return err
	}
	h.relayLocked(ev, news)
	var msg []byte
	if w.State != nil {
		h.scratch = w.State.AppendJSON(h.scratch[:0])
		msg = appendSnapshot(make([]byte, 0, len(h.scratch)+64), h.scratch, w.Presence, c.clientID)
	} else {
		h.scratch = w.Events.AppendJSON(h.scratch[:0])
		msg = appendWelcome(make([]byte, 0, len(h.scratch)+64), h.scratch, w.Presence, c.clientID)
	}
	held, err := h.s.holdWelcome(c.user, c.id, len(msg))
	if err != nil {
		return err
	}
	c.idx = len(h.conns)
	h.conns = append(h.conns, c)
	c.joined = true
	c.sendHeld(msg, held)
	h.sub.Present(c.clientID, c.info) // the others learn its name and color
	return nil
}

// leave removes c, which was joined or not, and tells the others.
func (h *wsHub) leave(c *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.joined {
		h.removeLocked(c)
	}
}

// removeLocked removes c, a connection that is closing, and tells the
// others. It is called with mu held.
func (h *wsHub) removeLocked(c *wsConn) {
	c.joined = false
	last := len(h.conns) - 1
	h.conns[c.idx] = h.conns[last]
	h.conns[c.idx].idx = c.idx
	h.conns[last] = nil
	h.conns = h.conns[:last]
	h.sub.Absent(c.clientID)
}

// isJoined reports whether c is one of the hub's connections.
func (h *wsHub) isJoined(c *wsConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return c.joined
}

// answer sends c the answer to one of its submissions, made by msg
// (given the hub's version), after relaying the steps c has not been
// sent yet: an accepted submission's steps were published before Submit
// returned, and its answer follows their push; a conflict's follows the
// steps the client missed.
func (h *wsHub) answer(c *wsConn, msg func(version int64) []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return
	}
	h.relayNewsLocked()
	if c.joined {
		c.send(msg(h.version))
	}
}

// setPresence stores c's selection, given at version (anchor < 0 hides
// it). It reports false for a position outside the document at version.
func (h *wsHub) setPresence(c *wsConn, version int64, anchor, head int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return true
	}
	return h.sub.Select(c.clientID, version, anchor, head)
}

// touch counts user as a user of the document again (users count while
// seen within collab.Config.UsersWindow; connections call it at every
// ping).
func (h *wsHub) touch(user string) {
	h.mu.Lock()
	sub := h.sub
	ok := sub != nil && h.err == nil && !h.stopped
	h.mu.Unlock()
	if ok {
		sub.Seen(user)
	}
}
