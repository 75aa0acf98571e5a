package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/transform"
)

// docsAPI is a pmauthority serve process for the documents API tests.
type docsAPI struct{ *hostileProc }

// call sends a JSON request and returns the status and body; it reports
// nothing to a *testing.T, so that any goroutine may call it.
func (p docsAPI) call(method, path, body string) (int, []byte, error) {
	var b []byte
	ct := ""
	if body != "" {
		b, ct = []byte(body), "application/json"
	}
	status, answer, _, err := p.do(method, path, ct, b, nil)
	return status, answer, err
}

// must sends a request that must answer status, and returns its body.
func (p docsAPI) must(t *testing.T, method, path, body string, status int) []byte {
	t.Helper()
	got, answer, err := p.call(method, path, body)
	if err != nil || got != status {
		t.Fatalf("%s %s %s: %d %s (%v), want %d", method, path, clip(body), got, clip(string(answer)), err, status)
	}
	return answer
}

// docAt returns GET /docs/{id}?version=v's document.
func (p docsAPI) docAt(t *testing.T, id string, v int64) json.RawMessage {
	t.Helper()
	var a struct {
		Doc     json.RawMessage
		Version int64
	}
	if err := json.Unmarshal(p.must(t, "GET", fmt.Sprintf("/docs/%s?version=%d", id, v), "", 200), &a); err != nil || a.Version != v {
		t.Fatalf("GET ?version=%d: version %d, %v", v, a.Version, err)
	}
	return a.Doc
}

// stepLog returns every step of the document id, reading
// GET /docs/{id}/steps page by page.
func (p docsAPI) stepLog(t *testing.T, id string) []loggedStep {
	t.Helper()
	var all []loggedStep
	for from := int64(0); ; {
		var page struct {
			Steps []loggedStep
			Next  *int64
		}
		if err := json.Unmarshal(p.must(t, "GET", fmt.Sprintf("/docs/%s/steps?from=%d&limit=1000", id, from), "", 200), &page); err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Steps...)
		if page.Next == nil {
			return all
		}
		from = *page.Next
	}
}

// loggedStep is a step of GET /docs/{id}/steps.
type loggedStep struct {
	Version  int64
	Step     json.RawMessage
	ClientID json.RawMessage
	Author   *string
}

// startDocsAPI starts the binary with a data directory of its own,
// keeping every step (--keep-steps -1) and snapshotting often, so that
// the versions asked for are rebuilt from a snapshot other than the
// first.
func startDocsAPI(t *testing.T, args ...string) docsAPI {
	t.Helper()
	args = append([]string{"--keep-steps", "-1", "--snapshot-every", "50"}, args...)
	return docsAPI{startHostile(t, stepsBuildCLI(t), t.TempDir(), nil, args...)}
}

