package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
)

// Presence across nodes. When the authority's store is a
// store.Broadcaster (several nodes over one database), each hub sends the
// presence of its own connections to the hubs of the document on the
// other nodes, on the topic "presence":
//
//	{"doc":"d","version":12,"clients":[{"clientID":…,"name":…,"color":…,"data":…,"owner":…,"anchor":…,"head":…}],"left":[…]}
//
// with the entries of the connections whose presence changed and the
// client ids that left since its last flush (so at most one message a
// document every wsPresenceEvery, however fast its clients type, and the
// store packs the messages of all documents into few NOTIFYs). The
// positions are at the sending hub's version; a receiving hub maps them
// through its own step maps to its version when it sends them, and holds
// back those of a version it has not reached yet. A hub that starts asks
// ({"doc":"d","ask":true}) and the hubs of the other nodes answer with
// all their entries; every wsPeerRefresh each hub sends all its entries
// again, and an entry that its node has not repeated within three
// refreshes is gone (sent as left): that is how the clients of a node
// that died disappear, and how a lost message is repaired. An entry
// heard from another node goes to this node's connections as a local
// one would, in the same presence messages; a client connected here and
// heard from elsewhere (it moved) is shown once, as the local one.
//
// An entry's "owner" ({"author": principal} or {"user": address}) is
// whose its client id is: the hub holds the client id for it on this
// node too (collab.Authority.HoldLoadedClientID) while it has the entry,
// so that nobody else takes the id here either (docs/api.md, "Client
// ids").

const (
	// wsPresenceTopic is the store.Broadcaster topic of presence.
	wsPresenceTopic = "presence"
	// wsPeerRefresh is how often a hub sends all its entries again.
	wsPeerRefresh = 5 * time.Second
	// wsMaxPeers bounds the entries of other nodes' clients a hub
	// keeps, and wsMaxInbox the messages of other nodes waiting for a
	// hub; beyond, what comes is dropped (and repeated by the refresh).
	wsMaxPeers = 10_000
	wsMaxInbox = 4096
)

// peerEntry is the presence of a client connected to another node.
type peerEntry struct {
	node     string
	clientID []byte
	ident    []byte // as wsConn.ident
	// at is the version of anchor and head (-1 when hidden).
	at           int64
	anchor, head int
	expires      time.Time
	changed      bool // to be sent to the connections (it is in wsHub.peerChanged)
	shown        bool // sent to some connection: its going is a left
	// The owner of its client id, and the end of this node's hold of it
	// for the owner (nil when none: refused, or the document not loaded).
	author, user string
	release      func()
}

// wsPeers is a Server's link to the other nodes.
type wsPeers struct {
	once   sync.Once
	caster store.Broadcaster // nil on one node
}

// peerCaster returns the store.Broadcaster of the server's authority,
// subscribing to the presence of the other nodes and starting the
// refresh at the first call; nil when there is none.
func (s *Server) peerCaster() store.Broadcaster {
	p := &s.ws.peers
	p.once.Do(func() {
		if s.collab == nil {
			return
		}
		c := s.collab.Broadcaster()
		if c == nil {
			return
		}
		p.caster = c
		cancel := c.SubscribeBroadcasts(wsPresenceTopic, s.heardPresence)
		context.AfterFunc(s.polls, cancel)
		go s.refreshPeers()
	})
	return p.caster
}

// refreshPeers has every hub send all its entries and forget the
// expired ones, every wsPeerRefresh until the server shuts down.
func (s *Server) refreshPeers() {
	t := time.NewTicker(s.ws.peerRefresh())
	defer t.Stop()
	for {
		select {
		case <-s.polls.Done():
			return
		case <-t.C:
		}
		hs := &s.ws
		hs.mu.Lock()
		hubs := make([]*wsHub, 0, len(hs.hubs))
		for _, h := range hs.hubs {
			hubs = append(hubs, h)
		}
		hs.mu.Unlock()
		now := time.Now()
		for _, h := range hubs {
			h.mu.Lock()
			h.expirePeersLocked(now) // schedules the flush of their leaving
			if len(h.conns) > 0 {
				h.sendAll = true
				h.schedulePresence()
			}
			h.mu.Unlock()
		}
	}
}

func (hs *wsHubs) peerRefresh() time.Duration {
	if hs.peerEvery > 0 {
		return hs.peerEvery
	}
	return wsPeerRefresh
}

