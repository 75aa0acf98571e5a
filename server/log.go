package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
)

// accessLog is the outermost middleware of the api's handlers, and the
// access log.
type accessLog struct {
	*api
	logRequests bool          // Config.LogRequests
	slow        time.Duration // Config.SlowRequest
	active      atomic.Int64  // requests in the handler
	requestIDs  requestIDs    // of requests without their own
}

// logged is the outermost middleware: it gives each request its exchange
// (the ResponseWriter of everything below it) and its request id, counts
// the request in flight, recovers a panic of its handler (500, logged
// with the stack), tells Config.Observer and writes the access log line.
func (s *accessLog) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		x := s.getExchange(w)
		x.start = time.Now()
		x.requestID = s.requestIDs.of(r)
		w.Header()["X-Request-Id"] = []string{x.requestID}
		defer func() {
			s.active.Add(-1)
			s.bodies.release(x.reserved)
			x.reserved = 0
			s.releaseAnswer(x)
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path,
					"request_id", x.requestID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if x.status == 0 {
					s.writeError(x, http.StatusInternalServerError, -1, "internal server error")
				}
				d := time.Since(x.start)
				s.observe(x, d)
				s.logRequest(r, x, d)
				return // x is not reused: its state is unknown
			}
			if x.status == 0 {
				x.status = http.StatusOK // what net/http sends for a handler that wrote nothing
			}
			d := time.Since(x.start)
			s.observe(x, d)
			s.logRequest(r, x, d)
			s.putExchange(x)
		}()
		next.ServeHTTP(x, r)
	})
}

// observe tells Config.Observer about the request of x, answered in d.
func (s *accessLog) observe(x *exchange, d time.Duration) {
	if s.obs == nil {
		return
	}
	s.obs.Request(x.route, x.status, d)
	if x.submits {
		s.obs.Submission(TransportLongPoll, submissionResult(x.status))
	}
}

// logRequest writes the access log line of a request: always with
// LogRequests, otherwise only for 5xx answers (at level ERROR; those
// expected, /readyz while draining, at INFO) and slow requests (WARN). It
// carries the request id and the document id of the
// route, when it has one; d is the time the request took.
func (s *accessLog) logRequest(r *http.Request, x *exchange, d time.Duration) {
	level := slog.LevelInfo
	switch {
	case x.status >= 500 && x.expected:
	case x.status >= 500:
		level = slog.LevelError
	case s.slow > 0 && d-x.waited >= s.slow:
		level = slog.LevelWarn
	case !s.logRequests:
		return
	}
	ctx := context.Background()
	if !s.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", x.status),
		slog.Int("bytes", x.bytes),
		slog.Duration("duration", d),
		slog.Int("steps", x.steps),
		slog.String("remote", r.RemoteAddr),
		slog.String("request_id", x.requestID),
	}
	if x.doc != "" {
		attrs = append(attrs, slog.String("doc", x.doc))
	}
	if x.waited > 0 {
		attrs = append(attrs, slog.Duration("waited", x.waited))
	}
	if x.err != "" {
		attrs = append(attrs, slog.String("error", x.err))
	}
	msg := "request"
	if level == slog.LevelWarn {
		msg = "slow request"
	}
	s.log.LogAttrs(ctx, level, msg, attrs...)
}

// maxRequestID is the longest X-Request-Id taken from a request.
const maxRequestID = 128

// requestIDs makes the ids of requests that bring no usable X-Request-Id:
// a prefix drawn at random when the Server is made, then a counter, so
// that ids are unique within a process and, with high probability, among
// the servers whose logs are gathered together.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func (ids *requestIDs) init() {
	var b [6]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	ids.prefix = hex.EncodeToString(b[:]) + "-"
}

// of returns the request id of r: its X-Request-Id when that is a sane
// one (1 to 128 characters among letters, digits and "-_.:/+=@"), which
// a proxy in front of the server may have set, else a new one.
func (ids *requestIDs) of(r *http.Request) string {
	if v := r.Header["X-Request-Id"]; len(v) == 1 && saneRequestID(v[0]) {
		return v[0]
	}
	var buf [32]byte
	b := append(buf[:0], ids.prefix...)
	b = strconv.AppendUint(b, ids.n.Add(1), 36)
	return string(b)
}

// saneRequestID reports whether id may be echoed and logged as it is.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=', c == '@':
		default:
			return false
		}
	}
	return true
}

// openURL returns the URL to open in a browser for a server listening on
// addr: the address itself, or localhost for an unspecified one (0.0.0.0,
// [::]).
func openURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
