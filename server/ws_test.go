package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// wsEnv is a collab server behind a real HTTP listener.
type wsEnv struct {
	*collabEnv
	ts *httptest.Server
}

// newWS starts a server with the collab API; tune adjusts its WebSocket
// settings before it serves (nil keeps the defaults).
func newWS(t testing.TB, cfg Config, ccfg collab.Config, tune func(*wsHubs)) *wsEnv {
	t.Helper()
	return newWSAuto(t, cfg, ccfg, tune, true)
}

// newWSAuto is newWS with collab.Config.AutoCreate set to auto.
func newWSAuto(t testing.TB, cfg Config, ccfg collab.Config, tune func(*wsHubs), auto bool) *wsEnv {
	t.Helper()
	e := newCollabAuto(t, cfg, ccfg, auto)
	if tune != nil {
		tune(e.s.ws)
	}
	ts := httptest.NewUnstartedServer(e.s)
	ts.Listener = smallBufferListener{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)
	return &wsEnv{collabEnv: e, ts: ts}
}

// smallBufferListener gives accepted connections a small kernel send
// buffer, so that a client that does not read blocks the server's writes
// soon, as over a real network.
type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// wsMsg is any server message.
type wsMsg struct {
	Type           string            `json:"type"`
	ID             json.RawMessage   `json:"id"`
	Version        int64             `json:"version"`
	CommentVersion int64             `json:"commentVersion"`
	Steps          []json.RawMessage `json:"steps"`
	ClientIDs      []json.RawMessage `json:"clientIDs"`
	Comment        []json.RawMessage `json:"comment"`
	Comments       []json.RawMessage `json:"comments"`
	Threads        []json.RawMessage `json:"threads"`
	Users          int               `json:"users"`
	Doc            json.RawMessage   `json:"doc"`
	Presence       []wsClientEntry   `json:"presence"`
	Clients        []wsClientEntry   `json:"clients"`
	Left           []json.RawMessage `json:"left"`
	Status         int               `json:"status"`
	Message        string            `json:"message"`
	Step           *int              `json:"step"`

	raw string
}

type wsClientEntry struct {
	ClientID json.RawMessage `json:"clientID"`
	Name     *string         `json:"name"`
	Color    *string         `json:"color"`
	Data     json.RawMessage `json:"data"`
	Anchor   *int            `json:"anchor"`
	Head     *int            `json:"head"`
}

// wsClient is a test client.
type wsClient struct {
	t        testing.TB
	c        *websocket.Conn
	clientID string // of the hello
	// users is the count of the last push of a user count alone (a
	// steps push without steps or comment events), which read skips
	// unless keepUsers.
	users     int
	keepUsers bool
}

// dial connects to document id; a slow client gets a small receive
// buffer (and should then not read).
func (e *wsEnv) dial(t testing.TB, id string, slow bool) *wsClient {
	t.Helper()
	opts := &websocket.DialOptions{Subprotocols: []string{WSSubprotocol}}
	if slow {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetReadBuffer(16 << 10)
				}
				return c, err
			},
		}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.ts.URL, "http")+"/docs/"+id+"/ws", opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != WSSubprotocol {
		t.Errorf("subprotocol %q, want %q", got, WSSubprotocol)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: t, c: c}
}

// send sends a message.
func (c *wsClient) send(msg string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatalf("send %s: %v", msg, err)
	}
}

// read returns the next message, or the error that ended the connection,
// skipping the pushes of a user count alone (unless keepUsers).
func (c *wsClient) read(timeout time.Duration) (wsMsg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		typ, data, err := c.c.Read(ctx)
		if err != nil {
			return wsMsg{}, err
		}
		var m wsMsg
		if typ != websocket.MessageText {
			return m, fmt.Errorf("message of type %v", typ)
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return m, fmt.Errorf("%v: %s", err, data)
		}
		m.raw = string(data)
		if !c.keepUsers && m.Type == "steps" && len(m.Steps) == 0 && len(m.Comment) == 0 && len(m.Threads) == 0 {
			c.users = m.Users
			continue
		}
		return m, nil
	}
}

// next returns the next message, which must be of type typ.
func (c *wsClient) next(typ string) wsMsg {
	c.t.Helper()
	m, err := c.read(5 * time.Second)
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", typ, err)
	}
	if m.Type != typ {
		c.t.Fatalf("got %s, want a %s message", m.raw, typ)
	}
	return m
}

// nextSkipping returns the next message of type typ, skipping presence
// messages.
func (c *wsClient) nextSkipping(typ string) wsMsg {
	c.t.Helper()
	for {
		m, err := c.read(5 * time.Second)
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", typ, err)
		}
		if m.Type == typ {
			return m
		}
		if m.Type != "presence" {
			c.t.Fatalf("got %s, want a %s message", m.raw, typ)
		}
	}
}

// closed reads until the connection ends and returns its close status,
// skipping at most skip messages.
func (c *wsClient) closed(skip int) (websocket.StatusCode, string) {
	c.t.Helper()
	for i := 0; ; i++ {
		m, err := c.read(10 * time.Second)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			c.t.Fatalf("connection ended without a close frame: %v", err)
		}
		if i >= skip {
			c.t.Fatalf("got %s, want the connection closed", m.raw)
		}
	}
}

