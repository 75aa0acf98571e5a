package server

import (
	"context"
	"net/http"
	"testing"
	"time"

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
