// Command ceiling is a measuring instrument for bench/collab: a Go
// net/http server that speaks the collab routes and JSON collabbench's
// loads use, keeps an authority's bookkeeping (per document: the version,
// the accepted steps' JSON and client ids for the events answers, 409 on
// a stale version, long polls woken on publish), and does none of the
// ProseMirror work: no document model, no step is decoded or applied,
// nothing is stored but in memory. What it reaches is about the most any
// authority written on net/http over HTTP/1.1 can reach with this load on
// this machine.
//
//	ceiling -addr 127.0.0.1:8080 [-poll-timeout 60s] [-history 10000]
//
// Routes (answers as pmauthority writes them; "users" is always 0):
//
//	GET  /docs              [{"id":…,"users":0},…]
//	GET  /docs/{id}         {"doc":<an empty paragraph>,"users":0,"version":v,"comments":[],"commentVersion":0}
//	GET  /docs/{id}/events  ?version=V&commentVersion=C: the steps after V, at once or when published; {} after -poll-timeout
//	POST /docs/{id}/events  {"version":V,"steps":[…],"clientID":id} → {"version":v,"commentVersion":0}, or 409/400/410
//
// Documents are made on first use. Comments are ignored (commentVersion
// stays 0), ids are not checked, and the body is read by scan.go, which
// is not a JSON parser (see there).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `host:port`")
	poll := flag.Duration("poll-timeout", 60*time.Second, "how long GET events waits before answering {} (pmauthority's default)")
	history := flag.Int("history", 10_000, "steps kept per document for GET events (older ones: 410; pmauthority's default)")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: newCeiling(*poll, *history), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// ceiling is the server: its documents by id.
type ceiling struct {
	poll    time.Duration
	history int
	mu      sync.Mutex
	docs    map[string]*doc
}

// doc is one document's bookkeeping.
type doc struct {
	mu sync.Mutex
	// steps[i] and clients[i] are the JSON of the step that made version
	// first+i+1 and of its client id. They point into copies of request
	// bodies, which are never modified: an events answer may use them
	// after the lock is released.
	steps, clients [][]byte
	first          int64
	// wake is closed (and replaced) when steps are accepted.
	wake chan struct{}
}

func newCeiling(poll time.Duration, history int) *ceiling {
	return &ceiling{poll: poll, history: history, docs: map[string]*doc{}}
}

var (
	jsonType   = []string{"application/json; charset=utf-8"}
	emptyDoc   = `{"doc":{"type":"doc","content":[{"type":"paragraph"}]},"users":0,"version":`
	scratches  sync.Pool // of *scratch
	maxBody    = int64(1 << 20)
	conflict   = []byte(`{"error":{"message":"Version not current"}}`)
	historyGap = []byte(`{"error":{"message":"History no longer available"}}`)
)

// scratch is the memory a POST is read into, reused.
type scratch struct {
	body bytes.Buffer
	sub  submission
}

// ServeHTTP routes a request by hand, as pmauthority does.
func (c *ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/docs")
	switch id, tail, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/"); {
	case !ok || rest != "" && rest[0] != '/':
		write(w, http.StatusNotFound, []byte(`{"error":{"message":"not found"}}`))
	case id == "" && r.Method == http.MethodGet:
		c.mu.Lock()
		b := []byte{'['}
		for id := range c.docs {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(strconv.AppendQuote(append(b, `{"id":`...), id), `,"users":0}`...)
		}
		c.mu.Unlock()
		write(w, http.StatusOK, append(b, ']'))
	case tail == "" && r.Method == http.MethodGet:
		d := c.doc(id)
		d.mu.Lock()
		v := d.first + int64(len(d.steps))
		d.mu.Unlock()
		write(w, http.StatusOK, fmt.Appendf(nil, `%s%d,"comments":[],"commentVersion":0}`, emptyDoc, v))
	case tail == "events" && r.Method == http.MethodGet:
		c.events(w, r, c.doc(id))
	case tail == "events" && r.Method == http.MethodPost:
		c.submit(w, r, c.doc(id))
	default:
		write(w, http.StatusNotFound, []byte(`{"error":{"message":"not found"}}`))
	}
}

// doc returns the document id, made on first use.
func (c *ceiling) doc(id string) *doc {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docs[id]
	if d == nil {
		d = &doc{wake: make(chan struct{})}
		c.docs[id] = d
	}
	return d
}

