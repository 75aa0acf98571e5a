package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// fakeClock is the authority's clock in these tests: user counts change
// only when a test moves it.
type fakeClock = testutil.FakeClock

// usersWindow is the authority's Config.UsersWindow in these tests.
const usersWindow = time.Minute

// collabEnv is a Server with the collab API on an in-memory store.
type collabEnv struct {
	s     *Server
	auth  *collab.Authority
	clock *fakeClock
	logs  *logBuffer

	mu    sync.Mutex
	polls map[string]int // long polls waiting, by document (Server.pollWaiting)
}

// newCollab returns a Server for cfg with an authority for ccfg (the
// store and schemas filled in, and the fake clock and usersWindow unless
// ccfg has a clock and a window; documents are auto-created with the
// basic schema and never unloaded).
func newCollab(t testing.TB, cfg Config, ccfg collab.Config) *collabEnv {
	t.Helper()
	return newCollabAuto(t, cfg, ccfg, true)
}

// newCollabAuto is newCollab with collab.Config.AutoCreate set to auto.
func newCollabAuto(t testing.TB, cfg Config, ccfg collab.Config, auto bool) *collabEnv {
	t.Helper()
	clock := testutil.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if ccfg.Store == nil {
		ccfg.Store = memstore.New()
	}
	ccfg.Schemas = func(name string) (*model.Schema, bool) {
		sc, err := schemas.Get(name)
		return sc, err == nil
	}
	ccfg.AutoCreate = auto
	if ccfg.Now == nil {
		ccfg.Now = clock.Now
	}
	if ccfg.UsersWindow == 0 {
		ccfg.UsersWindow = usersWindow
	}
	if ccfg.IdleUnload == 0 {
		ccfg.IdleUnload = -1
	}
	auth, err := collab.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	cfg.Collab = auth
	if cfg.DefaultSchema == "" {
		cfg.DefaultSchema = "basic"
	}
	s, logs := newServer(t, cfg)
	e := &collabEnv{s: s, auth: auth, clock: clock, logs: logs, polls: make(map[string]int)}
	s.pollWaiting = func(id string, delta int) {
		e.mu.Lock()
		e.polls[id] += delta
		e.mu.Unlock()
	}
	return e
}

// defaultIP is the client address of requests that name none.
const defaultIP = "192.0.2.1"

// request answers one request from defaultIP, checking what every answer
// has (checkAnswer).
func (e *collabEnv) request(t *testing.T, method, target, body string) (int, string) {
	t.Helper()
	return e.requestFrom(t, defaultIP, method, target, body)
}

func (e *collabEnv) requestFrom(t *testing.T, ip, method, target, body string) (int, string) {
	t.Helper()
	w := e.serve(ip, method, target, body, nil)
	checkAnswer(t, w.Code, w.Header(), w.Body.Bytes())
	return w.Code, w.Body.String()
}

// serve answers one request with ServeHTTP; it is safe to call from any
// goroutine (it reports nothing to a *testing.T).
func (e *collabEnv) serve(ip, method, target, body string, ctx context.Context) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if ctx != nil {
		r = r.WithContext(ctx)
	}
	r.RemoteAddr = ip + ":40000"
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	return w
}

// mustGet answers a GET that must succeed and returns its body.
func (e *collabEnv) mustGet(t *testing.T, target string) string {
	t.Helper()
	status, body := e.request(t, "GET", target, "")
	if status != 200 {
		t.Fatalf("GET %s: %d %s", target, status, body)
	}
	return body
}

// mustPost posts a submission that must be accepted and returns the
// answer.
func (e *collabEnv) mustPost(t *testing.T, id, body string) string {
	t.Helper()
	status, answer := e.request(t, "POST", "/docs/"+id+"/events", body)
	if status != 200 {
		t.Fatalf("POST %s: %d %s", body, status, answer)
	}
	return answer
}

// users returns the user count of document id in GET /docs.
func (e *collabEnv) users(t *testing.T, id string) int {
	t.Helper()
	var docs []struct {
		ID    string `json:"id"`
		Users int    `json:"users"`
	}
	if err := json.Unmarshal([]byte(e.mustGet(t, "/docs")), &docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.ID == id {
			return d.Users
		}
	}
	t.Fatalf("GET /docs lacks %q", id)
	return 0
}

// waiting returns the number of long polls waiting on document id.
func (e *collabEnv) waiting(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.polls[id]
}

// waitWaiting waits until n long polls wait on document id.
func (e *collabEnv) waitWaiting(t *testing.T, id string, n int) {
	t.Helper()
	waitFor(t, func() bool { return e.waiting(id) == n })
}

// insert returns a step inserting text at pos (in the basic schema).
func insert(pos int, text string) string {
	return `{"stepType":"replace","from":` + strconv.Itoa(pos) + `,"to":` + strconv.Itoa(pos) +
		`,"slice":{"content":[{"type":"text","text":` + strconv.Quote(text) + `}]}}`
}

const emptyBasicDoc = `{"type":"doc","content":[{"type":"paragraph"}]}`

