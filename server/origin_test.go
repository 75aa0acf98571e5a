package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pmauthority/pmauthority/collab"
)

// TestAllowOrigins: by default pages of other origins can neither open a
// WebSocket nor read answers (no CORS headers); Config.AllowOrigins lets
// the matching ones do both, preflights included, and nobody else.
func TestAllowOrigins(t *testing.T) {
	dialWS := func(e *wsEnv, origin string) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.ts.URL, "http")+"/docs/d/ws", &websocket.DialOptions{
			Subprotocols: []string{WSSubprotocol},
			HTTPHeader:   http.Header{"Origin": {origin}},
		})
		if err == nil {
			c.CloseNow()
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		return status, err
	}
	do := func(e *wsEnv, method, path, origin string, h http.Header) *http.Response {
		req := httptest.NewRequest(method, path, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("Origin", origin)
		rec := httptest.NewRecorder()
		e.s.ServeHTTP(rec, req)
		return rec.Result()
	}
	preflight := http.Header{"Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"content-type"}}

	t.Run("default", func(t *testing.T) {
		e := newWS(t, Config{}, collab.Config{}, nil)
		if status, err := dialWS(e, "https://app.example.com"); err == nil || status != http.StatusForbidden {
			t.Errorf("cross-origin WebSocket: %d %v, want 403", status, err)
		}
		if _, err := dialWS(e, e.ts.URL); err != nil {
			t.Errorf("same-origin WebSocket: %v", err)
		}
		if r := do(e, "GET", "/docs/d", "https://app.example.com", nil); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET from another origin: %d, Access-Control-Allow-Origin %q, want 200 without it", r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"))
		}
		if r := do(e, "OPTIONS", "/docs/d/events", "https://app.example.com", preflight); r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("preflight: %d, want 405", r.StatusCode)
		}
	})

	t.Run("allowed", func(t *testing.T) {
		e := newWS(t, Config{AllowOrigins: []string{"*.Example.com", "localhost:3000"}}, collab.Config{}, nil)
		for _, origin := range []string{"https://app.example.com", "http://LOCALHOST:3000"} {
			if _, err := dialWS(e, origin); err != nil {
				t.Errorf("WebSocket from %s: %v", origin, err)
			}
			r := do(e, "OPTIONS", "/docs/d/events", origin, preflight)
			if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != origin ||
				!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") ||
				!strings.EqualFold(r.Header.Get("Access-Control-Allow-Headers"), "content-type") {
				t.Errorf("preflight from %s: %d %v", origin, r.StatusCode, r.Header)
			}
			del := http.Header{"Access-Control-Request-Method": {"DELETE"}}
			if r := do(e, "OPTIONS", "/docs/d", origin, del); r.StatusCode != http.StatusNoContent ||
				!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "DELETE") {
				t.Errorf("DELETE preflight from %s: %d %v", origin, r.StatusCode, r.Header)
			}
			if r := do(e, "GET", "/docs/d", origin, nil); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != origin ||
				r.Header.Get("Vary") != "Origin" {
				t.Errorf("GET from %s: %d %v", origin, r.StatusCode, r.Header)
			}
		}
		for _, origin := range []string{"https://example.org", "https://app.example.com.evil.net", "http://localhost:3001", "null"} {
			if status, err := dialWS(e, origin); err == nil || status != http.StatusForbidden {
				t.Errorf("WebSocket from %s: %d %v, want 403", origin, status, err)
			}
			if r := do(e, "OPTIONS", "/docs/d/events", origin, preflight); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight from %s: %d %v, want 405 without CORS headers", origin, r.StatusCode, r.Header)
			}
		}
	})

	t.Run("bad patterns", func(t *testing.T) {
		for _, p := range []string{"", "[", "https://app.example.com"} {
			if _, err := New(Config{AllowOrigins: []string{p}}); err == nil {
				t.Errorf("pattern %q accepted", p)
			}
		}
	})
}