func (hs *wsHubs) peerExpiry() time.Duration {
	if hs.peerExpire > 0 {
		return hs.peerExpire
	}
	return 3 * hs.peerRefresh()
}

// peerMessage is a message of the presence topic.
type peerMessage struct {
	Doc     string            `json:"doc"`
	Version int64             `json:"version"`
	Clients []peerClient      `json:"clients"`
	Left    []json.RawMessage `json:"left"`
	Ask     bool              `json:"ask"`
}

// peerClient is an entry of a peerMessage.
type peerClient struct {
	ClientID json.RawMessage `json:"clientID"`
	Name     json.RawMessage `json:"name"`
	Color    json.RawMessage `json:"color"`
	Data     json.RawMessage `json:"data"`
	Owner    struct {
		Author string `json:"author"`
		User   string `json:"user"`
	} `json:"owner"`
	Anchor *int `json:"anchor"`
	Head   *int `json:"head"`
}

// heardPresence is the subscription's callback: it hands a message of
// another node to the hub of its document, if this node has one.
func (s *Server) heardPresence(node string, msg []byte) {
	var m peerMessage
	if err := json.Unmarshal(msg, &m); err != nil || m.Doc == "" || m.Version < 0 {
		return
	}
	hs := &s.ws
	hs.mu.Lock()
	h := hs.hubs[m.Doc]
	hs.mu.Unlock()
	if h == nil {
		return // nobody here to tell
	}
	// The hub's mu may be held for long (a join reads the document): the
	// listener must not wait for it.
	h.inMu.Lock()
	if len(h.inbox) >= wsMaxInbox {
		h.inMu.Unlock()
		return
	}
	h.inbox = append(h.inbox, heardMessage{node, m})
	start := !h.inRunning
	h.inRunning = true
	h.inMu.Unlock()
	if start {
		go h.takeInbox()
	}
}

// heardMessage is a peerMessage from node, waiting in a hub's inbox.
type heardMessage struct {
	node string
	m    peerMessage
}

// takeInbox takes in the messages of the inbox until it is empty.
func (h *wsHub) takeInbox() {
	for {
		h.inMu.Lock()
		in := h.inbox
		h.inbox = nil
		if len(in) == 0 {
			h.inRunning = false
			h.inMu.Unlock()
			return
		}
		h.inMu.Unlock()
		h.mu.Lock()
		now := time.Now()
		for _, hm := range in {
			h.takeLocked(hm.node, &hm.m, now)
		}
		h.mu.Unlock()
	}
}

// takeLocked takes in m, from node. It is called with mu held.
func (h *wsHub) takeLocked(node string, m *peerMessage, now time.Time) {
	if h.stopped || h.sub == nil {
		return
	}
	if m.Ask {
		if len(h.conns) > 0 {
			h.sendAll = true
			h.schedulePresence()
		}
		return
	}
	if h.peers == nil {
		h.peers = make(map[string]*peerEntry)
	}
	for _, pc := range m.Clients {
		id, err := clientIDOf(pc.ClientID)
		if err != nil {
			continue
		}
		ident, err := appendIdent(make([]byte, 0, 64+len(id)), id, pc.Name, pc.Color)
		if err == nil {
			ident, err = appendPresenceData(ident, pc.Data, h.s.limits.MaxPresenceData)
		}
		if err != nil {
			continue
		}
		anchor, head := -1, -1
		if pc.Anchor != nil && *pc.Anchor >= 0 && *pc.Anchor <= maxPosition {
			anchor, head = *pc.Anchor, *pc.Anchor
			if pc.Head != nil && *pc.Head >= 0 && *pc.Head <= maxPosition {
				head = *pc.Head
			}
		}
		e := h.peers[string(id)]
		if e == nil {
			if len(h.peers) >= wsMaxPeers {
				continue
			}
			e = &peerEntry{clientID: id}
			h.peers[string(id)] = e
		}
		e.expires = now.Add(h.s.ws.peerExpiry())
		h.holdPeerLocked(e, pc.Owner.Author, pc.Owner.User)
		heard := peerEntry{at: m.Version, anchor: anchor, head: head}
		if e.node == node && bytes.Equal(e.ident, ident) && h.samePlaceLocked(e, &heard) {
			continue // a repetition (a refresh), perhaps from a later version
		}
		e.node, e.ident, e.at, e.anchor, e.head = node, ident, heard.at, heard.anchor, heard.head
		h.markPeerChanged(e)
	}
	for _, raw := range m.Left {
		e := h.peers[string(raw)]
		if e != nil && e.node == node {
			h.removePeerLocked(e)
		}
	}
}

