package server

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// TestCommits: POST /docs/{id}/commits rebases a stale commit, answers a
// resend as it was, and refuses what it must with the status and message
// of docs/api.md, changing nothing.
func TestCommits(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{History: 3})
	post := func(body string) (int, string) {
		t.Helper()
		return e.request(t, "POST", "/docs/d/commits", body)
	}
	if code, body := post(`{"version":0,"ref":"a","clientID":1,"steps":[` + insert(1, "hello") + `]}`); code != 200 ||
		body != `{"from":0,"version":1,"steps":[`+insert(1, "hello")+`],"dropped":[],"commentVersion":0}` {
		t.Fatalf("a current commit: %d %s", code, body)
	}
	if code, body := post(`{"version":1,"ref":"b","clientID":2,"steps":[` + insert(1, ">") + `]}`); code != 200 {
		t.Fatalf("b: %d %s", code, body)
	}
	// Made at version 1 too: mapped over b's step.
	c := `{"version":1,"ref":"c","clientID":3,"steps":[` + insert(6, "!") + `,{"stepType":"replace","from":2,"to":4}]}`
	want := `{"from":2,"version":4,"steps":[` + insert(7, "!") + `,{"stepType":"replace","from":3,"to":5}],"dropped":[],"commentVersion":0}`
	if code, body := post(c); code != 200 || body != want {
		t.Fatalf("a stale commit: %d %s, want %s", code, body, want)
	}
	if code, body := post(c); code != 200 || body != want {
		t.Fatalf("the commit sent again: %d %s, want %s", code, body, want)
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"version":4`) || !strings.Contains(doc, `"text":">hlo!"`) {
		t.Fatalf("GET /docs/d: %s", doc)
	}
	for _, tt := range []struct {
		body, want string
		code       int
	}{
		{`{"version":1,"ref":"c","clientID":3,"steps":[` + insert(1, "x") + `]}`, `the ref names another commit`, 422},
		{`{"version":9,"ref":"x","clientID":3,"steps":[` + insert(1, "x") + `]}`, `Invalid version 9`, 400},
		{`{"version":0,"ref":"x","clientID":3,"steps":[` + insert(1, "x") + `]}`, `History no longer available`, 410},
		{`{"version":4,"clientID":3,"steps":[` + insert(1, "x") + `]}`, `missing \"ref\"`, 400},
		{`{"version":4,"ref":"","clientID":3,"steps":[]}`, `\"ref\" must be a string of 1 to 64 bytes (found 0)`, 400},
		{`{"version":4,"ref":7,"clientID":3,"steps":[]}`, `\"ref\" must be a string (found number)`, 400},
		{`{"version":4,"ref":"` + strings.Repeat("r", 65) + `","clientID":3,"steps":[]}`, `(found 65)`, 400},
		{`{"version":2,"ref":"y","clientID":3,"steps":[{"stepType":"replace","from":3,"to":1}]}`, `"step":0`, 422},
		{`{"version":4,"ref":"z","clientID":3,"steps":[{"stepType":"replace","from":30,"to":31}]}`, `"step":0`, 422},
	} {
		code, body := post(tt.body)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s, want %d with %s", tt.body, code, body, tt.code, tt.want)
		}
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"version":4`) {
		t.Fatalf("refused commits changed the document: %s", doc)
	}
}

// TestCommitsPolicy: a commit is authorized as a submission: a commenter
// may commit comment events, not steps.
func TestCommitsPolicy(t *testing.T) {
	e := newCollab(t, Config{Policy: rolePolicy{commenters: map[string]bool{"carol": true}}}, collab.Config{})
	post := func(token, body string) (int, string) {
		r := httptest.NewRequest("POST", "/docs/d/commits", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := post("alice", `{"version":0,"ref":"a","clientID":1,"steps":[`+insert(1, "hello")+`]}`); code != 200 {
		t.Fatalf("alice's commit: %d %s", code, body)
	}
	if code, body := post("carol", `{"version":0,"ref":"c","clientID":2,"steps":[`+insert(1, "x")+`]}`); code != 403 {
		t.Fatalf("carol's steps: %d %s, want 403", code, body)
	}
	if code, body := post("carol", `{"version":1,"ref":"c2","clientID":2,"steps":[],"comment":[{"type":"create","id":1,"from":1,"to":3,"text":"hi"}]}`); code != 200 ||
		!strings.Contains(body, `"commentVersion":1`) {
		t.Fatalf("carol's comment: %d %s", code, body)
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"version":1`) || !strings.Contains(doc, `"author":"carol"`) {
		t.Fatalf("GET /docs/d: %s", doc)
	}
}

