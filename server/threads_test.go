package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// TestThreadsHTTP runs a thread's operations over POST
// /docs/{id}/events under the roles of rolePolicy: creating, replying,
// resolving and reopening with the comment role; editing and deleting
// one's own only, unless admin (403 naming the rule, nothing applied).
// Events answers carry the changed threads in "threads" for a client
// that asks with threadVersion, never in "comment", and thread
// operations count in "threadVersion", not "commentVersion"; a long poll
// with threadVersion answers them, one without waits.
func TestThreadsHTTP(t *testing.T) {
	e := newCollab(t, Config{PollTimeout: time.Minute, Policy: rolePolicy{commenters: map[string]bool{"carol": true, "bob": true}, editors: map[string]bool{"dave": true}}}, collab.Config{})
	post := func(token, comment string) (int, string) {
		t.Helper()
		r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(`{"version":1,"clientID":0,"steps":[],"comment":[`+comment+`]}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	get := func(target string) string {
		t.Helper()
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer root")
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		return w.Body.String()
	}
	r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(`{"version":0,"clientID":1,"steps":[`+insert(1, "hello world")+`]}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer alice")
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatal(w.Code, w.Body)
	}
	for _, s := range []struct{ token, comment, want string }{
		{"carol", `{"type":"create","id":1,"from":1,"to":6,"text":"hello?","author":"mallory","time":"2000-01-01T00:00:00Z"}`, `{"version":1,"commentVersion":1}`},
		{"bob", `{"type":"reply","id":2,"thread":1,"text":"hi","author":"mallory"}`, `{"version":1,"commentVersion":1}`},
		{"bob", `{"type":"edit","id":2,"text":"hi there"}`, `{"version":1,"commentVersion":1}`},
		{"bob", `{"type":"resolve","id":1}`, `{"version":1,"commentVersion":1}`},
	} {
		if code, body := post(s.token, s.comment); code != 200 || body != s.want {
			t.Fatalf("%s %s: %d %s, want %s", s.token, s.comment, code, body, s.want)
		}
	}
	thread := `{"from":1,"to":6,"text":"hello?","id":1,"author":"carol","time":"2026-01-01T00:00:00Z","resolved":true,` +
		`"replies":[{"id":2,"text":"hi there","author":"bob","time":"2026-01-01T00:00:00Z","edited":"2026-01-01T00:00:00Z"}]}`
	if got := get("/docs/d"); !strings.Contains(got, `"comments":[`+thread+`],"commentVersion":1,"threadVersion":3}`) {
		t.Errorf("GET /docs/d: %s, want %s", got, thread)
	}
	create := `{"version":1,"commentVersion":1,"steps":[],"clientIDs":[],"comment":[{"type":"create","id":1,"text":"hello?","from":1,"to":6,"author":"carol","time":"2026-01-01T00:00:00Z"}]`
	if got := get("/docs/d/events?version=1&commentVersion=0"); !strings.HasPrefix(got, create+`,"users":`) {
		t.Errorf("events after 0:\n got %s\nwant %s…", got, create)
	}
	want := create + `,"threads":[` + thread + `],"threadVersion":3,"users":`
	if got := get("/docs/d/events?version=1&commentVersion=0&threadVersion=1"); !strings.HasPrefix(got, want) {
		t.Errorf("events after 0, 1:\n got %s\nwant %s…", got, want)
	}
	for _, q := range []string{"threadVersion=x", "threadVersion=-1", "threadVersion="} {
		r := httptest.NewRequest("GET", "/docs/d/events?version=1&commentVersion=0&"+q, nil)
		r.Header.Set("Authorization", "Bearer root")
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "threadVersion") {
			t.Errorf("%s: %d %s, want 400", q, w.Code, w.Body)
		}
	}

	// Refusals: 403 naming the rule, and nothing of the submission
	// applied.
	for _, s := range []struct{ token, comment, want string }{
		{"bob", `{"type":"reopen","id":1},{"type":"edit","id":1,"text":"mine now"}`, "comment 1 is not yours: only its author or an admin may edit it"},
		{"carol", `{"type":"deleteReply","id":2}`, "comment 2 is not yours: only its author or an admin may delete it"},
		{"dave", `{"type":"edit","id":2,"text":"an editor's"}`, "only its author or an admin may edit it"},
		{"dave", `{"type":"delete","id":1}`, "only its author or an admin may delete it"},
	} {
		if code, body := post(s.token, s.comment); code != http.StatusForbidden || !strings.Contains(unquote(body), s.want) {
			t.Errorf("%s %s: %d %s, want 403 %q", s.token, s.comment, code, body, s.want)
		}
	}
	for _, s := range []struct{ comment, want string }{
		{`{"type":"reply","id":3,"text":"x"}`, `missing "comment[0].thread"`},
		{`{"type":"reply","id":3,"thread":1}`, `missing "comment[0].text"`},
		{`{"type":"edit","id":2}`, `missing "comment[0].text"`},
		{`{"type":"reply","id":3,"thread":"1","text":"x"}`, `"comment[0].thread" must be an integer (found string)`},
		{`{"type":"reply","id":3,"thread":1.5,"text":"x"}`, `"comment[0].thread" must be an integer from -2^53 to 2^53`},
		{`{"type":"resolve"}`, `missing "comment[0].id"`},
		{`{"type":"reply","id":1,"thread":1,"text":"x"}`, "a comment 1 exists"},
	} {
		if code, body := post("carol", s.comment); code != http.StatusBadRequest || !strings.Contains(unquote(body), s.want) {
			t.Errorf("%s: %d %s, want 400 %q", s.comment, code, body, s.want)
		}
	}
	if got := get("/docs/d"); !strings.Contains(got, `"comments":[`+thread+`],"commentVersion":1,"threadVersion":3}`) {
		t.Errorf("after the refusals: %s", got)
	}

	// A reply alone answers a poll that follows threads at once, and
	// wakes a waiting one; a poll that does not waits on.
	poll := func(target string) <-chan *httptest.ResponseRecorder {
		c := make(chan *httptest.ResponseRecorder, 1)
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer root")
		go func() {
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, r)
			c <- w
		}()
		return c
	}
	plain := poll("/docs/d/events?version=1&commentVersion=1")
	follower := poll("/docs/d/events?version=1&commentVersion=1&threadVersion=3")
	e.waitWaiting(t, "d", 2)
	if code, body := post("root", `{"type":"reopen","id":1}`); code != 200 {
		t.Fatal(code, body)
	}
	if code, got := answer(t, follower); code != 200 || !strings.Contains(got, `"commentVersion":1,"steps":[],"clientIDs":[],"comment":[],"threads":[{"from":1,"to":6,"text":"hello?","id":1,`) ||
		strings.Contains(got, `"resolved"`) || !strings.Contains(got, `"threadVersion":4,`) {
		t.Errorf("the follower's poll: %d %s", code, got)
	}
	select {
	case w := <-plain:
		t.Errorf("a poll not following threads answered: %s", w.Body)
	case <-time.After(50 * time.Millisecond):
	}
	if got := get("/docs/d/events?version=1&commentVersion=1&threadVersion=3"); !strings.Contains(got, `"threads":[`) {
		t.Errorf("a poll behind on threads: %s", got)
	}
	// The admin edits and deletes anyone's.
	if code, body := post("root", `{"type":"edit","id":1,"text":"moderated"},{"type":"deleteReply","id":2}`); code != 200 || body != `{"version":1,"commentVersion":1}` {
		t.Errorf("the admin: %d %s", code, body)
	}
	if got := get("/docs/d"); !strings.Contains(got, `"text":"moderated","id":1,"author":"carol","time":"2026-01-01T00:00:00Z","edited":"2026-01-01T00:00:00Z"}]`) {
		t.Errorf("after the admin: %s", got)
	}
	// Deleting the thread is a delete among the comment events.
	if code, body := post("carol", `{"type":"delete","id":1}`); code != 200 {
		t.Fatal(code, body)
	}
	if code, got := answer(t, plain); code != 200 || !strings.Contains(got, `"commentVersion":2,`) || !strings.Contains(got, `"comment":[{"type":"delete","id":1}]`) || strings.Contains(got, "thread") {
		t.Errorf("the plain poll: %d %s", code, got)
	}
}

