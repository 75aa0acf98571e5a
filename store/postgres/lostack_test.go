package postgres

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/pgtest"
)

// cutProxy is a unix-socket proxy in front of a PostgreSQL socket that
// can lose the answer of a commit: once armed, the first connection that
// sends a statement containing "INSERT INTO pma_steps" (an append) has
// the statement delivered and answered by the server, then both its ends
// closed before the client reads a byte of the answer. The append has
// committed; its acknowledgement is lost, as when a connection fails
// after COMMIT was sent. With down set, it then ends every other
// connection and refuses new ones until up is called: the database is
// unreachable for a while.
type cutProxy struct {
	t      *testing.T
	ln     net.Listener
	target string // the server's socket

	mu        sync.Mutex
	armed     bool // set by arm until the next append's cut
	downAfter bool // arm's down
	down      bool // set by a cut when downAfter, until up
	cut       bool // whether a cut happened since arm
	hung      bool // set by hang: connections are taken and never answered
	frozen    bool // set by freeze: nothing more is relayed on the connections open
	conns     map[net.Conn]bool
}

// newCutProxy starts a proxy in front of the server of the pgtest URL u
// and returns it and the URL through it. The URL makes pgx send each
// statement's text with its execution (default_query_exec_mode=exec, no
// statement cache), so that every append carries its SQL.
func newCutProxy(t *testing.T, u string) (*cutProxy, string) {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := pu.Query()
	dir := t.TempDir()
	p := &cutProxy{t: t, target: filepath.Join(q.Get("host"), ".s.PGSQL."+q.Get("port")), conns: map[net.Conn]bool{}}
	p.ln, err = net.Listen("unix", filepath.Join(dir, ".s.PGSQL."+q.Get("port")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	go p.accept()
	q.Set("host", dir)
	q.Set("default_query_exec_mode", "exec")
	pu.RawQuery = q.Encode()
	return p, pu.String()
}

// arm makes the next append's answer lost; with down, the database then
// stays unreachable until up.
func (p *cutProxy) arm(down bool) {
	p.mu.Lock()
	p.armed, p.downAfter, p.cut = true, down, false
	p.mu.Unlock()
}

// up lets connections through again.
func (p *cutProxy) up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// hang ends every connection, and from then on takes new ones without
// ever answering: the database is unreachable, as behind a network that
// drops its packets.
func (p *cutProxy) hang() {
	p.mu.Lock()
	p.hung = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

// freeze stops relaying anything on the connections open, leaving them
// open, and takes new ones without answering (hang): a network gone
// silent, which neither end hears of.
func (p *cutProxy) freeze() {
	p.mu.Lock()
	p.frozen, p.hung = true, true
	p.mu.Unlock()
}

// isFrozen reports whether freeze was called (and not unhang).
func (p *cutProxy) isFrozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozen
}

// unhang lets connections through again, ending those held (and the
// frozen ones).
func (p *cutProxy) unhang() {
	p.mu.Lock()
	p.hung, p.frozen = false, false
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

// wasCut reports whether an append's answer was lost since arm.
func (p *cutProxy) wasCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

func (p *cutProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down, hung := p.down, p.hung
		if hung {
			p.conns[client] = true // closed at the cleanup
		}
		p.mu.Unlock()
		if down {
			client.Close()
			continue
		}
		if hung {
			continue
		}
		server, err := net.Dial("unix", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns[client], p.conns[server] = true, true
		p.mu.Unlock()
		go p.pipe(client, server)
	}
}

// pipe relays one connection, cutting it when armed (see cutProxy).
func (p *cutProxy) pipe(client, server net.Conn) {
	defer func() {
		client.Close()
		server.Close()
		p.mu.Lock()
		delete(p.conns, client)
		delete(p.conns, server)
		p.mu.Unlock()
	}()
	cutting := make(chan struct{})
	var once sync.Once
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				p.mu.Lock()
				cut := p.armed && bytes.Contains(buf[:n], []byte("INSERT INTO pma_steps"))
				if cut {
					p.armed = false
				}
				p.mu.Unlock()
				if cut {
					once.Do(func() { close(cutting) })
				}
				if p.isFrozen() {
					continue
				}
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				server.Close()
				return
			}
		}
	}()
	var answer []byte // the answer being held back, while cutting
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		select {
		case <-cutting:
			// Hold the answer back until it is complete (it ends with
			// ReadyForQuery: 'Z', length 5, the status), then drop it.
			answer = append(answer, buf[:n]...)
			if l := len(answer); l >= 6 && answer[l-6] == 'Z' && bytes.Equal(answer[l-5:l-1], []byte{0, 0, 0, 5}) {
				p.mu.Lock()
				p.cut = true
				if p.downAfter {
					p.down = true
					for c := range p.conns {
						c.Close()
					}
				}
				p.mu.Unlock()
				return
			}
			if err != nil {
				return
			}
			continue
		default:
		}
		if n > 0 && !p.isFrozen() {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				client.Close()
			}
			return
		}
	}
}

