package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// roleHook is an app's webhook whose answer for every token is role
// (401 when role is "401"), with ttl, counting its calls and the most
// in flight at once; each call takes hold.
type roleHook struct {
	*httptest.Server
	role          atomic.Value // string
	calls, flying atomic.Int64
	mu            sync.Mutex
	maxFlying     int64
	ttl           float64
	hold          time.Duration
}

func newRoleHook(t *testing.T, role string, ttl float64, hold time.Duration) *roleHook {
	h := &roleHook{ttl: ttl, hold: hold}
	h.role.Store(role)
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		n := h.flying.Add(1)
		defer h.flying.Add(-1)
		h.mu.Lock()
		h.maxFlying = max(h.maxFlying, n)
		h.mu.Unlock()
		if h.hold > 0 {
			time.Sleep(h.hold)
		}
		role := h.role.Load().(string)
		if role == "401" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"sub": "alice", "role": role, "ttl": h.ttl})
	}))
	t.Cleanup(h.Close)
	return h
}

// TestWebhookWebSocketExpiry: a WebSocket's principal expires with the
// webhook answer's ttl, and the webhook is asked again then. The
// reproduction of issue 21: the webhook switches the user to role none
// after the ttl, and a step sent later is refused (error 403, close 1008)
// instead of acknowledged; a 401 then closes with 4401; the same role
// again keeps the connection, which goes on editing.
func TestWebhookWebSocketExpiry(t *testing.T) {
	const ttl = 0.3 // seconds
	for _, tc := range []struct {
		then   string // the webhook's role after the hello
		status int    // the error after the ttl (0: none, the step is acknowledged)
		close  websocket.StatusCode
	}{
		{"none", http.StatusForbidden, websocket.StatusPolicyViolation},
		{"401", http.StatusUnauthorized, 4401},
		{"edit", 0, 0},
	} {
		t.Run(tc.then, func(t *testing.T) {
			h := newRoleHook(t, "edit", ttl, 0)
			e := newEnv(t, Config{Webhook: h.URL, Now: time.Now}, false)
			ts := httptest.NewServer(e.srv)
			defer ts.Close()
			c := dialWS(t, ts, "d")
			c.send(`{"type":"hello","version":1,"commentVersion":1,"clientID":9,"token":"tok"}`)
			if _, err := c.next("welcome"); err != nil {
				t.Fatal(err)
			}
			asked := h.calls.Load()
			h.role.Store(tc.then)
			time.Sleep(time.Duration(ttl*1.5*float64(time.Second)) + 100*time.Millisecond)
			before := e.state(t)
			c.send(`{"type":"steps","id":1,"version":1,"clientID":9,"steps":[` + insertStep(1, "x") + `]}`)
			if tc.status == 0 {
				if m, err := c.next("ack"); err != nil {
					t.Fatalf("step after the ttl, role edit again: %+v, %v; want ack", m, err)
				}
				if h.calls.Load() == asked {
					t.Error("the webhook was not asked again after the ttl")
				}
				return
			}
			for {
				m, err := c.next("")
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					if ce.Code != tc.close {
						t.Errorf("closed with %d %q, want %d", ce.Code, ce.Reason, tc.close)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				switch m.Type {
				case "ack", "steps":
					t.Fatalf("after the ttl, with the webhook answering %s: %s", tc.then, m.raw)
				case "error":
					if m.Status != tc.status {
						t.Errorf("error %s, want status %d", m.raw, tc.status)
					}
				}
			}
			if e.state(t) != before {
				t.Error("the step changed the document")
			}
		})
	}
}

// TestWebhookRefusalsShared: 200 concurrent requests with the same
// unknown token make one webhook call, and its refusal (401) is cached
// for WebhookRefusalTTL.
func TestWebhookRefusalsShared(t *testing.T) {
	h := newRoleHook(t, "401", 0, 50*time.Millisecond)
	clk := &clock{now: testNow}
	e := newEnv(t, Config{Webhook: h.URL, Now: clk.Now}, false)
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for range 200 {
		wg.Go(func() {
			if w := e.do("GET", "/docs/d", "", "unknown"); w.Code != http.StatusUnauthorized {
				wrong.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d of 200 requests not answered 401", n)
	}
	if n := h.calls.Load(); n != 1 {
		t.Errorf("%d webhook calls for 200 concurrent requests with one unknown token, want 1", n)
	}
	for range 10 {
		e.do("GET", "/docs/other", "", "unknown")
	}
	if n := h.calls.Load(); n != 1 {
		t.Errorf("%d webhook calls after 10 more requests within the refusal ttl, want 1", n)
	}
	clk.advance(DefaultWebhookRefusalTTL)
	if w := e.do("GET", "/docs/d", "", "unknown"); w.Code != http.StatusUnauthorized || h.calls.Load() != 2 {
		t.Errorf("after the refusal ttl: %d, %d calls; want 401 and a second call", w.Code, h.calls.Load())
	}
}

// TestWebhookMaxCalls: at most WebhookMaxCalls webhook calls are in
// flight; a request that finds none free within WebhookWait is answered
// 503 with Retry-After.
func TestWebhookMaxCalls(t *testing.T) {
	h := newRoleHook(t, "401", 0, 300*time.Millisecond)
	e := newEnv(t, Config{Webhook: h.URL, WebhookMaxCalls: 8, WebhookWait: 50 * time.Millisecond, WebhookTimeout: 2 * time.Second}, false)
	var wg sync.WaitGroup
	var refused, busy, other atomic.Int64
	for i := range 200 {
		wg.Go(func() {
			w := e.do("GET", "/docs/d", "", "unknown-"+strconv.Itoa(i))
			switch {
			case w.Code == http.StatusUnauthorized:
				refused.Add(1)
			case w.Code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") != "":
				busy.Add(1)
			default:
				other.Add(1)
				t.Logf("%d: %s", w.Code, w.Body)
			}
		})
	}
	wg.Wait()
	h.mu.Lock()
	most := h.maxFlying
	h.mu.Unlock()
	t.Logf("200 requests with distinct unknown tokens: %d webhook calls, at most %d at once; %d answered 401, %d 503",
		h.calls.Load(), most, refused.Load(), busy.Load())
	if most > 8 {
		t.Errorf("%d webhook calls at once, want at most 8", most)
	}
	if busy.Load() == 0 || other.Load() != 0 {
		t.Errorf("%d answered 503 with Retry-After, %d otherwise; want some 503 and only 401 or 503", busy.Load(), other.Load())
	}
}
