package server

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// wsNodes starts n servers over one memory store whose authorities are
// the nodes of bus, refreshing what they tell each other every refresh.
func wsNodes(t *testing.T, bus *testutil.Bus, n int, refresh time.Duration) ([]*wsEnv, []store.Store) {
	t.Helper()
	shared := memstore.New()
	var es []*wsEnv
	var sts []store.Store
	for range n {
		st := bus.Node(shared)
		sts = append(sts, st)
		es = append(es, newWS(t, Config{}, collab.Config{Store: st, PeerRefresh: refresh}, nil))
	}
	return es, sts
}

// joinAt dials document id on e and says hello at version as clientID,
// returning the client and its welcome.
func joinAt(t *testing.T, e *wsEnv, id string, version int, clientID string) (*wsClient, wsMsg) {
	t.Helper()
	c := e.dial(t, id, false)
	c.hello(version, clientID)
	return c, c.next("welcome")
}

// knows reads c's presence until it has an entry of clientID (or has it
// in its welcome w).
func (c *wsClient) knows(w wsMsg, clientID string) {
	c.t.Helper()
	for _, p := range w.Presence {
		if string(p.ClientID) == clientID {
			return
		}
	}
	c.presenceOf(clientID)
}

// TestWSPresenceAcrossNodes checks that the WebSocket clients of one
// document on different nodes see each other join, move their
// selections (mapped to the receiving node's version) and leave, and
// that the refreshes of unchanged selections send them nothing.
func TestWSPresenceAcrossNodes(t *testing.T) {
	bus := new(testutil.Bus)
	es, _ := wsNodes(t, bus, 2, 100*time.Millisecond)
	es[0].post(t, "d", 0, "7", insert(1, "abcdef"))
	a, aw := joinAt(t, es[0], "d", 1, "1")
	b, bw := joinAt(t, es[1], "d", 1, `"b"`)
	a.knows(aw, `"b"`)
	b.knows(bw, "1") // the answer to the ask of b's hub, if not in the welcome

	// b's selection reaches a.
	b.send(`{"type":"presence","version":1,"anchor":4,"head":6}`)
	if m, p := a.selectionOf(`"b"`); m.Version != 1 || ptrInt(p.Anchor) != 4 || ptrInt(p.Head) != 6 {
		t.Fatalf("presence %s", m.raw)
	}
	// a's node moves on; a selection b sends at the old version reaches
	// a mapped to the new one, wherever it was mapped.
	a.send(stepsMsg(1, 1, "1", insert(2, "xy")))
	a.nextSkipping("steps")
	a.nextSkipping("ack")
	b.send(`{"type":"presence","version":1,"anchor":3,"head":5}`)
	if m, p := a.presenceOf(`"b"`); m.Version != 2 || ptrInt(p.Anchor) != 5 || ptrInt(p.Head) != 7 {
		t.Fatalf("presence %s", m.raw)
	}
	// The refreshes (every 100 ms here) repeat b's selection, at the
	// version of b's node: a is sent nothing of them, and the next
	// message it gets is b's next selection.
	time.Sleep(500 * time.Millisecond)
	b.send(`{"type":"presence","version":1,"anchor":1,"head":1}`)
	if m := a.next("presence"); len(m.Clients) != 1 || ptrInt(m.Clients[0].Anchor) != 1 {
		t.Fatalf("after the refreshes of an unchanged selection: %s", m.raw)
	}
	b.nextSkipping("steps")
	a.send(`{"type":"presence","version":2,"anchor":1,"head":1}`)
	if m, p := b.selectionOf("1"); ptrInt(p.Anchor) != 1 {
		t.Fatalf("presence %s", m.raw)
	}

	// b leaves.
	b.c.Close(websocket.StatusNormalClosure, "")
	a.leftOf(`"b"`)
}

// TestWSPresenceNodeDies checks that the clients of a node that dies
// (its messages lost) leave the clients of the others once their
// entries expire.
func TestWSPresenceNodeDies(t *testing.T) {
	bus := new(testutil.Bus)
	es, sts := wsNodes(t, bus, 3, 20*time.Millisecond)
	es[0].post(t, "d", 0, "7", insert(1, "abcdef"))
	a, aw := joinAt(t, es[0], "d", 1, "1")
	b, bw := joinAt(t, es[1], "d", 1, `"b"`)
	c, cw := joinAt(t, es[2], "d", 0, "3")
	a.knows(aw, "3")
	b.knows(bw, "3")
	c.knows(cw, "1")
	bus.Cut(sts[2].(store.Broadcaster).Node())
	a.leftOf("3")
	b.leftOf("3")
}

// leftOf reads presence messages until one says that clientID left.
func (c *wsClient) leftOf(clientID string) {
	c.t.Helper()
	for {
		m := c.nextSkipping("presence")
		for _, id := range m.Left {
			if string(id) == clientID {
				return
			}
		}
	}
}

// TestWSPresenceBadMessages sends malformed presence messages from
// another node: they are dropped, and a good one after them is shown.
func TestWSPresenceBadMessages(t *testing.T) {
	bus := new(testutil.Bus)
	es, _ := wsNodes(t, bus, 1, 20*time.Millisecond)
	other := bus.Node(memstore.New()).(store.Broadcaster)
	es[0].post(t, "d", 0, "7", insert(1, "abcdef"))
	a, _ := joinAt(t, es[0], "d", 1, "1")
	for _, m := range []string{
		``, `null`, `{"doc":"d","version":-1}`, `{"doc":"d","version":1,"clients":[{"clientID":{}}]}`,
		`{"doc":"d","version":1,"clients":[{"clientID":1.5}]}`,
		`{"doc":"d","version":1,"clients":[{"clientID":2}]}`, // no info
		`{"doc":"d","version":1,"clients":[{"clientID":2,"info":"n"}]}`,
		`{"doc":"d","version":1,"clients":[{"clientID":2,"info":{"name":"` + strings.Repeat("n", collab.MaxPresenceInfo) + `"}}]}`,
		`{"doc":"d","version":1,"clients":[{"clientID":1,"info":{},"anchor":1}]}`, // a's own id: a is local
		`{"doc":"d","version":1,"left":[{}]}`,
	} {
		if err := other.Broadcast("presence", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	// Out of the document at version 1 (size 8): shown hidden.
	if err := other.Broadcast("presence", []byte(`{"doc":"d","version":1,"clients":[{"clientID":"far","info":{},"anchor":99,"head":2}]}`)); err != nil {
		t.Fatal(err)
	}
	if m, p := a.presenceOf(`"far"`); p.Anchor != nil || m.Version != 1 {
		t.Fatalf("presence %s", m.raw)
	}
	if err := other.Broadcast("presence", []byte(`{"doc":"d","version":1,"clients":[{"clientID":"ok","info":{"name":"O","color":"#010203"},"anchor":2,"head":3}]}`)); err != nil {
		t.Fatal(err)
	}
	if m, p := a.presenceOf(`"ok"`); ptrInt(p.Anchor) != 2 || ptrInt(p.Head) != 3 || *p.Name != "O" {
		t.Fatalf("presence %s", m.raw)
	}
}
