package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// TestTypist applies the submissions of two typists taking turns to a new
// basic document: every step must apply, and the first paragraph's text
// must be as long as wantText says.
func TestTypist(t *testing.T) {
	schema, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.TopNodeType.CreateAndFill(nil, model.Fragment{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const maxText = 10
	typists := []*typist{newTypist(1, maxText), newTypist(2, maxText)}
	var version int64
	for round := range 20 {
		tp := typists[round%2]
		n := 1 + round%3
		var sub struct {
			Version  int64             `json:"version"`
			Steps    []json.RawMessage `json:"steps"`
			ClientID uint32            `json:"clientID"`
		}
		if err := json.Unmarshal(tp.submission(version, n), &sub); err != nil {
			t.Fatal(err)
		}
		if sub.Version != version || len(sub.Steps) != n || sub.ClientID != tp.clientID {
			t.Fatalf("round %d: submission %+v", round, sub)
		}
		for i, raw := range sub.Steps {
			step, err := transform.StepFromJSON(schema, raw)
			if err != nil {
				t.Fatalf("round %d step %d %s: %v", round, i, raw, err)
			}
			if doc, err = step.Apply(doc); err != nil {
				t.Fatalf("round %d step %d %s: %v", round, i, raw, err)
			}
		}
		version += int64(n)
		text := doc.Child(0).TextContent()
		if int64(len(text)) != wantText(version, maxText) {
			t.Fatalf("version %d: first paragraph %q, want %d letters", version, text, wantText(version, maxText))
		}
	}
}

// TestConn checks that the client reads answers with a Content-Length,
// chunked answers and several answers on one connection.
func TestConn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			w.WriteHeader(201)
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		default:
			var b strings.Builder
			b.WriteString(r.Method + " " + r.URL.RequestURI() + " ")
			buf := make([]byte, 64)
			for {
				n, err := r.Body.Read(buf)
				b.Write(buf[:n])
				if err != nil {
					break
				}
			}
			w.Write([]byte(b.String()))
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c, err := dialConn(addr, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/docs/a/events?version=1&commentVersion=0", "", 200, "GET /docs/a/events?version=1&commentVersion=0 "},
		{"POST", "/docs/a/events", `{"version":1}`, 200, `POST /docs/a/events {"version":1}`},
		{"GET", "/chunked", "", 201, "part0;part1;part2;"},
		{"POST", "/x", "", 200, "POST /x "},
	} {
		status, body, err := c.do(tc.method, tc.path, []byte(tc.body))
		if err != nil || status != tc.status || string(body) != tc.want {
			t.Errorf("%s %s: %d %q %v, want %d %q", tc.method, tc.path, status, body, err, tc.status, tc.want)
		}
	}
}

// TestConnToken checks that a connection dialled with a token sends it as
// a bearer token with every request, GET and POST, and one dialled
// without sends no Authorization header.
func TestConnToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Method + " [" + strings.Join(r.Header.Values("Authorization"), "|") + "]"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct{ token, want string }{
		{"abc.def.ghi", "[Bearer abc.def.ghi]"},
		{"", "[]"},
	} {
		c, err := dialConn(addr, tc.token)
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"GET", "POST", "GET"} {
			var body []byte
			if method == "POST" {
				body = []byte("{}")
			}
			status, body, err := c.do(method, "/docs/a/events", body)
			if want := method + " " + tc.want; err != nil || status != 200 || string(body) != want {
				t.Errorf("token %q, %s: %d %q %v, want 200 %q", tc.token, method, status, body, err, want)
			}
		}
		c.Close()
	}
}

// TestCeilingLoad builds the go-ceiling server, starts it, and runs a
// short editors load and a short fanout load against it: both must end
// without an error (the editors load checks the versions, not the text,
// as run does for go-ceiling).
func TestCeilingLoad(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the ceiling server")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "collabceiling")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./ceiling").CombinedOutput(); err != nil {
		t.Fatalf("go build ./ceiling: %v\n%s", err, out)
	}
	port, err := benchproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p, err := benchproc.StartServer(exec.Command(bin, "-addr", addr), addr, filepath.Join(dir, "ceiling.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(stopGrace)
	if err := waitReady(p, 10*time.Second); err != nil {
		t.Fatalf("%v: %s", err, p.LogTail(5))
	}
	ed, err := runEditors(editorsOptions{Addr: addr, Docs: 2, Editors: 3, Prefix: "t-", MaxText: 50, Seed: 1,
		Warmup: 200 * time.Millisecond, Duration: time.Second, PID: p.Pid(), NoTextCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("editors: %.0f steps/s, 409 rate %.2f", ed.StepsPerSec, ed.ConflictRate)
	if ed.Errors > 0 || ed.Steps == 0 || ed.Conflicts == 0 {
		t.Errorf("editors: %d steps, %d conflicts, %d errors (first: %s)", ed.Steps, ed.Conflicts, ed.Errors, ed.FirstError)
	}
	// The same server twice, as a cluster's nodes: the editors are spread
	// over the addresses and the CPU times added up.
	ed, err = runEditors(editorsOptions{Addrs: []string{addr, addr}, PIDs: []int{p.Pid(), p.Pid()}, Docs: 2, Editors: 3, Prefix: "t2-",
		MaxText: 50, Seed: 1, Warmup: 200 * time.Millisecond, Duration: time.Second, NoTextCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if ed.Errors > 0 || ed.Steps == 0 || ed.CPU.Server < 0 {
		t.Errorf("editors over two addresses: %d steps, server CPU %v, %d errors (first: %s)", ed.Steps, ed.CPU.Server, ed.Errors, ed.FirstError)
	}
	fan, err := runFanout(fanoutOptions{Addr: addr, Doc: "t-fanout", Readers: 20, Rate: 20, MaxText: 50, Seed: 1,
		Warmup: 200 * time.Millisecond, Duration: time.Second, Grace: 500 * time.Millisecond, PID: p.Pid()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fanout: delivery p50 %s p99 %s", fmtDur(fan.Delivery.P50), fmtDur(fan.Delivery.P99))
	if fan.Errors > 0 || fan.Submits == 0 || fan.Missed != 0 {
		t.Errorf("fanout: %d submits, %d of %d delivered, %d errors (first: %s)", fan.Submits, fan.Deliveries, fan.Expected, fan.Errors, fan.FirstError)
	}
}

// TestTreeCPU checks that treeCPU finds a process's children.
func TestTreeCPU(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	got := treeCPU(os.Getpid())
	if _, ok := got[os.Getpid()]; !ok {
		t.Errorf("treeCPU(self) = %v: no entry for the process itself", got)
	}
	if _, ok := got[cmd.Process.Pid]; !ok {
		t.Errorf("treeCPU(self) = %v: no entry for the child %d", got, cmd.Process.Pid)
	}
	if len(treeCPU(-5)) != 0 {
		t.Error("treeCPU of no process found some")
	}
}
