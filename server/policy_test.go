package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
)

// testPolicy is a Policy whose tokens are principal ids, which records
// the calls it sees, and which refuses as its fields say.
type testPolicy struct {
	authErr error // returned by every Authenticate
	denied  atomic.Bool
	deny    error // returned by Authorize while denied

	mu    sync.Mutex
	calls []string // "authenticate TOKEN PATH" and "authorize DOC ACTION PRINCIPAL"
}

func (p *testPolicy) Authenticate(ctx context.Context, c Credentials) (Principal, error) {
	path := "-"
	if c.Request != nil {
		path = c.Request.URL.Path
	}
	p.record("authenticate " + c.Token + " " + path)
	if p.authErr != nil {
		return Principal{}, p.authErr
	}
	if c.Token == "" {
		return Principal{}, nil
	}
	return Principal{ID: c.Token, Name: strings.ToUpper(c.Token)}, nil
}

func (p *testPolicy) Authorize(ctx context.Context, pr Principal, docID string, a Action) error {
	p.record("authorize " + docID + " " + string(a) + " " + pr.ID)
	if p.denied.Load() {
		return p.deny
	}
	return nil
}

func (p *testPolicy) record(call string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, call)
}

// take returns the calls since the last take.
func (p *testPolicy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	calls := p.calls
	p.calls = nil
	return calls
}

// docState is everything the authority has of document d, and its whole
// history, as JSON, but its user count.
func docState(t *testing.T, e *collabEnv) string {
	t.Helper()
	ctx := context.Background()
	st, err := e.auth.Get(ctx, "d", "")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.auth.Events(ctx, "d", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.Users, ev.Users = 0, 0 // connections count as users: not a change
	return string(st.AppendJSON(nil)) + string(ev.AppendJSON(nil))
}

// seedDoc gives document d a step and a comment, through the authority.
func seedDoc(t *testing.T, e *collabEnv) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.auth.Submit(ctx, "d", "", collab.Submission{Version: 0, Steps: [][]byte{[]byte(insert(1, "ab"))}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.auth.Submit(ctx, "d", "", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 3, Text: "c"}}}); err != nil {
		t.Fatal(err)
	}
}

// bodyOf returns a body that each route's handler would accept.
func bodyOf(rt Route) string {
	switch {
	case rt.Method != "POST":
		return ""
	case rt.Action == ActionApply:
		return reqtest.Seed
	}
	return `{"version":1,"clientID":1,"steps":[` + insert(1, "x") + `]}`
}

// watchedBody is a request body that notes whether it was read.
type watchedBody struct {
	r    *strings.Reader
	read *atomic.Bool
}

func (b watchedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.r.Read(p)
}

// serveRoute answers rt (its path made concrete) with a token and the
// body bodyOf gives, and reports whether the body was read.
func serveRoute(e *collabEnv, rt Route, token string) (*httptest.ResponseRecorder, bool) {
	path := concretePath(rt.Pattern)
	if rt.Pattern == "/docs/{id}/events" && rt.Method == "GET" {
		path += "?version=0&commentVersion=0"
	}
	body := bodyOf(rt)
	var read atomic.Bool
	r := httptest.NewRequest(rt.Method, path, watchedBody{strings.NewReader(body), &read})
	r.ContentLength = int64(len(body))
	r.RemoteAddr = defaultIP + ":40000"
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	return w, read.Load()
}

// TestPolicyDenyAll: a policy that refuses everything refuses every
// route with 403 before its body is read, and every WebSocket hello with
// error 403 and close 1008; nothing changes.
func TestPolicyDenyAll(t *testing.T) {
	p := &testPolicy{deny: fmt.Errorf("not for you: %w", ErrForbidden)}
	p.denied.Store(true)
	e := newWS(t, Config{Policy: p, Web: teapot}, collab.Config{}, nil)
	seedDoc(t, e.collabEnv)
	before := docState(t, e.collabEnv)
	for _, rt := range e.s.Routes() {
		if rt.Pattern == "/docs/{id}/ws" {
			continue // authorized at the hello, below
		}
		w, read := serveRoute(e.collabEnv, rt, "")
		if w.Code != http.StatusForbidden || read {
			t.Errorf("%v: %d (body read: %v), want 403 before the body is read: %s", rt, w.Code, read, w.Body)
			continue
		}
		if _, msg := checkAnswer(t, w.Code, w.Header(), w.Body.Bytes()); msg != "not for you: forbidden" {
			t.Errorf("%v: message %q", rt, msg)
		}
	}
	// Page paths without a route pass the policy too.
	if w := e.serve(defaultIP, "GET", "/edit/a/b", "", nil); w.Code != http.StatusForbidden {
		t.Errorf("GET /edit/a/b: %d", w.Code)
	}
	c := e.dial(t, "d", false)
	c.hello(1, "1")
	if m := c.next("error"); m.Status != 403 || m.Message != "not for you: forbidden" || m.ID != nil {
		t.Fatalf("hello: %s", m.raw)
	}
	if code, reason := c.closed(0); code != websocket.StatusPolicyViolation || reason != "request refused" {
		t.Fatalf("closed with %d %q, want 1008", code, reason)
	}
	if after := docState(t, e.collabEnv); after != before {
		t.Fatalf("the document changed:\nbefore %s\nafter  %s", before, after)
	}
	if n := e.wsConns("d"); n != 0 {
		t.Fatalf("%d connections joined", n)
	}
}

