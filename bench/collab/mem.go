package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

// memOptions describes a measure of the memory a loaded document takes
// in a server.
type memOptions struct {
	Addr string
	// Token, when not empty, is sent as a bearer token with every request.
	Token string
	PID   int
	// Docs documents (Prefix0, …) are created through the API, each
	// filled with Steps steps inserting Text letters each.
	Docs, Steps, Text int
	Prefix            string
	// Warm documents are made first, before the first reading of the RSS,
	// so that what is paid once (code, caches, the store, a garbage
	// collected heap growing to its working size) is not counted: the
	// figure is the cost of one more document.
	Warm int
	// Conns connections make the documents.
	Conns int
	// Settle is how long the server is left alone before each reading.
	Settle time.Duration
	// GCPath, when set, is a path that makes the server collect its
	// garbage (POST): the RSS is then also read after a collection, before
	// and after the documents are made.
	GCPath string
}

// memResult is what a memory measure found.
type memResult struct {
	Docs      int `json:"docs"`
	TextBytes int `json:"textBytesPerDoc"`
	// RSSBefore and RSSAfter are the server's VmRSS before and after the
	// documents were made, in bytes; PerDoc the growth per document.
	RSSBefore int64   `json:"rssBefore"`
	RSSAfter  int64   `json:"rssAfter"`
	PerDoc    float64 `json:"bytesPerDoc"`
	// The same after a garbage collection (with GCPath), and the live
	// heap the server reported then (node: heapUsed).
	RSSBeforeGC  int64   `json:"rssBeforeGC,omitempty"`
	RSSAfterGC   int64   `json:"rssAfterGC,omitempty"`
	PerDocGC     float64 `json:"bytesPerDocGC,omitempty"`
	HeapBefore   int64   `json:"heapBefore,omitempty"`
	HeapAfter    int64   `json:"heapAfter,omitempty"`
	HeapPerDocGC float64 `json:"heapPerDocGC,omitempty"`
	// Seconds is how long making the documents took.
	Seconds float64 `json:"seconds"`
	errorCount
}

// runMem runs the measure opt describes.
func runMem(opt memOptions) (*memResult, error) {
	if opt.PID <= 0 || opt.Docs < 1 || opt.Steps < 1 || opt.Conns < 1 {
		return nil, fmt.Errorf("need the server's pid, documents, steps and connections")
	}
	res := &memResult{Docs: opt.Docs, TextBytes: opt.Steps * opt.Text}
	if err := makeDocs(opt, opt.Prefix+"warm-", opt.Warm, &res.errorCount); err != nil {
		return nil, err
	}
	time.Sleep(opt.Settle)
	var err error
	if res.RSSBefore, err = benchproc.ProcStatus(opt.PID, "VmRSS"); err != nil {
		return nil, err
	}
	if res.RSSBeforeGC, res.HeapBefore, err = rssAfterGC(opt); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := makeDocs(opt, opt.Prefix, opt.Docs, &res.errorCount); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(t0).Seconds()
	time.Sleep(opt.Settle)
	if res.RSSAfter, err = benchproc.ProcStatus(opt.PID, "VmRSS"); err != nil {
		return nil, err
	}
	res.PerDoc = float64(res.RSSAfter-res.RSSBefore) / float64(opt.Docs)
	if res.RSSAfterGC, res.HeapAfter, err = rssAfterGC(opt); err != nil {
		return nil, err
	}
	if opt.GCPath != "" {
		res.PerDocGC = float64(res.RSSAfterGC-res.RSSBeforeGC) / float64(opt.Docs)
		res.HeapPerDocGC = float64(res.HeapAfter-res.HeapBefore) / float64(opt.Docs)
	}
	return res, nil
}

// rssAfterGC makes the server collect its garbage, waits opt.Settle and
// returns its RSS and the live heap it reported ({"heapUsed": bytes});
// nothing without opt.GCPath.
func rssAfterGC(opt memOptions) (rss, heap int64, err error) {
	if opt.GCPath == "" {
		return 0, 0, nil
	}
	c, err := dialConn(opt.Addr, opt.Token)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	status, body, err := c.do("POST", opt.GCPath, nil)
	var answer struct {
		HeapUsed int64 `json:"heapUsed"`
	}
	if err == nil && status == 200 {
		err = json.Unmarshal(body, &answer)
	} else if err == nil {
		err = fmt.Errorf("POST %s: status %d: %.200s", opt.GCPath, status, body)
	}
	if err != nil {
		return 0, 0, err
	}
	time.Sleep(opt.Settle)
	rss, err = benchproc.ProcStatus(opt.PID, "VmRSS")
	return rss, answer.HeapUsed, err
}

// makeDocs creates n documents prefix0…, each with opt.Steps steps of
// opt.Text letters in one submission.
func makeDocs(opt memOptions, prefix string, n int, errs *errorCount) error {
	if n == 0 {
		return nil
	}
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	var dialErr error
	for k := range min(opt.Conns, n) {
		c, err := dialConn(opt.Addr, opt.Token)
		if err != nil {
			dialErr = err
			break
		}
		wg.Go(func() {
			defer c.Close()
			t := newTypist(uint64(k)<<32|uint64(len(prefix)), 0)
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := makeDoc(c, t, prefix+strconv.FormatInt(i, 10), opt.Steps, opt.Text); err != nil {
					mu.Lock()
					errs.add(err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return dialErr
}

// makeDoc creates the document id and submits steps steps of text
// letters each, all at position 1.
func makeDoc(c *conn, t *typist, id string, steps, text int) error {
	st, err := getDoc(c, id)
	if err != nil {
		return err
	}
	if *st.Version != 0 {
		return fmt.Errorf("%s: a new document is at version %d", id, *st.Version)
	}
	body := []byte(`{"version":0,"clientID":` + strconv.FormatUint(uint64(t.clientID), 10) + `,"steps":[`)
	letters := make([]byte, text)
	for i := range steps {
		if i > 0 {
			body = append(body, ',')
		}
		for j := range letters {
			letters[j] = byte('a' + t.rng.IntN(26))
		}
		body = append(body, `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"`...)
		body = append(body, letters...)
		body = append(body, `"}]}}`...)
	}
	body = append(body, "]}"...)
	status, answer, err := c.do("POST", "/docs/"+id+"/events", body)
	if err != nil {
		return err
	}
	var a submitAnswer
	if status != 200 {
		return fmt.Errorf("POST %s: status %d: %.200s", id, status, answer)
	}
	if err := json.Unmarshal(answer, &a); err != nil || a.Version == nil || *a.Version != int64(steps) {
		return fmt.Errorf("POST %s: answer %.200s", id, answer)
	}
	return nil
}
