package server

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
)

// TestWSPresenceData checks a hello's "data": the others get it in its
// presence entries (the welcome, a presence message, and across nodes),
// a client without one has none, and data that is not an object or is
// over Limits.MaxPresenceData refuses the hello (400, close 1008).
func TestWSPresenceData(t *testing.T) {
	e := newWS(t, Config{Limits: Limits{MaxPresenceData: 64}}, collab.Config{}, nil)
	e.post(t, "d", 0, "7", insert(1, "abc"))
	a := e.dial(t, "d", false)
	a.clientID = "1"
	a.send(`{"type":"hello","version":1,"clientID":1,"name":"Ada","data":{"avatar":"a.png","typing":true}}`)
	a.next("welcome")
	b := e.dial(t, "d", false)
	b.hello(1, `"b"`)
	w := b.next("welcome")
	if len(w.Presence) != 1 || string(w.Presence[0].Data) != `{"avatar":"a.png","typing":true}` {
		t.Fatalf("welcome presence %s", w.raw)
	}
	// b has no data: its entry has none.
	if m, p := a.presenceOf(`"b"`); p.Data != nil || strings.Contains(m.raw, `"data"`) {
		t.Fatalf("presence of b %s", m.raw)
	}
	a.send(`{"type":"presence","version":1,"anchor":2,"head":2}`)
	if m, p := b.selectionOf("1"); string(p.Data) != `{"avatar":"a.png","typing":true}` {
		t.Fatalf("presence of a %s", m.raw)
	}

	for _, tc := range []struct{ data, want string }{
		{`"text"`, `"data" must be an object`},
		{`[1]`, `"data" must be an object`},
		{`{"x":"` + strings.Repeat("y", 60) + `"}`, `more than 64 (Limits.MaxPresenceData)`},
	} {
		c := e.dial(t, "d", false)
		c.send(`{"type":"hello","version":1,"clientID":3,"data":` + tc.data + `}`)
		if m := c.next("error"); m.Status != 400 || !strings.Contains(m.Message, tc.want) {
			t.Errorf("data %s: %s, want 400 with %q", tc.data, m.raw, tc.want)
		}
		if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
			t.Errorf("data %s: closed with %d, want 1008", tc.data, code)
		}
	}
	// data: null is none.
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":1,"clientID":4,"data":null}`)
	c.next("welcome")
	if m, p := a.presenceOf("4"); p.Data != nil {
		t.Fatalf("presence of data null %s", m.raw)
	}
}

// TestWSPresenceDataAcrossNodes checks that a hello's data reaches the
// clients of the document on another node.
func TestWSPresenceDataAcrossNodes(t *testing.T) {
	bus := new(testutil.Bus)
	es, _ := wsNodes(t, bus, 2, 100*time.Millisecond)
	es[0].post(t, "d", 0, "7", insert(1, "abc"))
	a, aw := joinAt(t, es[0], "d", 1, "1")
	b := es[1].dial(t, "d", false)
	b.clientID = `"b"`
	b.send(`{"type":"hello","version":1,"clientID":"b","data":{"role":"reviewer"}}`)
	b.next("welcome")
	for _, p := range aw.Presence {
		if string(p.ClientID) == `"b"` && string(p.Data) != `{"role":"reviewer"}` {
			t.Fatalf("welcome %s", aw.raw)
		}
	}
	if m, p := a.presenceOf(`"b"`); string(p.Data) != `{"role":"reviewer"}` {
		t.Fatalf("presence of b from the other node %s", m.raw)
	}
}
