package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/model"
)

// logBuffer collects log output from concurrent handlers.
type logBuffer = testutil.LogBuffer

// newServer returns a Server for cfg (text as the default schema unless
// cfg says otherwise) logging into the returned buffer.
func newServer(t testing.TB, cfg Config) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.DefaultSchema == "" {
		cfg.DefaultSchema = "text"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, logs
}

// linesSchema is a schema for --schema NAME=FILE tests.
func linesSchema(t testing.TB) *model.Schema {
	t.Helper()
	sc, err := model.LoadSchema([]byte(`{"nodes":{"doc":{"content":"line*"},"line":{"content":"text*"},"text":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const (
	jsonType  = "application/json; charset=utf-8"
	noType    = "-" // send no Content-Type
	emptyDoc  = `{"doc":{"type":"doc"}}`
	basicDoc  = `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}`
	basicDoc2 = `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"fbar"}]}]}`
)

// checkAnswer checks what every answer has: JSON with its Content-Type
// and Content-Length (no body for a 204), and for errors
// {"error":{"message":…}}; it returns
// the error's step (-1 when absent) and message.
func checkAnswer(t *testing.T, status int, h http.Header, body []byte) (step int, msg string) {
	t.Helper()
	if status == http.StatusNoContent {
		if len(body) != 0 {
			t.Errorf("a 204 with a body: %q", body)
		}
		return -1, ""
	}
	if ct := h.Get("Content-Type"); ct != jsonType {
		t.Errorf("Content-Type %q, want %q", ct, jsonType)
	}
	if cl := h.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q for %d bytes", cl, len(body))
	}
	if !json.Valid(body) {
		t.Fatalf("answer is not JSON: %q", body)
	}
	if status == http.StatusOK || status == http.StatusCreated {
		return -1, ""
	}
	var e struct {
		Error *struct {
			Step    *int    `json:"step"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == nil {
		t.Fatalf("error answer %s is not {\"error\":{\"message\":…}}", body)
	}
	if status >= 500 {
		t.Errorf("status %d for client input: %s", status, body)
	}
	if e.Error.Step == nil {
		return -1, *e.Error.Message
	}
	return *e.Error.Step, *e.Error.Message
}

