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

// dialFrom opens a WebSocket to document id as the client at ip (by
// X-Forwarded-For, with Config.TrustProxy); it returns the HTTP status of
// a refused upgrade and its Retry-After, and the connection otherwise.
func (e *wsEnv) dialFrom(t *testing.T, ip, id string) (*websocket.Conn, int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opts := &websocket.DialOptions{Subprotocols: []string{WSSubprotocol}, HTTPHeader: http.Header{"X-Forwarded-For": {ip}}}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.ts.URL, "http")+"/docs/"+id+"/ws", opts)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode, resp.Header.Get("Retry-After")
	}
	t.Cleanup(func() { c.CloseNow() })
	return c, 101, ""
}

// connTotal returns the connections the server counts.
func (s *Server) connTotal() int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return s.conns.total
}

// TestConnLimits: WebSockets and waiting long polls count against
// Limits.MaxClientConns per client and Limits.MaxConns in all; one over
// is refused with 429 and Retry-After, before any upgrade or wait, and a
// connection that ends gives its place back.
func TestConnLimits(t *testing.T) {
	e := newWS(t, Config{TrustProxy: true, Limits: Limits{MaxClientConns: 2, MaxConns: 3}, PollTimeout: 5 * time.Second}, collab.Config{}, nil)
	a1, _, _ := e.dialFrom(t, "10.0.0.1", "d")
	e.dialFrom(t, "10.0.0.1", "d")
	if _, status, retry := e.dialFrom(t, "10.0.0.1", "d"); status != 429 || retry != "1" {
		t.Fatalf("third WebSocket of a client: %d (Retry-After %q), want 429 with Retry-After 1", status, retry)
	}
	poll := func(ip string) *http.Response {
		r, _ := http.NewRequest("GET", e.ts.URL+"/docs/d/events?version=0&commentVersion=0", nil)
		r.Header.Set("X-Forwarded-For", ip)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Another client's long poll waits (the total is then 3) …
	waiting := make(chan *http.Response, 1)
	go func() { waiting <- poll("10.0.0.2") }()
	waitFor(t, func() bool { return e.s.connTotal() == 3 })
	// … and a fourth connection of anyone is over the total, here of
	// 10.0.0.2, under its own limit (2) and a user already, so that the
	// refusals change no user count, which would answer the waiting poll
	// and free a place.
	if _, status, _ := e.dialFrom(t, "10.0.0.2", "d"); status != 429 {
		t.Fatalf("a connection over the total: %d, want 429", status)
	}
	if resp := poll("10.0.0.2"); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a long poll over the total: %d, want 429 with Retry-After", resp.StatusCode)
	}
	// A new user answers the waiting poll (as in the demo); a closed
	// WebSocket gives its place back too.
	r, _ := http.NewRequest("GET", e.ts.URL+"/docs/d", nil)
	r.Header.Set("X-Forwarded-For", "10.0.0.9")
	if resp, err := http.DefaultClient.Do(r); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if resp := <-waiting; resp.StatusCode != 200 {
		t.Fatalf("the waiting poll: %d", resp.StatusCode)
	}
	a1.Close(websocket.StatusNormalClosure, "")
	waitFor(t, func() bool { return e.s.connTotal() == 1 })
	if _, status, _ := e.dialFrom(t, "10.0.0.1", "d"); status != 101 {
		t.Fatalf("after one closed: %d, want 101", status)
	}
}

// TestWSMessageRate: a WebSocket client sending faster than
// Limits.MaxWSMessages per second (beyond a burst of twice as many) gets
// error 429, naming the limit as Config.SettingName does, and is closed
// with 4029.
func TestWSMessageRate(t *testing.T) {
	e := newWS(t, Config{Limits: Limits{MaxWSMessages: 1}, SettingName: flagNames}, collab.Config{}, nil)
	e.s.now = e.clock.Now
	c := e.dial(t, "d", false)
	for i := range 12 {
		c.send(`{"type":"ping","id":` + fmt.Sprint(i) + `}`)
	}
	for i := range 2 { // the burst
		if m := c.next("pong"); string(m.ID) != fmt.Sprint(i) {
			t.Fatalf("pong %s, want id %d", m.raw, i)
		}
	}
	if m := c.next("error"); m.Status != 429 || !strings.Contains(m.Message, "(Limits.MaxWSMessages, serve --max-ws-messages)") {
		t.Fatalf("error %s, want 429 naming Limits.MaxWSMessages and serve --max-ws-messages", m.raw)
	}
	if code, _ := c.closed(0); code != wsCloseTooManyRequests {
		t.Fatalf("closed with %d, want 4029", code)
	}
}

