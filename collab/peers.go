package collab

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
)

// Users across nodes. When the store is a store.Broadcaster (several
// nodes over one database), a document's users are those of every node:
// its count is the size of the union of the users each node sees, so
// that a client whose requests a balancer spreads over the nodes counts
// once, as it does on one node. Each node broadcasts, on the topic
// "users", the users of each of its loaded documents, as 64-bit hashes
// (short, and the addresses and principals are not sent in clear, though
// the hash of an address can be guessed):
//
//	{"doc":"d","seq":7,"part":0,"parts":1,"users":"<16 hex digits per user>"}
//
// A document's set goes out when it changes (a user came or expired), at
// most every usersWakeEvery for all the documents that changed, and every
// Config.PeerRefresh for all the documents that have users (and once,
// empty, for those that no longer have any). What a node heard from
// another replaces what it heard before for that document, and expires
// after usersPeerExpiry refreshes without news: so a node that dies
// stops counting within that time, and a lost message is repaired by the
// next refresh. A change of a document's count is news for its
// subscriptions, as a local change is.
//
// The presence of a document's clients (presence.go) goes on the same
// exchange, on the topic "presence", for the documents that have
// followers:
//
//	{"doc":"d","version":12,"clients":[{"clientID":…,"info":{…},"owner":{"author":…},"anchor":…,"head":…}],"left":[…]}
//
// with this node's entries that changed and the client ids that left
// since the last sending (at most every Config.PresenceEvery), positions
// at this node's version; every refresh sends all of them again, and
// what was heard lapses after the same usersPeerExpiry refreshes. A
// document's first follower asks ({"doc":"d","ask":true}) and the other
// nodes answer with all their entries. An entry's owner ({"author":
// principal} or {"user": address}) is whose its client id is: the
// receiving node holds the id for it while it has the entry, so that
// nobody else takes it there either (docs/api.md, "Client ids").

// usersTopic and presenceTopic are the store.Broadcaster topics of the
// users and of presence.
const (
	usersTopic    = "users"
	presenceTopic = "presence"
)

// maxPeerPresence bounds the presence entries a document keeps (the
// other nodes' beyond it are dropped, and repeated by the refresh).
const maxPeerPresence = 10_000

// usersPeerExpiry is how many refreshes what a node heard from another
// lasts.
const usersPeerExpiry = 3

// Bounds of what is kept of other nodes' users: the most parts of one
// document's set (a set beyond is cut, so the count is at most about
// 30,000 per node for a document) and the most hashes kept in all.
const (
	usersMaxParts   = 128
	usersMaxHeard   = 1 << 20
	usersHashDigits = 16
)

// userHash returns the hash by which a user is known to other nodes.
func userHash(user string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(user))
	return h.Sum64()
}

// peerUsers is what an Authority sends to and heard from the other nodes
// about users. Its zero value (no caster) does nothing.
type peerUsers struct {
	caster store.Broadcaster // nil: one node, nothing to do
	every  time.Duration     // Config.PeerRefresh

	mu    sync.Mutex
	docs  map[string]*peerDoc // what other nodes said, by document
	heard int                 // hashes held in docs
	dirty map[string]bool     // documents whose users changed since sent
	sent  map[string]bool     // documents whose last set sent had users
	seq   uint64

	presence map[string]bool // documents whose local presence changed since sent
	asks     map[string]bool // documents whose first follower came
	poked    bool            // a signal is due for users held back

	signal chan struct{} // has a value when dirty is not empty
	done   chan struct{} // closed when the sending goroutine ends
	cancel func()        // the subscription's
}

// peerDoc is what the other nodes said of a document's users.
type peerDoc struct {
	nodes map[string]*nodeUsers
	union map[uint64]int // hash → how many nodes have it
}

// nodeUsers is what one node said of a document's users.
type nodeUsers struct {
	users   []uint64
	expires time.Time
	// The parts of the set being received.
	seq     uint64
	next    int // the part expected next
	pending []uint64
}

