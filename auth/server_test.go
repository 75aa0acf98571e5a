package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// env is a server with the collab API and a Policy, and document "d"
// seeded with a step and a comment (version 1, comment version 1).
type env struct {
	srv    *server.Server
	collab *collab.Authority
	policy *Policy
}

func newEnv(t testing.TB, cfg Config, web bool) *env {
	t.Helper()
	a, err := collab.New(collab.Config{
		Store: memstore.New(),
		Schemas: func(name string) (*model.Schema, bool) {
			sc, err := schemas.Get(name)
			return sc, err == nil
		},
		DefaultSchema: "basic",
		AutoCreate:    true,
		IdleUnload:    -1,
		Logger:        quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx := context.Background()
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 0, Steps: [][]byte{[]byte(insertStep(1, "ab"))}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 3, Text: "c"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "other", ""); err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return testNow }
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg := server.Config{Collab: a, Policy: p, DefaultSchema: "text", Logger: quiet}
	if web {
		scfg.Web = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	}
	srv, err := server.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, collab: a, policy: p}
}

func insertStep(pos int, text string) string {
	return `{"stepType":"replace","from":` + strconv.Itoa(pos) + `,"to":` + strconv.Itoa(pos) +
		`,"slice":{"content":[{"type":"text","text":` + strconv.Quote(text) + `}]}}`
}

// state is everything the authority has of document d, but its user
// count, as JSON.
func (e *env) state(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	st, err := e.collab.Get(ctx, "d", "")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.collab.Events(ctx, "d", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.Users, ev.Users = 0, 0
	return string(st.AppendJSON(nil)) + string(ev.AppendJSON(nil))
}

// do answers one request with token (none when "").
func (e *env) do(method, target, body, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, r)
	return w
}

// matrixConfig verifies HS256 with testSecret and RS256 with the test
// RSA key, for issuer "iss" and audience "aud".
func matrixConfig(t testing.TB) Config {
	k := privateKeys(t)
	return Config{Keys: append(mustKeys(t, pemOf(t, &k.rsa.PublicKey)), secretKey(t)), Issuer: "iss", Audience: "aud"}
}

// tokenKind is a kind of credential in the matrix, with the role it
// gives on "d" (-1: no valid token).
type tokenKind struct {
	name  string
	token string
	role  Role
	valid bool
}

func matrixTokens(t testing.TB) []tokenKind {
	k := privateKeys(t)
	base := validClaims().with("iss", "iss", "aud", "aud")
	docs := func(role string) claims { return base.with("docs", map[string]string{"d": role}) }
	hs := func(c claims) string { return sign(t, jose.HS256, testSecret, "", c) }
	return []tokenKind{
		{name: "no token"},
		{name: "garbage", token: "garbage.garbage.garbage"},
		{name: "alg none", token: unsigned(t, `{"alg":"none"}`, docs("admin"))},
		{name: "HS256 with the RS public key", token: sign(t, jose.HS256, pemOf(t, &k.rsa.PublicKey), "", docs("admin"))},
		{name: "wrong secret", token: sign(t, jose.HS256, []byte("the wrong secret, also 32 bytes long"), "", docs("admin"))},
		{name: "expired", token: hs(docs("admin").with("exp", testNow.Add(-time.Hour).Unix()))},
		{name: "nbf in the future", token: hs(docs("admin").with("nbf", testNow.Add(time.Hour).Unix()))},
		{name: "wrong issuer", token: hs(docs("admin").with("iss", "other"))},
		{name: "wrong audience", token: hs(docs("admin").with("aud", "other"))},
		{name: "another document", token: hs(base.with("docs", map[string]string{"other": "admin", "d-*": "admin"})), valid: true},
		{name: "read", token: hs(docs("read")), role: RoleRead, valid: true},
		{name: "comment", token: hs(docs("comment")), role: RoleComment, valid: true},
		{name: "suggest", token: hs(docs("suggest")), role: RoleSuggest, valid: true},
		{name: "edit", token: sign(t, jose.RS256, k.rsa, "", docs("edit")), role: RoleEdit, valid: true},
		{name: "admin", token: hs(base.with("docs", map[string]string{"*": "admin"})), role: RoleAdmin, valid: true},
	}
}

