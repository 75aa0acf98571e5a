package server

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Route is one route of a Server: a method, an http.ServeMux pattern (Go
// 1.22 syntax, "{id}" being a document id) and the action the policy
// point authorizes it for.
type Route struct {
	Method, Pattern string
	Action          Action
}

// handlerFunc answers a request that the policy admitted; id is the
// route's document id ("" for routes without one).
type handlerFunc func(x *exchange, r *http.Request, id string)

// route is a Route with its handler.
type route struct {
	Route
	handle handlerFunc
	// slash: the pattern also takes one trailing slash, as the collab
	// demo server does.
	slash bool
	// atHello: the route is authorized by its WebSocket hello rather
	// than before its handler.
	atHello bool
	// changes: the route changes state, so it takes requests only from
	// its own origin or an allowed one, and a body only as JSON
	// (checkCSRF).
	changes bool
	// creates: using the route creates its document when it does not
	// exist, which is authorized for ActionCreate too (authorizeCreate).
	creates bool
	// submits: the route is a submission, counted by
	// Observer.Submission whatever refuses it.
	submits bool
}

// routeTable returns the routes of s, with serveWS the WebSocket upgrade,
// in the order their methods are listed in Allow headers.
func routeTable(s *api, serveWS handlerFunc) []route {
	rs := []route{
		{Route: Route{"POST", "/{$}", ActionApply}, handle: s.apply},
		{Route: Route{"POST", "/v1/apply", ActionApply}, handle: s.apply},
		{Route: Route{"GET", "/v1/schemas", ActionApply}, handle: s.listSchemas},
		{Route: Route{"HEAD", "/v1/schemas", ActionApply}, handle: s.listSchemas},
		{Route: Route{"GET", "/healthz", ActionHealth}, handle: s.health},
		{Route: Route{"HEAD", "/healthz", ActionHealth}, handle: s.health},
		{Route: Route{"GET", "/readyz", ActionHealth}, handle: s.ready},
		{Route: Route{"HEAD", "/readyz", ActionHealth}, handle: s.ready},
	}
	if s.collab != nil {
		rs = append(rs,
			route{Route: Route{"GET", "/docs", ActionRead}, handle: s.listDocs, slash: true},
			route{Route: Route{"HEAD", "/docs", ActionRead}, handle: s.listDocs, slash: true},
			// Authorized with docID "" here, and for its new document's
			// id once the body gives it (createDoc).
			route{Route: Route{"POST", "/docs", ActionCreate}, handle: s.createDoc, slash: true, changes: true},
			route{Route: Route{"GET", "/docs/{id}", ActionRead}, handle: s.getDoc, slash: true, creates: true},
			route{Route: Route{"HEAD", "/docs/{id}", ActionRead}, handle: s.getDoc, slash: true},
			route{Route: Route{"DELETE", "/docs/{id}", ActionAdmin}, handle: s.deleteDoc, slash: true, changes: true},
			route{Route: Route{"GET", "/docs/{id}/events", ActionRead}, handle: s.pollEvents, slash: true, creates: true},
			// ActionEdit too once the body shows steps (submitEvents).
			route{Route: Route{"POST", "/docs/{id}/events", ActionComment}, handle: s.submitEvents, slash: true, changes: true, creates: true, submits: true},
			// Commit mode; authorized as POST /docs/{id}/events is.
			route{Route: Route{"POST", "/docs/{id}/commits", ActionComment}, handle: s.submitCommit, slash: true, changes: true, creates: true, submits: true},
			route{Route: Route{"GET", "/docs/{id}/ws", ActionRead}, handle: serveWS, slash: true, atHello: true},
			route{Route: Route{"GET", "/docs/{id}/export", ActionRead}, handle: s.exportDoc, slash: true},
			// The documents API (docs_api.go).
			route{Route: Route{"GET", "/docs/{id}/steps", ActionRead}, handle: s.getSteps, slash: true},
			route{Route: Route{"GET", "/docs/{id}/checkpoints", ActionRead}, handle: s.listCheckpoints, slash: true},
			route{Route: Route{"POST", "/docs/{id}/checkpoints", ActionEdit}, handle: s.addCheckpoint, slash: true, changes: true},
			route{Route: Route{"POST", "/docs/{id}/restore", ActionEdit}, handle: s.restoreDoc, slash: true, changes: true},
			// Server-side edits (edits.go).
			route{Route: Route{"POST", "/docs/{id}/edits", ActionEdit}, handle: s.editDoc, slash: true, changes: true},
			route{Route: Route{"POST", "/docs/{id}/transform", ActionEdit}, handle: s.transformDoc, slash: true, changes: true},
			route{Route: Route{"GET", "/docs/{id}/authors", ActionRead}, handle: s.getAuthors, slash: true},
			// What changed between two versions (changes.go).
			route{Route: Route{"GET", "/docs/{id}/changes", ActionRead}, handle: s.getChanges, slash: true},
			// Accepting and rejecting suggestions (suggestions.go).
			route{Route: Route{"POST", "/docs/{id}/suggestions/{sid}/accept", ActionEdit}, handle: s.acceptSuggestion, slash: true, changes: true},
			route{Route: Route{"POST", "/docs/{id}/suggestions/{sid}/reject", ActionEdit}, handle: s.rejectSuggestion, slash: true, changes: true},
			route{Route: Route{"POST", "/docs/{id}/suggestions/accept", ActionEdit}, handle: s.acceptSuggestions, slash: true, changes: true},
			route{Route: Route{"POST", "/docs/{id}/suggestions/reject", ActionEdit}, handle: s.rejectSuggestions, slash: true, changes: true},
		)
	}
	if s.web != nil {
		rs = append(rs,
			route{Route: Route{"GET", "/{$}", ActionPage}, handle: s.page},
			route{Route: Route{"HEAD", "/{$}", ActionPage}, handle: s.page},
			route{Route: Route{"GET", "/edit/{id}", ActionPage}, handle: s.page},
			route{Route: Route{"HEAD", "/edit/{id}", ActionPage}, handle: s.page},
			route{Route: Route{"GET", "/assets/{file}", ActionPage}, handle: s.page},
			route{Route: Route{"HEAD", "/assets/{file}", ActionPage}, handle: s.page},
		)
	}
	return rs
}

// router answers requests by the route table: it checks each route's
// document id, passes the policy point and runs the route's handler.
type router struct {
	*api
	routes []route
	mux    *http.ServeMux // of routes
	pages  http.Handler   // Config.Web, admitted as ActionPage
}

// newRouter returns the router of routes, handled by s.
func newRouter(s *api, routes []route) *router {
	rt := &router{api: s, routes: routes}
	rt.mux = rt.buildMux()
	rt.pages = rt.admitted(route{Route: Route{Action: ActionPage}, handle: s.page})
	return rt
}

// buildMux registers s.routes on a ServeMux: each route as "METHOD
// PATTERN" (and "METHOD PATTERN/{$}" for a trailing slash), and for each
// pattern a method-less fallback (405, or Config.Web for page routes),
// registered for HEAD too where GET is served without it (ServeMux would
// serve HEAD as GET). "/" takes the paths without a route.
func (s *router) buildMux() *http.ServeMux {
	mux := http.NewServeMux()
	type group struct {
		methods []string
		page    bool
		slash   bool
	}
	groups := map[string]*group{}
	var order []string
	for _, rt := range s.routes {
		g := groups[rt.Pattern]
		if g == nil {
			g = &group{page: true}
			groups[rt.Pattern] = g
			order = append(order, rt.Pattern)
		}
		g.methods = append(g.methods, rt.Method)
		g.page = g.page && rt.Action == ActionPage
		g.slash = g.slash || rt.slash
		h := s.admitted(rt)
		mux.Handle(rt.Method+" "+rt.Pattern, h)
		if rt.slash {
			mux.Handle(rt.Method+" "+rt.Pattern+"/{$}", h)
		}
	}
	for _, pattern := range order {
		g := groups[pattern]
		var h http.Handler
		if g.page {
			h = s.admitted(route{Route: Route{Pattern: pattern, Action: ActionPage}, handle: s.page})
		} else {
			allow := []string{strings.Join(g.methods, ", ")}
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				x := w.(*exchange)
				x.route = pattern
				s.fail(x, &methodError{method: r.Method, path: r.URL.Path, allow: allow})
			})
		}
		patterns := []string{pattern}
		if g.slash {
			patterns = append(patterns, pattern+"/{$}")
		}
		headAsGet := slices.Contains(g.methods, "GET") && !slices.Contains(g.methods, "HEAD")
		for _, p := range patterns {
			mux.Handle(p, h)
			if headAsGet {
				mux.Handle("HEAD "+p, h)
			}
		}
	}
	mux.Handle("/", http.HandlerFunc(s.noRoute))
	return mux
}