// followPeers starts the exchange of users with the other nodes when the
// store is a store.Broadcaster.
func (a *Authority) followPeers() {
	c, ok := a.store.(store.Broadcaster)
	if !ok {
		return
	}
	p := &a.peers
	p.caster, p.every = c, a.cfg.PeerRefresh
	p.docs = make(map[string]*peerDoc)
	p.dirty = make(map[string]bool)
	p.sent = make(map[string]bool)
	p.presence = make(map[string]bool)
	p.asks = make(map[string]bool)
	p.signal = make(chan struct{}, 1)
	p.done = make(chan struct{})
	cancelUsers := c.SubscribeBroadcasts(usersTopic, a.heardUsers)
	cancelPresence := c.SubscribeBroadcasts(presenceTopic, a.heardPresence)
	p.cancel = func() { cancelUsers(); cancelPresence() }
	go a.sendPeers()
}

// stopPeers ends the subscription, tells the other nodes that this one
// has no more users, and waits for the sending goroutine. Close calls it
// once, after closing a.done.
func (a *Authority) stopPeers() {
	p := &a.peers
	if p.caster == nil {
		return
	}
	p.cancel()
	<-p.done
}

// changed notes that the users of the document id changed,
// presenceChanged that its local presence changed (or that every entry
// is to be sent), and askPresence that the other nodes are to be asked
// for their entries of it. They are called with the document's mu held
// (or none).
func (p *peerUsers) changed(id string)         { p.note(&p.dirty, id) }
func (p *peerUsers) presenceChanged(id string) { p.note(&p.presence, id) }
func (p *peerUsers) askPresence(id string)     { p.note(&p.asks, id) }

// note adds id to *set and wakes the sending goroutine; on one node it
// does nothing.
func (p *peerUsers) note(set *map[string]bool, id string) {
	if p.caster == nil {
		return
	}
	p.mu.Lock()
	(*set)[id] = true
	p.mu.Unlock()
	p.poke()
}

// poke wakes the sending goroutine.
func (p *peerUsers) poke() {
	select {
	case p.signal <- struct{}{}:
	default:
	}
}

// count returns the number of users of the document id: those of users
// (this node's) and those the other nodes have. It is called with the
// document's mu held, when there is one.
func (p *peerUsers) count(id string, users map[string]*userEntry) int {
	if p.caster == nil {
		return len(users)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.docs[id]
	if pd == nil {
		return len(users)
	}
	n := len(pd.union)
	for _, u := range users {
		if pd.union[u.hash] == 0 {
			n++
		}
	}
	return n
}

// sendPeers sends the presence of the documents that changed, at most
// every Config.PresenceEvery, their users, at most every usersWakeEvery,
// and all of both every refresh, until Close; then it sends every
// document that had users as empty, and its presence as left.
func (a *Authority) sendPeers() {
	p := &a.peers
	defer close(p.done)
	refresh := time.NewTicker(p.every)
	defer refresh.Stop()
	var lastPresence, lastUsers time.Time
	bye := func() {
		a.sendPresence(false, true)
		a.sendUsers(true, true)
	}
	for {
		select {
		case <-a.done:
			bye()
			return
		case <-p.signal:
			if wait := a.cfg.PresenceEvery - time.Since(lastPresence); wait > 0 {
				select {
				case <-time.After(wait):
				case <-a.done:
					bye()
					return
				}
			}
			lastPresence = time.Now()
			a.sendPresence(false, false)
			if wait := usersWakeEvery - time.Since(lastUsers); wait > 0 {
				p.pokeUsersIn(wait)
			} else {
				lastUsers = time.Now()
				a.sendUsers(false, false)
			}
		case <-refresh.C:
			lastPresence, lastUsers = time.Now(), time.Now()
			a.sendPresence(true, false)
			a.sendUsers(true, false)
			a.expirePeers()
		}
	}
}

// pokeUsersIn wakes the sending goroutine after wait, when users changed
// and it has not been arranged yet.
func (p *peerUsers) pokeUsersIn(wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.dirty) == 0 || p.poked {
		return
	}
	p.poked = true
	time.AfterFunc(wait, func() {
		p.mu.Lock()
		p.poked = false
		p.mu.Unlock()
		p.poke()
	})
}

