package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// suggestPolicy authenticates a token as the principal of that id and
// grants it every action, but for ActionEdit to its suggesters (who are
// granted ActionSuggest).
type suggestPolicy struct{ suggesters map[string]bool }

func (p suggestPolicy) Authenticate(_ context.Context, c Credentials) (Principal, error) {
	return Principal{ID: c.Token}, nil
}

func (p suggestPolicy) Authorize(_ context.Context, pr Principal, _ string, a Action) error {
	if p.suggesters[pr.ID] && (a == ActionEdit || a == ActionAdmin) {
		return fmt.Errorf("%s may only suggest: %w", pr.ID, ErrForbidden)
	}
	return nil
}

// marked is a step inserting text at pos marked as inserted by id.
func marked(pos int, text, id string) string {
	return fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":%q,"marks":[{"type":"insertion","attrs":{"id":%q}}]}]}}`, pos, pos, text, id)
}

// TestSuggestRole: a suggest-only principal's hostile steps are refused
// with 403 naming the rule over long poll, commits and WebSocket, its
// suggestions accepted; an editor accepts and rejects them by id, by
// author and all.
func TestSuggestRole(t *testing.T) {
	e := newWS(t, Config{Policy: suggestPolicy{suggesters: map[string]bool{"alice": true, "bob": true}}}, collab.Config{}, nil)
	post := func(token, path, body string) (int, string) {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := post("carol", "/docs", `{"id":"d","schema":"suggest","doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello world"}]}]}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	expect := func(what string, code int, body string, want int, msg string) {
		t.Helper()
		if code != want || !strings.Contains(body, msg) {
			t.Errorf("%s: %d %s, want %d with %q", what, code, body, want, msg)
		}
	}
	// Long poll.
	code, body := post("bob", "/docs/d/events", `{"version":0,"clientID":2,"steps":[`+insert(1, "!")+`]}`)
	expect("bob inserts over long poll", code, body, http.StatusForbidden, "must not change the document outside suggestions")
	code, body = post("bob", "/docs/d/events", `{"version":0,"clientID":2,"steps":[`+marked(6, "X", "bob-1")+`]}`)
	expect("bob suggests over long poll", code, body, http.StatusOK, `"version":1`)
	// Commits.
	code, body = post("bob", "/docs/d/commits", `{"version":1,"ref":"r1","clientID":2,"steps":[{"stepType":"replace","from":1,"to":2}]}`)
	expect("bob deletes in a commit", code, body, http.StatusForbidden, "outside suggestions")
	code, body = post("bob", "/docs/d/commits", `{"version":1,"ref":"r2","clientID":2,"steps":[{"stepType":"addMark","from":8,"to":13,"mark":{"type":"deletion","attrs":{"id":"bob-2"}}}]}`)
	expect("bob suggests a deletion in a commit", code, body, http.StatusOK, `"version":2`)
	// WebSocket.
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":null,"clientID":5,"token":"alice"}`)
	c.next("snapshot")
	c.send(`{"type":"steps","id":1,"version":2,"clientID":5,"steps":[` + insert(1, "!") + `]}`)
	if m := c.nextSkipping("error"); m.Status != http.StatusForbidden || !strings.Contains(m.Message, "outside suggestions") {
		t.Errorf("alice inserts over WebSocket: %s, want error 403", m.raw)
	}
	c.send(`{"type":"steps","id":2,"version":2,"clientID":5,"steps":[{"stepType":"replace","from":6,"to":7}]}`)
	if m := c.nextSkipping("error"); m.Status != http.StatusForbidden || !strings.Contains(m.Message, `remove only its own suggestions: suggestion "bob-1"`) {
		t.Errorf("alice removes bob's suggestion over WebSocket: %s, want error 403", m.raw)
	}
	c.send(`{"type":"steps","id":3,"version":2,"clientID":5,"steps":[` + marked(1, "Y", "alice-1") + `]}`)
	c.nextSkipping("steps")
	c.nextSkipping("ack")
	// YhelloX world: Y alice-1, X bob-1, "world" deleted by bob-2.

	code, body = post("bob", "/docs/d/suggestions/bob-1/accept", ``)
	expect("a suggester accepts", code, body, http.StatusForbidden, "may only suggest")
	code, body = post("carol", "/docs/d/suggestions/nope/reject", ``)
	expect("an unknown id", code, body, http.StatusNotFound, "no suggestion nope")
	code, body = post("carol", "/docs/d/suggestions/accept", `{"author":"bob","all":true}`)
	expect("author and all", code, body, http.StatusBadRequest, "want {")
	code, body = post("carol", "/docs/d/suggestions/bob-1/accept", ``)
	expect("carol accepts bob-1", code, body, http.StatusOK, `"steps":1`)
	code, body = post("carol", "/docs/d/suggestions/reject", `{"author":"bob"}`)
	expect("carol rejects bob's", code, body, http.StatusOK, `"steps":1`)
	code, body = post("carol", "/docs/d/suggestions/accept", `{"author":"bob"}`)
	expect("bob has none left", code, body, http.StatusOK, `"steps":0`)
	code, body = post("carol", "/docs/d/suggestions/accept", `{"all":true}`)
	expect("carol accepts all", code, body, http.StatusOK, `"steps":1`)
	want := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"YhelloX world"}]}]}`
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, want) {
		t.Errorf("GET /docs/d: %s, want %s", doc, want)
	}
	if steps := e.mustGet(t, "/docs/d/steps?from=3"); !strings.Contains(steps, `"author":"carol"`) {
		t.Errorf("the settling steps: %s, want carol as their author", steps)
	}

	// A schema without the suggestion marks.
	if code, body := post("carol", "/docs", `{"id":"plain"}`); code != http.StatusCreated {
		t.Fatalf("create plain: %d %s", code, body)
	}
	code, body = post("carol", "/docs/plain/suggestions/reject", `{"all":true}`)
	expect("a schema without suggestions", code, body, http.StatusUnprocessableEntity, "insertion mark")
	code, body = post("bob", "/docs/plain/events", `{"version":0,"clientID":2,"steps":[`+insert(1, "!")+`]}`)
	expect("bob on a schema without suggestions", code, body, http.StatusForbidden, "suggestion marks")
}

// TestSettleWhileTyping: accepting and rejecting suggestions one by one
// while an editor types at the start of the document: every request
// succeeds (Transact starts again on the newer document when the
// editor's step came first), and the
// document ends with the typing and the settled suggestions.
func TestSettleWhileTyping(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	ctx := context.Background()
	const n = 10
	var content strings.Builder
	for i := range n {
		if i > 0 {
			content.WriteString(`,{"type":"text","text":" "},`)
		}
		fmt.Fprintf(&content, `{"type":"text","text":"s%d","marks":[{"type":"insertion","attrs":{"id":%d}}]}`, i, i+1)
	}
	post := func(path, body string) (int, string) {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := post("/docs", `{"id":"d","schema":"suggest","doc":{"type":"doc","content":[{"type":"paragraph","content":[`+content.String()+`]}]}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	done := make(chan struct{})
	typed := make(chan int)
	var progress atomic.Int64
	go func() {
		count := 0
		defer func() { typed <- count }()
		for {
			select {
			case <-done:
				return
			default:
			}
			st, err := e.auth.Get(ctx, "d", "")
			if err != nil {
				t.Error(err)
				return
			}
			_, err = e.auth.Submit(ctx, "d", "", collab.Submission{Version: st.Version, Steps: [][]byte{[]byte(insert(1, "x"))}, ClientID: collab.ClientID("9")})
			if err == nil {
				count++
				progress.Add(1)
				time.Sleep(time.Millisecond) // a fast typist, not a tight loop (which makes Transact give up: 503)
			} else if !errors.Is(err, collab.ErrConflict) {
				t.Error(err)
				return
			}
		}
	}()
	for i := range n {
		// The editor typed since the last request.
		for at := progress.Load(); progress.Load() == at; {
			time.Sleep(time.Millisecond)
		}
		path := fmt.Sprintf("/docs/d/suggestions/%d/accept", i+1)
		if i%2 == 1 {
			path = fmt.Sprintf("/docs/d/suggestions/%d/reject", i+1)
		}
		if code, body := post(path, `{}`); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	close(done)
	count := <-typed
	st, err := e.auth.Get(ctx, "d", "")
	if err != nil {
		t.Fatal(err)
	}
	// Accepted: s0 s2 s4 s6 s8; rejected ones go with one of their
	// spaces, but for the last one, which ends the document.
	want := strings.Repeat("x", count) + "s0 s2 s4 s6 s8 "
	if got := st.Doc.TextContent(); got != want || strings.Contains(string(st.Doc.AppendJSON(nil)), "insertion") {
		t.Errorf("document %s, want the text %q without marks", st.Doc.AppendJSON(nil), want)
	}
}
