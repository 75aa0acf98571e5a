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
	// wsJoinTries bounds how often a join retries to catch a document
	// that keeps moving while it is read.
	wsJoinTries = 16
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

// wsHub serves the WebSocket connections of one document. One goroutine
// (run) waits for the authority to publish and pushes every publish, encoded
// once, to all connections; the connections' reader goroutines join, submit
// and update presence under mu. Every joined connection has been sent
// exactly the hub's version and comment version, so one message fits all.
type wsHub struct {
	s    *Server
	id   string
	refs int // guarded by wsHubs.mu

	ctx    context.Context // done when the hub stops
	cancel context.CancelFunc

	mu             sync.Mutex
	started        bool  // run is running: the fields below are set
	stopped        bool  // no more messages
	err            error // why the hub failed
	version        int64
	commentVersion int64
	users          int // the user count last pushed (watchUsers)
	// maps are the step maps of the versions after mapsFrom, up to
	// version; sizes[i] is the document's size at version mapsFrom+i.
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
	if !h.stopped && h.started {
		h.castPresenceLocked(nil, h.left)
	}
	h.stopped = true
	h.releasePeersLocked()
	h.mu.Unlock()
}

// start reads the document's state and starts run. It is called with mu
// held, by the first join, for its connection's user: a document that
// does not exist is created for that user (collab's MaxCreatesPerHour).
func (h *wsHub) start(ctx context.Context, user string) error {
	st, err := h.s.collab.Get(ctx, h.id, user)
	if err != nil {
		return err
	}
	h.version, h.commentVersion = st.Version, st.CommentVersion
	h.mapsFrom = st.Version
	h.sizes = append(h.sizes[:0], st.Doc.Content.Size())
	h.started = true
	h.users = st.Users
	h.askPeersLocked()
	go h.run()
	go h.watchUsers()
	return nil
}

// watchUsers pushes the user count to the hub's connections when it
// changes between pushes of steps (someone came or went), as a push
// without steps, until the hub stops or fails.
func (h *wsHub) watchUsers() {
	for {
		h.mu.Lock()
		base := h.users
		h.mu.Unlock()
		n, err := h.s.collab.WatchUsers(h.ctx, h.id, base)
		if err != nil {
			return // the hub stopped, or run reports the failure
		}
		h.mu.Lock()
		if h.err == nil && !h.stopped && n != h.users {
			h.publishLocked(collab.Events{Version: h.version, CommentVersion: h.commentVersion, Users: n})
		}
		failed := h.err != nil
		h.mu.Unlock()
		if failed {
			return
		}
	}
}

// run waits for each publish of the document and pushes it, until the hub
// stops or the authority fails.
func (h *wsHub) run() {
	for {
		h.mu.Lock()
		v, cv := h.version, h.commentVersion
		h.mu.Unlock()
		ev, err := h.s.collab.Events(h.ctx, h.id, "", v, cv, true)
		if h.ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		switch {
		case errors.Is(err, collab.ErrHistoryGone):
			// Unless a join caught the hub up meanwhile (then ask again).
			if h.version == v && h.commentVersion == cv {
				if err := h.resyncLocked(h.ctx); err != nil && h.ctx.Err() == nil {
					h.failLocked(err)
				}
			}
		case err != nil:
			h.failLocked(err)
		case h.version == v && h.commentVersion == cv:
			h.publishLocked(ev)
		default:
			// A join or a submitter caught the hub up meanwhile: ev
			// starts too early; ask again from the new version.
		}
		failed := h.err != nil
		h.mu.Unlock()
		if failed {
			return
		}
	}
}

// syncLocked catches the hub up with the document without waiting. It is
// called with mu held.
func (h *wsHub) syncLocked(ctx context.Context) error {
	if h.err != nil {
		return h.err
	}
	ev, err := h.s.collab.Events(ctx, h.id, "", h.version, h.commentVersion, false)
	if errors.Is(err, collab.ErrHistoryGone) {
		err = h.resyncLocked(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			h.failLocked(err)
		}
		return err
	}
	if ev.Version != h.version || ev.CommentVersion != h.commentVersion {
		h.publishLocked(ev)
	}
	return nil
}

