package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHealthcheck runs `pmauthority healthcheck` against a server that
// answers 200, one that answers 503, no server, and with bad flags.
func TestHealthcheck(t *testing.T) {
	var status atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(`{"status":"draining"}`))
	}))
	defer ts.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, tc := range []struct {
		name   string
		status int
		args   []string
		code   int
		stderr string
	}{
		{"healthy", 200, []string{"--url", ts.URL + "/healthz"}, 0, ""},
		{"503", 503, []string{"--url", ts.URL + "/healthz"}, 1, `answered 503 Service Unavailable: {"status":"draining"}`},
		{"404", 200, []string{"--url", ts.URL + "/other"}, 1, "answered 404"},
		{"no server", 200, []string{"--url", closed.URL + "/healthz"}, 1, "connection refused"},
		{"not a URL", 200, []string{"--url", "127.0.0.1:8080/healthz"}, 2, "want an http:// or https:// URL"},
		{"timeout", 200, []string{"--timeout", "0"}, 2, "--timeout must be positive"},
		{"argument", 200, []string{"now"}, 2, `unexpected argument "now"`},
		{"help", 200, []string{"-h"}, 0, "usage: pmauthority healthcheck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status.Store(int32(tc.status))
			var out, errb strings.Builder
			code := run(append([]string{"healthcheck"}, tc.args...), nil, &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("healthcheck %q: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.stderr)
			}
			if code == 0 && tc.name == "healthy" && !strings.Contains(out.String(), "200 OK") {
				t.Errorf("healthcheck printed %q", out.String())
			}
		})
	}
}
