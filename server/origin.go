package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// checkHostPatterns checks the patterns of Config.AllowOrigins or
// Config.AllowedHosts and returns them lower-cased.
func checkHostPatterns(patterns []string) ([]string, error) {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		if p == "" || strings.Contains(p, "/") {
			return nil, fmt.Errorf("origin pattern %q: want a host pattern such as app.example.com, *.example.com or localhost:3000", p)
		}
		p = strings.ToLower(p)
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("origin pattern %q: %v", p, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// allowedOrigin reports whether a request from a page of origin (an Origin
// header: scheme://host[:port]) is allowed by Config.AllowOrigins, whose
// patterns are matched against its host[:port] with path.Match, as
// coder/websocket matches its OriginPatterns.
func (s *api) allowedOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.ToLower(u.Host)
	for _, p := range s.origins {
		if ok, _ := path.Match(p, host); ok {
			return true
		}
	}
	return false
}

// withCORS is the middleware of Config.AllowOrigins: it adds the CORS
// headers that let pages of an allowed other origin read the answer, and
// answers their preflight requests itself (204). Requests without an
// Origin header, or from an origin not allowed, are left alone: a browser
// then keeps the answer from the page (and a preflight gets the route's
// usual answer, 405 for OPTIONS). With a Config.Policy, preflights allow
// the Authorization header too.
func (s *api) withCORS(next http.Handler) http.Handler {
	allowHeaders := "Content-Type"
	if _, open := s.policy.(allowAll); !open {
		allowHeaders = "Content-Type, Authorization"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !s.allowedOrigin(origin) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		h.Set("Access-Control-Allow-Headers", allowHeaders)
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}

// checkCSRF refuses a request that changes state unless a page of another
// origin could not have sent it: its Content-Type must be JSON (415
// otherwise: a page sends a body without one, or as text/plain, without a
// CORS preflight), but for a DELETE, which has no body, and its Origin
// checked by checkOrigin.
func (s *api) checkCSRF(r *http.Request) error {
	if r.Method == http.MethodDelete {
		return s.checkOrigin(r)
	}
	ct := r.Header["Content-Type"]
	if len(ct) == 0 {
		return &httpError{http.StatusUnsupportedMediaType,
			"missing Content-Type: send application/json (UTF-8)"}
	}
	if !isJSON(ct[0]) {
		return &httpError{http.StatusUnsupportedMediaType,
			"unsupported Content-Type " + strconv.Quote(ct[0]) + ": send application/json (UTF-8)"}
	}
	return s.checkOrigin(r)
}

// checkOrigin refuses, with 403, a request whose Origin, when it has one,
// is neither the server's own (the request's Host) nor one of
// Config.AllowOrigins ("null" included). Clients that are not browsers
// send no Origin.
func (s *api) checkOrigin(r *http.Request) error {
	origin := r.Header["Origin"]
	if len(origin) == 0 {
		return nil
	}
	if u, err := url.Parse(origin[0]); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	if s.allowedOrigin(origin[0]) {
		return nil
	}
	o := origin[0]
	if len(o) > 100 {
		o = o[:100] + "…"
	}
	return &httpError{http.StatusForbidden,
		"cross-origin request refused: origin " + strconv.Quote(o) + " is not this server's nor allowed (Config.AllowOrigins)"}
}

// withHostCheck refuses, with 421, a request whose Host the server is not
// meant to be reached by (allowedHost): the defence against DNS
// rebinding, where a page of an attacker's domain, resolved to this
// server's address, would otherwise read and edit its documents. It comes
// before the route table, so that it holds for the pages, the API and the
// WebSocket upgrade alike. The probes (GET and HEAD of /healthz and
// /readyz) are answered for any Host: health checkers and load balancers
// address the server by its IP address, and what they read is no secret.
func (s *api) withHostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isProbe(r) && !s.allowedHost(r.Host, r.Context().Value(loopbackListener{}) != nil) {
			h := r.Host
			if len(h) > 100 {
				h = h[:100] + "…"
			}
			s.fail(w.(*exchange), &httpError{http.StatusMisdirectedRequest,
				"unknown host " + strconv.Quote(h) + ": this server is not served under that name (Config.AllowedHosts)"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isProbe reports whether r is a GET or HEAD of /healthz or /readyz.
func isProbe(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}

// allowedHost reports whether a request for host (a Host header,
// host[:port]) may be answered: with Config.AllowedHosts, when a pattern
// matches it or its name without the port; without them, for a request
// that came through Serve on a loopback listener (onLoopback), only
// localhost (and its subdomains) and loopback addresses; otherwise any
// host (an app that serves the Server's handler itself decides).
func (s *api) allowedHost(host string, onLoopback bool) bool {
	if len(s.hosts) == 0 && !onLoopback || host == "" {
		return true
	}
	host = strings.ToLower(host)
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if len(s.hosts) > 0 {
		for _, p := range s.hosts {
			if ok, _ := path.Match(p, host); ok {
				return true
			}
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	return LoopbackHost(name)
}

// LoopbackHost reports whether host (a Host header, host[:port]) names
// this machine's loopback: localhost and its subdomains, or a loopback
// address. The listeners of an embedding program on a loopback address
// check it against DNS rebinding, as Serve does without
// Config.AllowedHosts.
func LoopbackHost(host string) bool {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// loopbackListener is the context key that marks the requests Serve
// accepted on a loopback listener.
type loopbackListener struct{}

// isLoopback reports whether addr, a listener's address, is a loopback
// address.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// hostsInEffect describes the hosts allowedHost takes, for the log.
func (s *api) hostsInEffect() string {
	switch {
	case len(s.hosts) > 0:
		return strings.Join(s.hosts, ",")
	case s.onLoopback.Load():
		return "localhost and loopback addresses"
	}
	return "any"
}
