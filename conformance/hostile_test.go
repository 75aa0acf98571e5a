//go:build linux

package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The hostile-input suite runs the real binary and attacks it the way a
// security review did: documents made huge by a few tiny steps, comments
// piled up to the limit, cross-site and rebinding requests, a write-ahead
// log deleted under it. The server must stay within its memory budget,
// answer /healthz throughout, refuse what it cannot take with a status
// that says so, and serve real editors afterwards.
//
// PMA_HOSTILE_BIN runs another binary (e.g. an older build, to measure
// before a fix) and PMA_HOSTILE_FLAGS replaces the budget flags; the
// figures are logged either way.

// hostileBudget is the --max-memory of the bomb runs, which the Go
// runtime's soft limit is set to, and hostileOverhead what the process's
// resident memory may exceed it by: what the limit does not cover (the
// binary, SQLite's C heap and page cache, thread stacks) and the
// collector's brief overshoot of it.
const (
	hostileBudget   = 300 << 20
	hostileOverhead = 100 << 20
)

// hostileBinary returns the binary under test: PMA_HOSTILE_BIN, or
// cmd/pmauthority built into a temporary directory.
func hostileBinary(t *testing.T) string {
	if bin := os.Getenv("PMA_HOSTILE_BIN"); bin != "" {
		return bin
	}
	return stepsBuildCLI(t)
}

// hostileFlags returns the flags of a bomb run: PMA_HOSTILE_FLAGS when
// set, else the budget.
func hostileFlags(budget string) []string {
	if f, ok := os.LookupEnv("PMA_HOSTILE_FLAGS"); ok {
		return strings.Fields(f)
	}
	if budget == "" {
		return nil
	}
	return []string{"--max-memory", budget}
}

// hostileProc is a running pmauthority serve.
type hostileProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
	addr string
	log  *syncBuffer
	done chan struct{}
	err  error // of Wait, once done is closed

	client *http.Client
}

