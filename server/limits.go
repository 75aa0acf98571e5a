package server

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/connlimit"
	"github.com/pmauthority/pmauthority/internal/defaults"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/internal/ratelimit"
	"github.com/pmauthority/pmauthority/model"
)

// Limits bound the transports: the requests, connections and messages of
// the server's clients. The documents' own limits (steps, document size,
// memory, storage) are the authority's (collab.Limits), and the apply
// endpoint's Config.ApplyLimits. Zero fields take the defaults
// (WithDefaults). Every limit answers with an error naming it and changes
// nothing: MaxBodyBytes with 413 (a WebSocket message: close 1009),
// MaxDepth with 400, MaxHeaderBytes with 431 (answered by net/http), the
// connection and rate limits with 429 and Retry-After.
//
// A client is the principal when the policy authenticated one, else the
// client's address (see Config.TrustProxy), an IPv6 address by its /64.
type Limits struct {
	// MaxBodyBytes is the largest request body, and WebSocket message, in
	// bytes.
	MaxBodyBytes int64
	// MaxDepth is the deepest nesting of arrays and objects in a request
	// or WebSocket message.
	MaxDepth int
	// MaxHeaderBytes is the largest request header, in bytes.
	MaxHeaderBytes int
	// MaxBodyMemory bounds the bytes of request bodies that the requests
	// in flight read or hold, all together: a request of the apply
	// endpoint or the collab API reserves its Content-Length
	// (MaxBodyBytes when it has none, until its body is read) before
	// reading its body, and waits briefly when the budget is full; then
	// it is answered 503 with Retry-After. Config.ApplyWorkers bounds the
	// CPU, this the memory of the requests waiting for a worker.
	MaxBodyMemory int64

	// MaxConns is the most WebSocket connections and waiting long polls
	// the server holds at once, from all clients.
	MaxConns int
	// MaxClientConns is the most of them one client holds at once.
	MaxClientConns int
	// MaxHTTPConns is the most connections Serve keeps open at once, of
	// every kind: idle kept-alive ones, requests, waiting long polls,
	// WebSockets (0 means DefaultMaxHTTPConns(), computed when Serve
	// starts). A connection over it closes the connection idle longest,
	// or is answered 503 with Retry-After when none is idle
	// (internal/connlimit).
	MaxHTTPConns int
	// MaxHTTPConnsPerAddress is the most connections Serve keeps open at
	// once from one address (IPv6 by /64) other than a trusted proxy's
	// (0 means a quarter of MaxHTTPConns). A connection over it closes
	// its address's connection idle longest, or is answered 429 with
	// Retry-After when none is idle.
	MaxHTTPConnsPerAddress int

	// MaxWSMessages is how many messages a WebSocket client may send per
	// second, on average (twice as many in a burst).
	MaxWSMessages int
	// MaxPresence is how many presence messages of a WebSocket are
	// handled per second (as many in a burst); those beyond are
	// coalesced: the latest is handled once the rate allows.
	MaxPresence int
	// MaxPresenceData is the largest "data" of a WebSocket hello, in
	// bytes of its JSON: the client's own presence fields, sent to the
	// others in its presence entries. At most MaxPresenceDataLimit (a
	// larger value counts as that).
	MaxPresenceData int
	// MaxSubmissions is how many submissions (POST /docs/{id}/events,
	// WebSocket steps) one client may make per second, on average (twice
	// as many in a burst).
	MaxSubmissions int

	// MaxStepsPage is the most steps of one page of GET
	// /docs/{id}/steps; a larger ?limit is taken as it.
	MaxStepsPage int
	// MaxStepsPageBytes bounds the bytes of the steps of one page of GET
	// /docs/{id}/steps (their JSON, client ids and authors): a page stops
	// before the step that would take it over, and its "next" continues,
	// but it always has its first step.
	MaxStepsPageBytes int64
	// MaxEditMarkdown bounds the Markdown of one edit of POST
	// /docs/{id}/edits, in bytes: parsing costs more than the body's
	// size says for some hostile Markdown (docs/export.md).
	MaxEditMarkdown int
	// MaxClientAnswers is the most answers of LargeAnswer bytes or more
	// that the server builds or writes for one client at once; one more
	// waits up to 2 seconds for one of them to be written, then is
	// answered 429 with Retry-After (a WebSocket's welcome or snapshot
	// waits for nothing). Every answer of the collab and documents APIs
	// is reserved in the authority's memory budget
	// (collab.Limits.MaxMemory) until it is written, and answered 503
	// when it does not fit; this keeps one client that does not read its
	// answers from holding all of the budget.
	MaxClientAnswers int
}

