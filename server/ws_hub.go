package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/transform"
)

// WebSocket tuning. The protocol fixes the ping interval (docs/protocol.md,
// "Liveness"); the others bound the memory a connection or a hub holds.
const (
	// wsPingEvery is how often the server pings a connection; one that
	// shows no sign of life for twice as long is closed.
	wsPingEvery = 30 * time.Second
	// wsPresenceEvery is the shortest time between two presence
	// messages of a document.
	wsPresenceEvery = 50 * time.Millisecond
	// wsQueueLen is the most messages waiting to be written to one
	// connection; a connection over it is closed with 4008.
	wsQueueLen = 256
	// wsQueueBytes bounds the bytes waiting for one connection (a single
	// larger message, such as a snapshot, is still queued alone).
	wsQueueBytes = 32 << 20
	// wsMaxMaps is how many recent step maps a hub keeps to map presence
	// sent at an older version.
	wsMaxMaps = 512
)

// wsCloseRestart (1012, service restart) closes the connections of a
// server that shuts down or drains: the client reconnects, to this server
// once it is back or to another, and sends its unconfirmed steps again.
const wsCloseRestart = websocket.StatusServiceRestart

// Close codes of the protocol beyond RFC 6455's.
const (
	wsCloseTooSlow         websocket.StatusCode = 4008
	wsCloseTooManyRequests websocket.StatusCode = 4029
	wsCloseInvalidVersion  websocket.StatusCode = 4400
	wsCloseTokenExpired    websocket.StatusCode = 4401
	wsCloseNotFound        websocket.StatusCode = 4404
)

// wsHubs holds the WebSocket connections of a Server and one hub per
// document that has some. Its zero value is ready; the tuning fields are
// for tests and are set before the first connection.
type wsHubs struct {
	mu       sync.Mutex
	hubs     map[string]*wsHub
	conns    map[*wsConn]struct{}
	closing  bool          // the server shuts down: no new connections
	drained  chan struct{} // closed when closing and no handler runs
	watching bool          // the shutdown hook is installed

	peers wsPeers // the other nodes (ws_peers.go)

	// Zero values take the defaults above.
	pingEvery     time.Duration
	presenceEvery time.Duration
	queueLen      int
	peerEvery     time.Duration // wsPeerRefresh
	peerExpire    time.Duration // three peerEvery
}

func (hs *wsHubs) pingInterval() time.Duration {
	if hs.pingEvery > 0 {
		return hs.pingEvery
	}
	return wsPingEvery
}

func (hs *wsHubs) presenceInterval() time.Duration {
	if hs.presenceEvery > 0 {
		return hs.presenceEvery
	}
	return wsPresenceEvery
}

func (hs *wsHubs) maxQueue() int {
	if hs.queueLen > 0 {
		return hs.queueLen
	}
	return wsQueueLen
}

// register adds a connection, or reports false when the server shuts
// down. The first one installs the shutdown hook.
func (s *Server) registerWS(c *wsConn) bool {
	hs := &s.ws
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closing {
		return false
	}
	if !hs.watching {
		hs.watching = true
		context.AfterFunc(s.polls, s.closeWebSockets)
	}
	if hs.conns == nil {
		hs.conns = make(map[*wsConn]struct{})
	}
	hs.conns[c] = struct{}{}
	if s.obs != nil {
		s.obs.Connections(TransportWebSocket, 1)
	}
	return true
}

// unregisterWS removes a connection whose handler returns.
func (s *Server) unregisterWS(c *wsConn) {
	hs := &s.ws
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.conns, c)
	s.dropConn(c.user)
	if s.obs != nil {
		s.obs.Connections(TransportWebSocket, -1)
	}
	if hs.closing && len(hs.conns) == 0 && hs.drained != nil {
		close(hs.drained)
		hs.drained = nil
	}
}

