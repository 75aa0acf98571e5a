package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/ratelimit"
	"github.com/pmauthority/pmauthority/internal/readbuf"
)

// WSSubprotocol is the WebSocket subprotocol of docs/protocol.md. A client
// that offers none is served the same protocol.
const WSSubprotocol = "pmauthority.v1"

// wsHelloTimeout bounds the wait for a connection's hello.
const wsHelloTimeout = 30 * time.Second

// serveWS answers GET /docs/{id}/ws: it upgrades the connection to a
// WebSocket that speaks docs/protocol.md until either side closes it. The
// route is not authorized before: the connection's hello is (hello).
func (s *Server) serveWS(x *exchange, r *http.Request, id string) {
	c := &wsConn{s: s, user: s.client(r, Principal{}), id: id, upgrade: r, anchor: -1, head: -1}
	// Counted by address: the principal is known at the hello (which
	// counts the connection as the principal's, hello).
	if err := s.takeConn(c.user); err != nil {
		s.fail(x, err)
		return
	}
	c.lastRead.Store(time.Now().UnixNano())
	ws, err := websocket.Accept(smallBuffers{x, c}, r, &websocket.AcceptOptions{
		Subprotocols:   []string{WSSubprotocol},
		OriginPatterns: s.origins,
		OnPongReceived: func(context.Context, []byte) {
			c.lastRead.Store(time.Now().UnixNano())
		},
		OnPingReceived: func(context.Context, []byte) bool {
			c.armWriteDeadline(false) // for the pong
			return true
		},
	})
	if err != nil {
		// Accept answered already (426, 400, 403 …).
		x.err = err.Error()
		s.dropConn(c.user)
		return
	}
	c.ws = ws
	ws.SetReadLimit(s.limits.MaxBodyBytes)
	if !s.registerWS(c) { // from now on, unregisterWS drops the connection
		s.dropConn(c.user)
		ws.Close(wsCloseRestart, "server restarting")
		return
	}
	c.mu.Lock()
	c.pinger = time.AfterFunc(s.ws.pingInterval(), c.ping)
	c.mu.Unlock()
	// The connection is served by goroutines of its own: this one, which
	// holds net/http's request, response and their buffers on a stack
	// grown by the request's handling, ends, and an idle connection costs
	// that much less. The hello, whose handling runs deep (policy point,
	// join, the document's first push), is served by one goroutine and
	// the rest by a fresh one, started once the connection joined its
	// hub: an idle connection's goroutine keeps the small stack that
	// reading frames needs, not the largest it ever grew to (stacks
	// shrink only at a GC, which an idle server rarely runs).
	go func() {
		if c.serve(true) {
			go c.serve(false)
		}
	}()
}

// Buffer sizes of a WebSocket connection. net/http hijacks a connection
// with its 4 KiB read and write buffers, which coder/websocket keeps for
// the connection's life: most of what an idle connection costs. Client
// messages and pushes are mostly far smaller; larger ones pass through with
// a read or write more.
const (
	wsReadBuffer  = 512
	wsWriteBuffer = 1024
)

// smallBuffers is a ResponseWriter whose Hijack gives the connection
// buffers of wsReadBuffer and wsWriteBuffer bytes instead of net/http's.
// It also gives c the connection, for write deadlines.
type smallBuffers struct {
	http.ResponseWriter
	c *wsConn
}

func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.c.conn = conn
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	src := &wsSource{Conn: conn}
	if n := brw.Reader.Buffered(); n > 0 {
		// Frames the client sent right after its handshake.
		b, _ := brw.Reader.Peek(n)
		src.pending = bytes.Clone(b)
	}
	br := bufio.NewReaderSize(src, wsReadBuffer)
	w.c.src, w.c.br = src, br
	return src, bufio.NewReadWriter(br, bufio.NewWriterSize(conn, wsWriteBuffer)), nil
}

// wsBuffers holds the buffers messages are read into.
var wsBuffers sync.Pool // of *[]byte

// maxPooledWSBuffer is the largest read buffer kept for reuse.
const maxPooledWSBuffer = 64 << 10

