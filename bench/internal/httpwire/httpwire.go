// Package httpwire reads HTTP/1.1 answers off a keep-alive connection
// for bench/'s load generators, whose minimal clients cost far less per
// request than net/http's, so that on a small machine the load generator
// takes as little CPU as possible from the server it measures.
package httpwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// ErrMalformed is the error (wrapped) for an answer that is not HTTP/1.x.
var ErrMalformed = errors.New("malformed HTTP answer")

// ReadAnswer reads one answer from r: Content-Length, chunked or
// close-delimited. Its body goes into buf[:0], grown as needed, and is
// returned; closes reports that the server closes the connection after
// it (HTTP/1.0, Connection: close, or a close-delimited body).
func ReadAnswer(r *bufio.Reader, buf []byte) (status int, body []byte, closes bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, nil, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, false, fmt.Errorf("%w: status line %q", ErrMalformed, line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, nil, false, fmt.Errorf("%w: status line %q", ErrMalformed, line)
	}
	length, chunked := -1, false
	closes = line[7] == '0' // HTTP/1.0
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0, nil, false, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		if !ok {
			return 0, nil, false, fmt.Errorf("%w: header %q", ErrMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, nil, false, fmt.Errorf("%w: header %q", ErrMalformed, line)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closes = closes || bytes.EqualFold(value, []byte("close"))
		}
	}
	body = buf[:0]
	switch {
	case chunked:
		body, err = readChunked(r, body)
	case length >= 0:
		body = slices.Grow(body, length)[:length]
		_, err = io.ReadFull(r, body)
	default:
		closes = true
		b := bytes.NewBuffer(body)
		_, err = b.ReadFrom(r)
		body = b.Bytes()
	}
	if err != nil {
		return 0, nil, false, err
	}
	return status, body, closes, nil
}

// readChunked reads a chunked body, appending it to body.
func readChunked(r *bufio.Reader, body []byte) ([]byte, error) {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return body, err
		}
		hex, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		size, err := strconv.ParseUint(string(bytes.TrimSpace(hex)), 16, 31)
		if err != nil {
			return body, fmt.Errorf("%w: chunk size %q", ErrMalformed, line)
		}
		if size == 0 {
			for { // trailers, up to the empty line
				line, err := r.ReadSlice('\n')
				if err != nil {
					return body, err
				}
				if len(line) <= 2 {
					return body, nil
				}
			}
		}
		n := len(body)
		body = slices.Grow(body, int(size))[:n+int(size)]
		if _, err := io.ReadFull(r, body[n:]); err != nil {
			return body, err
		}
		var crlf [2]byte
		if _, err := io.ReadFull(r, crlf[:]); err != nil {
			return body, err
		}
		if crlf != [2]byte{'\r', '\n'} {
			return body, fmt.Errorf("%w: chunk not followed by CRLF", ErrMalformed)
		}
	}
}