// resyncLocked moves the hub to the document's current state when the
// steps after the hub's version are no longer kept: a submission of more
// steps than collab's Config.History, or a hub that was late by as many.
// Those steps cannot be pushed, so every connection is closed as one
// whose queue is full, with 4008 "too slow: resync": its client reconnects
// with hello at its version and is sent a snapshot (docs/protocol.md).
// The hub goes on for the connections that join next. It is called with
// mu held.
func (h *wsHub) resyncLocked(ctx context.Context) error {
	st, err := h.s.collab.Get(ctx, h.id, "")
	if err != nil {
		return err
	}
	for len(h.conns) > 0 {
		c := h.conns[len(h.conns)-1]
		c.closeAfterQueue(wsCloseTooSlow, "too slow: resync")
		h.removeLocked(c)
	}
	h.s.log.Info("websocket: history gone behind the document hub: its clients resync", "doc", h.id,
		"from", h.version, "to", st.Version)
	h.version, h.commentVersion = st.Version, st.CommentVersion
	h.maps, h.mapsFrom, h.noMaps = nil, st.Version, false
	h.sizes = append(h.sizes[:0], st.Doc.Content.Size())
	return nil
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
		msg = appendWSError(nil, nil, a.status, a.step, a.msg)
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

// publishLocked pushes ev, the events after the hub's versions, to every
// connection, maps the stored selections through its steps and moves the
// hub to its versions. It is called with mu held.
func (h *wsHub) publishLocked(ev collab.Events) {
	if ev.Version-h.version != int64(len(ev.Steps)) {
		// Events answered from another version than asked: a bug.
		h.failLocked(errors.New("websocket: events do not follow the hub's version"))
		return
	}
	h.mapSteps(ev.Steps)
	var msg []byte
	if len(ev.Steps) > 0 || len(ev.Comment) > 0 || ev.Users != h.users {
		h.scratch = ev.AppendJSON(h.scratch[:0])
		msg = appendStepsPush(make([]byte, 0, len(h.scratch)+16), h.scratch)
		h.users = ev.Users
	}
	h.version, h.commentVersion = ev.Version, ev.CommentVersion
	var gone []*wsConn
	for _, c := range h.conns {
		if msg != nil && !c.send(msg) {
			gone = append(gone, c)
			continue
		}
		c.version, c.commentVersion = ev.Version, ev.CommentVersion
		c.flushAcksLocked()
	}
	for _, c := range gone {
		h.removeLocked(c)
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
// is gone, the snapshot, both at exactly the hub's versions.
func (h *wsHub) join(ctx context.Context, c *wsConn, version, commentVersion int64, snapshot bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped && h.err == nil {
		c.closeAfterQueue(wsCloseRestart, "server restarting")
		return
	}
	if !h.started && h.err == nil {
		if err := h.start(ctx, c.user); err != nil {
			c.fail(err)
			return
		}
	}
	for try := 0; ; try++ {
		if h.err != nil {
			c.fail(h.err)
			return
		}
		if err := h.syncLocked(ctx); err != nil {
			c.fail(err)
			return
		}
		var msg []byte
		if !snapshot {
			ev, err := h.s.collab.Events(ctx, h.id, c.user, version, commentVersion, false)
			if errors.Is(err, collab.ErrHistoryGone) {
				snapshot = true
				continue
			}
			if err != nil {
				c.fail(err)
				return
			}
			if ev.Version == h.version && ev.CommentVersion == h.commentVersion {
				h.scratch = ev.AppendJSON(h.scratch[:0])
				msg = appendWelcome(make([]byte, 0, len(h.scratch)+64), h.scratch, h.conns, h.joinPeersLocked(c))
			}
		} else {
			st, err := h.s.collab.Get(ctx, h.id, c.user)
			if err != nil {
				c.fail(err)
				return
			}
			if st.Version == h.version && st.CommentVersion == h.commentVersion {
				h.scratch = st.AppendJSON(h.scratch[:0])
				msg = appendSnapshot(make([]byte, 0, len(h.scratch)+64), h.scratch, h.conns, h.joinPeersLocked(c))
			}
		}
		if msg != nil {
			held, err := h.s.holdWelcome(c, len(msg))
			if err != nil {
				c.fail(err)
				return
			}
			c.version, c.commentVersion = h.version, h.commentVersion
			c.idx = len(h.conns)
			h.conns = append(h.conns, c)
			c.joined = true
			c.sendHeld(msg, held)
			h.markChanged(c) // the others learn its name and color
			return
		}
		if try == wsJoinTries {
			c.closeAfterQueue(websocket.StatusTryAgainLater, "document too busy: retry")
			return
		}
	}
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
	c.acks = nil
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

// acked answers a submission of c accepted at res: the ack follows the
// push of the steps it produced, at once if c has been sent them already.
func (h *wsHub) acked(ctx context.Context, c *wsConn, id []byte, res collab.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return
	}
	if c.version < res.Version || c.commentVersion < res.CommentVersion {
		// Push the steps now rather than waiting for run to wake up.
		h.syncLocked(ctx)
	}
	c.acks = append(c.acks, wsAck{id: id, res: res})
	c.flushAcksLocked()
}

// conflicted answers a submission of c made at a stale version, after
// pushing the steps c has not been sent yet.
func (h *wsHub) conflicted(ctx context.Context, c *wsConn, id []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.joined {
		return
	}
	h.syncLocked(ctx)
	c.send(appendConflict(nil, id, h.version))
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
func (h *wsHub) touch(ctx context.Context, user string) {
	h.mu.Lock()
	v, cv, ok := h.version, h.commentVersion, h.started && h.err == nil
	h.mu.Unlock()
	if ok {
		h.s.collab.Events(ctx, h.id, user, v, cv, false)
	}
}
