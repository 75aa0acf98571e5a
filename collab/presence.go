package collab

import (
	"bytes"
	"time"
)

// Presence. A document's presence is who is in it (a client id and what
// its transport shows of it: a name, a color, data) and where each
// selection is. The transports set it for their clients through a
// Subscription (Present, Select, Absent), and read it in the
// subscription's updates: the entries that changed since the last update
// (Events.Presence, positions at the update's version) and the client ids
// that left (Events.Left); a joining client gets every entry
// (Welcome.Presence). Only subscriptions that follow presence
// (FollowPresence) get it, and they are woken for it at most every
// Config.PresenceEvery.
//
// The authority keeps every selection at the document's version: a step
// maps them all (silently: clients map the selections they show through
// the steps themselves), and a selection given at an older version is
// mapped through the kept history's step maps. A selection that cannot
// be mapped (its version is ahead of the document, or older than the
// kept history, or a step in between has no map) is ignored; a
// selection outside the document at its version is refused.
//
// With several nodes (a store.Broadcaster), the entries of other nodes'
// clients arrive on the same exchange as the users (peers.go), hold their
// client id here for their owner while they last, and are shown as local
// ones are; a client present here and on another node (it moved) is
// shown once, as the local one.

// DefaultPresenceEvery is the default Config.PresenceEvery.
const DefaultPresenceEvery = 50 * time.Millisecond

// MaxPresenceInfo bounds the Info of a presence entry, in bytes: an
// entry must fit in one message between nodes.
const MaxPresenceInfo = 6 << 10

// Presence is a client's entry in a document's presence.
type Presence struct {
	ClientID ClientID
	// Info is a JSON object of what the transport shows of the client
	// (do not modify it).
	Info []byte
	// Anchor and Head are the selection at the version of the update
	// that holds the entry; -1 when the client shows none.
	Anchor, Head int
}

// presenceEntry is the presence of one client on one node.
type presenceEntry struct {
	info         []byte
	anchor, head int
	// at is the version of anchor and head: the document's, but for an
	// entry of another node at a version not reached yet (held back).
	at int64

	// Of a local entry: how many of the subscription's clients are
	// present under its id.
	refs int
	// Of another node's entry: the node, when it lapses, and the hold of
	// its client id for its owner (nil when refused).
	node    string
	owner   owner
	expires time.Time
	release func()
}

// presenceSlot is what a document knows of a client id: its entry here
// and the one of another node, either nil. seq is the change that last
// touched it; a slot with neither entry is kept until every follower and
// the other nodes were told (trimPresenceLocked).
type presenceSlot struct {
	local, remote *presenceEntry
	seq           uint64
}

// presence is a document's presence. Guarded by document.mu.
type presence struct {
	slots     map[string]*presenceSlot
	seq       uint64 // counts the changes
	flushed   uint64 // the changes the followers were woken for
	cast      uint64 // the changes of local entries sent to other nodes
	castAll   bool   // the next sending sends every local entry
	held      int    // entries of other nodes at a version not reached
	followers map[*Subscription]struct{}
	wake      chan struct{} // closed (and replaced) at every flush
	pending   bool          // a flush is scheduled
	lastFlush time.Time
}

// FollowPresence makes the subscription's updates carry the presence
// changes after its cursor, and its Wait wake for them. The first
// follower of a document asks the other nodes for their entries.
func (s *Subscription) FollowPresence() {
	d := s.d
	d.mu.Lock()
	if s.closed || s.following {
		d.mu.Unlock()
		return
	}
	p := &d.pres
	if p.followers == nil {
		p.followers = make(map[*Subscription]struct{})
		p.slots = make(map[string]*presenceSlot)
		p.wake = make(chan struct{})
	}
	first := len(p.followers) == 0
	p.followers[s] = struct{}{}
	s.following, s.presenceSeq = true, p.seq
	d.mu.Unlock()
	if first {
		s.a.peers.askPresence(d.id)
	}
}