// holdPeerLocked holds e's client id for its owner, author or user, on
// this node, unless it holds it for that owner already. A hold that is
// refused (the id is another's here) is not taken. It is called with mu
// held.
func (h *wsHub) holdPeerLocked(e *peerEntry, author, user string) {
	if e.release != nil && e.author == author && e.user == user {
		return
	}
	if e.release != nil {
		e.release()
		e.release = nil
	}
	e.author, e.user = author, user
	if release, ok, _ := h.s.collab.HoldLoadedClientID(h.id, user, author, e.clientID); ok {
		e.release = release
	}
}

// releasePeersLocked ends the holds of the entries. It is called with mu
// held, when the hub stops.
func (h *wsHub) releasePeersLocked() {
	for _, e := range h.peers {
		if e.release != nil {
			e.release()
			e.release = nil
		}
	}
}

// appendOwner appends ,"owner":{"author":…} for a principal, or
// ,"owner":{"user":…} for an anonymous client.
func appendOwner(buf []byte, author, user string) []byte {
	if author != "" {
		buf = append(buf, `,"owner":{"author":`...)
		buf = model.AppendJSONString(buf, author)
	} else {
		buf = append(buf, `,"owner":{"user":`...)
		buf = model.AppendJSONString(buf, user)
	}
	return append(buf, '}')
}

// markPeerChanged notes that e must be sent to the connections. It is
// called with mu held.
func (h *wsHub) markPeerChanged(e *peerEntry) {
	if !e.changed {
		e.changed = true
		h.peerChanged = append(h.peerChanged, e)
	}
	h.schedulePresence()
}

// removePeerLocked forgets e, telling the connections that it left if
// they were told of it. It is called with mu held.
func (h *wsHub) removePeerLocked(e *peerEntry) {
	delete(h.peers, string(e.clientID))
	if e.release != nil {
		e.release()
		e.release = nil
	}
	if e.changed {
		e.changed = false
		for i, o := range h.peerChanged {
			if o == e {
				h.peerChanged = append(h.peerChanged[:i], h.peerChanged[i+1:]...)
				break
			}
		}
	}
	if e.shown {
		h.peerLeft = append(h.peerLeft, e.clientID)
		h.schedulePresence()
	}
}

// expirePeersLocked forgets the entries not repeated in time. It is
// called with mu held.
func (h *wsHub) expirePeersLocked(now time.Time) {
	for _, e := range h.peers {
		if !now.Before(e.expires) {
			h.removePeerLocked(e)
		}
	}
}

// samePlaceLocked reports whether the selections of e and heard are the
// same once both are at the hub's version (false when either is at a
// version the hub has not reached). It brings both to that version. It
// is called with mu held.
func (h *wsHub) samePlaceLocked(e, heard *peerEntry) bool {
	if e.at == heard.at && e.anchor == heard.anchor && e.head == heard.head {
		return true
	}
	return h.peerAtLocked(e) && h.peerAtLocked(heard) && e.anchor == heard.anchor && e.head == heard.head
}

// peerAtLocked brings e's positions to the hub's version, and reports
// false when they are at a version the hub has not reached yet. Positions
// it cannot map (from before the kept maps, or presence off) or that are
// outside the document hide the selection. It is called with mu held.
func (h *wsHub) peerAtLocked(e *peerEntry) bool {
	if e.at > h.version {
		return false
	}
	if e.at == h.version && e.anchor < 0 {
		return true
	}
	if e.anchor >= 0 {
		if h.noMaps || e.at < h.mapsFrom {
			e.anchor, e.head = -1, -1
		} else {
			i := int(e.at - h.mapsFrom)
			if size := h.sizes[i]; e.anchor > size || e.head > size {
				e.anchor, e.head = -1, -1
			} else {
				e.anchor, e.head = mapPos(h.maps[i:], e.anchor), mapPos(h.maps[i:], e.head)
			}
		}
	}
	e.at = h.version
	return true
}

