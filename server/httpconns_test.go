package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/connlimit"
)

// rawConn is a client connection that sends requests one at a time, kept
// alive between them.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, br: bufio.NewReader(c)}
}

// send writes a GET of path.
func (c *rawConn) send(path string) error {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path)
	return err
}

// read reads an answer: its status and body.
func (c *rawConn) read() (*http.Response, string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// get sends a GET of path and reads its answer.
func (c *rawConn) get(path string) (*http.Response, string, error) {
	if err := c.send(path); err != nil {
		return nil, "", err
	}
	return c.read()
}

// closedByServer reports whether the server closed c (a read gets EOF or
// a reset before the deadline).
func (c *rawConn) closedByServer() bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// waitIdle waits until n connections of s are open and idle.
func waitIdle(t *testing.T, s *Server, n int) {
	t.Helper()
	waitFor(t, func() bool {
		l := s.httpConns.Load() // nil until Serve has started
		if l == nil {
			return false
		}
		open, idle := l.Counts()
		return open == n && idle == n
	})
}

// TestHTTPConnsShedIdle: at Config.MaxHTTPConns, a new connection closes
// the kept-alive one idle longest and is answered; the others stay open,
// among them one that has sent nothing yet.
func TestHTTPConnsShedIdle(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxHTTPConns: 4, MaxHTTPConnsPerAddress: 100}}, collab.Config{})
	addr, _ := serving(t, e.s)
	var conns []*rawConn
	for i := range 4 {
		c := dialRaw(t, addr)
		if i < 3 { // the fourth sends nothing
			if resp, body, err := c.get("/healthz"); err != nil || resp.StatusCode != 200 {
				t.Fatalf("request %d: %v %v %s", i, resp, err, body)
			}
		}
		conns = append(conns, c)
		waitIdle(t, e.s, i+1)
	}
	for round := range 2 {
		c := dialRaw(t, addr)
		if resp, body, err := c.get("/healthz"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("round %d: a connection over the limit: %v %v %s, want 200", round, resp, err, body)
		}
		if !conns[0].closedByServer() {
			t.Fatalf("round %d: the connection idle longest stays open", round)
		}
		conns = append(conns[1:], c)
		waitIdle(t, e.s, 4)
	}
	// The survivors (one that never sent a request, which the second
	// round's connection did not displace, and the two newest) answer.
	for i, c := range conns {
		if resp, body, err := c.get("/healthz"); err != nil || resp.StatusCode != 200 {
			t.Errorf("connection %d still open: %v %v %s", i, resp, err, body)
		}
	}
}

// TestHTTPConnsShedFresh: a connection that has sent no whole request
// header connlimit.FreshGrace after it was accepted counts as idle: at
// Config.MaxHTTPConns with no kept-alive connection, a new one closes it.
func TestHTTPConnsShedFresh(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxHTTPConns: 2, MaxHTTPConnsPerAddress: 100}, Timeouts: Timeouts{ReadHeader: time.Minute}}, collab.Config{})
	addr, _ := serving(t, e.s)
	silent := dialRaw(t, addr)
	fmt.Fprint(silent, "GET /healthz HTTP/1.1\r\n") // half a header
	slow := dialRaw(t, addr)
	waitIdle(t, e.s, 2)
	time.Sleep(connlimit.FreshGrace)
	c := dialRaw(t, addr)
	if resp, body, err := c.get("/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a connection over the limit beside two silent ones: %v %v %s, want 200", resp, err, body)
	}
	if !silent.closedByServer() {
		t.Error("the connection silent longest stays open")
	}
	if resp, body, err := slow.get("/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the other, sending its request at last: %v %v %s, want 200", resp, err, body)
	}
}

