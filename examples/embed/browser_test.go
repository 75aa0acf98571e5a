package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestBrowser runs two scripts in headless Chromium against the app's
// /collab/: the demo pages' browser test (web/test/browser.mjs: two users
// create a document from the list page, edit it together, comment,
// reconnect; it inserts no image), and refusal.mjs (an image inserted in
// the editor is refused by BeforeSubmit, shown, and dropped). It skips without Chromium,
// node or web/node_modules unless PMA_REQUIRE_BROWSER=1, which makes those
// a failure. Screenshots go to $PMA_BROWSER_OUT/embed (default
// web/test/out/embed).
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const chromium = "/usr/bin/chromium"
	need := func(what, path string) {
		t.Helper()
		if _, err := os.Stat(path); err != nil {
			if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
				t.Fatalf("%s missing (%s) and PMA_REQUIRE_BROWSER=1", what, path)
			}
			t.Skipf("%s missing (%s); set PMA_REQUIRE_BROWSER=1 to fail instead", what, path)
		}
	}
	need("chromium (apt-get install chromium)", chromium)
	node, err := exec.LookPath("node")
	if err != nil {
		need("node", "node")
	}
	need("web/node_modules (npm ci in web/)", "../../web/node_modules/playwright-core")
	out := os.Getenv("PMA_BROWSER_OUT")
	if out == "" {
		out = "../../web/test/out"
	}

	ts := startApp(t, appConfig{})
	for _, script := range []struct{ name, path string }{
		{"pages", "../../web/test/browser.mjs"},
		{"refusal", "refusal.mjs"},
	} {
		t.Run(script.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dir := out + "/embed"
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, node, script.path, "--url", ts.URL+"/collab", "--out", dir, "--chromium", chromium)
			cmd.WaitDelay = 5 * time.Second
			output, err := cmd.CombinedOutput()
			t.Logf("%s:\n%s", script.path, output)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatalf("%s timed out", script.path)
			}
			if err != nil {
				t.Fatalf("%s: %v", script.path, err)
			}
		})
	}
}
