package web_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestClientPackage runs client/test/package.mjs against a pmauthority
// started here: it packs web/client with npm, installs the tarball into a
// scratch app in a temporary directory (its other packages pinned by
// client/test/bundle/package-lock.json), bundles the app with esbuild and
// with rollup, checks that each bundle has one copy of prosemirror-model
// and runs both in node (collab, presence, comments, reconnection, token);
// then it installs the package from its folder (a symlink, as npm install
// ../web/client makes it) and checks that bundling fails without
// preserveSymlinks and has one prosemirror-model with it, and with npm
// install --install-links. It is skipped without node, npm or
// client/test/bundle/node_modules, unless PMA_REQUIRE_BROWSER=1 (CI), which
// makes those a failure.
func TestClientPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	missing := func(what string) {
		t.Helper()
		if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s missing and PMA_REQUIRE_BROWSER=1", what)
		}
		t.Skipf("%s missing; set PMA_REQUIRE_BROWSER=1 to fail instead", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing("npm")
	}
	if _, err := os.Stat(filepath.Join("client", "test", "bundle", "node_modules", "rollup")); err != nil {
		missing("web/client/test/bundle/node_modules (npm ci there)")
	}
	ts := httptest.NewServer(newServer(t))
	defer ts.Close()
	run, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(run, node, "client/test/package.mjs", "--url", ts.URL)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("client/test/package.mjs:\n%s", output)
	if errors.Is(run.Err(), context.DeadlineExceeded) {
		t.Fatal("client/test/package.mjs timed out")
	}
	if err != nil {
		t.Fatalf("client/test/package.mjs: %v", err)
	}
}

// TestClientTypes type-checks client/test/types/app.ts, an app using the
// package's index.d.ts, with the TypeScript pinned in that directory
// (npm ci there). Skipped without it unless PMA_REQUIRE_BROWSER=1.
func TestClientTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := filepath.Join("client", "test", "types")
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(tsc)
	}
	if err != nil {
		if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("node or %s missing (npm ci in %s) and PMA_REQUIRE_BROWSER=1", tsc, dir)
		}
		t.Skipf("node or %s missing (npm ci in %s); set PMA_REQUIRE_BROWSER=1 to fail instead", tsc, dir)
	}
	out, err := exec.Command(node, tsc, "-p", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("tsc -p %s: %v\n%s", dir, err, out)
	}
}
