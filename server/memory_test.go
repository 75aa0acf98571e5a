package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestMaxDocBytes: the doubling steps (replaces with from > to, each
// doubling the document; 23 of them make 8 M characters, within
// --max-doc-size) are refused with 413 once the document's JSON would go
// over MaxDocBytes, by the apply endpoint and by the collab API alike;
// the collab document is unchanged.
func TestMaxDocBytes(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	status, body := e.request(t, "POST", "/v1/apply", string(reqtest.DoublingRequest(23)))
	if status != 413 || !strings.Contains(body, `"step":21`) || !strings.Contains(body, "over the limit of 4194304 bytes") {
		t.Fatalf("apply: %d %.300s", status, body)
	}
	e.mustPost(t, "d", `{"version":0,"clientID":1,"steps":[`+insert(1, "x")+`]}`)
	before := e.mustGet(t, "/docs/d")
	submission := `{"version":1,"clientID":1,"steps":[` + string(bytes.Join(reqtest.DoublingSteps(23), []byte(","))) + `]}`
	status, body = e.request(t, "POST", "/docs/d/events", submission)
	if status != 413 || !strings.Contains(body, "document bytes (JSON) over the limit: 4194389 > 4194304") {
		t.Fatalf("collab: %d %.300s", status, body)
	}
	if after := e.mustGet(t, "/docs/d"); after != before {
		t.Fatalf("the refused submission changed the document: %.200s", after)
	}
}

// TestMemoryBudget: with collab.Config.MaxMemory, loading a document
// (GET) beyond the budget unloads the least recently used idle document
// first; with every loaded document in use (long polls) it is answered
// 503 with Retry-After; a submission that would take one document over
// its share is answered 413; a stored document over that share (written
// under higher limits) is answered 413 on GET, and nothing is loaded for
// it.
func TestMemoryBudget(t *testing.T) {
	st := memstore.New()
	setup := newCollab(t, Config{}, collab.Config{Store: st})
	for _, id := range []string{"a", "b", "c"} {
		setup.mustPost(t, id, `{"version":0,"clientID":1,"steps":[`+insert(1, strings.Repeat(id, 10_000))+`]}`)
	}
	one := setup.auth.MemoryInUse() / 3
	setup.mustPost(t, "big", `{"version":0,"clientID":1,"steps":[`+insert(1, strings.Repeat("x", 100_000))+`]}`)
	if err := setup.auth.Close(); err != nil {
		t.Fatal(err)
	}

	e := newCollab(t, Config{}, collab.Config{Store: st, Limits: collab.Limits{MaxMemory: 2*one + one/2}})
	for _, id := range []string{"a", "b", "c"} {
		e.clock.Advance(time.Second)
		e.mustGet(t, "/docs/"+id) // c unloads a
	}
	if used := e.auth.MemoryInUse(); used > 2*one+one/2 {
		t.Fatalf("%d bytes in use, over the budget of %d", used, 2*one+one/2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, id := range []string{"b", "c"} { // by two clients, each within its share
		e.poll(fmt.Sprintf("10.0.0.%d", i+2), "/docs/"+id+"/events?version=1&commentVersion=0", ctx)
		e.waitWaiting(t, id, 1)
	}
	w := e.serve(defaultIP, "GET", "/docs/a", "", nil)
	if w.Code != 503 || w.Header().Get("Retry-After") != "2" || !strings.Contains(w.Body.String(), "Limits.MaxMemory") {
		t.Fatalf("GET of a with b and c in use: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	status, body := e.request(t, "POST", "/docs/c/events", `{"version":1,"clientID":1,"steps":[`+insert(1, strings.Repeat("y", 30_000))+`]}`)
	if status != 413 || !strings.Contains(body, "document memory") {
		t.Fatalf("growing c over its share: %d %s", status, body)
	}
	cancel()
	waitFor(t, func() bool { return e.waiting("b") == 0 && e.waiting("c") == 0 })
	status, body = e.request(t, "GET", "/docs/big", "")
	if status != 413 || !strings.Contains(body, "document memory") {
		t.Fatalf("GET of a stored document over the share: %d %.200s", status, body)
	}
	if exists, err := e.auth.Exists(context.Background(), "big"); err != nil || !exists {
		t.Fatalf("the refused document is gone: %v %v", exists, err)
	}
	e.mustGet(t, "/docs/a") // b and c are idle again
}

// TestBodyMemory: requests reserve their Content-Length in the budget of
// request bodies (MaxBodyMemory) before reading their body and hold it
// until they end; one that finds no room is answered 503 with
// Retry-After, for the apply endpoint and the collab API alike. A body
// without Content-Length reserves the body limit until its real size is
// known.
func TestBodyMemory(t *testing.T) {
	const size = 100_000
	e := newCollab(t, Config{Limits: Limits{MaxBodyBytes: 2 * size, MaxBodyMemory: 3 * size}}, collab.Config{})
	e.s.bodies.wait = time.Millisecond // no room: refused at once
	body := []byte(`{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"` + strings.Repeat("x", size-200) + `"}]}]},"steps":[]}`)
	body = append(body, bytes.Repeat([]byte(" "), size-len(body))...)
	type slow struct {
		w    *io.PipeWriter
		done chan *httptest.ResponseRecorder
	}
	start := func(target string, length int64) slow {
		pr, pw := io.Pipe()
		r := httptest.NewRequest("POST", target, pr)
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = length
		c := slow{pw, make(chan *httptest.ResponseRecorder, 1)}
		go func() {
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, r)
			c.done <- w
		}()
		return c
	}
	var held []slow
	for i, target := range []string{"/v1/apply", "/v1/apply", "/docs/d/events"} {
		held = append(held, start(target, size))
		want := int64(i+1) * size
		waitFor(t, func() bool { return e.s.BodyMemoryInUse() == want })
	}
	for _, target := range []string{"/v1/apply", "/docs/d/events"} {
		w := e.serve(defaultIP, "POST", target, string(body), nil)
		if w.Code != 503 || w.Header().Get("Retry-After") != "2" || !strings.Contains(w.Body.String(), "Limits.MaxBodyMemory") {
			t.Fatalf("%s with the budget full: %d %q %s", target, w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	}
	if used := e.s.BodyMemoryInUse(); used != 3*size {
		t.Fatalf("%d bytes reserved after the refusals, want %d", used, 3*size)
	}
	// The first ends: its bytes are released, and the next fits.
	go func() { held[0].w.Write(body); held[0].w.Close() }()
	if w := <-held[0].done; w.Code != 200 {
		t.Fatalf("the first request: %d %.200s", w.Code, w.Body)
	}
	if used := e.s.BodyMemoryInUse(); used != 2*size {
		t.Fatalf("%d bytes reserved, want %d", used, 2*size)
	}
	if w := e.serve(defaultIP, "POST", "/v1/apply", string(body), nil); w.Code != 200 {
		t.Fatalf("with room again: %d %.200s", w.Code, w.Body)
	}
	for _, h := range held[1:] {
		h.w.CloseWithError(io.ErrUnexpectedEOF)
		<-h.done
	}
	if used := e.s.BodyMemoryInUse(); used != 0 {
		t.Fatalf("%d bytes reserved with no request in flight", used)
	}
	// Without Content-Length the body limit is reserved while reading,
	// then only what the body took.
	chunked := start("/v1/apply", -1)
	waitFor(t, func() bool { return e.s.BodyMemoryInUse() == 2*size })
	chunked.w.Write(body)
	chunked.w.Close()
	if w := <-chunked.done; w.Code != 200 {
		t.Fatalf("chunked: %d %.200s", w.Code, w.Body)
	}
	if used := e.s.BodyMemoryInUse(); used != 0 {
		t.Fatalf("%d bytes reserved after the chunked request", used)
	}
}
