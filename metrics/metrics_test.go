package metrics_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/metrics"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// Document ids, which no label may contain ("secret").
const (
	doc       = "secret-doc-7q"
	lockedDoc = "secret-locked-7q"
)

// lockedPolicy lets everyone do everything but edit (or suggest in)
// lockedDoc.
type lockedPolicy struct{}

func (lockedPolicy) Authenticate(context.Context, server.Credentials) (server.Principal, error) {
	return server.Principal{}, nil
}

func (lockedPolicy) Authorize(_ context.Context, _ server.Principal, id string, a server.Action) error {
	if id == lockedDoc && (a == server.ActionEdit || a == server.ActionSuggest) {
		return server.ErrForbidden
	}
	return nil
}

func lookupSchema(name string) (*model.Schema, bool) {
	s, err := schemas.Get(name)
	return s, err == nil
}

// env is a server over SQLite whose observers are one Metrics registered
// on the test's own registry, scraped over HTTP as Prometheus would.
type env struct {
	t       *testing.T
	ts      *httptest.Server
	scraper *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "pma.db"), sqlite.Options{Sync: sqlite.SyncNormal, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	auth, err := collab.New(collab.Config{Store: st, Schemas: lookupSchema, AutoCreate: true, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Collab: auth, Policy: lockedPolicy{}, Observer: m, DefaultSchema: "text",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ts: httptest.NewServer(srv), scraper: httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))}
	t.Cleanup(func() {
		e.ts.Close()
		srv.Shutdown(context.Background())
		auth.Close()
		e.scraper.Close()
	})
	return e
}

