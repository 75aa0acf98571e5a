package server

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/ratelimit"
)

// client returns the client that the limits and the collab user counts
// know a request by: the principal's id when the policy authenticated
// one, else the client's address (user), an IPv6 address by its /64
// prefix (the addresses of one host or network).
func (s *Server) client(r *http.Request, p Principal) string {
	if p.ID != "" {
		return p.ID
	}
	addr := s.user(r)
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Is6() && !ip.Is4In6() {
		pfx, _ := ip.Prefix(64)
		return pfx.String()
	}
	return addr
}

// conns counts the connections that the server holds for long, WebSockets
// and waiting long polls, in all and per client, against Limits.MaxConns
// and Limits.MaxClientConns.
type conns struct {
	mu        sync.Mutex
	total     int
	perClient map[string]int // only clients with connections
}

// retryAfterConns is how long a client over a connection limit is asked
// to wait.
const retryAfterConns = time.Second

// takeConn counts one more connection of client, or refuses it with a
// *collab.RateError naming the limit.
func (s *Server) takeConn(client string) error {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.total >= s.limits.MaxConns:
		return &collab.RateError{RetryAfter: retryAfterConns,
			Msg: "too many connections: the server holds its limit of " + strconv.Itoa(s.limits.MaxConns) + " (serve --max-conns)"}
	case c.perClient[client] >= s.limits.MaxClientConns:
		return &collab.RateError{RetryAfter: retryAfterConns,
			Msg: "too many connections from this client: over the limit of " + strconv.Itoa(s.limits.MaxClientConns) + " (serve --max-client-conns)"}
	}
	if c.perClient == nil {
		c.perClient = make(map[string]int)
	}
	c.total++
	c.perClient[client]++
	return nil
}

// dropConn ends a connection of client that takeConn counted.
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

// moveConn counts a connection of from as one of to (a WebSocket whose
// hello authenticated a principal), or refuses, leaving it from's, with a
// *collab.RateError when to holds Limits.MaxClientConns already.
func (s *Server) moveConn(from, to string) error {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perClient[to] >= s.limits.MaxClientConns {
		return &collab.RateError{RetryAfter: retryAfterConns,
			Msg: "too many connections of this principal: over the limit of " + strconv.Itoa(s.limits.MaxClientConns) + " (serve --max-client-conns)"}
	}
	if n := c.perClient[from] - 1; n > 0 {
		c.perClient[from] = n
	} else {
		delete(c.perClient, from)
	}
	c.perClient[to]++
	return nil
}

// takeSubmission counts a submission of client against
// Limits.MaxSubmissions, or refuses it with a *collab.RateError.
func (s *Server) takeSubmission(client string) error {
	ok, wait := s.submissions.Take(client, s.now())
	if ok {
		return nil
	}
	return &collab.RateError{RetryAfter: wait,
		Msg: "too many submissions: over " + strconv.Itoa(s.limits.MaxSubmissions) + " per second (serve --max-submissions)"}
}

// newSubmissionTable returns the table of Limits.MaxSubmissions.
func newSubmissionTable(l Limits) *ratelimit.Table {
	return ratelimit.NewTable(float64(l.MaxSubmissions), 2*float64(l.MaxSubmissions))
}

// retryAfter returns the Retry-After header value of a wait: whole
// seconds, at least 1.
func retryAfter(wait time.Duration) string {
	return strconv.FormatInt(max(1, int64((wait+time.Second-1)/time.Second)), 10)
}
