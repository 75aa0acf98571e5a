package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// gateStore is a store whose appends wait, once hold is called, until
// open is: a submission caught in its commit.
type gateStore struct {
	store.Store
	mu      sync.Mutex
	held    bool
	entered chan struct{} // closed when an append waits
	gate    chan struct{} // closed by open
}

func (s *gateStore) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held, s.entered, s.gate = true, make(chan struct{}), make(chan struct{})
}

func (s *gateStore) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	close(s.gate)
}

func (s *gateStore) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	s.mu.Lock()
	held, entered, gate := s.held, s.entered, s.gate
	if held {
		select {
		case <-entered:
		default:
			close(entered)
		}
	}
	s.mu.Unlock()
	if held {
		<-gate
	}
	return s.Store.Append(ctx, id, base, steps, meta)
}

// httpAnswer is the status and body of an answer, or the error of a
// request that got none.
type httpAnswer struct {
	status int
	body   string
	err    error
}

// fetch sends a request on a connection of its own and returns the answer.
func fetch(method, url, body string) httpAnswer {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return httpAnswer{err: err}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return httpAnswer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return httpAnswer{status: resp.StatusCode, body: string(b), err: err}
}

// TestDrainOrder stops a serving Server with a WebSocket joined, a long
// poll waiting and a submission caught in its commit, and checks the
// order of the drain: /readyz answers 503 at once while everything else
// goes on (the WebSocket open, the poll waiting, new connections taken)
// for the drain delay; then the poll is answered {}, the WebSocket is
// closed with 1012, and Serve waits for the submission, which is
// answered and durable, before it returns.
func TestDrainOrder(t *testing.T) {
	st := &gateStore{Store: memstore.New()}
	e := newCollab(t, Config{DrainDelay: time.Hour}, collab.Config{Store: st})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- e.s.Serve(ctx, ln) }()

	if a := fetch("GET", base+"/readyz", ""); a.err != nil || a.status != 200 || a.body != `{"status":"ok"}` {
		t.Fatalf("/readyz before the drain: %d %q %v", a.status, a.body, a.err)
	}
	env := &wsEnv{collabEnv: e, ts: &httptest.Server{URL: base}}
	c := env.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	polled := make(chan httpAnswer, 1)
	go func() { polled <- fetch("GET", base+"/docs/d/events?version=0&commentVersion=0", "") }()
	e.waitWaiting(t, "d", 1)
	st.hold()
	posted := make(chan httpAnswer, 1)
	go func() {
		posted <- fetch("POST", base+"/docs/d/events", `{"version":0,"clientID":2,"steps":[`+insert(1, "x")+`]}`)
	}()
	<-st.entered

	cancel() // SIGTERM
	waitFor(t, e.s.Draining)
	a := fetch("GET", base+"/readyz", "")
	if a.err != nil || a.status != 503 {
		t.Fatalf("/readyz while draining: %d %q %v, want 503", a.status, a.body, a.err)
	}
	var answer struct{ Error struct{ Message string } }
	if err := json.Unmarshal([]byte(a.body), &answer); err != nil || !strings.Contains(answer.Error.Message, "draining") {
		t.Fatalf("/readyz while draining answered %q (%v), want a JSON error saying draining", a.body, err)
	}
	// During the delay the server serves as before, on new connections too.
	if a := fetch("GET", base+"/healthz", ""); a.err != nil || a.status != 200 {
		t.Fatalf("/healthz while draining: %d %q %v, want 200 (alive)", a.status, a.body, a.err)
	}
	if a := fetch("GET", base+"/docs", ""); a.err != nil || a.status != 200 {
		t.Fatalf("GET /docs during the drain delay: %d %q %v", a.status, a.body, a.err)
	}
	select {
	case p := <-polled:
		t.Fatalf("the long poll was answered during the drain delay: %d %q %v", p.status, p.body, p.err)
	default:
	}
	e.s.ws.mu.Lock()
	open, closing := len(e.s.ws.conns), e.s.ws.closing
	e.s.ws.mu.Unlock()
	if open != 1 || closing {
		t.Fatalf("during the drain delay: %d WebSockets open (closing %v), want the one, open", open, closing)
	}

	close(e.s.drainCut) // the delay is over
	if p := <-polled; p.err != nil || p.status != 200 || p.body != "{}" {
		t.Fatalf("long poll at shutdown: %d %q %v, want 200 {}", p.status, p.body, p.err)
	}
	if code, reason := c.closed(3); code != websocket.StatusServiceRestart {
		t.Fatalf("WebSocket closed with %d %q, want 1012", code, reason)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("new connections are accepted after the drain delay")
	}
	// The submission is still in its commit: Serve waits for it.
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a submission in its commit", err)
	default:
	}
	if n := e.s.inFlight(); n != 1 {
		t.Fatalf("%d requests in flight, want the submission", n)
	}
	st.open()
	if p := <-posted; p.err != nil || p.status != 200 || p.body != `{"version":1,"commentVersion":0}` {
		t.Fatalf("the submission in flight: %d %q %v, want it accepted", p.status, p.body, p.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	h, err := st.Load(context.Background(), "d")
	if err != nil || h.Version != 1 {
		t.Fatalf("stored: version %d (%v), want the submission durable at 1", h.Version, err)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "draining") {
		t.Errorf("no draining line in the log:\n%s", logs)
	}
}

// TestDrainNoDelay: with no drain delay, Serve shuts down at once, and
// /readyz answered 503 from the start of it.
func TestDrainNoDelay(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	if w := e.serve(defaultIP, "GET", "/readyz", "", nil); w.Code != 200 {
		t.Fatalf("/readyz: %d %s", w.Code, w.Body)
	}
	e.s.Drain(context.Background())
	w := e.serve(defaultIP, "GET", "/readyz", "", nil)
	if w.Code != 503 || w.Body.String() != `{"error":{"message":"draining: the server is shutting down"}}` {
		t.Fatalf("/readyz after Drain: %d %s, want 503 draining", w.Code, w.Body)
	}
	if w := e.serve(defaultIP, "HEAD", "/readyz", "", nil); w.Code != 503 {
		t.Fatalf("HEAD /readyz after Drain: %d", w.Code)
	}
	if w := e.serve(defaultIP, "GET", "/healthz", "", nil); w.Code != 200 {
		t.Fatalf("/healthz after Drain: %d %s, want 200 (alive)", w.Code, w.Body)
	}
}

// TestReadyStore: /readyz answers 503 when the store cannot take writes
// (store.Checker) and when the authority is closed.
func TestReadyStore(t *testing.T) {
	st := &checkedStore{Store: memstore.New()}
	e := newCollab(t, Config{}, collab.Config{Store: st})
	if w := e.serve(defaultIP, "GET", "/readyz", "", nil); w.Code != 200 {
		t.Fatalf("/readyz: %d %s", w.Code, w.Body)
	}
	st.err = errDiskFull
	if w := e.serve(defaultIP, "GET", "/readyz", "", nil); w.Code != 503 {
		t.Fatalf("/readyz with a failing store: %d %s, want 503", w.Code, w.Body)
	}
	st.err = nil
	e.auth.Close()
	if w := e.serve(defaultIP, "GET", "/readyz", "", nil); w.Code != 503 {
		t.Fatalf("/readyz with the authority closed: %d %s, want 503", w.Code, w.Body)
	}
}

// checkedStore is a store.Checker whose Check returns err.
type checkedStore struct {
	store.Store
	err error
}

func (s *checkedStore) Check() error { return s.err }