// TestSubmissionRate: a client may submit Limits.MaxSubmissions times per
// second (twice as many at once), over HTTP and WebSocket together; over
// it, a POST gets 429 with Retry-After and a steps message error 429, the
// connection staying open; other clients are not concerned.
func TestSubmissionRate(t *testing.T) {
	e := newWS(t, Config{Limits: Limits{MaxSubmissions: 1}}, collab.Config{}, nil)
	e.s.now = e.clock.Now
	ip := "127.0.0.1" // the WebSocket's address
	post := func(ip string, version int) (int, string) {
		// Each address under a client id of its own.
		w := e.serve(ip, "POST", "/docs/d/events", fmt.Sprintf(`{"version":%d,"clientID":%q,"steps":[%s]}`, version, ip, insert(1, "a")), nil)
		return w.Code, w.Header().Get("Retry-After")
	}
	if status, _ := post(ip, 0); status != 200 {
		t.Fatalf("first POST: %d", status)
	}
	c := e.dial(t, "d", false)
	c.hello(1, "2")
	c.next("welcome")
	c.send(stepsMsg(1, 1, "2", insert(1, "b")))
	c.nextSkipping("steps")
	c.nextSkipping("ack")
	if status, retry := post(ip, 2); status != 429 || retry != "1" {
		t.Fatalf("third submission: %d, Retry-After %q; want 429, 1", status, retry)
	}
	c.send(stepsMsg(2, 2, "2", insert(1, "c")))
	if m := c.nextSkipping("error"); m.Status != 429 || string(m.ID) != "2" || !strings.Contains(m.Message, "Limits.MaxSubmissions") {
		t.Fatalf("error %s, want 429 for submission 2 naming Limits.MaxSubmissions", m.raw)
	}
	if status, _ := post("10.0.0.9", 2); status != 200 {
		t.Fatalf("another client: %d", status)
	}
	e.clock.Advance(time.Second)
	c.send(stepsMsg(3, 3, "2", insert(1, "d")))
	// The steps of 10.0.0.9 (version 3) and ours (4), in one push or two.
	for v := int64(0); v < 4; {
		v = c.nextSkipping("steps").Version
	}
	if m := c.nextSkipping("ack"); string(m.ID) != "3" {
		t.Fatalf("after a second: %s, want the ack of 3", m.raw)
	}
}

// TestPresenceThrottle: presence beyond Limits.MaxPresence per second is
// coalesced: the server stores the first selection at once, then only the
// latest, once the rate allows it, not each one, and it is no error.
func TestPresenceThrottle(t *testing.T) {
	e := newWS(t, Config{Limits: Limits{MaxPresence: 1}}, collab.Config{PresenceEvery: time.Millisecond}, nil)
	e.s.now = e.clock.Now
	e.post(t, "d", 0, "7", insert(1, "abcdefgh"))
	a, b := e.joinedPair(t, 1)
	a.next("presence") // b joined
	for pos := 1; pos <= 6; pos++ {
		b.send(fmt.Sprintf(`{"type":"presence","version":1,"anchor":%d,"head":%d}`, pos, pos))
	}
	// The pong comes after the presence messages are handled: the server
	// has stored the first selection, the latest waits.
	b.send(`{"type":"ping","id":1}`)
	if m := b.nextSkipping("pong"); string(m.ID) != "1" {
		t.Fatalf("b got %s", m.raw)
	}
	if anchor := e.selectionSeen(t, `"b"`); anchor != 1 {
		t.Fatalf("b's stored selection is at %d, want 1 (the first; the others coalesced)", anchor)
	}
	var seen []int
	for len(seen) == 0 || seen[len(seen)-1] != 6 {
		_, p := a.presenceOf(`"b"`)
		seen = append(seen, ptrInt(p.Anchor))
	}
	if fmt.Sprint(seen) != "[1 6]" {
		t.Fatalf("a saw b at %v, want [1 6] (the first, then the latest)", seen)
	}
}

// selectionSeen returns the anchor of the selection of clientID (JSON)
// that a new WebSocket of document d is welcomed with (-2 when it has
// no entry, -1 when hidden).
func (e *wsEnv) selectionSeen(t *testing.T, clientID string) int {
	t.Helper()
	c := e.dial(t, "d", false)
	defer c.c.CloseNow()
	c.hello(1, "99")
	for _, p := range c.next("welcome").Presence {
		if string(p.ClientID) == clientID {
			if p.Anchor == nil {
				return -1
			}
			return *p.Anchor
		}
	}
	return -2
}

