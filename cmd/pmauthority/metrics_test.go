package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/testutil"
)

// TestServeMetrics runs serve with --metrics-addr: the metrics listener
// answers /metrics (pmauthority's, Go's and the process's metrics, moved
// by the requests sent) and /debug/pprof/, which the main listener does
// not; the startup line has the URL to open.
func TestServeMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &testutil.LogBuffer{}
	addrc := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--sync", "normal",
			"--metrics-addr", "127.0.0.1:0", "--log-format", "json", "--log-requests"},
			stderr, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case c := <-code:
		t.Fatalf("serve exited with %d: %s", c, stderr)
	}
	// The serving line is logged by Server.Serve, just after ready.
	var metricsAddr, openURL string
	for deadline := time.Now().Add(10 * time.Second); openURL == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, l := range strings.Split(stderr.String(), "\n") {
			var m struct{ Msg, Addr, URL string }
			json.Unmarshal([]byte(l), &m)
			switch m.Msg {
			case "metrics serving":
				metricsAddr = m.Addr
			case "pmauthority serving":
				openURL = m.URL
			}
		}
	}
	if metricsAddr == "" || openURL != "http://"+addr+"/" {
		t.Fatalf("metrics at %q, URL to open %q (serving on %s):\n%s", metricsAddr, openURL, addr, stderr)
	}
	get := func(host, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+host+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(path, body string) int {
		t.Helper()
		resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post("/v1/apply", `{"doc":{"type":"doc","content":[{"type":"paragraph"}]},"steps":[]}`); s != 200 {
		t.Fatalf("apply: %d", s)
	}
	if s := post("/docs/notes/events", `{"version":0,"clientID":1,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Hi"}]}}]}`); s != 200 {
		t.Fatalf("submission: %d", s)
	}
	status, body := get(metricsAddr, "/metrics")
	if status != 200 {
		t.Fatalf("/metrics: %d %s", status, body)
	}
	for _, want := range []string{
		"\npmauthority_steps_accepted_total 1\n",
		"\npmauthority_documents_loaded 1\n",
		`pmauthority_submissions_total{result="accepted",transport="longpoll"} 1`,
		`pmauthority_http_requests_total{code="200",route="POST /v1/apply"} 1`,
		`pmauthority_http_request_seconds_count{route="POST /docs/{id}/events"} 1`,
		"\npmauthority_store_commit_seconds_count ",
		"\npmauthority_store_commit_batch_size_bucket{le=\"1\"} ",
		"\ngo_goroutines ",
		"\nprocess_cpu_seconds_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "notes") {
		t.Error("/metrics names the document")
	}
	if s, b := get(metricsAddr, "/debug/pprof/"); s != 200 || !strings.Contains(b, "goroutine") {
		t.Errorf("/debug/pprof/ on the metrics listener: %d", s)
	}
	if s, _ := get(metricsAddr, "/debug/pprof/heap?debug=1"); s != 200 {
		t.Errorf("/debug/pprof/heap on the metrics listener: %d", s)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/metrics"} {
		if s, _ := get(addr, path); s != 404 {
			t.Errorf("%s on the main listener: %d, want 404", path, s)
		}
	}
	// A loopback metrics listener answers loopback hosts only.
	req, _ := http.NewRequest("GET", "http://"+metricsAddr+"/metrics", nil)
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("/metrics for another host: %d, want 421", resp.StatusCode)
	}
	_, port, _ := net.SplitHostPort(metricsAddr)
	if s, _ := get("localhost:"+port, "/metrics"); s != 200 {
		t.Errorf("/metrics for localhost: %d", s)
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
	if _, err := net.DialTimeout("tcp", metricsAddr, time.Second); err == nil {
		t.Error("the metrics listener is still open after serve returned")
	}
}

// TestServeMetricsOff: without --metrics-addr nothing but the main
// listener serves, and it has no /metrics.
func TestServeMetricsOff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &testutil.LogBuffer{}
	addrc := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--store", "memory"}, stderr, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case c := <-code:
		t.Fatalf("serve exited with %d: %s", c, stderr)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("/metrics: %d, want 404", resp.StatusCode)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit code %d: %s", c, stderr)
	}
	if logs := stderr.String(); strings.Contains(logs, "metrics serving") || !strings.Contains(logs, "url=http://"+addr+"/") {
		t.Errorf("log:\n%s", logs)
	}
}

func TestServeMetricsFlags(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--metrics-addr", "9090"}, 2, `--metrics-addr "9090": want host:port (e.g. 127.0.0.1:9090)`},
		{[]string{"--metrics-addr", "127.0.0.1:8080"}, 2, `--metrics-addr "127.0.0.1:8080": must differ from --addr`},
		{[]string{"--addr", "127.0.0.1:0", "--store", "memory", "--metrics-addr", busy.Addr().String()}, 1, "pmauthority serve: --metrics-addr: listen tcp " + busy.Addr().String()},
		{[]string{"-h"}, 0, "-metrics-addr address"},
	} {
		stderr := &testutil.LogBuffer{}
		if code := serve(context.Background(), tc.args, stderr, nil); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %q: exit %d, want %d; stderr lacks %q:\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}