// sendUsers broadcasts the users of the documents that changed, or (all)
// of every loaded document that has users and every document whose last
// set sent had some; with bye, every set is sent empty.
func (a *Authority) sendUsers(all, bye bool) {
	p := &a.peers
	p.mu.Lock()
	ids := p.dirty
	p.dirty = make(map[string]bool)
	if all {
		for id := range p.sent {
			ids[id] = true
		}
	}
	p.mu.Unlock()
	if all && !bye {
		a.mu.Lock()
		for id, d := range a.docs {
			if d.loaded {
				ids[id] = true
			}
		}
		a.mu.Unlock()
	}
	now := a.now()
	var hashes []uint64
	for id := range ids {
		hashes = hashes[:0]
		if !bye {
			hashes = a.localUsers(id, now, hashes)
		}
		p.mu.Lock()
		had := p.sent[id]
		if len(hashes) > 0 {
			p.sent[id] = true
		} else {
			delete(p.sent, id)
		}
		p.mu.Unlock()
		if len(hashes) > 0 || had {
			a.broadcastUsers(id, hashes)
		}
	}
}

// localUsers appends the hashes of this node's users of the document id
// (none when it is not loaded) to buf.
func (a *Authority) localUsers(id string, now time.Time, buf []uint64) []uint64 {
	d := a.loadedDoc(id)
	if d == nil {
		return buf // not loaded, or loading: it has had no users yet
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deleted {
		return buf
	}
	d.userCount(now, a.cfg.UsersWindow) // forgets the expired
	for _, u := range d.users {
		buf = append(buf, u.hash)
	}
	return buf
}

// usersMessage is a message of the users topic.
type usersMessage struct {
	Doc   string `json:"doc"`
	Seq   uint64 `json:"seq"`
	Part  int    `json:"part"`
	Parts int    `json:"parts"`
	Users string `json:"users"`
}

// broadcastUsers sends the set hashes of the document id, in as many
// parts as it takes.
func (a *Authority) broadcastUsers(id string, hashes []uint64) {
	p := &a.peers
	p.mu.Lock()
	p.seq++
	seq := p.seq
	p.mu.Unlock()
	idJSON := model.AppendJSONString(nil, id)
	per := (store.MaxBroadcast - len(usersTopic) - len(idJSON) - 100) / usersHashDigits
	parts := max(1, (len(hashes)+per-1)/per)
	if parts > usersMaxParts {
		parts = usersMaxParts
		hashes = hashes[:parts*per]
	}
	buf := make([]byte, 0, store.MaxBroadcast)
	for i := range parts {
		part := hashes[i*per : min((i+1)*per, len(hashes))]
		buf = append(buf[:0], `{"doc":`...)
		buf = append(buf, idJSON...)
		buf = append(buf, `,"seq":`...)
		buf = strconv.AppendUint(buf, seq, 10)
		buf = append(buf, `,"part":`...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, `,"parts":`...)
		buf = strconv.AppendInt(buf, int64(parts), 10)
		buf = append(buf, `,"users":"`...)
		for _, h := range part {
			for n := len(strconv.AppendUint(nil, h, 16)); n < usersHashDigits; n++ {
				buf = append(buf, '0')
			}
			buf = strconv.AppendUint(buf, h, 16)
		}
		buf = append(buf, `"}`...)
		if err := p.caster.Broadcast(usersTopic, buf); err != nil {
			a.log.Warn("collab: the users of a document not sent to the other nodes", "doc", id, "err", err)
			return
		}
	}
}

// heardUsers is the subscription's callback: it takes in a part of
// another node's set of a document's users and, when the set is whole
// and differs from the one before, wakes the document's waiters.
func (a *Authority) heardUsers(node string, msg []byte) {
	var m usersMessage
	if err := json.Unmarshal(msg, &m); err != nil || m.Doc == "" || m.Parts < 1 || m.Parts > usersMaxParts ||
		m.Part < 0 || m.Part >= m.Parts || len(m.Users)%usersHashDigits != 0 {
		return
	}
	hashes := make([]uint64, 0, len(m.Users)/usersHashDigits)
	for i := 0; i < len(m.Users); i += usersHashDigits {
		h, err := strconv.ParseUint(m.Users[i:i+usersHashDigits], 16, 64)
		if err != nil {
			return
		}
		hashes = append(hashes, h)
	}
	p := &a.peers
	now := a.now()
	p.mu.Lock()
	pd := p.docs[m.Doc]
	if pd == nil {
		pd = &peerDoc{nodes: make(map[string]*nodeUsers), union: make(map[uint64]int)}
		p.docs[m.Doc] = pd
	}
	nu := pd.nodes[node]
	if nu == nil {
		nu = &nodeUsers{}
		pd.nodes[node] = nu
	}
	if m.Part == 0 {
		nu.seq, nu.next, nu.pending = m.Seq, 0, nu.pending[:0]
	}
	// Each part keeps the entry (a set being received included) for the
	// expiry.
	nu.expires = now.Add(usersPeerExpiry * p.every)
	if m.Seq != nu.seq || m.Part != nu.next {
		// A part of a set whose start was missed: wait for the next.
		p.dropIfEmpty(m.Doc, pd, node, nu)
		p.mu.Unlock()
		return
	}
	nu.pending = append(nu.pending, hashes...)
	nu.next++
	if nu.next < m.Parts {
		p.mu.Unlock()
		return
	}
	changed := false
	if p.heard-len(nu.users)+len(nu.pending) > usersMaxHeard {
		a.log.Warn("collab: too many users heard from other nodes: a set left out", "doc", m.Doc, "node", node)
	} else {
		changed = pd.replace(nu, nu.pending, &p.heard)
	}
	nu.pending, nu.next = nil, 0
	p.dropIfEmpty(m.Doc, pd, node, nu)
	p.mu.Unlock()
	if changed {
		a.wakeUsers(m.Doc)
	}
}

// replace makes users the set of nu, keeping pd's union and heard up to
// date, and reports whether the set changed.
func (pd *peerDoc) replace(nu *nodeUsers, users []uint64, heard *int) bool {
	changed := len(users) != len(nu.users)
	if !changed {
		old := make(map[uint64]bool, len(nu.users))
		for _, h := range nu.users {
			old[h] = true
		}
		for _, h := range users {
			if !old[h] {
				changed = true
				break
			}
		}
	}
	for _, h := range nu.users {
		if pd.union[h]--; pd.union[h] <= 0 {
			delete(pd.union, h)
		}
	}
	*heard -= len(nu.users)
	nu.users = append([]uint64(nil), users...)
	*heard += len(nu.users)
	for _, h := range nu.users {
		pd.union[h]++
	}
	return changed
}

// dropIfEmpty forgets nu, the entry of node in pd, when it holds no set
// and none is being received, and pd when it holds no entry.
func (p *peerUsers) dropIfEmpty(id string, pd *peerDoc, node string, nu *nodeUsers) {
	if len(nu.users) == 0 && nu.next == 0 {
		delete(pd.nodes, node)
	}
	if len(pd.nodes) == 0 {
		delete(p.docs, id)
	}
}

// expirePeers forgets the sets that their nodes have not repeated within
// usersPeerExpiry refreshes, and wakes the waiters of their documents.
func (a *Authority) expirePeers() {
	p := &a.peers
	now := a.now()
	var woken []string
	p.mu.Lock()
	for id, pd := range p.docs {
		changed := false
		for node, nu := range pd.nodes {
			if now.Before(nu.expires) {
				continue
			}
			changed = pd.replace(nu, nil, &p.heard) || changed
			nu.pending, nu.next = nil, 0
			p.dropIfEmpty(id, pd, node, nu)
		}
		if changed {
			woken = append(woken, id)
		}
	}
	p.mu.Unlock()
	for _, id := range woken {
		a.wakeUsers(id)
	}
	for _, d := range a.loadedDocs() {
		d.mu.Lock()
		d.expirePresenceLocked(time.Now())
		d.mu.Unlock()
	}
}

// wakeUsers wakes the waiters of users of the document id, if it is
// loaded, after the other nodes' users changed.
func (a *Authority) wakeUsers(id string) {
	d := a.loadedDoc(id)
	if d == nil {
		return
	}
	d.mu.Lock()
	d.usersDirty = true
	d.scheduleUsers(a.now())
	d.mu.Unlock()
}

// loadedDoc returns the document id when it is loaded, nil otherwise
// (also while it loads, or when its load failed).
func (a *Authority) loadedDoc(id string) *document {
	a.mu.Lock()
	d := a.docs[id]
	a.mu.Unlock()
	if d == nil || !chanClosed(d.ready) || d.err != nil {
		return nil
	}
	return d
}

// loadedDocs returns the documents loaded.
func (a *Authority) loadedDocs() []*document {
	a.mu.Lock()
	defer a.mu.Unlock()
	docs := make([]*document, 0, len(a.docs))
	for _, d := range a.docs {
		if d.loaded {
			docs = append(docs, d)
		}
	}
	return docs
}

// sendPresence broadcasts the asks waiting and the local presence of the
// documents that changed, or (all) of every loaded document; with bye,
// every local entry as left.
func (a *Authority) sendPresence(all, bye bool) {
	p := &a.peers
	p.mu.Lock()
	ids, asks := p.presence, p.asks
	p.presence, p.asks = make(map[string]bool), make(map[string]bool)
	p.mu.Unlock()
	for id := range asks {
		msg := model.AppendJSONString([]byte(`{"doc":`), id)
		msg = append(msg, `,"ask":true}`...)
		if err := p.caster.Broadcast(presenceTopic, msg); err != nil {
			a.log.Warn("collab: presence not asked of the other nodes", "doc", id, "err", err)
		}
	}
	docs := make(map[string]*document, len(ids))
	if all || bye {
		for _, d := range a.loadedDocs() {
			docs[d.id] = d
		}
	}
	for id := range ids {
		if d := a.loadedDoc(id); d != nil {
			docs[id] = d
		}
	}
	for id, d := range docs {
		d.mu.Lock()
		entries, left, version := d.localPresenceLocked(all)
		if bye {
			for _, e := range entries {
				left = append(left, e.ClientID)
			}
			entries = nil
		}
		d.mu.Unlock()
		if len(entries) > 0 || len(left) > 0 {
			a.broadcastPresence(id, version, entries, left)
		}
	}
}

// broadcastPresence sends entries and left, of the document id at
// version, in as many messages as they take.
func (a *Authority) broadcastPresence(id string, version int64, entries []castEntry, left []ClientID) {
	head := model.AppendJSONString([]byte(`{"doc":`), id)
	head = append(head, `,"version":`...)
	head = strconv.AppendInt(head, version, 10)
	head = append(head, `,"clients":[`...)
	limit := store.MaxBroadcast - len(presenceTopic) - 16 // with room for the closing
	msg := append([]byte(nil), head...)
	n, inLeft := 0, false
	flush := func() {
		if !inLeft {
			msg = append(msg, `],"left":[`...)
		}
		msg = append(msg, "]}"...)
		if err := a.peers.caster.Broadcast(presenceTopic, msg); err != nil {
			a.log.Warn("collab: presence not sent to the other nodes", "doc", id, "err", err)
		}
		msg, n, inLeft = append(msg[:0], head...), 0, false
	}
	var entry []byte
	for _, e := range entries {
		entry = appendCastEntry(entry[:0], e)
		if n > 0 && len(msg)+len(entry) > limit {
			flush()
		}
		if n > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, entry...)
		n++
	}
	msg, inLeft = append(msg, `],"left":[`...), true
	ids := 0
	for _, cid := range left {
		if (n > 0 || ids > 0) && len(msg)+len(cid) > limit {
			flush()
			msg, inLeft, ids = append(msg, `],"left":[`...), true, 0
		}
		if ids > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, cid...)
		ids++
	}
	flush()
}

