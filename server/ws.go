package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
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
	"github.com/pmauthority/pmauthority/internal/connlimit"
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
func (hs *wsHubs) serveWS(x *exchange, r *http.Request, id string) {
	s := hs.s
	c := &wsConn{s: s, hubs: hs, user: s.client(r, Principal{}), id: id, upgrade: r}
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
	c.br.Reset(c.src) // not coder/websocket's MultiReader of what br had read ahead: src has it
	ws.SetReadLimit(s.limits.MaxBodyBytes)
	if !hs.register(c) { // from now on, unregister drops the connection
		s.dropConn(c.user)
		ws.Close(wsCloseRestart, "server restarting")
		return
	}
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
// with its 4 KiB read and write buffers, which coder/websocket would keep
// for the connection's life: most of what an idle connection costs.
// Instead, coder/websocket reads through a bufio.Reader of the least size
// over wsSource, which reads ahead into a buffer of its own only while
// there is something to read. The data frames are written through a
// buffer taken for the batch (writeFrames), and coder/websocket's own
// writer has only its control frames to write: one fits its buffer whole
// (2 header bytes and at most 125 of payload), so that each is one Write
// of wsControlWriter.
const (
	wsReadBuffer    = 16
	wsWriteBuffer   = 4096
	wsControlBuffer = 128
)

// smallBuffers is a ResponseWriter whose Hijack gives the connection a
// read buffer of wsReadBuffer bytes instead of net/http's, and a writer
// of wsControlBuffer bytes through wsControlWriter. It also gives c the
// connection, for write deadlines and data frames.
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
	// Messages are written to the socket itself (writeNowLocked) only
	// when nothing comes between: not through a conn that wraps it, as
	// TLS does.
	if tc, ok := connlimit.Unwrap(conn).(*net.TCPConn); ok {
		w.c.raw, _ = tc.SyscallConn()
	}
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	src := &wsSource{Conn: conn, raw: w.c.raw}
	if n := brw.Reader.Buffered(); n > 0 {
		// Frames the client sent right after its handshake.
		b, _ := brw.Reader.Peek(n)
		src.pending = bytes.Clone(b)
	}
	br := bufio.NewReaderSize(src, wsReadBuffer)
	w.c.src, w.c.br = src, br
	return src, bufio.NewReadWriter(br, bufio.NewWriterSize(wsControlWriter{w.c}, wsControlBuffer)), nil
}

// wsBuffers holds the buffers messages are read into.
var wsBuffers sync.Pool // of *[]byte

// getWSBuffer returns a buffer of wsBuffers, or a new one.
func getWSBuffer() *[]byte {
	bp, _ := wsBuffers.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, 1024)
		bp = &b
	}
	return bp
}

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
		bp := getWSBuffer()
		msg, err := readbuf.Append((*bp)[:0], rd)
		*bp = msg
		if err == nil {
			c.lastRead.Store(time.Now().UnixNano())
			switch {
			case typ != websocket.MessageText:
				c.answer(nil, malformed("binary messages are not part of the protocol: send JSON text"), false)
			case !utf8.Valid(msg):
				c.answer(nil, &wsMessageError{wsNotUTF8, "text frame not UTF-8"}, false)
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
		c.hubs.release(h)
	}
	c.abort()
	c.hubs.unregister(c)
}

// wsPhase is when a type of message may come: before or after the hello.
type wsPhase int

const (
	wsAnyTime    wsPhase = iota // before and after the hello (ping)
	wsFirst                     // first, once (the hello)
	wsAfterHello                // after the hello; before it, a protocol violation
)

// wsMessageType is one type of client message (docs/protocol.md, "Client
// → server"), declared once with its decoder, the action the policy point
// authorizes it for and its handler, as routes are in the route table
// (routes.go). handle runs each message through its type's entry.
type wsMessageType struct {
	name string
	when wsPhase
	// action is what the policy point authorizes the message for, with
	// the connection's principal or, with ownToken, the principal of the
	// message's own token, which the policy authenticates first (a hello,
	// a token message).
	action   Action
	ownToken bool
	// editsWithSteps: a message that carries steps is authorized for
	// ActionEdit (or ActionSuggest: authorizeSteps) instead of action.
	editsWithSteps bool
	// creates: the message creates its document when it does not exist,
	// which is authorized for ActionCreate too (authorizeCreate).
	creates bool
	// submits: the message is a submission, counted by
	// Observer.Submission whatever answers it.
	submits bool
	// hasID: the message's "id" is decoded first, and its answers carry
	// it; its errors are prefixed with invalid.
	hasID   bool
	invalid string
	// take takes a limit of the connection before the message's fields
	// are decoded, as an HTTP route does before it reads its body.
	take func(c *wsConn) error
	// decode reads the message's fields into m (nil: it has none).
	decode func(c *wsConn, m *wsMessage) error
	// handle answers the message once the policy point admitted p.
	handle func(c *wsConn, m *wsMessage, p Principal) error
}

