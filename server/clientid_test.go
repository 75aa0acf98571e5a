package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestClientIDOwner: a client id in use on a document by one principal
// is refused for another with 403 naming it, over HTTP and WebSocket (a
// hello, steps), and nothing changes; anonymous clients are told apart
// by address.
func TestClientIDOwner(t *testing.T) {
	e := newWS(t, Config{Policy: &testPolicy{}}, collab.Config{}, nil)
	post := func(token, ip, body string) (int, string) {
		r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = ip + ":40000"
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	refused := func(what string, code int, body, cid string) {
		t.Helper()
		if code != http.StatusForbidden || !strings.Contains(body, "client id "+cid+" is in use") {
			t.Errorf("%s: %d %s, want 403 naming client id %s", what, code, body, cid)
		}
	}
	version := func() string {
		t.Helper()
		body := e.mustGet(t, "/docs/d")
		v, _, _ := strings.Cut(body[strings.Index(body, `"version":`)+10:], ",")
		return v
	}
	if code, body := post("alice", "10.0.0.1", `{"version":0,"clientID":7,"steps":[`+insert(1, "Alice")+`]}`); code != 200 {
		t.Fatalf("alice: %d %s", code, body)
	}
	code, body := post("mallory", "10.0.0.1", `{"version":1,"clientID":7,"steps":[`+insert(1, "MALLORY")+`]}`)
	refused("mallory's POST under alice's client id", code, body, "7")
	code, body = post("", "10.0.0.1", `{"version":1,"clientID":7,"steps":[`+insert(1, "anon")+`]}`)
	refused("an anonymous POST under alice's client id", code, body, "7")
	if v := version(); v != "1" {
		t.Fatalf("version %s after the refusals, want 1", v)
	}

	// A WebSocket holds its hello's client id, steps or not.
	a := e.dial(t, "d", false)
	a.send(`{"type":"hello","version":1,"clientID":8,"token":"alice"}`)
	a.next("welcome")
	code, body = post("mallory", "10.0.0.1", `{"version":1,"clientID":8,"steps":[`+insert(1, "MALLORY")+`]}`)
	refused("a POST under a connected client's id", code, body, "8")
	m := e.dial(t, "d", false)
	m.send(`{"type":"hello","version":1,"clientID":8,"token":"mallory"}`)
	if msg := m.next("error"); msg.Status != http.StatusForbidden || !strings.Contains(msg.Message, "client id 8") {
		t.Errorf("mallory's hello under alice's client id: %s, want error 403 naming it", msg.raw)
	}
	if code, _ := m.closed(0); code != websocket.StatusPolicyViolation {
		t.Errorf("mallory's hello: closed with %d, want 1008", code)
	}
	m = e.dial(t, "d", false)
	m.send(`{"type":"hello","version":1,"clientID":9,"token":"mallory"}`)
	m.nextSkipping("welcome")
	m.send(stepsMsg(5, 1, "7", insert(1, "MALLORY")))
	if msg := m.nextSkipping("error"); msg.Status != http.StatusForbidden || string(msg.ID) != "5" || !strings.Contains(msg.Message, "client id 7") {
		t.Errorf("mallory's steps under alice's client id: %s, want error 403 for id 5 naming it", msg.raw)
	}
	if v := version(); v != "1" {
		t.Fatalf("version %s after the refusals, want 1", v)
	}
	// Alice goes on under both; mallory under hers.
	a.send(stepsMsg(1, 1, "8", insert(1, "x")))
	a.nextSkipping("steps")
	a.nextSkipping("ack")
	if code, body := post("alice", "10.0.0.2", `{"version":2,"clientID":7,"steps":[`+insert(1, "y")+`]}`); code != 200 {
		t.Errorf("alice from another address: %d %s", code, body)
	}
	m.send(stepsMsg(6, 3, "9", insert(1, "z")))
	for {
		msg, err := m.read(5 * time.Second)
		if err != nil || msg.Type == "error" {
			t.Fatalf("mallory's steps under her client id: %s %v", msg.raw, err)
		}
		if msg.Type == "ack" {
			break
		}
	}

	// Anonymous clients by address.
	if code, body := post("", "10.0.0.1", `{"version":4,"clientID":"anon","steps":[`+insert(1, "a")+`]}`); code != 200 {
		t.Fatalf("anonymous: %d %s", code, body)
	}
	code, body = post("", "10.0.0.2", `{"version":5,"clientID":"anon","steps":[`+insert(1, "b")+`]}`)
	refused("another address under an anonymous client's id", code, body, `\"anon\"`)
	if code, body := post("", "10.0.0.1", `{"version":5,"clientID":"anon","steps":[`+insert(1, "b")+`]}`); code != 200 {
		t.Errorf("the same address again: %d %s", code, body)
	}
}

// TestPresenceName: others see an authenticated principal by its token's
// name, whatever name its hello chose; an anonymous client by the name
// it chose.
func TestPresenceName(t *testing.T) {
	e := newWS(t, Config{Policy: &testPolicy{}}, collab.Config{}, nil)
	watcher := e.dial(t, "d", false)
	watcher.send(`{"type":"hello","version":null,"clientID":1,"name":"Watcher"}`)
	watcher.clientID = "1"
	watcher.next("snapshot")
	mallory := e.dial(t, "d", false)
	mallory.send(`{"type":"hello","version":null,"clientID":2,"name":"Alice","token":"mallory"}`)
	mallory.next("snapshot")
	if _, p := watcher.presenceOf("2"); p.Name == nil || *p.Name != "MALLORY" {
		t.Errorf("an authenticated client that calls itself Alice is shown as %s, want its token's name MALLORY", nameOf(p))
	}
	anon := e.dial(t, "d", false)
	anon.send(`{"type":"hello","version":null,"clientID":3,"name":"Anne"}`)
	anon.next("snapshot")
	if _, p := watcher.presenceOf("3"); p.Name == nil || *p.Name != "Anne" {
		t.Errorf("an anonymous client is shown as %s, want the name it chose", nameOf(p))
	}
}

// nameOf returns the name of a presence entry, quoted, or null.
func nameOf(p wsClientEntry) string {
	if p.Name == nil {
		return "null"
	}
	return strconv.Quote(*p.Name)
}

// TestPrincipalName: the presence name of a principal is its name, else
// its id, cut to 64 UTF-16 units between characters.
func TestPrincipalName(t *testing.T) {
	long := strings.Repeat("a", 63) + "😀"
	for _, tc := range []struct {
		p    Principal
		want string
	}{
		{Principal{ID: "alice", Name: "Alice A."}, `"Alice A."`},
		{Principal{ID: "alice"}, `"alice"`},
		{Principal{ID: "x", Name: long}, `"` + strings.Repeat("a", 63) + `"`},
		{Principal{ID: strings.Repeat("é", 70)}, `"` + strings.Repeat("é", 64) + `"`},
		{Principal{ID: "q", Name: `"<b>"`}, `"\"<b>\""`},
	} {
		if got := string(principalName(tc.p)); got != tc.want {
			t.Errorf("principalName(%+v) = %s, want %s", tc.p, got, tc.want)
		}
	}
}

// TestClientIDOwnerAcrossNodes: a client id that a WebSocket on one node
// holds is held on the other nodes that serve the document over
// WebSockets too, once they heard of it (its presence), until it leaves.
func TestClientIDOwnerAcrossNodes(t *testing.T) {
	bus := new(testutil.Bus)
	shared := memstore.New()
	var es []*wsEnv
	for range 2 {
		es = append(es, newWS(t, Config{Policy: &testPolicy{}}, collab.Config{Store: bus.Node(shared), PeerRefresh: 100 * time.Millisecond}, nil))
	}
	es[0].post(t, "d", 0, "7", insert(1, "abc"))
	alice := es[0].dial(t, "d", false)
	alice.send(`{"type":"hello","version":1,"clientID":11,"token":"alice"}`)
	alice.clientID = "11"
	alice.next("welcome")
	mallory := es[1].dial(t, "d", false)
	mallory.send(`{"type":"hello","version":1,"clientID":12,"token":"mallory"}`)
	mallory.clientID = "12"
	w := mallory.next("welcome")
	mallory.knows(w, "11")
	post := func(cid string) (int, string) {
		r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(`{"version":1,"clientID":`+cid+`,"steps":[`+insert(1, "M")+`]}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer mallory")
		rec := httptest.NewRecorder()
		es[1].s.ServeHTTP(rec, r)
		return rec.Code, rec.Body.String()
	}
	if code, body := post("11"); code != http.StatusForbidden || !strings.Contains(body, "client id 11") {
		t.Errorf("mallory's POST on the other node under alice's client id: %d %s, want 403", code, body)
	}
	mallory.send(stepsMsg(1, 1, "11", insert(1, "M")))
	if m := mallory.nextSkipping("error"); m.Status != http.StatusForbidden || string(m.ID) != "1" {
		t.Errorf("mallory's steps on the other node under alice's client id: %s, want error 403", m.raw)
	}
	// Alice leaves: the id is free on the other node once it heard so.
	alice.c.Close(websocket.StatusNormalClosure, "")
	for {
		m := mallory.nextSkipping("presence")
		if slices.ContainsFunc(m.Left, func(id json.RawMessage) bool { return string(id) == "11" }) {
			break
		}
	}
	if code, body := post("11"); code != 200 {
		t.Errorf("mallory's POST under a client id that left: %d %s", code, body)
	}
}
