package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/transform"
	"github.com/pmauthority/pmauthority/web"
)

// syncBuffer collects the log output of goroutines.
type syncBuffer = testutil.LogBuffer

// startApp serves newApp(cfg) over httptest; the app is closed when the
// test ends.
func startApp(t *testing.T, cfg appConfig) *httptest.Server {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	a, err := newApp(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(a)
	t.Cleanup(func() {
		ts.Close()
		if err := a.Close(); err != nil {
			t.Errorf("closing the app: %v", err)
		}
	})
	return ts
}

// fetch answers method url with body (JSON when not empty).
func fetch(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// docState is what GET /collab/docs/{id} answers (the fields checked).
type docState struct {
	Doc     json.RawMessage `json:"doc"`
	Version int64           `json:"version"`
}

func getDoc(t *testing.T, base, id string) docState {
	t.Helper()
	status, body := fetch(t, "GET", base+"/collab/docs/"+id, "")
	if status != 200 {
		t.Fatalf("GET /collab/docs/%s: %d %s", id, status, body)
	}
	var d docState
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("GET /collab/docs/%s: %v: %s", id, err, body)
	}
	return d
}

// The steps the tests submit, on the empty basic document (one empty
// paragraph).
const (
	textStep  = `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hello"}]}}`
	imageStep = `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"image","attrs":{"src":"cat.png"}}]}}`
)

// webPage is what the demo pages' handler answers at path.
func webPage(t *testing.T, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	web.Handler().ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if w.Code != 200 {
		t.Fatalf("web.Handler() GET %s: %d", path, w.Code)
	}
	return w.Body.String()
}

var scriptRef = regexp.MustCompile(`<script type="module" src="([^"]+)"`)

func TestPages(t *testing.T) {
	ts := startApp(t, appConfig{})
	status, body := fetch(t, "GET", ts.URL+"/", "")
	if status != 200 || !strings.Contains(body, `href="collab/"`) || !strings.Contains(body, `href="collab/edit/welcome"`) {
		t.Errorf("GET /: %d, want the app's page with links to collab/ and an editor:\n%s", status, body)
	}
	// The demo pages under the prefix, /collab redirected to /collab/.
	for path, page := range map[string]string{"/collab": "/", "/collab/": "/", "/collab/edit/welcome": "/edit/welcome"} {
		status, body := fetch(t, "GET", ts.URL+path, "")
		if want := webPage(t, page); status != 200 || body != want {
			t.Errorf("GET %s: %d, want the demo page %s", path, status, page)
			continue
		}
		// The script the page refers to, resolved against the page's URL.
		m := scriptRef.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("GET %s: no script in the page", path)
			continue
		}
		pageURL, _ := url.Parse(ts.URL + path)
		if path == "/collab" {
			pageURL, _ = url.Parse(ts.URL + "/collab/")
		}
		ref, _ := url.Parse(m[1])
		script := pageURL.ResolveReference(ref)
		if !strings.HasPrefix(script.Path, "/collab/assets/") {
			t.Errorf("GET %s: script %s resolves to %s, outside /collab/assets/", path, m[1], script.Path)
		}
		if status, js := fetch(t, "GET", script.String(), ""); status != 200 || len(js) < 1000 {
			t.Errorf("GET %s: %d, %d bytes", script, status, len(js))
		}
	}
	// Nothing of pmauthority outside the prefix.
	for _, path := range []string{"/docs", "/docs/welcome", "/edit/welcome", "/assets/licenses.txt", "/nope"} {
		if status, _ := fetch(t, "GET", ts.URL+path, ""); status != 404 {
			t.Errorf("GET %s: %d, want 404", path, status)
		}
	}
}

