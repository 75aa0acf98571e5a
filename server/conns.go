package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// conns counts the connections that the server holds for long, WebSockets
// and waiting long polls, in all and per client, against Limits.MaxConns
// and Limits.MaxClientConns.
type conns struct {
	mu        sync.Mutex
	total     int
	perClient map[string]int
}

// retryAfterConns is the Retry-After of a 429 for a connection limit, in
// seconds.
const retryAfterConns = "1"

// take counts one more connection of client, or refuses it with a 429
// error naming the limit.
func (s *Server) takeConn(client string) error {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.total >= s.limits.MaxConns:
		return &httpError{http.StatusTooManyRequests,
			"too many connections: the server holds its limit of " + strconv.Itoa(s.limits.MaxConns) + " (serve --max-conns)"}
	case c.perClient[client] >= s.limits.MaxClientConns:
		return &httpError{http.StatusTooManyRequests,
			"too many connections from this client: over the limit of " + strconv.Itoa(s.limits.MaxClientConns) + " (serve --max-client-conns)"}
	}
	if c.perClient == nil {
		c.perClient = make(map[string]int)
	}
	c.total++
	c.perClient[client]++
	return nil
}

// dropConn ends a connection that takeConn counted.
func (s *Server) dropConn(client string) {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if n := c.perClient[client] - 1; n > 0 {
		c.perClient[client] = n
	} else {
		delete(c.perClient, client)
	}
}

// messageRate is a token bucket of a WebSocket connection's messages:
// Limits.MaxWSMessages per second, and twice as many in a burst. Only the
// connection's reader goroutine uses it.
type messageRate struct {
	tokens float64
	last   time.Time
}

// allow takes a token for a message read at now, or reports false when
// the connection sends faster than perSecond.
func (m *messageRate) allow(now time.Time, perSecond int) bool {
	burst := float64(2 * perSecond)
	if m.last.IsZero() {
		m.tokens = burst
	} else {
		m.tokens = min(burst, m.tokens+now.Sub(m.last).Seconds()*float64(perSecond))
	}
	m.last = now
	if m.tokens < 1 {
		return false
	}
	m.tokens--
	return true
}