// waitingPolls opens n connections from 127.0.0.1, each with a long poll
// waiting on document d.
func waitingPolls(t *testing.T, e *collabEnv, addr string, n int) []*rawConn {
	t.Helper()
	r := httptest.NewRequest("GET", "/docs/d", nil)
	r.RemoteAddr = "127.0.0.1:1"
	e.s.ServeHTTP(httptest.NewRecorder(), r)
	base := e.waiting("d")
	var conns []*rawConn
	for range n {
		c := dialRaw(t, addr)
		if err := c.send("/docs/d/events?version=0&commentVersion=0"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	e.waitWaiting(t, "d", base+n)
	return conns
}

// TestHTTPConnsRefuse: when every connection is busy (here with a waiting
// long poll), one over Limits.MaxHTTPConns is answered 503 with
// Retry-After naming the limit as Config.SettingName does, and closed;
// once a connection ends, a new one is answered again.
func TestHTTPConnsRefuse(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxHTTPConns: 3, MaxHTTPConnsPerAddress: 100}, PollTimeout: 20 * time.Second,
		SettingName: flagNames}, collab.Config{})
	addr, _ := serving(t, e.s)
	polls := waitingPolls(t, e, addr, 3)
	c := dialRaw(t, addr)
	resp, body, err := c.get("/healthz")
	if err != nil || resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !resp.Close ||
		!strings.Contains(body, `"message":"too many connections`) || !strings.Contains(body, "(Limits.MaxHTTPConns, serve --max-http-conns)") {
		t.Fatalf("a connection over the limit, none idle: %v %v %s, want 503 with Retry-After", resp, err, body)
	}
	if !c.closedByServer() {
		t.Error("the refused connection stays open")
	}
	polls[0].Close()
	waitFor(t, func() bool {
		c := dialRaw(t, addr)
		resp, _, err := c.get("/healthz")
		return err == nil && resp.StatusCode == 200
	})
}

// TestHTTPConnsPerAddress: one address holds at most
// Config.MaxHTTPConnsPerAddress connections; over it, its own idle one is
// closed, or, all busy, the new one is answered 429. With TrustProxy (and
// no TrustedProxies) every peer is a proxy, not limited per address.
func TestHTTPConnsPerAddress(t *testing.T) {
	for _, trust := range []bool{false, true} {
		e := newCollab(t, Config{Limits: Limits{MaxHTTPConns: 100, MaxHTTPConnsPerAddress: 3}, PollTimeout: 20 * time.Second, TrustProxy: trust}, collab.Config{})
		addr, _ := serving(t, e.s)
		idle := dialRaw(t, addr)
		if resp, _, err := idle.get("/healthz"); err != nil || resp.StatusCode != 200 {
			t.Fatal(resp, err)
		}
		waitingPolls(t, e, addr, 2)
		c := dialRaw(t, addr)
		if resp, body, err := c.get("/healthz"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("trust %v: a fourth connection of one address: %v %v %s, want 200", trust, resp, err, body)
		}
		if trust {
			if resp, body, err := idle.get("/healthz"); err != nil || resp.StatusCode != 200 {
				t.Errorf("a proxy's idle connection beside its others: %v %v %s, want 200", resp, err, body)
			}
			continue
		}
		if !idle.closedByServer() {
			t.Error("the address's idle connection stays open")
		}
		// c's connection becomes idle once its answer is written, which
		// may be a moment after c has read it.
		waitFor(t, func() bool {
			_, n := e.s.httpConns.Load().Counts()
			return n == 1
		})
		waitingPolls(t, e, addr, 1)
		c = dialRaw(t, addr)
		resp, body, err := c.get("/healthz")
		if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Limits.MaxHTTPConnsPerAddress") {
			t.Errorf("a connection over the address's limit, none idle: %v %v %s, want 429", resp, err, body)
		}
	}
}

// TestHTTPConnsWebSockets: a WebSocket stays counted until it is closed,
// and is never closed to make room.
func TestHTTPConnsWebSockets(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxHTTPConns: 2, MaxHTTPConnsPerAddress: 100}}, collab.Config{})
	addr, _ := serving(t, e.s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func() (*websocket.Conn, int, error) {
		c, resp, err := websocket.Dial(ctx, "ws://"+addr+"/docs/d/ws", &websocket.DialOptions{Subprotocols: []string{WSSubprotocol}})
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		return c, status, err
	}
	var held []*websocket.Conn
	for range 2 {
		c, _, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		c.CloseRead(ctx) // reads the pongs
		held = append(held, c)
	}
	if _, status, err := dial(); err == nil || status != 503 {
		t.Fatalf("a third connection beside two WebSockets: %d %v, want 503", status, err)
	}
	for _, c := range held {
		if err := c.Ping(ctx); err != nil {
			t.Errorf("a WebSocket after the refusal: %v", err)
		}
	}
	held[0].Close(websocket.StatusNormalClosure, "")
	waitFor(t, func() bool {
		c, _, err := dial()
		if err == nil {
			c.CloseNow()
		}
		return err == nil
	})
	held[1].CloseNow()
}
