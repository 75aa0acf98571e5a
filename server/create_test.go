package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
)

// noCreate allows everything but ActionCreate.
type noCreate struct{}

func (noCreate) Authenticate(context.Context, Credentials) (Principal, error) {
	return Principal{ID: "reader"}, nil
}

func (noCreate) Authorize(_ context.Context, _ Principal, _ string, a Action) error {
	if a == ActionCreate {
		return fmt.Errorf("%w: no creating", ErrForbidden)
	}
	return nil
}

// TestCreateAuthorized: the routes that create a document by using it
// are authorized for ActionCreate when it does not exist, and nothing
// is created on a refusal; an existing document needs no ActionCreate.
func TestCreateAuthorized(t *testing.T) {
	e := newWS(t, Config{Policy: noCreate{}}, collab.Config{}, nil)
	seedDoc(t, e.collabEnv)
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "/docs/new", ""},
		{"GET", "/docs/new/events?version=0&commentVersion=0", ""},
		{"POST", "/docs/new/events", `{"version":0,"clientID":1,"steps":[]}`},
	} {
		if code, body := e.request(t, tc.method, tc.target, tc.body); code != http.StatusForbidden {
			t.Errorf("%s %s: %d %s, want 403", tc.method, tc.target, code, body)
		}
	}
	c := e.dial(t, "new", false)
	c.hello(0, "1")
	if m := c.next("error"); m.Status != http.StatusForbidden {
		t.Errorf("hello: %s, want error 403", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
		t.Errorf("hello: closed with %d, want 1008", code)
	}
	if ok, err := e.auth.Exists(context.Background(), "new"); ok || err != nil {
		t.Errorf("refused, yet the document exists (%v)", err)
	}
	if code, body := e.request(t, "GET", "/docs/d", ""); code != http.StatusOK {
		t.Errorf("GET /docs/d: %d %s", code, body)
	}
	c = e.dial(t, "d", false)
	c.hello(0, "2") // seedDoc's client id 1 is another address's
	c.next("welcome")
}
