package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
)

// TestWSControlFrames: pongs and the answer to a close, which
// coder/websocket writes, come whole between the data frames, up to the
// largest control payload (125 bytes).
func TestWSControlFrames(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	nc, br := rawWS(t, e, "d")
	writeMasked(t, nc, 0x81, []byte(`{"type":"hello","version":0,"commentVersion":0,"clientID":1}`))
	if op, p := readFrame(t, br); op != 0x81 || !bytes.HasPrefix(p, []byte(`{"type":"welcome"`)) {
		t.Fatalf("frame %x %.100s, want the welcome", op, p)
	}
	// Pushes, interleaved with pings of the largest payload.
	const pushes = 20
	ping := bytes.Repeat([]byte("p"), 125)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range pushes {
			e.post(t, "d", v, "9", `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"`+strings.Repeat("y", 300)+`"}]}}`)
		}
	}()
	for range pushes {
		writeMasked(t, nc, 0x89, ping)
	}
	<-done
	var version int64
	var pongs int
	for version < pushes || pongs < pushes {
		op, p := readFrame(t, br)
		var m wsMsg
		switch {
		case op == 0x8a && bytes.Equal(p, ping):
			pongs++
		case op == 0x81 && json.Unmarshal(p, &m) == nil && m.Type == "steps":
			version = m.Version
		default:
			t.Fatalf("at version %d after %d pongs: frame %x %.100s", version, pongs, op, p)
		}
	}
	// A close with the longest reason is answered with the same.
	closing := binary.BigEndian.AppendUint16(nil, 1000)
	closing = append(closing, bytes.Repeat([]byte("r"), 123)...)
	writeMasked(t, nc, 0x88, closing)
	if op, p := readFrame(t, br); op != 0x88 || !bytes.Equal(p, closing) {
		t.Fatalf("frame %x %q, want the close echoed", op, p)
	}
}

// TestWSMessageSizes: client messages of every size up to the limit,
// sent at once so that several come in one read, are read whole; one
// over the limit closes the connection with 1009.
func TestWSMessageSizes(t *testing.T) {
	const limit = 200 << 10
	e := newWS(t, Config{Limits: Limits{MaxBodyBytes: limit, MaxWSMessages: 1000}}, collab.Config{}, nil)
	c := e.dial(t, "d", false)
	c.hello(0, "1")
	c.next("welcome")
	ping := func(id, size int) string {
		msg := `{"type":"ping","id":` + strconv.Itoa(id) + `,"pad":"`
		return msg + strings.Repeat("x", max(0, size-len(msg)-2)) + `"}`
	}
	sizes := []int{40, 41, 47, 48, 49, wsReadAhead - 1, wsReadAhead, wsReadAhead + 1, 1023, 1024, 1025, 4000, 70000, limit - 1, limit}
	for i, n := range sizes {
		c.send(ping(i, n))
	}
	for i := range sizes {
		if m := c.next("pong"); string(m.ID) != strconv.Itoa(i) {
			t.Fatalf("pong %s, want id %d", m.raw, i)
		}
	}
	c.send(ping(99, limit+1))
	if code, _ := c.closed(0); code != websocket.StatusMessageTooBig {
		t.Errorf("over the limit: closed with %d, want 1009", code)
	}
}

// TestWSPongsRead: a connection that answers the pings and sends nothing
// else stays, its reader waiting in waitFrame, not inside
// coder/websocket's Reader (whose stack an idle connection would keep).
func TestWSPongsRead(t *testing.T) {
	const every = 50 * time.Millisecond
	e := newWS(t, Config{}, collab.Config{}, func(h *wsHubs) { h.pingEvery = every })
	nc, br := rawWS(t, e, "d")
	writeMasked(t, nc, 0x81, []byte(`{"type":"hello","version":0,"commentVersion":0,"clientID":1}`))
	if op, p := readFrame(t, br); op != 0x81 || !bytes.HasPrefix(p, []byte(`{"type":"welcome"`)) {
		t.Fatalf("frame %x %.100s, want the welcome", op, p)
	}
	for range 10 {
		if op, p := readFrame(t, br); op != 0x89 || len(p) != 0 {
			t.Fatalf("frame %x %.100s, want a ping", op, p)
		}
		writeMasked(t, nc, 0x8a, nil)
	}
	var in func(string) int
	waitFor(t, func() bool {
		var sb strings.Builder
		pprof.Lookup("goroutine").WriteTo(&sb, 1)
		in = func(fn string) (n int) {
			for _, rec := range strings.Split(sb.String(), "\n\n") {
				if strings.Contains(rec, "server.(*wsConn).serve") && strings.Contains(rec, fn) {
					var k int
					fmt.Sscanf(rec, "%d @", &k)
					n += k
				}
			}
			return n
		}
		return in("waitFrame") == 1
	})
	if n := in("github.com/coder/websocket."); n != 0 {
		t.Errorf("%d readers inside coder/websocket", n)
	}
	if e.wsConns("d") != 1 {
		t.Error("the connection that answers pings was closed")
	}
}

// rawWS opens a WebSocket to document id by hand: the connection and a
// reader of its frames.
func rawWS(t *testing.T, e *wsEnv, id string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(e.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	req := "GET /docs/" + id + "/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return nc, br
}

// writeMasked writes a client's frame: its first byte (FIN and opcode)
// and its payload, masked.
func writeMasked(t *testing.T, nc net.Conn, first byte, payload []byte) {
	t.Helper()
	mask := [4]byte{7, 1, 3, 9}
	f := []byte{first}
	switch n := len(payload); {
	case n <= 125:
		f = append(f, 0x80|byte(n))
	default:
		f = binary.BigEndian.AppendUint16(append(f, 0x80|126), uint16(n))
	}
	f = append(f, mask[:]...)
	for i, b := range payload {
		f = append(f, b^mask[i%4])
	}
	if _, err := nc.Write(f); err != nil {
		t.Fatal(err)
	}
}

// readFrame reads a server's frame: its first byte and its payload. A
// server's frames are not masked.
func readFrame(t *testing.T, br *bufio.Reader) (byte, []byte) {
	t.Helper()
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		t.Fatal(err)
	}
	if head[1]&0x80 != 0 {
		t.Fatalf("masked frame %x", head)
	}
	n := uint64(head[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		io.ReadFull(br, ext[:])
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		io.ReadFull(br, ext[:])
		n = binary.BigEndian.Uint64(ext[:])
	}
	if n > 64<<20 {
		t.Fatalf("frame %x of %d bytes", head, n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	return head[0], p
}

// TestAppendTextFrameHeader: the three lengths of RFC 6455 5.2.
func TestAppendTextFrameHeader(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []byte
	}{
		{0, []byte{0x81, 0}},
		{125, []byte{0x81, 125}},
		{126, []byte{0x81, 126, 0, 126}},
		{0xffff, []byte{0x81, 126, 0xff, 0xff}},
		{0x10000, []byte{0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		if got := appendTextFrameHeader(nil, tc.n); !bytes.Equal(got, tc.want) {
			t.Errorf("%d: %x, want %x", tc.n, got, tc.want)
		}
	}
}
