package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/server"
)

// hookReceiver is an app's webhook: tokens "alice-…" are alice, with the
// role the token names after the dash on every document but "secret";
// "bad" is refused with 401; "down" answers 500; "slow" does not answer
// in time.
type hookReceiver struct {
	*httptest.Server
	ttl     float64
	release chan struct{}

	mu    sync.Mutex
	calls []hookCall
}

type hookCall struct{ Token, Doc, Action string }

func newHookReceiver(t *testing.T, ttl float64) *hookReceiver {
	h := &hookReceiver{ttl: ttl, release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c hookCall
		if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&c) != nil {
			http.Error(w, "bad request", 400)
			return
		}
		h.mu.Lock()
		h.calls = append(h.calls, c)
		h.mu.Unlock()
		switch c.Token {
		case "bad":
			w.WriteHeader(http.StatusUnauthorized)
			return
		case "down":
			w.WriteHeader(http.StatusInternalServerError)
			return
		case "slow":
			select {
			case <-h.release:
			case <-r.Context().Done():
			}
			return
		case "nosub":
			w.Write([]byte(`{"role":"admin"}`))
			return
		}
		role := c.Token[len("alice-"):]
		if c.Doc == "secret" {
			role = ""
		}
		json.NewEncoder(w).Encode(map[string]any{"sub": "alice", "name": "Alice", "role": role, "ttl": h.ttl})
	}))
	t.Cleanup(func() { close(h.release); h.Close() })
	return h
}

// call returns call i (from the end when negative).
func (h *hookReceiver) call(i int) hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i < 0 {
		i += len(h.calls)
	}
	return h.calls[i]
}

func (h *hookReceiver) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

// TestWebhook: the webhook's answers decide, are cached for their ttl,
// and a failing webhook denies.
func TestWebhook(t *testing.T) {
	h := newHookReceiver(t, 60)
	clk := &clock{now: testNow}
	e := newEnv(t, Config{Webhook: h.URL, WebhookTimeout: 200 * time.Millisecond, Now: clk.Now}, false)
	steps := `{"version":1,"clientID":7,"steps":[` + insertStep(1, "x") + `]}`
	tests := []struct {
		token, method, target, body string
		want                        int
	}{
		{"", "GET", "/docs/d", "", 401},
		{"bad", "GET", "/docs/d", "", 401},
		{"nosub", "GET", "/docs/d", "", 401},
		{"down", "GET", "/docs/d", "", 403},
		{"slow", "GET", "/docs/d", "", 403},
		{"alice-read", "GET", "/docs/d", "", 200},
		{"alice-read", "GET", "/docs/secret", "", 403},
		{"alice-read", "POST", "/docs/d/events", commentOnly, 403},
		{"alice-comment", "POST", "/docs/d/events", commentOnly, 200},
		{"alice-comment", "POST", "/docs/d/events", steps, 403},
		{"alice-edit", "POST", "/docs/d/events", steps, 200},
		{"alice-none", "GET", "/docs/d", "", 403},
		{"alice-owner", "GET", "/docs/d", "", 403}, // an unknown role is a failure
		{"down", "GET", "/healthz", "", 200},
	}
	for _, tt := range tests {
		if w := e.do(tt.method, tt.target, tt.body, tt.token); w.Code != tt.want {
			t.Errorf("%s %s with %q: %d, want %d: %s", tt.method, tt.target, tt.token, w.Code, tt.want, w.Body)
		}
	}
	if first := h.call(0); first != (hookCall{"bad", "d", ""}) {
		t.Errorf("first call %+v", first)
	}

	// Cached for the ttl: the same token and document ask no more.
	n := h.count()
	for range 3 {
		if w := e.do("GET", "/docs/d", "", "alice-read"); w.Code != 200 {
			t.Fatal(w.Code)
		}
	}
	if h.count() != n {
		t.Errorf("%d webhook calls for cached answers", h.count()-n)
	}
	clk.advance(61 * time.Second)
	if w := e.do("GET", "/docs/d", "", "alice-read"); w.Code != 200 {
		t.Fatal(w.Code)
	}
	if h.count() != n+1 {
		t.Errorf("%d webhook calls after the ttl, want 1", h.count()-n)
	}

	// The principal is the webhook's sub.
	p, err := e.policy.Authenticate(t.Context(), server.Credentials{Token: "alice-edit"})
	if err != nil || p.ID != "alice" || p.Name != "Alice" {
		t.Errorf("principal %+v, %v", p, err)
	}
	if err := e.policy.Authorize(t.Context(), p, "secret", server.ActionRead); !errors.Is(err, server.ErrForbidden) {
		t.Errorf("secret: %v", err)
	}
	if err := e.policy.Authorize(t.Context(), p, "x", server.ActionEdit); err != nil {
		t.Errorf("x: %v", err)
	}
	if last := h.call(-1); last != (hookCall{"alice-edit", "x", "edit"}) {
		t.Errorf("last call %+v", last)
	}
}

// TestWebhookBounded: the answers' cache keeps at most CacheSize, and a
// ttl above WebhookMaxTTL is cut to it.
func TestWebhookBounded(t *testing.T) {
	h := newHookReceiver(t, 1e12)
	clk := &clock{now: testNow}
	p, err := New(Config{Webhook: h.URL, CacheSize: 4, WebhookMaxTTL: time.Minute, Now: clk.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := p.Authenticate(t.Context(), server.Credentials{Token: "alice-read"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := p.Authorize(t.Context(), pr, "doc"+string(rune('a'+i)), server.ActionRead); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.hook.answers.len(); n != 4 {
		t.Errorf("%d cached answers, want 4", n)
	}
	n := h.count()
	p.Authorize(t.Context(), pr, "docj", server.ActionRead)
	clk.advance(61 * time.Second)
	p.Authorize(t.Context(), pr, "docj", server.ActionRead)
	if h.count() != n+1 {
		t.Errorf("%d calls, want 1 (cached, then past WebhookMaxTTL)", h.count()-n)
	}
}
