package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/internal/testutil"
)

// TestServe runs `pmauthority serve` on a free port with a --schema, sends
// requests, and stops it as SIGTERM would (its context ends).
func TestServe(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "lines.json")
	if err := os.WriteFile(spec, []byte(`{"nodes":{"doc":{"content":"line*"},"line":{"content":"text*"},"text":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &testutil.LogBuffer{}
	addrc := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--default-schema", "text", "--schema", "lines=" + spec,
			"--max-body", "1KiB", "--log-requests", "--log-slow", "0", "--log-format", "json",
			"--store", "memory", "--drain-delay", "0"}, stderr, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case c := <-code:
		t.Fatalf("serve exited with %d: %s", c, stderr)
	}
	post := func(body string) (int, string) {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := post(reqtest.Seed); status != 200 || body != reqtest.SeedAnswer {
		t.Fatalf("seed: %d %s", status, body)
	}
	if status, body := post(`{"schema":"lines","doc":{"type":"doc","content":[{"type":"line"}]}}`); status != 200 || body != `{"doc":{"type":"doc","content":[{"type":"line"}]}}` {
		t.Fatalf("--schema: %d %s", status, body)
	}
	if status, _ := post(`{"doc":{"type":"doc"},"x":"` + strings.Repeat("x", 1024) + `"}`); status != 413 {
		t.Fatalf("--max-body: %d", status)
	}
	resp, err := http.Get("http://" + addr + "/v1/schemas")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"default":"text","schemas":["basic","lines","suggest","text"]}` {
		t.Fatalf("/v1/schemas: %s", b)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d: %s", c, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	logs := stderr.String()
	for _, want := range []string{`"msg":"pmauthority serving"`, `"max_body_bytes":"1 KiB"`, `"schemas":["basic","lines","suggest","text"]`,
		`"msg":"request","method":"POST","path":"/","status":200,"bytes":65`, `"status":413`, `"msg":"stopped"`,
		`"msg":"store opened","store":"memory"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}

func TestServeFlags(t *testing.T) {
	t.Setenv("PMA_POSTGRES_URL", "")
	dir := t.TempDir()
	bad, good := filepath.Join(dir, "bad.json"), filepath.Join(dir, "good.json")
	os.WriteFile(bad, []byte(`{"nodes":{"doc":{"content":"nope+"}}}`), 0o644)
	os.WriteFile(good, []byte(`{"nodes":{"doc":{"content":"text*"},"text":{}}}`), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--default-schema", "nope"}, 2, `default schema "nope" is not one of [basic suggest text]`},
		{[]string{"--schema", "x"}, 2, "want NAME=FILE"},
		{[]string{"--schema", "x=/does/not/exist"}, 2, "no such file"},
		{[]string{"--schema", "x=" + bad}, 2, "bad.json"},
		{[]string{"--schema", "basic=" + good}, 2, `"basic" is taken by a built-in`},
		{[]string{"--schema", "x=" + good, "--schema", "x=" + good}, 2, `"x" given twice`},
		{[]string{"--max-body", "8XB"}, 2, "want a size in bytes"},
		{[]string{"--max-steps", "0"}, 2, "--max-steps must be positive"},
		{[]string{"--max-comment-bytes", "0"}, 2, "--max-comment-bytes must be positive"},
		{[]string{"--max-client-conns", "0"}, 2, "--max-client-conns must be positive"},
		{[]string{"--max-ws-messages", "-1"}, 2, "--max-ws-messages must be positive"},
		{[]string{"--max-submissions", "0"}, 2, "--max-submissions must be positive"},
		{[]string{"--max-presence-data", "0"}, 2, "--max-presence-data must be positive"},
		{[]string{"--max-presence-data", "5KiB"}, 2, "--max-presence-data is 5120 bytes: at most 4096"},
		{[]string{"-h"}, 0, "-max-presence-data size"},
		{[]string{"--max-documents", "0"}, 2, "--max-documents must be positive"},
		{[]string{"--max-creates", "0"}, 2, "--max-creates must be positive"},
		{[]string{"--log-format", "xml"}, 2, "--log-format must be text or json"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--store", "nope"}, 2, `--store must be sqlite, memory or postgres, not "nope"`},
		{[]string{"--store", "postgres"}, 2, "--store postgres needs the database's URL: --postgres-url or the environment variable PMA_POSTGRES_URL"},
		{[]string{"--postgres-pool", "0"}, 2, "--postgres-pool must be positive"},
		{[]string{"--postgres-statement-timeout", "-1s"}, 2, "--postgres-statement-timeout must not be negative"},
		{[]string{"--addr", "127.0.0.1:0", "--store", "postgres", "--postgres-url", "postgres://u:s3cretpw@h:x/db"}, 1, "--store postgres: postgres: cannot parse `postgres://u:xxxxx@h:x/db`"},
		{[]string{"--addr", "127.0.0.1:0", "--store", "postgres", "--postgres-url", "postgres://u:s3cretpw@/db?host=/nonexistent"}, 1, `--store postgres: postgres: cannot reach database "db" on /nonexistent port 5432 as "u"`},
		{[]string{"-h"}, 0, "--postgres-url"},
		{[]string{"--sync", "off"}, 2, `--sync must be full or normal, not "off"`},
		{[]string{"--history", "0"}, 2, "--history must be positive"},
		{[]string{"--snapshot-every", "-1"}, 2, "--snapshot-every must be positive"},
		{[]string{"--poll-timeout", "0s"}, 2, "--poll-timeout must be positive"},
		{[]string{"--idle-unload", "-1s"}, 2, "--idle-unload must not be negative"},
		{[]string{"--drain-delay", "-1s"}, 2, "--drain-delay must not be negative"},
		{[]string{"--drain-delay", "30s"}, 2, "--drain-timeout (30s) must be longer than --drain-delay (30s)"},
		{[]string{"--drain-timeout", "0s", "--drain-delay", "0s"}, 2, "--drain-timeout (0s) must be longer"},
		{[]string{"--addr", "127.0.0.1:0", "--data", good}, 1, "good.json"}, // a file, not a directory
		{[]string{"--addr", "256.0.0.1:bad", "--insecure-no-auth"}, 1, "pmauthority serve:"},
		{[]string{"-h"}, 0, "--data"},
		{[]string{"-h"}, 0, "GET  /docs/{id}/events"},
		{[]string{"-h"}, 0, "--poll-timeout"},
		{[]string{"--allow-origin", "https://app.example.com"}, 2, "want a host pattern"},
		{[]string{"--allow-origin", "["}, 2, "syntax error in pattern"},
		{[]string{"-h"}, 0, "--allow-origin"},
		{[]string{"-h"}, 0, "--strict"},
		{[]string{"--max-http-conns", "-1"}, 2, "--max-http-conns and --max-http-conns-per-address must not be negative"},
		{[]string{"--max-http-conns-per-address", "-1"}, 2, "must not be negative"},
		{[]string{"--trusted-proxies", "10.0.0.0/8,nope"}, 2, `want CIDR prefixes or addresses such as 10.0.0.0/8,192.0.2.7, not "nope"`},
		{[]string{"-h"}, 0, "-max-http-conns-per-address"},
	} {
		stderr := &testutil.LogBuffer{}
		if code := serve(context.Background(), tc.args, stderr, nil); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %q: exit %d, want %d; stderr lacks %q:\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
		if strings.Contains(stderr.String(), "s3cretpw") {
			t.Errorf("serve %q: stderr shows the password:\n%s", tc.args, stderr)
		}
	}
}

// TestServeMaxCommentBytes: --max-comment-bytes reaches the authority's
// configuration, 1 MiB by default.
func TestServeMaxCommentBytes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 1 << 20}, {[]string{"--max-comment-bytes", "2KiB"}, 2048}} {
		f, err := parseServeFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.configs(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.collab.MaxCommentBytes != tc.want {
			t.Errorf("serve %q: MaxCommentBytes %d, want %d", tc.args, c.collab.MaxCommentBytes, tc.want)
		}
	}
}

