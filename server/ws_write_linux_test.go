package server

import (
	"bufio"
	"bytes"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestWSWritesInPart: messages sent to a connection that its peer does
// not read fill it, so that one is written in part and the rest queued;
// once the peer reads, it gets every one whole and in order.
func TestWSWritesInPart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Segments of loopback's size (64 KiB) take a frame whole or not at
	// all: small ones make the kernel take one in part.
	if rc, err := ln.(*net.TCPListener).SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536)
		})
	}
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.(*net.TCPConn).SetReadBuffer(16 << 10)
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetWriteBuffer(8 << 10)
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c := &wsConn{s: &api{}, hubs: &wsHubs{}, conn: conn, raw: raw}
	peer.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(peer)
	var msgs [][]byte
	send := func(n int) {
		msg := bytes.Repeat([]byte{'a' + byte(len(msgs)%26)}, n)
		msgs = append(msgs, msg)
		if !c.send(msg) {
			t.Fatalf("message %d not sent", len(msgs))
		}
	}
	read := 0
	readAll := func() {
		for ; read < len(msgs); read++ {
			if op, p := readFrame(t, br); op != 0x81 || !bytes.Equal(p, msgs[read]) {
				t.Fatalf("frame %d: %x of %d bytes %.20q…, want %d bytes %.20q…", read, op, len(p), p, len(msgs[read]), msgs[read])
			}
		}
	}
	writing := func() (writing, inPart bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.writing, c.partial != nil
	}
	// Where a frame meets the end of the connection's buffer depends on
	// the kernel: fill it until one is written in part.
	inPart := false
	for round := 0; round < 200 && !inPart; round++ {
		for busy := false; !busy; {
			send(200 + len(msgs)*397%(wsWriteNowMax-200))
			busy, inPart = writing()
		}
		readAll()
		waitFor(t, func() bool { busy, _ := writing(); return !busy })
	}
	if !inPart {
		t.Error("no message was written in part")
	}
	// Larger messages, which only the writer writes, among small ones.
	for i := range 20 {
		send([]int{10, wsWriteNowMax + 1, 100, 70000}[i%4])
	}
	readAll()
}