// admitted returns the handler of rt: it checks the route's document id,
// passes the policy point (unless rt is authorized at its hello) and
// runs rt's handler with the principal in the request's context.
func (s *router) admitted(rt route) http.Handler {
	hasID := strings.Contains(rt.Pattern, "{id}") && rt.Action != ActionPage
	label := rt.Pattern // Observer.Request's route
	if rt.Method != "" {
		label = rt.Method + " " + rt.Pattern
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := w.(*exchange)
		x.route, x.submits = label, rt.submits
		var id string
		if hasID {
			var err error
			if id, err = docID(r.PathValue("id")); err != nil {
				s.fail(x, err)
				return
			}
			x.doc = id
		}
		if rt.changes {
			if err := s.checkCSRF(r); err != nil {
				s.fail(x, err)
				return
			}
		}
		if !rt.atHello {
			p, err := admit(r.Context(), s.policy, Credentials{Token: bearerToken(r), Request: r}, id, rt.Action)
			if err != nil {
				s.fail(x, err)
				return
			}
			if p != (Principal{}) {
				x.principal = p
				r = r.WithContext(withPrincipal(r.Context(), p))
			}
			if rt.creates {
				if err := s.authorizeCreate(r.Context(), p, id); err != nil {
					s.fail(x, err)
					return
				}
			}
		}
		rt.handle(x, r, id)
	})
}

