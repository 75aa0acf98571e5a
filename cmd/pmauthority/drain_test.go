package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply/reqtest"
)

// TestServeDrainDelay: after the signal, /readyz answers 503 during
// --drain-delay while the other routes still answer, then serve exits 0.
func TestServeDrainDelay(t *testing.T) {
	addr, stderr, stop := startServe(t, "--store", "memory", "--drain-delay", "3s", "--drain-timeout", "20s", "--log-format", "json")
	get := func(path string) int {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/readyz"); s != 200 {
		t.Fatalf("/readyz: %d", s)
	}
	code := make(chan int, 1)
	go func() { code <- stop() }()
	for get("/readyz") != 503 {
		time.Sleep(5 * time.Millisecond)
	}
	if s := get("/healthz"); s != 200 {
		t.Fatalf("/healthz while draining: %d, want 200", s)
	}
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, stderr)
	}
	if logs := stderr.String(); !strings.Contains(logs, `"msg":"draining: /readyz answers 503","drain_delay":3000000000`) {
		t.Errorf("log lacks the draining line:\n%s", logs)
	}
}

// TestServeDrainTimeout: a drain held up by a request that never finishes
// exits 1 after --drain-timeout.
func TestServeDrainTimeout(t *testing.T) {
	exited := make(chan int, 1)
	exitProcess = func(code int) { exited <- code }
	t.Cleanup(func() { exitProcess = os.Exit })
	addr, stderr, stop := startServe(t, "--store", "memory", "--drain-delay", "0", "--drain-timeout", "100ms", "--log-format", "json")
	// A request in flight, half its body sent: Serve waits for it. The
	// server's 100 Continue says that its handler reads the body.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/apply HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(reqtest.Seed))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("want 100 Continue, got %q (%v)", line, err)
	}
	half := len(reqtest.Seed) / 2
	io.WriteString(conn, reqtest.Seed[:half])
	code := make(chan int, 1)
	go func() { code <- stop() }()
	if c := <-exited; c != 1 {
		t.Fatalf("exit %d, want 1", c)
	}
	if logs := stderr.String(); !strings.Contains(logs, `"msg":"drain timeout: exiting before the drain finished"`) {
		t.Errorf("log lacks the drain timeout:\n%s", logs)
	}
	// The request finishes, and serve with it.
	io.WriteString(conn, reqtest.Seed[half:])
	conn.Close()
	<-code
}
