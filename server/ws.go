package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/internal/readbuf"
	"github.com/pmauthority/pmauthority/model"
)

// WSSubprotocol is the WebSocket subprotocol of docs/protocol.md. A client
// that offers none is served the same protocol.
const WSSubprotocol = "pmauthority.v1"

// wsHelloTimeout bounds the wait for a connection's hello.
const wsHelloTimeout = 30 * time.Second

// serveWS answers GET /docs/{id}/ws (one trailing slash allowed): it
// upgrades the connection to a WebSocket that speaks docs/protocol.md
// until either side closes it. It reports false for any other path.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/docs/")
	if !ok {
		return false
	}
	seg, ok := strings.CutSuffix(strings.TrimSuffix(rest, "/"), "/ws")
	if !ok || seg == "" || strings.IndexByte(seg, '/') >= 0 {
		return false
	}
	if r.Method != http.MethodGet {
		s.methodNotAllowed(w, r, x, s.allowGet)
		return true
	}
	id, msg := docID(seg)
	if msg != "" {
		s.writeError(w, x, http.StatusBadRequest, -1, msg)
		return true
	}
	c := &wsConn{s: s, user: s.user(r), id: id, anchor: -1, head: -1}
	c.lastRead.Store(time.Now().UnixNano())
	ws, err := websocket.Accept(smallBuffers{w, c}, r, &websocket.AcceptOptions{
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
		x.status, x.err = http.StatusBadRequest, err.Error()
		return true
	}
	x.status = http.StatusSwitchingProtocols
	c.ws = ws
	ws.SetReadLimit(s.limits.MaxBodyBytes)
	if !s.registerWS(c) {
		ws.Close(websocket.StatusGoingAway, "server shutting down")
		return true
	}
	c.mu.Lock()
	c.pinger = time.AfterFunc(s.ws.pingInterval(), c.ping)
	c.mu.Unlock()
	// The connection is served by a goroutine of its own: this one, which
	// holds net/http's request, response and their buffers on a stack
	// grown by the request's handling, ends, and an idle connection costs
	// that much less.
	go func() {
		defer s.unregisterWS(c)
		c.serve()
	}()
	return true
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
	br := bufio.NewReaderSize(conn, wsReadBuffer)
	if n := brw.Reader.Buffered(); n > 0 {
		// Frames the client sent right after its handshake: they must be
		// in the new reader's buffer, which coder/websocket keeps when it
		// points the reader at conn.
		b, _ := brw.Reader.Peek(n)
		br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(b)), conn), max(n, wsReadBuffer))
		br.Peek(n)
	}
	return conn, bufio.NewReadWriter(br, bufio.NewWriterSize(conn, wsWriteBuffer)), nil
}

// wsBuffers holds the buffers messages are read into.
var wsBuffers sync.Pool // of *[]byte

// maxPooledWSBuffer is the largest read buffer kept for reuse.
const maxPooledWSBuffer = 64 << 10

