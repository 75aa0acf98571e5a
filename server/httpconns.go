package server

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/model"
)

// The connections Serve keeps open are bounded, in all
// (Limits.MaxHTTPConns) and per address (Limits.MaxHTTPConnsPerAddress):
// every connection holds a file descriptor and, idle, some 20 KiB that no
// budget counts, so that clients opening connections and leaving them idle
// would otherwise run the process out of descriptors (new connections then
// fail to be accepted at all) or memory. A connection that would go over a
// limit makes room by closing the connection that has been idle longest
// (of its address, for the per-address limit): a kept-alive connection
// between requests, else one that has not sent a whole request header
// within newConnGrace of being accepted. Only when none is idle, every one
// with a request in flight, a waiting long poll or a WebSocket, is the new
// connection refused: it is answered 503 (429 for its address's limit)
// with Retry-After and closed, once its request header has been read (or
// refuseTimeout has passed), so that its client takes the answer for that
// of its request.

// connCost is the memory an open connection is reckoned to hold: its
// goroutine, net/http's buffers and the kernel's socket (an idle
// kept-alive connection measured about 20 KiB of resident memory).
const connCost = 24 << 10

// minHTTPConns is the least that DefaultMaxHTTPConns returns.
const minHTTPConns = 16

// maxRefusing bounds the refused connections being answered at once;
// beyond it a refused connection is closed without an answer.
const maxRefusing = 64

// refuseTimeout bounds the answer to a refused connection.
const refuseTimeout = time.Second

// refuseHeader is the most of a refused connection's request header that
// is read before it is answered.
const refuseHeader = 16 << 10

// newConnGrace is how long a new connection is left to send its first
// request header before it counts as idle: it has usually sent it
// already, in a packet the server has yet to read.
const newConnGrace = time.Second

// DefaultMaxHTTPConns returns the default of Limits.MaxHTTPConns: three
// quarters of the process's limit of open files (RLIMIT_NOFILE, which Go
// raises to its hard limit at start), leaving the rest to the store, the
// listeners and outgoing connections; and, when the Go runtime has a
// memory limit (debug.SetMemoryLimit, GOMEMLIMIT; serve --max-memory), at
// most as many connections as an eighth of it holds, at 24 KiB each. It
// is at least 16, and 10,000 where the file limit is unknown.
func DefaultMaxHTTPConns() int {
	return defaultHTTPConns(openFileLimit(), debug.SetMemoryLimit(-1))
}

// defaultHTTPConns returns DefaultMaxHTTPConns for a limit of open files
// (0: unknown) and a Go memory limit (math.MaxInt64: none).
func defaultHTTPConns(files uint64, memory int64) int {
	n := 10_000
	if files > 0 {
		n = int(min(files/4*3, math.MaxInt32))
	}
	if memory > 0 && memory < math.MaxInt64 {
		n = int(min(int64(n), memory/8/connCost))
	}
	return max(n, minHTTPConns)
}

// connLimiter is the listener of Serve: it counts the connections open
// and, through http.Server.ConnState (connState), which of them are idle.
type connLimiter struct {
	net.Listener
	max, perAddr int
	// exempt: connections of this address are counted in the total only
	// (trusted proxies, which carry many clients).
	exempt func(netip.Addr) bool
	log    *slog.Logger
	// settingName names the settings in the refusals' messages
	// (Config.SettingName, names.go).
	settingName func(string) string

	refusing chan struct{} // a token per refused connection being answered

	mu     sync.Mutex
	total  int
	nIdle  int
	addrs  map[netip.Addr]*addrConns // the addresses with open connections
	idle   idleLists                 // every idle connection
	shed   int                       // connections closed to make room, since the last log line
	refuse int                       // connections refused, since the last log line
	logged time.Time                 // of the last log line
}

// addrConns are the open connections of one address.
type addrConns struct {
	n    int
	idle idleLists
}

// limitedConn is a connection that connLimiter counts.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	addr netip.Addr // its address (IPv6 by /64); invalid when not TCP

	// Guarded by l.mu.
	idle     bool
	fresh    bool      // it has not sent its first request header yet
	accepted time.Time // when fresh
	closed   bool      // no longer counted
	// prev and next in a list of l.idle ([0]) and of its address's ([1]).
	links [2][2]*limitedConn
}

