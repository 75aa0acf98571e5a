package collab

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"sync"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
)

// ClientID is the JSON text of a client's id as prosemirror-collab sends
// it: a number (an integer from 0 to 2^53) or a string of at most 256
// bytes. It is kept verbatim and given back in Events.
type ClientID []byte

// maxClientIDString is the longest string client id, in bytes.
const maxClientIDString = 256

// maxSafeInteger is 2^53, the largest integer that every JSON reader
// (JavaScript's in particular) keeps exactly.
const maxSafeInteger = 1 << 53

// ParseClientID checks that raw is the JSON text of a client id, an
// integer from 0 to 2^53 or a string of at most 256 bytes, and returns it
// without surrounding whitespace. The error matches ErrInvalidRequest and
// says what is wrong.
func ParseClientID(raw []byte) (ClientID, error) {
	text := bytes.Trim(raw, " \t\r\n")
	if len(text) == 0 {
		return nil, invalidf("clientID is missing")
	}
	d := jsonscan.NewDecoder(text)
	kind, err := d.Peek()
	if err != nil {
		return nil, invalidf("clientID is not JSON: %v", err)
	}
	switch kind {
	case jsonscan.Number:
		n, raw, err := d.ReadNumber()
		if err != nil {
			return nil, invalidf("clientID is not JSON: %v", err)
		}
		ok := n >= 0 && n <= maxSafeInteger && n == math.Trunc(n)
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			ok = i >= 0 && i <= maxSafeInteger // exact for plain integers
		}
		if !ok {
			return nil, invalidf("clientID %s is not an integer from 0 to 2^53", text)
		}
	case jsonscan.String:
		s, err := d.ReadStringBytes()
		if err != nil {
			return nil, invalidf("clientID is not JSON: %v", err)
		}
		if len(s) > maxClientIDString {
			return nil, invalidf("clientID is a string of %d bytes (at most %d)", len(s), maxClientIDString)
		}
	default:
		return nil, invalidf("clientID must be a number or a string, not %v", kind)
	}
	if err := d.End(); err != nil {
		return nil, invalidf("clientID is not JSON: %v", err)
	}
	return text, nil
}

// Client ids belong to their owner. prosemirror-collab tells its own
// steps from others' by their client id alone, and client ids are no
// secret (every steps push and presence message carries them): a client
// that submitted under another's id would have its steps taken by that
// client as the confirmation of its own, and dropped. So on each document
// a client id belongs to whoever uses it: its principal (Submission.Author)
// or, for an anonymous client, its user (the server's client address). It
// belongs to it while the document's kept history (Config.History steps,
// read back from the store with their authors after a restart, an unload
// or from other nodes) holds a step under it, and while a connection
// holds it (HoldClientID, and the presence of another node's client:
// presence.go); then it is free again.

// owner is who a client id belongs to: a principal, or, for an anonymous
// client, a user. Anonymous steps read back from the store have no user
// (the store keeps no address): any anonymous client may continue them,
// no principal.
type owner struct {
	author string // the principal, "" when anonymous
	user   string // an anonymous client's user; "" when unknown
}

// ownerOf returns the owner of a submission by author for user.
func ownerOf(author, user string) owner {
	if author != "" {
		return owner{author: author}
	}
	return owner{user: user}
}

// admits reports whether a client id that o owns may be used by other.
func (o owner) admits(other owner) bool {
	if o.author != "" || other.author != "" {
		return o.author == other.author
	}
	return o.user == "" || o.user == other.user
}

// clientUse is what makes a client id its owner's on a document: steps
// in the kept history and connections that hold it.
type clientUse struct {
	owner owner
	steps int // of the kept history
	holds int // HoldClientID
}

// inUse reports whether u makes its client id its owner's: a client id
// that no step and no connection uses is free (and out of
// document.clients).
func (u clientUse) inUse() bool { return u.steps+u.holds > 0 }

// ClientIDError refuses a submission, or a connection's hello
// (HoldClientID), under a client id that belongs to another principal (or
// anonymous user) on the document, or under RestoreClientID or
// EditClientID, the server's. It matches ErrForbidden (HTTP 403).
// Nothing changed.
type ClientIDError struct {
	ClientID ClientID
}

func (e *ClientIDError) Error() string {
	if bytes.Equal(e.ClientID, RestoreClientID) {
		return "client id " + string(e.ClientID) + " is the server's (restores): choose another"
	}
	if bytes.Equal(e.ClientID, EditClientID) {
		return "client id " + string(e.ClientID) + " is the server's (server edits): choose another"
	}
	return "client id " + string(e.ClientID) + " is in use on this document by another principal: choose another"
}