// serve reads and answers c's messages until the connection ends, then
// takes c out of its hub.
func (c *wsConn) serve() {
	hello := time.AfterFunc(wsHelloTimeout, func() {
		if c.hub.Load() == nil {
			c.closeAfterQueue(websocket.StatusPolicyViolation, "no hello")
		}
	})
	defer func() {
		if v := recover(); v != nil {
			// A bug, which must not take the server down; the connection
			// ends (its peer sees 1006) and the others go on.
			c.s.log.Error("panic serving a WebSocket", "doc", c.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
		hello.Stop()
		if h := c.hub.Load(); h != nil {
			h.leave(c)
			c.s.releaseHub(h)
		}
		c.abort()
	}()
	for {
		typ, rd, err := c.ws.Reader(context.Background())
		if err != nil {
			return
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
			if typ != websocket.MessageText {
				c.sendError(nil, http.StatusBadRequest, -1, "binary messages are not part of the protocol: send JSON text")
			} else {
				c.handle(msg)
			}
		}
		if cap(*bp) <= maxPooledWSBuffer {
			wsBuffers.Put(bp)
		}
		if err != nil {
			return // over the read limit, coder/websocket closed with 1009
		}
	}
}

// Keys of client messages, and the index of each in wsMessage.raw.
var wsKeys = jsonscan.NewKeys("type", "id", "version", "commentVersion", "clientID", "name", "color", "anchor", "head")

const (
	wsKeyType = iota
	wsKeyID
	wsKeyVersion
	wsKeyCommentVersion
	wsKeyClientID
	wsKeyName
	wsKeyColor
	wsKeyAnchor
	wsKeyHead
	wsKeyCount
)

// wsMessage is a client message, its known top-level values still in JSON
// (nil when absent; of duplicate keys the last wins, as with JSON.parse).
type wsMessage struct {
	typ string
	raw [wsKeyCount][]byte
}

// decode reads data's top level. On failure it returns the message of the
// error answer.
func (m *wsMessage) decode(data []byte, maxDepth int) string {
	var d jsonscan.Decoder
	d.Reset(data)
	d.SetMaxDepth(maxDepth)
	k, err := d.Peek()
	if err != nil {
		return syntaxMessage(&d, err)
	}
	if k != jsonscan.Object {
		return "a message must be a JSON object with a \"type\" (found " + k.String() + ")"
	}
	if err := d.BeginObject(); err != nil {
		return syntaxMessage(&d, err)
	}
	for {
		i, _, more, err := d.NextKeyIndex(wsKeys)
		if err != nil {
			return syntaxMessage(&d, err)
		}
		if !more {
			break
		}
		if _, err := d.Peek(); err != nil {
			return syntaxMessage(&d, err)
		}
		start := d.Pos()
		if err := d.Skip(); err != nil {
			return syntaxMessage(&d, err)
		}
		if i >= 0 {
			m.raw[i] = bytes.TrimLeft(data[start:d.Pos()], " \t\r\n")
		}
	}
	if err := d.End(); err != nil {
		return syntaxMessage(&d, err)
	}
	raw := m.raw[wsKeyType]
	switch {
	case raw == nil:
		return `missing "type"`
	case string(raw) == `"hello"`:
		m.typ = "hello"
	case string(raw) == `"steps"`:
		m.typ = "steps"
	case string(raw) == `"presence"`:
		m.typ = "presence"
	case string(raw) == `"ping"`:
		m.typ = "ping"
	default:
		if len(raw) > 64 {
			raw = append(raw[:64:64], "…"...)
		}
		return "unknown message type " + string(raw) + ": want hello, steps, presence or ping"
	}
	return ""
}

// id returns the message's "id" (a JSON number, copied), nil when it has
// none, or the problem with it.
func (m *wsMessage) id() ([]byte, string) {
	raw := m.raw[wsKeyID]
	if raw == nil || string(raw) == "null" {
		return nil, ""
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') || len(raw) > 32 {
		return nil, `"id" must be a number`
	}
	return bytes.Clone(raw), ""
}

// integer reads the value of key as an integer from 0 to limit; null
// reports ok false without a problem. Digits beyond limit read as limit
// when clamp is set (versions: ahead of any document), else as a problem.
func (m *wsMessage) integer(key int, name string, limit int64, clamp bool) (n int64, ok bool, problem string) {
	raw := m.raw[key]
	if raw == nil {
		return 0, false, `missing "` + name + `"`
	}
	if string(raw) == "null" {
		return 0, false, ""
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || raw[0] == '"' || raw[0] == '[' || raw[0] == '{' {
		return 0, false, `"` + name + `" must be a non-negative integer (found ` + abbreviate(raw) + ")"
	}
	if f != math.Trunc(f) || f < 0 || !clamp && f > float64(limit) {
		return 0, false, `"` + name + `" must be an integer from 0 to ` + strconv.FormatInt(limit, 10) + " (found " + abbreviate(raw) + ")"
	}
	if f >= float64(limit) {
		return limit, true, ""
	}
	return int64(f), true, ""
}

// abbreviate returns raw JSON for a message, cut to 64 bytes.
func abbreviate(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// handle answers one message.
func (c *wsConn) handle(data []byte) {
	var m wsMessage
	if problem := m.decode(data, c.s.limits.MaxDepth); problem != "" {
		c.sendError(nil, http.StatusBadRequest, -1, problem)
		return
	}
	h := c.hub.Load()
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
		buf := append(make([]byte, 0, 32+len(id)), `{"type":"pong"`...)
		if id != nil {
			buf = append(buf, `,"id":`...)
			buf = append(buf, id...)
		}
		c.send(append(buf, '}'))
	case "steps", "presence":
		switch {
		case h == nil:
			c.refuse(`"hello" must come first`)
		case !h.isJoined(c):
			// The hello failed: the connection is being closed.
		case m.typ == "steps":
			c.submit(h, &m, data)
		default:
			c.presence(h, &m)
		}
	}
}

// refuse answers a protocol violation: error 400, then close 1008.
func (c *wsConn) refuse(msg string) {
	c.sendError(nil, http.StatusBadRequest, -1, msg)
	c.closeAfterQueue(websocket.StatusPolicyViolation, "protocol violation")
}

// maxNameLength is the longest name in a hello, in UTF-16 units.
const maxNameLength = 64

// hello reads the hello and joins the document's hub.
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
	ident := append(make([]byte, 0, 64+len(id)), `{"clientID":`...)
	ident = append(ident, id...)
	ident = append(ident, `,"name":`...)
	if ident, problem = appendName(ident, m.raw[wsKeyName]); problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	ident = append(ident, `,"color":`...)
	if ident, problem = appendColor(ident, m.raw[wsKeyColor]); problem != "" {
		c.refuse("invalid hello: " + problem)
		return
	}
	c.clientID, c.ident = id, ident
	h := c.s.acquireHub(c.id)
	c.hub.Store(h)
	h.join(c.s.polls, c, version, cv, !hasVersion)
}

// clientIDOf checks a hello's client id: a JSON integer from 0 to 2^53 or
// a string of at most 256 bytes, as prosemirror-collab makes them. It
// returns a copy.
func clientIDOf(raw []byte) ([]byte, string) {
	switch {
	case raw == nil:
		return nil, `missing "clientID"`
	case raw[0] == '"':
		d := jsonscan.NewDecoder(raw)
		s, err := d.ReadStringBytes()
		if err != nil || len(s) > 256 {
			return nil, `"clientID" must be a number or a string of at most 256 bytes`
		}
	default:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafeInt {
			return nil, `"clientID" must be an integer from 0 to 2^53 or a string (found ` + abbreviate(raw) + ")"
		}
	}
	return bytes.Clone(raw), ""
}

// appendName appends a hello's name as a JSON string (null when absent).
func appendName(buf, raw []byte) ([]byte, string) {
	if raw == nil || string(raw) == "null" {
		return append(buf, "null"...), ""
	}
	if raw[0] != '"' {
		return buf, `"name" must be a string`
	}
	d := jsonscan.NewDecoder(raw)
	s, err := d.ReadStringBytes()
	if err != nil {
		return buf, `"name" must be a string`
	}
	if n := d.UTF16Len(); n > maxNameLength || n < 0 && utf16Len(s) > maxNameLength {
		return buf, `"name" is longer than 64 characters`
	}
	return model.AppendJSONString(buf, string(s)), ""
}

// utf16Len returns the length of the WTF-8 text s in UTF-16 units.
func utf16Len(s []byte) int {
	n := 0
	for _, r := range string(s) {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// appendColor appends a hello's color, "#rrggbb" (null when absent).
func appendColor(buf, raw []byte) ([]byte, string) {
	if raw == nil || string(raw) == "null" {
		return append(buf, "null"...), ""
	}
	ok := len(raw) == 9 && raw[0] == '"' && raw[1] == '#' && raw[8] == '"'
	for i := 2; ok && i < 8; i++ {
		b := raw[i]
		ok = '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
	}
	if !ok {
		return buf, `"color" must be "#rrggbb" (found ` + abbreviate(raw) + ")"
	}
	return append(buf, raw...), ""
}

// submit answers a steps message: the submission goes to the authority
// as a POST /docs/{id}/events would, decoded by the same code.
func (c *wsConn) submit(h *wsHub, m *wsMessage, data []byte) {
	id, problem := m.id()
	if problem != "" {
		c.sendError(nil, http.StatusBadRequest, -1, problem)
		return
	}
	s := c.s
	sc, _ := s.collabScratch.Get().(*collabScratch)
	if sc == nil {
		sc = &collabScratch{}
	}
	sub, _, status, msg := s.decodeSubmission(sc, data)
	if status != 0 {
		s.putCollabScratch(sc, len(data))
		c.sendError(id, status, -1, msg)
		return
	}
	res, err := s.collab.Submit(s.polls, c.id, c.user, sub)
	s.putCollabScratch(sc, len(data))
	switch {
	case err == nil:
		h.acked(s.polls, c, id, res)
	case errors.Is(err, collab.ErrConflict):
		h.conflicted(s.polls, c, id)
	case shuttingDown(err):
		c.closeAfterQueue(websocket.StatusGoingAway, "server shutting down")
	default:
		// Refused: the connection goes on.
		status, step, msg := collabStatus(err)
		c.sendError(id, status, step, msg)
		if status >= 500 {
			s.log.Error("websocket: submission failed", "doc", c.id, "err", err)
		}
	}
}

// maxPosition bounds presence positions (documents are far smaller).
const maxPosition = math.MaxInt32

// presence stores the client's selection.
func (c *wsConn) presence(h *wsHub, m *wsMessage) {
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
	if !h.setPresence(c, version, int(anchor), int(head)) {
		c.sendError(nil, http.StatusBadRequest, -1, "invalid presence: a position is outside the document at version "+strconv.FormatInt(version, 10))
	}
}