// matrixRoute is a request of the matrix and the role it needs on "d"
// (RoleNone with open: anyone; RoleNone without: any valid token).
type matrixRoute struct {
	method, target, body string
	need                 Role
	open                 bool
	ok                   int // the status when allowed (0: 200)
}

const commentOnly = `{"version":1,"clientID":0,"steps":[],"comment":[{"type":"create","id":2,"from":1,"to":2,"text":"hi"}]}`

// commitCommentOnly is commentOnly as a commit (POST /docs/{id}/commits).
const commitCommentOnly = `{"version":1,"ref":"c1","clientID":0,"steps":[],"comment":[{"type":"create","id":2,"from":1,"to":2,"text":"hi"}]}`

func matrixRoutes() []matrixRoute {
	steps := `{"version":1,"clientID":7,"steps":[` + insertStep(1, "x") + `]}`
	return []matrixRoute{
		{"POST", "/", reqtest.Seed, RoleNone, true, 0},
		{"POST", "/v1/apply", reqtest.Seed, RoleNone, true, 0},
		{"GET", "/v1/schemas", "", RoleNone, true, 0},
		{"HEAD", "/v1/schemas", "", RoleNone, true, 0},
		{"GET", "/healthz", "", RoleNone, true, 0},
		{"HEAD", "/healthz", "", RoleNone, true, 0},
		{"GET", "/readyz", "", RoleNone, true, 0},
		{"HEAD", "/readyz", "", RoleNone, true, 0},
		{"GET", "/", "", RoleNone, true, 0},
		{"HEAD", "/", "", RoleNone, true, 0},
		{"GET", "/edit/d", "", RoleNone, true, 0},
		{"HEAD", "/edit/d", "", RoleNone, true, 0},
		{"GET", "/assets/x.js", "", RoleNone, true, 0},
		{"HEAD", "/assets/x.js", "", RoleNone, true, 0},
		{"GET", "/docs", "", RoleNone, false, 0},
		{"HEAD", "/docs/", "", RoleNone, false, 0},
		{"GET", "/docs/d", "", RoleRead, false, 0},
		{"HEAD", "/docs/d", "", RoleRead, false, 0},
		{"GET", "/docs/d/events?version=0&commentVersion=0", "", RoleRead, false, 0},
		{"GET", "/docs/d/export?format=markdown", "", RoleRead, false, 0},
		{"POST", "/docs/d/events", commentOnly, RoleComment, false, 0},
		{"POST", "/docs/d/events", steps, RoleEdit, false, 0},
		{"POST", "/docs/d/commits", commitCommentOnly, RoleComment, false, 0},
		{"POST", "/docs/d/commits", `{"version":0,"ref":"s1","clientID":7,"steps":[` + insertStep(1, "x") + `]}`, RoleEdit, false, 0},
		// The documents API. POST /docs of the existing "d" passes the
		// policy and conflicts.
		{"POST", "/docs", `{"id":"d"}`, RoleEdit, false, http.StatusConflict},
		{"DELETE", "/docs/d", "", RoleAdmin, false, http.StatusNoContent},
		{"GET", "/docs/d/steps?from=0", "", RoleRead, false, 0},
		{"GET", "/docs/d/checkpoints", "", RoleRead, false, 0},
		{"POST", "/docs/d/checkpoints", `{"name":"c"}`, RoleEdit, false, http.StatusCreated},
		{"POST", "/docs/d/restore", `{"version":0}`, RoleEdit, false, 0},
		{"POST", "/docs/d/transform", `{"version":1,"ops":[{"op":"insert","args":[1,{"type":"text","text":"x"}]}]}`, RoleEdit, false, 0},
		{"POST", "/docs/d/edits", `{"base":1,"edits":[{"op":"insert","target":{"block":{"path":[0]}},"at":"start","content":{"type":"text","text":"x"}}]}`, RoleEdit, false, 0},
		{"GET", "/docs/d/authors", "", RoleRead, false, 0},
		{"GET", "/docs/d/changes?from=0&to=1", "", RoleRead, false, 0},
		// "d" is of a schema without the suggestion marks: past the
		// policy, 422.
		{"POST", "/docs/d/suggestions/1/accept", `{}`, RoleEdit, false, http.StatusUnprocessableEntity},
		{"POST", "/docs/d/suggestions/1/reject", `{}`, RoleEdit, false, http.StatusUnprocessableEntity},
		{"POST", "/docs/d/suggestions/accept", `{"all":true}`, RoleEdit, false, http.StatusUnprocessableEntity},
		{"POST", "/docs/d/suggestions/reject", `{"author":"x"}`, RoleEdit, false, http.StatusUnprocessableEntity},
	}
}

