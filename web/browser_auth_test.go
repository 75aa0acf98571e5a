package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/auth"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/web"
)

// TestBrowserAuth runs test/browser-auth.mjs against a pmauthority with
// an auth.Policy: a page opened with a read token (#token=…) is
// read-only, one with an edit token edits, each page shows its token's
// name, pages and the list page count users alike, and tokens are
// replaced in band (the script mints its own with the secret). Skipped as TestBrowser is.
func TestBrowserAuth(t *testing.T) {
	node := needBrowser(t)
	secret := []byte("a secret for the browser test, 32 bytes or more")
	srv, a := newAuthServer(t, secret)
	mint := func(sub, role string) string {
		// The pages show the token's name (else its sub: sam's, minted
		// by the script, has none).
		name := map[string]string{"rita": "Rita Reader", "ed": "Ed Editor", "ada": "Ada Admin"}[sub]
		tok, err := auth.Mint(secret, auth.NewClaims(sub, name, auth.Grants{{Pattern: "d", Role: map[string]auth.Role{
			"read": auth.RoleRead, "edit": auth.RoleEdit, "admin": auth.RoleAdmin}[role]}}, time.Now(), time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
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
	// The document exists before the reader opens it (creating needs edit).
	if _, err := a.Get(context.Background(), "d", ""); err != nil {
		t.Fatal(err)
	}
	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "test/browser-auth.mjs", "--url", "http://"+ln.Addr().String(),
		"--read", mint("rita", "read"), "--edit", mint("ed", "edit"), "--admin", mint("ada", "admin"), "--secret", string(secret),
		"--out", filepath.Join(browserOut(), "auth"), "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("test/browser-auth.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("test/browser-auth.mjs timed out")
	}
	if err != nil {
		t.Fatalf("test/browser-auth.mjs: %v", err)
	}
}

// newAuthServer is a pmauthority with the demo pages over memstore whose
// policy takes HS256 tokens signed with secret, and its authority, closed
// when the test ends.
func newAuthServer(t *testing.T, secret []byte) (*server.Server, *collab.Authority) {
	t.Helper()
	key, err := auth.SecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := auth.New(auth.Config{Keys: []auth.Key{key}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := collab.New(collab.Config{
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
	t.Cleanup(func() { a.Close() })
	srv, err := server.New(server.Config{Collab: a, Web: web.Handler(), Policy: policy, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return srv, a
}

// TestBrowserClient runs test/browser-client.mjs against a pmauthority
// with an auth.Policy, on the page of client/test/browser (bundled here,
// served at /client-test/): onAuthenticationFailed for a refused token
// (401 and 403) with no retries until setToken gives a good one, onSynced,
// hasUnsyncedChanges and onUnsyncedChanges, and the beforeunload warning
// while a change is unsaved. Skipped as TestBrowser is.
func TestBrowserClient(t *testing.T) {
	node := needBrowser(t)
	secret := "a secret for the browser test, 32 bytes or more"
	srv, _ := newAuthServer(t, []byte(secret))
	built := t.TempDir()
	if out, err := exec.Command(node, filepath.Join("client", "test", "browser", "build.mjs"), "--outdir", built).CombinedOutput(); err != nil {
		t.Fatalf("client/test/browser/build.mjs: %v\n%s", err, out)
	}
	mux := http.NewServeMux()
	mux.Handle("/client-test/", http.StripPrefix("/client-test/", http.FileServer(http.Dir(built))))
	mux.Handle("/", srv)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "test/browser-client.mjs", "--url", ts.URL, "--secret", secret,
		"--out", filepath.Join(browserOut(), "client"), "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("test/browser-client.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("test/browser-client.mjs timed out")
	}
	if err != nil {
		t.Fatalf("test/browser-client.mjs: %v", err)
	}
}

// TestBrowserHistory runs test/browser-history.mjs (the editor page's
// history panel: two authors' entries, the changes since a version in
// their colours, downloads, a restore; see the script) against a
// pmauthority with an auth.Policy, the script minting its tokens with the
// secret. Skipped as TestBrowser is.
func TestBrowserHistory(t *testing.T) {
	node := needBrowser(t)
	secret := "a secret for the browser test, 32 bytes or more"
	srv, _ := newAuthServer(t, []byte(secret))
	ts := httptest.NewServer(srv)
	defer ts.Close()
	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "test/browser-history.mjs", "--url", ts.URL, "--secret", secret,
		"--out", filepath.Join(browserOut(), "history"), "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("test/browser-history.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("test/browser-history.mjs timed out")
	}
	if err != nil {
		t.Fatalf("test/browser-history.mjs: %v", err)
	}
}

// TestBrowserRoles runs test/browser-roles.mjs (the editor page with a
// read token, a comment token, a token for another document and a
// malformed one: the menu disabled, the hint, commenting without typing,
// the refusal shown without retries; see the script) against a
// pmauthority with an auth.Policy. Skipped as TestBrowser is.
func TestBrowserRoles(t *testing.T) {
	node := needBrowser(t)
	secret := "a secret for the browser test, 32 bytes or more"
	srv, _ := newAuthServer(t, []byte(secret))
	ts := httptest.NewServer(srv)
	defer ts.Close()
	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "test/browser-roles.mjs", "--url", ts.URL, "--secret", secret,
		"--out", filepath.Join(browserOut(), "roles"), "--chromium", chromiumPath)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("test/browser-roles.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("test/browser-roles.mjs timed out")
	}
	if err != nil {
		t.Fatalf("test/browser-roles.mjs: %v", err)
	}
}
