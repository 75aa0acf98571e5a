package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// rolePolicy authenticates a token as the principal of that id and
// grants it every action, but for ActionEdit to its suggesters (who are
// granted ActionSuggest).
type rolePolicy struct{ suggesters map[string]bool }

func (p rolePolicy) Authenticate(_ context.Context, c Credentials) (Principal, error) {
	return Principal{ID: c.Token}, nil
}

func (p rolePolicy) Authorize(_ context.Context, pr Principal, _ string, a Action) error {
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
	e := newWS(t, Config{Policy: rolePolicy{suggesters: map[string]bool{"alice": true, "bob": true}}}, collab.Config{}, nil)
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
