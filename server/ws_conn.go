package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/internal/ratelimit"
)

// wsConn is one WebSocket connection. A goroutine reads and answers its
// messages; a writer goroutine runs only while messages wait in its queue
// (most are written at once by their sender), and the server's ticker
// pings it (pingAll). An idle connection thus costs one goroutine, small
// buffers and a few structures.
type wsConn struct {
	s    *api
	hubs *wsHubs
	ws   *websocket.Conn
	conn net.Conn // under ws
	// The reading side under ws: src below the bufio.Reader br that ws
	// reads frames from (waitFrame).
	src *wsSource
	br  *bufio.Reader
	// brMu orders waitFrame's look at br and the reads of br by the
	// close handshake, which the writer goroutine runs.
	brMu sync.Mutex
	user string
	id   string // the document

	// Read and written by the reader goroutine only.
	upgrade *http.Request // the upgrade request, until the hello
	pres    *presenceThrottle
	// release ends the hold of the hello's client id and document
	// (collab.Authority.HoldClientID); nil before the hello.
	release func()

	// Guarded by authMu, which the expiry timer takes too (and holds
	// while it asks the policy again).
	authMu    sync.Mutex
	principal Principal   // as the policy point last authenticated it
	token     string      // the token it was authenticated with
	expiry    *time.Timer // asks again when the principal expires
	revoked   bool        // asking again refused it: the connection closes

	// Set by the hello, before the connection joins its hub.
	hub        atomic.Pointer[wsHub]
	clientID   []byte // JSON text
	info       []byte // {"name":…,"color":…,"data":…}: what its presence shows (collab.Presence.Info)
	commitMode bool   // the hello asked for commit mode: it sends commit messages

	// wmu orders the frames written to conn: the data frames of
	// writeFrames and coder/websocket's control frames (wsControlWriter).
	// closeSent: a close frame was written, and no data frame may follow.
	wmu       sync.Mutex
	closeSent bool
	raw       syscall.RawConn // of conn, for writeNow; nil: none

	rate     ratelimit.Bucket // of the messages read (Limits.MaxWSMessages)
	lastRead atomic.Int64     // unix nanoseconds of the last frame read, pongs included
	deadline atomic.Int64     // unix nanoseconds of conn's write deadline (armWriteDeadline)

	// Guarded by the hub's mu.
	joined bool
	idx    int // in hub.conns

	// The send queue, guarded by mu.
	mu          sync.Mutex
	queue       [][]byte
	queued      int  // bytes in queue
	writing     bool // a writer goroutine runs
	pingDue     bool // a ping waits for the writer (sendPing)
	closeCode   websocket.StatusCode
	closeReason string
	done        bool // nothing more is sent
	// held is what a welcome or snapshot in the queue holds until it is
	// written (answers.go).
	held *wsHeld
	// partial is the rest of a frame that writeNowLocked wrote in part,
	// for the writer to write before queue.
	partial []byte
}

// send queues msg, which must not be modified afterwards, and never
// blocks. A connection whose queue is full is sent nothing more and is
// closed with 4008: it resyncs by reconnecting.
//
// It reports false when c takes no more messages (it is being closed).
func (c *wsConn) send(msg []byte) bool { return c.sendHeld(msg, nil) }

// sendHeld is send of a message that holds held (holdWelcome) until it is
// written, or, when it is not queued, released at once.
func (c *wsConn) sendHeld(msg []byte, held *wsHeld) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	queued := false
	defer func() {
		if held == nil {
			return
		}
		if queued && c.held == nil {
			c.held = held
		} else {
			c.s.releaseHeld(held)
		}
	}()
	if c.done || c.closeCode != 0 {
		return false
	}
	if len(c.queue) >= c.hubs.maxQueue() || len(c.queue) > 0 && c.queued+len(msg) > wsQueueBytes {
		clear(c.queue)
		c.queue, c.queued = nil, 0
		c.s.releaseHeld(c.held)
		c.held = nil
		c.closeCode, c.closeReason = wsCloseTooSlow, "too slow: resync"
		c.startWriter()
		if c.s.obs != nil {
			c.s.obs.DeliveryDropped()
		}
		return false
	}
	if len(c.queue) == 0 && !c.writing {
		if written, ok := c.writeNowLocked(msg); ok {
			queued = !written
			if !written {
				c.startWriter() // for the rest of the frame
			}
			return true
		}
	}
	c.queue = append(c.queue, msg)
	c.queued += len(msg)
	c.startWriter()
	queued = true
	return true
}