// unquote returns an error answer with its quotes unescaped.
func unquote(body string) string { return strings.ReplaceAll(body, `\"`, `"`) }

// TestThreadLimitsHTTP checks the 413s of thread operations: a reply over
// Limits.MaxComments or MaxCommentBytes, a text over MaxCommentText.
func TestThreadLimitsHTTP(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lim     collab.Limits
		comment string
		want    string
	}{
		{"MaxComments", collab.Limits{MaxComments: 1}, `{"type":"reply","id":2,"thread":1,"text":"r"}`, "comments over the limit: 2 > 1"},
		{"MaxCommentBytes", collab.Limits{MaxCommentBytes: 300}, `{"type":"reply","id":2,"thread":1,"text":"r"}`, "Limits.MaxCommentBytes"},
		{"MaxCommentText", collab.Limits{MaxCommentText: 3}, `{"type":"edit","id":1,"text":"long"}`, "bytes in the text of comment event 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newCollab(t, Config{}, collab.Config{Limits: tt.lim})
			e.mustPost(t, "d", `{"version":0,"clientID":1,"steps":[`+insert(1, "hello")+`],"comment":[{"type":"create","id":1,"from":1,"to":3,"text":"c"}]}`)
			if code, body := e.request(t, "POST", "/docs/d/events", `{"version":1,"comment":[`+tt.comment+`]}`); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s, want 413 %q", code, body, tt.want)
			}
		})
	}
}

