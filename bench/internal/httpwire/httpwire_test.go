package httpwire

import (
	"bufio"
	"errors"
	"strings"
	"testing"
)

func TestReadAnswer(t *testing.T) {
	for _, tt := range []struct {
		name, wire string
		status     int
		body       string
		closes     bool
		malformed  bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, "hello", false, false},
		{"chunked", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: z\r\n\r\n", 201, "abcde", false, false},
		{"close header", "HTTP/1.1 409 Conflict\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 409, "", true, false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, "ok", true, false},
		{"close-delimited", "HTTP/1.1 200 OK\r\n\r\nto the end", 200, "to the end", true, false},
		{"not HTTP", "SMTP ready\r\n", 0, "", false, true},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, "", false, true},
		{"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXY0\r\n\r\n", 0, "", false, true},
	} {
		status, body, closes, err := ReadAnswer(bufio.NewReader(strings.NewReader(tt.wire)), []byte("old"))
		if tt.malformed {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: error %v, want ErrMalformed", tt.name, err)
			}
			continue
		}
		if err != nil || status != tt.status || string(body) != tt.body || closes != tt.closes {
			t.Errorf("%s: %d %q closes %v, %v; want %d %q closes %v", tt.name, status, body, closes, err, tt.status, tt.body, tt.closes)
		}
	}
}
