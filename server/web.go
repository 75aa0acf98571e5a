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

// page answers a request for the demo pages with Config.Web; the
// exchange notes the status and size for the access log.
func (s *api) page(x *exchange, r *http.Request, _ string) {
	s.web.ServeHTTP(x, r)
}
