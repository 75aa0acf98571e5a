package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pmauthority/pmauthority/server"
)

// nginxConf is the repository's nginx configuration (README, "In
// production").
const nginxConf = "../../examples/nginx/pmauthority.conf"

// needNginx returns the path of nginx, skipping the test without it
// unless PMA_REQUIRE_NGINX=1 (scripts/test sets it once it has installed
// Debian's nginx), which makes that a failure.
func needNginx(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr == nil {
			return "/usr/sbin/nginx"
		}
		if os.Getenv("PMA_REQUIRE_NGINX") == "1" {
			t.Fatalf("nginx missing and PMA_REQUIRE_NGINX=1 (Debian: apt-get install nginx)")
		}
		t.Skip("nginx missing (Debian: apt-get install nginx); set PMA_REQUIRE_NGINX=1 to fail instead")
	}
	return path
}

// TestNginxConfTimeouts checks that the nginx configuration waits longer
// than a long poll (serve --poll-timeout's default) and lets the bodies
// the server takes (serve --max-body's default) through.
func TestNginxConfTimeouts(t *testing.T) {
	conf, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}
	for _, directive := range []string{"proxy_read_timeout", "proxy_send_timeout"} {
		m := regexp.MustCompile(`(?m)^\s*` + directive + `\s+(\d+)s;`).FindSubmatch(conf)
		if m == nil {
			t.Errorf("%s: no %s N s;", nginxConf, directive)
			continue
		}
		if d, _ := time.ParseDuration(string(m[1]) + "s"); d <= server.DefaultPollTimeout {
			t.Errorf("%s: %s %v, not longer than --poll-timeout %v", nginxConf, directive, d, server.DefaultPollTimeout)
		}
	}
	m := regexp.MustCompile(`(?m)^\s*client_max_body_size\s+(\d+)m;`).FindSubmatch(conf)
	if m == nil {
		t.Fatalf("%s: no client_max_body_size Nm;", nginxConf)
	}
	var mib int64
	fmt.Sscan(string(m[1]), &mib)
	if mib<<20 < server.DefaultMaxBodyBytes {
		t.Errorf("%s: client_max_body_size %dm, below --max-body %d", nginxConf, mib, server.DefaultMaxBodyBytes)
	}
}

// TestNginx runs the built binary behind Debian's nginx with
// examples/nginx/pmauthority.conf (its upstream and listen address
// changed to free ports, nothing else), on a non-default port, with
// --allowed-host and --trusted-proxies 127.0.0.1/32 as the README's
// production example: nginx -t accepts the file; the probes answer when
// addressed by IP, anything else by IP is 421; a client's own
// X-Forwarded-For does not make it another user, its address does; a
// long poll is answered with the steps that a WebSocket edit through
// nginx (hello, welcome, steps, ack, with the browser's Origin) makes,
// and with {} after --poll-timeout. nginx runs in the foreground in a
// temporary prefix (its own pid, logs and temp paths) on 127.0.0.1, and
// is stopped at the end.
func TestNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs nginx (-short)")
	}
	nginx := needNginx(t)
	conf, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(t.TempDir(), "pmauthority")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	backend := startBinary(t, exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "json",
		"--drain-delay", "0", "--poll-timeout", "1s",
		"--allowed-host", "docs.example.com", "--trusted-proxies", "127.0.0.1/32"))
	front := startNginx(t, nginx, conf, backend)
	_, port, _ := net.SplitHostPort(front)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// from returns a client whose connections to nginx come from the
	// loopback address ip, whatever the URL's host.
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "tcp", front)
			},
		}}
	}
	site0 := "http://docs.example.com:" + port
	get := func(c *http.Client, url string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// The probes by IP, as kubelet and load balancers send them; the
	// Host check holds for the rest.
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(http.DefaultClient, "http://"+front+path); code != 200 {
			t.Errorf("GET %s by IP through nginx: %d %s, want 200", path, code, body)
		}
	}
	if code, body := get(http.DefaultClient, "http://"+front+"/docs"); code != http.StatusMisdirectedRequest {
		t.Errorf("GET /docs by IP through nginx: %d %s, want 421", code, body)
	}

	// Users by the address nginx saw, not by what the client says.
	users := func(ip, forwarded string) float64 {
		t.Helper()
		code, body := get(from(ip), site0+"/docs/nginx", "X-Forwarded-For", forwarded)
		var st struct{ Users float64 }
		if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("GET /docs/nginx from %s: %d %s", ip, code, body)
		}
		return st.Users
	}
	if n := users("127.0.0.2", "198.51.100.1"); n != 1 {
		t.Errorf("users %v after the first client, want 1", n)
	}
	if n := users("127.0.0.2", "198.51.100.2"); n != 1 {
		t.Errorf("users %v after the first client again with another X-Forwarded-For, want 1 (the entry nginx appended counts)", n)
	}
	if n := users("127.0.0.3", "198.51.100.1"); n != 2 {
		t.Errorf("users %v after a second client address, want 2", n)
	}

	// A long poll waiting after version 0, answered by the WebSocket
	// edit (or before, with no steps, by the change of the user count:
	// then it polls again).
	polled := make(chan string, 1)
	go func() {
		for range 10 {
			req, _ := http.NewRequestWithContext(ctx, "GET", site0+"/docs/nginx/events?version=0&commentVersion=0", nil)
			resp, err := from("127.0.0.2").Do(req)
			if err != nil {
				polled <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"steps":[]`) {
				polled <- fmt.Sprint(resp.StatusCode, " ", string(b))
				return
			}
		}
		polled <- "10 answers without steps"
	}()

	ws, resp, err := websocket.Dial(ctx, "ws://docs.example.com:"+port+"/docs/nginx/ws", &websocket.DialOptions{
		HTTPClient: from("127.0.0.4"),
		HTTPHeader: http.Header{"Origin": {site0}},
	})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("WebSocket through nginx: %v (status %d)", err, status)
	}
	defer ws.CloseNow()
	send := func(msg string) {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// next returns the next message that is neither presence nor the
	// push of a user count alone (no steps, no comment events).
	next := func() map[string]any {
		t.Helper()
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			steps, _ := m["steps"].([]any)
			comment, _ := m["comment"].([]any)
			if m["type"] != "presence" && !(m["type"] == "steps" && len(steps) == 0 && len(comment) == 0) {
				return m
			}
		}
	}
	send(`{"type":"hello","version":0,"clientID":7,"name":"through nginx"}`)
	if m := next(); m["type"] != "welcome" || m["version"] != 0.0 {
		t.Fatalf("after hello: %v, want a welcome at version 0", m)
	}
	send(`{"type":"steps","id":1,"version":0,"clientID":7,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"proxied"}]}}]}`)
	if m := next(); m["type"] != "steps" || m["version"] != 1.0 {
		t.Fatalf("after steps: %v, want the steps pushed at version 1", m)
	}
	if m := next(); m["type"] != "ack" || m["id"] != 1.0 || m["version"] != 1.0 {
		t.Fatalf("after the push: %v, want the ack of id 1 at version 1", m)
	}
	if got := <-polled; !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"version":1`) || !strings.Contains(got, "proxied") {
		t.Errorf("long poll through nginx: %s, want 200 with the step of version 1", got)
	}
	// A long poll with nothing new gets {} after --poll-timeout.
	if code, body := get(from("127.0.0.2"), site0+"/docs/nginx/events?version=1&commentVersion=0"); code != 200 || body != "{}" {
		t.Errorf("idle long poll through nginx: %d %s, want 200 {}", code, body)
	}
	ws.Close(websocket.StatusNormalClosure, "")
}