// wsMessageTypes is the message table, in the order of docs/protocol.md.
var wsMessageTypes = []wsMessageType{
	{name: "hello", when: wsFirst, action: ActionRead, ownToken: true, creates: true,
		decode: func(c *wsConn, m *wsMessage) error {
			if err := m.decodeHello(c.s.limits.MaxPresenceData); err != nil {
				return violation("invalid hello: " + err.Error())
			}
			return nil
		},
		handle: (*wsConn).hello},
	{name: "steps", when: wsAfterHello, action: ActionComment, editsWithSteps: true, submits: true, hasID: true,
		take: func(c *wsConn) error { return c.s.takeSubmission(c.user) },
		decode: func(c *wsConn, m *wsMessage) (err error) {
			if c.commitMode {
				return malformed(`"steps" on a connection in commit mode: send "commit"`)
			}
			m.sub.problems[submitRef], m.sub.sub.Ref = "", "" // a "ref" is a commit's
			m.submission, _, err = m.sub.result(m.sc, c.s.collab.Limits().MaxSteps)
			return err
		},
		handle: (*wsConn).submit},
	{name: "commit", when: wsAfterHello, action: ActionComment, editsWithSteps: true, submits: true, hasID: true,
		take: func(c *wsConn) error { return c.s.takeSubmission(c.user) },
		decode: func(c *wsConn, m *wsMessage) (err error) {
			if !c.commitMode {
				return malformed(`"commit" needs "mode": "commit" in the hello`)
			}
			m.sub.commit = true
			m.submission, _, err = m.sub.result(m.sc, c.s.collab.Limits().MaxSteps)
			return err
		},
		handle: (*wsConn).submit},
	{name: "presence", when: wsAfterHello, action: ActionRead,
		decode: func(_ *wsConn, m *wsMessage) error {
			if err := m.decodePresence(); err != nil {
				return malformed("invalid presence: " + err.Error())
			}
			return nil
		},
		handle: (*wsConn).presence},
	{name: "token", when: wsAfterHello, action: ActionRead, ownToken: true, hasID: true, invalid: "invalid token message: ",
		decode: func(_ *wsConn, m *wsMessage) error {
			err := m.decodeToken()
			if err == nil && m.token == "" {
				err = errors.New(`missing "token"`)
			}
			if err != nil {
				return malformed("invalid token message: " + err.Error())
			}
			return nil
		},
		handle: (*wsConn).refreshToken},
	{name: "ping", when: wsAnyTime, action: ActionRead, hasID: true,
		handle: func(c *wsConn, m *wsMessage, _ Principal) error {
			c.send(appendPong(make([]byte, 0, 32+len(m.id)), m.id))
			return nil
		}},
}

// wsMessageNames are the names of wsMessageTypes, which a message is
// scanned for.
var wsMessageNames = func() []string {
	names := make([]string, len(wsMessageTypes))
	for i, t := range wsMessageTypes {
		names[i] = t.name
	}
	return names
}()

