package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// teapot stands for Config.Web: it answers 418 with the method and path.
var teapot = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, "<p>web:"+r.Method+" "+r.URL.Path)
})

// concretePath returns a path that pattern matches.
func concretePath(pattern string) string {
	r := strings.NewReplacer("{$}", "", "{id}", "d", "{file}", "a.js", "{sid}", "1")
	return r.Replace(pattern)
}

// TestRouteTable sends every method to every route's path (and, for the
// collab API, with a trailing slash): a route's own method reaches its
// handler, others answer JSON 405 with the path's methods in Allow, or
// Config.Web's answer on page paths.
func TestRouteTable(t *testing.T) {
	e := newCollab(t, Config{Web: teapot}, collab.Config{})
	// What each route's handler answers to a request without a body or
	// query: reaching it is what is tested.
	served := map[Route]int{
		{"POST", "/{$}", ActionApply}:                 400, // empty request
		{"POST", "/v1/apply", ActionApply}:            400,
		{"GET", "/v1/schemas", ActionApply}:           200,
		{"HEAD", "/v1/schemas", ActionApply}:          200,
		{"GET", "/healthz", ActionHealth}:             200,
		{"HEAD", "/healthz", ActionHealth}:            200,
		{"GET", "/readyz", ActionHealth}:              200,
		{"HEAD", "/readyz", ActionHealth}:             200,
		{"GET", "/docs", ActionRead}:                  200,
		{"HEAD", "/docs", ActionRead}:                 200,
		{"GET", "/docs/{id}", ActionRead}:             200,
		{"HEAD", "/docs/{id}", ActionRead}:            200,
		{"GET", "/docs/{id}/events", ActionRead}:      400, // no version
		{"POST", "/docs/{id}/events", ActionComment}:  415, // no Content-Type: refused as a possible cross-site request
		{"POST", "/docs/{id}/commits", ActionComment}: 415,
		{"GET", "/docs/{id}/ws", ActionRead}:          http.StatusUpgradeRequired,
		{"GET", "/docs/{id}/export", ActionRead}:      400, // no format
		// The documents API, on an existing document "d".
		{"POST", "/docs", ActionCreate}:                415, // no Content-Type
		{"DELETE", "/docs/{id}", ActionAdmin}:          204,
		{"GET", "/docs/{id}/steps", ActionRead}:        200,
		{"GET", "/docs/{id}/checkpoints", ActionRead}:  200,
		{"POST", "/docs/{id}/checkpoints", ActionEdit}: 415,
		{"POST", "/docs/{id}/restore", ActionEdit}:     415,
		{"POST", "/docs/{id}/edits", ActionEdit}:       415,
		{"POST", "/docs/{id}/transform", ActionEdit}:   415,
		{"GET", "/docs/{id}/authors", ActionRead}:      200,
		{"GET", "/docs/{id}/changes", ActionRead}:      400, // no from and to
		// Suggestions: refused as possible cross-site requests too.
		{"POST", "/docs/{id}/suggestions/{sid}/accept", ActionEdit}: 415,
		{"POST", "/docs/{id}/suggestions/{sid}/reject", ActionEdit}: 415,
		{"POST", "/docs/{id}/suggestions/accept", ActionEdit}:       415,
		{"POST", "/docs/{id}/suggestions/reject", ActionEdit}:       415,
		{"GET", "/{$}", ActionPage}:                                 http.StatusTeapot,
		{"HEAD", "/{$}", ActionPage}:                                http.StatusTeapot,
		{"GET", "/edit/{id}", ActionPage}:                           http.StatusTeapot,
		{"HEAD", "/edit/{id}", ActionPage}:                          http.StatusTeapot,
		{"GET", "/assets/{file}", ActionPage}:                       http.StatusTeapot,
		{"HEAD", "/assets/{file}", ActionPage}:                      http.StatusTeapot,
	}
	routes := e.s.Routes()
	if len(routes) != len(served) {
		t.Errorf("%d routes, %d expected answers: %v", len(routes), len(served), routes)
	}
	methods := map[string][]string{} // by pattern, in table order
	for _, rt := range routes {
		if _, ok := served[rt]; !ok {
			t.Errorf("route %v has no expected answer", rt)
		}
		methods[rt.Pattern] = append(methods[rt.Pattern], rt.Method)
	}
	slash := map[string]bool{"/docs": true, "/docs/{id}": true, "/docs/{id}/events": true, "/docs/{id}/commits": true, "/docs/{id}/ws": true, "/docs/{id}/export": true,
		"/docs/{id}/steps": true, "/docs/{id}/checkpoints": true, "/docs/{id}/restore": true, "/docs/{id}/authors": true,
		"/docs/{id}/edits": true, "/docs/{id}/changes": true, "/docs/{id}/transform": true,
		"/docs/{id}/suggestions/{sid}/accept": true, "/docs/{id}/suggestions/{sid}/reject": true,
		"/docs/{id}/suggestions/accept": true, "/docs/{id}/suggestions/reject": true}
	for pattern, ms := range methods {
		paths := []string{concretePath(pattern)}
		if slash[pattern] {
			paths = append(paths, paths[0]+"/")
		}
		page := strings.HasPrefix(pattern, "/edit/") || strings.HasPrefix(pattern, "/assets/")
		for _, path := range paths {
			for _, method := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
				e.mustGet(t, "/docs/d") // it exists (a DELETE deleted it)
				w := e.serve(defaultIP, method, path, "", nil)
				want, ok := 0, false
				for _, m := range ms {
					if m == method {
						want, ok = served[Route{method, pattern, actionOf(routes, method, pattern)}], true
					}
				}
				switch {
				case ok:
					if w.Code != want {
						t.Errorf("%s %s: %d, want %d: %s", method, path, w.Code, want, w.Body)
					}
				case page:
					if w.Code != http.StatusTeapot {
						t.Errorf("%s %s: %d, want Config.Web's answer", method, path, w.Code)
					}
				default:
					allow := strings.Join(ms, ", ")
					if w.Code != 405 || w.Header().Get("Allow") != allow {
						t.Errorf("%s %s: %d with Allow %q, want 405 with %q", method, path, w.Code, w.Header().Get("Allow"), allow)
					}
					want := "method " + method + " not allowed for " + path + " (allowed: " + allow + ")"
					if _, msg := checkAnswer(t, w.Code, w.Header(), w.Body.Bytes()); msg != want {
						t.Errorf("%s %s: message %q, want %q", method, path, msg, want)
					}
				}
			}
		}
	}
}