// unfollowLocked ends s's following, and when it was the last follower
// forgets the other nodes' entries. It is called with mu held.
func (d *document) unfollowLocked(s *Subscription) {
	p := &d.pres
	if !s.following {
		return
	}
	s.following = false
	delete(p.followers, s)
	if len(p.followers) > 0 {
		return
	}
	for id, sl := range p.slots {
		if sl.remote != nil {
			d.dropRemoteLocked(id, sl)
		}
		if sl.local != nil {
			sl.local = nil
			d.markPresenceLocked(sl) // for the other nodes
		}
	}
	d.trimPresenceLocked()
	d.auth.peers.presenceChanged(d.id)
}

// Present makes the client id present with info, a JSON object of what
// the transport shows of it, without a selection (or with the one it
// has, when another of the subscription's clients is present under the
// id). Each Present is undone by one Absent.
func (s *Subscription) Present(id ClientID, info []byte) {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !s.following {
		return
	}
	sl := d.slotLocked(id)
	if sl.local == nil {
		sl.local = &presenceEntry{anchor: -1, head: -1, at: d.st.version}
	}
	sl.local.refs++
	sl.local.info = info
	d.markPresenceLocked(sl)
}

// Absent undoes a Present of the client id: once every one is undone,
// the client has left.
func (s *Subscription) Absent(id ClientID) {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	sl := d.pres.slots[string(id)]
	if !s.following || sl == nil || sl.local == nil {
		return
	}
	if sl.local.refs--; sl.local.refs > 0 {
		return
	}
	sl.local = nil
	d.markPresenceLocked(sl)
}

// Select sets the selection of the client id, a present client, given at
// version (anchor < 0 hides it), mapped to the document's version. A
// selection that cannot be mapped is ignored; Select reports false for a
// position outside the document at version.
func (s *Subscription) Select(id ClientID, version int64, anchor, head int) bool {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	sl := d.pres.slots[string(id)]
	if !s.following || sl == nil || sl.local == nil {
		return true
	}
	if anchor < 0 {
		anchor, head = -1, -1
	} else {
		var ok bool
		if anchor, head, ok = d.mapSelectionLocked(version, anchor, head); !ok {
			return anchor != outside
		}
	}
	e := sl.local
	if e.anchor == anchor && e.head == head {
		return true
	}
	e.anchor, e.head = anchor, head
	d.markPresenceLocked(sl)
	return true
}

// outside is what mapSelectionLocked returns for a position outside the
// document.
const outside = -2

// mapSelectionLocked maps a selection at version to the document's
// version. It returns ok false when it cannot, with anchor outside when a
// position is outside the document at version. It is called with mu
// held.
func (d *document) mapSelectionLocked(version int64, anchor, head int) (int, int, bool) {
	st := &d.st
	behind := st.version - version
	if version < 0 || behind < 0 || behind > int64(len(st.steps)) {
		return -1, -1, false
	}
	steps := st.steps[len(st.steps)-int(behind):]
	size := st.node.Content.Size()
	if behind > 0 {
		i := len(st.steps) - int(behind)
		if i == 0 || st.steps[i-1].Map == nil {
			return -1, -1, false // the size at version is not known
		}
		size = st.steps[i-1].Size
	}
	if anchor > size || head > size || head < 0 {
		return outside, outside, false
	}
	for _, r := range steps {
		if r.Map == nil {
			return -1, -1, false
		}
		anchor, head = r.Map.Map(anchor, 1), r.Map.Map(head, 1)
	}
	return anchor, head, true
}

// slotLocked returns the slot of id, made when missing. It is called
// with mu held.
func (d *document) slotLocked(id ClientID) *presenceSlot {
	sl := d.pres.slots[string(id)]
	if sl == nil {
		sl = &presenceSlot{}
		d.pres.slots[string(id)] = sl
	}
	return sl
}

// markPresenceLocked notes a change of sl, to be told to the followers
// (and, for a local entry, to the other nodes). It is called with mu
// held.
func (d *document) markPresenceLocked(sl *presenceSlot) {
	p := &d.pres
	p.seq++
	sl.seq = p.seq
	if p.pending || len(p.followers) == 0 {
		return
	}
	p.pending = true
	delay := time.Until(p.lastFlush.Add(d.auth.cfg.PresenceEvery))
	time.AfterFunc(max(delay, 0), d.flushPresence)
}