// TestWSCommits: a connection whose hello asks for commit mode sends
// commit messages; a stale one is rebased, its steps pushed before its
// answer; sent again it is answered as it was. The modes do not mix.
func TestWSCommits(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	hello := func(c *wsClient, clientID string) {
		c.send(`{"type":"hello","version":0,"clientID":` + clientID + `,"mode":"commit"}`)
		c.next("welcome")
	}
	commitMsg := func(id, version int, ref, clientID string, steps ...string) string {
		return `{"type":"commit","id":` + strconv.Itoa(id) + `,"version":` + strconv.Itoa(version) + `,"ref":"` + ref +
			`","clientID":` + clientID + `,"steps":[` + strings.Join(steps, ",") + `]}`
	}
	a, b := e.dial(t, "d", false), e.dial(t, "d", false)
	hello(a, "1")
	hello(b, "2")
	a.send(commitMsg(1, 0, "a1", "1", insert(1, "hello")))
	if m := a.nextSkipping("steps"); m.Version != 1 {
		t.Fatalf("push %s", m.raw)
	}
	if m := a.nextSkipping("committed"); !strings.Contains(m.raw, `"from":0,"version":1,"steps":[`+insert(1, "hello")+`],"dropped":[]`) || string(m.ID) != "1" {
		t.Fatalf("committed %s", m.raw)
	}
	// b has not seen a's step: its commit at version 0 is rebased.
	c := commitMsg(2, 0, "b1", "2", insert(1, "> "))
	b.send(c)
	b.nextSkipping("steps") // a's
	if m := b.nextSkipping("steps"); m.Version != 2 || len(m.Steps) != 1 || string(m.ClientIDs[0]) != "2" {
		t.Fatalf("push of b's commit %s", m.raw)
	}
	want := `"id":2,"from":1,"version":2,"steps":[` + insert(6, "> ") + `],"dropped":[],"commentVersion":0}`
	if m := b.nextSkipping("committed"); !strings.HasSuffix(m.raw, want) {
		t.Fatalf("committed %s, want …%s", m.raw, want)
	}
	b.send(c)
	if m := b.nextSkipping("committed"); !strings.HasSuffix(m.raw, want) {
		t.Fatalf("sent again: %s, want …%s", m.raw, want)
	}
	// The modes do not mix.
	b.send(stepsMsg(3, 2, "2", insert(1, "x")))
	if m := b.nextSkipping("error"); m.Status != 400 || !strings.Contains(m.Message, "commit mode") {
		t.Fatalf("steps in commit mode: %s", m.raw)
	}
	classic := e.dial(t, "d", false)
	classic.hello(2, "3")
	classic.next("welcome")
	classic.send(commitMsg(4, 2, "c1", "3", insert(1, "x")))
	if m := classic.nextSkipping("error"); m.Status != 400 || !strings.Contains(m.Message, `"mode": "commit"`) || string(m.ID) != "4" {
		t.Fatalf("commit in classic mode: %s", m.raw)
	}
	bad := e.dial(t, "d", false)
	bad.send(`{"type":"hello","version":0,"clientID":4,"mode":"fast"}`)
	if m := bad.nextSkipping("error"); !strings.Contains(m.Message, `"mode" must be "classic" or "commit"`) {
		t.Fatalf("hello with an unknown mode: %s", m.raw)
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"version":2`) || !strings.Contains(doc, `hello> `) {
		t.Fatalf("GET /docs/d: %s", doc)
	}
}