// closeWebSockets closes every WebSocket connection with 1012 and refuses
// new ones. It runs when the server shuts down.
func (s *Server) closeWebSockets() {
	hs := &s.ws
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

// waitWebSockets closes every WebSocket connection with 1012 and waits
// until their handlers have returned, or ctx is done. Serve calls it
// after http.Server.Shutdown, which leaves hijacked connections alone.
func (s *Server) waitWebSockets(ctx context.Context) {
	s.closeWebSockets()
	hs := &s.ws
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

// acquireHub returns the hub of document id, creating it for the first
// connection. Each call is paired with releaseHub.
func (s *Server) acquireHub(id string) *wsHub {
	hs := &s.ws
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.hubs[id]
	if h == nil {
		if hs.hubs == nil {
			hs.hubs = make(map[string]*wsHub)
		}
		h = &wsHub{s: s, id: id}
		h.ctx, h.cancel = context.WithCancel(s.polls)
		hs.hubs[id] = h
	}
	h.refs++
	return h
}

// releaseHub ends a use of h; the last one stops it.
func (s *Server) releaseHub(h *wsHub) {
	hs := &s.ws
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

// forgetHub removes a failed hub from the registry, so that the next
// connection to its document starts a new one.
func (s *Server) forgetHub(h *wsHub) {
	hs := &s.ws
	hs.mu.Lock()
	if hs.hubs[h.id] == h {
		delete(hs.hubs, h.id)
	}
	hs.mu.Unlock()
}

// wsHub serves the WebSocket connections of one document. It relays the
// document's stream (collab.Subscription): one goroutine (run) waits for
// news and pushes each update, encoded once, to all connections; the
// connections' reader goroutines join, submit and update presence under
// mu. Every update is taken from the subscription under mu and pushed to
// every joined connection, so all of them are at the subscription's
// cursor and one message fits all.
type wsHub struct {
	s    *Server
	id   string
	refs int // guarded by wsHubs.mu

	ctx    context.Context // done when the hub stops
	cancel context.CancelFunc

	mu      sync.Mutex
	sub     *collab.Subscription // set by the first join (start)
	stopped bool                 // no more messages
	err     error                // why the hub failed
	// Presence: version is that of the last update relayed; maps are the
	// step maps of the versions after mapsFrom, up to version; sizes[i]
	// is the document's size at version mapsFrom+i.
	version  int64
	maps     []*transform.StepMap
	sizes    []int
	mapsFrom int64
	noMaps   bool      // a step came without its map: presence is off
	conns    []*wsConn // joined connections; wsConn.idx is the index
	// Presence not yet sent: connections whose presence changed and the
	// client ids of connections that left.
	changed      []*wsConn
	left         [][]byte
	flushPending bool
	lastFlush    time.Time
	scratch      []byte
	// The clients of other nodes (ws_peers.go): by client id, those whose
	// presence changed, those that left, and whether the next flush sends
	// every connection's presence to the other nodes.
	peers       map[string]*peerEntry
	peerChanged []*peerEntry
	peerLeft    [][]byte
	sendAll     bool

	// Messages of other nodes not yet taken in (ws_peers.go).
	inMu      sync.Mutex
	inbox     []heardMessage
	inRunning bool
}

// stop ends the hub: run returns and nothing more is sent, but for the
// other nodes, which are told of the connections that left.
func (h *wsHub) stop() {
	h.cancel()
	h.mu.Lock()
	if !h.stopped && h.sub != nil {
		h.castPresenceLocked(nil, h.left)
	}
	h.stopped = true
	h.releasePeersLocked()
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
	h.sub = sub
	h.version, h.mapsFrom = ev.Version, ev.Version
	h.sizes = append(h.sizes[:0], ev.Size)
	h.askPeersLocked()
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
	h.maps, h.mapsFrom, h.noMaps = nil, ev.Version, false
	h.sizes = append(h.sizes[:0], ev.Size)
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
		msg = h.s.appendWSError(nil, nil, a.status, a.step, a.msg)
		h.s.log.Warn("websocket: document hub failed", "doc", h.id, "err", err)
	}
	for _, c := range h.conns {
		if msg != nil {
			c.send(msg)
		}
		c.closeAfterQueue(code, reason)
	}
	h.s.forgetHub(h)
}

// relayLocked pushes ev, the update after the hub's version, to every
// connection when it is news, and maps the stored selections through its
// steps. It is called with mu held.
func (h *wsHub) relayLocked(ev collab.Events, news bool) {
	h.mapSteps(ev.Steps)
	h.version = ev.Version
	if news {
		h.scratch = ev.AppendJSON(h.scratch[:0])
		msg := appendStepsPush(make([]byte, 0, len(h.scratch)+16), h.scratch)
		var gone []*wsConn
		for _, c := range h.conns {
			if !c.send(msg) {
				gone = append(gone, c)
			}
		}
		for _, c := range gone {
			h.removeLocked(c)
		}
	}
	if len(h.peerChanged) > 0 {
		h.schedulePresence() // those held back for this version, perhaps
	}
}

// mapSteps records the maps of steps, applied after the hub's version,
// and the document's size after each, as the authority computed them, and
// maps every stored selection through them. A step without its map (one
// loaded from the store without being replayed) turns presence off.
func (h *wsHub) mapSteps(steps []collab.StepRecord) {
	if len(steps) == 0 || h.noMaps {
		return
	}
	start := len(h.maps)
	for _, rec := range steps {
		if rec.Map == nil {
			h.s.log.Info("websocket: a step came without its map: presence is off", "doc", h.id)
			h.presenceOff()
			return
		}
		h.maps = append(h.maps, rec.Map)
		h.sizes = append(h.sizes, rec.Size)
	}
	if over := len(h.maps) - wsMaxMaps; over > 0 {
		h.maps = append(h.maps[:0], h.maps[over:]...)
		h.sizes = append(h.sizes[:0], h.sizes[over:]...)
		h.mapsFrom += int64(over)
		start -= over
	}
	newMaps := h.maps[max(start, 0):]
	for _, c := range h.conns {
		if c.anchor >= 0 {
			c.anchor, c.head = mapPos(newMaps, c.anchor), mapPos(newMaps, c.head)
		}
	}
}

// presenceOff forgets the kept maps and every selection, after a step
// without its map: positions can no longer be mapped.
func (h *wsHub) presenceOff() {
	h.noMaps = true
	h.maps, h.sizes = nil, nil
	for _, c := range h.conns {
		if c.anchor >= 0 {
			c.anchor, c.head = -1, -1
			h.markChanged(c)
		}
	}
}

// mapPos maps pos through maps, as a selection endpoint is mapped
// (association to the right).
func mapPos(maps []*transform.StepMap, pos int) int {
	for _, m := range maps {
		pos = m.Map(pos, 1)
	}
	return pos
}

// join adds c to the hub after its hello: it sends the welcome (the events
// after version and commentVersion) or, for a null version or history that
// is gone, the snapshot, both at the stream's cursor, after relaying to the
// other connections what came before it.
func (h *wsHub) join(ctx context.Context, c *wsConn, version, commentVersion int64, snapshot bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped && h.err == nil {
		c.closeAfterQueue(wsCloseRestart, "server restarting")
		return
	}
	if h.sub == nil && h.err == nil {
		if err := h.start(ctx); err != nil {
			c.fail(err)
			return
		}
	}
	if h.err != nil {
		c.fail(h.err)
		return
	}
	ev, news, w, err := h.sub.Join(c.user, version, commentVersion, snapshot)
	if errors.Is(err, collab.ErrHistoryGone) {
		// Behind the hub, not the client: the cursor is current now.
		h.resyncLocked(ev)
		ev, news, w, err = h.sub.Join(c.user, version, commentVersion, snapshot)
	}
	switch {
	case errors.Is(err, collab.ErrInvalidVersion):
		h.relayLocked(ev, news)
		c.fail(err)
		return
	case err != nil:
		h.failLocked(err)
		c.fail(err)
		return
	}
	h.relayLocked(ev, news)
	var msg []byte
	if w.State != nil {
		h.scratch = w.State.AppendJSON(h.scratch[:0])
		msg = appendSnapshot(make([]byte, 0, len(h.scratch)+64), h.scratch, h.conns, h.joinPeersLocked(c))
	} else {
		h.scratch = w.Events.AppendJSON(h.scratch[:0])
		msg = appendWelcome(make([]byte, 0, len(h.scratch)+64), h.scratch, h.conns, h.joinPeersLocked(c))
	}
	held, err := h.s.holdWelcome(c, len(msg))
	if err != nil {
		c.fail(err)
		return
	}
	c.idx = len(h.conns)
	h.conns = append(h.conns, c)
	c.joined = true
	c.sendHeld(msg, held)
	h.markChanged(c) // the others learn its name and color
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
	if c.changed {
		c.changed = false
		for i, o := range h.changed {
			if o == c {
				h.changed = append(h.changed[:i], h.changed[i+1:]...)
				break
			}
		}
	}
	h.left = append(h.left, c.clientID)
	h.schedulePresence()
}

// isJoined reports whether c is one of the hub's connections.
func (h *wsHub) isJoined(c *wsConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return c.joined
}

// acked answers a submission of c accepted at res. Its steps were
// published before Submit returned: the hub relays them first, so that
// the ack follows their push.
func (h *wsHub) acked(c *wsConn, id []byte, res collab.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return
	}
	h.relayNewsLocked()
	if c.joined {
		c.send(appendAck(make([]byte, 0, 64+len(id)), id, res))
	}
}

// conflicted answers a submission of c made at a stale version, after
// relaying the steps c has not been sent yet.
func (h *wsHub) conflicted(c *wsConn, id []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return
	}
	h.relayNewsLocked()
	if c.joined {
		c.send(appendConflict(nil, id, h.version))
	}
}

