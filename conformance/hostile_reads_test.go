//go:build linux

package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The reads of the hostile suite: a step log of a few huge steps read by
// many clients at once, and a large document read by many slow clients.
// Both run the real binary in a 512 MiB memory cgroup with the default
// budget, which it takes from the cgroup: it must never be OOM-killed, and
// answer what does not fit in its budget with 503 (or 429, one client's
// share of large answers) instead.

// startInCgroup starts the binary in a new memory cgroup of limit bytes on
// data, or skips the test where no cgroup can be made.
func startInCgroup(t *testing.T, bin, data string, limit int64) (*hostileProc, *memoryCgroup) {
	t.Helper()
	mc, why := newMemoryCgroup(t, limit)
	if mc == nil {
		t.Skipf("no memory cgroup: %s", why)
	}
	p := startHostile(t, bin, data, cgroupWrap(mc), hostileFlags("")...)
	t.Logf("in the cgroup %s (limit %d MiB, v2 %v): %s", mc.dir, limit>>20, mc.v2, firstLine(p.log.String(), "memory budgets"))
	return p, mc
}

// cgroupWrap returns the command line prefix that runs a command in mc.
func cgroupWrap(mc *memoryCgroup) []string {
	return []string{"/bin/sh", "-c", `echo $$ > "$0"/cgroup.procs && exec "$@"`, mc.dir}
}

// survived fails the test when the process has exited or mc counts an
// OOM kill, with the peak resident memory that finish (of watch) sampled.
func (p *hostileProc) survived(mc *memoryCgroup, finish func() (int64, int64, []string)) {
	p.t.Helper()
	exited := false
	select {
	case <-p.done:
		exited = true
	default:
	}
	if kills := mc.oomKills(p.t); exited || kills > 0 {
		peak, _, _ := finish()
		p.t.Fatalf("the server was OOM-killed %d times (exited %v: %v) after a peak RSS of %.0f MiB sampled\n%s",
			kills, exited, p.err, float64(peak)/(1<<20), lastLines(p.log.String(), 5))
	}
}

