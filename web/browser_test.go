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

	"github.com/pmauthority/pmauthority/auth"
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
	runBrowser(t, node, "test/browser.mjs", "http://"+ln.Addr().String(), "")
}

// TestBrowserEditing runs test/browser-editing.mjs (typing next to remote
// cursors and selections, two tabs of one browser, offline typing and
// reconnection, the comments panel; see the script) against a pmauthority
// started here. Skipped as TestBrowser is.
func TestBrowserEditing(t *testing.T) {
	node := needBrowser(t)
	ts := httptest.NewServer(newServer(t))
	defer ts.Close()
	runBrowser(t, node, "test/browser-editing.mjs", ts.URL, "editing")
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
	runBrowser(t, node, "test/browser.mjs", ts.URL+"/collab", "prefix")
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

// runBrowser runs the browser test script against url, its screenshots
// going to the directory sub of $PMA_BROWSER_OUT (default web/test/out).
func runBrowser(t *testing.T, node, script, url, sub string) {
	t.Helper()
	out := filepath.Join(browserOut(), sub)
	run, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, script, "--url", url, "--out", out, "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s timed out", script)
	}
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}

// TestTiptapExample builds client/example-tiptap (Tiptap from npm, in that
// directory's node_modules: npm ci there) and runs test/browser-tiptap.mjs
// against a pmauthority that serves the built example at /tiptap-example/,
// with the example's schema.json (Tiptap StarterKit's) as its default
// schema beside the built-ins. Skipped as TestBrowser is, and without the
// example's node_modules unless PMA_REQUIRE_BROWSER=1.
func TestTiptapExample(t *testing.T) {
	node := needBrowser(t)
	example := filepath.Join("client", "example-tiptap")
	if _, err := os.Stat(filepath.Join(example, "node_modules", "@tiptap", "starter-kit")); err != nil {
		if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s/node_modules missing (npm ci there) and PMA_REQUIRE_BROWSER=1", example)
		}
		t.Skipf("%s/node_modules missing (npm ci there); set PMA_REQUIRE_BROWSER=1 to fail instead", example)
	}
	built := t.TempDir()
	if out, err := exec.Command(node, filepath.Join(example, "build.mjs"), "--outdir", built).CombinedOutput(); err != nil {
		t.Fatalf("build.mjs: %v\n%s", err, out)
	}
	spec, err := os.ReadFile(filepath.Join(example, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	tiptap, err := model.LoadSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]*model.Schema{"tiptap": tiptap}
	reg, err := schemas.NewRegistry(named, "tiptap")
	if err != nil {
		t.Fatal(err)
	}
	auth, err := collab.New(collab.Config{Store: memstore.New(), Schemas: reg.Lookup, DefaultSchema: "tiptap", AutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	srv, err := server.New(server.Config{Collab: auth, Schemas: named, DefaultSchema: "tiptap", Web: web.Handler(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/tiptap-example/", http.StripPrefix("/tiptap-example/", http.FileServer(http.Dir(built))))
	mux.Handle("/", srv)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	runBrowser(t, node, "test/browser-tiptap.mjs", ts.URL, "tiptap")
}

// TestBrowserEdits runs test/browser-edits.mjs (two people typing in the
// demo page while a backend sends edits through POST /docs/{id}/edits;
// see the script) against a pmauthority started here. Skipped as
// TestBrowser is.
func TestBrowserEdits(t *testing.T) {
	node := needBrowser(t)
	ts := httptest.NewServer(newServer(t))
	defer ts.Close()
	runBrowser(t, node, "test/browser-edits.mjs", ts.URL, "edits")
}

// TestBrowserThreads runs test/browser-threads.mjs (a comment thread made,
// replied to, resolved, reopened and edited on two pages of two
// principals with the comment role; see the script) against a pmauthority
// with JWT auth whose document "d" has some text. Skipped as TestBrowser
// is.
func TestBrowserThreads(t *testing.T) {
	node := needBrowser(t)
	secret := []byte("a secret for the browser test, 32 bytes or more")
	srv, a := newAuthServer(t, secret)
	mint := func(sub string, role auth.Role) string {
		tok, err := auth.Mint(secret, auth.NewClaims(sub, "", auth.Grants{{Pattern: "d", Role: role}}, time.Now(), time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ctx := context.Background()
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Steps: [][]byte{[]byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"A shared text to talk about."}]}}`)}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	run, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "test/browser-threads.mjs", "--url", ts.URL,
		"--alice", mint("alice", auth.RoleComment), "--bob", mint("bob", auth.RoleComment), "--admin", mint("ada", auth.RoleAdmin),
		"--out", filepath.Join(browserOut(), "threads"), "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("test/browser-threads.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("test/browser-threads.mjs timed out")
	}
	if err != nil {
		t.Fatalf("test/browser-threads.mjs: %v", err)
	}
}