// TestServerMatrix: every route × every kind of credential answers the
// expected status, and a refused request changes nothing.
func TestServerMatrix(t *testing.T) {
	cfg := matrixConfig(t)
	e := newEnv(t, cfg, true)
	routes := matrixRoutes()
	// Every route of the server is in the matrix (the WebSocket's is
	// TestServerWebSocket's).
	for _, rt := range e.srv.Routes() {
		if rt.Pattern == "/docs/{id}/ws" {
			continue
		}
		found := slices.ContainsFunc(routes, func(m matrixRoute) bool {
			path, _, _ := strings.Cut(m.target, "?")
			pat := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSuffix(rt.Pattern, "{$}"), "{id}", "d"), "{file}", "x.js")
			pat = strings.ReplaceAll(pat, "{sid}", "1")
			return m.method == rt.Method && strings.TrimSuffix(path, "/") == strings.TrimSuffix(pat, "/")
		})
		if !found {
			t.Errorf("route %s %s is not in the matrix", rt.Method, rt.Pattern)
		}
	}
	for _, rt := range routes {
		for _, tk := range matrixTokens(t) {
			name := rt.method + " " + rt.target
			if rt.body == commentOnly || rt.body == commitCommentOnly {
				name += " comment"
			}
			t.Run(name+" "+tk.name, func(t *testing.T) {
				e := newEnv(t, cfg, true)
				before := e.state(t)
				want := http.StatusOK
				if rt.ok != 0 {
					want = rt.ok
				}
				switch {
				case rt.open:
				case !tk.valid:
					want = http.StatusUnauthorized
				case tk.role < rt.need:
					want = http.StatusForbidden
				}
				w := e.do(rt.method, rt.target, rt.body, tk.token)
				if w.Code != want {
					t.Fatalf("status %d, want %d: %s", w.Code, want, w.Body)
				}
				switch want {
				case http.StatusUnauthorized:
					if got := w.Header().Get("Www-Authenticate"); got != `Bearer error="invalid_token"` {
						t.Errorf("WWW-Authenticate %q", got)
					}
				case http.StatusForbidden:
				default:
					return
				}
				if rt.method != "HEAD" {
					var answer struct {
						Error struct{ Message string } `json:"error"`
					}
					if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || answer.Error.Message == "" {
						t.Errorf("body %q: want a JSON error", w.Body)
					}
					if tk.token != "" && strings.Contains(w.Body.String(), tk.token) {
						t.Errorf("the answer echoes the token: %s", w.Body)
					}
				}
				if after := e.state(t); after != before {
					t.Errorf("refused, yet the document changed:\n%s\nto\n%s", before, after)
				}
			})
		}
	}
}