// hello sends a hello at version (-1 for null) with comment version 0.
func (c *wsClient) hello(version int, clientID string) {
	c.t.Helper()
	c.clientID = clientID
	v := "null"
	if version >= 0 {
		v = strconv.Itoa(version)
	}
	c.send(`{"type":"hello","version":` + v + `,"commentVersion":0,"clientID":` + clientID + `,"name":"user ` + strings.Trim(clientID, `"`) + `","color":"#a0b1c2"}`)
}

// stepsMsg returns a steps message.
func stepsMsg(id, version int, clientID string, steps ...string) string {
	return `{"type":"steps","id":` + strconv.Itoa(id) + `,"version":` + strconv.Itoa(version) +
		`,"clientID":` + clientID + `,"steps":[` + strings.Join(steps, ",") + `]}`
}

// post submits steps over HTTP and fails unless accepted.
func (e *wsEnv) post(t *testing.T, id string, version int, clientID string, steps ...string) {
	t.Helper()
	e.mustPost(t, id, `{"version":`+strconv.Itoa(version)+`,"clientID":`+clientID+`,"steps":[`+strings.Join(steps, ",")+`]}`)
}

func TestWSWelcomeAndPush(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	e.post(t, "d", 0, "7", insert(1, "ab"), insert(3, "c"))

	a := e.dial(t, "d", false)
	a.hello(0, "1")
	w := a.next("welcome")
	// Users: the HTTP client and this one.
	if w.Version != 2 || len(w.Steps) != 2 || len(w.ClientIDs) != 2 || string(w.ClientIDs[0]) != "7" ||
		w.Users != 2 || w.Presence == nil || len(w.Presence) != 0 {
		t.Fatalf("welcome %s", w.raw)
	}
	if string(w.Steps[1]) != insert(3, "c") {
		t.Errorf("welcome step 1 is %s, want %s", w.Steps[1], insert(3, "c"))
	}

	// Up to date: an empty welcome, then the live pushes.
	b := e.dial(t, "d", false)
	b.hello(2, `"b"`)
	if w := b.next("welcome"); w.Version != 2 || len(w.Steps) != 0 || w.Steps == nil ||
		len(w.Presence) != 1 || string(w.Presence[0].ClientID) != "1" || *w.Presence[0].Name != "user 1" ||
		*w.Presence[0].Color != "#a0b1c2" || w.Presence[0].Anchor != nil {
		t.Fatalf("welcome %s", w.raw)
	}
	// A long-poll submission is pushed to both.
	e.post(t, "d", 2, "9", insert(1, "x"))
	for _, c := range []*wsClient{a, b} {
		m := c.nextSkipping("steps")
		if m.Version != 3 || len(m.Steps) != 1 || string(m.Steps[0]) != insert(1, "x") ||
			string(m.ClientIDs[0]) != "9" || m.Comment == nil {
			t.Fatalf("push %s", m.raw)
		}
	}
	// A comment-only submission is pushed too.
	e.mustPost(t, "d", `{"version":3,"clientID":0,"steps":[],"comment":[{"type":"create","id":5,"from":1,"to":2,"text":"hi"}]}`)
	if m := b.nextSkipping("steps"); m.Version != 3 || m.CommentVersion != 1 || len(m.Steps) != 0 || len(m.Comment) != 1 {
		t.Fatalf("comment push %s", m.raw)
	}
	// And a WebSocket submission is seen by the long poll.
	b.send(stepsMsg(1, 3, `"b"`, insert(1, "y")))
	if m := b.nextSkipping("steps"); m.Version != 4 {
		t.Fatalf("push %s", m.raw)
	}
	if ack := b.nextSkipping("ack"); string(ack.ID) != "1" || ack.Version != 4 || ack.CommentVersion != 1 {
		t.Fatalf("ack %s", ack.raw)
	}
	body := e.mustGet(t, "/docs/d/events?version=3&commentVersion=1")
	if !strings.Contains(body, insert(1, "y")) || !strings.Contains(body, `"clientIDs":["b"]`) {
		t.Fatalf("events %s", body)
	}
}

func TestWSSnapshot(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{History: 2}, nil)
	e.post(t, "d", 0, "7", insert(1, "ab"), insert(3, "c"), insert(1, "z"))

	for _, tc := range []struct {
		name    string
		hello   int // -1: null
		version int // of the snapshot
	}{{"null version", -1, 3}, {"history gone", 0, 4}} {
		c := e.dial(t, "d", false)
		c.hello(tc.hello, "1")
		s := c.next("snapshot")
		if s.Version != int64(tc.version) || !strings.Contains(string(s.Doc), `zabc"`) || s.Comments == nil ||
			s.Users != 2 || s.Presence == nil {
			t.Fatalf("%s: snapshot %s", tc.name, s.raw)
		}
		// Live pushes follow.
		e.post(t, "d", tc.version, "7", insert(1, "q"))
		if m := c.nextSkipping("steps"); m.Version != int64(tc.version+1) {
			t.Fatalf("%s: push %s", tc.name, m.raw)
		}
	}
	// Within the history: a welcome.
	c := e.dial(t, "d", false)
	c.hello(3, "1")
	if w := c.next("welcome"); w.Version != 5 || len(w.Steps) != 2 {
		t.Fatalf("welcome %s", w.raw)
	}
}

