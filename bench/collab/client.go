package main

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/httpwire"
)

// conn is one keep-alive HTTP/1.1 connection with a minimal client: an
// editor or a reader of the load is one conn. It costs far less per
// request than net/http's client, so that on a 2-core machine the load
// generator takes as little as possible from the server. It reads
// Content-Length, chunked and close-delimited answers.
type conn struct {
	addr string
	// auth is the Authorization header line sent with every request
	// (empty: none).
	auth string
	nc   net.Conn
	r    *bufio.Reader
	req  []byte // the request being written
	body []byte // the last answer's body
	// closed is set when the server said it closes the connection.
	closed bool
}

// dialConn connects to addr; every request then carries
// "Authorization: Bearer token", unless token is empty.
func dialConn(addr, token string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := &conn{addr: addr, nc: nc, r: bufio.NewReaderSize(nc, 32<<10)}
	if token != "" {
		c.auth = "\r\nAuthorization: Bearer " + token
	}
	return c, nil
}

// Close closes the connection.
func (c *conn) Close() error { return c.nc.Close() }

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
	c.req = append(c.req, c.auth...)
	if method == "POST" {
		c.req = append(c.req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	}
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	if _, err := c.nc.Write(c.req); err != nil {
		return 0, nil, err
	}
	status, answer, closes, err := httpwire.ReadAnswer(c.r, c.body)
	if err != nil {
		return 0, nil, err
	}
	c.body, c.closed = answer, closes
	return status, answer, nil
}