// The default limits (DESIGN.md, "Limits").
const (
	DefaultMaxBodyBytes   = 8 << 20
	DefaultMaxDepth       = jsonscan.DefaultMaxDepth
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxBodyMemory is the default of Limits.MaxBodyMemory.
	DefaultMaxBodyMemory  = 256 << 20
	DefaultMaxConns       = 10_000
	DefaultMaxClientConns = 256
	DefaultMaxWSMessages  = 200
	DefaultMaxPresence    = 20
	DefaultMaxSubmissions = 500
	// DefaultMaxStepsPage is Limits.MaxStepsPage's default.
	DefaultMaxStepsPage = 1000
	// DefaultMaxStepsPageBytes is Limits.MaxStepsPageBytes's default.
	DefaultMaxStepsPageBytes = 4 << 20
	// DefaultMaxEditMarkdown is Limits.MaxEditMarkdown's default.
	DefaultMaxEditMarkdown = 256 << 10
	// DefaultMaxClientAnswers is Limits.MaxClientAnswers's default.
	DefaultMaxClientAnswers = 4
)

// DefaultMaxPresenceData is the default Limits.MaxPresenceData, and
// MaxPresenceDataLimit its largest value: a presence entry must fit in
// one message between nodes (store.MaxBroadcast).
const (
	DefaultMaxPresenceData = 512
	MaxPresenceDataLimit   = 4096
)

// DefaultLimits returns the default limits. MaxHTTPConns and
// MaxHTTPConnsPerAddress are 0: their defaults depend on the process
// (DefaultMaxHTTPConns), and Serve computes them.
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:      DefaultMaxBodyBytes,
		MaxDepth:          DefaultMaxDepth,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
		MaxBodyMemory:     DefaultMaxBodyMemory,
		MaxConns:          DefaultMaxConns,
		MaxClientConns:    DefaultMaxClientConns,
		MaxWSMessages:     DefaultMaxWSMessages,
		MaxPresence:       DefaultMaxPresence,
		MaxPresenceData:   DefaultMaxPresenceData,
		MaxSubmissions:    DefaultMaxSubmissions,
		MaxStepsPage:      DefaultMaxStepsPage,
		MaxStepsPageBytes: DefaultMaxStepsPageBytes,
		MaxEditMarkdown:   DefaultMaxEditMarkdown,
		MaxClientAnswers:  DefaultMaxClientAnswers,
	}
}

// WithDefaults returns l with its zero (or negative) fields set to the
// defaults, and MaxPresenceData at most MaxPresenceDataLimit.
func (l Limits) WithDefaults() Limits {
	defaults.Fill(&l, DefaultLimits())
	l.MaxHTTPConns, l.MaxHTTPConnsPerAddress = max(l.MaxHTTPConns, 0), max(l.MaxHTTPConnsPerAddress, 0)
	l.MaxPresenceData = min(l.MaxPresenceData, MaxPresenceDataLimit)
	return l
}

// clients knows the server's clients, by principal or address, and
// counts what they hold against the limits on clients: connections held
// for long (Limits.MaxConns, Limits.MaxClientConns), submissions
// (Limits.MaxSubmissions) and large answers (Limits.MaxClientAnswers).
type clients struct {
	maxConns, maxClientConns, maxSubmissions int

	trustProxy bool           // Config.TrustProxy
	proxies    []netip.Prefix // Config.TrustedProxies, masked

	conns       conns            // WebSockets and waiting long polls
	submissions *ratelimit.Table // of Limits.MaxSubmissions, per client
	now         func() time.Time // of the rate limits: time.Now, or a test's clock
	large       largeAnswers
}

