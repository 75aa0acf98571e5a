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
// authorizes everything, but ActionEdit and ActionAdmin to its
// commenters and ActionAdmin to its editors.
type rolePolicy struct{ commenters, editors map[string]bool }

func (p rolePolicy) Authenticate(_ context.Context, c Credentials) (Principal, error) {
	return Principal{ID: c.Token}, nil
}

func (p rolePolicy) Authorize(_ context.Context, pr Principal, _ string, a Action) error {
	if (a == ActionEdit || a == ActionAdmin) && p.commenters[pr.ID] || a == ActionAdmin && p.editors[pr.ID] {
		return fmt.Errorf("%s may not %s: %w", pr.ID, a, ErrForbidden)
	}
	return nil
}

// TestCommentAuthorRecorded: the server records a comment's author (the
// principal), not what the client says, and returns it; a commenter may
// delete only its own comments (403 otherwise, over HTTP and WebSocket),
// as may an editor; an admin anyone's.
func TestCommentAuthorRecorded(t *testing.T) {
	e := newWS(t, Config{Policy: rolePolicy{commenters: map[string]bool{"carol": true}, editors: map[string]bool{"dave": true}}}, collab.Config{}, nil)
	post := func(token, body string) (int, string) {
		r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := post("alice", `{"version":0,"clientID":1,"steps":[`+insert(1, "hello world")+`]}`); code != 200 {
		t.Fatalf("alice's steps: %d %s", code, body)
	}
	create := func(id int, forged string) string {
		return fmt.Sprintf(`{"version":1,"clientID":0,"steps":[],"comment":[{"type":"create","id":%d,"from":1,"to":6,"text":"hi\n— %s","author":%q}]}`, id, forged, forged)
	}
	for _, c := range []struct {
		token string
		id    int
	}{{"alice", 1}, {"carol", 2}, {"carol", 3}} {
		if code, body := post(c.token, create(c.id, "bob")); code != 200 {
			t.Fatalf("%s's comment: %d %s", c.token, code, body)
		}
	}
	doc := e.mustGet(t, "/docs/d")
	for _, want := range []string{`"id":1,"author":"alice"`, `"id":2,"author":"carol"`, `"id":3,"author":"carol"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("GET /docs/d: %s, want %s", doc, want)
		}
	}
	if strings.Contains(doc, `"author":"bob"`) {
		t.Errorf("GET /docs/d: %s has the client's author", doc)
	}
	events := e.mustGet(t, "/docs/d/events?version=1&commentVersion=0")
	if !strings.Contains(events, `"from":1,"to":6,"author":"carol","time":`) {
		t.Errorf("events %s: want the creates with their authors", events)
	}

	remove := func(id int) string {
		return fmt.Sprintf(`{"version":1,"clientID":0,"steps":[],"comment":[{"type":"delete","id":%d}]}`, id)
	}
	if code, body := post("carol", remove(1)); code != http.StatusForbidden || !strings.Contains(body, "only its author") {
		t.Errorf("carol deletes alice's comment: %d %s, want 403", code, body)
	}
	if code, body := post("carol", remove(2)); code != 200 {
		t.Errorf("carol deletes hers: %d %s", code, body)
	}
	c := e.dial(t, "d", false)
	c.send(`{"type":"hello","version":null,"clientID":5,"token":"carol"}`)
	c.next("snapshot")
	c.send(`{"type":"steps","id":1,"version":1,"clientID":5,"steps":[],"comment":[{"type":"delete","id":1}]}`)
	if m := c.nextSkipping("error"); m.Status != http.StatusForbidden || string(m.ID) != "1" {
		t.Errorf("carol deletes alice's comment over WebSocket: %s, want error 403 for id 1", m.raw)
	}
	c.send(`{"type":"steps","id":2,"version":1,"clientID":5,"steps":[],"comment":[{"type":"delete","id":3}]}`)
	c.nextSkipping("steps")
	c.nextSkipping("ack")
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"id":1,"author":"alice"`) || strings.Contains(doc, `"id":2,`) || strings.Contains(doc, `"id":3,`) {
		t.Errorf("GET /docs/d: %s, want alice's comment alone", doc)
	}
	if code, body := post("dave", remove(1)); code != http.StatusForbidden || !strings.Contains(body, "only its author or an admin") {
		t.Errorf("an editor deletes alice's comment: %d %s, want 403", code, body)
	}
	if code, body := post("root", remove(1)); code != 200 {
		t.Errorf("an admin deletes alice's comment: %d %s", code, body)
	}
	if doc := e.mustGet(t, "/docs/d"); strings.Contains(doc, `"id":1,`) {
		t.Errorf("GET /docs/d: %s, want no comments", doc)
	}
}