// TestLostCommitAck loses the answer of an append that committed (the
// connection fails after COMMIT was sent), with an Authority on the
// Store: the submission fails with collab.ErrUnavailable (503), its
// steps are in the store once, and the client that sends them again at
// the same version gets collab.ErrConflict (409) and finds them among
// the events with its client id: its own, confirmed, not doubled. Once
// the Authority can re-read the document at once (it catches up before
// answering), once the database then stays unreachable for a while (it
// learns at the resend, which conflicts on the key (doc_id, version), or
// from its listener's re-check after reconnecting).
func TestLostCommitAck(t *testing.T) {
	for _, down := range []bool{false, true} {
		name := "reread"
		if down {
			name = "unreachable"
		}
		t.Run(name, func(t *testing.T) {
			direct := pgtest.URL(t)
			proxy, u := newCutProxy(t, direct)
			ctx := context.Background()
			s := open(t, u)
			defer s.Close()
			a := newAuthority(t, s)
			step := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi"}]}}`)
			other := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}`)
			if _, err := a.Submit(ctx, "d", "", collab.Submission{Steps: [][]byte{other}, ClientID: collab.ClientID("7")}); err != nil {
				t.Fatal(err)
			}
			sub := collab.Submission{Version: 1, Steps: [][]byte{step, step}, ClientID: collab.ClientID("42")}
			proxy.arm(down)
			_, err := a.Submit(ctx, "d", "", sub)
			if !proxy.wasCut() {
				t.Fatalf("the proxy cut no append (Submit: %v)", err)
			}
			if !errors.Is(err, collab.ErrUnavailable) {
				t.Fatalf("Submit whose answer was lost: %v, want ErrUnavailable", err)
			}
			check := open(t, direct)
			defer check.Close()
			if h, err := check.Load(ctx, "d"); err != nil || h.Version != 3 {
				t.Fatalf("store: version %d (%v) after the lost answer, want 3: the append committed", h.Version, err)
			}
			if down {
				// The resend while the database is unreachable: 503 again.
				if _, err := a.Submit(ctx, "d", "", sub); !errors.Is(err, collab.ErrUnavailable) && !errors.Is(err, collab.ErrConflict) {
					t.Fatalf("resend with the database unreachable: %v, want ErrUnavailable or ErrConflict", err)
				}
				proxy.up()
			}
			if _, err := a.Submit(ctx, "d", "", sub); !errors.Is(err, collab.ErrConflict) {
				t.Fatalf("resend at version 1: %v, want ErrConflict", err)
			}
			ev, err := a.Events(ctx, "d", "", 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Version != 3 || len(ev.Steps) != 2 {
				t.Fatalf("events since 1: version %d, %d steps; want 3, 2", ev.Version, len(ev.Steps))
			}
			for i, r := range ev.Steps {
				if string(r.ClientID) != "42" || !bytes.Equal(r.JSON, step) {
					t.Errorf("event %d: %s from client %s, want the resent step from 42", i, r.JSON, r.ClientID)
				}
			}
			steps, err := check.Steps(ctx, "d", 0, 3)
			if err != nil || len(steps) != 3 {
				t.Fatalf("store: %d steps (%v), want 3", len(steps), err)
			}
			if h, _ := check.Load(ctx, "d"); h.Version != 3 {
				t.Errorf("store: version %d after the resends, want 3 (nothing doubled)", h.Version)
			}
		})
	}
}

// TestUnreachableUnavailable makes the database unreachable without a
// word (connections taken and never answered): a connection attempt
// then gives up after the URL's connect_timeout, and the Store's error
// is a failure of the store, not the caller's context ending, so that
// the Authority answers collab.ErrUnavailable (HTTP 503 with
// Retry-After) rather than a canceled request.
func TestUnreachableUnavailable(t *testing.T) {
	proxy, u := newCutProxy(t, pgtest.URL(t))
	ctx := context.Background()
	s := open(t, u+"&connect_timeout=1")
	defer s.Close()
	a := newAuthority(t, s)
	step := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi"}]}}`)
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Steps: [][]byte{step}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	proxy.hang()
	// (The pool's connections were ended: the first Load may meet one.)
	s.Load(ctx, "d")
	start := time.Now()
	_, err := s.Load(ctx, "d")
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Errorf("Load with the database unreachable: %v; want an error that is not the context's", err)
	}
	_, err = a.Submit(ctx, "d", "", collab.Submission{Version: 1, Steps: [][]byte{step}, ClientID: collab.ClientID("1")})
	if !errors.Is(err, collab.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Submit with the database unreachable: %v; want ErrUnavailable, not a context error", err)
	}
	t.Logf("a Load and a Submit failed in %v", time.Since(start))
	// pgx closes a connection whose query was interrupted by sending a
	// cancel request, on a connection of its own: let those through, so
	// that Close does not wait for them to time out.
	proxy.unhang()
	a.Close()
}

// TestSilentDatabase cuts the network to the database without a word
// (nothing relayed any more on the open connections, which stay open;
// new ones never answered): a submission then gives up by itself after
// the statement timeout plus the connect timeout, with
// collab.ErrUnavailable, rather than holding its document's writer until
// the operating system gives up on the connection (many minutes).
func TestSilentDatabase(t *testing.T) {
	proxy, u := newCutProxy(t, pgtest.URL(t))
	ctx := context.Background()
	s, err := Open(ctx, u+"&connect_timeout=1", Options{StatementTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newAuthority(t, s)
	step := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi"}]}}`)
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Steps: [][]byte{step}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	proxy.freeze()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Steps: [][]byte{step}, ClientID: collab.ClientID("1")})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, collab.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Submit with the network silent: %v; want ErrUnavailable, not a context error", err)
		}
		t.Logf("Submit gave up after %v: %v", time.Since(start), err)
	case <-time.After(30 * time.Second):
		t.Errorf("Submit with the network silent still waits after 30 s")
	}
	proxy.unhang()
	a.Close()
}
