package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection with a minimal client: an
// editor or a reader of the load is one conn. It costs far less per
// request than net/http's client, so that on a 2-core machine the load
// generator takes as little as possible from the server. It reads
// Content-Length, chunked and close-delimited answers.
type conn struct {
	addr string
	nc   net.Conn
	r    *bufio.Reader
	req  []byte // the request being written
	body []byte // the last answer's body
	// closed is set when the server said it closes the connection.
	closed bool
}

// dialConn connects to addr.
func dialConn(addr string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{addr: addr, nc: nc, r: bufio.NewReaderSize(nc, 32<<10)}, nil
}

// Close closes the connection.
func (c *conn) Close() error { return c.nc.Close() }

var errMalformed = errors.New("malformed HTTP answer")

// do sends one request (a body only with POST) and returns the answer's
// status and body; the body is valid until the next call. After an
// error the connection cannot be used again.
func (c *conn) do(method, path string, body []byte) (int, []byte, error) {
	if c.closed {
		return 0, nil, errors.New("connection closed by the server")
	}
	c.req = append(c.req[:0], method...)
	c.req = append(c.req, ' ')
	c.req = append(c.req, path...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, c.addr...)
	if method == "POST" {
		c.req = append(c.req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	}
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	if _, err := c.nc.Write(c.req); err != nil {
		return 0, nil, err
	}
	return c.readAnswer()
}

// readAnswer reads one answer.
func (c *conn) readAnswer() (int, []byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	c.closed = line[7] == '0'
	length, chunked := -1, false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, nil, fmt.Errorf("%w: header %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, nil, fmt.Errorf("%w: header %q", errMalformed, line)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			c.closed = c.closed || bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		err = c.readChunks()
	case length >= 0:
		c.body = slices.Grow(c.body, length)[:length]
		_, err = io.ReadFull(c.r, c.body)
	default:
		c.closed = true
		c.body, err = io.ReadAll(c.r)
	}
	if err != nil {
		return 0, nil, err
	}
	return status, c.body, nil
}

// readChunks reads a chunked body into c.body.
func (c *conn) readChunks() error {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		n, err := strconv.ParseUint(string(size), 16, 31)
		if err != nil {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if n == 0 {
			for { // trailers, up to an empty line
				line, err := c.r.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimSpace(line)) == 0 {
					return nil
				}
			}
		}
		at := len(c.body)
		c.body = slices.Grow(c.body, int(n))[:at+int(n)]
		if _, err := io.ReadFull(c.r, c.body[at:]); err != nil {
			return err
		}
		if _, err := c.r.Discard(2); err != nil { // CRLF
			return err
		}
	}
}