// shownPeersLocked returns the entries that the connections can be sent
// now, brought to the hub's version: all of them, or those that changed,
// leaving out the clients connected here. It is called with mu held.
func (h *wsHub) shownPeersLocked(changedOnly bool, local map[string]bool) []*peerEntry {
	var out []*peerEntry
	add := func(e *peerEntry) {
		if local[string(e.clientID)] || !h.peerAtLocked(e) {
			return
		}
		out = append(out, e)
	}
	if changedOnly {
		for _, e := range h.peerChanged {
			add(e)
		}
	} else {
		for _, e := range h.peers {
			add(e)
		}
	}
	return out
}

// joinPeersLocked returns the entries to send c as it joins: all that
// can be sent, but c's own (it moved from another node). It is called
// with mu held.
func (h *wsHub) joinPeersLocked(c *wsConn) []*peerEntry {
	if len(h.peers) == 0 {
		return nil
	}
	local := h.localIDs()
	local[string(c.clientID)] = true
	return h.shownPeersLocked(false, local)
}

// localIDs returns the client ids of the hub's connections. It is called
// with mu held.
func (h *wsHub) localIDs() map[string]bool {
	ids := make(map[string]bool, len(h.conns))
	for _, c := range h.conns {
		ids[string(c.clientID)] = true
	}
	return ids
}

// appendPeerEntries appends the presence entries of peers, each after a
// comma unless first, and marks them shown.
func appendPeerEntries(buf []byte, peers []*peerEntry, first bool) []byte {
	for _, e := range peers {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		e.shown = true
		buf = append(buf, e.ident...)
		buf = appendSelection(buf, e.anchor, e.head)
	}
	return buf
}

// appendSelection appends ,"anchor":…,"head":…} (null for a hidden
// selection, anchor < 0).
func appendSelection(buf []byte, anchor, head int) []byte {
	buf = append(buf, `,"anchor":`...)
	if anchor < 0 {
		return append(buf, `null,"head":null}`...)
	}
	buf = strconv.AppendInt(buf, int64(anchor), 10)
	buf = append(buf, `,"head":`...)
	buf = strconv.AppendInt(buf, int64(head), 10)
	return append(buf, '}')
}

// castPresenceLocked sends the other nodes the entries of conns and the
// client ids of left, at the hub's version, in as many messages as they
// take. It is called with mu held.
func (h *wsHub) castPresenceLocked(conns []*wsConn, left [][]byte) {
	c := h.s.peerCaster()
	if c == nil || len(conns) == 0 && len(left) == 0 {
		return
	}
	head := model.AppendJSONString([]byte(`{"doc":`), h.id)
	head = append(head, `,"version":`...)
	head = strconv.AppendInt(head, h.version, 10)
	head = append(head, `,"clients":[`...)
	limit := store.MaxBroadcast - len(wsPresenceTopic) - 16 // with room for the closing
	msg := append([]byte(nil), head...)
	entries, inLeft := 0, false
	flush := func() {
		if !inLeft {
			msg = append(msg, `],"left":[`...)
		}
		msg = append(msg, "]}"...)
		if err := c.Broadcast(wsPresenceTopic, msg); err != nil {
			h.s.log.Warn("websocket: presence not sent to the other nodes", "doc", h.id, "err", err)
		}
		msg, entries, inLeft = append(msg[:0], head...), 0, false
	}
	var entry []byte
	for _, cn := range conns {
		entry = appendSelection(append(append(entry[:0], cn.ident...), cn.owner...), cn.anchor, cn.head)
		if entries > 0 && len(msg)+len(entry) > limit {
			flush()
		}
		if entries > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, entry...)
		entries++
	}
	msg, inLeft = append(msg, `],"left":[`...), true
	ids := 0
	for _, id := range left {
		if (entries > 0 || ids > 0) && len(msg)+len(id) > limit {
			flush()
			msg, inLeft, ids = append(msg, `],"left":[`...), true, 0
		}
		if ids > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, id...)
		ids++
	}
	flush()
}

// askPeersLocked asks the hubs of the document on the other nodes for
// all their entries. It is called with mu held, when the hub starts.
func (h *wsHub) askPeersLocked() {
	c := h.s.peerCaster()
	if c == nil {
		return
	}
	msg := model.AppendJSONString([]byte(`{"doc":`), h.id)
	msg = append(msg, `,"ask":true}`...)
	if err := c.Broadcast(wsPresenceTopic, msg); err != nil {
		h.s.log.Warn("websocket: presence not asked of the other nodes", "doc", h.id, "err", err)
	}
}
