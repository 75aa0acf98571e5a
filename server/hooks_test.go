package server

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// authorsHook is a collab.Config.BeforeSubmit that records the author of
// every proposal and refuses as its fields say.
type authorsHook struct {
	mu      sync.Mutex
	authors []string
	refuse  error
}

func (h *authorsHook) before(ctx context.Context, p *collab.Proposal) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.authors = append(h.authors, p.Author)
	return h.refuse
}

func (h *authorsHook) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.authors
	h.authors = nil
	return out
}

// TestHooksSeePrincipal: the principal that the policy authenticated is
// the author that collab's hooks see, over HTTP (a bearer token) and over
// WebSocket (the hello's token); anonymous requests have no author.
func TestHooksSeePrincipal(t *testing.T) {
	hook := &authorsHook{}
	e := newWS(t, Config{Policy: &testPolicy{}}, collab.Config{BeforeSubmit: hook.before}, nil)
	post := func(token, body string) int {
		r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code
	}
	if code := post("alice", `{"version":0,"clientID":1,"steps":[`+insert(1, "a")+`]}`); code != 200 {
		t.Fatalf("POST as alice: %d", code)
	}
	if code := post("", `{"version":1,"clientID":3,"steps":[`+insert(1, "b")+`]}`); code != 200 {
		t.Fatalf("anonymous POST: %d", code)
	}
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":2,"clientID":2,"token":"bob"}`)
	c.next("welcome")
	c.send(stepsMsg(1, 2, "2", insert(1, "c")))
	c.nextSkipping("steps")
	c.nextSkipping("ack")
	if got, want := strings.Join(hook.take(), ","), "alice,,bob"; got != want {
		t.Fatalf("authors %q, want %q", got, want)
	}
}

// TestHookRefusal: a BeforeSubmit refusal is answered 403 when it wraps
// ErrForbidden and 422 otherwise, with the hook's message, over HTTP and
// WebSocket; nothing changes.
func TestHookRefusal(t *testing.T) {
	hook := &authorsHook{}
	e := newWS(t, Config{}, collab.Config{BeforeSubmit: hook.before}, nil)
	seedDoc(t, e.collabEnv)
	before := docState(t, e.collabEnv)
	c := e.dial(t, "d", false)
	c.hello(1, "5")
	c.next("welcome")
	for i, tc := range []struct {
		refuse error
		status int
	}{
		{fmt.Errorf("no images here: %w", collab.ErrForbidden), 403},
		{errors.New("too long for this app"), 422},
	} {
		hook.refuse = tc.refuse
		status, body := e.request(t, "POST", "/docs/d/events", `{"version":1,"clientID":1,"steps":[`+insert(1, "x")+`]}`)
		want := `{"error":{"message":` + fmt.Sprintf("%q", tc.refuse.Error()) + `}}`
		if status != tc.status || body != want {
			t.Errorf("POST refused by %v: %d %s, want %d %s", tc.refuse, status, body, tc.status, want)
		}
		c.send(stepsMsg(10+i, 1, "5", insert(1, "y")))
		m := c.nextSkipping("error")
		if m.Status != tc.status || m.Message != tc.refuse.Error() || string(m.ID) != fmt.Sprint(10+i) {
			t.Errorf("WebSocket steps refused by %v: %s", tc.refuse, m.raw)
		}
	}
	if after := docState(t, e.collabEnv); after != before {
		t.Fatalf("the document changed:\nbefore %s\nafter  %s", before, after)
	}
}