// TestDocsRestoreLive restores older versions while real editors type:
// every restore is one new step that the editors receive live, all of
// them converge on the server's document, the document just after each
// restore is the restored version's, and the step log replayed from the
// start is the server's document.
func TestDocsRestoreLive(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	p := startDocsAPI(t)
	const id = "restore-live"
	start := editorsStart(t)
	p.must(t, "POST", "/docs", `{"id":"`+id+`","doc":`+string(start.AppendJSON(nil))+`}`, 201)

	edits := 1500
	if testing.Short() {
		edits = 400
	}
	cfg := editorsConfig{Editors: 6, WS: 3, Edits: edits, ReconnectEvery: 40, Seed: editorsSeed(t), Others: true}

	// Restores while the editors type: when the document reaches
	// version 40, 120, 240 …, back to a third of it.
	type restore struct{ target, result int64 }
	var (
		mu       sync.Mutex
		restores []restore
		failures []string
	)
	done := make(chan struct{})
	restorer := make(chan struct{})
	go func() {
		defer close(restorer)
		next := int64(40)
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			status, body, err := p.call("GET", "/docs/"+id, "")
			var st collabDocState
			if err != nil || status != 200 || json.Unmarshal(body, &st) != nil {
				continue // the harness's checks tell about the server
			}
			if st.Version < next {
				continue
			}
			target := st.Version / 3
			status, body, err = p.call("POST", "/docs/"+id+"/restore", fmt.Sprintf(`{"version":%d}`, target))
			var res struct{ Version int64 }
			mu.Lock()
			if err != nil || status != 200 || json.Unmarshal(body, &res) != nil {
				failures = append(failures, fmt.Sprintf("restore to %d: %d %s %v", target, status, clip(string(body)), err))
			} else {
				restores = append(restores, restore{target, res.Version})
			}
			mu.Unlock()
			next = st.Version + 40*int64(len(restores)+1)
		}
	}()
	run := runEditors(t, node, p.base, []string{id}, cfg)
	close(done)
	<-restorer
	for _, f := range failures {
		t.Error(f)
	}
	if len(restores) < 2 {
		t.Fatalf("%d restores during the run, want several", len(restores))
	}
	final := getDocState(t, p.base+"/docs/"+id)
	for _, e := range run.editors {
		if e.Version != final.Version || !bytes.Equal(e.Doc, final.Doc) {
			t.Errorf("editor %d: version %d, document %s; the server's is at %d", e.Editor, e.Version, firstDifference(e.Doc, final.Doc), final.Version)
		}
	}
	s := run.summary
	if moved := s.ServerVersion - s.InitialVersion; moved < s.StepsAccepted+int64(len(restores)) || moved > s.StepsAccepted+s.StepsInDoubt+int64(len(restores)) {
		t.Errorf("the server went from version %d to %d with %d steps accepted, %d in doubt and %d restores",
			s.InitialVersion, s.ServerVersion, s.StepsAccepted, s.StepsInDoubt, len(restores))
	}
	// Each restore made the document its target's again, and the editors
	// typed on after it.
	later := 0
	for _, r := range restores {
		if got, want := p.docAt(t, id, r.result), p.docAt(t, id, r.target); !bytes.Equal(got, want) {
			t.Errorf("the document after the restore to %d (version %d) is not version %d's: %s", r.target, r.result, r.target, firstDifference(got, want))
		}
		if r.result < final.Version {
			later++
		}
	}
	if later == 0 {
		t.Errorf("no edits after any of the restores %v (the server is at %d)", restores, final.Version)
	}
	// The log replayed from the start is the server's document; the
	// restores are its steps of client "restore", without an author.
	steps := p.stepLog(t, id)
	if int64(len(steps)) != final.Version {
		t.Fatalf("%d steps in the log, the server is at version %d", len(steps), final.Version)
	}
	doc := start
	byRestore := 0
	for i, s := range steps {
		if s.Version != int64(i+1) {
			t.Fatalf("step %d has version %d", i+1, s.Version)
		}
		if string(s.ClientID) == `"restore"` {
			byRestore++
			if s.Author != nil {
				t.Errorf("restore step %d has author %q", s.Version, *s.Author)
			}
		}
		step, err := transform.StepFromJSON(start.Type.Schema, s.Step)
		if err == nil {
			doc, err = step.Apply(doc)
		}
		if err != nil {
			t.Fatalf("step %d %s: %v", s.Version, clip(string(s.Step)), err)
		}
	}
	if byRestore != len(restores) {
		t.Errorf("%d steps of client \"restore\", %d restores", byRestore, len(restores))
	}
	if got := doc.AppendJSON(nil); !bytes.Equal(got, final.Doc) {
		t.Errorf("the replayed log differs from the server's document: %s", firstDifference(got, final.Doc))
	}
	t.Logf("%d restores %v while %d editors typed; version %d → %d", len(restores), restores, cfg.Editors, s.InitialVersion, final.Version)
}