func TestHandler(t *testing.T) {
	s, _ := newServer(t, Config{
		Schemas:     map[string]*model.Schema{"lines": linesSchema(t)},
		Limits:      Limits{MaxBodyBytes: 1000, MaxDepth: 10},
		ApplyLimits: apply.Limits{MaxSteps: 3, MaxDocSize: 20},
	})
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name         string
		method, path string
		ctype        string // "" means application/json, noType none
		body         string
		status       int
		want         string // the whole body (200), or a part of the error message
		step         int    // the error's step (-1: none)
		allow        string
	}{
		{"seed on /", "POST", "/", "", reqtest.Seed, 200, reqtest.SeedAnswer, -1, ""},
		{"seed on /v1/apply", "POST", "/v1/apply", "", reqtest.Seed, 200, reqtest.SeedAnswer, -1, ""},
		{"query ignored", "POST", "/v1/apply?x=1", "", reqtest.Seed, 200, reqtest.SeedAnswer, -1, ""},
		{"no steps", "POST", "/", "", emptyDoc, 200, emptyDoc, -1, ""},
		{"schema basic", "POST", "/", "", `{"schema":"basic","doc":` + basicDoc + `,"steps":[{"stepType":"replace","from":2,"to":4}]}`, 200, `{"doc":` + basicDoc2 + `}`, -1, ""},
		{"schema after doc", "POST", "/", "", `{"doc":` + basicDoc + `,"steps":[{"stepType":"replace","from":2,"to":4}],"schema":"basic"}`, 200, `{"doc":` + basicDoc2 + `}`, -1, ""},
		{"custom schema", "POST", "/", "", `{"schema":"lines","doc":{"type":"doc","content":[{"type":"line"}]},"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi"}]}}]}`,
			200, `{"doc":{"type":"doc","content":[{"type":"line","content":[{"type":"text","text":"hi"}]}]}}`, -1, ""},
		{"positions ignored", "POST", "/", "", `{"doc":{"type":"doc"},"positions":[0]}`, 200, emptyDoc, -1, ""},
		{"charset param", "POST", "/", "application/json; charset=utf-8", emptyDoc, 200, emptyDoc, -1, ""},
		{"charset UTF-8", "POST", "/", `application/json;charset="UTF-8"`, emptyDoc, 200, emptyDoc, -1, ""},
		{"type in capitals", "POST", "/", "Application/JSON", emptyDoc, 200, emptyDoc, -1, ""},
		{"no Content-Type", "POST", "/", noType, emptyDoc, 200, emptyDoc, -1, ""},
		{"JSON text not escaped", "POST", "/", "", `{"doc":{"type":"doc","content":[{"type":"text","text":"<a> & \u2028 é 😀"}]}}`,
			200, `{"doc":{"type":"doc","content":[{"type":"text","text":"<a> & ` + "\u2028" + ` é 😀"}]}}`, -1, ""},
		{"healthz", "GET", "/healthz", "", "", 200, `{"status":"ok"}`, -1, ""},
		{"healthz HEAD", "HEAD", "/healthz", "", "", 200, `{"status":"ok"}`, -1, ""},
		{"schemas", "GET", "/v1/schemas", "", "", 200, `{"default":"text","schemas":["basic","lines","suggest","text"]}`, -1, ""},

		{"malformed", "POST", "/", "", `{"doc":`, 400, "JSON syntax error", -1, ""},
		{"not JSON at all", "POST", "/", "", `doc=1`, 400, "JSON syntax error", -1, ""},
		{"empty body", "POST", "/", "", ``, 400, "empty request", -1, ""},
		{"not an object", "POST", "/", "", `[]`, 400, "must be a JSON object", -1, ""},
		{"missing doc", "POST", "/", "", `{"steps":[]}`, 400, `missing "doc"`, -1, ""},
		{"doc not an object", "POST", "/", "", `{"doc":[]}`, 400, `"doc" must be an object, not an array`, -1, ""},
		{"steps not an array", "POST", "/", "", `{"doc":{"type":"doc"},"steps":"x"}`, 400, `"steps" must be an array, not a string`, -1, ""},
		{"schema not a string", "POST", "/", "", `{"doc":{"type":"doc"},"schema":true}`, 400, `"schema" must be a string, not a boolean`, -1, ""},
		{"unknown schema", "POST", "/", "", `{"doc":{"type":"doc"},"schema":"nope"}`, 400, `unknown schema "nope" (have basic, lines, suggest, text)`, -1, ""},
		{"schema path refused", "POST", "/", "", `{"doc":{"type":"doc"},"schema":"/etc/passwd"}`, 400, `unknown schema`, -1, ""},
		{"too deep", "POST", "/", "", `{"doc":{"type":"doc"},"steps":[{"x":` + deep(10) + `}]}`, 400, "over the limit of 10 levels", -1, ""},
		{"too deep in doc", "POST", "/", "", `{"doc":{"type":"doc","attrs":` + deep(9) + `}}`, 400, "over the limit of 10 levels", -1, ""},
		{"nesting at the limit", "POST", "/", "", `{"doc":{"type":"doc","x":` + deep(8) + `}}`, 200, emptyDoc, -1, ""},

		{"unknown path", "GET", "/nope", "", "", 404, "not found: no route for /nope", -1, ""},
		{"trailing slash", "POST", "/v1/apply/", "", reqtest.Seed, 404, "not found", -1, ""},
		{"GET /", "GET", "/", "", "", 405, "method GET not allowed", -1, "POST"},
		{"PUT /v1/apply", "PUT", "/v1/apply", "", reqtest.Seed, 405, "method PUT not allowed", -1, "POST"},
		{"OPTIONS /v1/apply", "OPTIONS", "/v1/apply", "", "", 405, "not allowed", -1, "POST"},
		{"POST /healthz", "POST", "/healthz", "", "", 405, "not allowed", -1, "GET, HEAD"},
		{"DELETE /v1/schemas", "DELETE", "/v1/schemas", "", "", 405, "not allowed", -1, "GET, HEAD"},

		{"body over the limit", "POST", "/", "", `{"doc":{"type":"doc"},"x":"` + strings.Repeat("x", 1000) + `"}`, 413, "request body too large: over the limit of 1000 bytes", -1, ""},
		{"too many steps", "POST", "/", "", `{"doc":{"type":"doc"},"steps":[{},{},{},{}]}`, 413, "the request has 4, over the limit of 3 steps", -1, ""},
		{"doc too large", "POST", "/", "", `{"doc":{"type":"doc","content":[{"type":"text","text":"123456789012345678901"}]}}`, 413, "over the limit of 20 positions", -1, ""},
		{"a step grows the doc too large", "POST", "/", "", `{"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]},"steps":[` +
			`{"stepType":"replace","from":5,"to":0},{"stepType":"replace","from":10,"to":0},{"stepType":"replace","from":20,"to":0}]}`, 413, "the step makes its content size 40, over the limit of 20 positions", 2, ""},

		{"form", "POST", "/", "application/x-www-form-urlencoded", emptyDoc, 415, `unsupported Content-Type "application/x-www-form-urlencoded"`, -1, ""},
		{"text/plain", "POST", "/", "text/plain", emptyDoc, 415, "unsupported Content-Type", -1, ""},
		{"latin-1 JSON", "POST", "/", "application/json; charset=iso-8859-1", emptyDoc, 415, "unsupported Content-Type", -1, ""},
		{"bad media type", "POST", "/", "application/json; =", emptyDoc, 415, "unsupported Content-Type", -1, ""},

		{"step fails", "POST", "/", "", `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":0,"to":0},{"stepType":"replace","from":3,"to":3}]}`, 422, "Position 3 out of range", 1, ""},
		{"step does not decode", "POST", "/", "", `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":-1,"to":0}]}`, 422, "Invalid input for ReplaceStep.fromJSON", 0, ""},
		{"step of unknown type", "POST", "/", "", `{"doc":{"type":"doc"},"steps":[{"stepType":"nope"}]}`, 422, "No step type nope defined", 0, ""},
		{"step with an unknown mark", "POST", "/", "", `{"doc":{"type":"doc"},"steps":[{"stepType":"addMark","from":0,"to":0,"mark":{"type":"em"}}]}`, 422, "em", 0, ""},
		{"invalid doc", "POST", "/", "", `{"doc":{"type":"paragraph"}}`, 422, "invalid doc: Unknown node type: paragraph", -1, ""},
		{"empty text in doc", "POST", "/", "", `{"doc":{"type":"doc","content":[{"type":"text","text":""}]}}`, 422, "invalid doc: Empty text nodes are not allowed", -1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			switch tc.ctype {
			case "":
				r.Header.Set("Content-Type", "application/json")
			case noType:
			default:
				r.Header.Set("Content-Type", tc.ctype)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			body := w.Body.Bytes()
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, body)
			}
			step, msg := checkAnswer(t, w.Code, w.Header(), body)
			if tc.status == 200 {
				if string(body) != tc.want {
					t.Fatalf("got  %s\nwant %s", body, tc.want)
				}
				return
			}
			if step != tc.step || !strings.Contains(msg, tc.want) {
				t.Fatalf("got %s, want step %d and a message containing %q", body, tc.step, tc.want)
			}
			if allow := w.Header().Get("Allow"); allow != tc.allow {
				t.Fatalf("Allow %q, want %q", allow, tc.allow)
			}
		})
	}
}

