package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestClientMemoryShare: the documents that one client keeps in use with
// long polls or WebSockets hold at most its share of the memory budget
// (collab.Config.MaxClientMemory): its next poll is answered 503 with
// Retry-After naming --max-client-memory, its next WebSocket gets error
// 503 and close 1011, while another client loads and edits a document;
// a closed WebSocket gives its share back.
func TestClientMemoryShare(t *testing.T) {
	st := memstore.New()
	setup := newCollab(t, Config{}, collab.Config{Store: st})
	ids := []string{"a", "b", "c", "d", "e"}
	for _, id := range ids {
		setup.mustPost(t, id, `{"version":0,"clientID":1,"steps":[`+insert(1, strings.Repeat(id, 10_000))+`]}`)
	}
	one := setup.auth.MemoryInUse() / int64(len(ids))
	if err := setup.auth.Close(); err != nil {
		t.Fatal(err)
	}
	e := newWS(t, Config{}, collab.Config{Store: st, Limits: collab.Limits{MaxMemory: 4*one + one/2, MaxClientMemory: one + one/2}}, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const mallory = "10.0.0.66"
	e.poll(mallory, "/docs/a/events?version=1&commentVersion=0", ctx)
	e.waitWaiting(t, "a", 1)
	select {
	case w := <-e.poll(mallory, "/docs/b/events?version=1&commentVersion=0", ctx):
		if w.Code != 503 || !strings.Contains(w.Body.String(), "Limits.MaxClientMemory") {
			t.Fatalf("a second long poll over the client's share: %d %s", w.Code, w.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a second long poll over the client's share waits")
	}
	if w := e.serve(mallory, "GET", "/docs/b", "", nil); w.Code != 503 || w.Header().Get("Retry-After") != "2" {
		t.Fatalf("GET over the client's share: %d (Retry-After %q) %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}

	// The WebSockets' client, 127.0.0.1, holds d; e is over its share.
	ws := e.dial(t, "d", false)
	ws.hello(1, "7")
	ws.next("welcome")
	over := e.dial(t, "e", false)
	over.hello(1, "8")
	if m := over.next("error"); m.Status != 503 || !strings.Contains(m.Message, "Limits.MaxClientMemory") {
		t.Fatalf("a WebSocket over the client's share: %s", m.raw)
	}
	if code, _ := over.closed(0); code != websocket.StatusInternalError {
		t.Fatalf("a WebSocket over the client's share: closed with %d, want 1011", code)
	}

	// Another client works with a, b and c.
	const alice = "10.0.0.7"
	for _, id := range []string{"a", "b", "c"} {
		if status, body := e.requestFrom(t, alice, "GET", "/docs/"+id, ""); status != 200 {
			t.Fatalf("another client's GET of %s: %d %s", id, status, body)
		}
	}
	if status, body := e.requestFrom(t, alice, "POST", "/docs/c/events", `{"version":1,"clientID":2,"steps":[`+insert(1, "!")+`]}`); status != 200 {
		t.Fatalf("another client's POST: %d %s", status, body)
	}

	ws.c.CloseNow()
	waitFor(t, func() bool { return e.wsConns("d") == 0 })
	again := e.dial(t, "e", false)
	again.hello(1, "9")
	again.next("welcome")
}

// TestCreateLimits: POST /docs counts against the client's creations
// (collab.Config.MaxCreatesPerHour: 429 with Retry-After naming
// --max-creates) and its share of the documents
// (collab.Config.MaxClientDocuments: 507 naming --max-client-documents,
// for that client only; a deletion gives its place back).
func TestCreateLimits(t *testing.T) {
	create := func(e *collabEnv, ip, id string) (int, string) {
		w := e.serve(ip, "POST", "/docs", `{"id":"`+id+`"}`, nil)
		if w.Code == 429 && w.Header().Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After: %s", w.Body)
		}
		return w.Code, w.Body.String()
	}
	e := newCollab(t, Config{}, collab.Config{Limits: collab.Limits{MaxCreatesPerHour: 2}})
	for _, id := range []string{"a", "b"} {
		if status, body := create(e, defaultIP, id); status != 201 {
			t.Fatalf("POST /docs %s: %d %s", id, status, body)
		}
	}
	if status, body := create(e, defaultIP, "c"); status != 429 || !strings.Contains(body, "Limits.MaxCreatesPerHour") {
		t.Fatalf("a third POST /docs in the hour: %d %s, want 429 naming Limits.MaxCreatesPerHour", status, body)
	}

	e = newCollab(t, Config{}, collab.Config{Limits: collab.Limits{MaxDocuments: 10, MaxClientDocuments: 2}})
	if status, body := create(e, defaultIP, "a"); status != 201 {
		t.Fatalf("POST /docs a: %d %s", status, body)
	}
	e.mustGet(t, "/docs/b") // created by using it
	if status, body := create(e, defaultIP, "c"); status != 507 || !strings.Contains(body, "Limits.MaxClientDocuments") {
		t.Fatalf("a third document of one client: %d %s, want 507 naming Limits.MaxClientDocuments", status, body)
	}
	if status, body := create(e, "10.0.0.7", "c"); status != 201 {
		t.Fatalf("another client's POST /docs: %d %s", status, body)
	}
	if status, body := e.request(t, "DELETE", "/docs/a", ""); status != 204 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	if status, body := create(e, defaultIP, "d"); status != 201 {
		t.Fatalf("after a deletion of one of its documents: %d %s", status, body)
	}
}
