package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

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