// newClients returns the clients of a server with limits l.
func newClients(l Limits, trustProxy bool, proxies []netip.Prefix) clients {
	return clients{
		maxConns: l.MaxConns, maxClientConns: l.MaxClientConns, maxSubmissions: l.MaxSubmissions,
		trustProxy: trustProxy, proxies: proxies,
		submissions: ratelimit.NewTable(float64(l.MaxSubmissions), 2*float64(l.MaxSubmissions)),
		now:         time.Now,
		large:       largeAnswers{max: l.MaxClientAnswers, wait: largeAnswerWait},
	}
}

// client returns the client that the limits and the collab user counts
// know a request by: the principal's id when the policy authenticated
// one, else the client's address (user), an IPv6 address by its /64
// prefix (the addresses of one host or network).
func (s *clients) client(r *http.Request, p Principal) string {
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

// user returns who is asking, for the user counts: the client's IP
// address; with Config.TrustProxy, when the connection comes from a
// trusted proxy, the right-most address of X-Forwarded-For that is not a
// trusted proxy's (Config.TrustedProxies; without them, the right-most:
// the one the connection's proxy appended). A client may send any
// X-Forwarded-For of its own, which a proxy that appends keeps on the
// left, so the entries left of the first untrusted one say nothing. An
// entry that is not an IP address (and port) ends the search with the
// connection's address; when all are trusted proxies', the left-most is
// the client.
func (s *clients) user(r *http.Request) string {
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	if !s.trustProxy {
		return peer
	}
	if ip, err := netip.ParseAddr(peer); err != nil || !s.trustedProxy(ip) {
		return peer
	}
	var leftmost netip.Addr
	v := r.Header["X-Forwarded-For"]
	for i := len(v) - 1; i >= 0; i-- {
		for rest := v[i]; rest != ""; {
			entry := rest
			if j := strings.LastIndexByte(rest, ','); j >= 0 {
				entry, rest = rest[j+1:], rest[:j]
			} else {
				rest = ""
			}
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			ip, err := netip.ParseAddr(entry)
			if err != nil {
				ap, err := netip.ParseAddrPort(entry)
				if err != nil {
					return peer
				}
				ip = ap.Addr()
			}
			if len(s.proxies) == 0 || !s.trustedProxy(ip) {
				return ip.String()
			}
			leftmost = ip
		}
	}
	if leftmost.IsValid() {
		return leftmost.String()
	}
	return peer
}

// trustedProxy reports whether ip is the address of a proxy that
// Config.TrustProxy trusts: one of Config.TrustedProxies, or any address
// without them.
func (s *clients) trustedProxy(ip netip.Addr) bool {
	if !s.trustProxy {
		return false
	}
	if len(s.proxies) == 0 {
		return true
	}
	ip = ip.Unmap()
	for _, p := range s.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
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

// DefaultMaxHTTPConns returns the default of Limits.MaxHTTPConns
// (connlimit.DefaultMax): three quarters of the process's limit of open
// files, at most as many connections as an eighth of the Go memory limit
// holds at 24 KiB each, at least 16; 10,000 where the file limit is
// unknown.
func DefaultMaxHTTPConns() int { return connlimit.DefaultMax() }

// connRefusal is the answer to a connection that Serve refuses, over
// Limits.MaxHTTPConns (503) or Limits.MaxHTTPConnsPerAddress (429) with
// none idle to close: the whole HTTP response, with Retry-After.
func (s *Server) connRefusal(why connlimit.Refusal) []byte {
	status := http.StatusServiceUnavailable
	msg := "too many connections: the server holds its limit of " + strconv.Itoa(why.Limit) + ", none idle (Limits.MaxHTTPConns)"
	if why.PerAddr {
		status = http.StatusTooManyRequests
		msg = "too many connections from this address: over the limit of " + strconv.Itoa(why.Limit) + ", none idle (Limits.MaxHTTPConnsPerAddress)"
	}
	body := string(model.AppendJSONString([]byte(`{"error":{"message":`), nameSettings(msg, s.names))) + "}}"
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
		"Content-Type: application/json; charset=utf-8\r\nRetry-After: " + retryAfter(retryAfterConns) +
		"\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// takeConn counts one more connection of client, or refuses it with a
// *collab.RateError naming the limit.
func (s *clients) takeConn(client string) error {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.total >= s.maxConns:
		return &collab.RateError{RetryAfter: retryAfterConns,
			Msg: "too many connections: the server holds its limit of " + strconv.Itoa(s.maxConns) + " (Limits.MaxConns)"}
	case c.perClient[client] >= s.maxClientConns:
		return &collab.RateError{RetryAfter: retryAfterConns,
			Msg: "too many connections from this client: over the limit of " + strconv.Itoa(s.maxClientConns) + " (Limits.MaxClientConns)"}
	}
	if c.perClient == nil {
		c.perClient = make(map[string]int)
	}
	c.total++
	c.perClient[client]++
	return nil
}

// dropConn ends a connection of client that takeConn counted.
func (s *clients) dropConn(client string) {
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
func (s *clients) moveConn(from, to string) error {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perClient[to] >= s.maxClientConns {
		return &collab.RateError{RetryAfter: retryAfterConns,
			Msg: "too many connections of this principal: over the limit of " + strconv.Itoa(s.maxClientConns) + " (Limits.MaxClientConns)"}
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
func (s *clients) takeSubmission(client string) error {
	ok, wait := s.submissions.Take(client, s.now())
	if ok {
		return nil
	}
	return &collab.RateError{RetryAfter: wait,
		Msg: "too many submissions: over " + strconv.Itoa(s.maxSubmissions) + " per second (Limits.MaxSubmissions)"}
}

// LargeAnswer is the size, in bytes, from which an answer counts against
// its client's Limits.MaxClientAnswers.
const LargeAnswer = 1 << 20

// retryAfterAnswers is how long a client over Limits.MaxClientAnswers is
// asked to wait.
const retryAfterAnswers = retryAfterConns

// largeAnswerWait is how long a large answer waits for one of its
// client's others to be written before it is refused: a client that
// reads its answers gets them in turn.
const largeAnswerWait = 2 * time.Second

// largeAnswers counts the large answers being built or written, per
// client.
type largeAnswers struct {
	max  int           // Limits.MaxClientAnswers
	wait time.Duration // largeAnswerWait, or a test's

	mu        sync.Mutex
	perClient map[string]int // only clients with large answers
	changed   chan struct{}  // closed (and replaced) when one ends
}

// take counts a large answer of client, waiting up to wait while the
// client has Limits.MaxClientAnswers, and then refuses it with a
// *collab.RateError.
func (l *largeAnswers) take(ctx context.Context, client string, wait time.Duration) error {
	var timeout <-chan time.Time
	for {
		l.mu.Lock()
		if l.perClient[client] < l.max {
			if l.perClient == nil {
				l.perClient = make(map[string]int)
			}
			l.perClient[client]++
			l.mu.Unlock()
			return nil
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		if wait <= 0 {
			return l.refusal()
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
			continue
		case <-timeout:
		case <-ctx.Done():
		}
		return l.refusal()
	}
}

// refusal is the refusal of a large answer over Limits.MaxClientAnswers.
func (l *largeAnswers) refusal() error {
	return &collab.RateError{RetryAfter: retryAfterAnswers,
		Msg: "too many large answers for this client: " + strconv.Itoa(l.max) + " of " + strconv.Itoa(LargeAnswer>>20) + " MiB or more are being written to it (Limits.MaxClientAnswers); read them first"}
}

// drop ends a large answer of client that take counted.
func (l *largeAnswers) drop(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.perClient[client] - 1; n > 0 {
		l.perClient[client] = n
	} else {
		delete(l.perClient, client)
	}
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// inUse returns the large answers being built or written, in all.
func (l *largeAnswers) inUse() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, k := range l.perClient {
		n += k
	}
	return n
}

// retryAfter returns the Retry-After header value of a wait: whole
// seconds, at least 1.
func retryAfter(wait time.Duration) string {
	return strconv.FormatInt(max(1, int64((wait+time.Second-1)/time.Second)), 10)
}
