//go:build linux

package conformance

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// idleConns opens n connections to addr, each kept alive after one
// GET /healthz, with workers at a time; it returns the connections that
// were answered 200 and how many were not (within a few seconds).
func idleConns(addr string, n, workers int) (held []net.Conn, failed int) {
	var mu sync.Mutex
	parallel(n, workers, func(int) {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(3 * time.Second))
			_, err = fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			var resp *http.Response
			if err == nil {
				resp, err = http.ReadResponse(bufio.NewReader(c), nil)
			}
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			c.SetDeadline(time.Time{})
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed++
			if c != nil {
				c.Close()
			}
			return
		}
		held = append(held, c)
	})
	return held, failed
}

// TestHostileIdleConns: idle kept-alive connections cannot run the
// server out of file descriptors. The server runs with a limit of 256
// open files and the default connection limits; 400 clients each make a
// request and keep their connection open, idle. Then 10 new clients, on
// new connections, must each be answered: the server closed idle
// connections to make room (--max-http-conns, by default three quarters
// of the file limit, and --max-http-conns-per-address, a quarter of
// that). Before those limits the server ran out of descriptors
// ("accept4: too many open files") and the new clients got no answer.
func TestHostileIdleConns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	const files, idle, fresh = 256, 400, 10
	bin := hostileBinary(t)
	wrap := []string{"sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, files)}
	p := startHostile(t, bin, t.TempDir(), wrap, hostileFlags("")...)
	held, failed := idleConns(p.addr, idle, 32)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	// How many of the idle connections the server still holds: a read
	// of one it closed ends at once.
	open := 0
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil && strings.Contains(err.Error(), "timeout") {
			open++
		}
	}
	_, failedFresh := idleConns(p.addr, fresh, fresh)
	p.alive()
	t.Logf("RLIMIT_NOFILE %d: %d idle connections answered (%d not), %d still open; then %d of %d new clients answered",
		files, len(held), failed, open, fresh-failedFresh, fresh)
	if failedFresh > 0 || failed > 0 {
		t.Errorf("%d of %d clients with idle connections, then %d of %d new clients got no answer; the server's log:\n%s",
			failed, idle, failedFresh, fresh, firstLine(p.log.String(), "too many open files"))
	}
	if !strings.Contains(p.log.String(), "connections over their limit") {
		t.Errorf("no log line of the connections closed to make room:\n%s", lastLines(p.log.String(), 20))
	}
}