// TestServeConnFlags: --max-http-conns, --max-http-conns-per-address and
// --trusted-proxies reach the server's configuration; 0 leaves the
// defaults to it, and --trusted-proxies implies --trust-proxy.
func TestServeConnFlags(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		conns, perAddr int
		trust          bool
		proxies        string
	}{
		{nil, 0, 0, false, "[]"},
		{[]string{"--max-http-conns", "500", "--max-http-conns-per-address", "50"}, 500, 50, false, "[]"},
		{[]string{"--trust-proxy"}, 0, 0, true, "[]"},
		{[]string{"--trusted-proxies", "10.1.2.3/8, 192.0.2.7", "--trusted-proxies", "2001:db8::/32,::ffff:198.51.100.0/120"}, 0, 0, true,
			"[10.0.0.0/8 192.0.2.7/32 2001:db8::/32 198.51.100.0/24]"},
	} {
		f, err := parseServeFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.configs(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		sc := c.server
		if sc.Limits.MaxHTTPConns != tc.conns || sc.Limits.MaxHTTPConnsPerAddress != tc.perAddr || sc.TrustProxy != tc.trust ||
			fmt.Sprint(sc.TrustedProxies) != tc.proxies {
			t.Errorf("serve %q: MaxHTTPConns %d, per address %d, TrustProxy %v, TrustedProxies %v", tc.args,
				sc.Limits.MaxHTTPConns, sc.Limits.MaxHTTPConnsPerAddress, sc.TrustProxy, sc.TrustedProxies)
		}
	}
}