// TestWSHistoryGoneBehindHub: a submission of more steps than the
// authority keeps leaves the hub unable to push them: its clients are
// closed with 4008, resync with a snapshot, and get the pushes that
// follow.
func TestWSHistoryGoneBehindHub(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{History: 5}, nil)
	var clients []*wsClient
	for _, id := range []string{"1", "2"} {
		c := e.dial(t, "d", false)
		c.hello(0, id)
		c.next("welcome")
		clients = append(clients, c)
	}
	e.post(t, "d", 0, "7", insert(1, "a"), insert(1, "b"), insert(1, "c"), insert(1, "d"), insert(1, "e"), insert(1, "f"))
	for _, c := range clients {
		if code, reason := c.closed(5); code != wsCloseTooSlow || reason != "too slow: resync" {
			t.Fatalf("closed with %d %q, want 4008", code, reason)
		}
	}
	again := e.dial(t, "d", false)
	again.hello(0, "1")
	if s := again.next("snapshot"); s.Version != 6 || !strings.Contains(string(s.Doc), `"fedcba"`) {
		t.Fatalf("snapshot %s", s.raw)
	}
	e.post(t, "d", 6, "7", insert(1, "g"))
	if m := again.nextSkipping("steps"); m.Version != 7 || len(m.Steps) != 1 {
		t.Fatalf("push %s", m.raw)
	}
	// A client that joins later is welcomed at the hub's version.
	late := e.dial(t, "d", false)
	late.hello(6, "3")
	if w := late.next("welcome"); w.Version != 7 || len(w.Steps) != 1 {
		t.Fatalf("welcome %s", w.raw)
	}
}

// TestWSPresenceSizes: presence is checked against the document's size at
// the version it was sent at, which a step whose changed range ends at the
// document's end (a replaceAround inserting a node there) grows by more
// than mapping the end shows, and an addMark with from > to changes
// without any map.
func TestWSPresenceSizes(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	e.post(t, "d", 0, "7", insert(1, "ab")) // size 4
	a, b := e.joinedPair(t, 1)
	// An empty code block after the paragraph: size 6.
	e.post(t, "d", 1, "7", `{"stepType":"replaceAround","from":4,"to":4,"gapFrom":4,"gapTo":4,"insert":1,"slice":{"content":[{"type":"code_block"}]}}`)
	a.nextSkipping("steps")
	b.nextSkipping("steps")
	a.send(`{"type":"presence","version":2,"anchor":5,"head":5}`)
	if m, p := b.selectionOf("1"); m.Version != 2 || ptrInt(p.Anchor) != 5 {
		t.Fatalf("presence %s", m.raw)
	}
	// from > to duplicates the paragraph's content: size 8, empty map.
	e.post(t, "d", 2, "7", `{"stepType":"addMark","from":3,"to":1,"mark":{"type":"em"}}`)
	a.nextSkipping("steps")
	b.nextSkipping("steps")
	st, err := e.s.collab.Get(context.Background(), "d", "")
	if err != nil {
		t.Fatal(err)
	}
	end := st.Doc.Content.Size()
	if end != 8 {
		t.Fatalf("document %s: size %d, want 8", st.DocJSON, end)
	}
	a.send(`{"type":"presence","version":3,"anchor":8,"head":7}`)
	if m, p := b.selectionOf("1"); m.Version != 3 || ptrInt(p.Anchor) != 8 || ptrInt(p.Head) != 7 {
		t.Fatalf("presence %s", m.raw)
	}
}

func TestWSVersionAhead(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	e.post(t, "d", 0, "7", insert(1, "ab"))
	c := e.dial(t, "d", false)
	c.hello(9, "1")
	m := c.next("error")
	if m.Status != 400 || m.Message != "Invalid version 9" || m.ID != nil {
		t.Fatalf("error %s", m.raw)
	}
	if code, _ := c.closed(0); code != 4400 {
		t.Fatalf("closed with %d, want 4400", code)
	}
	// The comment version too.
	c = e.dial(t, "d", false)
	c.send(`{"type":"hello","version":1,"commentVersion":3,"clientID":1}`)
	if m := c.next("error"); m.Status != 400 || !strings.HasPrefix(m.Message, "Invalid version 3") {
		t.Fatalf("error %s", m.raw)
	}
	if code, _ := c.closed(0); code != 4400 {
		t.Fatalf("closed with %d, want 4400", code)
	}
}