// TestDocumentLimits: over HTTP and WebSocket, a client creating more
// documents than collab.Config.MaxCreatesPerHour gets 429 with
// Retry-After (WebSocket: error 429, close 4029), and creations beyond
// collab.Config.MaxDocuments get 507 (WebSocket: error 507, close 1008).
func TestDocumentLimits(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{Limits: collab.Limits{MaxCreatesPerHour: 2, MaxDocuments: 5, MaxClientDocuments: 5}}, nil)
	for _, id := range []string{"a", "b"} {
		e.mustGet(t, "/docs/"+id)
	}
	w := e.serve(defaultIP, "GET", "/docs/c", "", nil)
	if w.Code != 429 || !strings.Contains(w.Body.String(), "Limits.MaxCreatesPerHour") || w.Header().Get("Retry-After") != "1800" {
		t.Fatalf("third new document: %d %s (Retry-After %q), want 429 naming Limits.MaxCreatesPerHour, Retry-After 1800 (half an hour)",
			w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	hello := func(id string) *wsClient {
		c := e.dial(t, id, false)
		c.hello(0, "1")
		return c
	}
	for _, id := range []string{"c", "d"} { // another client: 127.0.0.1
		hello(id).next("welcome")
	}
	c := hello("e")
	if m := c.next("error"); m.Status != 429 {
		t.Fatalf("error %s, want 429", m.raw)
	}
	if code, _ := c.closed(0); code != wsCloseTooManyRequests {
		t.Fatalf("closed with %d, want 4029", code)
	}
	if status, body := e.requestFrom(t, "10.0.0.6", "GET", "/docs/e", ""); status != 200 {
		t.Fatalf("the fifth document: %d %s", status, body)
	}
	if w := e.serve("10.0.0.7", "GET", "/docs/f", "", nil); w.Code != 507 || !strings.Contains(w.Body.String(), "Limits.MaxDocuments") {
		t.Fatalf("a sixth document: %d %s, want 507 naming Limits.MaxDocuments", w.Code, w.Body)
	}
	c = hello("f")
	if m := c.next("error"); m.Status != 507 {
		t.Fatalf("error %s, want 507", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %d, want 1008", code)
	}
}

// TestClientIsPrincipal: the limits count a request by its principal when
// the policy authenticated one, else by its address.
func TestClientIsPrincipal(t *testing.T) {
	s, _ := newServer(t, Config{})
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.7:1234"
	if got := s.client(r, Principal{}); got != "192.0.2.7" {
		t.Errorf("anonymous: %q, want the address", got)
	}
	if got := s.client(r, Principal{ID: "alice"}); got != "alice" {
		t.Errorf("authenticated: %q, want the principal", got)
	}
	r.RemoteAddr = "[2001:db8:1:2:3:4:5:6]:1234"
	if got := s.client(r, Principal{}); got != "2001:db8:1:2::/64" {
		t.Errorf("IPv6: %q, want its /64", got)
	}
}

// TestPrincipalConnLimit: a WebSocket is counted by address at the
// upgrade, then as its principal's from the hello on; a principal over
// Limits.MaxClientConns, from any address, gets error 429 and close 4029.
func TestPrincipalConnLimit(t *testing.T) {
	e := newWS(t, Config{TrustProxy: true, Policy: &testPolicy{}, Limits: Limits{MaxClientConns: 1}}, collab.Config{}, nil)
	hello := func(ip, token string) *wsClient {
		c, status, _ := e.dialFrom(t, ip, "d")
		if status != 101 {
			t.Fatalf("dial from %s: %d", ip, status)
		}
		wc := &wsClient{t: t, c: c}
		wc.send(`{"type":"hello","version":0,"commentVersion":0,"clientID":"` + token + `","token":"` + token + `"}`)
		return wc
	}
	hello("10.0.0.1", "alice").next("welcome")
	// 10.0.0.1 holds no connection now: alice does.
	hello("10.0.0.1", "bob").next("welcome")
	c := hello("10.0.0.2", "alice")
	if m := c.next("error"); m.Status != 429 || !strings.Contains(m.Message, "Limits.MaxClientConns") {
		t.Fatalf("error %s, want 429 naming Limits.MaxClientConns", m.raw)
	}
	if code, _ := c.closed(0); code != wsCloseTooManyRequests {
		t.Fatalf("closed with %d, want 4029", code)
	}
	waitFor(t, func() bool { return e.s.connTotal() == 2 })
}