func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"8388608": 8 << 20, "8MiB": 8 << 20, "64KiB": 64 << 10, "1GiB": 1 << 30, "100B": 100, "0": 0} {
		var s sizeFlag
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, s, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1.5MiB", "8 MB", "9999999999GiB"} {
		var s sizeFlag
		if err := s.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, s)
		}
	}
	for n, want := range map[int64]string{8 << 20: "8MiB", 1000: "1000", 2048: "2KiB", 0: "0"} {
		s := sizeFlag(n)
		if got := s.String(); got != want {
			t.Errorf("String(%d) = %q, want %q", n, got, want)
		}
	}
}

// startServe runs serve with args on a free port; stop ends it as SIGTERM
// would and returns its exit code.
func startServe(t *testing.T, args ...string) (addr string, stderr *testutil.LogBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &testutil.LogBuffer{}
	addrc := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- serve(ctx, append([]string{"--addr", "127.0.0.1:0", "--drain-delay", "0"}, args...), stderr, func(addr string) { addrc <- addr })
	}()
	select {
	case addr = <-addrc:
	case c := <-code:
		cancel()
		t.Fatalf("serve exited with %d: %s", c, stderr)
	}
	stopped, result := false, 0
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case result = <-code:
			case <-time.After(10 * time.Second):
				t.Fatal("serve did not stop")
			}
		}
		return result
	}
	t.Cleanup(func() { stop() })
	return addr, stderr, stop
}

// TestServeCollab runs the collab API on a SQLite store: steps are
// accepted and polled, --history and --poll-timeout take effect, and a
// restart on the same --data finds the document as it was.
func TestServeCollab(t *testing.T) {
	data := t.TempDir()
	args := []string{"--data", data, "--sync", "normal", "--history", "5", "--snapshot-every", "2",
		"--idle-unload", "0", "--poll-timeout", "200ms"}
	addr, stderr, stop := startServe(t, args...)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		return httpDo(t, addr, method, path, body)
	}
	expect := func(method, path, body string, status int, want string) {
		t.Helper()
		if s, got := do(method, path, body); s != status || got != want {
			t.Fatalf("%s %s: %d %s\nwant %d %s", method, path, s, got, status, want)
		}
	}
	step := func(text string) string {
		return `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"` + text + `"}]}}`
	}
	expect("GET", "/docs", "", 200, `[]`)
	expect("GET", "/docs/x", "", 200, `{"doc":{"type":"doc","content":[{"type":"paragraph"}]},"users":1,"version":0,"comments":[],"commentVersion":0}`)
	expect("POST", "/docs/x/events", `{"version":0,"steps":[`+step("a")+`],"clientID":4294967295}`, 200, `{"version":1,"commentVersion":0}`)
	events := `{"version":1,"commentVersion":0,"steps":[` + step("a") + `],"clientIDs":[4294967295],"comment":[],"users":1}`
	expect("GET", "/docs/x/events?version=0&commentVersion=0", "", 200, events)
	start := time.Now()
	expect("GET", "/docs/x/events?version=1&commentVersion=0", "", 200, `{}`)
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Fatalf("a poll with nothing new answered after %v (--poll-timeout 200ms)", d)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "pmauthority.db")); err != nil {
		t.Fatal(err)
	}

	addr, stderr, stop = startServe(t, args...)
	// After the restart the stored document is listed with its version
	// and the time of its last change.
	if s, got := do("GET", "/docs", ""); s != 200 || !strings.HasPrefix(got, `[{"id":"x","users":0,"version":1,"updated":"`) {
		t.Fatalf("GET /docs after the restart: %d %s", s, got)
	}
	expect("GET", "/docs/x/events?version=0&commentVersion=0", "", 200, events)
	for v := 1; v < 7; v++ {
		expect("POST", "/docs/x/events", `{"version":`+strconv.Itoa(v)+`,"steps":[`+step("b")+`],"clientID":1}`, 200,
			`{"version":`+strconv.Itoa(v+1)+`,"commentVersion":0}`)
	}
	expect("GET", "/docs/x/events?version=1&commentVersion=0", "", 410, `{"error":{"message":"History no longer available"}}`)
	expect("GET", "/docs/x/events?version=8&commentVersion=0", "", 400, `{"error":{"message":"Invalid version 8"}}`)
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`msg="store opened" store=sqlite path=` + filepath.Join(data, "pmauthority.db") + ` sync=normal`, "msg=stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, stderr)
		}
	}
}