// flushPresence wakes the followers for the changes since the last
// flush, and has the local ones sent to the other nodes.
func (d *document) flushPresence() {
	d.mu.Lock()
	p := &d.pres
	p.pending = false
	p.lastFlush = time.Now()
	news := p.seq > p.flushed
	if news && p.wake != nil {
		p.flushed = p.seq
		close(p.wake)
		p.wake = make(chan struct{})
	}
	d.mu.Unlock()
	if news {
		d.auth.peers.presenceChanged(d.id)
	}
}

// shownLocked returns the entry of sl that the followers are shown: the
// local one, else the other node's when its version is reached. It is
// called with mu held.
func (d *document) shownLocked(sl *presenceSlot) *presenceEntry {
	if sl.local != nil {
		return sl.local
	}
	if sl.remote != nil && sl.remote.at <= d.st.version {
		return sl.remote
	}
	return nil
}

// presenceAfterLocked fills ev with the presence changes after s's
// cursor and moves it on, for a follower. It reports whether there were
// any. It is called with mu held.
func (s *Subscription) presenceAfterLocked(ev *Events) bool {
	d := s.d
	p := &d.pres
	if !s.following || p.seq == s.presenceSeq {
		return false
	}
	for id, sl := range p.slots {
		if sl.seq <= s.presenceSeq {
			continue
		}
		if e := d.shownLocked(sl); e != nil {
			ev.Presence = append(ev.Presence, e.entry(id))
		} else if sl.remote == nil || sl.remote.at > d.st.version {
			ev.Left = append(ev.Left, ClientID(id))
		}
	}
	s.presenceSeq = p.seq
	d.trimPresenceLocked()
	return len(ev.Presence) > 0 || len(ev.Left) > 0
}

// allPresenceLocked returns every entry shown at the document's version.
// It is called with mu held.
func (d *document) allPresenceLocked() []Presence {
	var out []Presence
	for id, sl := range d.pres.slots {
		if e := d.shownLocked(sl); e != nil {
			out = append(out, e.entry(id))
		}
	}
	return out
}

func (e *presenceEntry) entry(id string) Presence {
	return Presence{ClientID: ClientID(id), Info: e.info, Anchor: e.anchor, Head: e.head}
}

// trimPresenceLocked forgets the slots without entries that every
// follower and the other nodes were told of. It is called with mu held.
func (d *document) trimPresenceLocked() {
	p := &d.pres
	least := p.seq
	for s := range p.followers {
		least = min(least, s.presenceSeq)
	}
	if d.auth.peers.caster != nil {
		least = min(least, p.cast)
	}
	for id, sl := range p.slots {
		if sl.local == nil && sl.remote == nil && sl.seq <= least {
			delete(p.slots, id)
		}
	}
}

// mapPresenceLocked brings the selections to st, the state being
// published after old: through the maps of the steps between them, or,
// when they have none (a reload), hidden. Entries of other nodes held
// back for a version that st reaches are mapped from theirs and shown.
// It is called with mu held.
func (d *document) mapPresenceLocked(old, st docState, reloaded bool) {
	p := &d.pres
	if len(p.slots) == 0 || st.version == old.version && !reloaded {
		return
	}
	added := int(st.version - old.version)
	var steps []StepRecord
	if !reloaded && added > 0 && added <= len(st.steps) {
		steps = st.steps[len(st.steps)-added:]
	}
	mapped := steps != nil
	for _, r := range steps {
		mapped = mapped && r.Map != nil
	}
	for _, sl := range p.slots {
		for _, e := range []*presenceEntry{sl.local, sl.remote} {
			if e == nil || e.at > st.version {
				continue // none, or still held back
			}
			from, mark := old.version, false
			if e.at > old.version {
				from, mark = e.at, true // held back until now
				p.held--
			}
			if e.anchor >= 0 {
				if !mapped {
					e.anchor, e.head, mark = -1, -1, true
				} else {
					for _, r := range steps[from-old.version:] {
						e.anchor, e.head = r.Map.Map(e.anchor, 1), r.Map.Map(e.head, 1)
					}
				}
			}
			e.at = st.version
			if mark {
				d.markPresenceLocked(sl)
			}
		}
	}
}