// handle answers one message by its type's entry in wsMessageTypes: the
// message is scanned once, its "id" and its fields are decoded, it passes
// the policy point once (wsMessageType.action) and its handler runs.
// Errors are answered by wsAnswerOf: those of a hello close the
// connection; after the hello, a refused message changes nothing.
//
// A connection that sends more than Limits.MaxWSMessages per second
// (twice as many in a burst) gets error 429 and is closed with 4029.
func (c *wsConn) handle(data []byte) {
	if ok, _ := c.rate.Take(c.s.now(), float64(c.s.limits.MaxWSMessages), 2*float64(c.s.limits.MaxWSMessages)); !ok {
		c.answer(nil, &wsMessageError{wsTooMany,
			"too many messages: over " + strconv.Itoa(c.s.limits.MaxWSMessages) + " per second (Limits.MaxWSMessages)"}, false)
		return
	}
	sc := getCollabScratch()
	defer putCollabScratch(sc, len(data))
	m := wsMessage{sc: sc}
	if err := m.scan(sc, data, c.s.limits.MaxDepth, c.s.collab.Limits().MaxSteps, wsMessageNames); err != nil {
		c.answer(nil, err, false)
		return
	}
	h := c.hub.Load()
	if h != nil && !c.recheck() {
		return // the principal expired and was not renewed: closing
	}
	t := &wsMessageTypes[m.typ]
	switch {
	case t.when == wsFirst && h != nil:
		c.answer(nil, violation(`"`+t.name+`" sent twice`), false)
		return
	case t.when == wsAfterHello && h == nil:
		c.answer(nil, violation(`"hello" must come first`), false)
		return
	case t.when == wsAfterHello && !h.isJoined(c):
		return // the hello failed: the connection is being closed
	}
	err := c.run(t, &m)
	if err == nil {
		return
	}
	a := c.answer(m.id, err, t.when == wsFirst)
	if t.submits {
		status := a.status
		if status == 0 {
			status = http.StatusServiceUnavailable // shutting down
		}
		c.s.observeSubmission(status)
	}
}

// run decodes m, a message of type t, passes the policy point and
// answers it; it returns the error to answer instead.
func (c *wsConn) run(t *wsMessageType, m *wsMessage) error {
	if t.hasID {
		if err := m.decodeID(); err != nil {
			return malformed(t.invalid + err.Error())
		}
	}
	if t.take != nil {
		if err := t.take(c); err != nil {
			return err
		}
	}
	if t.decode != nil {
		if err := t.decode(c, m); err != nil {
			return err
		}
	}
	p, err := c.admitMessage(t, m)
	if err != nil {
		return err
	}
	if err := t.handle(c, m, p); err != nil {
		if t.submits && !shuttingDown(err) {
			if a := answerOf(err); a.status >= 500 && a.status != http.StatusInsufficientStorage { // a quota is no failure
				c.s.log.Error("websocket: submission failed", "doc", c.id, "err", err)
			}
		}
		return err
	}
	return nil
}

// admitMessage passes the policy point for m, a message of type t: the
// one authorization of the message, for t's action (see wsMessageType),
// and ActionCreate too for a type that creates its document. It returns
// the principal admitted.
func (c *wsConn) admitMessage(t *wsMessageType, m *wsMessage) (Principal, error) {
	s := c.s
	a := t.action
	if !t.ownToken {
		p := c.currentPrincipal()
		if t.editsWithSteps && len(m.submission.Steps) > 0 {
			var err error
			m.submission.SuggestOnly, err = authorizeSteps(s.polls, s.policy, p, c.id)
			return p, err
		}
		return p, s.policy.Authorize(s.polls, p, c.id, a)
	}
	req := c.upgrade
	if t.when == wsFirst {
		c.upgrade = nil // an idle connection keeps no request
	} else {
		req = c.recheckRequest()
	}
	p, err := admit(s.polls, s.policy, Credentials{Token: m.token, Request: req}, c.id, a)
	if err == nil && t.creates {
		err = s.authorizeCreate(s.polls, p, c.id)
	}
	return p, err
}

// answer answers err about the message id (nil: the connection) as
// wsAnswerOf maps it (admission: an error of the hello) and returns the
// answer.
func (c *wsConn) answer(id []byte, err error, admission bool) wsAnswer {
	a := wsAnswerOf(err, admission)
	if a.status != 0 {
		c.send(appendWSError(nil, id, a.status, a.step, a.msg, c.s.names))
	}
	if a.code != 0 {
		c.closeAfterQueue(a.code, a.reason)
	}
	return a
}