// get sends a GET and returns its status and the length of its body,
// which it reads and discards.
func (p *hostileProc) get(path string) (int, int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// replaceText returns a step replacing the paragraph's text of length
// old with n copies of c.
func replaceText(old, n int, c byte) string {
	return fmt.Sprintf(`{"stepType":"replace","from":1,"to":%d,"slice":{"content":[{"type":"text","text":"%s"}]}}`,
		1+old, strings.Repeat(string(c), n))
}

// stepLogReads reads the step log of id (at version) 16 at once by every
// route that reads it: 16 pages of /steps?limit=1000, 2 /authors, 2
// documents at the last versions and 2 exports at the first ones (each a
// document of 3 M characters), and returns the answers by status.
func (p *hostileProc) stepLogReads(id string, version int64) *statusCounts {
	var paths []string
	for i := range int64(2) {
		for from := range int64(8) {
			paths = append(paths, fmt.Sprintf("/docs/%s/steps?limit=1000&from=%d", id, from))
		}
		paths = append(paths,
			fmt.Sprintf("/docs/%s/authors", id),
			fmt.Sprintf("/docs/%s?version=%d", id, version-i),
			fmt.Sprintf("/docs/%s/export?format=text&version=%d", id, 1+i))
	}
	answers := &statusCounts{}
	parallel(len(paths), 16, func(i int) {
		status, _, err := p.get(paths[i])
		answers.add(status, nil, err)
	})
	return answers
}

// TestHostileStepLogCgroup stores 29 steps that each replace a document's
// text with 3,000,000 characters (about 87 MB of step log), then reads
// that log 16 at once by every route that reads it (GET
// /steps?limit=1000, /authors, ?version=N, export at a version), before
// and after a restart: the server is never OOM-killed, every answer is 200
// or a refusal of the budget (503, 429), and a page of /steps is cut by
// its byte limit (with a "next").
func TestHostileStepLogCgroup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary under a memory cgroup")
	}
	bin := hostileBinary(t)
	data := t.TempDir()
	p, mc := startInCgroup(t, bin, data, 512<<20)
	finish := p.watch(p.cmd.Process.Pid)
	if s, body, _, err := p.do("GET", "/docs/bomb", "", nil, nil); err != nil || s != 200 {
		t.Fatalf("GET /docs/bomb: %d %s %v", s, body, err)
	}
	const chars = 3_000_000
	start := time.Now()
	var version int64
	var refusal string
	for k := range 40 {
		body := fmt.Appendf(nil, `{"version":%d,"clientID":7,"steps":[%s]}`, version, replaceText(min(k, 1)*chars, chars, byte('a'+k%26)))
		s, resp, _, err := p.do("POST", "/docs/bomb/events", "application/json", body, nil)
		if err != nil || s != 200 {
			refusal = fmt.Sprintf("%d %.200s %v", s, resp, err)
			break
		}
		version++
	}
	t.Logf("%d steps of %d characters stored in %v, then %s", version, chars, time.Since(start).Round(time.Millisecond), refusal)
	if version < 20 {
		t.Fatalf("only %d huge steps stored", version)
	}
	check := func(when string, answers *statusCounts) {
		t.Helper()
		p.survived(mc, finish)
		t.Logf("%s: %s (%v)", when, answers, time.Since(start).Round(time.Millisecond))
		if !answers.only("200", "503", "429") {
			t.Errorf("%s: want 200, 503 or 429, got %s", when, answers)
		}
	}
	start = time.Now()
	check("reading the step log, 16 at once", p.stepLogReads("bomb", version))

	// The changes between versions read two documents and the steps
	// between them; the diff of 3 M characters is over its work bound
	// (413), or one prosemirror-changeset throws on (422), unless the
	// budget refuses it first.
	start = time.Now()
	changes := &statusCounts{}
	parallel(8, 8, func(i int) {
		status, resp, _, err := p.do("GET", fmt.Sprintf("/docs/bomb/changes?from=%d&to=%d", 1+i%4, version-int64(i%4)), "", nil, nil)
		changes.add(status, resp, err)
	})
	p.survived(mc, finish)
	t.Logf("changes between versions, 8 at once: %s (%v)", changes, time.Since(start).Round(time.Millisecond))
	if !changes.only("200", "413", "422", "503", "429") {
		t.Errorf("changes between versions: want 200, 413, 422, 503 or 429, got %s", changes)
	}

	// Edits at old bases read the document at each base (3 M characters);
	// their target was touched since, so each is 409, or 410 for a base
	// older than the steps kept in memory, unless the budget refuses it
	// first.
	start = time.Now()
	edits := p.editsAtBases("bomb", version)
	p.survived(mc, finish)
	t.Logf("edits at 16 old bases, 16 at once: %s (%v)", edits, time.Since(start).Round(time.Millisecond))
	if !edits.only("409", "410", "503", "429") {
		t.Errorf("edits at old bases: want 409, 410, 503 or 429, got %s", edits)
	}

	// One page of /steps?limit=1000 stops at its byte limit.
	var page struct {
		Steps []struct{ Version int64 }
		Next  *int64
	}
	for try := 0; ; try++ {
		s, body, _, err := p.do("GET", "/docs/bomb/steps?limit=1000", "", nil, nil)
		if s == 503 && try < 20 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil || s != 200 {
			t.Fatalf("GET /steps?limit=1000: %d %.200s %v", s, body, err)
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		break
	}
	if int64(len(page.Steps)) >= version || page.Next == nil || *page.Next != int64(len(page.Steps)) {
		t.Errorf("a page of /steps?limit=1000 has %d of the %d steps, next %v: want it cut by bytes, with next", len(page.Steps), version, page.Next)
	}

	peak, hwm, failures := finish()
	t.Logf("peak RSS %.0f MiB sampled, VmHWM %.0f MiB; /healthz failures %d", float64(peak)/(1<<20), float64(hwm)/(1<<20), len(failures))

	// Restarted (SIGKILL) on the same data, nothing of it is in memory.
	p.stop()
	p = startHostile(t, bin, data, cgroupWrap(mc), hostileFlags("")...)
	finish = p.watch(p.cmd.Process.Pid)
	start = time.Now()
	check("after a restart, reading the step log, 16 at once", p.stepLogReads("bomb", version))
	peak, hwm, _ = finish()
	t.Logf("after the restart: peak RSS %.0f MiB sampled, VmHWM %.0f MiB", float64(peak)/(1<<20), float64(hwm)/(1<<20))
	if s, _, _, err := p.do("GET", "/healthz", "", nil, nil); err != nil || s != 200 {
		t.Errorf("/healthz after the reads: %d %v", s, err)
	}
}

