package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// logged is the outermost middleware: it gives each request its exchange
// (the ResponseWriter of everything below it), counts the request in
// flight, recovers a panic of its handler (500, logged with the stack) and
// writes the access log line.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		x := s.getExchange(w)
		x.start = time.Now()
		defer func() {
			s.active.Add(-1)
			s.bodies.release(x.reserved)
			x.reserved = 0
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if x.status == 0 {
					s.writeError(x, http.StatusInternalServerError, -1, "internal server error")
				}
				s.logRequest(r, x)
				return // x is not reused: its state is unknown
			}
			if x.status == 0 {
				x.status = http.StatusOK // what net/http sends for a handler that wrote nothing
			}
			s.logRequest(r, x)
			s.putExchange(x)
		}()
		next.ServeHTTP(x, r)
	})
}

// logRequest writes the access log line of a request: always with
// LogRequests, otherwise only for 5xx answers (at level ERROR) and slow
// requests (WARN).
func (s *Server) logRequest(r *http.Request, x *exchange) {
	d := time.Since(x.start)
	level := slog.LevelInfo
	switch {
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