// TestDocsDeleteLive deletes a document while a WebSocket client and a
// long poll are on it and real editors type on another: the deleted
// document's client gets error 404 and close 4404 and its poll 404, the
// document is gone, and the other document's editors finish as if
// nothing happened.
func TestDocsDeleteLive(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	p := startDocsAPI(t)
	start := string(editorsStart(t).AppendJSON(nil))
	p.must(t, "POST", "/docs", `{"id":"keep","doc":`+start+`}`, 201)
	p.must(t, "POST", "/docs", `{"id":"gone","doc":`+start+`}`, 201)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/docs/gone/ws", &websocket.DialOptions{Subprotocols: []string{"pmauthority.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","version":0,"commentVersion":0,"clientID":7}`)); err != nil {
		t.Fatal(err)
	}
	if _, m, err := c.Read(ctx); err != nil || !strings.Contains(string(m), `"welcome"`) {
		t.Fatalf("hello: %s %v", m, err)
	}
	type answer struct {
		status int
		body   []byte
		err    error
	}
	poll := make(chan answer, 1)
	go func() {
		status, body, err := p.call("GET", "/docs/gone/events?version=0&commentVersion=0", "")
		poll <- answer{status, body, err}
	}()

	cfg := editorsConfig{Editors: 4, WS: 2, Edits: 600, ReconnectEvery: 40, Seed: editorsSeed(t)}
	if testing.Short() {
		cfg.Edits = 300
	}
	deleted := make(chan error, 1)
	go func() {
		// Once the editors are under way.
		for {
			status, body, err := p.call("GET", "/docs/keep", "")
			var st collabDocState
			if err == nil && status == 200 && json.Unmarshal(body, &st) == nil && st.Version >= 50 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		status, body, err := p.call("DELETE", "/docs/gone", "")
		if err == nil && status != http.StatusNoContent {
			err = fmt.Errorf("DELETE: %d %s", status, body)
		}
		deleted <- err
	}()
	run := runEditors(t, node, p.base, []string{"keep"}, cfg)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)

	// The client on the deleted document was told.
	var sawError bool
	for {
		_, m, err := c.Read(ctx)
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != 4404 || ce.Reason != "document deleted" {
				t.Errorf("closed with %d %q, want 4404 document deleted", ce.Code, ce.Reason)
			}
			break
		}
		if err != nil {
			t.Fatalf("the connection ended without a close: %v", err)
		}
		if strings.Contains(string(m), `"type":"error"`) && strings.Contains(string(m), `"status":404`) {
			sawError = true
		}
	}
	if !sawError {
		t.Error("no error 404 before the close")
	}
	if a := <-poll; a.err != nil || a.status != 404 {
		t.Errorf("the waiting poll: %d %s %v, want 404", a.status, a.body, a.err)
	}
	p.must(t, "GET", "/docs/gone?version=0", "", 404)
	p.must(t, "GET", "/docs/gone/steps", "", 404)
	var list []collabListEntry
	getJSON(t, p.base+"/docs", &list)
	if len(list) != 1 || list[0].ID != "keep" {
		t.Errorf("GET /docs after the delete: %v", list)
	}
	// The other document: its editors agree with the server, whose log
	// replays to its document.
	final := getDocState(t, p.base+"/docs/keep")
	doc := editorsStart(t)
	for _, s := range p.stepLog(t, "keep") {
		step, err := transform.StepFromJSON(doc.Type.Schema, s.Step)
		if err == nil {
			doc, err = step.Apply(doc)
		}
		if err != nil {
			t.Fatalf("step %d: %v", s.Version, err)
		}
	}
	if got := doc.AppendJSON(nil); !bytes.Equal(got, final.Doc) {
		t.Errorf("keep: the replayed log differs from the server's document: %s", firstDifference(got, final.Doc))
	}
	for _, e := range run.editors {
		if e.Version != final.Version || !bytes.Equal(e.Doc, final.Doc) {
			t.Errorf("editor %d of keep: version %d; the server is at %d", e.Editor, e.Version, final.Version)
		}
	}
}