// heardPresenceLocked takes in the entry of another node's client, its
// selection at version (anchor < 0: none). It is called with mu held, on
// a document that has followers.
func (d *document) heardPresenceLocked(node string, id ClientID, info []byte, o owner, version int64, anchor, head int, expires time.Time) {
	p := &d.pres
	sl := p.slots[string(id)]
	if sl == nil {
		if len(p.slots) >= maxPeerPresence {
			return
		}
		sl = d.slotLocked(id)
	}
	e := sl.remote
	if e == nil {
		e = &presenceEntry{}
		sl.remote = e
	}
	e.expires = expires
	d.holdRemoteLocked(id, e, o)
	at := version
	if anchor < 0 {
		anchor, head = -1, -1
	}
	if version <= d.st.version {
		at = d.st.version
		if anchor >= 0 {
			var ok bool
			if anchor, head, ok = d.mapSelectionLocked(version, anchor, head); !ok {
				anchor, head = -1, -1
			}
		}
	}
	if e.node == node && bytes.Equal(e.info, info) && e.at == at && e.anchor == anchor && e.head == head {
		return // a repetition (a refresh)
	}
	if e.at > d.st.version {
		p.held--
	}
	if at > d.st.version {
		p.held++
	}
	e.node, e.info, e.at, e.anchor, e.head = node, info, at, anchor, head
	if sl.local == nil && at <= d.st.version {
		d.markPresenceLocked(sl) // else when the document reaches at
	}
}

// heardLeftLocked forgets the entry of id that node sent, if it has it.
// It is called with mu held.
func (d *document) heardLeftLocked(node string, id ClientID) {
	sl := d.pres.slots[string(id)]
	if sl != nil && sl.remote != nil && sl.remote.node == node {
		d.dropRemoteLocked(string(id), sl)
	}
}

// dropRemoteLocked forgets the other node's entry of sl. It is called
// with mu held.
func (d *document) dropRemoteLocked(id string, sl *presenceSlot) {
	e := sl.remote
	sl.remote = nil
	if e.release != nil {
		e.release()
	}
	if e.at > d.st.version {
		d.pres.held--
		if sl.local == nil && sl.seq == 0 {
			delete(d.pres.slots, id) // never shown
			return
		}
	}
	if sl.local == nil {
		d.markPresenceLocked(sl)
	}
}

// expirePresenceLocked forgets the other nodes' entries not repeated in
// time. It is called with mu held.
func (d *document) expirePresenceLocked(now time.Time) {
	for id, sl := range d.pres.slots {
		if sl.remote != nil && !now.Before(sl.remote.expires) {
			d.dropRemoteLocked(id, sl)
		}
	}
}

// holdRemoteLocked holds id for o, the owner another node gave for its
// entry e, unless e holds it for o already; a hold that is refused (the
// id is another's here) is not taken. It is called with mu held.
func (d *document) holdRemoteLocked(id ClientID, e *presenceEntry, o owner) {
	if e.release != nil && e.owner == o {
		return
	}
	if e.release != nil {
		e.release()
		e.release = nil
	}
	e.owner = o
	if unhold, err := d.holdLocked(id, o); err == nil {
		e.release = unhold
	}
}

// localPresenceLocked returns the local entries changed since the last
// sending to the other nodes (all of them, after an ask or at a
// refresh) and the client ids that left here meanwhile, and marks them
// sent. It is called with mu held.
func (d *document) localPresenceLocked(all bool) (entries []castEntry, left []ClientID, version int64) {
	p := &d.pres
	all = all || p.castAll
	for id, sl := range p.slots {
		if sl.local != nil && (all || sl.seq > p.cast) {
			entries = append(entries, castEntry{sl.local.entry(id), d.ownerOfLocked(id)})
		} else if sl.local == nil && sl.seq > p.cast {
			left = append(left, ClientID(id))
		}
	}
	p.cast, p.castAll = p.seq, false
	d.trimPresenceLocked()
	return entries, left, d.st.version
}

// castEntry is a local entry sent to the other nodes, with the owner of
// its client id.
type castEntry struct {
	Presence
	owner owner
}

// ownerOfLocked returns the owner of the client id on the document. It
// is called with mu held.
func (d *document) ownerOfLocked(id string) owner {
	if u := d.clients[id]; u != nil {
		return u.owner
	}
	return owner{}
}