// TestServerList: GET /docs lists only the documents the token may read.
func TestServerList(t *testing.T) {
	e := newEnv(t, matrixConfig(t), false)
	base := validClaims().with("iss", "iss", "aud", "aud")
	tests := []struct {
		docs map[string]string
		want []string
	}{
		{map[string]string{"d": "read"}, []string{"d"}},
		{map[string]string{"oth*": "comment"}, []string{"other"}},
		{map[string]string{"*": "read"}, []string{"d", "other"}},
		{map[string]string{"nothing": "admin"}, nil},
	}
	for _, tt := range tests {
		w := e.do("GET", "/docs", "", sign(t, jose.HS256, testSecret, "", base.with("docs", tt.docs)))
		var list []struct{ ID string }
		if err := json.Unmarshal(w.Body.Bytes(), &list); w.Code != 200 || err != nil {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		var ids []string
		for _, d := range list {
			ids = append(ids, d.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, tt.want) {
			t.Errorf("docs %v: listed %v, want %v", tt.docs, ids, tt.want)
		}
	}
}

// TestServerProtectApply: with ProtectApply the apply endpoint needs a
// valid token, of any role.
func TestServerProtectApply(t *testing.T) {
	cfg := matrixConfig(t)
	cfg.ProtectApply = true
	e := newEnv(t, cfg, false)
	for _, tk := range matrixTokens(t) {
		want := http.StatusOK
		if !tk.valid {
			want = http.StatusUnauthorized
		}
		if w := e.do("POST", "/v1/apply", reqtest.Seed, tk.token); w.Code != want {
			t.Errorf("%s: status %d, want %d: %s", tk.name, w.Code, want, w.Body)
		}
	}
	if w := e.do("GET", "/healthz", "", ""); w.Code != http.StatusOK {
		t.Errorf("/healthz without a token: %d", w.Code)
	}
}

// TestServerCache: a token is verified once, not per request.
func TestServerCache(t *testing.T) {
	e := newEnv(t, matrixConfig(t), false)
	tok := sign(t, jose.HS256, testSecret, "", validClaims().with("iss", "iss", "aud", "aud", "docs", map[string]string{"d": "read"}))
	for range 3 {
		if w := e.do("GET", "/docs/d", "", tok); w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	if n := e.policy.sessions.len(); n != 1 {
		t.Errorf("%d cached sessions, want 1", n)
	}
}

// wsClient is a test WebSocket client.
type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialWS(t *testing.T, ts *httptest.Server, doc string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/docs/"+doc+"/ws",
		&websocket.DialOptions{Subprotocols: []string{server.WSSubprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: t, c: c}
}

func (c *wsClient) send(msg string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

// wsAnswer is a server message.
type wsAnswer struct {
	Type    string `json:"type"`
	Status  int    `json:"status"`
	Message string `json:"message"`
	raw     string
}

// next returns the next message of type typ, skipping others (any
// message when typ is ""); or the close error.
func (c *wsClient) next(typ string) (wsAnswer, error) {
	c.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, data, err := c.c.Read(ctx)
		cancel()
		if err != nil {
			return wsAnswer{}, err
		}
		var m wsAnswer
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatal(err)
		}
		m.raw = string(data)
		if typ == "" || m.Type == typ {
			return m, nil
		}
	}
}

// TestServerWebSocket: a hello without a valid token, or with one for
// another document, is refused (error 401/403, close 1008); a read-only
// connection receives but its steps are refused; a comment one's
// comments are accepted and its steps refused.
func TestServerWebSocket(t *testing.T) {
	e := newEnv(t, matrixConfig(t), false)
	ts := httptest.NewServer(e.srv)
	defer ts.Close()
	hello := func(tok string) string {
		m := map[string]any{"type": "hello", "version": 1, "commentVersion": 1, "clientID": 9}
		if tok != "" {
			m["token"] = tok
		}
		data, _ := json.Marshal(m)
		return string(data)
	}
	for _, tk := range matrixTokens(t) {
		if tk.valid && tk.role >= RoleRead {
			continue
		}
		t.Run("hello "+tk.name, func(t *testing.T) {
			c := dialWS(t, ts, "d")
			c.send(hello(tk.token))
			want := http.StatusUnauthorized
			if tk.valid {
				want = http.StatusForbidden
			}
			m, err := c.next("error")
			if err != nil || m.Status != want {
				t.Fatalf("error %+v, %v; want status %d", m, err, want)
			}
			_, err = c.next("welcome")
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation {
				t.Errorf("closed with %v, want 1008", err)
			}
		})
	}
	steps := `{"type":"steps","id":1,"version":1,"clientID":9,"steps":[` + insertStep(1, "x") + `]}`
	comment := `{"type":"steps","id":2,"version":1,"clientID":9,"steps":[],"comment":[{"type":"create","id":5,"from":1,"to":2,"text":"hi"}]}`
	for _, tk := range matrixTokens(t) {
		if !tk.valid || tk.role < RoleRead {
			continue
		}
		t.Run("steps "+tk.name, func(t *testing.T) {
			e := newEnv(t, matrixConfig(t), false)
			ts := httptest.NewServer(e.srv)
			defer ts.Close()
			c := dialWS(t, ts, "d")
			c.send(hello(tk.token))
			if _, err := c.next("welcome"); err != nil {
				t.Fatal(err)
			}
			// Presence and ping need read: no error before the pong.
			c.send(`{"type":"presence","version":1,"anchor":1,"head":2}`)
			c.send(`{"type":"ping","id":8}`)
			for {
				m, err := c.next("")
				if err != nil {
					t.Fatal(err)
				}
				if m.Type == "error" {
					t.Fatalf("presence of a %s token: %s", tk.name, m.raw)
				}
				if m.Type == "pong" {
					break
				}
			}
			before := e.state(t)
			c.send(comment)
			if tk.role < RoleComment {
				if m, err := c.next("error"); err != nil || m.Status != http.StatusForbidden {
					t.Fatalf("comment: %+v, %v; want error 403", m, err)
				}
				if e.state(t) != before {
					t.Fatal("a refused comment changed the document")
				}
			} else if m, err := c.next("ack"); err != nil {
				t.Fatalf("comment: %+v, %v; want ack", m, err)
			}
			before = e.state(t)
			c.send(steps)
			if tk.role < RoleEdit {
				if m, err := c.next("error"); err != nil || m.Status != http.StatusForbidden {
					t.Fatalf("steps: %+v, %v; want error 403", m, err)
				}
				if e.state(t) != before {
					t.Fatal("refused steps changed the document")
				}
				// The connection goes on.
				c.send(`{"type":"ping","id":3}`)
				if _, err := c.next("pong"); err != nil {
					t.Fatal(err)
				}
			} else if m, err := c.next("ack"); err != nil {
				t.Fatalf("steps: %+v, %v; want ack", m, err)
			}
		})
	}
}

// TestServerCreate: using a document that does not exist creates it,
// which needs edit.
func TestServerCreate(t *testing.T) {
	base := validClaims().with("iss", "iss", "aud", "aud")
	for role, want := range map[string]int{"read": 403, "comment": 403, "edit": 200, "admin": 200} {
		e := newEnv(t, matrixConfig(t), false)
		tok := sign(t, jose.HS256, testSecret, "", base.with("docs", map[string]string{"new": role}))
		if w := e.do("GET", "/docs/new", "", tok); w.Code != want {
			t.Errorf("%s: GET /docs/new: %d, want %d: %s", role, w.Code, want, w.Body)
		}
		if ok, _ := e.collab.Exists(context.Background(), "new"); ok != (want == 200) {
			t.Errorf("%s: the document exists: %v", role, ok)
		}
	}
}

// TestServerTokenRefresh: a WebSocket's token message takes a valid
// token of the same sub, and refuses an expired one or another sub's.
func TestServerTokenRefresh(t *testing.T) {
	e := newEnv(t, matrixConfig(t), false)
	ts := httptest.NewServer(e.srv)
	defer ts.Close()
	base := validClaims().with("iss", "iss", "aud", "aud", "docs", map[string]string{"d": "read"})
	hs := func(c claims) string { return sign(t, jose.HS256, testSecret, "", c) }
	c := dialWS(t, ts, "d")
	c.send(`{"type":"hello","version":1,"commentVersion":1,"clientID":9,"token":"` + hs(base) + `"}`)
	if _, err := c.next("welcome"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token  string
		answer string
		status int
	}{
		{hs(base.with("exp", testNow.Add(-time.Hour).Unix())), "error", 401},
		{hs(base.with("sub", "bob")), "error", 403},
		{hs(base.with("docs", map[string]string{"other": "read"})), "error", 403},
		{hs(base.with("exp", testNow.Add(2*time.Hour).Unix())), "token", 0},
	} {
		c.send(`{"type":"token","id":1,"token":"` + tc.token + `"}`)
		m, err := c.next(tc.answer)
		if err != nil || m.Status != tc.status {
			t.Errorf("%s: %+v, %v; want %s %d", tc.token[len(tc.token)-8:], m, err, tc.answer, tc.status)
		}
	}
}

// TestServerExactPattern: issue 21's token {"*": "admin"} meant for the
// document named "*" may delete every document; {"=*": "admin"} deletes
// "*" and no other.
func TestServerExactPattern(t *testing.T) {
	e := newEnv(t, matrixConfig(t), false)
	if _, err := e.collab.Get(context.Background(), "*", ""); err != nil {
		t.Fatal(err)
	}
	base := validClaims().with("iss", "iss", "aud", "aud")
	tok := sign(t, jose.HS256, testSecret, "", base.with("docs", map[string]string{"=*": "admin"}))
	if w := e.do("DELETE", "/docs/d", "", tok); w.Code != http.StatusForbidden {
		t.Errorf(`DELETE /docs/d with {"=*": "admin"}: %d, want 403: %s`, w.Code, w.Body)
	}
	if w := e.do("DELETE", "/docs/*", "", tok); w.Code/100 != 2 {
		t.Errorf(`DELETE /docs/* with {"=*": "admin"}: %d, want 2xx: %s`, w.Code, w.Body)
	}
	if ok, _ := e.collab.Exists(context.Background(), "d"); !ok {
		t.Error(`the token for "*" deleted "d"`)
	}
	all := sign(t, jose.HS256, testSecret, "", base.with("docs", map[string]string{"*": "admin"}))
	if w := e.do("DELETE", "/docs/d", "", all); w.Code/100 != 2 {
		t.Errorf(`DELETE /docs/d with {"*": "admin"} (every document, as documented): %d: %s`, w.Code, w.Body)
	}
}

// TestServerThreadRoles: with tokens, a comment role replies to, resolves
// and reopens any thread and edits or deletes its own replies only; an
// edit role deletes no other's comment; an admin changes anyone's.
func TestServerThreadRoles(t *testing.T) {
	e := newEnv(t, matrixConfig(t), false)
	base := validClaims().with("iss", "iss", "aud", "aud")
	token := func(sub, role string) string {
		return sign(t, jose.HS256, testSecret, "", base.with("sub", sub, "docs", map[string]string{"d": role}))
	}
	post := func(tok, comment string) (int, string) {
		w := e.do("POST", "/docs/d/events", `{"version":1,"clientID":0,"steps":[],"comment":[`+comment+`]}`, tok)
		return w.Code, w.Body.String()
	}
	for _, s := range []struct {
		sub, role, comment string
		want               int
	}{
		{"bob", "comment", `{"type":"reply","id":2,"thread":1,"text":"r"}`, 200},
		{"bob", "comment", `{"type":"resolve","id":1}`, 200},
		{"carol", "comment", `{"type":"reopen","id":1}`, 200},
		{"bob", "comment", `{"type":"edit","id":2,"text":"r2"}`, 200},
		{"carol", "comment", `{"type":"edit","id":2,"text":"carol's"}`, 403},
		{"carol", "comment", `{"type":"deleteReply","id":2}`, 403},
		{"dave", "edit", `{"type":"deleteReply","id":2}`, 403},
		{"dave", "edit", `{"type":"delete","id":1}`, 403},
		{"bob", "read", `{"type":"reply","id":3,"thread":1,"text":"r"}`, 403},
		{"root", "admin", `{"type":"edit","id":1,"text":"moderated"},{"type":"deleteReply","id":2}`, 200},
		{"root", "admin", `{"type":"delete","id":1}`, 200},
	} {
		if code, body := post(token(s.sub, s.role), s.comment); code != s.want {
			t.Errorf("%s (%s) %s: %d %s, want %d", s.sub, s.role, s.comment, code, body, s.want)
		}
	}
	if st, err := e.collab.Get(context.Background(), "d", ""); err != nil || len(st.Comments) != 0 || st.CommentVersion != 2 || st.ThreadVersion != 6 {
		t.Errorf("the comments at the end: %+v at %d, %d, %v", st.Comments, st.CommentVersion, st.ThreadVersion, err)
	}
}