// TestSeedOverTheWire checks prosemirror-v8-perf's request through the
// whole net/http stack: status line, headers and body as its node server
// (express, res.json) sends them, bar express's own headers.
func TestSeedOverTheWire(t *testing.T) {
	s, _ := newServer(t, Config{DefaultSchema: "text"})
	ts := httptest.NewServer(s)
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Two requests on one connection, as a benchmark's client sends them.
	for range 2 {
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(reqtest.Seed), reqtest.Seed)
	}
	br := bufio.NewReader(conn)
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(body) != reqtest.SeedAnswer {
			t.Fatalf("%s %s", resp.Status, body)
		}
		if ct, cl := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Length"); ct != jsonType || cl != "65" {
			t.Fatalf("Content-Type %q, Content-Length %q", ct, cl)
		}
		if resp.TransferEncoding != nil || resp.Close {
			t.Fatalf("Transfer-Encoding %v, Close %v", resp.TransferEncoding, resp.Close)
		}
	}
}

func TestBodyLimitOverTheWire(t *testing.T) {
	s, _ := newServer(t, Config{Limits: Limits{MaxBodyBytes: 100}})
	ts := httptest.NewServer(s)
	defer ts.Close()
	pad := func(n int) string { // a valid request of n bytes
		return `{"doc":{"type":"doc"},"x":"` + strings.Repeat("x", n-len(`{"doc":{"type":"doc"},"x":""}`)) + `"}`
	}
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"at the limit", pad(100), false, 200},
		{"over the limit", pad(101), false, 413},
		{"chunked at the limit", pad(100), true, 200},
		{"chunked over the limit", pad(101), true, 413},
		{"chunked far over the limit", pad(100_000), true, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // unknown length: sent chunked
			}
			resp, err := http.Post(ts.URL+"/v1/apply", "application/json", body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, got)
			}
			if tc.status == 413 && !strings.Contains(string(got), "over the limit of 100 bytes") {
				t.Fatalf("%s", got)
			}
		})
	}
}