func TestWSSubmit(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	a := e.dial(t, "d", false)
	a.hello(0, "1")
	a.next("welcome")
	b := e.dial(t, "d", false)
	b.hello(0, "2")
	b.next("welcome")

	// The steps come before the ack.
	a.send(stepsMsg(11, 0, "1", insert(1, "ab"), insert(3, "c")))
	if m := a.nextSkipping("steps"); m.Version != 2 || len(m.Steps) != 2 || string(m.ClientIDs[1]) != "1" {
		t.Fatalf("push %s", m.raw)
	}
	if m := a.nextSkipping("ack"); string(m.ID) != "11" || m.Version != 2 || m.CommentVersion != 0 {
		t.Fatalf("ack %s", m.raw)
	}
	if m := b.nextSkipping("steps"); m.Version != 2 {
		t.Fatalf("push %s", m.raw)
	}

	// A stale version: conflict, nothing changes.
	b.send(stepsMsg(12, 1, "2", insert(1, "x")))
	if m := b.nextSkipping("conflict"); string(m.ID) != "12" || m.Version != 2 {
		t.Fatalf("conflict %s", m.raw)
	}

	// A failing step: 422 naming it, nothing changes and nothing is pushed.
	b.send(stepsMsg(13, 2, "2", insert(1, "x"), insert(99, "y")))
	m := b.nextSkipping("error")
	if string(m.ID) != "13" || m.Status != 422 || m.Step == nil || *m.Step != 1 || m.Message == "" {
		t.Fatalf("error %s", m.raw)
	}
	// Malformed submissions answer as POST /docs/{id}/events does.
	b.send(`{"type":"steps","id":14,"version":"2","steps":[]}`)
	if m := b.nextSkipping("error"); string(m.ID) != "14" || m.Status != 400 || !strings.Contains(m.Message, `"version"`) {
		t.Fatalf("error %s", m.raw)
	}
	b.send(`{"type":"steps","id":15,"version":2,"steps":[{"stepType":"nope"}],"clientID":2}`)
	if m := b.nextSkipping("error"); string(m.ID) != "15" || m.Status != 422 || m.Step == nil || *m.Step != 0 {
		t.Fatalf("error %s", m.raw)
	}
	// Without an id too, and the connection stays.
	b.send(`{"type":"steps","version":2,"steps":[{"stepType":"nope"}],"clientID":2}`)
	if m := b.nextSkipping("error"); m.ID != nil || m.Status != 422 || m.Step == nil || *m.Step != 0 {
		t.Fatalf("error %s", m.raw)
	}
	b.send(`{"type":"steps","version":9,"steps":[],"clientID":2}`)
	if m := b.nextSkipping("error"); m.ID != nil || m.Status != 400 || m.Message != "Invalid version 9" {
		t.Fatalf("error %s", m.raw)
	}
	if body := e.mustGet(t, "/docs/d"); !strings.Contains(body, `"version":2,`) || !strings.Contains(body, `"abc"`) {
		t.Fatalf("document changed: %s", body)
	}
	// The next push a receives is the next accepted submission.
	b.send(stepsMsg(16, 2, "2", insert(1, "z")))
	if m := a.nextSkipping("steps"); m.Version != 3 || string(m.Steps[0]) != insert(1, "z") {
		t.Fatalf("push %s", m.raw)
	}
}

// TestWSStorageFailure checks that a submission the store fails to take
// answers error 503 with its id, changes nothing and keeps the
// connection, and that the same submission succeeds once the store is
// back; a hello for a document the store cannot load gets 503 and 1011.
func TestWSStorageFailure(t *testing.T) {
	st := &failingStore{Store: memstore.New()}
	e := newWS(t, Config{}, collab.Config{Store: st}, nil)
	a, b := e.joinedPair(t, 0)

	st.fail.Store(true)
	a.send(stepsMsg(21, 0, "1", insert(1, "ab")))
	if m := a.nextSkipping("error"); string(m.ID) != "21" || m.Status != 503 || m.Message != "storage unavailable: try again later" {
		t.Fatalf("error %s", m.raw)
	}
	// The server logs the failure after sending the error.
	waitFor(t, func() bool {
		l := e.logs.String()
		return strings.Contains(l, `websocket: submission failed`) && strings.Contains(l, `database or disk is full`)
	})
	c := e.dial(t, "other", false)
	c.hello(-1, "3")
	if m := c.next("error"); m.ID != nil || m.Status != 503 {
		t.Fatalf("hello while the store fails: %s", m.raw)
	}
	if code, _ := c.closed(0); code != websocket.StatusInternalError {
		t.Fatalf("closed with %v, want 1011", code)
	}

	st.fail.Store(false)
	a.send(stepsMsg(22, 0, "1", insert(1, "ab")))
	if m := a.nextSkipping("steps"); m.Version != 1 || string(m.Steps[0]) != insert(1, "ab") {
		t.Fatalf("push %s", m.raw)
	}
	if m := a.nextSkipping("ack"); string(m.ID) != "22" || m.Version != 1 {
		t.Fatalf("ack %s", m.raw)
	}
	if m := b.nextSkipping("steps"); m.Version != 1 {
		t.Fatalf("the other client's first push after the failure: %s", m.raw)
	}
}