// wsWriteNowMax is the largest message that writeNowLocked writes.
const wsWriteNowMax = 4096

// writeNowLocked writes msg, a message of at most wsWriteNowMax bytes, at
// once from the sender's goroutine when the connection takes it without
// waiting: most do, and then no writer goroutine starts. It reports ok
// when it wrote some of the frame (and written when all): what is left of
// it waits in partial for the writer. It is called with mu held, when no
// writer runs and nothing is queued.
func (c *wsConn) writeNowLocked(msg []byte) (written, ok bool) {
	if c.raw == nil || len(msg) > wsWriteNowMax || c.partial != nil || !c.wmu.TryLock() {
		return false, false
	}
	defer c.wmu.Unlock()
	if c.closeSent {
		return false, false
	}
	bp := getWSBuffer()
	defer wsBuffers.Put(bp)
	frame := appendTextFrameHeader((*bp)[:0], len(msg))
	head := len(frame)
	frame = append(frame, msg...)
	*bp = frame
	n := writeNow(c.raw, frame)
	switch {
	case n <= 0:
		return false, false
	case n == len(frame):
		return true, true
	case n < head:
		c.partial = bytes.Clone(frame[n:])
	default:
		c.partial = msg[n-head:]
	}
	return false, true
}

// closeAfterQueue closes c with code once what is queued is written.
func (c *wsConn) closeAfterQueue(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.closeCode != 0 {
		return
	}
	c.closeCode, c.closeReason = code, reason
	c.startWriter()
}

// startWriter makes the writer run. It is called with mu held.
func (c *wsConn) startWriter() {
	if !c.writing {
		c.writing = true
		go c.write()
	}
}

// write writes the queue until it is empty, then returns; or closes the
// connection when asked to. Most messages are written by their sender
// (writeNowLocked): a writer runs for those that had to wait.
func (c *wsConn) write() {
	var held *wsHeld // of a message in the batch being written
	defer func() { c.s.releaseHeld(held) }()
	for {
		c.mu.Lock()
		batch, partial, ping := c.queue, c.partial, c.pingDue
		c.queue, c.queued, c.partial, c.pingDue = nil, 0, nil, false
		if (len(batch) > 0 || partial != nil) && c.held != nil {
			c.s.releaseHeld(held)
			held, c.held = c.held, nil
		}
		if len(batch) == 0 && partial == nil && !ping {
			code, reason := c.closeCode, c.closeReason
			if code == 0 {
				c.writing = false
				c.mu.Unlock()
				return
			}
			c.done = true
			c.mu.Unlock()
			c.armWriteDeadline(false)
			c.brMu.Lock() // the close handshake reads br
			c.ws.Close(code, reason)
			c.brMu.Unlock()
			return
		}
		c.mu.Unlock()
		c.armWriteDeadline(false)
		if err := c.writeFrames(partial, ping, batch); err != nil {
			c.abort()
			return
		}
		clear(batch)
		c.s.releaseHeld(held)
		held = nil
	}
}

// wsFrameWriters holds the buffers that writeFrames writes through.
var wsFrameWriters sync.Pool // of *bufio.Writer

// writeFrames writes partial, the rest of a frame that writeNowLocked
// wrote in part, then a ping frame when ping is set, then batch, each
// message a text frame, through a buffer
// of wsWriteBuffer bytes held only meanwhile: the frames of a batch go out
// in as few writes as fit. It stops early, with what was written, when c
// is being closed for its full queue.
func (c *wsConn) writeFrames(partial []byte, ping bool, batch [][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return net.ErrClosed
	}
	bw, _ := wsFrameWriters.Get().(*bufio.Writer)
	if bw == nil {
		bw = bufio.NewWriterSize(c.conn, wsWriteBuffer)
	} else {
		bw.Reset(c.conn)
	}
	defer func() {
		bw.Reset(nil)
		wsFrameWriters.Put(bw)
	}()
	bw.Write(partial)
	if ping {
		bw.Write(wsPingFrame)
	}
	var head [10]byte
	for i, msg := range batch {
		if i > 0 && c.tooSlow() {
			break // sent nothing more
		}
		bw.Write(appendTextFrameHeader(head[:0], len(msg)))
		if _, err := bw.Write(msg); err != nil {
			return err
		}
		batch[i] = nil
	}
	return bw.Flush()
}