// serve reads and answers c's messages until the connection ends or,
// with untilJoined, until it joined its hub (or fails to say hello in
// time). It reports whether the connection goes on (only then has it
// joined); when it ends, serve takes c out of its hub and the server.
func (c *wsConn) serve(untilJoined bool) (goesOn bool) {
	var hello *time.Timer
	if untilJoined {
		hello = time.AfterFunc(wsHelloTimeout, func() {
			if c.hub.Load() == nil {
				c.closeAfterQueue(websocket.StatusPolicyViolation, "no hello")
			}
		})
		defer hello.Stop()
	}
	defer func() {
		if v := recover(); v != nil {
			// A bug, which must not take the server down; the connection
			// ends (its peer sees 1006) and the others go on.
			c.s.log.Error("panic serving a WebSocket", "doc", c.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			goesOn = false
		}
		if !goesOn {
			c.end()
		}
	}()
	for {
		c.waitFrame()
		typ, rd, err := c.ws.Reader(context.Background())
		if err != nil {
			return false
		}
		bp, _ := wsBuffers.Get().(*[]byte)
		if bp == nil {
			b := make([]byte, 0, 1024)
			bp = &b
		}
		msg, err := readbuf.Append((*bp)[:0], rd)
		*bp = msg
		if err == nil {
			c.lastRead.Store(time.Now().UnixNano())
			switch {
			case typ != websocket.MessageText:
				c.sendError(nil, http.StatusBadRequest, -1, "binary messages are not part of the protocol: send JSON text")
			case !utf8.Valid(msg):
				// RFC 6455 §8.1: a text frame that is not UTF-8 fails
				// the connection with 1007.
				c.closeAfterQueue(websocket.StatusInvalidFramePayloadData, "text frame not UTF-8")
			default:
				c.handle(msg)
			}
		}
		if cap(*bp) <= maxPooledWSBuffer {
			wsBuffers.Put(bp)
		}
		if err != nil {
			return false // over the read limit, coder/websocket closed with 1009
		}
		if untilJoined && c.hub.Load() != nil {
			return true
		}
	}
}

// end takes c, whose connection ended, out of its hub and the server.
func (c *wsConn) end() {
	c.authMu.Lock()
	c.revoked = true // the expiry timer arms no more
	if c.expiry != nil {
		c.expiry.Stop()
	}
	c.authMu.Unlock()
	if c.release != nil {
		c.release()
	}
	if h := c.hub.Load(); h != nil {
		h.leave(c)
		c.s.releaseHub(h)
	}
	c.abort()
	c.s.unregisterWS(c)
}

// handle answers one message. Every message passes the policy point
// with the connection's principal (anonymous before the hello): the hello
// (hello), steps (submit), presence and ping for ActionRead; a token
// message with its own token (refreshToken).
//
// A connection that sends more than Limits.MaxWSMessages per second
// (twice as many in a burst) gets error 429 and is closed with 4029.
func (c *wsConn) handle(data []byte) {
	if ok, _ := c.rate.Take(c.s.now(), float64(c.s.limits.MaxWSMessages), 2*float64(c.s.limits.MaxWSMessages)); !ok {
		c.sendError(nil, http.StatusTooManyRequests, -1,
			"too many messages: over "+strconv.Itoa(c.s.limits.MaxWSMessages)+" per second (serve --max-ws-messages)")
		c.closeAfterQueue(wsCloseTooManyRequests, "too many messages")
		return
	}
	var m wsMessage
	if problem := m.decode(data, c.s.limits.MaxDepth); problem != "" {
		c.sendError(nil, http.StatusBadRequest, -1, problem)
		return
	}
	h := c.hub.Load()
	if h != nil && !c.recheck() {
		return // the principal expired and was not renewed: closing
	}
	switch m.typ {
	case "hello":
		if h != nil {
			c.refuse(`"hello" sent twice`)
			return
		}
		c.hello(&m)
	case "ping":
		id, problem := m.id()
		if problem != "" {
			c.sendError(nil, http.StatusBadRequest, -1, problem)
			return
		}
		if err := c.authorize(ActionRead); err != nil {
			c.sendRefusal(id, err)
			return
		}
		c.send(appendPong(make([]byte, 0, 32+len(id)), id))
	case "steps", "presence", "token":
		switch {
		case h == nil:
			c.refuse(`"hello" must come first`)
		case !h.isJoined(c):
			// The hello failed: the connection is being closed.
		case m.typ == "steps":
			c.submit(h, &m, data)
		case m.typ == "token":
			c.refreshToken(&m)
		default:
			c.presence(h, &m)
		}
	}
}

// refreshToken answers a token message: its token replaces the
// connection's once the policy point authenticates it as the same
// principal and authorizes it for ActionRead, and the connection then
// expires with it. A refused token changes nothing: the connection goes
// on with the hello's principal (and expires with it).
func (c *wsConn) refreshToken(m *wsMessage) {
	id, problem := m.id()
	if problem == "" {
		var token string
		if token, problem = m.token(); problem == "" && token == "" {
			problem = `missing "token"`
		}
		if problem == "" {
			p, err := c.s.admit(c.s.polls, Credentials{Token: token, Request: c.recheckRequest()}, c.id, ActionRead)
			c.authMu.Lock()
			if err == nil && p.ID != c.principal.ID {
				err = &httpError{http.StatusForbidden, "the token is for another principal than the connection's: reconnect with it"}
			}
			if err == nil {
				c.principal, c.token = p, token
				c.armExpiryLocked()
			}
			c.authMu.Unlock()
			if err != nil {
				c.sendRefusal(id, err)
				return
			}
			c.send(appendTokenAccepted(make([]byte, 0, 32+len(id)), id))
			return
		}
	}
	c.sendError(id, http.StatusBadRequest, -1, "invalid token message: "+problem)
}

// armExpiryLocked asks the policy point again when the connection's
// principal expires (not when Principal.Expires is zero): see recheck.
// It is called with authMu held.
func (c *wsConn) armExpiryLocked() {
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	if c.principal.Expires.IsZero() || c.revoked {
		return
	}
	c.expiry = time.AfterFunc(time.Until(c.principal.Expires), func() { c.recheck() })
}

// recheck reports whether the connection's principal is still valid:
// once it has expired, the connection's token is authenticated again
// and authorized for ActionRead, and the principal it gives, for the
// same ID and not expired, replaces it (a policy such as an auth webhook
// renews its principals so). Otherwise the connection gets the error
// (401 "token expired" for an expired principal) and is closed: 4401
// for a 401, else as a refused hello is (wsCloseOf: 1008 for a 403).
// The reader calls it before each message after the hello, and the
// expiry timer when the principal expires.
func (c *wsConn) recheck() bool {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.revoked {
		return false
	}
	if c.principal.Expires.IsZero() || time.Now().Before(c.principal.Expires) {
		return true
	}
	errExpired := &httpError{http.StatusUnauthorized, "token expired"}
	var err error = errExpired
	var p Principal
	if c.token != "" {
		p, err = c.s.admit(c.s.polls, Credentials{Token: c.token, Request: c.recheckRequest()}, c.id, ActionRead)
		switch {
		case err != nil:
		case p.ID != c.principal.ID:
			err = &httpError{http.StatusForbidden, "the token is now for another principal than the connection's: reconnect with it"}
		case !p.Expires.IsZero() && !time.Now().Before(p.Expires):
			err = errExpired
		}
	}
	if err == nil {
		c.principal = p
		c.armExpiryLocked()
		return true
	}
	c.revoked = true
	a := answerOf(err)
	c.sendError(nil, a.status, -1, a.msg)
	if a.status == http.StatusUnauthorized {
		c.closeAfterQueue(wsCloseTokenExpired, "token expired")
	} else {
		c.closeAfterQueue(wsCloseOf(err, a.status))
	}
	return false
}

// recheckRequest is the request that the policy is given with a token
// after the hello (a token message, recheck): a GET of the connection's
// URL (path value "id") from its address, without the upgrade request's
// headers, which are not kept.
func (c *wsConn) recheckRequest() *http.Request {
	r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/docs/" + url.PathEscape(c.id) + "/ws"}, Header: http.Header{}}
	if c.conn != nil {
		r.RemoteAddr = c.conn.RemoteAddr().String()
	}
	r = r.WithContext(c.s.polls)
	r.SetPathValue("id", c.id)
	return r
}

// authorize passes the policy point for a on the connection's document
// with its principal.
func (c *wsConn) authorize(a Action) error {
	return c.s.policy.Authorize(c.s.polls, c.currentPrincipal(), c.id, a)
}

// currentPrincipal returns the connection's principal.
func (c *wsConn) currentPrincipal() Principal {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	return c.principal
}

// refuse answers a protocol violation: error 400, then close 1008.
func (c *wsConn) refuse(msg string) {
	c.sendError(nil, http.StatusBadRequest, -1, msg)
	c.closeAfterQueue(websocket.StatusPolicyViolation, "protocol violation")
}

// hello reads the hello, passes the policy point with its token
// (Authenticate, then Authorize for ActionRead, and ActionCreate when the
// document does not exist yet), holds its client id for the connection's
// principal (collab.Authority.HoldClientID: an id that another principal
// uses on the document is refused) and joins the document's hub. A
// refusal is an error (401, 403) and close 1008. When the principal
// expires (Principal.Expires), the policy is asked again (recheck).
func (c *wsConn) hello(m *wsMessage) {
	version, hasVersion, problem := m.integer(wsKeyVersion, "version", math.MaxInt64, true)
	if problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	var cv int64
	if hasVersion && m.raw[wsKeyCommentVersion] != nil {
		if cv, _, problem = m.integer(wsKeyCommentVersion, "commentVersion", math.MaxInt64, true); problem != "" {
			c.refuse("invalid hello: " + problem)
			return
		}
	}
	id, problem := clientIDOf(m.raw[wsKeyClientID])
	if problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	ident, problem := appendIdent(make([]byte, 0, 64+len(id)), id, m.raw[wsKeyName], m.raw[wsKeyColor])
	if problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	data, problem := appendPresenceData(nil, m.raw[wsKeyData], c.s.limits.MaxPresenceData)
	if problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	token, problem := m.token()
	if problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	upgrade := c.upgrade
	c.upgrade = nil // an idle connection keeps no request
	p, err := c.s.admit(c.s.polls, Credentials{Token: token, Request: upgrade}, c.id, ActionRead)
	if err == nil {
		err = c.s.authorizeCreate(c.s.polls, p, c.id)
	}
	if err != nil {
		c.fail(err)
		return
	}
	c.authMu.Lock()
	c.principal, c.token = p, token
	c.armExpiryLocked()
	c.authMu.Unlock()
	if p.ID != "" {
		// Others see an authenticated principal by the name its token
		// gives, not by the one its client chose.
		ident, _ = appendIdent(ident[:0], id, principalName(p), m.raw[wsKeyColor])
	}
	ident = append(ident, data...)
	if p.ID != "" && p.ID != c.user {
		if err := c.s.moveConn(c.user, p.ID); err != nil {
			c.fail(err)
			return
		}
		c.user = p.ID
	}
	// The client id is the connection's principal's (or, anonymous, its
	// address's) while it is connected: nobody else may use it meanwhile.
	// The hold keeps the document in use by the connection's client until
	// it ends (its share of the memory budget, collab.Config.MaxClientMemory).
	release, err := c.s.collab.HoldClientID(c.s.polls, c.id, c.user, p.ID, id)
	if err != nil {
		c.fail(err)
		return
	}
	c.release = release
	c.clientID, c.ident, c.owner = id, ident, appendOwner(nil, p.ID, c.user)
	h := c.s.acquireHub(c.id)
	c.hub.Store(h)
	h.join(c.s.polls, c, version, cv, !hasVersion)
}

// submit answers a steps message: the submission goes to the authority
// as a POST /docs/{id}/events would, decoded by the same code, once the
// policy point authorizes it (ActionEdit, ActionComment without steps).
func (c *wsConn) submit(h *wsHub, m *wsMessage, data []byte) {
	id, problem := m.id()
	s := c.s
	if problem != "" {
		c.sendError(nil, http.StatusBadRequest, -1, problem)
		s.observeSubmission(http.StatusBadRequest)
		return
	}
	sc := s.getCollabScratch()
	defer s.putCollabScratch(sc, len(data))
	err := s.takeSubmission(c.user)
	var sub collab.Submission
	if err == nil {
		sub, _, err = s.decodeSubmission(sc, data)
	}
	if err == nil {
		a := ActionEdit
		if len(sub.Steps) == 0 {
			a = ActionComment
		}
		err = c.authorize(a)
	}
	if err != nil {
		s.observeSubmission(c.sendRefusal(id, err))
		return
	}
	p := c.currentPrincipal()
	sub.Author = p.ID
	sub.OwnComments = s.ownCommentsOnly(s.polls, p, c.id, sub)
	res, err := s.collab.Submit(s.polls, c.id, c.user, sub)
	switch {
	case err == nil:
		h.acked(c, id, res)
		s.observeSubmission(http.StatusOK)
	case errors.Is(err, collab.ErrConflict):
		h.conflicted(c, id)
		s.observeSubmission(http.StatusConflict)
	case shuttingDown(err):
		c.closeAfterQueue(wsCloseRestart, "server restarting")
		s.observeSubmission(http.StatusServiceUnavailable)
	default:
		// Refused: the connection goes on.
		status := c.sendRefusal(id, err)
		if status >= 500 && status != http.StatusInsufficientStorage { // a quota is no failure
			s.log.Error("websocket: submission failed", "doc", c.id, "err", err)
		}
		s.observeSubmission(status)
	}
}

// observeSubmission tells Config.Observer about a WebSocket submission
// answered as status would answer it over HTTP.
func (s *Server) observeSubmission(status int) {
	if s.obs != nil {
		s.obs.Submission(TransportWebSocket, submissionResult(status))
	}
}

// maxPosition bounds presence positions (documents are far smaller).
const maxPosition = math.MaxInt32

// presence stores the client's selection, once the policy point
// authorizes it (ActionRead).
func (c *wsConn) presence(h *wsHub, m *wsMessage) {
	if err := c.authorize(ActionRead); err != nil {
		c.sendRefusal(nil, err)
		return
	}
	version, _, problem := m.integer(wsKeyVersion, "version", math.MaxInt64, true)
	if problem == "" && m.raw[wsKeyVersion] != nil && string(m.raw[wsKeyVersion]) == "null" {
		problem = `"version" must be a non-negative integer`
	}
	anchor, head := int64(-1), int64(-1)
	if problem == "" {
		var visible bool
		anchor, visible, problem = m.integer(wsKeyAnchor, "anchor", maxPosition, false)
		switch {
		case problem != "":
		case !visible:
			anchor, head = -1, -1
		case m.raw[wsKeyHead] == nil:
			head = anchor
		default:
			var ok bool
			head, ok, problem = m.integer(wsKeyHead, "head", maxPosition, false)
			if problem == "" && !ok {
				head = anchor
			}
		}
	}
	if problem != "" {
		c.sendError(nil, http.StatusBadRequest, -1, "invalid presence: "+problem)
		return
	}
	c.throttlePresence(h, version, int(anchor), int(head))
}

// presenceThrottle coalesces the presence of a connection that sends more
// than Limits.MaxPresence per second (as many in a burst): beyond, the
// latest selection waits, replaced by each newer one, until the rate
// allows it. A connection has one once it sends presence.
type presenceThrottle struct {
	mu      sync.Mutex
	bucket  ratelimit.Bucket
	pending bool // a selection waits for the timer
	version int64
	anchor  int
	head    int
}

// throttlePresence stores c's selection in h now, or, when c sends
// presence faster than Limits.MaxPresence, once the rate allows it
// (presenceThrottle).
func (c *wsConn) throttlePresence(h *wsHub, version int64, anchor, head int) {
	if c.pres == nil {
		c.pres = new(presenceThrottle)
	}
	p := c.pres
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pending {
		rate := float64(c.s.limits.MaxPresence)
		ok, wait := p.bucket.Take(c.s.now(), rate, rate)
		if ok {
			c.storePresence(h, version, anchor, head)
			return
		}
		p.pending = true
		time.AfterFunc(wait, func() { c.flushPresence(h) })
	}
	p.version, p.anchor, p.head = version, anchor, head
}

// flushPresence stores the selection that waited in c's presenceThrottle.
func (c *wsConn) flushPresence(h *wsHub) {
	p := c.pres
	p.mu.Lock()
	defer p.mu.Unlock()
	rate := float64(c.s.limits.MaxPresence)
	p.bucket.Take(c.s.now(), rate, rate)
	p.pending = false
	c.storePresence(h, p.version, p.anchor, p.head)
}

// storePresence stores c's selection in h, or answers a position outside
// the document with an error.
func (c *wsConn) storePresence(h *wsHub, version int64, anchor, head int) {
	if !h.setPresence(c, version, anchor, head) {
		c.sendError(nil, http.StatusBadRequest, -1, "invalid presence: a position is outside the document at version "+strconv.FormatInt(version, 10))
	}
}