func TestHeaderLimit(t *testing.T) {
	s, _ := newServer(t, Config{Limits: Limits{MaxHeaderBytes: 1024}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/", strings.NewReader(reqtest.Seed))
	req.Header.Set("X-Big", strings.Repeat("x", 8192))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

// errReader fails after its data.
type errReader struct{ data []byte }

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errors.New("connection reset")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestBodyReadErrors(t *testing.T) {
	s, _ := newServer(t, Config{})
	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64
	}{
		{"unknown length", &errReader{[]byte(`{"doc":`)}, -1},
		{"short body", strings.NewReader(`{"doc":`), 100},
	} {
		r := httptest.NewRequest("POST", "/", tc.body)
		r.ContentLength = tc.length
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "reading the request body") {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
	}
}

func TestLargeRequest(t *testing.T) {
	s, _ := newServer(t, Config{})
	ts := httptest.NewServer(s)
	defer ts.Close()
	for _, size := range []int{50_000, 2_000_000} { // one read, and grown as it arrives
		req := reqtest.Large(size, 20)
		want := reqtest.Result(req)
		for _, chunked := range []bool{false, true} {
			var body io.Reader = bytes.NewReader(req)
			if chunked {
				body = io.MultiReader(body)
			}
			resp, err := http.Post(ts.URL, "application/json", body)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Equal(got, want) {
				t.Fatalf("size %d chunked %v: status %d, %d bytes, want %d", size, chunked, resp.StatusCode, len(got), len(want))
			}
		}
	}
}

func TestCanceledRequest(t *testing.T) {
	s, logs := newServer(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, "POST", "/", strings.NewReader(reqtest.Seed))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "canceled") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "status=503") {
		t.Fatalf("a 5xx answer is logged: %s", logs)
	}

	// A large request waiting for a worker when its client goes away.
	s, _ = newServer(t, Config{ApplyWorkers: 1})
	s.workers <- struct{}{} // the only worker is busy
	r = httptest.NewRequestWithContext(ctx, "POST", "/", bytes.NewReader(reqtest.Large(largeRequest, 1)))
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "waiting for a worker") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

// TestApplyWorkers: large requests take turns, small ones do not wait.
func TestApplyWorkers(t *testing.T) {
	s, _ := newServer(t, Config{ApplyWorkers: 1})
	large := reqtest.Large(largeRequest, 3)
	s.workers <- struct{}{} // the only worker is busy
	done := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/", bytes.NewReader(large)))
		done <- w.Code
	}()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader(reqtest.Seed)))
	if w.Code != 200 {
		t.Fatalf("small request: %d", w.Code)
	}
	select {
	case code := <-done:
		t.Fatalf("large request answered (%d) while no worker was free", code)
	case <-time.After(50 * time.Millisecond):
	}
	<-s.workers
	if code := <-done; code != 200 {
		t.Fatalf("large request: %d", code)
	}
}

func TestNew(t *testing.T) {
	lines := linesSchema(t)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Schemas: map[string]*model.Schema{"basic": lines}}, `"basic" is taken by a built-in`},
		{Config{DefaultSchema: "lines"}, `default schema "lines" is not one of [basic suggest text]`},
		{Config{Schemas: map[string]*model.Schema{"": lines}}, `empty name`},
		{Config{Schemas: map[string]*model.Schema{"x": nil}}, `nil schema`},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits() != DefaultLimits() || s.Timeouts() != DefaultTimeouts() || s.defName != "basic" {
		t.Fatalf("zero Config: %+v %+v %s", s.Limits(), s.Timeouts(), s.defName)
	}
}

