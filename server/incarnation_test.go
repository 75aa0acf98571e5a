package server

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// incarnationStores returns the stores that the incarnation tests run on,
// each opened empty.
func incarnationStores() []struct {
	name string
	open func(t *testing.T) store.Store
} {
	return []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memstore", func(*testing.T) store.Store { return memstore.New() }},
		{"sqlite", func(t *testing.T) store.Store {
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "pma.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
}

// recreate makes the document d reach version 5 ("OLD-O", one character
// a step), deletes it and makes the new owner's document of that id
// ("NEW-OWNE", one character a step), and returns its version.
func recreate(t *testing.T, e *collabEnv) int {
	t.Helper()
	for i, c := range "OLD-O" {
		e.mustPost(t, "d", `{"version":`+strconv.Itoa(i)+`,"clientID":1,"steps":[`+insert(1+i, string(c))+`]}`)
	}
	return recreate2(t, e)
}

// paragraphText returns the text of document d's one paragraph.
func paragraphText(t *testing.T, e *collabEnv) string {
	t.Helper()
	var st struct {
		Doc struct {
			Content []struct {
				Content []struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/d")), &st); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range st.Doc.Content {
		for _, n := range p.Content {
			b.WriteString(n.Text)
		}
	}
	return b.String()
}

// TestIncarnationHTTP: a client of a deleted document, at the version it
// reached (5), is never given the steps of the document created again
// under its id, nor can it submit into it: it gets 410 and reloads (as
// the ProseMirror website's client does), and the new document keeps
// its text.
func TestIncarnationHTTP(t *testing.T) {
	for _, tt := range incarnationStores() {
		t.Run(tt.name, func(t *testing.T) {
			e := newCollab(t, Config{}, collab.Config{Store: tt.open(t)})
			version := recreate(t, e)
			if version <= 5+len("NEW-OWNE") {
				t.Errorf("the new document is at version %d: it does not start after the old one's 5", version)
			}
			status, body := e.request(t, "GET", "/docs/d/events?version=5&commentVersion=0", "")
			if status != 410 {
				t.Errorf("events at the old version 5: %d %s, want 410", status, body)
			}
			// The stale client's submissions: at its old version, and at
			// the one it would have computed from the new document's steps.
			del := `{"stepType":"replace","from":1,"to":6}`
			for _, v := range []int{5, 5 + 3} {
				status, body := e.request(t, "POST", "/docs/d/events", `{"version":`+strconv.Itoa(v)+`,"clientID":1,"steps":[`+del+`]}`)
				if status != 409 && status != 410 {
					t.Errorf("POST at the old document's version %d: %d %s, want 409 or 410", v, status, body)
				}
			}
			if got := paragraphText(t, e); got != "NEW-OWNE" {
				t.Errorf("the new document holds %q, want NEW-OWNE", got)
			}
			// Reloading works: the document at its version, and events
			// from there on.
			var st struct{ Version int }
			if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/d")), &st); err != nil {
				t.Fatal(err)
			}
			if st.Version != version {
				t.Errorf("GET /docs/d: version %d, want %d", st.Version, version)
			}
			e.mustPost(t, "d", `{"version":`+strconv.Itoa(version)+`,"clientID":1,"steps":[`+insert(9, "R")+`]}`)
			if body := e.mustGet(t, "/docs/d/events?version="+strconv.Itoa(version)+"&commentVersion=0"); !strings.Contains(body, `"text":"R"`) {
				t.Errorf("events after reloading: %s", body)
			}
			if got := paragraphText(t, e); got != "NEW-OWNER" {
				t.Errorf("after the reloaded client's step: %q, want NEW-OWNER", got)
			}
			// The list and the exports see the new document.
			if body := e.mustGet(t, "/docs"); !strings.Contains(body, `"version":`+strconv.Itoa(version+1)) {
				t.Errorf("GET /docs: %s, want version %d", body, version+1)
			}
			if w := e.serve(defaultIP, "GET", "/docs/d/export?format=text", "", nil); w.Code != 200 || strings.TrimSpace(w.Body.String()) != "NEW-OWNER" {
				t.Errorf("export: %d %q", w.Code, w.Body)
			}
			for _, target := range []string{"/docs/d?version=5", "/docs/d/steps?from=5", "/docs/d/export?format=text&version=5"} {
				if w := e.serve(defaultIP, "GET", target, "", nil); w.Code != 410 {
					t.Errorf("GET %s: %d %s, want 410", target, w.Code, w.Body)
				}
			}
			// The step log starts at the new document's first version.
			var page struct {
				Steps           []json.RawMessage
				Version, Oldest int
				Next            *int
			}
			if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/d/steps?limit=5")), &page); err != nil {
				t.Fatal(err)
			}
			if first := version - len("NEW-OWNE"); len(page.Steps) != 5 || page.Version != version+1 || page.Oldest != first ||
				page.Next == nil || *page.Next != first+5 {
				t.Errorf("GET /docs/d/steps: %+v", page)
			}
			if body := e.mustGet(t, "/docs/d/authors"); !strings.HasPrefix(body, `{"version":`+strconv.Itoa(version+1)+`,"oldest":`+strconv.Itoa(version-len("NEW-OWNE"))+`,`) {
				t.Errorf("GET /docs/d/authors: %s", body)
			}
			if status, body := e.request(t, "POST", "/docs/d/restore", `{"version":5}`); status != 410 {
				t.Errorf("restore to the deleted document's version 5: %d %s, want 410", status, body)
			}
			// POST /docs answers the version a document created again
			// starts at.
			if status, body := e.request(t, "DELETE", "/docs/d", ""); status != 204 {
				t.Fatalf("DELETE: %d %s", status, body)
			}
			want := `{"id":"d","version":` + strconv.Itoa(version+2) + `}`
			if status, body := e.request(t, "POST", "/docs", `{"id":"d"}`); status != 201 || body != want {
				t.Errorf("POST /docs: %d %s, want 201 %s", status, body, want)
			}
			if status, body := e.request(t, "POST", "/docs", `{"id":"fresh"}`); status != 201 || body != `{"id":"fresh","version":0}` {
				t.Errorf("POST /docs of a new id: %d %s", status, body)
			}
		})
	}
}

// TestIncarnationWS: a WebSocket client of a deleted document that says
// hello at the version it reached (5) gets a snapshot of the document
// created again under its id, not a welcome that continues its version
// with the new document's steps.
func TestIncarnationWS(t *testing.T) {
	for _, tt := range incarnationStores() {
		t.Run(tt.name, func(t *testing.T) {
			e := newWS(t, Config{}, collab.Config{Store: tt.open(t)}, nil)
			version := recreate(t, e.collabEnv)
			c := e.dial(t, "d", false)
			c.hello(5, "1")
			m, err := c.read(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if m.Type != "snapshot" || m.Version != int64(version) || !strings.Contains(string(m.Doc), "NEW-OWNE") {
				t.Fatalf("hello at the old version 5: %s, want a snapshot at %d", m.raw, version)
			}
			// Its submission at the old version is refused.
			c.send(stepsMsg(1, 5, "1", `{"stepType":"replace","from":1,"to":6}`))
			if m := c.nextSkipping("conflict"); m.Version != int64(version) {
				t.Errorf("conflict %s", m.raw)
			}
			if got := paragraphText(t, e.collabEnv); got != "NEW-OWNE" {
				t.Errorf("the new document holds %q, want NEW-OWNE", got)
			}
		})
	}
}

// TestIncarnationWSNodes: while one node serves the WebSocket clients of
// a document, another deletes it and creates it again: the first node's
// clients are never pushed the new document's steps as the continuation
// of theirs, and at their old version they get its snapshot.
func TestIncarnationWSNodes(t *testing.T) {
	es, _ := wsNodes(t, new(testutil.Bus), 2, 0)
	a, b := es[0], es[1]
	c := a.dial(t, "d", false)
	c.hello(-1, "1")
	c.next("snapshot")
	// The steps come over HTTP from another client (the WebSocket holds
	// client id 1 for its own address).
	for i, ch := range "OLD-O" {
		a.post(t, "d", i, "3", insert(1+i, string(ch)))
		if m := c.nextSkipping("steps"); m.Version != int64(i+1) {
			t.Fatalf("push %s", m.raw)
		}
	}
	version := recreate2(t, b.collabEnv)
	// c hears of the deletion and is closed, or is made to resync; it is
	// never pushed steps after its version 5.
	for {
		m, err := c.read(10 * time.Second)
		if err != nil {
			break
		}
		if m.Type == "steps" {
			t.Fatalf("a client of the deleted document was pushed %s", m.raw)
		}
	}
	// The first node hears of the second's last steps a little later
	// (NOTIFY): a snapshot behind them is asked again.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c = a.dial(t, "d", false)
		c.hello(5, "1")
		m := c.nextSkipping("snapshot")
		if m.Version < int64(version) && time.Now().Before(deadline) && strings.Contains(string(m.Doc), "NEW-OWN") {
			c.c.Close(websocket.StatusNormalClosure, "")
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if m.Version != int64(version) || !strings.Contains(string(m.Doc), "NEW-OWNE") {
			t.Errorf("hello at the old version 5 on the first node: %s, want a snapshot at %d", m.raw, version)
		}
		break
	}
}

// recreate2 deletes the document d (at version 5) and makes the new
// owner's document of that id ("NEW-OWNE", one character a step), and
// returns its version.
func recreate2(t *testing.T, e *collabEnv) int {
	t.Helper()
	if status, body := e.request(t, "DELETE", "/docs/d", ""); status != 204 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	var st struct{ Version int }
	if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/d")), &st); err != nil {
		t.Fatal(err)
	}
	for i, c := range "NEW-OWNE" {
		e.mustPost(t, "d", `{"version":`+strconv.Itoa(st.Version+i)+`,"clientID":2,"steps":[`+insert(1+i, string(c))+`]}`)
	}
	return st.Version + len("NEW-OWNE")
}
