package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
)

// expiringPolicy allows everything to principals that expire after ttl
// (0: never).
type expiringPolicy struct{ ttl time.Duration }

func (p expiringPolicy) Authenticate(context.Context, Credentials) (Principal, error) {
	pr := Principal{ID: "alice"}
	if p.ttl > 0 {
		pr.Expires = time.Now().Add(p.ttl)
	}
	return pr, nil
}

func (expiringPolicy) Authorize(context.Context, Principal, string, Action) error { return nil }

// TestWSPrincipalExpires: a connection whose principal expires gets an
// error 401 and is closed with 4401; one whose principal never expires
// stays.
func TestWSPrincipalExpires(t *testing.T) {
	e := newWS(t, Config{Policy: expiringPolicy{ttl: 100 * time.Millisecond}}, collab.Config{}, nil)
	c := e.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	if m := c.nextSkipping("error"); m.Status != http.StatusUnauthorized {
		t.Errorf("error %s, want status 401", m.raw)
	}
	if code, reason := c.closed(1); code != wsCloseTokenExpired || reason != "token expired" {
		t.Errorf("closed with %d %q, want 4401", code, reason)
	}

	e = newWS(t, Config{Policy: expiringPolicy{}}, collab.Config{}, nil)
	c = e.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	c.send(`{"type":"ping","id":1}`)
	c.nextSkipping("pong")
}

// tokenPolicy authenticates tokens "ID:DURATION" as ID expiring after
// DURATION, and refuses others with 401.
type tokenPolicy struct{}

func (tokenPolicy) Authenticate(_ context.Context, c Credentials) (Principal, error) {
	id, ttl, ok := strings.Cut(c.Token, ":")
	d, err := time.ParseDuration(ttl)
	if !ok || err != nil {
		return Principal{}, fmt.Errorf("%w: bad token", ErrUnauthenticated)
	}
	return Principal{ID: id, Expires: time.Now().Add(d)}, nil
}

func (tokenPolicy) Authorize(_ context.Context, p Principal, _ string, _ Action) error {
	if p.ID == "" {
		return fmt.Errorf("%w: no token", ErrUnauthenticated)
	}
	return nil
}

// TestWSTokenRefresh: a token message replaces the connection's token
// when it is valid and for the same principal (the connection then
// expires with it); otherwise it is refused and the connection goes on.
func TestWSTokenRefresh(t *testing.T) {
	e := newWS(t, Config{Policy: tokenPolicy{}}, collab.Config{}, nil)
	hello := func(c *wsClient, token string) {
		c.send(`{"type":"hello","version":0,"clientID":1,"token":"` + token + `"}`)
		c.next("welcome")
	}
	c := e.dial(t, "d", false)
	c.send(`{"type":"token","token":"alice:1h"}`)
	if m := c.next("error"); m.Status != http.StatusBadRequest {
		t.Errorf("token before hello: %s", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
		t.Errorf("token before hello: closed with %d, want 1008", code)
	}

	c = e.dial(t, "d", false)
	hello(c, "alice:1h")
	for _, tc := range []struct {
		msg    string
		status int
	}{
		{`{"type":"token","id":1}`, http.StatusBadRequest},
		{`{"type":"token","id":2,"token":7}`, http.StatusBadRequest},
		{`{"type":"token","id":3,"token":"garbage"}`, http.StatusUnauthorized},
		{`{"type":"token","id":4,"token":"bob:1h"}`, http.StatusForbidden},
	} {
		c.send(tc.msg)
		if m := c.nextSkipping("error"); m.Status != tc.status || string(m.ID) == "" {
			t.Errorf("%s: %s, want error %d with its id", tc.msg, m.raw, tc.status)
		}
	}
	// Refused tokens leave the connection as it was.
	c.send(`{"type":"ping","id":5}`)
	c.nextSkipping("pong")
	// Accepted: the connection now expires with the new token.
	c.send(`{"type":"token","id":6,"token":"alice:50ms"}`)
	if m := c.nextSkipping("token"); string(m.ID) != "6" {
		t.Errorf("answer %s, want {\"type\":\"token\",\"id\":6}", m.raw)
	}
	if m := c.nextSkipping("error"); m.Status != http.StatusUnauthorized {
		t.Errorf("after the new token's expiry: %s, want error 401", m.raw)
	}
	if code, _ := c.closed(1); code != wsCloseTokenExpired {
		t.Errorf("closed with %d, want 4401", code)
	}
}