func TestWSBadInput(t *testing.T) {
	e := newWS(t, Config{Limits: Limits{MaxBodyBytes: 4096}}, collab.Config{}, nil)
	c := e.dial(t, "d", false)
	// Messages that concern the connection: an error, the connection stays.
	for _, tc := range []struct{ msg, want string }{
		{`{"type":`, "JSON"},
		{`[1]`, "object"},
		{`{"id":1}`, `missing "type"`},
		{`{"type":"dance"}`, "unknown message type"},
		{`{"type":"ping","id":"x"}`, `"id" must be a number`},
	} {
		c.send(tc.msg)
		m := c.next("error")
		if m.Status != 400 || m.ID != nil || !strings.Contains(m.Message, tc.want) {
			t.Errorf("%s: got %s, want 400 mentioning %q", tc.msg, m.raw, tc.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.c.Write(ctx, websocket.MessageBinary, []byte(`{"type":"ping"}`))
	if m := c.next("error"); m.Status != 400 || !strings.Contains(m.Message, "binary") {
		t.Errorf("binary: %s", m.raw)
	}
	c.send(`{"type":"ping","id":3}`)
	if m := c.next("pong"); string(m.ID) != "3" {
		t.Errorf("pong %s", m.raw)
	}

	// Protocol violations close the connection with 1008.
	for _, msg := range []string{
		`{"type":"steps","id":1,"version":0,"steps":[]}`,
		`{"type":"presence","version":0,"anchor":1,"head":1}`,
		`{"type":"hello","version":0,"clientID":1,"color":"red"}`,
		`{"type":"hello","version":0,"clientID":1,"name":"` + strings.Repeat("n", 65) + `"}`,
		`{"type":"hello","version":0,"clientID":-1}`,
		`{"type":"hello","version":0,"clientID":{}}`,
		`{"type":"hello","version":0}`,
		`{"type":"hello","version":-1,"clientID":1}`,
		`{"type":"hello","clientID":1}`,
	} {
		c := e.dial(t, "d", false)
		c.send(msg)
		if m := c.next("error"); m.Status != 400 {
			t.Errorf("%s: %s", msg, m.raw)
		}
		if code, _ := c.closed(0); code != websocket.StatusPolicyViolation {
			t.Errorf("%s: closed with %d, want 1008", msg, code)
		}
	}
	// A second hello too.
	c = e.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	c.hello(0, "1")
	if m := c.nextSkipping("error"); m.Status != 400 || !strings.Contains(m.Message, "twice") {
		t.Errorf("second hello: %s", m.raw)
	}
	if code, _ := c.closed(5); code != websocket.StatusPolicyViolation {
		t.Errorf("second hello: closed with %d, want 1008", code)
	}
	// Over the body limit: 1009.
	c = e.dial(t, "d", false)
	c.send(`{"type":"ping","pad":"` + strings.Repeat("x", 5000) + `"}`)
	if code, _ := c.closed(0); code != websocket.StatusMessageTooBig {
		t.Errorf("big message: closed with %d, want 1009", code)
	}
	// Other paths and methods are not upgraded.
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/docs/d/ws", http.StatusUpgradeRequired}, {"POST", "/docs/d/ws", 405}, {"GET", "/docs/a%00b/ws", 400}} {
		req, _ := http.NewRequest(tc.method, e.ts.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
}

func TestWSPresence(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	e.post(t, "d", 0, "7", insert(1, "abcdef"))
	a, b := e.joinedPair(t, 1)
	// a learns of b joining, then of its cursor.
	if m := a.next("presence"); len(m.Clients) != 1 || string(m.Clients[0].ClientID) != `"b"` || m.Clients[0].Anchor != nil {
		t.Fatalf("presence %s", m.raw)
	}
	b.send(`{"type":"presence","version":1,"anchor":4,"head":6}`)
	if m, p := a.presenceOf(`"b"`); m.Version != 1 || ptrInt(p.Anchor) != 4 || ptrInt(p.Head) != 6 {
		t.Fatalf("presence %s", m.raw)
	}
	// a inserts before b's cursor: it moves.
	a.send(stepsMsg(1, 1, "1", insert(2, "xy")))
	a.nextSkipping("steps")
	a.nextSkipping("ack")
	c := e.dial(t, "d", false)
	c.hello(2, "3")
	w := c.next("welcome")
	var got []string
	for _, p := range w.Presence {
		got = append(got, fmt.Sprintf("%s:%d-%d", p.ClientID, ptrInt(p.Anchor), ptrInt(p.Head)))
	}
	if g := strings.Join(got, " "); g != `1:-1--1 "b":6-8` && g != `"b":6-8 1:-1--1` {
		t.Fatalf("welcome presence %v (%s)", got, w.raw)
	}
	// A selection sent at the old version is mapped to the current one.
	b.send(`{"type":"presence","version":1,"anchor":3,"head":3}`)
	if m, p := a.presenceOf(`"b"`); m.Version != 2 || ptrInt(p.Anchor) != 5 || ptrInt(p.Head) != 5 {
		t.Fatalf("presence %s", m.raw)
	}
	// Positions outside the document are refused; hiding works.
	b.nextSkipping("steps")
	b.send(`{"type":"presence","version":2,"anchor":99,"head":1}`)
	if m := b.nextSkipping("error"); m.Status != 400 {
		t.Fatalf("error %s", m.raw)
	}
	b.send(`{"type":"presence","version":2,"anchor":null}`)
	if m, p := a.presenceOf(`"b"`); p.Anchor != nil || p.Head != nil {
		t.Fatalf("presence %s", m.raw)
	}
	// b never gets its own presence.
	b.send(`{"type":"presence","version":2,"anchor":1,"head":1}`)
	c.send(`{"type":"presence","version":2,"anchor":2,"head":2}`)
	if m, p := b.presenceOf("3"); ptrInt(p.Anchor) != 2 {
		t.Fatalf("presence %s", m.raw)
	}
	// Leaving.
	b.c.Close(websocket.StatusNormalClosure, "")
	for {
		m := a.nextSkipping("presence")
		if len(m.Left) > 0 {
			if len(m.Left) != 1 || string(m.Left[0]) != `"b"` {
				t.Fatalf("presence %s", m.raw)
			}
			break
		}
	}
}

// presenceOf reads presence messages until one has an entry for
// clientID, failing on any entry of the client itself.
func (c *wsClient) presenceOf(clientID string) (wsMsg, wsClientEntry) {
	c.t.Helper()
	for {
		m := c.nextSkipping("presence")
		var found *wsClientEntry
		for i, p := range m.Clients {
			if string(p.ClientID) == c.clientID {
				c.t.Fatalf("a client got its own presence: %s", m.raw)
			}
			if string(p.ClientID) == clientID {
				found = &m.Clients[i]
			}
		}
		if found != nil {
			return m, *found
		}
	}
}

// selectionOf is presenceOf skipping the entries without a selection:
// the one announcing that the client joined may come after a steps push
// (presence is sent throttled), mapped to its version.
func (c *wsClient) selectionOf(clientID string) (wsMsg, wsClientEntry) {
	c.t.Helper()
	for {
		if m, p := c.presenceOf(clientID); p.Anchor != nil {
			return m, p
		}
	}
}

func ptrInt(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// TestWSSlowClient: a client that stops reading is closed with 4008 once
// its queue is full, while the others keep receiving promptly.
func TestWSSlowClient(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxDocSize: 1 << 30}}}, func(h *wsHubs) { h.queueLen = 4 })
	fast := e.dial(t, "d", false)
	fast.hello(0, "1")
	fast.next("welcome")
	slow := e.dial(t, "d", true)
	slow.hello(0, "2")
	// (slow never reads from here on)
	waitFor(t, func() bool { return e.wsConns("d") == 2 })

	big := strings.Repeat("x", 32<<10)
	para := `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"text","text":"` + big + `"}]}]}}`
	for v := range 40 {
		start := time.Now()
		e.post(t, "d", v, "9", para)
		m := fast.nextSkipping("steps")
		if m.Version != int64(v+1) {
			t.Fatalf("push %d: version %d", v+1, m.Version)
		}
		if d := time.Since(start); d > 3*time.Second { // blocked, it would wait for the write timeout (60 s)
			t.Fatalf("push %d took %v", v+1, d)
		}
	}
	waitFor(t, func() bool { return e.wsConns("d") == 1 })
	code, reason := slow.closed(40)
	if code != wsCloseTooSlow || reason != "too slow: resync" {
		t.Fatalf("slow client closed with %d %q, want 4008", code, reason)
	}
	// It resyncs with a hello at its version.
	again := e.dial(t, "d", false)
	again.hello(0, "2")
	if w := again.next("welcome"); w.Version != 40 || len(w.Steps) != 40 {
		t.Fatalf("welcome at %d with %d steps", w.Version, len(w.Steps))
	}
}

// wsConns returns the number of joined connections of document id.
func (e *wsEnv) wsConns(id string) int {
	e.s.ws.mu.Lock()
	h := e.s.ws.hubs[id]
	e.s.ws.mu.Unlock()
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// TestWSLiveness: a client that does not answer pings is closed; one that
// does stays, and stays counted as a user of the document. It waits for
// events, not for times: the only timing it assumes is that the live client
// answers a ping within two ping intervals.
func TestWSLiveness(t *testing.T) {
	const every = 700 * time.Millisecond
	e := newWS(t, Config{}, collab.Config{}, func(h *wsHubs) { h.pingEvery = every })
	live := e.dial(t, "d", false)
	msgs := make(chan wsMsg, 64)
	go func() {
		defer close(msgs)
		for {
			m, err := live.read(time.Minute)
			if err != nil {
				return
			}
			select {
			case msgs <- m:
			default: // keep reading (and answering pings) whatever the test does
			}
		}
	}()
	live.hello(0, "2")
	// The dead one joins after the live one's welcome, so that the live one
	// learns of it from a presence message (a client already there when
	// the live one joined would be in its welcome instead).
	for m := range msgs {
		if m.Type == "welcome" {
			break
		}
	}
	dead := e.dial(t, "d", false)
	dead.hello(0, "1") // and never reads again: it answers no ping

	// The live client sees the dead one join, then leave when the server
	// closes it.
	timeout := time.After(time.Minute)
	for joined, left := false, false; !left; {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the live connection was closed")
			}
			for _, p := range append(m.Presence, m.Clients...) {
				joined = joined || string(p.ClientID) == "1"
			}
			for _, id := range m.Left {
				left = joined && string(id) == "1"
			}
		case <-timeout:
			t.Fatal("the dead connection was not closed")
		}
	}
	// The live one answers pings and stays.
	var c *wsConn
	e.s.ws.mu.Lock()
	h := e.s.ws.hubs["d"]
	e.s.ws.mu.Unlock()
	h.mu.Lock()
	for _, o := range h.conns {
		if string(o.clientID) == "2" {
			c = o
		}
	}
	h.mu.Unlock()
	if c == nil {
		t.Fatal("the live connection is gone")
	}
	for last, pongs, start := c.lastRead.Load(), 0, time.Now(); pongs < 3; time.Sleep(10 * time.Millisecond) {
		if r := c.lastRead.Load(); r != last {
			last, pongs = r, pongs+1
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("%d pongs in a minute", pongs)
		}
	}
	if n := e.wsConns("d"); n != 1 {
		t.Fatalf("%d connections, want the live one", n)
	}
	// Users are counted while seen within the window: pings refresh it.
	e.clock.Advance(2 * usersWindow)
	for start := time.Now(); e.users(t, "d") != 1; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatal("the live connection's user is not counted")
		}
	}
	live.c.Close(websocket.StatusNormalClosure, "")
	for range msgs {
	}
}