func (e *ClientIDError) Is(target error) bool { return target == ErrForbidden }

// checkClientLocked checks that o may use the client id cid on d, or
// returns a *ClientIDError. It is called with d.mu held.
func (d *document) checkClientLocked(cid ClientID, o owner) error {
	var u clientUse
	if p := d.clients[string(cid)]; p != nil {
		u = *p
	}
	return checkClient(cid, u, o)
}

// indexStepsLocked brings d.clients from the history of old to that of
// st: when st continues old (a submission, or steps caught up from the
// store), the steps that left the history are taken out and the new ones
// added; a reloaded st is indexed anew. It is called with d.mu held.
func (d *document) indexStepsLocked(old, st docState, reloaded bool) {
	if d.clients == nil {
		d.clients = make(map[string]*clientUse)
	}
	if reloaded || st.version < old.version {
		for k, u := range d.clients {
			if u.steps = 0; u.holds == 0 {
				delete(d.clients, k)
			}
		}
		d.addStepsLocked(st.steps)
		return
	}
	added := min(int(st.version-old.version), len(st.steps))
	keptOld := len(st.steps) - added
	for _, r := range old.steps[:max(0, len(old.steps)-keptOld)] {
		if u := d.clients[string(r.ClientID)]; u != nil {
			if u.steps--; u.steps <= 0 && u.holds == 0 {
				delete(d.clients, string(r.ClientID))
			}
		}
	}
	d.addStepsLocked(st.steps[len(st.steps)-added:])
}

// addStepsLocked counts steps, new in the history, as their owners' use
// of their client ids. An anonymous step read back from the store (no
// user) leaves an anonymous client's id to that client.
func (d *document) addStepsLocked(steps []StepRecord) {
	for _, r := range steps {
		if len(r.ClientID) == 0 {
			continue
		}
		u := d.clients[string(r.ClientID)]
		if u == nil {
			u = &clientUse{}
			d.clients[string(r.ClientID)] = u
		}
		if u.steps+u.holds == 0 || r.owner.author != "" || r.owner.user != "" || u.owner.author != "" {
			u.owner = r.owner
		}
		u.steps++
	}
}

// HoldClientID makes clientID belong to author (or, anonymous, user) on
// the document id until release is called, as a WebSocket connection
// holds its hello's client id: a submission or hold by anyone else under
// it fails with a *ClientIDError meanwhile, which HoldClientID returns
// too when the id belongs to someone else already. The hold keeps the
// document loaded (it counts as a request using it) and, with
// AutoCreate, creates it for user. release may be called more than once.
func (a *Authority) HoldClientID(ctx context.Context, id, user, author string, clientID ClientID) (release func(), err error) {
	cid, err := ParseClientID(clientID)
	if err != nil {
		return nil, err
	}
	d, err := a.acquire(ctx, id, user)
	if err != nil {
		return nil, err
	}
	return a.hold(d, user, cid, ownerOf(author, user))
}

// hold holds cid on d, acquired by user, for o (HoldClientID); d is
// released with the hold, or at once when it fails.
func (a *Authority) hold(d *document, user string, cid ClientID, o owner) (release func(), err error) {
	d.mu.Lock()
	unhold, err := d.holdLocked(cid, o)
	d.mu.Unlock()
	if err != nil {
		a.release(d, user)
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			unhold()
			d.mu.Unlock()
			a.release(d, user)
		})
	}, nil
}

// holdLocked holds cid on d for o, unless it is another's, and returns
// the end of the hold, to be called with mu held. It is called with mu
// held.
func (d *document) holdLocked(cid ClientID, o owner) (unhold func(), err error) {
	if err := d.checkClientLocked(cid, o); err != nil {
		return nil, err
	}
	if d.clients == nil {
		d.clients = make(map[string]*clientUse)
	}
	key := string(cid)
	u := d.clients[key]
	if u == nil {
		u = &clientUse{}
		d.clients[key] = u
	}
	if u.owner.author == "" && u.owner.user == "" {
		u.owner = o
	}
	u.holds++
	return func() {
		if u := d.clients[key]; u != nil {
			if u.holds--; u.holds <= 0 && u.steps == 0 {
				delete(d.clients, key)
			}
		}
	}, nil
}