// submit answers POST /docs/{id}/events.
func (c *ceiling) submit(w http.ResponseWriter, r *http.Request, d *doc) {
	sc, _ := scratches.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	defer scratches.Put(sc)
	buf, sub := &sc.body, &sc.sub
	buf.Reset()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !scanSubmission(buf.Bytes(), sub) || len(sub.steps) > 0 && sub.clientID == nil {
		writeError(w, http.StatusBadRequest, "invalid request: want {\"version\": V, \"steps\": […], \"clientID\": ID}")
		return
	}
	// One copy of the steps array and the client id, shared by the steps.
	var kept []byte
	if len(sub.steps) > 0 {
		kept = make([]byte, 0, sub.stepsTo-sub.stepsFrom+len(sub.clientID))
		kept = append(append(kept, buf.Bytes()[sub.stepsFrom:sub.stepsTo]...), sub.clientID...)
	}
	d.mu.Lock()
	v := d.first + int64(len(d.steps))
	if sub.version != v {
		d.mu.Unlock()
		if sub.version > v {
			writeError(w, http.StatusBadRequest, "Invalid version "+strconv.FormatInt(sub.version, 10))
		} else {
			write(w, http.StatusConflict, conflict)
		}
		return
	}
	if len(sub.steps) > 0 {
		id := kept[sub.stepsTo-sub.stepsFrom:]
		for _, s := range sub.steps {
			d.steps = append(d.steps, kept[s[0]-sub.stepsFrom:s[1]-sub.stepsFrom])
			d.clients = append(d.clients, id)
		}
		v += int64(len(sub.steps))
		// Keep at least c.history steps, trimming in batches.
		if n := len(d.steps) - c.history; n > c.history {
			d.steps, d.clients = slices.Clone(d.steps[n:]), slices.Clone(d.clients[n:])
			d.first += int64(n)
		}
		close(d.wake)
		d.wake = make(chan struct{})
	}
	d.mu.Unlock()
	write(w, http.StatusOK, append(strconv.AppendInt([]byte(`{"version":`), v, 10), `,"commentVersion":0}`...))
}

// events answers GET /docs/{id}/events: the steps after ?version=, at
// once or as soon as some are accepted, or {} after the poll timeout.
func (c *ceiling) events(w http.ResponseWriter, r *http.Request, d *doc) {
	since, err := queryInt(r.URL.RawQuery, "version")
	if _, err2 := queryInt(r.URL.RawQuery, "commentVersion"); err != nil || err2 != nil || since < 0 {
		writeError(w, http.StatusBadRequest, "want ?version=V&commentVersion=C (non-negative integers)")
		return
	}
	var timeout <-chan time.Time
	for {
		d.mu.Lock()
		first, steps, clients, wake := d.first, d.steps, d.clients, d.wake
		d.mu.Unlock()
		v := first + int64(len(steps))
		switch {
		case since > v:
			writeError(w, http.StatusBadRequest, "Invalid version "+strconv.FormatInt(since, 10))
			return
		case since < first:
			write(w, http.StatusGone, historyGap)
			return
		case since < v:
			write(w, http.StatusOK, appendEvents(nil, v, steps[since-first:], clients[since-first:]))
			return
		}
		if timeout == nil {
			t := time.NewTimer(c.poll)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
			write(w, http.StatusOK, []byte("{}"))
			return
		case <-r.Context().Done():
			return
		}
	}
}

// queryInt returns the query parameter name as an integer (no unescaping:
// collabbench sends digits).
func queryInt(rawQuery, name string) (int64, error) {
	for q := rawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if k, v, _ := strings.Cut(pair, "="); k == name {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s", name)
}

// appendEvents appends the events answer at version v, as pmauthority
// writes it.
func appendEvents(b []byte, v int64, steps, clients [][]byte) []byte {
	b = strconv.AppendInt(append(b, `{"version":`...), v, 10)
	b = append(b, `,"commentVersion":0,"steps":[`...)
	for i, s := range steps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	b = append(b, `],"clientIDs":[`...)
	for i, id := range clients {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, id...)
	}
	return append(b, `],"comment":[],"users":0}`...)
}

// writeError answers status with pmauthority's error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	write(w, status, fmt.Appendf(nil, `{"error":{"message":%q}}`, msg))
}

// write answers status with body and the headers pmauthority sends.
func write(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}
