package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply/reqtest"
)

// serving runs s on a loopback port until the returned stop is called;
// stop cancels Serve's context and returns what Serve returned.
func serving(t *testing.T, s *Server) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var stopped bool
	var result error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { stop() })
	return ln.Addr().String(), stop
}

// TestServeGraceful starts a server, answers a request, then stops it
// while a request is in flight: the request finishes, Serve returns nil
// and the port is closed.
func TestServeGraceful(t *testing.T) {
	s, logs := newServer(t, Config{})
	addr, stop := serving(t, s)

	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(reqtest.Seed))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != reqtest.SeedAnswer {
		t.Fatalf("%s", body)
	}

	// A request in flight: its header and half its body are sent.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	half := len(reqtest.Seed) / 2
	fmt.Fprintf(conn, "POST /v1/apply HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(reqtest.Seed), reqtest.Seed[:half])
	waitFor(t, func() bool { return s.inFlight() == 1 })

	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	waitFor(t, func() bool { return strings.Contains(logs.String(), "shutting down") })
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned %v with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatal("new connections are accepted while shutting down")
	}
	io.WriteString(conn, reqtest.Seed[half:])
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != reqtest.SeedAnswer {
		t.Fatalf("in-flight request: %s %s", resp.Status, body)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !strings.Contains(logs.String(), "msg=stopped") {
		t.Fatalf("log: %s", logs)
	}
}

// TestServeShutdownTimeout: a request that does not finish is cut off
// after Timeouts.Shutdown, and Serve says so.
func TestServeShutdownTimeout(t *testing.T) {
	s, _ := newServer(t, Config{Timeouts: Timeouts{Shutdown: 100 * time.Millisecond}})
	addr, stop := serving(t, s)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{")
	waitFor(t, func() bool { return s.inFlight() == 1 })
	start := time.Now()
	err = stop()
	if err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Fatalf("Serve returned %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}

// TestSlowClients: a client that sends its header or body too slowly, or
// stays idle, is disconnected (slowloris).
func TestSlowClients(t *testing.T) {
	s, _ := newServer(t, Config{Timeouts: Timeouts{
		ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Idle: 300 * time.Millisecond,
	}})
	addr, _ := serving(t, s)
	for _, tc := range []struct {
		name, send string
	}{
		{"header never ends", "POST / HTTP/1.1\r\nHost: localhost\r\n"},
		{"body never ends", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"},
		{"idle", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, tc.send)
			start := time.Now()
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			io.Copy(io.Discard, conn) // until the server closes it
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("connection still open after %v", d)
			}
		})
	}
}

// waitFor waits until cond holds, for up to 5 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}