// appendCastEntry appends e as the other nodes are sent it.
func appendCastEntry(buf []byte, e castEntry) []byte {
	buf = append(buf, `{"clientID":`...)
	buf = append(buf, e.ClientID...)
	buf = append(buf, `,"info":`...)
	buf = append(buf, e.Info...)
	if e.owner.author != "" {
		buf = append(buf, `,"owner":{"author":`...)
		buf = model.AppendJSONString(buf, e.owner.author)
	} else {
		buf = append(buf, `,"owner":{"user":`...)
		buf = model.AppendJSONString(buf, e.owner.user)
	}
	buf = append(buf, `},"anchor":`...)
	if e.Anchor < 0 {
		return append(buf, `null,"head":null}`...)
	}
	buf = strconv.AppendInt(buf, int64(e.Anchor), 10)
	buf = append(buf, `,"head":`...)
	buf = strconv.AppendInt(buf, int64(e.Head), 10)
	return append(buf, '}')
}

// presenceMessage is a message of the presence topic.
type presenceMessage struct {
	Doc     string `json:"doc"`
	Version int64  `json:"version"`
	Clients []struct {
		ClientID json.RawMessage `json:"clientID"`
		Info     json.RawMessage `json:"info"`
		Owner    struct {
			Author string `json:"author"`
			User   string `json:"user"`
		} `json:"owner"`
		Anchor *int `json:"anchor"`
		Head   *int `json:"head"`
	} `json:"clients"`
	Left []json.RawMessage `json:"left"`
	Ask  bool              `json:"ask"`
}