// TestThreadsWS runs thread operations over WebSocket: the same decoder
// and errors as over HTTP, and the changed threads pushed in "threads",
// never in "comment"; a hello's threadVersion (0 when absent) gives the
// welcome the threads changed since.
func TestThreadsWS(t *testing.T) {
	e := newWS(t, Config{Policy: rolePolicy{commenters: map[string]bool{"carol": true, "bob": true}}}, collab.Config{}, nil)
	e.post(t, "d", 0, "1", insert(1, "hello world"))
	a, b := e.dial(t, "d", false), e.dial(t, "d", false)
	a.send(`{"type":"hello","version":1,"commentVersion":0,"clientID":5,"token":"carol"}`)
	a.next("welcome")
	b.send(`{"type":"hello","version":1,"commentVersion":0,"clientID":6,"token":"bob"}`)
	b.next("welcome")
	a.send(`{"type":"steps","id":1,"version":1,"clientID":5,"steps":[],"comment":[{"type":"create","id":1,"from":1,"to":6,"text":"hello?"}]}`)
	if m := a.nextSkipping("steps"); len(m.Comment) != 1 || len(m.Threads) != 0 {
		t.Errorf("the create's push: %s", m.raw)
	}
	a.nextSkipping("ack")
	b.nextSkipping("steps")
	b.send(`{"type":"steps","id":1,"version":1,"clientID":6,"steps":[],"comment":[{"type":"reply","id":2,"thread":1,"text":"hi"},{"type":"resolve","id":1}]}`)
	for _, c := range []*wsClient{a, b} {
		m := c.nextSkipping("steps")
		if len(m.Comment) != 0 || len(m.Threads) != 1 || !strings.Contains(string(m.Threads[0]), `"resolved":true,"replies":[{"id":2,"text":"hi","author":"bob",`) {
			t.Errorf("the reply's push: %s", m.raw)
		}
	}
	b.nextSkipping("ack")
	b.send(`{"type":"steps","id":2,"version":1,"clientID":6,"steps":[],"comment":[{"type":"edit","id":1,"text":"mine"}]}`)
	if m := b.nextSkipping("error"); m.Status != http.StatusForbidden || !strings.Contains(m.Message, "only its author or an admin may edit it") {
		t.Errorf("bob edits carol's over WebSocket: %s, want error 403", m.raw)
	}
	b.send(`{"type":"steps","id":3,"version":1,"clientID":6,"steps":[],"comment":[{"type":"reply","id":3,"text":"x"}]}`)
	if m := b.nextSkipping("error"); m.Status != http.StatusBadRequest || !strings.Contains(m.Message, `missing "comment[0].thread"`) {
		t.Errorf("a reply without its thread over WebSocket: %s, want error 400", m.raw)
	}
	// A client joining behind gets the thread in its welcome.
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":1,"commentVersion":1,"clientID":7,"token":"carol"}`)
	if m := c.next("welcome"); len(m.Threads) != 1 || len(m.Comment) != 0 || !strings.Contains(m.raw, `"threadVersion":2,`) {
		t.Errorf("the welcome behind a reply: %s", m.raw)
	}
	// One at the current thread version gets none.
	d := e.dial(t, "d", false)
	d.send(`{"type":"hello","version":1,"commentVersion":1,"threadVersion":2,"clientID":8,"token":"carol"}`)
	if m := d.next("welcome"); len(m.Threads) != 0 || !strings.Contains(m.raw, `"threads":[],"threadVersion":2,`) {
		t.Errorf("the welcome at the thread version: %s", m.raw)
	}
	f := e.dial(t, "d", false)
	f.send(`{"type":"hello","version":1,"commentVersion":1,"threadVersion":"2","clientID":9,"token":"carol"}`)
	if m := f.next("error"); m.Status != http.StatusBadRequest || !strings.Contains(m.Message, "threadVersion") {
		t.Errorf("a hello with a string threadVersion: %s", m.raw)
	}
}