// startHostile starts bin serve on a free loopback port with the JSON log
// and args, waiting for its serving line. wrap, when not nil, is the
// command line prefix that runs it (e.g. a shell entering a cgroup).
func startHostile(t *testing.T, bin, data string, wrap []string, args ...string) *hostileProc {
	t.Helper()
	argv := append([]string{bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--log-format", "json", "--drain-delay", "0"}, args...)
	argv = append(slices.Clone(wrap), argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &hostileProc{t: t, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			p.log.Write(line)
			p.log.Write([]byte{'\n'})
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "pmauthority serving" && rec.Addr != "" {
				select {
				case addr <- rec.Addr:
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	select {
	case a := <-addr:
		p.addr, p.base = a, "http://"+a
	case <-p.done:
		t.Fatalf("%s exited before serving: %v\n%s", strings.Join(argv, " "), p.err, p.log)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not log its address in 30 s:\n%s", strings.Join(argv, " "), p.log)
	}
	return p
}

// stop kills the process (if it still runs) and waits for it.
func (p *hostileProc) stop() {
	p.cmd.Process.Kill()
	<-p.done
	p.client.CloseIdleConnections()
}

// alive fails the test when the process has exited.
func (p *hostileProc) alive() {
	p.t.Helper()
	select {
	case <-p.done:
		p.t.Fatalf("the server exited: %v\n%s", p.err, lastLines(p.log.String(), 40))
	default:
	}
}

// do sends a request and returns the status and body; a transport error
// is returned as such.
func (p *hostileProc) do(method, path, contentType string, body []byte, header http.Header) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, b, resp.Header, fmt.Errorf("reading the body of a %d: %w", resp.StatusCode, err)
	}
	return resp.StatusCode, b, resp.Header, nil
}

// memStatus returns the fields VmRSS and VmHWM (bytes) of
// /proc/PID/status, or -1 when it cannot be read.
func memStatus(pid int) (rss, hwm int64) {
	rss, hwm = -1, -1
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	for line := range strings.Lines(string(data)) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest) // "123456 kB"
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return
}

// watch samples the process's resident memory and asks /healthz every
// 200 ms until the returned function is called; that function returns
// the highest RSS sampled, the process's own high-water mark, and the
// /healthz failures (a non-200 answer or none within 10 s).
func (p *hostileProc) watch(pid int) func() (peak, hwm int64, failures []string) {
	var mu sync.Mutex
	var peak int64
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			if rss, _ := memStatus(pid); rss > 0 {
				mu.Lock()
				peak = max(peak, rss)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	go func() {
		defer wg.Done()
		client := &http.Client{Timeout: 10 * time.Second}
		for {
			resp, err := client.Get(p.base + "/healthz")
			var failure string
			switch {
			case err != nil:
				failure = err.Error()
			case resp.StatusCode != 200:
				failure = resp.Status
			}
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if failure != "" {
				mu.Lock()
				failures = append(failures, time.Now().Format("15:04:05.000")+" "+failure)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() (int64, int64, []string) {
		_, hwm := memStatus(pid)
		close(stop)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return peak, hwm, failures
	}
}

// bombSteps returns the steps of the memory bomb: a one-character insert,
// then doublings replaces from > to, each of which doubles the
// paragraph's text (1+2^k..1 repeats the range 1..1+2^k).
func bombSteps(doublings int) []byte {
	var b bytes.Buffer
	b.WriteString(`[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}`)
	for k := range doublings {
		fmt.Fprintf(&b, `,{"stepType":"replace","from":%d,"to":1}`, 1+(1<<k))
	}
	b.WriteString("]")
	return b.Bytes()
}

// statusCounts counts answers by status ("error" for a transport error).
type statusCounts struct {
	mu sync.Mutex
	n  map[string]int
	// examples keeps one body per status.
	examples map[string]string
}

func (c *statusCounts) add(status int, body []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n, c.examples = map[string]int{}, map[string]string{}
	}
	k := strconv.Itoa(status)
	if err != nil {
		k, body = "error", []byte(err.Error())
	}
	c.n[k]++
	if _, ok := c.examples[k]; !ok {
		c.examples[k] = clip(string(body))
	}
}

func (c *statusCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s×%d (%s) ", k, c.n[k], c.examples[k])
	}
	return b.String()
}

// only reports whether every answer has one of the statuses.
func (c *statusCounts) only(statuses ...string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.n {
		if !slices.Contains(statuses, k) {
			return false
		}
	}
	return true
}

// parallel runs fn(i) for i in [0, n) on workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// bomb submits the memory bomb with doublings to n new documents named
// prefix-i, and returns the answers by status.
func (p *hostileProc) bomb(prefix string, n, doublings int) *statusCounts {
	steps := bombSteps(doublings)
	answers := &statusCounts{}
	parallel(n, 8, func(i int) {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if status, body, _, err := p.do("GET", "/docs/"+id, "", nil, nil); err != nil || status != 200 {
			answers.add(status, body, err)
			return
		}
		body := fmt.Appendf(nil, `{"version":0,"clientID":%d,"steps":%s}`, 1000+i, steps)
		status, resp, _, err := p.do("POST", "/docs/"+id+"/events", "application/json", body, nil)
		answers.add(status, resp, err)
	})
	return answers
}

// getAll reads the documents prefix-i for i in [0, n) and returns the
// answers by status.
func (p *hostileProc) getAll(prefix string, n int) *statusCounts {
	answers := &statusCounts{}
	parallel(n, 8, func(i int) {
		status, body, _, err := p.do("GET", fmt.Sprintf("/docs/%s-%d", prefix, i), "", nil, nil)
		answers.add(status, nil, err)
		_ = body
	})
	return answers
}

// commentBomb adds comments of 60 KiB of text on the range 5..10 of
// document id (whose text it first sets to "hello world") until one is
// refused or max are added, and returns how many were accepted and the
// refusal.
func (p *hostileProc) commentBomb(id string, max int) (added int, refusal string) {
	p.t.Helper()
	p.mustPost(id, 0, `[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hello world"}]}}]`, "")
	text := strings.Repeat("spam ", 60<<10/5)
	for i := range max {
		comment := fmt.Sprintf(`[{"type":"create","id":%d,"from":5,"to":10,"text":%q}]`, 100+i, text)
		status, body, _, err := p.do("POST", "/docs/"+id+"/events", "application/json",
			fmt.Appendf(nil, `{"version":1,"clientID":7,"steps":[],"comment":%s}`, comment), nil)
		if err != nil {
			p.t.Fatalf("comment %d: %v", i, err)
		}
		if status != 200 {
			return added, fmt.Sprintf("%d %s", status, clip(string(body)))
		}
		added++
	}
	return added, ""
}

// mustPost submits steps (and comment events, when comment is not empty)
// to id at version and fails the test unless they are accepted.
func (p *hostileProc) mustPost(id string, version int64, steps, comment string) {
	p.t.Helper()
	body := fmt.Sprintf(`{"version":%d,"clientID":7,"steps":%s`, version, steps)
	if comment != "" {
		body += `,"comment":` + comment
	}
	body += "}"
	status, resp, _, err := p.do("POST", "/docs/"+id+"/events", "application/json", []byte(body), nil)
	if err != nil || status != 200 {
		p.t.Fatalf("POST /docs/%s/events: %d %s %v", id, status, resp, err)
	}
}

// version returns the version of document id.
func (p *hostileProc) version(id string) int64 {
	p.t.Helper()
	status, body, _, err := p.do("GET", "/docs/"+id, "", nil, nil)
	if err != nil || status != 200 {
		p.t.Fatalf("GET /docs/%s: %d %v", id, status, err)
	}
	var st struct{ Version int64 }
	if err := json.Unmarshal(body, &st); err != nil {
		p.t.Fatal(err)
	}
	return st.Version
}

// keystrokes types n characters at position 1 of document id (which is
// at version v) and returns the latency of each acknowledged POST.
func (p *hostileProc) keystrokes(id string, v int64, n int) []time.Duration {
	p.t.Helper()
	var out []time.Duration
	for range n {
		start := time.Now()
		p.mustPost(id, v, `[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"k"}]}}]`, "")
		out = append(out, time.Since(start))
		v++
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// bombs runs the memory bomb on 2×150 new documents and the comment bomb
// on one, checking each answer, and then compares the latency of a
// keystroke on the commented document with one on a plain document.
func bombs(t *testing.T, p *hostileProc) {
	t.Helper()
	// 150 documents each get 1+23 steps (1.2 KB) that would make 8.4 M
	// characters: refused whole by the document byte limit.
	big := p.bomb("bomb", 150, 23)
	t.Logf("memory bomb, 23 doublings on 150 documents: %s", big)
	if !big.only("413", "503", "429") {
		t.Errorf("the 8.4 M-character bomb: want 413 (or 503/429) for every document, got %s", big)
	}
	// 150 documents each grown to 2 M characters (21 doublings), within
	// the byte limit: 300 MiB of text in all, beyond the budget.
	capped := p.bomb("near", 150, 21)
	t.Logf("memory bomb, 21 doublings on 150 documents: %s", capped)
	if !capped.only("200", "413", "503", "429") {
		t.Errorf("the 2 M-character bomb: unexpected answers %s", capped)
	}
	p.alive()
	reads := p.getAll("near", 150)
	t.Logf("reading the 150 grown documents: %s", reads)
	if !reads.only("200", "413", "503") {
		t.Errorf("reading the grown documents: unexpected answers %s", reads)
	}

	_, hwm := memStatus(p.cmd.Process.Pid)
	t.Logf("VmHWM after the memory bomb: %.0f MiB", float64(hwm)/(1<<20))

	// The comment bomb: 60 KiB comments until the cap refuses one (or 300,
	// 18 MiB, where there is no cap).
	added, refusal := p.commentBomb("comments", 300)
	t.Logf("comment bomb: %d comments of 60 KiB accepted, then %s", added, refusal)
	if refusal == "" || !strings.HasPrefix(refusal, "413") {
		t.Errorf("comment bomb: %d comments accepted and no 413 refusal (%q)", added, refusal)
	}
	p.mustPost("plain", 0, `[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hello world"}]}}]`, "")
	hv, pv := p.version("comments"), p.version("plain")
	var heavy, plain []time.Duration
	for range 5 { // interleaved, so that noise strikes both alike
		heavy = append(heavy, p.keystrokes("comments", hv, 8)...)
		plain = append(plain, p.keystrokes("plain", pv, 8)...)
		hv, pv = hv+8, pv+8
	}
	t.Logf("keystroke latency, median of %d: with %d comments %v, without %v (ratio %.2f)",
		len(heavy), added, median(heavy), median(plain), float64(median(heavy))/float64(median(plain)))
	status, body, h, err := p.do("GET", "/docs/comments", "", nil, nil)
	if err != nil || status != 200 || h.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("GET of the commented document: %d, %d bytes, Content-Length %q, %v", status, len(body), h.Get("Content-Length"), err)
	}

}

// TestHostileMemory runs the memory bomb and the comment bomb against the
// real binary under --max-memory 300MiB, restarts it (SIGKILL) and reads
// every bombed document again, then lets real editors work: the peak RSS
// stays below the budget plus hostileOverhead, /healthz answers
// throughout, and the editors converge.
func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary under memory bombs")
	}
	bin := hostileBinary(t)
	data := t.TempDir()
	flags := hostileFlags("300MiB")
	p := startHostile(t, bin, data, nil, flags...)
	t.Logf("serving: %s", firstLine(p.log.String(), "pmauthority serving"))
	finish := p.watch(p.cmd.Process.Pid)

	bombs(t, p)

	peak, hwm, failures := finish()
	t.Logf("peak RSS under both bombs: %.0f MiB sampled, VmHWM %.0f MiB (budget 300 MiB + %d MiB)",
		float64(peak)/(1<<20), float64(hwm)/(1<<20), hostileOverhead>>20)
	if hwm > hostileBudget+hostileOverhead {
		t.Errorf("peak RSS %.0f MiB: over the budget of 300 MiB + %d MiB", float64(hwm)/(1<<20), hostileOverhead>>20)
	}
	if len(failures) > 0 {
		t.Errorf("/healthz failed %d times: %s", len(failures), strings.Join(failures[:min(5, len(failures))], "; "))
	}

	// Restarted after a SIGKILL on the same data, it reads the bombed
	// documents again without dying.
	p.stop()
	p = startHostile(t, bin, data, nil, flags...)
	finish = p.watch(p.cmd.Process.Pid)
	for _, prefix := range []string{"bomb", "near"} {
		reads := p.getAll(prefix, 150)
		t.Logf("after a restart, reading the 150 %s documents: %s", prefix, reads)
		if !reads.only("200", "413", "503") {
			t.Errorf("after a restart: unexpected answers %s", reads)
		}
	}
	p.alive()

	// Documents of 8.4 M characters stored under higher limits (as an
	// older version wrote them) are read under the budget: each is
	// loaded within it or refused, and the process stays within it.
	stored := t.TempDir()
	if os.Getenv("PMA_HOSTILE_FLAGS") == "" {
		q := startHostile(t, bin, stored, nil, "--max-doc-bytes", "64MiB", "--max-memory", "8GiB")
		if big := q.bomb("stored", 20, 23); !big.only("200") {
			t.Fatalf("storing 20 bombs under higher limits: %s", big)
		}
		q.stop()
		q = startHostile(t, bin, stored, nil, flags...)
		finishStored := q.watch(q.cmd.Process.Pid)
		reads := q.getAll("stored", 20)
		_, storedHWM, storedFailures := finishStored()
		t.Logf("reading 20 stored documents of 8.4 M characters under the budget: %s; VmHWM %.0f MiB", reads, float64(storedHWM)/(1<<20))
		if !reads.only("200", "413", "503") {
			t.Errorf("reading the stored bombs: unexpected answers %s", reads)
		}
		if storedHWM > hostileBudget+hostileOverhead {
			t.Errorf("reading the stored bombs: peak RSS %.0f MiB, over the budget", float64(storedHWM)/(1<<20))
		}
		if len(storedFailures) > 0 {
			t.Errorf("/healthz failed %d times reading the stored bombs: %s", len(storedFailures), storedFailures[0])
		}
		q.alive()
		q.stop()
	}

	// Real editors work on fresh documents and converge.
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	run := runEditors(t, node, p.base, []string{"after-1", "after-2"}, editorsConfig{Editors: 8, WS: 4, Edits: 200, Seed: editorsSeed(t)})
	run.check(t, 200)
	peak, hwm, failures = finish()
	t.Logf("after the restart: peak RSS %.0f MiB sampled, VmHWM %.0f MiB", float64(peak)/(1<<20), float64(hwm)/(1<<20))
	if hwm > hostileBudget+hostileOverhead {
		t.Errorf("peak RSS after the restart %.0f MiB: over the budget", float64(hwm)/(1<<20))
	}
	if len(failures) > 0 {
		t.Errorf("/healthz failed %d times after the restart: %s", len(failures), strings.Join(failures[:min(5, len(failures))], "; "))
	}
	p.alive()
	for line := range strings.Lines(p.log.String()) {
		if strings.Contains(line, "panic") || strings.Contains(line, "goroutine ") {
			t.Errorf("server log: %s", line)
		}
	}
}

// firstLine returns the first line of s containing sub.
func firstLine(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// wsUpgradeRequest is the raw WebSocket upgrade request of document id
// for host, with an Origin header unless origin is "".
func wsUpgradeRequest(id, host, origin string) string {
	req := "GET /docs/" + id + "/ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: pmauthority.v1\r\n"
	if origin != "" {
		req += "Origin: " + origin + "\r\n"
	}
	return req + "\r\n"
}

// rawRequest sends raw over a new TCP connection to addr and returns the
// status code of the answer.
func rawRequest(t *testing.T, addr, raw string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", strings.SplitN(raw, "\r\n", 2)[0], err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHostileRequests sends the real binary cross-site and DNS-rebinding
// requests over HTTP and WebSocket, then deletes its write-ahead log: each
// is refused and nothing changes; no write is acknowledged once the log is
// gone, and after a SIGKILL every acknowledged step is there.
func TestHostileRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := hostileBinary(t)
	data := t.TempDir()
	p := startHostile(t, bin, data, nil)
	p.mustPost("d", 0, `[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}]`, "")
	steps := []byte(`{"version":1,"clientID":3,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"evil"}]}}]}`)
	port := p.addr[strings.LastIndexByte(p.addr, ':')+1:]
	wsUpgrade := func(host, origin string) string { return wsUpgradeRequest("d", host, origin) }
	for _, tc := range []struct {
		name   string
		status func() int
		want   int
	}{
		{"POST without Content-Type", func() int {
			s, _, _, err := p.do("POST", "/docs/d/events", "", steps, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, 415},
		{"POST text/plain", func() int {
			s, _, _, _ := p.do("POST", "/docs/d/events", "text/plain", steps, nil)
			return s
		}, 415},
		{"POST from another origin", func() int {
			s, _, _, _ := p.do("POST", "/docs/d/events", "application/json", steps, http.Header{"Origin": {"http://evil.example"}})
			return s
		}, 403},
		{"GET with a rebound Host", func() int {
			return rawRequest(t, p.addr, "GET /docs/d HTTP/1.1\r\nHost: evil.example:"+port+"\r\nConnection: close\r\n\r\n")
		}, 421},
		{"WebSocket with a rebound Host", func() int {
			return rawRequest(t, p.addr, wsUpgrade("evil.example:"+port, "http://evil.example:"+port))
		}, 421},
		{"WebSocket from another origin", func() int {
			return rawRequest(t, p.addr, wsUpgrade(p.addr, "http://evil.example"))
		}, 403},
		{"WebSocket of our own origin", func() int {
			return rawRequest(t, p.addr, wsUpgrade(p.addr, "http://"+p.addr))
		}, 101},
	} {
		if got := tc.status(); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if v := p.version("d"); v != 1 {
		t.Fatalf("after the refused requests the document is at version %d, want 1", v)
	}

	// The write-ahead log deleted under the running server: from then on
	// no write is acknowledged, and /healthz says so.
	p.mustPost("d", 1, `[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"y"}]}}]`, "")
	if err := os.Remove(filepath.Join(data, "pmauthority.db-wal")); err != nil {
		t.Fatal(err)
	}
	acked := 2
	for i := range 20 {
		s, body, _, err := p.do("POST", "/docs/d/events", "application/json",
			fmt.Appendf(nil, `{"version":%d,"clientID":3,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"z"}]}}]}`, acked), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s == 200 {
			acked++
			t.Errorf("write %d acknowledged after the write-ahead log was deleted", i)
		} else if s != 503 {
			t.Errorf("write %d after the WAL was deleted: %d %s, want 503", i, s, body)
		}
	}
	if s, _, _, _ := p.do("GET", "/healthz", "", nil, nil); s != 503 {
		t.Errorf("/healthz after the WAL was deleted: %d, want 503", s)
	}
	// The log comes through a pipe: it may lag the answers a little.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.log.String(), "write-ahead log"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the log does not say why writes are refused:\n%s", lastLines(p.log.String(), 10))
			break
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.stop()
	p = startHostile(t, bin, data, nil)
	if v := p.version("d"); v < int64(acked) {
		t.Errorf("after a SIGKILL the document is at version %d: %d acknowledged", v, acked)
	}
}

// memoryCgroup is a memory cgroup made for a test: v2 (memory.max) or v1
// (memory.limit_in_bytes).
type memoryCgroup struct {
	dir string
	v2  bool
}

// newMemoryCgroup makes a child of this process's memory cgroup limited
// to limit bytes, or returns why it cannot (not root, no memory
// controller, a read-only hierarchy).
func newMemoryCgroup(t *testing.T, limit int64) (*memoryCgroup, string) {
	if os.Geteuid() != 0 {
		return nil, "not root"
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err.Error()
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err.Error()
	}
	// mountpoint returns where the hierarchy of fstype (with option opt
	// for v1) is mounted, and the root it shows.
	mountpoint := func(fstype, opt string) (root, point string) {
		for line := range strings.Lines(string(mounts)) {
			pre, post, ok := strings.Cut(line, " - ")
			if !ok {
				continue
			}
			f, g := strings.Fields(pre), strings.Fields(post)
			if len(f) < 5 || len(g) < 3 || g[0] != fstype {
				continue
			}
			if opt != "" && !slices.Contains(strings.Split(g[2], ","), opt) {
				continue
			}
			return f[3], f[4]
		}
		return "", ""
	}
	var mc *memoryCgroup
	var limitFile string
	for line := range strings.Lines(string(self)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, point string
		v2 := parts[0] == "0" && parts[1] == ""
		switch {
		case v2:
			root, point = mountpoint("cgroup2", "")
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			root, point = mountpoint("cgroup", "memory")
		default:
			continue
		}
		if point == "" {
			continue
		}
		base := filepath.Join(point, strings.TrimPrefix(parts[2], root))
		if v2 {
			controllers, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
			if err != nil || !slices.Contains(strings.Fields(string(controllers)), "memory") {
				continue
			}
		}
		dir := filepath.Join(base, fmt.Sprintf("pmauthority-hostile-%d", os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Sprintf("cannot make a cgroup in %s: %v", base, err)
		}
		mc = &memoryCgroup{dir: dir, v2: v2}
		limitFile = "memory.limit_in_bytes"
		if v2 {
			limitFile = "memory.max"
		}
		break
	}
	if mc == nil {
		return nil, "no memory cgroup controller available to this process"
	}
	t.Cleanup(func() {
		for range 50 {
			if os.Remove(mc.dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the cgroup %s", mc.dir)
	})
	if err := os.WriteFile(filepath.Join(mc.dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		return nil, fmt.Sprintf("cannot set %s: %v", limitFile, err)
	}
	if mc.v2 {
		os.WriteFile(filepath.Join(mc.dir, "memory.swap.max"), []byte("0"), 0o644)
	}
	return mc, ""
}

// oomKills returns the cgroup's count of OOM kills.
func (mc *memoryCgroup) oomKills(t *testing.T) int {
	file := "memory.oom_control"
	if mc.v2 {
		file = "memory.events"
	}
	data, err := os.ReadFile(filepath.Join(mc.dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "oom_kill "); ok {
			k, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("%s: %q", file, line)
			}
			return k
		}
	}
	t.Fatalf("%s has no oom_kill line:\n%s", file, data)
	return 0
}

// TestHostileCgroup runs the server inside a 512 MiB memory cgroup with
// the default budget (which it takes from the cgroup) under both bombs: it
// is never OOM-killed and still serves. It skips where no cgroup can be
// made (not root, no memory controller).
func TestHostileCgroup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary under memory bombs")
	}
	const limit = 512 << 20
	mc, why := newMemoryCgroup(t, limit)
	if mc == nil {
		t.Skipf("no memory cgroup: %s", why)
	}
	bin := hostileBinary(t)
	wrap := []string{"/bin/sh", "-c", `echo $$ > "$0"/cgroup.procs && exec "$@"`, mc.dir}
	p := startHostile(t, bin, t.TempDir(), wrap, hostileFlags("")...)
	t.Logf("in the cgroup %s (limit 512 MiB): %s", mc.dir, firstLine(p.log.String(), "pmauthority serving"))
	bombs(t, p)
	p.alive()
	if n := mc.oomKills(t); n != 0 {
		t.Errorf("%d OOM kills in the cgroup", n)
	}
	if s, _, _, err := p.do("GET", "/healthz", "", nil, nil); err != nil || s != 200 {
		t.Errorf("/healthz after the bombs: %d %v", s, err)
	}
	p.stop()
}

// TestHostileLimits floods the real binary, run with low limits, from one
// client: WebSockets over --max-client-conns, messages over
// --max-ws-messages, submissions over --max-submissions, new documents
// over --max-creates and, from many clients (--trust-proxy), over
// --max-documents. Each is refused with its status (429 with
// Retry-After, 507) or close code (4029), and the server goes on serving.
func TestHostileLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := hostileBinary(t)
	p := startHostile(t, bin, t.TempDir(), nil, "--trust-proxy", "--max-client-conns", "3", "--max-ws-messages", "1",
		"--max-submissions", "1", "--max-creates", "3", "--max-documents", "6", "--max-client-documents", "6")
	ws := func(id string) string { return wsUpgradeRequest(id, p.addr, "") }
	dial := func(id string) (net.Conn, int, string) {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, ws(id))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, resp.StatusCode, resp.Header.Get("Retry-After")
	}

	// Connections: three WebSockets of one client are held, a fourth is
	// refused before the upgrade.
	p.mustPost("a", 0, `[]`, "")
	var held []net.Conn
	for range 3 {
		c, status, _ := dial("a")
		if status != 101 {
			t.Fatalf("WebSocket within --max-client-conns: %d", status)
		}
		held = append(held, c)
	}
	if _, status, retry := dial("a"); status != 429 || retry == "" {
		t.Errorf("a fourth WebSocket: %d (Retry-After %q), want 429 with Retry-After", status, retry)
	}
	for _, c := range held {
		c.Close()
	}

	// Messages: 10 pings at once on a connection allowed 1 per second
	// (2 in a burst) get error 429 and close 4029.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var conn *websocket.Conn
	waitFor(t, func() bool { // the closed connections give their places back
		c, resp, err := websocket.Dial(ctx, "ws://"+p.addr+"/docs/a/ws", &websocket.DialOptions{Subprotocols: []string{"pmauthority.v1"}})
		if err != nil {
			if resp != nil && resp.StatusCode == 429 {
				return false
			}
			t.Fatal(err)
		}
		conn = c
		return true
	})
	defer conn.CloseNow()
	for i := range 10 {
		conn.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"type":"ping","id":%d}`, i))
	}
	var sawError bool
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != 4029 {
				t.Errorf("flooding pings: closed with %v (%d), want 4029", err, code)
			}
			break
		}
		if bytes.Contains(msg, []byte(`"type":"error"`)) && bytes.Contains(msg, []byte(`"status":429`)) {
			sawError = true
		}
	}
	if !sawError {
		t.Error("flooding pings: no error 429 before the close")
	}

	// Submissions: 10 POSTs at once at 1 per second (2 in a burst): the
	// others are refused with 429 and Retry-After, and change nothing.
	var refused, accepted int
	v := p.version("a")
	for range 10 {
		s, body, h, err := p.do("POST", "/docs/a/events", "application/json",
			fmt.Appendf(nil, `{"version":%d,"clientID":9,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"s"}]}}]}`, v+int64(accepted)), nil)
		switch {
		case err != nil:
			t.Fatal(err)
		case s == 200:
			accepted++
		case s == 429 && h.Get("Retry-After") != "" && strings.Contains(string(body), "--max-submissions"):
			refused++
		default:
			t.Errorf("a submission: %d %s", s, body)
		}
	}
	if refused == 0 || p.version("a") != v+int64(accepted) {
		t.Errorf("10 submissions at once: %d accepted, %d refused; version %d, want %d", accepted, refused, p.version("a"), v+int64(accepted))
	}

	// Documents: this client has created "a"; two more, then 429.
	for i, want := range []int{200, 200, 429} {
		s, body, h, _ := p.do("GET", fmt.Sprintf("/docs/new-%d", i), "", nil, nil)
		if s != want || (s == 429 && (h.Get("Retry-After") == "" || !strings.Contains(string(body), "--max-creates"))) {
			t.Errorf("new document %d of one client: %d %s, want %d", i, s, body, want)
		}
	}
	// Three documents exist; other clients may create three more in all.
	for i, want := range []int{200, 200, 200, 507, 507} {
		s, body, _, _ := p.do("GET", fmt.Sprintf("/docs/other-%d", i), "", nil, http.Header{"X-Forwarded-For": {fmt.Sprintf("10.1.0.%d", i+1)}})
		if s != want || (s == 507 && !strings.Contains(string(body), "--max-documents")) {
			t.Errorf("document %d of another client: %d %s, want %d", i, s, body, want)
		}
	}
	if s, _, _, err := p.do("GET", "/docs/a", "", nil, nil); err != nil || s != 200 {
		t.Errorf("after the floods, GET /docs/a: %d %v", s, err)
	}
	p.alive()
}