// TestCollabErrors sends every kind of wrong request to a document at
// version 1 with a comment, and checks the status, the error and that
// nothing changed. Requests that succeed without changing anything are
// in the table too.
func TestCollabErrors(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxBodyBytes: 2000, MaxDepth: 10}},
		collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxSteps: 3, MaxDocSize: 20}}})
	e.mustGet(t, "/docs/d")
	e.mustPost(t, "d", `{"version":0,"steps":[`+insert(1, "ab")+`],"clientID":1}`)
	e.mustPost(t, "d", `{"version":1,"steps":[],"clientID":1,"comment":[{"type":"create","id":9,"from":1,"to":3,"text":"c"}]}`)
	before := e.mustGet(t, "/docs/d")
	const wantBefore = `{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"ab"}]}]},` +
		`"users":1,"version":1,"comments":[{"from":1,"to":3,"text":"c","id":9,"time":"2026-01-01T00:00:00Z"}],"commentVersion":1}`
	if before != wantBefore {
		t.Fatalf("got  %s\nwant %s", before, wantBefore)
	}
	events := e.mustGet(t, "/docs/d/events?version=0&commentVersion=0")

	deep := strings.Repeat("[", 10) + strings.Repeat("]", 10)
	type req = struct{ method, target, body string }
	post := func(body string) req { return req{"POST", "/docs/d/events", body} }
	get := func(target string) req { return req{"GET", target, ""} }
	mk := func(method, target, body string) req { return req{method, target, body} }
	tests := []struct {
		name   string
		req    req
		ctype  string // "" means application/json for a body
		status int
		want   string // the whole body (200), or a part of the error message
		step   int    // the error's step (-1: none)
		allow  string
	}{
		{"list", get("/docs"), "", 200, `[{"id":"d","users":1,"version":1,"updated":"T"}]`, -1, ""},
		{"list with slash", get("/docs/"), "", 200, `[{"id":"d","users":1,"version":1,"updated":"T"}]`, -1, ""},
		{"list HEAD", mk("HEAD", "/docs", ""), "", 200, `[{"id":"d","users":1,"version":1,"updated":"T"}]`, -1, ""},
		{"doc with slash", get("/docs/d/"), "", 200, wantBefore, -1, ""},
		{"events with slash", get("/docs/d/events/?version=0&commentVersion=0"), "", 200, events, -1, ""},
		{"escaped query", get("/docs/d/events?version=%30&commentVersion=0&x=1"), "", 200, events, -1, ""},
		{"comment-only no-op", post(`{"version":1,"steps":[],"clientID":0,"comment":[]}`), "", 200, `{"version":1,"commentVersion":1}`, -1, ""},
		{"nothing at all", post(`{"version":1}`), "", 200, `{"version":1,"commentVersion":1}`, -1, ""},
		{"delete an unknown comment", post(`{"version":1,"steps":[],"clientID":0,"comment":[{"type":"delete","id":8}]}`), "", 200, `{"version":1,"commentVersion":1}`, -1, ""},

		{"PUT /docs", mk("PUT", "/docs", "{}"), "", 405, "method PUT not allowed", -1, "GET, HEAD, POST"},
		{"PATCH doc", mk("PATCH", "/docs/d", ""), "", 405, "method PATCH not allowed", -1, "GET, HEAD, DELETE"},
		{"POST doc", mk("POST", "/docs/d", "{}"), "", 405, "not allowed", -1, "GET, HEAD, DELETE"},
		{"PUT events", mk("PUT", "/docs/d/events", "{}"), "", 405, "method PUT not allowed", -1, "GET, POST"},
		{"HEAD events", mk("HEAD", "/docs/d/events?version=0&commentVersion=0", ""), "", 405, "not allowed", -1, "GET, POST"},
		{"unknown doc route", get("/docs/d/x"), "", 404, "no route for /docs/d/x", -1, ""},
		{"below events", get("/docs/d/events/x"), "", 404, "no route", -1, ""},
		{"two slashes", get("/docs/d/events//"), "", 404, "no route", -1, ""},
		{"docsx", get("/docsx"), "", 404, "no route", -1, ""},
		{"NUL in id", get("/docs/bad%00id"), "", 400, `invalid document id "bad\x00id": a control character`, -1, ""},
		{"control character in id", get("/docs/a%0Ab/events?version=0&commentVersion=0"), "", 400, "a control character", -1, ""},
		{"C1 control in id", get("/docs/a%C2%85b"), "", 400, "a control character", -1, ""},
		{"id not UTF-8", get("/docs/%FFx"), "", 400, "not UTF-8", -1, ""},
		{"empty id", get("/docs//"), "", 400, `invalid document id "": empty`, -1, ""},
		{"dot id", get("/docs/%2E"), "", 400, `invalid document id "."`, -1, ""},
		{"dot-dot id", get("/docs/%2E%2E/events?version=0&commentVersion=0"), "", 400, `invalid document id ".."`, -1, ""},
		{"id too long", get("/docs/" + strings.Repeat("x", 513)), "", 400, "over 512 bytes", -1, ""},

		{"no query", get("/docs/d/events"), "", 400, `missing query parameter "version"`, -1, ""},
		{"no commentVersion", get("/docs/d/events?version=1"), "", 400, `missing query parameter "commentVersion"`, -1, ""},
		{"version not a number", get("/docs/d/events?version=x&commentVersion=0"), "", 400, `Not a non-negative integer: x (query parameter "version")`, -1, ""},
		{"negative version", get("/docs/d/events?version=-1&commentVersion=0"), "", 400, "Not a non-negative integer: -1", -1, ""},
		{"fractional version", get("/docs/d/events?version=1.0&commentVersion=0"), "", 400, "Not a non-negative integer: 1.0", -1, ""},
		{"empty version", get("/docs/d/events?version=&commentVersion=0"), "", 400, "Not a non-negative integer: ", -1, ""},
		{"commentVersion not a number", get("/docs/d/events?version=0&commentVersion=1e1"), "", 400, `Not a non-negative integer: 1e1 (query parameter "commentVersion")`, -1, ""},
		{"events version ahead", get("/docs/d/events?version=2&commentVersion=0"), "", 400, "Invalid version 2", -1, ""},
		{"events version far ahead", get("/docs/d/events?version=99999999999999999999&commentVersion=0"), "", 400, "Invalid version 9223372036854775807", -1, ""},
		{"events commentVersion ahead", get("/docs/d/events?version=1&commentVersion=5"), "", 400, "Invalid version 5 (commentVersion)", -1, ""},

		{"not JSON", post(`{"version":1}`), "text/plain", 415, `unsupported Content-Type "text/plain"`, -1, ""},
		{"body over the limit", post(`{"version":1,"x":"` + strings.Repeat("x", 2000) + `"}`), "", 413, "over the limit of 2000 bytes", -1, ""},
		{"empty body", post(""), "", 400, "empty request", -1, ""},
		{"malformed", post(`{"version":1`), "", 400, "JSON syntax error", -1, ""},
		{"malformed after a type error", post(`{"version":"1",`), "", 400, "JSON syntax error", -1, ""},
		{"not an object", post(`[]`), "", 400, "must be a JSON object (found array)", -1, ""},
		{"trailing data", post(`{"version":1} x`), "", 400, "unexpected data after the JSON value", -1, ""},
		{"too deep", post(`{"version":1,"x":` + deep + `}`), "", 400, "over the limit of 10 levels", -1, ""},
		{"version a string", post(`{"version":"1"}`), "", 400, `"version" must be a non-negative integer (found string)`, -1, ""},
		{"version fractional", post(`{"version":1.5}`), "", 400, `"version" must be a non-negative integer (found 1.5)`, -1, ""},
		{"version negative", post(`{"version":-1}`), "", 400, `(found -1)`, -1, ""},
		{"version null", post(`{"version":null}`), "", 400, `(found null)`, -1, ""},
		{"version missing", post(`{"steps":[]}`), "", 400, `missing "version"`, -1, ""},
		{"duplicate version, the last wrong", post(`{"version":1,"version":"x"}`), "", 400, `"version" must be`, -1, ""},
		{"steps a string", post(`{"version":1,"steps":"x"}`), "", 400, `"steps" must be an array (found string)`, -1, ""},
		{"clientID an object", post(`{"version":1,"steps":[],"clientID":{}}`), "", 400, `"clientID" must be a number or a string (found object)`, -1, ""},
		{"clientID a boolean", post(`{"version":1,"clientID":true}`), "", 400, `(found true)`, -1, ""},
		{"comment an object", post(`{"version":1,"comment":{}}`), "", 400, `"comment" must be an array of comment events (found object)`, -1, ""},
		{"comment event a number", post(`{"version":1,"comment":[1]}`), "", 400, `"comment[0]" must be an object (found number)`, -1, ""},
		{"comment type unknown", post(`{"version":1,"comment":[{"type":"delete","id":9},{"type":"update","id":1}]}`), "", 400, `"comment[1].type" must be "create", "delete", "reply", "edit", "resolve", "reopen" or "deleteReply"`, -1, ""},
		{"comment type missing", post(`{"version":1,"comment":[{"id":9}]}`), "", 400, `missing "comment[0].type"`, -1, ""},
		{"comment id a string", post(`{"version":1,"comment":[{"type":"delete","id":"9"}]}`), "", 400, `"comment[0].id" must be an integer (found string)`, -1, ""},
		{"comment id fractional", post(`{"version":1,"comment":[{"type":"delete","id":9.5}]}`), "", 400, `"comment[0].id" must be an integer from -2^53 to 2^53 (found 9.5)`, -1, ""},
		{"comment id missing", post(`{"version":1,"comment":[{"type":"delete"}]}`), "", 400, `missing "comment[0].id"`, -1, ""},
		{"comment from negative", post(`{"version":1,"comment":[{"type":"create","id":1,"from":-1,"to":2,"text":"x"}]}`), "", 400, `"comment[0].from" must be a non-negative integer position (found -1)`, -1, ""},
		{"comment to a string", post(`{"version":1,"comment":[{"type":"create","id":1,"from":1,"to":"2","text":"x"}]}`), "", 400, `"comment[0].to" must be a number (found string)`, -1, ""},
		{"comment text a number", post(`{"version":1,"comment":[{"type":"create","id":1,"from":1,"to":2,"text":5}]}`), "", 400, `"comment[0].text" must be a string (found number)`, -1, ""},
		{"comment text missing", post(`{"version":1,"comment":[{"type":"create","id":1,"from":1,"to":2}]}`), "", 400, `missing "comment[0].text"`, -1, ""},
		{"comment outside the doc", post(`{"version":1,"comment":[{"type":"create","id":1,"from":1,"to":5,"text":"x"}]}`), "", 400, "range 1-5 is not a non-empty range of the document (size 4)", -1, ""},
		{"comment id taken", post(`{"version":1,"comment":[{"type":"create","id":9,"from":1,"to":2,"text":"x"}]}`), "", 400, "comment 9 exists", -1, ""},
		{"clientID missing with steps", post(`{"version":1,"steps":[` + insert(1, "x") + `]}`), "", 400, "clientID is missing", -1, ""},
		{"clientID null with steps", post(`{"version":1,"steps":[` + insert(1, "x") + `],"clientID":null}`), "", 400, "clientID is missing", -1, ""},
		{"clientID negative", post(`{"version":1,"steps":[` + insert(1, "x") + `],"clientID":-1}`), "", 400, "clientID -1 is not an integer from 0 to 2^53", -1, ""},
		{"clientID too large", post(`{"version":1,"steps":[` + insert(1, "x") + `],"clientID":9007199254740994}`), "", 400, "not an integer from 0 to 2^53", -1, ""},
		{"clientID string too long", post(`{"version":1,"steps":[` + insert(1, "x") + `],"clientID":"` + strings.Repeat("c", 300) + `"}`), "", 400, "clientID is a string of 300 bytes", -1, ""},

		{"too many steps", post(`{"version":1,"steps":[{},{},{},{}],"clientID":1}`), "", 413, "the request has 4, over the limit of 3 steps", -1, ""},
		{"doc too large", post(`{"version":1,"steps":[` + insert(1, strings.Repeat("x", 20)) + `],"clientID":1}`), "", 413, "document size over the limit: 24 > 20", -1, ""},

		{"version ahead", post(`{"version":2,"steps":[],"clientID":1}`), "", 400, "Invalid version 2", -1, ""},
		{"version far ahead", post(`{"version":1e300,"steps":[],"clientID":1}`), "", 400, "Invalid version 9223372036854775807", -1, ""},
		{"version stale", post(`{"version":0,"steps":[` + insert(1, "x") + `],"clientID":1}`), "", 409, "Version not current", -1, ""},
		{"comment-only stale", post(`{"version":0,"steps":[],"clientID":0,"comment":[{"type":"delete","id":9}]}`), "", 409, "Version not current", -1, ""},

		{"step does not decode", post(`{"version":1,"steps":[` + insert(1, "x") + `,{"stepType":"nope"}],"clientID":1}`), "", 422, "No step type nope defined", 1, ""},
		{"step not an object", post(`{"version":1,"steps":[5],"clientID":1}`), "", 422, "", 0, ""},
		{"step does not apply", post(`{"version":1,"steps":[` + insert(1, "x") + `,` + insert(9, "y") + `],"clientID":1}`), "", 422, "Position 9 out of range", 1, ""},
		{"step with a comment after it fails", post(`{"version":1,"steps":[` + insert(7, "x") + `],"clientID":1,"comment":[{"type":"delete","id":9}]}`), "", 422, "out of range", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.req.method, tc.req.target, strings.NewReader(tc.req.body))
			r.RemoteAddr = defaultIP + ":40000"
			switch {
			case tc.ctype != "":
				r.Header.Set("Content-Type", tc.ctype)
			case tc.req.body != "" || tc.req.method == "POST":
				r.Header.Set("Content-Type", "application/json")
			}
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, r)
			body := w.Body.String()
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, body)
			}
			step, msg := checkAnswer(t, w.Code, w.Header(), w.Body.Bytes())
			if tc.status == 200 {
				if body = listTimes(t, body); body != tc.want {
					t.Fatalf("got  %s\nwant %s", body, tc.want)
				}
			} else if step != tc.step || !strings.Contains(msg, tc.want) {
				t.Fatalf("got %s, want step %d and a message containing %q", body, tc.step, tc.want)
			}
			if allow := w.Header().Get("Allow"); allow != tc.allow {
				t.Fatalf("Allow %q, want %q", allow, tc.allow)
			}
			if after := e.mustGet(t, "/docs/d"); after != before {
				t.Fatalf("the document changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestCollabSubmitAndEvents follows a document through steps and
// comments, checking the exact answers.
func TestCollabSubmitAndEvents(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	if got := e.mustGet(t, "/docs"); got != `[]` {
		t.Fatalf("GET /docs: %s", got)
	}
	want := `{"doc":` + emptyBasicDoc + `,"users":1,"version":0,"comments":[],"commentVersion":0}`
	if got := e.mustGet(t, "/docs/x"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := listTimes(t, e.mustGet(t, "/docs")); got != `[{"id":"x","users":1,"version":0,"updated":"T"}]` {
		t.Fatalf("GET /docs: %s", got)
	}

	// A client id beyond int32, one per step; the poster's own steps come
	// back in events (that is how prosemirror-collab confirms them).
	a, b := insert(1, "a"), insert(2, "b")
	if got := e.mustPost(t, "x", `{"version":0,"steps":[`+a+`,`+b+`],"clientID":4294967295,"comment":[]}`); got != `{"version":2,"commentVersion":0}` {
		t.Fatalf("POST: %s", got)
	}
	for _, tc := range []struct{ query, want string }{
		{"version=0&commentVersion=0", `{"version":2,"commentVersion":0,"steps":[` + a + `,` + b + `],"clientIDs":[4294967295,4294967295],"comment":[],"users":1}`},
		{"version=1&commentVersion=0", `{"version":2,"commentVersion":0,"steps":[` + b + `],"clientIDs":[4294967295],"comment":[],"users":1}`},
	} {
		if got := e.mustGet(t, "/docs/x/events?"+tc.query); got != tc.want {
			t.Fatalf("events?%s:\ngot  %s\nwant %s", tc.query, got, tc.want)
		}
	}
	// A string client id, from another client.
	c := insert(3, "c")
	if status, got := e.requestFrom(t, "198.51.100.2", "POST", "/docs/x/events", `{"clientID":"tab-1","version":2,"steps":[`+c+`]}`); status != 200 || got != `{"version":3,"commentVersion":0}` {
		t.Fatalf("POST: %d %s", status, got)
	}
	if got, want := e.mustGet(t, "/docs/x/events?version=2&commentVersion=0"), `{"version":3,"commentVersion":0,"steps":[`+c+`],"clientIDs":["tab-1"],"comment":[],"users":2}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	// A comment-only submission keeps the version.
	create := `{"type":"create","id":4294967295,"from":1,"to":3,"text":"note"}`
	if got := e.mustPost(t, "x", `{"version":3,"steps":[],"clientID":0,"comment":[`+create+`]}`); got != `{"version":3,"commentVersion":1}` {
		t.Fatalf("POST comment: %s", got)
	}
	doc := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"abc"}]}]}`
	want = `{"doc":` + doc + `,"users":2,"version":3,"comments":[{"from":1,"to":3,"text":"note","id":4294967295,"time":"2026-01-01T00:00:00Z"}],"commentVersion":1}`
	if got := e.mustGet(t, "/docs/x"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	want = `{"version":3,"commentVersion":1,"steps":[],"clientIDs":[],"comment":[{"type":"create","id":4294967295,"text":"note","from":1,"to":3,"time":"2026-01-01T00:00:00Z"}],"users":2}`
	if got := e.mustGet(t, "/docs/x/events?version=3&commentVersion=0"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Deleting an unknown comment changes nothing; deleting it is an event.
	if got := e.mustPost(t, "x", `{"version":3,"steps":[],"clientID":0,"comment":[{"type":"delete","id":1}]}`); got != `{"version":3,"commentVersion":1}` {
		t.Fatalf("POST delete unknown: %s", got)
	}
	if got := e.mustPost(t, "x", `{"version":3,"steps":[],"clientID":0,"comment":[{"type":"delete","id":4294967295}]}`); got != `{"version":3,"commentVersion":2}` {
		t.Fatalf("POST delete: %s", got)
	}
	want = `{"version":3,"commentVersion":2,"steps":[],"clientIDs":[],"comment":[{"type":"delete","id":4294967295}],"users":2}`
	if got := e.mustGet(t, "/docs/x/events?version=3&commentVersion=1"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Both lists at once: steps and, created after them, a comment whose
	// range is in the document after the steps.
	d := insert(1, "d")
	if got := e.mustPost(t, "x", `{"version":3,"steps":[`+d+`],"clientID":7,"comment":[{"type":"create","id":-5,"from":1,"to":5,"text":"all"}]}`); got != `{"version":4,"commentVersion":3}` {
		t.Fatalf("POST: %s", got)
	}
	want = `{"version":4,"commentVersion":3,"steps":[` + d + `],"clientIDs":[7],"comment":[{"type":"create","id":-5,"text":"all","from":1,"to":5,"time":"2026-01-01T00:00:00Z"}],"users":2}`
	if got := e.mustGet(t, "/docs/x/events?version=3&commentVersion=2"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// poll starts a long poll from ip and returns the channel its answer
// arrives on.
func (e *collabEnv) poll(ip, target string, ctx context.Context) <-chan *httptest.ResponseRecorder {
	c := make(chan *httptest.ResponseRecorder, 1)
	go func() { c <- e.serve(ip, "GET", target, "", ctx) }()
	return c
}

// answer returns the answer of a poll, failing after 5 seconds.
func answer(t *testing.T, c <-chan *httptest.ResponseRecorder) (int, string) {
	t.Helper()
	select {
	case w := <-c:
		checkAnswer(t, w.Code, w.Header(), w.Body.Bytes())
		return w.Code, w.Body.String()
	case <-time.After(5 * time.Second):
		t.Fatal("the poll did not answer")
		return 0, ""
	}
}

// TestCollabLongPoll checks that a waiting poll answers when another
// client submits steps, and when it submits only a comment.
func TestCollabLongPoll(t *testing.T) {
	e := newCollab(t, Config{PollTimeout: time.Minute}, collab.Config{})
	e.mustGet(t, "/docs/p")
	const poller = "198.51.100.7"

	c := e.poll(poller, "/docs/p/events?version=0&commentVersion=0", nil)
	e.waitWaiting(t, "p", 1)
	select {
	case w := <-c:
		t.Fatalf("the poll answered with nothing new: %s", w.Body)
	default:
	}
	a := insert(1, "a")
	e.mustPost(t, "p", `{"version":0,"steps":[`+a+`],"clientID":5}`)
	if status, got := answer(t, c); status != 200 || got != `{"version":1,"commentVersion":0,"steps":[`+a+`],"clientIDs":[5],"comment":[],"users":2}` {
		t.Fatalf("%d %s", status, got)
	}

	c = e.poll(poller, "/docs/p/events?version=1&commentVersion=0", nil)
	e.waitWaiting(t, "p", 1)
	e.mustPost(t, "p", `{"version":1,"steps":[],"clientID":0,"comment":[{"type":"create","id":3,"from":1,"to":2,"text":"hi"}]}`)
	if status, got := answer(t, c); status != 200 || got != `{"version":1,"commentVersion":1,"steps":[],"clientIDs":[],"comment":[{"type":"create","id":3,"text":"hi","from":1,"to":2,"time":"2026-01-01T00:00:00Z"}],"users":2}` {
		t.Fatalf("%d %s", status, got)
	}

	// Several pollers of one document all wake. They load the document
	// first: a new user would answer those waiting already with the new
	// user count (TestCollabPollUsers).
	pollers := []string{"198.51.100.10", "198.51.100.11", "198.51.100.12"}
	for _, ip := range pollers {
		e.requestFrom(t, ip, "GET", "/docs/p", "")
	}
	var cs []<-chan *httptest.ResponseRecorder
	for _, ip := range pollers {
		cs = append(cs, e.poll(ip, "/docs/p/events?version=1&commentVersion=1", nil))
	}
	e.waitWaiting(t, "p", 3)
	e.mustPost(t, "p", `{"version":1,"steps":[`+insert(1, "b")+`],"clientID":6}`)
	for _, c := range cs {
		if status, got := answer(t, c); status != 200 || !strings.HasPrefix(got, `{"version":2,"commentVersion":1,"steps":[`) {
			t.Fatalf("%d %s", status, got)
		}
	}
}

// TestCollabPollUsers checks that a waiting poll answers when the user
// count changes, with the events JSON (no steps) and the new count, as the
// demo server does: when a new user comes, and when a user's window
// passes. Polls from one address are one user and do not wake each other.
func TestCollabPollUsers(t *testing.T) {
	const poller = "198.51.100.7"
	empty := func(users int) string {
		return `{"version":0,"commentVersion":0,"steps":[],"clientIDs":[],"comment":[],"users":` + strconv.Itoa(users) + `}`
	}
	e := newCollab(t, Config{PollTimeout: time.Minute}, collab.Config{})
	e.mustGet(t, "/docs/p")
	c := e.poll(poller, "/docs/p/events?version=0&commentVersion=0", nil)
	e.waitWaiting(t, "p", 1)
	e.requestFrom(t, "198.51.100.8", "GET", "/docs/p", "")
	if status, got := answer(t, c); status != 200 || got != empty(3) {
		t.Fatalf("new user: %d %s, want %s", status, got, empty(3))
	}

	var cs []<-chan *httptest.ResponseRecorder
	for range 5 {
		cs = append(cs, e.poll(poller, "/docs/p/events?version=0&commentVersion=0", nil))
	}
	e.waitWaiting(t, "p", 5)
	if n := e.users(t, "p"); n != 3 {
		t.Fatalf("%d users with five polls of one, want 3", n)
	}
	e.mustPost(t, "p", `{"version":0,"steps":[`+insert(1, "a")+`],"clientID":1}`)
	for _, c := range cs {
		if status, got := answer(t, c); status != 200 || !strings.HasPrefix(got, `{"version":1,`) || !strings.HasSuffix(got, `"users":3}`) {
			t.Fatalf("%d %s", status, got)
		}
	}

	// On the real clock: the other user expires while the poll waits.
	const window = 100 * time.Millisecond
	e = newCollab(t, Config{PollTimeout: time.Minute}, collab.Config{Now: time.Now, UsersWindow: window})
	e.mustGet(t, "/docs/p")
	start := time.Now()
	c = e.poll(poller, "/docs/p/events?version=0&commentVersion=0", nil)
	if status, got := answer(t, c); status != 200 || got != empty(1) || time.Since(start) < window/2 {
		t.Fatalf("after %v: %d %s, want %s", time.Since(start), status, got, empty(1))
	}
}

// TestCollabPollTimeout checks that a poll with nothing new answers {}
// after Config.PollTimeout, and is not logged as a slow request.
func TestCollabPollTimeout(t *testing.T) {
	const pollTimeout = 300 * time.Millisecond
	e := newCollab(t, Config{PollTimeout: pollTimeout, SlowRequest: pollTimeout / 3, LogRequests: true}, collab.Config{})
	e.mustGet(t, "/docs/p")
	start := time.Now()
	status, got := e.request(t, "GET", "/docs/p/events?version=0&commentVersion=0", "")
	if d := time.Since(start); status != 200 || got != `{}` || d < pollTimeout {
		t.Fatalf("after %v: %d %s", d, status, got)
	}
	logs := e.logs.String()
	if strings.Contains(logs, "slow request") || !strings.Contains(logs, "path=/docs/p/events status=200 bytes=2") || !strings.Contains(logs, "waited=") {
		t.Fatalf("log:\n%s", logs)
	}
}

// TestCollabPollClientGone checks that a poll whose client goes away
// stops waiting: the handler returns and the authority forgets the
// waiter.
func TestCollabPollClientGone(t *testing.T) {
	e := newCollab(t, Config{PollTimeout: time.Minute}, collab.Config{})
	e.mustGet(t, "/docs/p")
	ctx, cancel := context.WithCancel(context.Background())
	c := e.poll("198.51.100.7", "/docs/p/events?version=0&commentVersion=0", ctx)
	e.waitWaiting(t, "p", 1)
	cancel()
	answer(t, c)
	e.clock.Advance(2 * usersWindow)
	if n := e.users(t, "p"); n != 0 {
		t.Fatalf("%d users after the only one left", n)
	}
}

// TestCollabPollOverTheWire runs long polls through net/http with read
// and write timeouts shorter than the poll: the poll gets its own
// deadlines, and answers both at its timeout and on news after the
// connection's timeouts passed. Shutdown answers waiting polls at once.
func TestCollabPollOverTheWire(t *testing.T) {
	const pollTimeout = time.Second
	e := newCollab(t, Config{
		PollTimeout: pollTimeout,
		Timeouts:    Timeouts{ReadHeader: 100 * time.Millisecond, Read: 100 * time.Millisecond, Write: 100 * time.Millisecond},
	}, collab.Config{})
	addr, stop := serving(t, e.s)
	get := func(target string) (int, string, error) {
		resp, err := http.Get("http://" + addr + target)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	if status, _, err := get("/docs/p"); err != nil || status != 200 {
		t.Fatal(status, err)
	}
	e.mustGet(t, "/docs/p") // the poster is a user already: its post wakes the poll with steps

	start := time.Now()
	status, body, err := get("/docs/p/events?version=0&commentVersion=0")
	if d := time.Since(start); err != nil || status != 200 || body != "{}" || d < pollTimeout {
		t.Fatalf("after %v: %d %q %v", d, status, body, err)
	}

	type result struct {
		status int
		body   string
		err    error
	}
	poll := func() <-chan result {
		c := make(chan result, 1)
		go func() {
			status, body, err := get("/docs/p/events?version=0&commentVersion=0")
			c <- result{status, body, err}
		}()
		return c
	}
	c := poll()
	e.waitWaiting(t, "p", 1)
	time.Sleep(250 * time.Millisecond) // past the connection's timeouts
	e.mustPost(t, "p", `{"version":0,"steps":[`+insert(1, "a")+`],"clientID":1}`)
	r := <-c
	if r.err != nil || r.status != 200 || !strings.HasPrefix(r.body, `{"version":1,`) {
		t.Fatalf("%+v", r)
	}

	// Shutdown: a waiting poll answers {} at once, and Serve returns.
	c = func() <-chan result {
		c := make(chan result, 1)
		go func() {
			status, body, err := get("/docs/p/events?version=1&commentVersion=0")
			c <- result{status, body, err}
		}()
		return c
	}()
	e.waitWaiting(t, "p", 1)
	start = time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	r = <-c
	if d := time.Since(start); r.err != nil || r.status != 200 || r.body != "{}" || d >= pollTimeout/2 {
		t.Fatalf("after %v: %+v", d, r)
	}
}

func TestCollabUser(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ff::/48")}
	for _, tc := range []struct {
		trust   bool
		proxies []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{false, nil, "192.0.2.1:1234", nil, "192.0.2.1"},
		{false, nil, "[2001:db8::1]:443", nil, "2001:db8::1"},
		{false, nil, "192.0.2.1:1234", []string{"203.0.113.5"}, "192.0.2.1"},
		{true, nil, "192.0.2.1:1234", nil, "192.0.2.1"},
		{true, nil, "192.0.2.1:1234", []string{"203.0.113.5"}, "203.0.113.5"},
		// Without TrustedProxies the connection's peer is the one proxy:
		// the right-most entry is what it appended, the rest the client's.
		{true, nil, "192.0.2.1:1234", []string{"203.0.113.5, 10.0.0.1"}, "10.0.0.1"},
		{true, nil, "192.0.2.1:1234", []string{" 203.0.113.5 ", "10.0.0.1"}, "10.0.0.1"},
		{true, nil, "192.0.2.1:1234", []string{"10.0.0.1,"}, "10.0.0.1"},
		{true, nil, "192.0.2.1:1234", []string{"2001:db8::2"}, "2001:db8::2"},
		{true, nil, "192.0.2.1:1234", []string{"203.0.113.5:4711"}, "203.0.113.5"},
		{true, nil, "192.0.2.1:1234", []string{"[2001:db8::2]:4711"}, "2001:db8::2"},
		{true, nil, "192.0.2.1:1234", []string{"unknown"}, "192.0.2.1"},
		{true, nil, "192.0.2.1:1234", []string{"203.0.113.5, unknown"}, "192.0.2.1"},
		{true, nil, "192.0.2.1:1234", []string{""}, "192.0.2.1"},
		// With TrustedProxies: only their connections are believed, and
		// the right-most entry that is not one of theirs is the client.
		{true, proxies, "192.0.2.1:1234", []string{"203.0.113.5"}, "192.0.2.1"},
		{true, proxies, "10.0.0.1:1234", []string{"203.0.113.5"}, "203.0.113.5"},
		{true, proxies, "10.0.0.1:1234", []string{"198.51.100.7, 203.0.113.5, 10.9.9.9"}, "203.0.113.5"},
		{true, proxies, "10.0.0.1:1234", []string{"198.51.100.7, 203.0.113.5", "10.9.9.9, 10.0.0.2"}, "203.0.113.5"},
		{true, proxies, "[2001:db8:ff::1]:1234", []string{"2001:db8::7, 2001:db8:ff::2"}, "2001:db8::7"},
		{true, proxies, "[::ffff:10.0.0.1]:1234", []string{"203.0.113.5"}, "203.0.113.5"},
		{true, proxies, "10.0.0.1:1234", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{true, proxies, "10.0.0.1:1234", nil, "10.0.0.1"},
		{false, nil, "pipe", nil, "pipe"},
		{true, nil, "pipe", []string{"203.0.113.5"}, "pipe"},
	} {
		s, err := New(Config{TrustProxy: tc.trust, TrustedProxies: tc.proxies})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/docs/x", nil)
		r.RemoteAddr = tc.remote
		r.Header["X-Forwarded-For"] = tc.xff
		if got := s.user(r); got != tc.want {
			t.Errorf("trust %v %v, remote %q, X-Forwarded-For %q: %q, want %q", tc.trust, tc.proxies, tc.remote, tc.xff, got, tc.want)
		}
	}
	// End to end: two clients behind one proxy are two users.
	for _, trust := range []bool{false, true} {
		e := newCollab(t, Config{TrustProxy: trust}, collab.Config{})
		for _, client := range []string{"203.0.113.5", "203.0.113.6"} {
			r := httptest.NewRequest("GET", "/docs/x", nil)
			r.RemoteAddr = "10.0.0.1:5555"
			r.Header.Set("X-Forwarded-For", client)
			e.s.ServeHTTP(httptest.NewRecorder(), r)
		}
		want := 1
		if trust {
			want = 2
		}
		if n := e.users(t, "x"); n != want {
			t.Errorf("TrustProxy %v: %d users, want %d", trust, n, want)
		}
	}
}

// TestTrustProxySpoof: behind a proxy that appends to X-Forwarded-For, a
// client that sends an X-Forwarded-For of its own cannot choose the
// address that user counts and limits go by: ten requests, each claiming
// another first address, are one user, and ten waiting polls so are one
// client's, the eleventh refused by Limits.MaxClientConns (429).
func TestTrustProxySpoof(t *testing.T) {
	for _, proxies := range [][]netip.Prefix{nil, {netip.MustParsePrefix("127.0.0.0/8")}} {
		e := newCollab(t, Config{TrustProxy: true, TrustedProxies: proxies, PollTimeout: 10 * time.Second,
			Limits: Limits{MaxClientConns: 10}}, collab.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		do := func(path string, i int) *httptest.ResponseRecorder {
			r := httptest.NewRequestWithContext(ctx, "GET", path, nil)
			r.RemoteAddr = "127.0.0.1:5555"
			// The client's own claim, then what the proxy appended.
			r.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d, 203.0.113.5", i))
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, r)
			return w
		}
		for i := range 10 {
			if w := do("/docs/x", i); w.Code != 200 {
				t.Fatalf("GET: %d %s", w.Code, w.Body)
			}
		}
		if n := e.users(t, "x"); n != 1 {
			t.Fatalf("trusted proxies %v: ten requests of one client claiming ten addresses: %d users, want 1", proxies, n)
		}
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() { do("/docs/x/events?version=0&commentVersion=0", i) })
		}
		e.waitWaiting(t, "x", 10)
		w := do("/docs/x/events?version=0&commentVersion=0", 11)
		cancel()
		wg.Wait()
		if w.Code != 429 || !strings.Contains(w.Body.String(), "Limits.MaxClientConns") {
			t.Errorf("trusted proxies %v: the 11th poll of one client claiming another address: %d %s, want 429", proxies, w.Code, w.Body)
		}
	}
}

// TestCollabOff checks that without Config.Collab the routes do not
// exist.
func TestCollabOff(t *testing.T) {
	s, _ := newServer(t, Config{})
	for _, target := range []string{"/docs", "/docs/x", "/docs/x/events?version=0&commentVersion=0"} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		if w.Code != 404 {
			t.Errorf("GET %s: %d %s", target, w.Code, w.Body)
		}
	}
}

// TestCollabConcurrent runs posters (retrying on 409), a commenter and
// long pollers on one document at once (run it with -race): every poller
// sees every step once, in order, with one client id per step, and the
// document ends with every poster's text.
func TestCollabConcurrent(t *testing.T) {
	const posters, stepsEach, pollers, comments = 4, 8, 3, 4
	const total = posters * stepsEach
	e := newCollab(t, Config{PollTimeout: 5 * time.Second}, collab.Config{})
	e.mustGet(t, "/docs/c")

	type events struct {
		Version        int64             `json:"version"`
		CommentVersion int64             `json:"commentVersion"`
		Steps          []json.RawMessage `json:"steps"`
		ClientIDs      []json.RawMessage `json:"clientIDs"`
		Comment        []json.RawMessage `json:"comment"`
	}
	current := func(ip string) (int64, error) {
		w := e.serve(ip, "GET", "/docs/c", "", nil)
		var st struct{ Version int64 }
		if err := json.Unmarshal(w.Body.Bytes(), &st); w.Code != 200 || err != nil {
			return 0, fmt.Errorf("GET: %d %s", w.Code, w.Body)
		}
		return st.Version, nil
	}
	// submit posts body (a format with the version as %d) until accepted.
	submit := func(ip, format string) error {
		for {
			v, err := current(ip)
			if err != nil {
				return err
			}
			w := e.serve(ip, "POST", "/docs/c/events", fmt.Sprintf(format, v), nil)
			switch w.Code {
			case 200:
				var res struct{ Version int64 }
				if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Version < v {
					return fmt.Errorf("answer %s to a POST at %d", w.Body, v)
				}
				return nil
			case 409:
			default:
				return fmt.Errorf("POST: %d %s", w.Code, w.Body)
			}
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, posters+pollers+1)
	for p := range posters {
		wg.Go(func() {
			ip := "198.51.100." + strconv.Itoa(p+1)
			for range stepsEach {
				if err := submit(ip, `{"version":%d,"steps":[`+insert(1, strconv.Itoa(p))+`],"clientID":`+strconv.Itoa(p+1)+`}`); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range comments {
			for {
				if v, err := current("198.51.100.99"); err != nil || v > 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
			create := `{"type":"create","id":` + strconv.Itoa(i) + `,"from":1,"to":2,"text":"c"}`
			if err := submit("198.51.100.99", `{"version":%d,"steps":[],"clientID":0,"comment":[`+create+`]}`); err != nil {
				errs <- err
				return
			}
		}
	})
	seen := make([][posters]int, pollers)
	for q := range pollers {
		wg.Go(func() {
			ip := "203.0.113." + strconv.Itoa(q+1)
			var v, cv int64
			for v < total || cv < comments {
				w := e.serve(ip, "GET", fmt.Sprintf("/docs/c/events?version=%d&commentVersion=%d", v, cv), "", nil)
				var ev events
				if err := json.Unmarshal(w.Body.Bytes(), &ev); w.Code != 200 || err != nil {
					errs <- fmt.Errorf("poll: %d %s", w.Code, w.Body)
					return
				}
				if ev.Steps == nil {
					continue // {}: timed out
				}
				if len(ev.ClientIDs) != len(ev.Steps) || ev.Version != v+int64(len(ev.Steps)) || ev.CommentVersion < cv {
					errs <- fmt.Errorf("poll at %d/%d: %s", v, cv, w.Body)
					return
				}
				for _, id := range ev.ClientIDs {
					n, err := strconv.Atoi(string(id))
					if err != nil || n < 1 || n > posters {
						errs <- fmt.Errorf("client id %s", id)
						return
					}
					seen[q][n-1]++
				}
				v, cv = ev.Version, ev.CommentVersion
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for q := range pollers {
		for p := range posters {
			if seen[q][p] != stepsEach {
				t.Errorf("poller %d saw %d steps of poster %d, want %d", q, seen[q][p], p, stepsEach)
			}
		}
	}
	var st struct {
		Version  int64
		Doc      json.RawMessage
		Comments []json.RawMessage
	}
	if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/c")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != total || len(st.Comments) != comments {
		t.Fatalf("version %d with %d comments", st.Version, len(st.Comments))
	}
	for p := range posters {
		if n := strings.Count(string(st.Doc), strconv.Itoa(p)); n != stepsEach {
			t.Errorf("the document has %d of poster %d's %d insertions: %s", n, p, stepsEach, st.Doc)
		}
	}
}

// BenchmarkCollabSubmit measures a POST of one step and the poll that
// receives it, the hot path of an editing session.
func BenchmarkCollabSubmit(b *testing.B) {
	e := newCollab(b, Config{LogRequests: false}, collab.Config{})
	w := &discardWriter{h: http.Header{}}
	get := httptest.NewRequest("GET", "/docs/b", nil)
	e.s.ServeHTTP(w, get)
	step := insert(1, "x")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body := `{"version":` + strconv.Itoa(i) + `,"steps":[` + step + `],"clientID":1}`
		r := httptest.NewRequest("POST", "/docs/b/events", strings.NewReader(body))
		e.s.ServeHTTP(w, r)
		if w.status != 200 {
			b.Fatal(w.status)
		}
		r = httptest.NewRequest("GET", "/docs/b/events?version="+strconv.Itoa(i)+"&commentVersion=0", nil)
		e.s.ServeHTTP(w, r)
		if w.status != 200 {
			b.Fatal(w.status)
		}
	}
}

// failingStore is a store whose calls fail while fail is set, as with a
// full disk or a lost database connection.
type failingStore struct {
	store.Store
	fail atomic.Bool
}

var errDiskFull = errors.New("database or disk is full")

func (s *failingStore) check() error {
	if s.fail.Load() {
		return errDiskFull
	}
	return nil
}

func (s *failingStore) Load(ctx context.Context, id string) (store.Head, error) {
	if err := s.check(); err != nil {
		return store.Head{}, err
	}
	return s.Store.Load(ctx, id)
}

func (s *failingStore) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.Append(ctx, id, base, steps, meta)
}

func (s *failingStore) List(ctx context.Context) ([]store.DocInfo, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.List(ctx)
}

// TestCollabUnavailable checks the answers when the store fails (503
// with Retry-After, the cause in the log, nothing changed, and success
// once the store is back) and when the authority is closed (503).
func TestCollabUnavailable(t *testing.T) {
	st := &failingStore{Store: memstore.New()}
	e := newCollab(t, Config{}, collab.Config{Store: st})
	e.mustPost(t, "x", `{"version":0,"clientID":1,"steps":[`+insert(1, "a")+`]}`)
	before := e.serve(defaultIP, "GET", "/docs/x", "", nil).Body.String()

	st.fail.Store(true)
	post := `{"version":1,"clientID":1,"steps":[` + insert(1, "b") + `]}`
	for _, r := range []struct{ method, target, body, cause string }{
		{"POST", "/docs/x/events", post, `collab: append to \"x\": database or disk is full`},
		{"GET", "/docs", "", `collab: list: database or disk is full`},
		{"GET", "/docs/y", "", `collab: load \"y\": database or disk is full`},
	} {
		e.logs.Reset()
		w := e.serve(defaultIP, r.method, r.target, r.body, nil)
		if w.Code != 503 || w.Body.String() != `{"error":{"message":"storage unavailable: try again later"}}` || w.Header().Get("Retry-After") != "1" {
			t.Errorf("%s %s with a failing store: %d %s (Retry-After %q)", r.method, r.target, w.Code, w.Body, w.Header().Get("Retry-After"))
		}
		if l := e.logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "status=503") || !strings.Contains(l, `error="`+r.cause+`"`) {
			t.Errorf("%s %s: log:\n%s", r.method, r.target, l)
		}
	}
	if got := e.serve(defaultIP, "GET", "/docs/x", "", nil).Body.String(); got != before {
		t.Fatalf("document after the failed submission:\n%s\nwant\n%s", got, before)
	}

	st.fail.Store(false)
	if w := e.serve(defaultIP, "POST", "/docs/x/events", post, nil); w.Code != 200 || w.Body.String() != `{"version":2,"commentVersion":0}` {
		t.Fatalf("the same submission once the store is back: %d %s", w.Code, w.Body)
	}
	for _, target := range []string{"/docs", "/docs/y"} {
		if w := e.serve(defaultIP, "GET", target, "", nil); w.Code != 200 {
			t.Errorf("GET %s once the store is back: %d %s", target, w.Code, w.Body)
		}
	}

	e.auth.Close()
	for _, r := range []struct{ method, target, body string }{
		{"GET", "/docs", ""},
		{"GET", "/docs/x", ""},
		{"GET", "/docs/x/events?version=0&commentVersion=0", ""},
		{"POST", "/docs/x/events", `{"version":0}`},
	} {
		if w := e.serve(defaultIP, r.method, r.target, r.body, nil); w.Code != 503 || w.Body.String() != `{"error":{"message":"shutting down"}}` {
			t.Errorf("%s %s after Close: %d %s", r.method, r.target, w.Code, w.Body)
		}
	}
}

// TestDocumentNames: any UTF-8 name without control characters is a
// document id, stored and listed exactly as given (percent-encoded in
// the URL): spaces, accents, emoji, "/" and ".." inside a name, up to
// 512 bytes.
func TestDocumentNames(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	names := []string{"My notes", "Café crème", "😀 plans", "team-a/notes", "a..b", "%41", strings.Repeat("é", 256)}
	for _, name := range names {
		path := "/docs/" + url.PathEscape(name)
		if w := e.serve(defaultIP, "POST", path+"/events", `{"version":0,"clientID":1,"steps":[`+insert(1, "x")+`]}`, nil); w.Code != 200 {
			t.Errorf("POST to %q: %d %s", name, w.Code, w.Body)
			continue
		}
		var st struct{ Version int }
		if w := e.serve(defaultIP, "GET", path, "", nil); w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &st) != nil || st.Version != 1 {
			t.Errorf("GET %q: %d %s", name, w.Code, w.Body)
		}
	}
	var listed []struct{ ID string }
	w := e.serve(defaultIP, "GET", "/docs", "", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &listed); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range listed {
		ids = append(ids, d.ID)
	}
	for _, name := range names {
		if !slices.Contains(ids, name) {
			t.Errorf("GET /docs does not list %q exactly: %q", name, ids)
		}
	}
}

// listTimes replaces the times of a GET /docs answer, which must be
// RFC 3339, by "T".
func listTimes(t *testing.T, body string) string {
	t.Helper()
	return updatedTime.ReplaceAllStringFunc(body, func(m string) string {
		v := m[len(`"updated":"`) : len(m)-1]
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			t.Errorf("updated %q: %v", v, err)
		}
		return `"updated":"T"`
	})
}

var updatedTime = regexp.MustCompile(`"updated":"[^"]*"`)