// TestPolicyUnauthenticated: a failing Authenticate answers 401 with
// WWW-Authenticate on every route, and error 401 then close 1008 to a
// hello.
func TestPolicyUnauthenticated(t *testing.T) {
	p := &testPolicy{authErr: fmt.Errorf("token expired: %w", ErrUnauthenticated)}
	e := newWS(t, Config{Policy: p, Web: teapot}, collab.Config{}, nil)
	seedDoc(t, e.collabEnv)
	before := docState(t, e.collabEnv)
	for _, rt := range e.s.Routes() {
		if rt.Pattern == "/docs/{id}/ws" {
			continue
		}
		w, read := serveRoute(e.collabEnv, rt, "stale")
		if w.Code != http.StatusUnauthorized || read || w.Header().Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
			t.Errorf("%v: %d (body read: %v), WWW-Authenticate %q: %s", rt, w.Code, read, w.Header().Get("WWW-Authenticate"), w.Body)
			continue
		}
		if _, msg := checkAnswer(t, w.Code, w.Header(), w.Body.Bytes()); msg != "token expired: unauthenticated" {
			t.Errorf("%v: message %q", rt, msg)
		}
	}
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":0,"clientID":1,"token":"stale"}`)
	if m := c.next("error"); m.Status != 401 || m.Message != "token expired: unauthenticated" {
		t.Fatalf("hello: %s", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %d, want 1008", code)
	}
	if after := docState(t, e.collabEnv); after != before {
		t.Fatalf("the document changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestPolicyCalls checks what the policy sees for each route and
// WebSocket message: the credentials, the document and the action, and
// that handlers get the principal.
func TestPolicyCalls(t *testing.T) {
	p := &testPolicy{}
	var fromPage atomic.Value
	web := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, ok := PrincipalFrom(r.Context())
		fromPage.Store(fmt.Sprint(pr.ID, " ", pr.Name, " ", ok))
		teapot(w, r)
	})
	e := newWS(t, Config{Policy: p, Web: web}, collab.Config{}, nil)
	seedDoc(t, e.collabEnv)
	type call struct {
		method, target, body string
		want                 []string
	}
	for _, tc := range []call{
		{"POST", "/", reqtest.Seed, []string{"authorize  apply alice"}},
		{"POST", "/v1/apply", reqtest.Seed, []string{"authorize  apply alice"}},
		{"GET", "/v1/schemas", "", []string{"authorize  apply alice"}},
		{"GET", "/healthz", "", []string{"authorize  health alice"}},
		{"GET", "/readyz", "", []string{"authorize  health alice"}},
		{"GET", "/docs", "", []string{"authorize  read alice"}},
		{"GET", "/docs/d/", "", []string{"authorize d read alice"}},
		{"GET", "/docs/d/events?version=0&commentVersion=0", "", []string{"authorize d read alice"}},
		{"POST", "/docs/d/events", `{"version":1,"clientID":3,"steps":[` + insert(1, "x") + `]}`,
			[]string{"authorize d comment alice", "authorize d edit alice"}},
		{"POST", "/docs/d/events", `{"version":2,"clientID":0,"steps":[],"comment":[{"type":"delete","id":1}]}`,
			[]string{"authorize d comment alice", "authorize d admin alice"}}, // deletes: anyone's comments?
		{"GET", "/", "", []string{"authorize  page alice"}},
		{"GET", "/edit/d", "", []string{"authorize  page alice"}},
		{"GET", "/assets/x/y", "", []string{"authorize  page alice"}},
		{"GET", "/nope", "", nil},
		{"PUT", "/docs/d", "", nil},
		{"GET", "/docs/bad%00id", "", nil},
	} {
		r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		r.Header.Set("Authorization", "bearer alice")
		if tc.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Errorf("%s %s: %d %s", tc.method, tc.target, w.Code, w.Body)
		}
		want := tc.want
		if want != nil {
			path, _, _ := strings.Cut(tc.target, "?")
			want = append([]string{"authenticate alice " + path}, want...)
		}
		if got := p.take(); !slices.Equal(got, want) {
			t.Errorf("%s %s: policy calls %q, want %q", tc.method, tc.target, got, want)
		}
	}
	if got := fromPage.Load(); got != "alice ALICE true" {
		t.Errorf("PrincipalFrom in a page handler: %v", got)
	}
	if pr, ok := PrincipalFrom(context.Background()); ok || pr != (Principal{}) {
		t.Errorf("PrincipalFrom(Background) = %v, %v", pr, ok)
	}

	// WebSocket: nothing at the upgrade; the hello's token; every message.
	c := e.dial(t, "d", false)
	if got := p.take(); got != nil {
		t.Fatalf("upgrade: policy calls %q", got)
	}
	c.send(`{"type":"hello","version":2,"clientID":4,"token":"bob"}`)
	c.next("welcome")
	if got, want := p.take(), []string{"authenticate bob /docs/d/ws", "authorize d read bob"}; !slices.Equal(got, want) {
		t.Errorf("hello: policy calls %q, want %q", got, want)
	}
	for _, tc := range []struct {
		msg, answer string
		want        []string
	}{
		{stepsMsg(1, 2, "4", insert(1, "y")), "ack", []string{"authorize d edit bob"}}, // after its push
		{`{"type":"steps","id":2,"version":3,"clientID":1,"steps":[],"comment":[{"type":"create","id":2,"from":1,"to":2,"text":"t"}]}`, "ack", []string{"authorize d comment bob"}},
		{`{"type":"ping","id":3}`, "pong", []string{"authorize d read bob"}},
		{`{"type":"presence","version":3,"anchor":1}`, "", []string{"authorize d read bob"}},
	} {
		c.send(tc.msg)
		if tc.answer == "ack" {
			c.nextSkipping("steps")
		}
		if tc.answer != "" {
			c.nextSkipping(tc.answer)
		} else {
			c.send(`{"type":"ping"}`) // presence has no answer: wait for the pong after it
			c.nextSkipping("pong")
			tc.want = append(tc.want, "authorize d read bob")
		}
		if got := p.take(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: policy calls %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// TestPolicyWSMessages: with a policy that admits the hello and then
// refuses, steps, comments, presence and pings are answered 403 (with
// their id) and change nothing, and the connection stays.
func TestPolicyWSMessages(t *testing.T) {
	p := &testPolicy{deny: fmt.Errorf("read only: %w", ErrForbidden)}
	e := newWS(t, Config{Policy: p}, collab.Config{}, nil)
	seedDoc(t, e.collabEnv)
	before := docState(t, e.collabEnv)
	a := e.dial(t, "d", false)
	a.hello(1, "1")
	a.next("welcome")
	p.denied.Store(true)
	for _, tc := range []struct{ msg, id string }{
		{stepsMsg(7, 1, "1", insert(1, "x")), "7"},
		{`{"type":"steps","id":8,"version":1,"clientID":1,"steps":[],"comment":[{"type":"delete","id":1}]}`, "8"},
		{`{"type":"presence","version":1,"anchor":1,"head":2}`, ""},
		{`{"type":"ping","id":9}`, "9"},
	} {
		a.send(tc.msg)
		m := a.nextSkipping("error")
		if m.Status != 403 || m.Message != "read only: forbidden" || string(m.ID) != tc.id {
			t.Errorf("%s: %s, want error 403 with id %q", tc.msg, m.raw, tc.id)
		}
	}
	p.denied.Store(false)
	a.send(`{"type":"ping","id":10}`)
	if m := a.nextSkipping("pong"); string(m.ID) != "10" {
		t.Fatalf("pong %s", m.raw)
	}
	if after := docState(t, e.collabEnv); after != before {
		t.Fatalf("the document changed:\nbefore %s\nafter  %s", before, after)
	}
	// The refused presence was not stored.
	b := e.dial(t, "d", false)
	b.hello(1, "2")
	w := b.next("welcome")
	if len(w.Presence) != 1 || w.Presence[0].Anchor != nil {
		t.Fatalf("welcome presence %s", w.raw)
	}
}

// TestWSHelloToken: the default policy ignores a hello's token; a token
// that is not a string is a bad hello.
func TestWSHelloToken(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":0,"clientID":1,"token":"anything"}`)
	c.next("welcome")
	c = e.dial(t, "d", false)
	c.send(`{"type":"hello","version":0,"clientID":1,"token":5}`)
	if m := c.next("error"); m.Status != 400 || m.Message != `invalid hello: "token" must be a string` {
		t.Fatalf("error %s", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %d, want 1008", code)
	}
}

// TestCORSWithPolicy: with a policy, preflights allow the Authorization
// header (bearer tokens); without one they stay as they were.
func TestCORSWithPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy Policy
		want   string
	}{{nil, "Content-Type"}, {&testPolicy{}, "Content-Type, Authorization"}} {
		s, _ := newServer(t, Config{AllowOrigins: []string{"app.example.com"}, Policy: tc.policy})
		r := httptest.NewRequest("OPTIONS", "/v1/apply", nil)
		r.Header.Set("Origin", "https://app.example.com")
		r.Header.Set("Access-Control-Request-Method", "POST")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Headers") != tc.want {
			t.Errorf("policy %v: %d, Access-Control-Allow-Headers %q, want %q", tc.policy, w.Code, w.Header().Get("Access-Control-Allow-Headers"), tc.want)
		}
	}
}
