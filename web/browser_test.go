package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/web"
)

const chromiumPath = testutil.Chromium

// TestBrowser runs test/browser.mjs (two users editing one document in
// headless Chromium, see the script) against a pmauthority started here:
// the collab authority over memstore, the WebSocket protocol and the demo
// pages. It is skipped without Chromium, node or web/node_modules, unless
// PMA_REQUIRE_BROWSER=1 (CI), which makes those a failure. Screenshots go
// to $PMA_BROWSER_OUT, default web/test/out.
func TestBrowser(t *testing.T) {
	node := needBrowser(t)
	srv := newServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	runBrowser(t, node, "http://"+ln.Addr().String(), "")
}

// TestBrowserUnderPrefix runs test/browser.mjs against the pages, the
// collab API and the WebSocket mounted under /collab/ of another mux with
// http.StripPrefix, as an embedding app does: the pages' URLs are relative,
// so they work there unchanged. The mux answers 404 for everything outside
// /collab/, so a URL that escaped the prefix fails the script (it counts
// every answer of 400 or more as an error).
func TestBrowserUnderPrefix(t *testing.T) {
	node := needBrowser(t)
	mux := http.NewServeMux()
	mux.Handle("/collab/", http.StripPrefix("/collab", newServer(t)))
	mux.Handle("/", http.NotFoundHandler())
	ts := httptest.NewServer(mux)
	defer ts.Close()
	runBrowser(t, node, ts.URL+"/collab", "prefix")
}

// needBrowser skips the test without Chromium, node or web/node_modules,
// unless PMA_REQUIRE_BROWSER=1, and returns the path of node.
func needBrowser(t *testing.T) string { return testutil.NeedBrowser(t, ".") }

// newServer is a pmauthority with the demo pages over memstore, closed
// when the test ends.
func newServer(t *testing.T) *server.Server {
	t.Helper()
	auth, err := collab.New(collab.Config{
		Store: memstore.New(),
		Schemas: func(name string) (*model.Schema, bool) {
			sc, err := schemas.Get(name)
			return sc, err == nil
		},
		AutoCreate: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	srv, err := server.New(server.Config{Collab: auth, Web: web.Handler(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// browserOut returns the directory of the screenshots: $PMA_BROWSER_OUT,
// default web/test/out.
func browserOut() string {
	if out := os.Getenv("PMA_BROWSER_OUT"); out != "" {
		return out
	}
	return filepath.Join("test", "out")
}

// runBrowser runs test/browser.mjs against url, its screenshots going to
// the directory sub of $PMA_BROWSER_OUT (default web/test/out).
func runBrowser(t *testing.T, node, url, sub string) {
	t.Helper()
	out := filepath.Join(browserOut(), sub)
	run, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "test/browser.mjs", "--url", url, "--out", out, "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("test/browser.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("test/browser.mjs timed out")
	}
	if err != nil {
		t.Fatalf("test/browser.mjs: %v", err)
	}
}