// setPresence stores c's selection, given at version, mapped to the hub's
// version (anchor < 0 hides it). A version the hub cannot map from, or a
// position outside the document, is ignored; it reports false for the
// latter.
func (h *wsHub) setPresence(c *wsConn, version int64, anchor, head int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return true
	}
	if anchor >= 0 {
		if h.noMaps || version > h.version || version < h.mapsFrom {
			return true // cannot map: ignored
		}
		i := int(version - h.mapsFrom)
		if size := h.sizes[i]; anchor > size || head > size {
			return false
		}
		anchor, head = mapPos(h.maps[i:], anchor), mapPos(h.maps[i:], head)
	} else {
		anchor, head = -1, -1
	}
	if anchor == c.anchor && head == c.head {
		return true
	}
	c.anchor, c.head = anchor, head
	h.markChanged(c)
	return true
}

// markChanged notes that c's presence must be sent to the others. It is
// called with mu held.
func (h *wsHub) markChanged(c *wsConn) {
	if !c.changed {
		c.changed = true
		h.changed = append(h.changed, c)
	}
	h.schedulePresence()
}

// schedulePresence arranges for flushPresence to run, no sooner than
// wsPresenceEvery after the last one. It is called with mu held.
func (h *wsHub) schedulePresence() {
	if h.flushPending || h.stopped {
		return
	}
	h.flushPending = true
	delay := time.Until(h.lastFlush.Add(h.s.ws.presenceInterval()))
	time.AfterFunc(max(delay, 0), h.flushPresence)
}