// refreshToken answers a token message, whose token the policy point
// admitted as p for ActionRead: it replaces the connection's once p is
// the same principal, and the connection then expires with it. A refused
// token changes nothing: the connection goes on with the hello's
// principal (and expires with it).
func (c *wsConn) refreshToken(m *wsMessage, p Principal) error {
	c.authMu.Lock()
	same := p.ID == c.principal.ID
	if same {
		c.principal, c.token = p, m.token
		c.armExpiryLocked()
	}
	c.authMu.Unlock()
	if !same {
		return &httpError{http.StatusForbidden, "the token is for another principal than the connection's: reconnect with it"}
	}
	c.send(appendTokenAccepted(make([]byte, 0, 32+len(m.id)), m.id))
	return nil
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
		p, err = admit(c.s.polls, c.s.policy, Credentials{Token: c.token, Request: c.recheckRequest()}, c.id, ActionRead)
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
	c.answer(nil, &wsRevokedError{err}, false)
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

// currentPrincipal returns the connection's principal.
func (c *wsConn) currentPrincipal() Principal {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	return c.principal
}

// hello answers the hello, whose token the policy point admitted as p
// (for ActionRead, and ActionCreate when the document does not exist
// yet): it holds its client id for the connection's principal
// (collab.Authority.HoldClientID: an id that another principal uses on
// the document is refused) and joins the document's hub. When the
// principal expires (Principal.Expires), the policy is asked again
// (recheck).
func (c *wsConn) hello(m *wsMessage, p Principal) error {
	c.authMu.Lock()
	c.principal, c.token = p, m.token
	c.armExpiryLocked()
	c.authMu.Unlock()
	info := m.info
	if p.ID != "" {
		// Others see an authenticated principal by the name its token
		// gives, not by the one its client chose.
		info, _ = appendInfo(info[:0], principalName(p), m.raw[wsKeyColor])
	}
	info = append(append(info, m.data...), '}')
	if p.ID != "" && p.ID != c.user {
		if err := c.s.moveConn(c.user, p.ID); err != nil {
			return err
		}
		c.user = p.ID
	}
	// The client id is the connection's principal's (or, anonymous, its
	// address's) while it is connected: nobody else may use it meanwhile.
	// The hold keeps the document in use by the connection's client until
	// it ends (its share of the memory budget, collab.Config.MaxClientMemory).
	release, err := c.s.collab.HoldClientID(c.s.polls, c.id, c.user, p.ID, m.clientID)
	if err != nil {
		return err
	}
	c.release = release
	c.clientID, c.info, c.commitMode = m.clientID, info, m.commitMode
	h := c.hubs.acquire(c.id)
	c.hub.Store(h)
	return h.join(c.s.polls, c, m.version, m.commentVersion, m.threadVersion, m.snapshot)
}

// submit answers a steps message, or a commit message (commit mode):
// the submission, decoded as a POST /docs/{id}/events (or /commits) body
// is, goes to the authority, and its answer follows the push of its
// steps: ack (committed for a commit) or conflict.
func (c *wsConn) submit(m *wsMessage, p Principal) error {
	s := c.s
	sub := m.submission
	sub.Author = p.ID
	sub.OwnComments = s.ownCommentsOnly(s.polls, p, c.id, sub)
	res, err := s.collab.Submit(s.polls, c.id, c.user, sub)
	h := c.hub.Load()
	switch {
	case err == nil && sub.Ref != "":
		h.answer(c, func(int64) []byte { return appendCommitted(make([]byte, 0, 128+len(m.id)), m.id, res) })
		s.observeSubmission(http.StatusOK)
	case err == nil:
		h.answer(c, func(int64) []byte { return appendAck(make([]byte, 0, 64+len(m.id)), m.id, res) })
		s.observeSubmission(http.StatusOK)
	case errors.Is(err, collab.ErrConflict) && sub.Ref == "":
		h.answer(c, func(version int64) []byte { return appendConflict(nil, m.id, version) })
		s.observeSubmission(http.StatusConflict)
	default:
		return err // refused: the connection goes on
	}
	return nil
}

// observeSubmission tells Config.Observer about a WebSocket submission
// answered as status would answer it over HTTP.
func (s *api) observeSubmission(status int) {
	if s.obs != nil {
		s.obs.Submission(TransportWebSocket, submissionResult(status))
	}
}

// presence stores the client's selection.
func (c *wsConn) presence(m *wsMessage, _ Principal) error {
	c.throttlePresence(c.hub.Load(), m.version, m.anchor, m.head)
	return nil
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
		c.answer(nil, malformed("invalid presence: a position is outside the document at version "+strconv.FormatInt(version, 10)), false)
	}
}