// noRoute answers a path that no route takes: Config.Web's answer under
// /edit/ and /assets/ (authorized as a page), else 404.
func (s *router) noRoute(w http.ResponseWriter, r *http.Request) {
	if s.web != nil && isWebPath(r.URL.Path) {
		s.pages.ServeHTTP(w, r)
		return
	}
	s.fail(w.(*exchange), &notFoundError{path: r.URL.Path})
}

// health answers GET /healthz: 503 when the authority cannot accept
// changes (closing, or its store cannot take writes: store.Checker).
func (s *api) health(x *exchange, _ *http.Request, _ string) {
	if s.collab != nil {
		if err := s.collab.Check(); err != nil {
			s.fail(x, err)
			return
		}
	}
	s.write(x, http.StatusOK, []byte(`{"status":"ok"}`))
}

// errDraining is the answer of /readyz while the server drains.
var errDraining = &httpError{status: http.StatusServiceUnavailable, msg: "draining: the server is shutting down"}

// ready answers GET /readyz: 503 while the server drains (Drain), or when
// the authority cannot accept changes (as health), else 200.
func (s *api) ready(x *exchange, r *http.Request, id string) {
	if s.draining.Load() {
		x.expected = true
		s.fail(x, errDraining)
		return
	}
	s.health(x, r, id)
}

// route answers a request by the route table. A path that is not clean
// (an empty segment before its end, a "." or ".." segment), which
// ServeMux would redirect to its cleaned form, is routed segment by
// segment as it is instead: such a segment matches no literal part of a
// pattern, and as a document id it is refused as invalid.
func (s *router) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if isClean(p) {
		s.mux.ServeHTTP(w, r)
		return
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	routed := make([]string, len(segs))
	for i, seg := range segs {
		routed[i] = seg
		if seg == "." || seg == ".." || seg == "" && i < len(segs)-1 || i == 0 && !strings.HasPrefix(p, "/") {
			routed[i] = "%00" // a segment that is no literal of any pattern
		}
	}
	raw := "/" + strings.Join(routed, "/")
	path, _ := url.PathUnescape(raw) // raw is escaped: it comes from EscapedPath
	rr := *r
	rr.URL = &url.URL{Path: path, RawPath: raw}
	h, pattern := s.mux.Handler(&rr)
	// The handler gets r, with the wildcards of its pattern set to the
	// segments of r's own path.
	_, pat, _ := strings.Cut(pattern, " ")
	for i, seg := range strings.Split(strings.TrimPrefix(pat, "/"), "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok && i < len(segs) && name != "$}" {
			r.SetPathValue(strings.TrimSuffix(name, "}"), pathUnescape(segs[i]))
		}
	}
	r.Pattern = pattern
	h.ServeHTTP(w, r)
}

// isClean reports whether the escaped path p is one that ServeMux routes
// as it is: it starts with "/" and has no "." or ".." segment and no
// empty segment but a trailing one.
func isClean(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for rest := p[1:]; ; {
		seg, tail, more := strings.Cut(rest, "/")
		if seg == "." || seg == ".." || seg == "" && more {
			return false
		}
		if !more {
			return true
		}
		rest = tail
	}
}

// pathUnescape unescapes a path segment as ServeMux does its wildcards:
// a segment that is not a valid escape stays as it is.
func pathUnescape(seg string) string {
	if u, err := url.PathUnescape(seg); err == nil {
		return u
	}
	return seg
}
