package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/auth"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestCollabEditorsAuth runs the real-editor harness against a server
// that requires tokens, the editors presenting an edit token (over long
// polls and WebSockets), while a read-only WebSocket watches and a
// comment-only one comments: the editors converge; the reader receives
// every step and may send none; the commenter's comment and its delete
// are accepted and its steps refused; every step is stored with its
// editor's principal.
func TestCollabEditorsAuth(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	edits := 1000
	if testing.Short() {
		edits = 200
	}
	cfg := editorsConfig{Editors: 6, WS: 3, Edits: edits, ReconnectEvery: 40, Seed: editorsSeed(t)}
	const docID = "team-a.notes"

	secret := []byte("a secret of at least thirty-two bytes for the test")
	key, err := auth.SecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	defer func() {
		if t.Failed() && logs.String() != "" {
			t.Logf("server log:\n%s", lastLines(logs.String(), 50))
		}
	}()
	policy, err := auth.New(auth.Config{Keys: []auth.Key{key}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	defer st.Close()
	a, err := collab.New(collab.Config{Store: st, Schemas: collabSchemas, DefaultSchema: "basic", AutoCreate: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv, err := server.New(server.Config{Collab: a, Policy: policy, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	base, stopServe := serveLoopback(t, srv)
	defer func() {
		if err := stopServe(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	ctx := context.Background()
	if _, err := a.Create(ctx, docID, "basic", editorsStart(t)); err != nil {
		t.Fatal(err)
	}
	token := func(sub, grant string) string {
		g, err := auth.ParseGrant(grant)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := auth.Mint(secret, auth.NewClaims(sub, sub, auth.Grants{g}, time.Now(), time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	// The commenter, before the editors start: its comment is accepted,
	// its steps are refused.
	commenter := dialAuth(t, base, docID, token("carol", "team-a.*=comment"))
	commenter.send(t, `{"type":"steps","id":1,"version":0,"clientID":"carol","steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}]}`)
	if m := commenter.next(t, "error"); m["status"] != float64(403) || m["id"] != float64(1) {
		t.Errorf("the commenter's steps: %v, want error 403 for id 1", m)
	}
	commenter.send(t, `{"type":"steps","id":2,"version":0,"clientID":"carol","steps":[],"comment":[{"type":"create","id":77,"from":2,"to":6,"text":"carol was here"}]}`)
	if m := commenter.next(t, "ack"); m["id"] != float64(2) {
		t.Errorf("the commenter's comment: %v, want ack 2", m)
	}
	// It deletes it again: the editors' tokens may delete only their own
	// principal's comments (docs/auth.md), and the harness deletes any
	// it knows.
	commenter.send(t, `{"type":"steps","id":3,"version":0,"clientID":"carol","steps":[],"comment":[{"type":"delete","id":77}]}`)
	if m := commenter.next(t, "ack"); m["id"] != float64(3) {
		t.Errorf("the commenter's delete: %v, want ack 3", m)
	}
	commenter.ws.Close(websocket.StatusNormalClosure, "")

	// The reader, a long poll (a WebSocket reader would show in the
	// editors' presence, which the harness checks), watches all along;
	// its submission is refused.
	readTok := token("rita", "team-a.notes=read")
	var readMu sync.Mutex
	readVersion, readSteps := int64(0), 0
	readCtx, stopReading := context.WithCancel(ctx)
	readDone := make(chan error, 1)
	go func() {
		cv := int64(0)
		for readCtx.Err() == nil {
			readMu.Lock()
			v := readVersion
			readMu.Unlock()
			req, _ := http.NewRequestWithContext(readCtx, "GET", fmt.Sprintf("%s/docs/%s/events?version=%d&commentVersion=%d", base, docID, v, cv), nil)
			req.Header.Set("Authorization", "Bearer "+readTok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				readDone <- readCtx.Err()
				return
			}
			var ev struct {
				Version        *int64
				CommentVersion int64
				Steps          []json.RawMessage
			}
			err = json.NewDecoder(resp.Body).Decode(&ev)
			resp.Body.Close()
			if resp.StatusCode != 200 || err != nil {
				readDone <- fmt.Errorf("the reader's poll: %d %v", resp.StatusCode, err)
				return
			}
			if ev.Version != nil {
				readMu.Lock()
				readVersion, readSteps = *ev.Version, readSteps+len(ev.Steps)
				readMu.Unlock()
				cv = ev.CommentVersion
			}
		}
		readDone <- nil
	}()
	req, _ := http.NewRequest("POST", base+"/docs/"+docID+"/events", strings.NewReader(`{"version":1,"clientID":5,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"r"}]}}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+readTok)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("the reader's submission: %v %v, want 403", resp.Status, err)
	}

	cfg.Token = token("harness", "team-a.*=edit")
	run := runEditors(t, node, base, []string{docID}, cfg)
	run.check(t, cfg.Edits)

	final, err := a.Get(ctx, docID, "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { readMu.Lock(); defer readMu.Unlock(); return readVersion == final.Version })
	stopReading()
	if err := <-readDone; err != nil && err != context.Canceled {
		t.Error(err)
	}
	if readSteps != int(final.Version) {
		t.Errorf("the reader received %d steps, want %d", readSteps, final.Version)
	}
	stored, err := st.Steps(ctx, docID, 0, final.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stored {
		if s.Author != "harness" {
			t.Fatalf("step %d stored with author %q, want the editors' principal", s.Version, s.Author)
		}
	}
}

// authConn is a WebSocket of TestCollabEditorsAuth.
type authConn struct {
	ws  *websocket.Conn
	ctx context.Context
}

// dialAuth opens a WebSocket to docID and says hello with token.
func dialAuth(t *testing.T, base, docID, token string) *authConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/docs/"+docID+"/ws", &websocket.DialOptions{Subprotocols: []string{server.WSSubprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	c := &authConn{ws: ws, ctx: ctx}
	c.send(t, fmt.Sprintf(`{"type":"hello","version":0,"clientID":"w-%d","token":%q}`, time.Now().UnixNano()%1000, token))
	return c
}

func (c *authConn) send(t *testing.T, msg string) {
	t.Helper()
	if err := c.ws.Write(c.ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func (c *authConn) read() (map[string]any, error) {
	_, data, err := c.ws.Read(c.ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(data, &m)
	return m, err
}

// next returns the next message of type typ, skipping others.
func (c *authConn) next(t *testing.T, typ string) map[string]any {
	t.Helper()
	for {
		m, err := c.read()
		if err != nil {
			t.Fatalf("waiting for %s: %v", typ, err)
		}
		if m["type"] == typ || m["type"] == "error" {
			return m
		}
	}
}

// waitFor polls cond every 50 ms for up to 10 s and fails the test when
// it never holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 200 {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("condition not reached in 10 s")
}