// flushPresence sends the presence changes since the last flush: one
// message for all the connections that did not change, and one without
// itself for each that did; and the changes of its own connections to
// the other nodes.
func (h *wsHub) flushPresence() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushPending = false
	h.lastFlush = time.Now()
	if h.stopped {
		h.changed, h.left, h.peerLeft = h.changed[:0], h.left[:0], h.peerLeft[:0]
		return
	}
	// A client that reconnected under the same id has not left.
	local := h.localIDs()
	left := h.left[:0]
	for _, id := range h.left {
		if !local[string(id)] {
			left = append(left, id)
		}
	}
	if h.s.peerCaster() != nil {
		conns := h.changed
		if h.sendAll {
			conns = h.conns
		}
		h.castPresenceLocked(conns, left)
		h.sendAll = false
	}
	// Nor one that another node has: it is shown again.
	var gone [][]byte
	for _, ids := range [][][]byte{left, h.peerLeft} {
		for _, id := range ids {
			if local[string(id)] {
				continue
			}
			if e := h.peers[string(id)]; e != nil {
				if !e.changed {
					e.changed = true
					h.peerChanged = append(h.peerChanged, e)
				}
				continue
			}
			gone = append(gone, id)
		}
	}
	peers := h.shownPeersLocked(true, local)
	waiting := h.peerChanged[:0] // held back for a version not reached
	for _, e := range h.peerChanged {
		if e.at > h.version {
			waiting = append(waiting, e)
		} else {
			e.changed = false
		}
	}
	clear(h.peerChanged[len(waiting):])
	h.peerChanged = waiting
	var lost []*wsConn
	if len(h.changed) > 0 || len(gone) > 0 || len(peers) > 0 {
		shared := appendPresence(nil, h.version, h.changed, peers, gone, nil)
		for _, c := range h.conns {
			ok := true
			if !c.changed {
				ok = c.send(shared)
			} else if len(h.changed) > 1 || len(gone) > 0 || len(peers) > 0 {
				ok = c.send(appendPresence(nil, h.version, h.changed, peers, gone, c))
			}
			if !ok {
				lost = append(lost, c)
			}
		}
		for _, c := range h.changed {
			c.changed = false
		}
	}
	clear(h.changed)
	clear(h.left)
	clear(h.peerLeft)
	h.changed, h.left, h.peerLeft = h.changed[:0], h.left[:0], h.peerLeft[:0]
	for _, c := range lost {
		h.removeLocked(c) // their leaving goes with the next flush
	}
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