func TestCollabAPIAndHooks(t *testing.T) {
	var logs syncBuffer
	ts := startApp(t, appConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	start := getDoc(t, ts.URL, "notes") // created on first use
	if start.Version != 0 {
		t.Fatalf("new document at version %d", start.Version)
	}
	post := func(version int, step string) (int, string) {
		return fetch(t, "POST", ts.URL+"/collab/docs/notes/events",
			`{"version":`+strconv.Itoa(version)+`,"clientID":7,"steps":[`+step+`]}`)
	}

	// An image is refused by BeforeSubmit: 403 with the hook's message,
	// and nothing changes.
	status, body := post(0, imageStep)
	if status != http.StatusForbidden || !strings.Contains(body, "images are not allowed in this app") {
		t.Errorf("POST an image: %d %s, want 403 with the hook's message", status, body)
	}
	if d := getDoc(t, ts.URL, "notes"); d.Version != 0 || !bytes.Equal(d.Doc, start.Doc) {
		t.Errorf("after the refusal: version %d, doc %s; want version 0, %s", d.Version, d.Doc, start.Doc)
	}

	// Text is accepted, and AfterCommit logs the commit.
	status, body = post(0, textStep)
	if status != 200 || !strings.Contains(body, `"version":1`) {
		t.Fatalf("POST text: %d %s, want version 1", status, body)
	}
	if d := getDoc(t, ts.URL, "notes"); d.Version != 1 || !strings.Contains(string(d.Doc), `"text":"hello"`) {
		t.Errorf("after the text: version %d, doc %s", d.Version, d.Doc)
	}
	waitLog(t, &logs, "msg=commit doc=notes from=0 to=1 steps=1")

	// The same over the WebSocket under the prefix.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + "/collab/docs/notes/ws"
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{server.WSSubprotocol}})
	if err != nil {
		t.Fatalf("dial %s: %v", wsURL, err)
	}
	defer c.CloseNow()
	send := func(msg string) {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// next returns the next message of type typ, skipping presence.
	next := func(typ string) map[string]any {
		t.Helper()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v", typ, err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("message %s: %v", b, err)
			}
			if m["type"] == "presence" {
				continue
			}
			if m["type"] != typ {
				t.Fatalf("got %s, want a %s", b, typ)
			}
			return m
		}
	}
	send(`{"type":"hello","version":1,"clientID":8}`)
	if m := next("welcome"); m["version"] != 1.0 {
		t.Fatalf("welcome %v, want version 1", m)
	}
	send(`{"type":"steps","id":1,"version":1,"clientID":8,"steps":[` + imageStep + `]}`)
	if m := next("error"); m["id"] != 1.0 || m["status"] != 403.0 || m["message"] != "images are not allowed in this app" {
		t.Errorf("image over the WebSocket: %v, want error 403 with the hook's message", m)
	}
	send(`{"type":"steps","id":2,"version":1,"clientID":8,"steps":[` + textStep + `]}`)
	if m := next("steps"); m["version"] != 2.0 {
		t.Errorf("pushed %v, want version 2", m)
	}
	if m := next("ack"); m["id"] != 2.0 || m["version"] != 2.0 {
		t.Errorf("ack %v, want id 2 at version 2", m)
	}
	waitLog(t, &logs, "msg=commit doc=notes from=1 to=2 steps=1")
	if d := getDoc(t, ts.URL, "notes"); d.Version != 2 || strings.Contains(string(d.Doc), "image") {
		t.Errorf("after the WebSocket: version %d, doc %s", d.Version, d.Doc)
	}
}