// appendTextFrameHeader appends the header of a server's unfragmented
// text frame of n bytes (RFC 6455 5.2: FIN, opcode 1, no mask).
func appendTextFrameHeader(b []byte, n int) []byte {
	b = append(b, 0x81)
	switch {
	case n <= 125:
		return append(b, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 126), uint16(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
}

// wsControlWriter is the writer under coder/websocket's bufio.Writer,
// which writes the control frames only (pings, pongs and closes), each
// whole in one Write (wsControlBuffer): under wmu, they never fall within
// a data frame of writeFrames.
type wsControlWriter struct{ c *wsConn }

func (w wsControlWriter) Write(p []byte) (int, error) {
	c := w.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(p) > 0 && p[0]&0x0f == 0x8 {
		c.closeSent = true
	}
	return c.conn.Write(p)
}

// armWriteDeadline moves the connection's write deadline on when less
// than Timeouts.Write of it is left (always when force is set). Writes
// are bounded by a deadline on the connection rather than by a context per
// Write, for which coder/websocket would arm and disarm a timer each time,
// or a deadline set and cleared around each write. The deadline is moved
// Timeouts.Write plus two ping intervals on: the ping, which forces it at
// least every two intervals, keeps it ahead for the writes coder/websocket
// makes on its own (pongs, the answer to a close). A dead peer is noticed by
// the ping; the deadline is the backstop.
func (c *wsConn) armWriteDeadline(force bool) {
	now := time.Now().UnixNano()
	timeout := int64(c.s.writeTimeout)
	if force || c.deadline.Load()-now < timeout {
		d := now + timeout + 2*int64(c.hubs.pingInterval())
		c.deadline.Store(d)
		c.conn.SetWriteDeadline(time.Unix(0, d))
	}
}

// tooSlow reports whether c is being closed for its full queue.
func (c *wsConn) tooSlow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeCode == wsCloseTooSlow
}

// abort closes the connection without a close handshake, after a failed
// write, when the peer shows no sign of life, or when the connection has
// ended.
func (c *wsConn) abort() {
	c.mu.Lock()
	c.done = true
	clear(c.queue)
	c.queue, c.queued, c.partial, c.pingDue = nil, 0, nil, false
	c.s.releaseHeld(c.held)
	c.held = nil
	c.mu.Unlock()
	c.ws.CloseNow()
}

// isDone reports whether c sends nothing more.
func (c *wsConn) isDone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// pingAll pings every connection each pingInterval (ping), until ctx is
// done: one ticker for them all rather than a timer each.
func (hs *wsHubs) pingAll(ctx context.Context) {
	t := time.NewTicker(hs.pingInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hs.mu.Lock()
		conns := make([]*wsConn, 0, len(hs.conns))
		for c := range hs.conns {
			conns = append(conns, c)
		}
		hs.mu.Unlock()
		for _, c := range conns {
			c.ping()
		}
	}
}

// ping runs every pingInterval (pingAll): it closes a connection silent
// for two intervals, pings the others, and counts their user as present.
func (c *wsConn) ping() {
	every := c.hubs.pingInterval()
	if c.isDone() {
		return
	}
	if time.Since(time.Unix(0, c.lastRead.Load())) > 2*every {
		c.abort()
		return
	}
	c.armWriteDeadline(true)
	c.sendPing() // a pong counts as life (lastRead); no pong is dealt with above
	if h := c.hub.Load(); h != nil {
		h.touch(c.user)
	}
}

// wsPingFrame is the server's ping frame, without payload.
var wsPingFrame = []byte{0x89, 0}

// sendPing sends a ping frame: at once when nothing waits to be written,
// as writeNowLocked writes, else by the writer, before its queue. Nothing
// waits for the pong.
func (c *wsConn) sendPing() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.closeCode != 0 {
		return
	}
	if len(c.queue) == 0 && !c.writing && c.partial == nil && c.raw != nil && c.wmu.TryLock() {
		n := 0
		if !c.closeSent {
			n = writeNow(c.raw, wsPingFrame)
		}
		c.wmu.Unlock()
		switch {
		case n == len(wsPingFrame):
			return
		case n > 0:
			c.partial = wsPingFrame[n:]
			c.startWriter()
			return
		}
	}
	c.pingDue = true
	c.startWriter()
}

