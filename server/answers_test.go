package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// TestDocsStepsPageBytes: a page of /steps stops before the step that
// would take it over Config.MaxStepsPageBytes, with "next" where the next
// page starts, and always has its first step; following "next" gives the
// whole log in order.
func TestDocsStepsPageBytes(t *testing.T) {
	for _, tt := range []struct {
		pageBytes int64
		perPage   int
	}{{3000, 2}, {1, 1}, {1 << 20, 6}} {
		e := newCollab(t, Config{Limits: Limits{MaxStepsPageBytes: tt.pageBytes}}, collab.Config{})
		e.mustGet(t, "/docs/d")
		for i := range 6 {
			e.mustPost(t, "d", fmt.Sprintf(`{"version":%d,"clientID":7,"steps":[%s]}`, i, insert(1, strings.Repeat(string(rune('a'+i)), 1000))))
		}
		var versions []int64
		for from, pages := int64(0), 0; ; pages++ {
			var page struct {
				Steps []struct{ Version int64 }
				Next  *int64
			}
			body := expect(t, e, "GET", fmt.Sprintf("/docs/d/steps?from=%d&limit=1000", from), "", 200, "")
			if err := json.Unmarshal([]byte(body), &page); err != nil {
				t.Fatal(err)
			}
			if want := min(tt.perPage, 6-int(from)); len(page.Steps) != want {
				t.Fatalf("bytes %d, from %d: %d steps, want %d", tt.pageBytes, from, len(page.Steps), want)
			}
			for _, s := range page.Steps {
				versions = append(versions, s.Version)
			}
			if page.Next == nil {
				break
			}
			if *page.Next != from+int64(len(page.Steps)) || pages > 6 {
				t.Fatalf("bytes %d, from %d: next %d after %d steps", tt.pageBytes, from, *page.Next, len(page.Steps))
			}
			from = *page.Next
		}
		if fmt.Sprint(versions) != "[1 2 3 4 5 6]" {
			t.Errorf("bytes %d: the pages have versions %v", tt.pageBytes, versions)
		}
	}
}

// slowWriter is a ResponseWriter whose Write of a 200 answer blocks until
// release is closed, as the connection of a client that does not read.
type slowWriter struct {
	header  http.Header
	status  int
	body    strings.Builder
	entered chan struct{} // closed when a 200's Write blocks, or the answer is another
	release chan struct{}
	once    sync.Once
}

func newSlowWriter() *slowWriter {
	return &slowWriter{header: http.Header{}, entered: make(chan struct{}), release: make(chan struct{})}
}

func (w *slowWriter) Header() http.Header { return w.header }

func (w *slowWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *slowWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	if w.status == 200 {
		w.once.Do(func() { close(w.entered) })
		<-w.release
	}
	return w.body.Write(b)
}

// slowGet starts a GET of target from ip whose answer is written to a
// slowWriter, and returns once it writes (or answers other than 200);
// done is closed when the handler returns.
func (e *collabEnv) slowGet(ip, target string) (w *slowWriter, done chan struct{}) {
	w, done = newSlowWriter(), make(chan struct{})
	r := httptest.NewRequest("GET", target, nil)
	r.RemoteAddr = ip + ":40000"
	go func() {
		defer close(done)
		e.s.ServeHTTP(w, r)
		w.once.Do(func() { close(w.entered) })
	}()
	<-w.entered
	return w, done
}

// bigDoc makes the document id of n characters of text.
func bigDoc(t *testing.T, e *collabEnv, id string, n int) {
	t.Helper()
	e.mustGet(t, "/docs/"+id)
	e.mustPost(t, id, `{"version":0,"clientID":7,"steps":[`+insert(1, strings.Repeat("x", n))+`]}`)
}

// TestLargeAnswersPerClient: a client whose Config.MaxClientAnswers large
// answers are not read yet gets 429 with Retry-After for another large
// one, while other clients and small answers are served; once it reads
// them, it is served again, and nothing stays reserved.
func TestLargeAnswersPerClient(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxClientAnswers: 2}}, collab.Config{})
	e.s.large.wait = 20 * time.Millisecond
	bigDoc(t, e, "big", LargeAnswer+1000)
	e.mustGet(t, "/docs/small")
	var slow []*slowWriter
	var done []chan struct{}
	for _, target := range []string{"/docs/big", "/docs/big?version=1"} {
		w, d := e.slowGet("198.51.100.1", target)
		if w.status != 200 {
			t.Fatalf("GET %s: %d %s", target, w.status, w.body.String())
		}
		slow, done = append(slow, w), append(done, d)
	}
	if n := e.s.large.inUse(); n != 2 {
		t.Fatalf("%d large answers counted, want 2", n)
	}
	for _, target := range []string{"/docs/big", "/docs/big/steps", "/docs/big/export?format=text"} {
		w := e.serve("198.51.100.1", "GET", target, "", nil)
		if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "Limits.MaxClientAnswers") {
			t.Errorf("GET %s, a third large answer: %d %q %s", target, w.Code, w.Header().Get("Retry-After"), w.Body.String())
		}
	}
	if w := e.serve("198.51.100.1", "GET", "/docs/small", "", nil); w.Code != 200 {
		t.Errorf("a small answer for the same client: %d %s", w.Code, w.Body.String())
	}
	if w := e.serve("198.51.100.2", "GET", "/docs/big", "", nil); w.Code != 200 {
		t.Errorf("a large answer for another client: %d %s", w.Code, w.Body.String())
	}
	for i, w := range slow {
		close(w.release)
		<-done[i]
	}
	if w := e.serve("198.51.100.1", "GET", "/docs/big", "", nil); w.Code != 200 {
		t.Errorf("after reading its answers: %d %s", w.Code, w.Body.String())
	}
	if n, held := e.s.large.inUse(), e.auth.ReservedMemory(); n != 0 || held != 0 {
		t.Errorf("after the answers: %d large answers, %d bytes reserved", n, held)
	}
}