func actionOf(routes []Route, method, pattern string) Action {
	for _, rt := range routes {
		if rt.Method == method && rt.Pattern == pattern {
			return rt.Action
		}
	}
	return ""
}

// TestRoutesWithout: the collab and page routes exist only with
// Config.Collab and Config.Web.
func TestRoutesWithout(t *testing.T) {
	s, _ := newServer(t, Config{})
	var got []string
	for _, rt := range s.Routes() {
		got = append(got, rt.Method+" "+rt.Pattern+" "+string(rt.Action))
	}
	want := "POST /{$} apply|POST /v1/apply apply|GET /v1/schemas apply|HEAD /v1/schemas apply|GET /healthz health|HEAD /healthz health|GET /readyz health|HEAD /readyz health"
	if g := strings.Join(got, "|"); g != want {
		t.Fatalf("routes %s\nwant   %s", g, want)
	}
}

// TestNoRoute: paths without a route, clean or not, answer JSON 404, or
// Config.Web's answer on page paths; paths that ServeMux would clean are
// routed as they are, not redirected.
func TestNoRoute(t *testing.T) {
	e := newCollab(t, Config{Web: teapot}, collab.Config{})
	for _, tc := range []struct {
		method, path string
		status       int
		want         string // part of the JSON error message
	}{
		{"GET", "/nope", 404, "not found: no route for /nope"},
		{"POST", "/v1/apply/", 404, "no route for /v1/apply/"},
		{"GET", "//docs", 404, "no route for //docs"},
		{"GET", "/docs/../x", 404, "no route for /docs/../x"},
		{"GET", "/./healthz", 404, "no route for /./healthz"},
		{"GET", "/healthz/.", 404, "no route for /healthz/."},
		{"GET", "/edit", 404, "no route for /edit"},
		{"GET", "/assets", 404, "no route for /assets"},
		{"GET", "/docs//ws/x", 404, "no route"},
		{"GET", "/docs/d/events//", 404, "no route"},
		{"GET", "/docs/a%00b", 400, `invalid document id "a\x00b"`},
		{"GET", "/docs/..", 400, `invalid document id ".."`},
		{"GET", "/docs/./", 400, `invalid document id "."`},
		{"GET", "/docs//events", 400, `invalid document id ""`},
		{"GET", "/docs/../events/", 400, `invalid document id ".."`},
		{"POST", "/docs//", 405, "method POST not allowed for /docs//"},
		{"GET", "/edit/a/b", http.StatusTeapot, ""},
		{"GET", "/edit/", http.StatusTeapot, ""},
		{"GET", "/edit/../x", http.StatusTeapot, ""},
		{"GET", "/assets//x.js", http.StatusTeapot, ""},
		{"POST", "/assets/a.js", http.StatusTeapot, ""},
	} {
		w := e.serve(defaultIP, tc.method, tc.path, "", nil)
		if w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, w.Code, tc.status, w.Body)
			continue
		}
		if tc.status == http.StatusTeapot {
			if w.Body.String() != "<p>web:"+tc.method+" "+tc.path {
				t.Errorf("%s %s: Config.Web got %q", tc.method, tc.path, w.Body)
			}
			continue
		}
		if _, msg := checkAnswer(t, w.Code, w.Header(), w.Body.Bytes()); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: message %q, want %q", tc.method, tc.path, msg, tc.want)
		}
	}
	// A request line ServeMux would not route at all.
	r := httptest.NewRequest("OPTIONS", "/", nil)
	r.URL.Path, r.RequestURI = "*", "*"
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	var body struct{ Error struct{ Message string } }
	if json.Unmarshal(w.Body.Bytes(), &body); w.Code != 404 || body.Error.Message != "not found: no route for *" {
		t.Errorf("OPTIONS *: %d %s", w.Code, w.Body)
	}
}
