package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
)

// expiringPolicy allows everything to principals that expire ttl after
// the first authentication (0: never): asked again, it gives the same
// expiry, as a token's "exp" does.
type expiringPolicy struct {
	ttl   time.Duration
	mu    sync.Mutex
	first time.Time
}

func (p *expiringPolicy) Authenticate(context.Context, Credentials) (Principal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := Principal{ID: "alice"}
	if p.ttl > 0 {
		if p.first.IsZero() {
			p.first = time.Now()
		}
		pr.Expires = p.first.Add(p.ttl)
	}
	return pr, nil
}

func (*expiringPolicy) Authorize(context.Context, Principal, string, Action) error { return nil }

// TestWSPrincipalExpires: a connection whose principal expires, and
// whose token gives no renewed principal, gets an error 401 and is closed
// with 4401; one whose principal never expires stays.
func TestWSPrincipalExpires(t *testing.T) {
	e := newWS(t, Config{Policy: &expiringPolicy{ttl: 100 * time.Millisecond}}, collab.Config{}, nil)
	c := e.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	if m := c.nextSkipping("error"); m.Status != http.StatusUnauthorized {
		t.Errorf("error %s, want status 401", m.raw)
	}
	if code, reason := c.closed(1); code != wsCloseTokenExpired || reason != "token expired" {
		t.Errorf("closed with %d %q, want 4401", code, reason)
	}

	e = newWS(t, Config{Policy: &expiringPolicy{}}, collab.Config{}, nil)
	c = e.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	c.send(`{"type":"ping","id":1}`)
	c.nextSkipping("pong")
}

// tokenPolicy authenticates tokens "ID:DURATION" as ID expiring
// DURATION after the token's first authentication (the same expiry when
// asked again, as a token's "exp"), and refuses others with 401.
type tokenPolicy struct {
	mu  sync.Mutex
	exp map[string]time.Time
}

func (p *tokenPolicy) Authenticate(_ context.Context, c Credentials) (Principal, error) {
	id, ttl, ok := strings.Cut(c.Token, ":")
	d, err := time.ParseDuration(ttl)
	if !ok || err != nil {
		return Principal{}, fmt.Errorf("%w: bad token", ErrUnauthenticated)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	exp, ok := p.exp[c.Token]
	if !ok {
		if p.exp == nil {
			p.exp = map[string]time.Time{}
		}
		exp = time.Now().Add(d)
		p.exp[c.Token] = exp
	}
	return Principal{ID: id, Expires: exp}, nil
}

func (*tokenPolicy) Authorize(_ context.Context, p Principal, _ string, _ Action) error {
	if p.ID == "" {
		return fmt.Errorf("%w: no token", ErrUnauthenticated)
	}
	return nil
}

// TestWSTokenRefresh: a token message replaces the connection's token
// when it is valid and for the same principal (the connection then
// expires with it); otherwise it is refused and the connection goes on.
func TestWSTokenRefresh(t *testing.T) {
	e := newWS(t, Config{Policy: &tokenPolicy{}}, collab.Config{}, nil)
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

// renewingPolicy gives principals that expire after ttl; asked again, it
// renews them (a new expiry) while renew holds, then refuses with 403.
type renewingPolicy struct {
	ttl   time.Duration
	renew atomic.Bool
	asked atomic.Int64
}

func (p *renewingPolicy) Authenticate(context.Context, Credentials) (Principal, error) {
	p.asked.Add(1)
	return Principal{ID: "alice", Expires: time.Now().Add(p.ttl)}, nil
}

func (p *renewingPolicy) Authorize(context.Context, Principal, string, Action) error {
	if p.asked.Load() > 1 && !p.renew.Load() {
		return fmt.Errorf("%w: role withdrawn", ErrForbidden)
	}
	return nil
}

// TestWSPrincipalRenewed: when a connection's principal expires, the
// policy is asked again with the connection's token: a renewed principal
// keeps the connection open, and a refusal (403) is sent as an error and
// closes it with 1008, with nothing of what follows answered.
func TestWSPrincipalRenewed(t *testing.T) {
	p := &renewingPolicy{ttl: 50 * time.Millisecond}
	p.renew.Store(true)
	e := newWS(t, Config{Policy: p}, collab.Config{}, nil)
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":0,"clientID":1,"token":"t"}`)
	c.next("welcome")
	for p.asked.Load() < 3 { // renewed twice, and the connection answers
		time.Sleep(10 * time.Millisecond)
		c.send(`{"type":"ping","id":1}`)
		c.nextSkipping("pong")
	}
	p.renew.Store(false)
	if m := c.nextSkipping("error"); m.Status != http.StatusForbidden {
		t.Errorf("error %s, want status 403", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
		t.Errorf("closed with %d, want 1008", code)
	}
}
