//go:build linux

package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHostileShares reproduces the lockout of issue 21 (finding 3) against
// the real binary: one client makes documents of every size, from bombs
// of doubling steps to empty ones, then keeps each in use with a long
// poll, within --max-client-conns, until the memory budget of the loaded
// documents has no room left. Another client must still read and edit a
// new small document; the first client's polls beyond its share of the
// budget are refused with 503 naming --max-client-memory. (Before the
// share, the other client's GET was answered 503.)
//
// The polls are sent one at a time, each once the previous one waits
// (the server's long-poll gauge on --metrics-addr) or was answered, so
// that the budget fills the same way on every run.
func TestHostileShares(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := hostileBinary(t)
	p := startHostile(t, bin, t.TempDir(), nil, "--trust-proxy", "--max-memory", "32MiB", "--metrics-addr", "127.0.0.1:0")
	var metricsURL string
	waitFor(t, func() bool {
		for line := range strings.Lines(p.log.String()) {
			var rec struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "metrics serving" {
				metricsURL = rec.URL
				return true
			}
		}
		return false
	})
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	const mallory, alice = "10.9.0.1", "10.9.0.2"

	// Mallory's documents, largest first: about 1 MB, 35 KB and 4 KB
	// estimated, so that the last ones fill what the larger leave over.
	type doc struct {
		id      string
		version int
	}
	var docs []doc
	for _, size := range []struct{ n, doublings int }{{24, 19}, {40, 14}, {40, -1}} {
		for i := range size.n {
			id := fmt.Sprintf("lock-%d-%d", size.doublings, i)
			if s, body, _, err := p.do("GET", "/docs/"+id, "", nil, from(mallory)); err != nil || s != 200 {
				t.Fatalf("creating %s: %d %s %v", id, s, body, err)
			}
			v := 0
			if size.doublings >= 0 {
				body := fmt.Appendf(nil, `{"version":0,"clientID":7,"steps":%s}`, bombSteps(size.doublings))
				if s, resp, _, err := p.do("POST", "/docs/"+id+"/events", "application/json", body, from(mallory)); err != nil || s != 200 {
					t.Fatalf("growing %s: %d %s %v", id, s, resp, err)
				}
				v = size.doublings + 1
			}
			docs = append(docs, doc{id, v})
		}
	}

	waiting := func() int {
		resp, err := http.Get(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), `pmauthority_connections{transport="longpoll"} `); ok {
				n, _ := strconv.ParseFloat(rest, 64)
				return int(n)
			}
		}
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	refused := &statusCounts{}
	held := 0
	for _, d := range docs {
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/docs/%s/events?version=%d&commentVersion=0", p.base, d.id, d.version), nil)
			req.Header = from(mallory)
			resp, err := client.Do(req)
			if ctx.Err() != nil {
				return // the end of the test
			}
			var body []byte
			if err == nil {
				body = make([]byte, 4096)
				n, _ := resp.Body.Read(body)
				body = body[:n]
				resp.Body.Close()
				refused.add(resp.StatusCode, body, nil)
			} else {
				refused.add(0, nil, err)
			}
		}()
		for done := false; !done; {
			select {
			case <-answered:
				done = true
			case <-time.After(5 * time.Millisecond):
				if waiting() == held+1 {
					held++
					done = true
				}
			}
		}
	}
	t.Logf("%d of mallory's %d long polls wait; the others were answered %s", held, len(docs), refused)

	// Alice reads and edits a new document of 4 KB.
	s, body, _, err := p.do("GET", "/docs/small", "", nil, from(alice))
	if err != nil || s != 200 {
		t.Errorf("another client's GET of a small document, with mallory's documents in use: %d %s %v", s, body, err)
	}
	step := `{"version":0,"clientID":8,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hello"}]}}]}`
	s, body, _, err = p.do("POST", "/docs/small/events", "application/json", []byte(step), from(alice))
	if err != nil || s != 200 {
		t.Errorf("another client's POST to the small document: %d %s %v", s, body, err)
	}
	if !refused.only("503") || !strings.Contains(refused.String(), "--max-client-memory") {
		t.Errorf("mallory's polls over its share: %s, want 503 naming --max-client-memory", refused)
	}
	p.alive()
}

// TestHostileCreates reproduces finding 9 of issue 21 against the real
// binary: POST /docs counts against --max-creates (429 with Retry-After),
// and one client that creates documents until --max-documents makes only
// its own creations fail (507 naming --max-client-documents, its share, a
// quarter by default), not another client's. (Before, POST /docs was not
// counted, and the other client got 507 too.)
func TestHostileCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := hostileBinary(t)
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	create := func(p *hostileProc, ip string) (int, string, http.Header) {
		s, body, h, err := p.do("POST", "/docs", "application/json", []byte(`{}`), from(ip))
		if err != nil {
			t.Fatal(err)
		}
		return s, string(body), h
	}

	p := startHostile(t, bin, t.TempDir(), nil, "--trust-proxy", "--max-creates", "3")
	rate := &statusCounts{}
	for range 5 {
		s, body, h := create(p, "10.9.0.1")
		if s == 429 && h.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After: %s", body)
		}
		rate.add(s, []byte(body), nil)
	}
	t.Logf("5 POST /docs of one client under --max-creates 3: %s", rate)
	if rate.n["201"] != 3 || rate.n["429"] != 2 || !strings.Contains(rate.examples["429"], "--max-creates") {
		t.Errorf("5 POST /docs under --max-creates 3: %s, want 3 created and 2 refused with 429 naming --max-creates", rate)
	}
	p.stop()

	p = startHostile(t, bin, t.TempDir(), nil, "--trust-proxy", "--max-documents", "8")
	fill := &statusCounts{}
	for range 8 {
		s, body, _ := create(p, "10.9.0.1")
		fill.add(s, []byte(body), nil)
	}
	t.Logf("8 POST /docs of one client under --max-documents 8: %s", fill)
	if fill.n["201"] != 2 || !strings.Contains(fill.examples["507"], "--max-client-documents") {
		t.Errorf("one client filling --max-documents 8: %s, want 2 created (a quarter), then 507 naming --max-client-documents", fill)
	}
	for _, ip := range []string{"10.9.0.2", "10.9.0.3"} {
		if s, body, _ := create(p, ip); s != 201 {
			t.Errorf("another client's POST /docs: %d %s", s, body)
		}
	}
	p.alive()
}