// freePort returns a port of 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startBinary starts cmd (a serve with --addr 127.0.0.1:0 and --log-format
// json), returns the address it serves on, and stops it (SIGTERM) when
// the test ends.
func startBinary(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	log := &serveLog{addr: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("pmauthority:\n%s", log)
		}
	})
	select {
	case addr := <-log.addr:
		return addr
	case <-exited:
		t.Fatalf("serve exited: %s", log)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start: %s", log)
	}
	return ""
}

// startNginx runs nginx in the foreground with the site configuration
// conf (the repository's file), its upstream changed to backend and its
// listen address to a free port of 127.0.0.1, nothing else, in a
// temporary prefix (its own pid, logs and temp paths); it returns the
// address nginx listens on once nginx -t has accepted the file, and stops
// nginx when the test ends.
func startNginx(t *testing.T, nginx string, conf []byte, backend string) string {
	t.Helper()
	port := freePort(t)
	front := "127.0.0.1:" + port
	for old, repl := range map[string]string{
		"server 127.0.0.1:8080;": "server " + backend + ";",
		"listen 80;":             "listen " + front + ";",
	} {
		if !strings.Contains(string(conf), old) {
			t.Fatalf("%s has no %q (the test puts its own address there)", nginxConf, old)
		}
		conf = []byte(strings.Replace(string(conf), old, repl, 1))
	}
	prefix := t.TempDir()
	// Workers that are not root (nginx started as root) read the prefix.
	if err := os.Chmod(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(prefix, "pmauthority.conf")
	if err := os.WriteFile(site, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(prefix, "nginx.conf")
	var temps strings.Builder
	for _, kind := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&temps, "    %s_temp_path %s;\n", kind, filepath.Join(prefix, kind))
	}
	err := os.WriteFile(main, []byte(fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 64; }
http {
    access_log %[1]s/access.log;
%[2]s    include %[3]s;
}
`, prefix, temps.String(), site)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(nginx, "-t", "-p", prefix, "-c", main).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
	ngx := exec.Command(nginx, "-p", prefix, "-c", main)
	ngxOut := &strings.Builder{}
	ngx.Stdout, ngx.Stderr = ngxOut, ngxOut
	if err := ngx.Start(); err != nil {
		t.Fatal(err)
	}
	ngxDone := make(chan struct{})
	go func() { ngx.Wait(); close(ngxDone) }()
	t.Cleanup(func() {
		ngx.Process.Signal(syscall.SIGTERM)
		select {
		case <-ngxDone:
		case <-time.After(10 * time.Second):
			ngx.Process.Kill()
			<-ngxDone
		}
		if t.Failed() {
			errs, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Logf("nginx: %s\nerror.log:\n%s", ngxOut, errs)
		}
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", front)
		if err == nil {
			c.Close()
			return front
		}
		select {
		case <-ngxDone:
			t.Fatalf("nginx exited: %s", ngxOut)
		case <-time.After(50 * time.Millisecond):
		}
		if i == 200 {
			t.Fatalf("nginx does not listen on %s: %v", front, err)
		}
	}
}
