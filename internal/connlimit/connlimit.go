// Package connlimit bounds the connections that an HTTP server keeps
// open, in all and per client address, closing idle ones to make room.
package connlimit

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"sync"
	"time"
)

// The connections a Listener keeps open are bounded, in all (Options.Max)
// and per address (Options.PerAddr): every connection holds a file
// descriptor and, idle, some 20 KiB that no
// budget counts, so that clients opening connections and leaving them idle
// would otherwise run the process out of descriptors (new connections then
// fail to be accepted at all) or memory. A connection that would go over a
// limit makes room by closing the connection that has been idle longest
// (of its address, for the per-address limit): a kept-alive connection
// between requests, else one that has not sent a whole request header
// within FreshGrace of being accepted. Only when none is idle, every one
// with a request in flight, a waiting long poll or a WebSocket, is the new
// connection refused: it is answered with Options.Answer and closed, once
// its request header has been read (or refuseTimeout has passed), so that
// its client takes the answer for that of its request.

// ConnCost is the memory an open connection is reckoned to hold: its
// goroutine, net/http's buffers and the kernel's socket (an idle
// kept-alive connection measured about 20 KiB of resident memory).
const ConnCost = 24 << 10

// MinConns is the least that DefaultMax returns.
const MinConns = 16

// maxRefusing bounds the refused connections being answered at once;
// beyond it a refused connection is closed without an answer.
const maxRefusing = 64

// refuseTimeout bounds the answer to a refused connection.
const refuseTimeout = time.Second

// refuseHeader is the most of a refused connection's request header that
// is read before it is answered.
const refuseHeader = 16 << 10

// FreshGrace is how long a new connection is left to send its first
// request header before it counts as idle: it has usually sent it
// already, in a packet the server has yet to read.
const FreshGrace = time.Second

// DefaultMax returns a default of Options.Max: three quarters of the
// process's limit of open files (RLIMIT_NOFILE, which Go
// raises to its hard limit at start), leaving the rest to the store, the
// listeners and outgoing connections; and, when the Go runtime has a
// memory limit (debug.SetMemoryLimit, GOMEMLIMIT; serve --max-memory), at
// most as many connections as an eighth of it holds, at 24 KiB each. It
// is at least 16, and 10,000 where the file limit is unknown.
func DefaultMax() int {
	return defaultMax(openFileLimit(), debug.SetMemoryLimit(-1))
}

// defaultMax returns DefaultMax for a limit of open files
// (0: unknown) and a Go memory limit (math.MaxInt64: none).
func defaultMax(files uint64, memory int64) int {
	n := 10_000
	if files > 0 {
		n = int(min(files/4*3, math.MaxInt32))
	}
	if memory > 0 && memory < math.MaxInt64 {
		n = int(min(int64(n), memory/8/ConnCost))
	}
	return max(n, MinConns)
}

// Listener is a net.Listener within limits: it counts the connections
// open and, through http.Server.ConnState (ConnState), which of them are
// idle.
type Listener struct {
	net.Listener
	max, perAddr int
	exempt       func(netip.Addr) bool
	log          *slog.Logger
	answer       func(Refusal) []byte

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

// limitedConn is a connection that a Listener counts.
type limitedConn struct {
	net.Conn
	l    *Listener
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
// one idle longest, else the oldest fresh one older than FreshGrace;
// nil when none is.
func (q *idleLists) victim(now time.Time) *limitedConn {
	if c := q[0].head; c != nil {
		return c
	}
	if c := q[1].head; c != nil && now.Sub(c.accepted) >= FreshGrace {
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

// Options are a Listener's limits.
type Options struct {
	// Max is the most connections open; PerAddr the most of one address
	// (IPv6 by /64), unless Exempt reports it exempt (trusted proxies,
	// which carry many clients: counted in Max only).
	Max, PerAddr int
	Exempt       func(netip.Addr) bool
	// Log, when not nil, gets a warning, at most every ten seconds, of the
	// connections closed and refused.
	Log *slog.Logger
	// Answer is the whole HTTP response a refused connection is answered
	// with.
	Answer func(Refusal) []byte
}

// A Refusal is why a connection is refused: it would go over Limit, the
// per-address limit (PerAddr) or the total, with none idle to close.
type Refusal struct {
	PerAddr bool
	Limit   int
}

// New returns ln within o's limits.
func New(ln net.Listener, o Options) *Listener {
	return &Listener{Listener: ln, max: o.Max, perAddr: o.PerAddr, exempt: o.Exempt, log: o.Log, answer: o.Answer,
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
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, victim, why := l.admit(c)
		if victim != nil {
			victim.Conn.Close()
		}
		if lc != nil {
			return lc, nil
		}
		l.refuseConn(c, why)
	}
}

// admit counts c, taking a connection to close (victim) off the count
// when c would go over a limit; without one to close, it returns why c is
// refused.
func (l *Listener) admit(c net.Conn) (lc, victim *limitedConn, why Refusal) {
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
			return nil, nil, Refusal{PerAddr: true, Limit: l.perAddr}
		}
	case l.total >= l.max:
		if victim = l.idle.victim(now); victim == nil {
			l.refused()
			return nil, nil, Refusal{Limit: l.max}
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
	// FreshGrace has passed.
	l.setIdleLocked(lc, a, true)
	return lc, victim, Refusal{}
}

// refused counts a refusal, with l.mu held.
func (l *Listener) refused() {
	l.refuse++
	l.noteLocked()
}

// noteLocked logs the connections shed and refused, at most every ten
// seconds, with l.mu held.
func (l *Listener) noteLocked() {
	if l.log == nil || time.Since(l.logged) < 10*time.Second {
		return
	}
	l.logged = time.Now()
	l.log.Warn("connections over their limit: idle ones closed to make room, new ones refused when none was idle",
		"closed_idle", l.shed, "refused", l.refuse, "open", l.total, "max", l.max, "max_per_address", l.perAddr)
	l.shed, l.refuse = 0, 0
}

// setIdleLocked marks c idle or not, in the lists of l and of its
// address a, with l.mu held.
func (l *Listener) setIdleLocked(c *limitedConn, a *addrConns, idle bool) {
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
func (l *Listener) releaseLocked(c *limitedConn) {
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

// ConnState is the http.Server.ConnState of a server on l: a connection is idle
// between requests, busy from a request's header on, and a WebSocket (a
// hijacked connection) stays counted, busy, until it is closed.
func (l *Listener) ConnState(c net.Conn, state http.ConnState) {
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

// Counts returns the connections open and how many of them are idle.
func (l *Listener) Counts() (open, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.nIdle
}

// Unwrap returns the connection under c when a Listener counts it, else
// c.
func Unwrap(c net.Conn) net.Conn {
	if lc, ok := c.(*limitedConn); ok {
		return lc.Conn
	}
	return c
}

// Close closes the connection and stops counting it.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// refuseConn answers c, a connection over a limit, as Options.Answer
// answers why, and closes it. The answer is written once the request
// header has come (at most refuseHeader bytes of it are read, for up to
// refuseTimeout): an HTTP client takes an answer that comes before it
// sent its request for a broken connection, not for the answer to it.
// Then c is read until the client closes it (or refuseTimeout), so that
// closing it with a request unread does not reset the connection and
// lose the answer. At most maxRefusing connections are answered so at
// once; others are closed at once.
func (l *Listener) refuseConn(c net.Conn, why Refusal) {
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
		if _, err := c.Write(l.answer(why)); err != nil {
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