// TestWSFramesWithHandshake: frames that arrive with the handshake
// request (read ahead by net/http) are not lost when the connection gets
// its own buffers.
func TestWSFramesWithHandshake(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	nc, err := net.Dial("tcp", strings.TrimPrefix(e.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	hello := []byte(`{"type":"hello","version":null,"clientID":1}`)
	mask := [4]byte{1, 2, 3, 4}
	frame := append([]byte{0x81, 0x80 | byte(len(hello))}, mask[:]...)
	for i, b := range hello {
		frame = append(frame, b^mask[i%4])
	}
	req := "GET /docs/d/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := nc.Write(append([]byte(req), frame...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil {
		t.Fatal(err)
	}
	n := int(head[1] & 0x7f)
	if n == 126 {
		var ext [2]byte
		io.ReadFull(br, ext[:])
		n = int(ext[0])<<8 | int(ext[1])
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(br, payload); err != nil {
		t.Fatal(err)
	}
	if head[0] != 0x81 || !strings.HasPrefix(string(payload), `{"type":"snapshot"`) {
		t.Fatalf("first frame %x %s", head, payload)
	}
}

func TestWSShutdown(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.s.Serve(ctx, ln) }()
	env := &wsEnv{collabEnv: e, ts: &httptest.Server{URL: "http://" + ln.Addr().String()}}
	c := env.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	cancel()
	if code, _ := c.closed(0); code != websocket.StatusServiceRestart {
		t.Fatalf("closed with %d, want 1012", code)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	// Serve returned once the WebSocket was done with.
	e.s.ws.mu.Lock()
	n := len(e.s.ws.conns)
	e.s.ws.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d WebSockets still open after Serve returned", n)
	}
	// A server shutting down takes no more.
	if _, _, err := websocket.Dial(context.Background(), "ws://"+ln.Addr().String()+"/docs/d/ws", nil); err == nil {
		t.Fatal("dialed a stopped server")
	}
}

// TestWSConcurrent has many clients submit to one document at once, as
// prosemirror-collab does (on a conflict, wait for the steps and send
// again), with long polls and HTTP submissions mixed in; every client
// must see the same steps as the authority, in order. Run it with -race.
func TestWSConcurrent(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	const clients, edits = 16, 8
	const total = (clients + 1) * edits // and one HTTP editor
	var wg sync.WaitGroup
	seen := make([][]string, clients)
	// An HTTP editor: POST at the version GET /docs/{id} gives, again on 409.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < edits; {
			var doc struct{ Version int }
			if err := json.Unmarshal(e.serve(defaultIP, "GET", "/docs/d", "", nil).Body.Bytes(), &doc); err != nil {
				t.Error(err)
				return
			}
			body := `{"version":` + strconv.Itoa(doc.Version) + `,"clientID":"http","steps":[` + insert(1, "h") + `]}`
			switch w := e.serve(defaultIP, "POST", "/docs/d/events", body, nil); w.Code {
			case 200:
				n++
			case 409:
			default:
				t.Errorf("POST: %d %s", w.Code, w.Body)
				return
			}
		}
	}()
	// A long poll follows along.
	var polled []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for len(polled) < total {
			// Bounded: when a client fails, the steps it did not send
			// never come, and the test must end with its error.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			w := e.serve(defaultIP, "GET", "/docs/d/events?commentVersion=0&version="+strconv.Itoa(len(polled)), "", ctx)
			cancel()
			var ev struct{ Steps []json.RawMessage }
			if err := json.Unmarshal(w.Body.Bytes(), &ev); w.Code != 200 || err != nil {
				t.Errorf("GET events: %d %s", w.Code, w.Body)
				return
			}
			for _, s := range ev.Steps {
				polled = append(polled, string(s))
			}
		}
	}()
	for i := range clients {
		c := e.dial(t, "d", false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := strconv.Itoa(i + 1)
			c.send(`{"type":"hello","version":0,"commentVersion":0,"clientID":` + id + `}`)
			version, sent, acked := 0, 0, 0
			pending := false
			submit := func() {
				c.send(stepsMsg(sent, version, id, insert(1, id)))
				pending = true
			}
			for acked < edits || version < total {
				m, err := c.read(10 * time.Second)
				if err != nil {
					t.Errorf("client %s: %v", id, err)
					return
				}
				switch m.Type {
				case "welcome", "steps":
					for _, s := range m.Steps {
						seen[i] = append(seen[i], string(s))
					}
					version = int(m.Version)
				case "ack":
					acked++
					sent++
					pending = false
				case "conflict":
					pending = false
				case "presence":
				default:
					t.Errorf("client %s: %s", id, m.raw)
					return
				}
				if !pending && sent < edits && m.Type != "presence" {
					submit()
				}
			}
			c.c.Close(websocket.StatusNormalClosure, "")
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var ev struct{ Steps []json.RawMessage }
	if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/d/events?version=0&commentVersion=0")), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Steps) != total {
		t.Fatalf("%d steps, want %d", len(ev.Steps), total)
	}
	for i, s := range append(seen, polled) {
		if len(s) != len(ev.Steps) {
			t.Fatalf("client %d saw %d steps, want %d", i+1, len(s), len(ev.Steps))
		}
		for j := range s {
			if s[j] != string(ev.Steps[j]) {
				t.Fatalf("client %d: step %d is %s, want %s", i+1, j, s[j], ev.Steps[j])
			}
		}
	}
}