func TestPanicRecovered(t *testing.T) {
	s, logs := newServer(t, Config{})
	s.app.Schemas = nil // a bug: Apply dereferences nil
	r := httptest.NewRequest("POST", "/", strings.NewReader(reqtest.Seed))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 500 || w.Body.String() != `{"error":{"message":"internal server error"}}` {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	out := logs.String()
	if !strings.Contains(out, "panic serving request") || !strings.Contains(out, "goroutine") || !strings.Contains(out, "status=500") {
		t.Fatalf("log: %s", out)
	}
}

func TestAccessLog(t *testing.T) {
	send := func(s *Server, body string) {
		r := httptest.NewRequest("POST", "/v1/apply", strings.NewReader(body))
		s.ServeHTTP(httptest.NewRecorder(), r)
	}
	t.Run("quiet by default", func(t *testing.T) {
		s, logs := newServer(t, Config{SlowRequest: time.Hour})
		send(s, reqtest.Seed)
		send(s, `{"doc":5}`)
		if logs.String() != "" {
			t.Fatalf("logged: %s", logs)
		}
	})
	t.Run("every request", func(t *testing.T) {
		s, logs := newServer(t, Config{LogRequests: true, SlowRequest: -1})
		send(s, reqtest.Seed)
		send(s, `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":0,"to":0},{"stepType":"replace","from":3,"to":3}]}`)
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("want 2 lines: %s", logs)
		}
		for i, want := range []string{
			`level=INFO msg=request method=POST path=/v1/apply status=200 bytes=65 duration=`,
			`level=INFO msg=request method=POST path=/v1/apply status=422 bytes=56 duration=`,
		} {
			if !strings.Contains(lines[i], want) {
				t.Fatalf("line %d: %s\nwant %s", i, lines[i], want)
			}
		}
		if !strings.Contains(lines[0], "steps=1") || strings.Contains(lines[0], "error=") ||
			!strings.Contains(lines[1], "steps=2") || !strings.Contains(lines[1], `error="Position 3 out of range"`) {
			t.Fatalf("%s", logs)
		}
	})
	t.Run("slow requests", func(t *testing.T) {
		s, logs := newServer(t, Config{SlowRequest: time.Nanosecond})
		send(s, reqtest.Seed)
		if !strings.Contains(logs.String(), `level=WARN msg="slow request" method=POST path=/v1/apply status=200`) {
			t.Fatalf("log: %s", logs)
		}
	})
}

// TestConcurrent sends many requests at once through a real server: run
// with -race. Every answer must be the one for its request.
func TestConcurrent(t *testing.T) {
	s, logs := newServer(t, Config{ApplyLimits: apply.Limits{MaxSteps: 30}, SlowRequest: -1})
	ts := httptest.NewServer(s)
	defer ts.Close()
	large := reqtest.Large(20_000, 10)
	cases := []struct {
		body   []byte
		status int
		want   []byte
	}{
		{[]byte(reqtest.Seed), 200, []byte(reqtest.SeedAnswer)},
		{large, 200, reqtest.Result(large)},
		{[]byte(`{"schema":"basic","doc":` + basicDoc + `,"steps":[{"stepType":"replace","from":2,"to":4}]}`), 200, []byte(`{"doc":` + basicDoc2 + `}`)},
		{[]byte(`{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":3,"to":3}]}`), 422, []byte(`{"error":{"step":0,"message":"Position 3 out of range"}}`)},
		{[]byte(`{"doc":`), 400, nil},
		{[]byte(`{"doc":{"type":"doc"},"steps":[` + strings.Repeat(`{},`, 30) + `{}]}`), 413, nil},
	}
	n := 100
	if testing.Short() {
		n = 20
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range n {
				c := cases[(g+i)%len(cases)]
				resp, err := http.Post(ts.URL+"/v1/apply", "application/json", bytes.NewReader(c.body))
				if err != nil {
					t.Error(err)
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != c.status || c.want != nil && !bytes.Equal(got, c.want) {
					t.Errorf("status %d (want %d), answer %.200s, error %v", resp.StatusCode, c.status, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if logs.String() != "" {
		t.Fatalf("unexpected log output: %s", logs)
	}
}

func BenchmarkHandler(b *testing.B) {
	s, _ := newServer(b, Config{})
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"seed", []byte(reqtest.Seed)},
		{"50KB+20steps", reqtest.Large(50_000, 20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			r := httptest.NewRequest("POST", "/", nil)
			r.Header.Set("Content-Type", "application/json")
			w := &discardWriter{h: http.Header{}}
			for b.Loop() {
				r.Body = io.NopCloser(bytes.NewReader(bc.body))
				r.ContentLength = int64(len(bc.body))
				s.ServeHTTP(w, r)
				if w.status != 200 {
					b.Fatal(w.status)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