// idleLists are the idle connections: kept-alive ones ([0]) and fresh
// ones ([1]), each longest idle first.
type idleLists [2]idleList

func newIdleLists(which int) idleLists {
	return idleLists{{which: which}, {which: which}}
}

// list returns the list of c's kind.
func (q *idleLists) list(c *limitedConn) *idleList {
	if c.fresh {
		return &q[1]
	}
	return &q[0]
}

// victim returns the connection to close to make room: the kept-alive
// one idle longest, else the oldest fresh one older than newConnGrace;
// nil when none is.
func (q *idleLists) victim(now time.Time) *limitedConn {
	if c := q[0].head; c != nil {
		return c
	}
	if c := q[1].head; c != nil && now.Sub(c.accepted) >= newConnGrace {
		return c
	}
	return nil
}

// idleList is a list of idle connections, longest idle first, linked
// through their links[which].
type idleList struct {
	head, tail *limitedConn
	which      int
}

func (q *idleList) push(c *limitedConn) {
	c.links[q.which] = [2]*limitedConn{q.tail, nil}
	if q.tail != nil {
		q.tail.links[q.which][1] = c
	} else {
		q.head = c
	}
	q.tail = c
}

func (q *idleList) remove(c *limitedConn) {
	prev, next := c.links[q.which][0], c.links[q.which][1]
	if prev != nil {
		prev.links[q.which][1] = next
	} else {
		q.head = next
	}
	if next != nil {
		next.links[q.which][0] = prev
	} else {
		q.tail = prev
	}
	c.links[q.which] = [2]*limitedConn{}
}

// newConnLimiter returns ln limited to max connections, perAddr of one
// address unless exempt.
func newConnLimiter(ln net.Listener, max, perAddr int, exempt func(netip.Addr) bool, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, max: max, perAddr: perAddr, exempt: exempt, log: log,
		refusing: make(chan struct{}, maxRefusing), addrs: make(map[netip.Addr]*addrConns),
		idle: newIdleLists(0)}
}

// connAddr returns the IP address of c's peer and the address that the
// per-address limit counts it by: the same, an IPv6 address by its /64
// prefix (as client does); both invalid when c is not TCP.
func connAddr(c net.Conn) (ip, key netip.Addr) {
	tcp, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, netip.Addr{}
	}
	ip, _ = netip.AddrFromSlice(tcp.IP)
	ip = ip.Unmap()
	if ip.Is6() {
		pfx, _ := ip.Prefix(64)
		return ip, pfx.Addr()
	}
	return ip, ip
}

// Accept returns the next connection within the limits, closing the
// longest idle one to make room where needed, and answering those it
// cannot make room for (refuse).
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, victim, status, msg := l.admit(c)
		if victim != nil {
			victim.Conn.Close()
		}
		if lc != nil {
			return lc, nil
		}
		l.refuseConn(c, status, msg)
	}
}

// admit counts c, taking a connection to close (victim) off the count
// when c would go over a limit; without one to close, it returns the
// status and message that c is refused with.
func (l *connLimiter) admit(c net.Conn) (lc, victim *limitedConn, status int, msg string) {
	ip, addr := connAddr(c)
	limited := ip.IsValid() && (l.exempt == nil || !l.exempt(ip))
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.addrs[addr]
	switch {
	case limited && a != nil && a.n >= l.perAddr:
		if victim = a.idle.victim(now); victim == nil {
			l.refused()
			return nil, nil, http.StatusTooManyRequests, "too many connections from this address: over the limit of " +
				strconv.Itoa(l.perAddr) + ", none idle (Limits.MaxHTTPConnsPerAddress)"
		}
	case l.total >= l.max:
		if victim = l.idle.victim(now); victim == nil {
			l.refused()
			return nil, nil, http.StatusServiceUnavailable, "too many connections: the server holds its limit of " +
				strconv.Itoa(l.max) + ", none idle (Limits.MaxHTTPConns)"
		}
	}
	if victim != nil {
		l.releaseLocked(victim)
		l.shed++
		l.noteLocked()
		if a != nil && a.n == 0 { // victim was a's last
			a = nil
		}
	}
	if a == nil {
		a = &addrConns{idle: newIdleLists(1)}
		l.addrs[addr] = a
	}
	lc = &limitedConn{Conn: c, l: l, addr: addr, fresh: true, accepted: now}
	l.total++
	a.n++
	// Idle until its first request (http.StateNew), sheddable once
	// newConnGrace has passed.
	l.setIdleLocked(lc, a, true)
	return lc, victim, 0, ""
}

