package server

import (
	"net/http"
	"strings"
)

// isWebPath tells whether a path other than / belongs to the demo pages
// (Config.Web).
func isWebPath(path string) bool {
	return strings.HasPrefix(path, "/edit/") || strings.HasPrefix(path, "/assets/")
}

// serveWeb answers a request for the demo pages with Config.Web, noting
// the status and size for the access log.
func (s *Server) serveWeb(w http.ResponseWriter, r *http.Request, x *exchange) {
	rw := &statusWriter{ResponseWriter: w}
	s.web.ServeHTTP(rw, r)
	x.status, x.bytes = rw.status, rw.bytes
	if x.status == 0 {
		x.status = http.StatusOK
	}
}

// statusWriter records the status and the body size of an answer.
type statusWriter struct {
	http.ResponseWriter
	status, bytes int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