// BenchmarkWSPush measures a submission over WebSocket until every
// connection of the document has received its push.
func BenchmarkWSPush(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(strconv.Itoa(n)+"conns", func(b *testing.B) {
			e := newWS(b, Config{}, collab.Config{}, nil)
			var got sync.WaitGroup
			clients := make([]*wsClient, n)
			for i := range clients {
				c := e.dial(b, "d", false)
				c.hello(0, strconv.Itoa(i+1))
				c.next("welcome")
				clients[i] = c
				go func() {
					for {
						m, err := c.read(time.Minute)
						if err != nil {
							return
						}
						if m.Type == "steps" {
							got.Done()
						}
					}
				}()
			}
			b.ResetTimer()
			for i := range b.N {
				got.Add(n)
				clients[0].send(stepsMsg(i, i, "1", insert(1, "x")))
				got.Wait()
			}
			b.StopTimer()
			for _, c := range clients {
				c.c.Close(websocket.StatusNormalClosure, "")
			}
		})
	}
}

// FuzzWSMessage sends random messages on a joined connection: the server
// never panics, answers only with protocol messages, and closes the
// connection only with the protocol's codes.
func FuzzWSMessage(f *testing.F) {
	for _, seed := range []string{
		`{"type":"steps","id":1,"version":0,"clientID":1,"steps":[` + insert(1, "a") + `]}`,
		`{"type":"steps","id":2,"version":0,"clientID":"x","steps":[{"stepType":"replace","from":0,"to":9}],"comment":[{"type":"create","id":1,"from":0,"to":1,"text":"c"}]}`,
		`{"type":"presence","version":0,"anchor":1,"head":1}`,
		`{"type":"presence","version":0,"anchor":null}`,
		`{"type":"presence","version":1e400,"anchor":-1,"head":2.5}`,
		`{"type":"ping","id":-0.5e3}`,
		`{"type":"hello","version":0,"clientID":1}`,
		`{"type":"steps","type":"ping"}`, `{"type":"\u0070ing"}`, `[]`, `{`, ``, `"hello"`,
		`{"type":"steps","id":1,"version":0,"steps":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	} {
		f.Add([]byte(seed))
	}
	e := newWS(f, Config{Limits: Limits{MaxBodyBytes: 1 << 16, MaxDepth: 32}}, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxSteps: 20, MaxDocSize: 10000}}}, nil)
	url := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/docs/fuzz/ws"
	var conn *websocket.Conn
	defer func() {
		if conn != nil {
			conn.CloseNow()
		}
	}()
	types := map[string]bool{"welcome": true, "snapshot": true, "steps": true, "ack": true, "conflict": true,
		"error": true, "presence": true, "pong": true}
	f.Fuzz(func(t *testing.T, msg []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn == nil {
			c, _, err := websocket.Dial(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.SetReadLimit(-1)
			conn = c
			conn.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","version":null,"clientID":1}`))
		}
		err := conn.Write(ctx, websocket.MessageText, msg)
		if err == nil {
			err = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"ping","id":424242}`))
		}
		for err == nil {
			var data []byte
			if _, data, err = conn.Read(ctx); err != nil {
				break
			}
			var m wsMsg
			if jerr := json.Unmarshal(data, &m); jerr != nil || !types[m.Type] {
				t.Fatalf("answer %s (%v) to %q", data, jerr, msg)
			}
			if m.Type == "error" && (m.Status < 400 || m.Status >= 500 || m.Message == "") {
				t.Fatalf("error %s to %q", data, msg)
			}
			if m.Type == "pong" && string(m.ID) == "424242" {
				break
			}
		}
		if err != nil {
			switch code := websocket.CloseStatus(err); code {
			case websocket.StatusPolicyViolation, websocket.StatusMessageTooBig, wsCloseInvalidVersion:
			default:
				t.Fatalf("connection ended (%v) after %q", err, msg)
			}
			conn.CloseNow()
			conn = nil
		}
		if strings.Contains(e.logs.String(), "panic") {
			t.Fatalf("server panicked on %q: %s", msg, e.logs.String())
		}
	})
}

// joinedPair dials two clients of the document d, "1" then "b", and
// returns them once both are welcomed at version.
func (e *wsEnv) joinedPair(t *testing.T, version int) (a, b *wsClient) {
	t.Helper()
	a = e.dial(t, "d", false)
	a.hello(version, "1")
	a.next("welcome")
	b = e.dial(t, "d", false)
	b.hello(version, `"b"`)
	b.next("welcome")
	return a, b
}

// TestWSUsersPush checks that a user count that changes between pushes
// of steps (a new user, here a long-poll client at another address) is
// pushed to the WebSocket clients as a push without steps, so that
// editors show the count GET /docs shows.
func TestWSUsersPush(t *testing.T) {
	e := newWS(t, Config{TrustProxy: true}, collab.Config{}, nil)
	a := e.dial(t, "d", false)
	a.keepUsers = true
	a.hello(0, "1")
	if m := a.next("welcome"); m.Users != 1 {
		t.Fatalf("welcome %s, want users 1", m.raw)
	}
	req, err := http.NewRequest("GET", e.ts.URL+"/docs/d", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The join of "1" woke the document's subscriptions with its count:
	// the next wake-up is due 250 ms later (by collab's clock).
	e.clock.Advance(time.Second)
	m := a.nextSkipping("steps")
	if m.Users != 2 || len(m.Steps) != 0 || len(m.Comment) != 0 || m.Version != 0 {
		t.Fatalf("push %s, want users 2 without steps at version 0", m.raw)
	}
	if body := e.mustGet(t, "/docs"); !strings.Contains(body, `"id":"d","users":2,`) {
		t.Errorf("GET /docs: %s, want users 2", body)
	}
}
