package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// TestWSInvalidUTF8: a text frame that is not UTF-8 closes the connection
// with 1007 (RFC 6455 §8.1), before or after the hello; an escaped lone
// surrogate in valid UTF-8 JSON is not that, and a ping before the hello
// is answered.
func TestWSInvalidUTF8(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	for _, hello := range []bool{false, true} {
		c := e.dial(t, "d", false)
		c.send(`{"type":"ping","id":1,"pad":"\ud800"}`)
		if m := c.next("pong"); string(m.ID) != "1" {
			t.Fatalf("pong %s", m.raw)
		}
		if hello {
			c.hello(0, "1")
			c.next("welcome")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.c.Write(ctx, websocket.MessageText, []byte("{\"type\":\"ping\",\"id\":2,\"pad\":\"\xff\"}"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := c.closed(0); code != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("hello %v: closed with %d, want 1007", hello, code)
		}
	}
}

// TestHeadCreatesNothing: HEAD /docs/{id} answers 404 for a document that
// does not exist, and does not create it (GET does, as in the demo); for
// one that exists it answers 200 as GET does.
func TestHeadCreatesNothing(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	if status, _ := e.request(t, "HEAD", "/docs/new", ""); status != 404 {
		t.Fatalf("HEAD of an unknown document: %d, want 404", status)
	}
	if ok, err := e.auth.Exists(context.Background(), "new"); err != nil || ok {
		t.Fatalf("after HEAD the document exists: %v %v", ok, err)
	}
	if status, _ := e.request(t, "GET", "/docs/new", ""); status != 200 {
		t.Fatalf("GET: %d", status)
	}
	if status, _ := e.request(t, "HEAD", "/docs/new", ""); status != 200 {
		t.Fatalf("HEAD of an existing document: %d", status)
	}
}

// TestCSRF: a request that changes state must be JSON from the server's
// own origin, an allowed one, or no browser at all: what a page of
// another origin can send without a CORS preflight (no Content-Type, or
// text/plain, as fetch with mode "no-cors" and sendBeacon send) is
// refused, and so is a cross-origin JSON request; nothing changes. The
// stateless apply endpoint still takes a body without Content-Type.
func TestCSRF(t *testing.T) {
	e := newCollab(t, Config{AllowOrigins: []string{"app.example.com"}}, collab.Config{})
	body := `{"version":0,"clientID":1,"steps":[` + insert(1, "x") + `]}`
	post := func(contentType, origin, host string) (int, string) {
		r := httptest.NewRequest("POST", "/docs/d/events", strings.NewReader(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if host != "" {
			r.Host = host
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for _, tc := range []struct {
		name, contentType, origin, host string
		status                          int
		msg                             string
	}{
		{"no Content-Type", "", "", "", 415, "missing Content-Type"},
		{"text/plain", "text/plain", "http://evil.example", "", 415, "unsupported Content-Type"},
		{"cross-origin JSON", "application/json", "http://evil.example", "", 403, "cross-origin request refused"},
		{"null origin", "application/json", "null", "", 403, "cross-origin request refused"},
		{"origin of another port", "application/json", "http://127.0.0.1:9", "127.0.0.1:8080", 403, "cross-origin"},
	} {
		status, answer := post(tc.contentType, tc.origin, tc.host)
		if status != tc.status || !strings.Contains(answer, tc.msg) {
			t.Errorf("%s: %d %s, want %d mentioning %q", tc.name, status, answer, tc.status, tc.msg)
		}
	}
	if status, _ := e.request(t, "GET", "/docs/d", ""); status != 200 {
		t.Fatalf("GET: %d", status)
	}
	st, err := e.auth.Get(context.Background(), "d", "")
	if err != nil || st.Version != 0 {
		t.Fatalf("after the refusals: version %d, %v", st.Version, err)
	}
	for i, tc := range []struct{ origin, host string }{
		{"", ""}, // not a browser
		{"http://127.0.0.1:8080", "127.0.0.1:8080"},    // the server's own origin
		{"https://app.example.com", "pma.example.com"}, // an allowed one
	} {
		body = `{"version":` + fmt.Sprint(i) + `,"clientID":1,"steps":[` + insert(1, "x") + `]}`
		if status, answer := post("application/json", tc.origin, tc.host); status != 200 {
			t.Errorf("origin %q: %d %s, want 200", tc.origin, status, answer)
		}
	}
	r := httptest.NewRequest("POST", "/v1/apply", strings.NewReader(`{"doc":{"type":"doc","content":[{"type":"paragraph"}]},"steps":[]}`))
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("apply without Content-Type: %d %s", w.Code, w.Body)
	}
}

// TestCSRFDelete: DELETE /docs/{id} checks Origin as the POST routes do:
// a cross-origin one (or "null") is refused with 403 and the document
// stays; without Origin (not a browser), from the server's own origin or
// an allowed one, it is deleted. It needs no Content-Type.
func TestCSRFDelete(t *testing.T) {
	e := newCollab(t, Config{AllowOrigins: []string{"app.example.com"}}, collab.Config{})
	del := func(id, origin, host string) (int, string) {
		r := httptest.NewRequest("DELETE", "/docs/"+id, nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if host != "" {
			r.Host = host
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	exists := func(id string) bool {
		ok, err := e.auth.Exists(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i, tc := range []struct {
		origin, host string
		status       int
	}{
		{"http://evil.example", "", 403},
		{"null", "", 403},
		{"http://127.0.0.1:9", "127.0.0.1:8080", 403},
		{"", "", 204},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", 204},
		{"https://app.example.com", "pma.example.com", 204},
	} {
		id := fmt.Sprint("d", i)
		if status, _ := e.request(t, "GET", "/docs/"+id, ""); status != 200 {
			t.Fatalf("GET: %d", status)
		}
		status, answer := del(id, tc.origin, tc.host)
		if status != tc.status || tc.status == 403 && !strings.Contains(answer, "cross-origin request refused") {
			t.Errorf("DELETE with origin %q: %d %s, want %d", tc.origin, status, answer, tc.status)
		}
		if exists(id) != (tc.status == 403) {
			t.Errorf("DELETE with origin %q, answered %d: the document exists: %v", tc.origin, status, exists(id))
		}
	}
}

// TestHostCheck: served on a loopback address without AllowedHosts, the
// server answers only requests for localhost and loopback addresses: a
// page of another domain resolved to it (DNS rebinding) gets 421 on the
// API, the pages and the WebSocket upgrade, and reads nothing. With
// AllowedHosts, only their hosts are answered, through ServeHTTP too.
func TestHostCheck(t *testing.T) {
	e := newCollab(t, Config{Web: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })}, collab.Config{})
	addr, _ := serving(t, e.s)
	_, port, _ := net.SplitHostPort(addr)
	get := func(host, path string, header http.Header) (int, string) {
		t.Helper()
		r, err := http.NewRequest("GET", "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			r.Header[k] = v
		}
		r.Host = host
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}, "Origin": {"http://evil.example:" + port}}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port} {
		for _, path := range []string{"/docs/d", "/", "/docs", "/healthz/x"} {
			if status, body := get(host, path, nil); status != http.StatusMisdirectedRequest || !strings.Contains(body, "unknown host") {
				t.Errorf("Host %s, GET %s: %d %s, want 421", host, path, status, body)
			}
		}
		// The probes answer whatever the Host.
		for _, path := range []string{"/healthz", "/readyz"} {
			if status, body := get(host, path, nil); status != 200 {
				t.Errorf("Host %s, GET %s: %d %s, want 200", host, path, status, body)
			}
		}
		if status, _ := get(host, "/docs/d/ws", upgrade); status != http.StatusMisdirectedRequest {
			t.Errorf("Host %s, WebSocket upgrade: %d, want 421", host, status)
		}
	}
	for _, host := range []string{addr, "localhost:" + port, "app.localhost:" + port, "[::1]:" + port, "127.0.0.2:" + port} {
		if status, body := get(host, "/docs/d", nil); status != 200 {
			t.Errorf("Host %s: %d %s, want 200", host, status, body)
		}
	}
	// Requests that do not come through Serve's loopback listener are left
	// to whoever serves them.
	if status, _ := e.request(t, "GET", "/docs/d", ""); status != 200 {
		t.Fatalf("ServeHTTP with Host example.com: %d", status)
	}

	e = newCollab(t, Config{AllowedHosts: []string{"pma.example.com", "*.pma.test"}}, collab.Config{})
	for host, want := range map[string]int{"pma.example.com": 200, "pma.example.com:8443": 200, "a.pma.test": 200,
		"example.com": 421, "localhost": 421} {
		r := httptest.NewRequest("GET", "/docs/d", nil)
		r.Host = host
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("AllowedHosts, Host %s: %d, want %d", host, w.Code, want)
		}
	}
	// A kubelet or load balancer probing by IP address is answered.
	for _, probe := range []string{"GET /healthz", "HEAD /healthz", "GET /readyz", "HEAD /readyz"} {
		method, path, _ := strings.Cut(probe, " ")
		r := httptest.NewRequest(method, path, nil)
		r.Host = "10.1.2.3:8080"
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Errorf("AllowedHosts, %s with Host 10.1.2.3:8080: %d, want 200", probe, w.Code)
		}
	}
	if _, err := New(Config{AllowedHosts: []string{"http://x/"}}); err == nil {
		t.Error("New took an allowed host with a scheme and a path")
	}
}

// TestWALDeleted: once the SQLite store's write-ahead log is deleted under
// the running server (an operator's mistake), submissions answer 503 and
// are not acknowledged, /healthz answers 503 saying why, and the cause is
// logged; nothing acknowledged after the deletion would have been lost.
func TestWALDeleted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pma.db")
	st, err := sqlite.Open(path, sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newCollab(t, Config{}, collab.Config{Store: st})
	post := func(version int) (int, string) {
		w := e.serve(defaultIP, "POST", "/docs/d/events", `{"version":`+fmt.Sprint(version)+`,"clientID":1,"steps":[`+insert(1, "x")+`]}`, nil)
		return w.Code, w.Body.String()
	}
	if status, body := post(0); status != 200 {
		t.Fatalf("POST: %d %s", status, body)
	}
	if status, _ := e.request(t, "GET", "/healthz", ""); status != 200 {
		t.Fatalf("/healthz: %d", status)
	}
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	if status, body := post(1); status != 503 || !strings.Contains(body, "storage unavailable") {
		t.Fatalf("POST after the WAL was deleted: %d %s, want 503", status, body)
	}
	if w := e.serve(defaultIP, "GET", "/healthz", "", nil); w.Code != 503 {
		t.Fatalf("/healthz after the WAL was deleted: %d %s, want 503", w.Code, w.Body)
	}
	if !strings.Contains(e.logs.String(), "write-ahead log") {
		t.Fatalf("the log does not say why:\n%s", e.logs.String())
	}
}
