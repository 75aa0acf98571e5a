package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/web"
)

// TestWebRoutes checks which requests go to Config.Web: GET and HEAD of
// /, /edit/… and /assets/…; POST / stays the apply endpoint.
func TestWebRoutes(t *testing.T) {
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "web:"+r.Method+" "+r.URL.Path)
	})
	on, logs := newServer(t, Config{Web: pages, LogRequests: true})
	off, _ := newServer(t, Config{})
	for _, tc := range []struct {
		method, path string
		web          bool   // answered by Config.Web when set
		allow        string // the Allow header of a 405 with Web set
	}{
		{"GET", "/", true, ""},
		{"HEAD", "/", true, ""},
		{"GET", "/edit/doc-1", true, ""},
		{"DELETE", "/edit/doc-1", true, ""}, // Web answers 405 itself
		{"GET", "/assets/edit-ABCDEFGH.js", true, ""},
		{"PUT", "/", false, "POST, GET, HEAD"},
		{"GET", "/v1/apply", false, "POST"},
		{"GET", "/healthz", false, ""},
		{"GET", "/editor", false, ""},
		{"GET", "/docs", false, ""},
	} {
		w := httptest.NewRecorder()
		on.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		gotWeb := w.Code == http.StatusTeapot
		if gotWeb != tc.web {
			t.Errorf("%s %s with Web: status %d, body %q; want web=%v", tc.method, tc.path, w.Code, w.Body, tc.web)
		}
		if tc.web && tc.method != "HEAD" && w.Body.String() != "web:"+tc.method+" "+tc.path {
			t.Errorf("%s %s: body %q", tc.method, tc.path, w.Body)
		}
		if tc.allow != "" && (w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != tc.allow) {
			t.Errorf("%s %s: status %d, Allow %q; want 405 with %q", tc.method, tc.path, w.Code, w.Header().Get("Allow"), tc.allow)
		}
		w = httptest.NewRecorder()
		off.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code == http.StatusTeapot {
			t.Errorf("%s %s without Web: answered by a page", tc.method, tc.path)
		}
	}
	// The access log has the status and size the pages answered with.
	if !strings.Contains(logs.String(), `method=GET path=/edit/doc-1 status=418 bytes=19`) {
		t.Errorf("access log: %s", logs)
	}
}

// TestWebAndApplyOnRoot checks the real pages and the apply endpoint
// side by side on /.
func TestWebAndApplyOnRoot(t *testing.T) {
	s, _ := newServer(t, Config{Web: web.Handler()})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(w.Body.String(), "<!doctype html>") {
		t.Errorf("GET /: status %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	w = httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader(reqtest.Seed)))
	if w.Code != 200 || w.Body.String() != reqtest.SeedAnswer {
		t.Errorf("POST /: status %d, body %s", w.Code, w.Body)
	}
}