// editsAtBases sends 16 edits at once to id through POST
// /docs/{id}/edits, at the 16 bases below version (the newest first,
// from 1 again when there are fewer), each deleting the first block, and
// returns the answers by status.
func (p *hostileProc) editsAtBases(id string, version int64) *statusCounts {
	answers := &statusCounts{}
	parallel(16, 16, func(i int) {
		base := version - 1 - int64(i)%(version-1)
		body := fmt.Appendf(nil, `{"base":%d,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, base)
		status, resp, _, err := p.do("POST", "/docs/"+id+"/edits", "application/json", body, nil)
		answers.add(status, resp, err)
	})
	return answers
}

// slowGet is a GET of a client that reads slowly: a small receive buffer,
// and nothing read past the status line until finish.
type slowGet struct {
	conn   net.Conn
	rd     *bufio.Reader
	status string // the status line
	err    error
}

// startSlowGet sends GET path from the local address from (a loopback
// address of its own, so that each is another client) to addr.
func startSlowGet(addr, from, path string) *slowGet {
	g := &slowGet{}
	d := net.Dialer{
		Timeout:   10 * time.Second,
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)},
		Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			})
		},
	}
	if g.conn, g.err = d.Dial("tcp", addr); g.err != nil {
		return g
	}
	g.conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, g.err = fmt.Fprintf(g.conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); g.err != nil {
		return g
	}
	g.rd = bufio.NewReaderSize(g.conn, 256)
	g.status, g.err = g.rd.ReadString('\n')
	return g
}

// finish reads the rest of the answer and returns its status code ("error"
// when the request failed).
func (g *slowGet) finish() string {
	if g.conn == nil {
		return "error"
	}
	defer g.conn.Close()
	if g.err != nil {
		return "error"
	}
	var code string
	fmt.Sscanf(g.status, "HTTP/1.1 %s", &code)
	length := int64(-1)
	for {
		line, err := g.rd.ReadString('\n')
		if err != nil {
			return "error"
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
			fmt.Sscan(strings.TrimSpace(v), &length)
		}
	}
	if n, err := io.CopyN(io.Discard, g.rd, length); err != nil || n != length {
		return code + " cut short"
	}
	return code
}

// TestHostileSlowReadersCgroup makes a document of 5 MB (4 M characters
// of text and 1 MiB of comments), then reads it with 100 clients at once,
// each from a loopback address of its own, that read slowly (a 4 KiB
// receive buffer, and nothing past the status line for 4 s): the server is
// never OOM-killed, and each answer is a whole 200 or a refusal of the
// budget (503, 429).
func TestHostileSlowReadersCgroup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary under a memory cgroup")
	}
	bin := hostileBinary(t)
	p, mc := startInCgroup(t, bin, t.TempDir(), 512<<20)
	if s, body, _, err := p.do("GET", "/docs/fat", "", nil, nil); err != nil || s != 200 {
		t.Fatalf("GET /docs/fat: %d %s %v", s, body, err)
	}
	p.mustPost("fat", 0, "["+replaceText(0, 4_000_000, 'f')+"]", "")
	text := strings.Repeat("spam ", 60<<10/5)
	comments := 0
	for i := range 20 {
		body := fmt.Appendf(nil, `{"version":1,"clientID":7,"steps":[],"comment":[{"type":"create","id":%d,"from":5,"to":10,"text":%q}]}`, 100+i, text)
		if s, _, _, err := p.do("POST", "/docs/fat/events", "application/json", body, nil); err != nil || s != 200 {
			break
		}
		comments++
	}
	_, size, err := p.get("/docs/fat")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the document: 4 M characters and %d comments of 60 KiB, %d bytes of JSON", comments, size)
	finish := p.watch(p.cmd.Process.Pid)

	const readers = 100
	gets := make([]*slowGet, readers)
	var wg sync.WaitGroup
	for i := range gets {
		wg.Go(func() {
			gets[i] = startSlowGet(p.addr, fmt.Sprintf("127.0.%d.%d", 1+i/250, 2+i%250), "/docs/fat")
		})
	}
	wg.Wait()
	time.Sleep(4 * time.Second) // the readers hold their answers
	p.survived(mc, finish)
	heldPeak, _ := memStatus(p.cmd.Process.Pid)
	answers := &statusCounts{}
	for _, g := range gets {
		wg.Go(func() {
			answers.count(g.finish())
		})
	}
	wg.Wait()
	peak, hwm, failures := finish()
	t.Logf("%d slow readers: %s; RSS %.0f MiB while they held their answers, peak %.0f MiB sampled, VmHWM %.0f MiB; /healthz failures %d",
		readers, answers, float64(heldPeak)/(1<<20), float64(peak)/(1<<20), float64(hwm)/(1<<20), len(failures))
	p.alive()
	if n := mc.oomKills(t); n != 0 {
		t.Fatalf("%d OOM kills in the cgroup", n)
	}
	if !answers.only("200", "503", "429") {
		t.Errorf("slow readers: want whole 200 answers, 503 or 429, got %s", answers)
	}
	if answers.n["200"] == 0 {
		t.Errorf("slow readers: no reader got the document: %s", answers)
	}
	if s, _, _, err := p.do("GET", "/healthz", "", nil, nil); err != nil || s != 200 {
		t.Errorf("/healthz after the readers: %d %v", s, err)
	}
}

// count counts an answer by its key (a status, or what went wrong).
func (c *statusCounts) count(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n, c.examples = map[string]int{}, map[string]string{}
	}
	c.n[key]++
}