// TestAnswersInBudget: answers not yet read hold their memory in the
// authority's budget; once it is full, even after unloading the idle
// document, the next reader gets 503 with Retry-After, and the budget is
// never exceeded; once they are read, nothing stays reserved.
func TestAnswersInBudget(t *testing.T) {
	const size = LargeAnswer + 1000
	probe := newCollab(t, Config{}, collab.Config{})
	bigDoc(t, probe, "big", size)
	docMem := probe.auth.MemoryInUse()
	budget := docMem + 5*size/2
	e := newCollab(t, Config{Limits: Limits{MaxClientAnswers: 100}}, collab.Config{Limits: collab.Limits{MaxMemory: budget, MaxDocMemory: budget}})
	bigDoc(t, e, "big", size)
	var slow []*slowWriter
	var done []chan struct{}
	refused := false
	for i := range 10 {
		w, d := e.slowGet(fmt.Sprintf("198.51.100.%d", 1+i), "/docs/big")
		slow, done = append(slow, w), append(done, d)
		if used := e.auth.MemoryInUse(); used > budget {
			t.Fatalf("%d answers held: %d bytes in use, over the budget of %d", i+1, used, budget)
		}
		if w.status != 200 {
			<-d
			if w.status != 503 || w.header.Get("Retry-After") == "" || !strings.Contains(w.body.String(), "Limits.MaxMemory") {
				t.Fatalf("reader %d: %d %q %s, want 503 with Retry-After", i+1, w.status, w.header.Get("Retry-After"), w.body.String())
			}
			refused = true
			break
		}
	}
	if !refused {
		t.Fatalf("%d answers held within a budget of %d bytes", len(slow), budget)
	}
	if len(slow) < 3 {
		t.Errorf("refused after %d readers, want at least 3 (the budget holds 2 answers and the document, or 3 answers)", len(slow))
	}
	for i, w := range slow {
		if w.status == 200 {
			close(w.release)
		}
		<-done[i]
		if w.status == 200 && len(w.body.String()) < size {
			t.Errorf("reader %d: %d bytes", i+1, len(w.body.String()))
		}
	}
	if held := e.auth.ReservedMemory(); held != 0 {
		t.Errorf("after the answers: %d bytes reserved", held)
	}
	if w := e.serve("198.51.100.99", "GET", "/docs/big", "", nil); w.Code != 200 {
		t.Errorf("after the answers were read: %d %s", w.Code, w.Body.String())
	}
}

// TestWSWelcomeInBudget: the snapshot of a large document to a WebSocket
// that does not read holds its memory and one of its client's large
// answers until it is written; a client at Config.MaxClientAnswers gets
// error 429 and close 4029 for another large one (and 429 over HTTP);
// once the connections are gone, nothing stays held.
func TestWSWelcomeInBudget(t *testing.T) {
	e := newWS(t, Config{Limits: Limits{MaxClientAnswers: 2}}, collab.Config{}, nil)
	const size = LargeAnswer + 1000
	e.mustGet(t, "/docs/big")
	e.mustPost(t, "big", `{"version":0,"clientID":7,"steps":[`+insert(1, strings.Repeat("x", size))+`]}`)
	var slow []*wsClient
	for i := range 2 {
		c := e.dial(t, "big", true)
		c.hello(-1, fmt.Sprint(10+i))
		slow = append(slow, c) // (never reads)
	}
	waitFor(t, func() bool { return e.s.large.inUse() == 2 && e.auth.ReservedMemory() >= 2*size })
	c := e.dial(t, "big", false)
	c.hello(-1, "20")
	if m := c.next("error"); m.Status != 429 || !strings.Contains(m.Message, "Limits.MaxClientAnswers") {
		t.Errorf("a third large snapshot: %s", m.raw)
	}
	if code, _ := c.closed(0); code != wsCloseTooManyRequests {
		t.Errorf("closed with %d, want %d", code, wsCloseTooManyRequests)
	}
	if w := e.serve("127.0.0.1", "GET", "/docs/big", "", nil); w.Code != 429 {
		t.Errorf("GET of the large document for the same client: %d %s", w.Code, w.Body.String())
	}
	for _, c := range slow {
		c.c.CloseNow()
	}
	waitFor(t, func() bool { return e.s.large.inUse() == 0 && e.auth.ReservedMemory() == 0 })
	c = e.dial(t, "big", false)
	c.hello(-1, "21")
	if m := c.next("snapshot"); m.Version != 1 {
		t.Errorf("snapshot after the slow ones left: %s", m.raw[:min(len(m.raw), 200)])
	}
}