// waitLog waits until logs has a line with want.
func waitLog(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in:\n%s", want, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestInsertsImage(t *testing.T) {
	basic, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	// Each step applies to <p>hello<img></p> (the image at 6).
	doc, err := basic.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello"},{"type":"image","attrs":{"src":"cat.png"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, step string
		want       bool
	}{
		{"text", textStep, false},
		{"image", imageStep, true},
		{"image in a paragraph", `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"image","attrs":{"src":"a.png"}}]}]}}`, true},
		{"image in an open slice", `{"stepType":"replace","from":2,"to":2,"slice":{"content":[{"type":"paragraph","content":[{"type":"text","text":"x"}]},{"type":"paragraph","content":[{"type":"image","attrs":{"src":"a.png"}}]}],"openStart":1,"openEnd":1}}`, true},
		{"delete the image", `{"stepType":"replace","from":6,"to":7}`, false},
		{"wrap", `{"stepType":"replaceAround","from":0,"to":8,"gapFrom":0,"gapTo":8,"insert":1,"slice":{"content":[{"type":"blockquote"}]},"structure":true}`, false},
		{"wrap with an image", `{"stepType":"replaceAround","from":0,"to":8,"gapFrom":0,"gapTo":8,"insert":1,"slice":{"content":[{"type":"blockquote","content":[{"type":"paragraph","content":[{"type":"image","attrs":{"src":"a.png"}}]}]}]},"structure":true}`, true},
		{"mark", `{"stepType":"addMark","from":1,"to":6,"mark":{"type":"em"}}`, false},
		{"image attr", `{"stepType":"attr","pos":6,"attr":"alt","value":"a cat"}`, false},
		{"node mark", `{"stepType":"addNodeMark","pos":6,"mark":{"type":"em"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step, err := transform.StepFromJSON(basic, []byte(tc.step))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := step.Apply(doc); err != nil {
				t.Fatalf("the step does not apply: %v", err)
			}
			if got := insertsImage([]transform.Step{step}); got != tc.want {
				t.Errorf("insertsImage(%s) = %v, want %v", tc.step, got, tc.want)
			}
		})
	}
	// A mark set (the inverse of a mark step) holds only mark steps.
	add, _ := transform.StepFromJSON(basic, []byte(`{"stepType":"addMark","from":1,"to":6,"mark":{"type":"em"}}`))
	img, _ := transform.StepFromJSON(basic, []byte(imageStep))
	if insertsImage([]transform.Step{&transform.MarkSetStep{Steps: []transform.Step{add}}}) {
		t.Error("a mark set inserts an image")
	}
	if !insertsImage([]transform.Step{add, img}) {
		t.Error("the second of two steps inserts an image: not seen")
	}
}

// TestServeAndStop runs serve as main does, stops it as a signal does
// with a WebSocket and a long poll open, and checks that both end, that
// serve returns at once without an error, and that what was accepted is
// in the store afterwards.
func TestServeAndStop(t *testing.T) {
	dir := t.TempDir()
	a, err := newApp(appConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, a) }()
	base := "http://" + ln.Addr().String()
	if status, body := fetch(t, "POST", base+"/collab/docs/kept/events", `{"version":0,"clientID":1,"steps":[`+textStep+`]}`); status != 200 {
		t.Fatalf("POST: %d %s", status, body)
	}
	// A WebSocket open at the stop is ended by it.
	wsCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(wsCtx, "ws"+strings.TrimPrefix(base, "http")+"/collab/docs/kept/ws", &websocket.DialOptions{Subprotocols: []string{server.WSSubprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(wsCtx, websocket.MessageText, []byte(`{"type":"hello","version":1,"clientID":2}`)); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(wsCtx); err != nil || !strings.Contains(string(b), `"welcome"`) {
		t.Fatalf("after the hello: %s, %v", b, err)
	}
	// So is a long poll waiting at the stop, which is answered.
	polled := make(chan string, 1)
	go func() {
		res, err := http.Get(base + "/collab/docs/kept/events?version=1&commentVersion=0")
		if err != nil {
			polled <- err.Error()
			return
		}
		res.Body.Close()
		polled <- res.Status
	}()
	time.Sleep(200 * time.Millisecond) // for the poll to wait

	stopped := time.Now()
	stop()
	for {
		_, b, err := c.Read(wsCtx)
		if err == nil {
			continue // presence, say
		}
		if wsCtx.Err() != nil {
			t.Fatalf("the WebSocket is still open after the stop (last message %s)", b)
		}
		t.Logf("the WebSocket ended %v after the stop: %v", time.Since(stopped), err)
		break
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(2 * shutdownTimeout):
		t.Fatal("serve did not return after the stop")
	}
	t.Logf("serve returned %v after the stop; the long poll got %s", time.Since(stopped), <-polled)
	if d := time.Since(stopped); d >= shutdownTimeout {
		t.Errorf("the stop took %v: the long poll was not answered", d)
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("the server still answers after the stop")
	}

	// The store was closed (a second open of the file works) and holds
	// the step.
	ts := startApp(t, appConfig{DataDir: dir})
	if d := getDoc(t, ts.URL, "kept"); d.Version != 1 || !strings.Contains(string(d.Doc), "hello") {
		t.Errorf("after a restart: version %d, doc %s", d.Version, d.Doc)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"--nope"}, {"extra"}, {"--addr", "256.0.0.1:0", "--data", t.TempDir()}} {
		var stderr bytes.Buffer
		if err := run(args, &stderr); err == nil {
			t.Errorf("run(%q): no error", args)
		}
	}
}