// post sends body to path and returns the status.
func (e *env) post(path, body string) int {
	e.t.Helper()
	resp, err := http.Post(e.ts.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// scrape returns the metrics that GET /metrics answers.
func (e *env) scrape() map[string]*dto.MetricFamily {
	e.t.Helper()
	resp, err := http.Get(e.scraper.URL + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return mfs
}

// value returns the value of the series of name with labels (name=value
// pairs), or -1 when there is none: a counter's or gauge's value, a
// histogram's count of observations.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	mf := mfs[name]
	if mf == nil {
		return -1
	}
series:
	for _, m := range mf.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue series
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// waitFor scrapes until cond holds, failing after a while.
func (e *env) waitFor(what string, cond func(map[string]*dto.MetricFamily) bool) {
	e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if cond(e.scrape()) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const insert = `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Hi"}]}}`

// TestTraffic scrapes /metrics after real traffic of both transports and
// checks every counter and gauge that moved, and that no label carries a
// document id.
func TestTraffic(t *testing.T) {
	e := newEnv(t)
	// The apply endpoint: one answer, one failing step.
	if s := e.post("/v1/apply", reqtest.Seed); s != 200 {
		t.Fatalf("apply: %d", s)
	}
	if s := e.post("/v1/apply", `{"schema":"text","doc":{"type":"doc"},"steps":[{"stepType":"replace","from":5,"to":5}]}`); s != 422 {
		t.Fatalf("failing apply: %d", s)
	}
	// The long-poll API: accepted, conflict, forbidden, rejected.
	events := "/docs/" + doc + "/events"
	if s := e.post(events, `{"version":0,"clientID":1,"steps":[`+insert+`]}`); s != 200 {
		t.Fatalf("submission: %d", s)
	}
	if s := e.post(events, `{"version":0,"clientID":2,"steps":[`+insert+`]}`); s != 409 {
		t.Fatalf("stale submission: %d", s)
	}
	if s := e.post("/docs/"+lockedDoc+"/events", `{"version":0,"clientID":1,"steps":[`+insert+`]}`); s != 403 {
		t.Fatalf("forbidden submission: %d", s)
	}
	if s := e.post(events, `{"version":1,"clientID":1,"steps":[{"stepType":"replace","from":99,"to":99}]}`); s != 422 {
		t.Fatalf("failing submission: %d", s)
	}

	// A long poll waits: one longpoll connection.
	polled := make(chan int, 1)
	go func() {
		resp, err := http.Get(e.ts.URL + events + "?version=1&commentVersion=0")
		if err != nil {
			polled <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		polled <- resp.StatusCode
	}()
	e.waitFor("a waiting long poll", func(mfs map[string]*dto.MetricFamily) bool {
		return value(mfs, "pmauthority_connections", "transport", "longpoll") == 1
	})

	// A WebSocket: its step, accepted, answers the poll; a stale one
	// conflicts.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.ts.URL, "http")+"/docs/"+doc+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	send := func(msg string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	await := func(typ string) {
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v", typ, err)
			}
			var m struct{ Type string }
			json.Unmarshal(data, &m)
			if m.Type == typ {
				return
			}
		}
	}
	send(`{"type":"hello","version":1,"clientID":3}`)
	await("welcome")
	send(`{"type":"steps","id":1,"version":1,"clientID":3,"steps":[` + insert + `]}`)
	await("ack")
	send(`{"type":"steps","id":2,"version":1,"clientID":3,"steps":[` + insert + `]}`)
	await("conflict")
	if s := <-polled; s != 200 {
		t.Fatalf("long poll: %d", s)
	}
	e.waitFor("the long poll answered", func(mfs map[string]*dto.MetricFamily) bool {
		return value(mfs, "pmauthority_connections", "transport", "longpoll") == 0
	})

	mfs := e.scrape()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pmauthority_steps_accepted_total", nil, 2},
		{"pmauthority_submissions_total", []string{"transport", "longpoll", "result", "accepted"}, 1},
		{"pmauthority_submissions_total", []string{"transport", "longpoll", "result", "conflict"}, 1},
		{"pmauthority_submissions_total", []string{"transport", "longpoll", "result", "forbidden"}, 1},
		{"pmauthority_submissions_total", []string{"transport", "longpoll", "result", "rejected"}, 1},
		{"pmauthority_submissions_total", []string{"transport", "longpoll", "result", "unavailable"}, 0},
		{"pmauthority_submissions_total", []string{"transport", "websocket", "result", "accepted"}, 1},
		{"pmauthority_submissions_total", []string{"transport", "websocket", "result", "conflict"}, 1},
		{"pmauthority_submissions_total", []string{"transport", "websocket", "result", "rejected"}, 0},
		{"pmauthority_connections", []string{"transport", "websocket"}, 1},
		{"pmauthority_connections", []string{"transport", "longpoll"}, 0},
		{"pmauthority_documents_loaded", nil, 1},
		{"pmauthority_delivery_queue_drops_total", nil, 0},
		{"pmauthority_http_requests_total", []string{"route", "POST /v1/apply", "code", "200"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "POST /v1/apply", "code", "422"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "POST /docs/{id}/events", "code", "200"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "POST /docs/{id}/events", "code", "409"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "POST /docs/{id}/events", "code", "403"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "POST /docs/{id}/events", "code", "422"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "GET /docs/{id}/events", "code", "200"}, 1},
		{"pmauthority_http_requests_total", []string{"route", "GET /docs/{id}/ws", "code", "101"}, 1},
		{"pmauthority_http_request_seconds", []string{"route", "POST /docs/{id}/events"}, 4},
		{"pmauthority_http_request_seconds", []string{"route", "POST /v1/apply"}, 2},
	} {
		if got := value(mfs, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The store committed the document's creation and its two appends,
	// in one batch or more.
	commits := value(mfs, "pmauthority_store_commit_seconds")
	if commits < 1 || value(mfs, "pmauthority_store_commit_batch_size") != commits {
		t.Errorf("store commits: %v timed, %v sized", commits, value(mfs, "pmauthority_store_commit_batch_size"))
	}
	if sum := mfs["pmauthority_store_commit_batch_size"].Metric[0].Histogram.GetSampleSum(); sum < 3 {
		t.Errorf("store commits held %v operations, want at least 3 (a creation, two appends)", sum)
	}
	for name, mf := range mfs {
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "secret") {
					t.Errorf("%s has a document id in label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestNoRoute labels a request that no route takes "none", and one of a
// method its path does not take with the path's pattern alone.
func TestNoRoute(t *testing.T) {
	e := newEnv(t)
	if s := e.post("/secret/nowhere", "{}"); s != 404 {
		t.Fatalf("no route: %d", s)
	}
	if s := e.post("/docs/"+doc, "{}"); s != 405 {
		t.Fatalf("wrong method: %d", s)
	}
	mfs := e.scrape()
	if got := value(mfs, "pmauthority_http_requests_total", "route", metrics.NoRoute, "code", "404"); got != 1 {
		t.Errorf("no route: %v", got)
	}
	if got := value(mfs, "pmauthority_http_requests_total", "route", "/docs/{id}", "code", "405"); got != 1 {
		t.Errorf("wrong method: %v", got)
	}
}

// TestNewTwice: a registry takes pmauthority's metrics once.
func TestNewTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(reg); err == nil {
		t.Fatal("registered twice")
	}
}

// TestObserverCalls checks what the observer methods record, including
// those that the traffic test cannot provoke (queue drops, unavailable)
// and values that are not label values of ours (ignored, no new series).
func TestObserverCalls(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.DeliveryDropped()
	m.DeliveryDropped()
	m.Submission(server.TransportWebSocket, server.SubmissionUnavailable)
	m.Submission("carrier-pigeon", server.SubmissionAccepted)
	m.Submission(server.TransportWebSocket, "maybe")
	m.Connections(server.TransportWebSocket, 3)
	m.Connections(server.TransportWebSocket, -1)
	m.Connections("carrier-pigeon", 1)
	m.DocumentsLoaded(2)
	m.DocumentsLoaded(-1)
	m.ObserveCommit(3*time.Millisecond, 5)
	m.Request("GET /healthz", 200, time.Millisecond)
	m.Request("GET /healthz", 200, time.Millisecond)
	m.Request("GET /healthz", 503, time.Millisecond)
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	mfs := map[string]*dto.MetricFamily{}
	for _, mf := range got {
		mfs[mf.GetName()] = mf
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pmauthority_delivery_queue_drops_total", nil, 2},
		{"pmauthority_submissions_total", []string{"transport", "websocket", "result", "unavailable"}, 1},
		{"pmauthority_connections", []string{"transport", "websocket"}, 2},
		{"pmauthority_documents_loaded", nil, 1},
		{"pmauthority_store_commit_seconds", nil, 1},
		{"pmauthority_http_requests_total", []string{"route", "GET /healthz", "code", "200"}, 2},
		{"pmauthority_http_requests_total", []string{"route", "GET /healthz", "code", "503"}, 1},
		{"pmauthority_http_request_seconds", []string{"route", "GET /healthz"}, 3},
	} {
		if v := value(mfs, c.name, c.labels...); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
	if n := len(mfs["pmauthority_submissions_total"].Metric); n != 10 {
		t.Errorf("%d submission series, want 10 (2 transports × 5 results)", n)
	}
	if n := len(mfs["pmauthority_connections"].Metric); n != 2 {
		t.Errorf("%d connection series, want 2", n)
	}
	if s := mfs["pmauthority_store_commit_batch_size"].Metric[0].Histogram.GetSampleSum(); s != 5 {
		t.Errorf("batch size sum %v, want 5", s)
	}
}

// TestLibraryWithoutPrometheus: the library packages know only the
// observer interfaces; this package alone imports Prometheus.
func TestLibraryWithoutPrometheus(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}",
		"github.com/pmauthority/pmauthority/server", "github.com/pmauthority/pmauthority/collab",
		"github.com/pmauthority/pmauthority/store/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/pmauthority/pmauthority/store/sqlite") {
		t.Fatalf("go list listed no store/sqlite:\n%s", out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") {
			t.Errorf("the library imports %s", pkg)
		}
	}
}

// TestRequestAllocs: once a route and status were seen, counting a
// request allocates nothing.
func TestRequestAllocs(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	route := strings.Repeat("POST /docs/{id}/events", 1) // not a constant
	m.Request(route, 409, time.Millisecond)
	m.Request("GET /healthz", 200, time.Millisecond)
	if n := testing.AllocsPerRun(100, func() {
		m.Request(route, 409, time.Millisecond)
		m.Submission(server.TransportLongPoll, server.SubmissionConflict)
		m.StepsAccepted(3)
		m.Connections(server.TransportWebSocket, 1)
		m.ObserveCommit(time.Millisecond, 4)
	}); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}