// heardPresence is the subscription's callback: it takes in a message of
// another node about a document that has followers here.
func (a *Authority) heardPresence(node string, msg []byte) {
	var m presenceMessage
	if err := json.Unmarshal(msg, &m); err != nil || m.Doc == "" || m.Version < 0 {
		return
	}
	d := a.loadedDoc(m.Doc)
	if d == nil {
		return // nobody here to tell
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pres.followers) == 0 || d.deleted {
		return
	}
	if m.Ask {
		d.pres.castAll = true
		a.peers.presenceChanged(m.Doc)
		return
	}
	expires := time.Now().Add(usersPeerExpiry * a.peers.every) // presence keeps real time, not Config.Now
	for _, c := range m.Clients {
		id, err := ParseClientID(c.ClientID)
		info := bytes.TrimSpace(c.Info)
		if err != nil || len(info) == 0 || info[0] != '{' || len(info) > MaxPresenceInfo {
			continue
		}
		anchor, head := -1, -1
		if c.Anchor != nil && *c.Anchor >= 0 {
			anchor, head = *c.Anchor, *c.Anchor
			if c.Head != nil && *c.Head >= 0 {
				head = *c.Head
			}
		}
		d.heardPresenceLocked(node, bytes.Clone(id), bytes.Clone(info), ownerOf(c.Owner.Author, c.Owner.User), m.Version, anchor, head, expires)
	}
	for _, raw := range m.Left {
		if id, err := ParseClientID(raw); err == nil {
			d.heardLeftLocked(node, id)
		}
	}
}