// refused counts a refusal, with l.mu held.
func (l *connLimiter) refused() {
	l.refuse++
	l.noteLocked()
}

// noteLocked logs the connections shed and refused, at most every ten
// seconds, with l.mu held.
func (l *connLimiter) noteLocked() {
	if l.log == nil || time.Since(l.logged) < 10*time.Second {
		return
	}
	l.logged = time.Now()
	l.log.Warn("connections over their limit: idle ones closed to make room, new ones refused when none was idle",
		"closed_idle", l.shed, "refused", l.refuse, "open", l.total, "max_http_conns", l.max, "max_http_conns_per_address", l.perAddr)
	l.shed, l.refuse = 0, 0
}

// setIdleLocked marks c idle or not, in the lists of l and of its
// address a, with l.mu held.
func (l *connLimiter) setIdleLocked(c *limitedConn, a *addrConns, idle bool) {
	if c.closed || c.idle == idle {
		return
	}
	c.idle = idle
	if idle {
		l.idle.list(c).push(c)
		a.idle.list(c).push(c)
		l.nIdle++
	} else {
		l.idle.list(c).remove(c)
		a.idle.list(c).remove(c)
		l.nIdle--
		c.fresh = false // it was busy: kept alive when idle again
	}
}

// releaseLocked stops counting c, with l.mu held.
func (l *connLimiter) releaseLocked(c *limitedConn) {
	if c.closed {
		return
	}
	a := l.addrs[c.addr]
	l.setIdleLocked(c, a, false)
	c.closed = true
	l.total--
	if a.n--; a.n == 0 {
		delete(l.addrs, c.addr)
	}
}

// connState is the http.Server.ConnState of Serve: a connection is idle
// between requests, busy from a request's header on, and a WebSocket (a
// hijacked connection) stays counted, busy, until it is closed.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	var idle bool
	switch state {
	case http.StateIdle:
		idle = true
	case http.StateActive, http.StateHijacked:
	default:
		return
	}
	l.mu.Lock()
	if a := l.addrs[lc.addr]; a != nil {
		l.setIdleLocked(lc, a, idle)
	}
	l.mu.Unlock()
}

// counts returns the connections open and how many of them are idle.
func (l *connLimiter) counts() (open, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.nIdle
}

// Close closes the connection and stops counting it.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// refuseConn answers c, a connection over a limit, with status and msg
// (its settings named as settingName names them) and closes it. The
// answer is written once the request header has come (at most
// refuseHeader bytes of it are read, for up to refuseTimeout): an HTTP
// client takes an answer that comes before it sent its request for a
// broken connection, not for the answer to it. Then c is read until the
// client closes it (or refuseTimeout), so that closing it with a request
// unread does not reset the connection and lose the answer. At most
// maxRefusing connections are answered so at once; others are closed at
// once.
func (l *connLimiter) refuseConn(c net.Conn, status int, msg string) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(refuseTimeout))
		readHeader(c, refuseHeader)
		c.SetDeadline(time.Now().Add(refuseTimeout))
		body := string(model.AppendJSONString([]byte(`{"error":{"message":`), nameSettings(msg, l.settingName))) + "}}"
		answer := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
			"Content-Type: application/json; charset=utf-8\r\nRetry-After: " + retryAfter(retryAfterConns) +
			"\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		if _, err := io.WriteString(c, answer); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 1<<20))
	}()
}

// readHeader reads from c until the end of an HTTP request header (an
// empty line), limit bytes, or an error such as c's deadline.
func readHeader(c net.Conn, limit int) {
	buf := make([]byte, 0, 1024)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(cap(buf), limit-len(buf)))...)[:len(buf)]
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		// The end of the header may straddle two reads: look from a
		// little before the new bytes.
		from := max(0, len(buf)-3)
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf[from:], []byte("\r\n\r\n")) || err != nil {
			return
		}
	}
}