// waitFrame waits until the connection has something to read. The reader
// goroutine waits there, on a shallow stack, rather than deep inside
// coder/websocket's Reader: a goroutine's stack keeps the size it grew to
// while the goroutine is parked deep (8 KiB for Reader), and shrinks at a
// GC when it is parked shallow, so an idle connection costs a 2 KiB stack.
//
// It also reads the client's pongs itself (skipPong): coder/websocket's
// Reader would read them, then wait for the next frame deep inside it.
func (c *wsConn) waitFrame() {
	for {
		c.brMu.Lock()
		n := c.br.Buffered()
		c.brMu.Unlock()
		if n > 0 {
			return
		}
		c.src.wait()
		c.brMu.Lock()
		pong := c.br.Buffered() == 0 && c.src.skipPong()
		c.brMu.Unlock()
		if !pong {
			return
		}
		c.lastRead.Store(time.Now().UnixNano())
	}
}

// wsSource is the connection as coder/websocket reads it (through the
// bufio.Reader br, of wsReadBuffer bytes): what is read from it first goes
// to pending, the frames the client sent right after its handshake and
// the byte that waitFrame read to know that something comes. Its mutex
// orders the reads of the reader goroutine and those of coder/websocket's
// close handshake.
//
// br's buffer is small, so that an idle connection keeps none to speak
// of: what the connection has for a small read is read at once into a
// buffer of wsBuffers (readNow), from which the reads that follow are
// served until it is drained and goes back. A read never waits holding
// it: one that would wait is made into p.
type wsSource struct {
	net.Conn
	raw     syscall.RawConn // of Conn, for readNow; nil: none
	mu      sync.Mutex
	pending []byte
	pooled  *[]byte // pending's buffer when it is of wsBuffers
	b       [1]byte
	err     error // the error of wait's read, for the next Read
}

// wsReadAhead is the least that Read reads from the connection: a read
// into a smaller p is made into a buffer of wsBuffers.
const wsReadAhead = 512

// Read reads what is pending, then from the connection.
func (s *wsSource) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 && s.err == nil && len(p) < wsReadAhead {
		s.readAheadLocked()
	}
	switch {
	case len(s.pending) > 0:
		n := copy(p, s.pending)
		s.consumeLocked(n)
		return n, nil
	case s.err != nil:
		err := s.err
		s.err = nil
		return 0, err
	}
	return s.Conn.Read(p)
}

// readAheadLocked appends to pending what the connection has now, into a
// buffer of wsBuffers (pooled), without waiting. It is called with mu
// held.
func (s *wsSource) readAheadLocked() {
	if s.raw == nil {
		return
	}
	bp := s.pooled
	if bp == nil {
		bp = getWSBuffer()
	}
	buf := (*bp)[:cap(*bp)]
	n := copy(buf, s.pending)
	n += max(0, readNow(s.raw, buf[n:]))
	s.pending, s.pooled = buf[:n], bp
	if n == 0 {
		s.consumeLocked(0)
	}
}

// consumeLocked drops the first n bytes of pending; its buffer goes back
// to wsBuffers once it is drained. It is called with mu held.
func (s *wsSource) consumeLocked(n int) {
	s.pending = s.pending[n:]
	if len(s.pending) == 0 {
		s.pending = nil
		if s.pooled != nil {
			wsBuffers.Put(s.pooled)
			s.pooled = nil
		}
	}
}

// skipPong drops a pong frame at the head of what the connection sent,
// when it has come whole, and reports whether it did: waitFrame reads
// pongs so, so that the reader goroutine goes on waiting there rather
// than in coder/websocket's Reader. It takes only a pong that
// coder/websocket would take (FIN, masked, at most 125 bytes), and must be
// called at a frame's start (with br empty and brMu held).
func (s *wsSource) skipPong() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 || s.pending[0] != 0x8a {
		return false
	}
	if len(s.pending) < 2+4+125 {
		s.readAheadLocked()
	}
	p := s.pending
	if len(p) < 2 || p[1]&0x80 == 0 || p[1]&0x7f > 125 || len(p) < 2+4+int(p[1]&0x7f) {
		return false
	}
	s.consumeLocked(2 + 4 + int(p[1]&0x7f))
	return true
}

// wait blocks until a byte is read from the connection, or the read
// fails, unless something is pending already.
func (s *wsSource) wait() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 && s.err == nil {
		var n int
		n, s.err = s.Conn.Read(s.b[:])
		s.pending = s.b[:n]
	}
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