// TestServeWeb checks that the demo pages are served by default, next to
// the apply endpoint on /, and that --web=false turns them off.
func TestServeWeb(t *testing.T) {
	get := func(addr, path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type")
	}
	addr, _, _ := startServe(t, "--store", "memory", "--default-schema", "text")
	for _, path := range []string{"/", "/edit/notes"} {
		if status, ctype := get(addr, path); status != 200 || ctype != "text/html; charset=utf-8" {
			t.Errorf("GET %s: %d %s, want the page", path, status, ctype)
		}
	}
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(reqtest.Seed))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != reqtest.SeedAnswer {
		t.Errorf("POST / with the pages on: %d %s", resp.StatusCode, b)
	}

	addr, _, _ = startServe(t, "--store", "memory", "--web=false")
	if status, _ := get(addr, "/"); status != http.StatusMethodNotAllowed {
		t.Errorf("GET / with --web=false: %d, want 405", status)
	}
	if status, _ := get(addr, "/edit/notes"); status != http.StatusNotFound {
		t.Errorf("GET /edit/notes with --web=false: %d, want 404", status)
	}
}

// TestServeHelp: `pmauthority serve -h` prints the usage and the flags
// as testdata/serve-help.txt has them, and exits 0.
func TestServeHelp(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "serve-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"-h", "--help"} {
		var stderr testutil.LogBuffer
		if code := serve(context.Background(), []string{arg}, &stderr, nil); code != 0 {
			t.Errorf("serve %s: exit %d", arg, code)
		}
		if got := stderr.String(); got != string(want) {
			t.Errorf("serve %s printed\n%s\nwant testdata/serve-help.txt:\n%s", arg, got, want)
		}
	}
}

// TestServeAllowedHost: on its loopback --addr the server answers only
// loopback names by default (DNS rebinding), and with --allowed-host only
// those hosts; others get 421, except on the probes, which answer any
// Host.
func TestServeAllowedHost(t *testing.T) {
	status := func(addr, host string) int {
		t.Helper()
		if got := hostStatus(t, addr, "/healthz", host); got != 200 {
			t.Errorf("GET /healthz with Host %s: %d, want 200", host, got)
		}
		return hostStatus(t, addr, "/docs", host)
	}
	for _, tc := range []struct {
		args  []string
		hosts map[string]int
	}{
		{nil, map[string]int{"localhost": 200, "127.0.0.1": 200, "evil.example": 421}},
		{[]string{"--allowed-host", "pma.example.com"}, map[string]int{"pma.example.com": 200, "localhost": 421, "evil.example": 421}},
	} {
		addr, _, stop := startServe(t, append([]string{"--store", "memory"}, tc.args...)...)
		for host, want := range tc.hosts {
			if got := status(addr, host); got != want {
				t.Errorf("%v: Host %s: %d, want %d", tc.args, host, got, want)
			}
		}
		if code := stop(); code != 0 {
			t.Fatalf("serve exited with %d", code)
		}
	}
}

// hostStatus returns the status of GET path on addr with the Host host.
func hostStatus(t *testing.T, addr, path, host string) int {
	t.Helper()
	r, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	r.Host = host
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeUnsatisfiableSchema: `serve --schema NAME=FILE` with a schema
// no document can satisfy exits 2 naming the node types (it started, and
// answered 500 to each document creation); `apply --schema FILE` refuses
// it too.
func TestServeUnsatisfiableSchema(t *testing.T) {
	t.Setenv("PMA_POSTGRES_URL", "")
	loop := filepath.Join(t.TempDir(), "loop.json")
	os.WriteFile(loop, []byte(`{"nodes": {"doc": {"content": "a"}, "a": {"content": "a"}, "text": {}}}`), 0o644)
	const want = `Unsatisfiable schema: no finite document can hold node types doc (content "a"), a (content "a")`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &testutil.LogBuffer{}
	started := false
	code := serve(ctx, []string{"--schema", "loop=" + loop, "--addr", "127.0.0.1:0", "--store", "memory", "--insecure-no-auth"}, stderr,
		func(string) { started = true; cancel() })
	if code != 2 || started || !strings.Contains(stderr.String(), "loop.json: "+want) {
		t.Errorf("serve: exit %d (started %v), want 2; stderr lacks %q:\n%s", code, started, want, stderr)
	}
	var out, errs strings.Builder
	if code := runApply([]string{"--schema", loop}, strings.NewReader(reqtest.Seed), &out, &errs); code != 2 || !strings.Contains(errs.String(), want) {
		t.Errorf("apply: exit %d, want 2; stdout %s; stderr lacks %q:\n%s", code, &out, want, &errs)
	}
}
