package server

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
)

// wsDenyCase is a message of one type of the message table, valid but
// for the policy, and the policy call it must make.
type wsDenyCase struct {
	msg    string
	id     string // the "id" of its error ("" when none)
	action Action // of its one authorization
}

// wsDenyCases has a case for every type of wsMessageTypes (checked).
var wsDenyCases = map[string]wsDenyCase{
	"hello":    {`{"type":"hello","version":1,"clientID":3,"token":"alice"}`, "", ActionRead},
	"steps":    {stepsMsg(7, 1, "11", insert(1, "x")), "7", ActionEdit},
	"commit":   {`{"type":"commit","id":8,"version":1,"ref":"r","clientID":12,"steps":[` + insert(1, "x") + `]}`, "8", ActionEdit},
	"presence": {`{"type":"presence","version":1,"anchor":1,"head":2}`, "", ActionRead},
	"token":    {`{"type":"token","id":5,"token":"alice"}`, "5", ActionRead},
	"ping":     {`{"type":"ping","id":9}`, "9", ActionRead},
}

// TestWSMessageTableDenyAll runs every type of the message table through a
// policy that refuses everything: each message passes the policy point
// once, for its type's action, and gets error 403 with its id; a hello is
// closed with 1008, after it the connection stays; nothing changes.
func TestWSMessageTableDenyAll(t *testing.T) {
	for name := range wsDenyCases {
		if !slices.ContainsFunc(wsMessageTypes, func(mt wsMessageType) bool { return mt.name == name }) {
			t.Errorf("wsDenyCases[%q]: no such message type", name)
		}
	}
	p := &testPolicy{deny: fmt.Errorf("not for you: %w", ErrForbidden)}
	e := newWS(t, Config{Policy: p}, collab.Config{}, nil)
	seedDoc(t, e.collabEnv)
	before := docState(t, e.collabEnv)
	a := e.dial(t, "d", false)
	a.send(`{"type":"hello","version":1,"clientID":11,"token":"alice"}`)
	a.next("welcome")
	cm := e.dial(t, "d", false) // for commit messages
	cm.send(`{"type":"hello","version":1,"clientID":12,"token":"alice","mode":"commit"}`)
	cm.next("welcome")
	p.take()
	p.denied.Store(true)
	for _, mt := range wsMessageTypes {
		tc, ok := wsDenyCases[mt.name]
		if !ok {
			t.Errorf("message type %q has no case in wsDenyCases", mt.name)
			continue
		}
		c := a
		if mt.name == "commit" {
			c = cm
		}
		if mt.when == wsFirst {
			c = e.dial(t, "d", false)
		}
		c.send(tc.msg)
		m := c.nextSkipping("error")
		if m.Status != 403 || m.Message != "not for you: forbidden" || string(m.ID) != tc.id {
			t.Errorf("%s: %s, want error 403 with id %q", mt.name, m.raw, tc.id)
		}
		if mt.when == wsFirst {
			if code, reason := c.closed(0); code != websocket.StatusPolicyViolation || reason != "request refused" {
				t.Errorf("%s: closed with %d %q, want 1008", mt.name, code, reason)
			}
		}
		var authorized []string
		for _, call := range p.take() {
			if strings.HasPrefix(call, "authorize ") {
				authorized = append(authorized, call)
			}
		}
		want := []string{"authorize d " + string(tc.action) + " alice"}
		if tc.action == ActionEdit && mt.editsWithSteps {
			// Refused edit, steps are asked for suggest (authorizeSteps).
			want = append(want, "authorize d suggest alice")
		}
		if !slices.Equal(authorized, want) {
			t.Errorf("%s: policy calls %q, want %q", mt.name, authorized, want)
		}
	}
	p.denied.Store(false)
	a.send(`{"type":"ping","id":10}`)
	if m := a.nextSkipping("pong"); string(m.ID) != "10" {
		t.Fatalf("pong %s", m.raw)
	}
	if after := docState(t, e.collabEnv); after != before {
		t.Fatalf("the document changed:\nbefore %s\nafter  %s", before, after)
	}
	if n := e.wsConns("d"); n != 2 {
		t.Fatalf("%d connections joined, want 2", n)
	}
	// The refused presence was not stored.
	b := e.dial(t, "d", false)
	b.hello(1, "2")
	if w := b.next("welcome"); len(w.Presence) != 2 || w.Presence[0].Anchor != nil || w.Presence[1].Anchor != nil {
		t.Fatalf("welcome presence %s", w.raw)
	}
}

// TestWSMessageTableDocs: docs/protocol.md lists the client messages of
// the message table, in its order.
func TestWSMessageTableDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Client → server\n")
	if !ok {
		t.Fatal(`docs/protocol.md has no "## Client → server" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	var table []string
	for _, mt := range wsMessageTypes {
		table = append(table, mt.name)
		if !slices.Contains(documented, mt.name) {
			t.Errorf("docs/protocol.md, Client → server: add a row for %q (wsMessageTypes has it)", mt.name)
		}
	}
	for _, name := range documented {
		if !slices.Contains(table, name) {
			t.Errorf("docs/protocol.md, Client → server: %q is no message type of wsMessageTypes: remove its row", name)
		}
	}
	if !t.Failed() && !slices.Equal(documented, table) {
		t.Errorf("docs/protocol.md lists the client messages as %q, wsMessageTypes as %q: use one order", documented, table)
	}
}

// TestWSMessageTableEntries: every type of the message table has an
// action and a handler, and a name that the unknown-type error lists.
func TestWSMessageTableEntries(t *testing.T) {
	var m wsMessage
	err := m.scan(&collabScratch{}, []byte(`{"type":"nope"}`), DefaultMaxDepth, apply.DefaultMaxSteps, wsMessageNames)
	if err == nil {
		t.Fatal("an unknown type was scanned")
	}
	seen := map[string]bool{}
	for _, mt := range wsMessageTypes {
		if mt.action == "" || mt.handle == nil {
			t.Errorf("%q: action %q, handler %v", mt.name, mt.action, mt.handle != nil)
		}
		if seen[mt.name] {
			t.Errorf("%q is declared twice", mt.name)
		}
		seen[mt.name] = true
		if !strings.Contains(err.Error(), mt.name) {
			t.Errorf("the unknown-type error %q does not list %q", err, mt.name)
		}
	}
}
