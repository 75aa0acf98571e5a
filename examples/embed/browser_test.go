package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestBrowser runs the demo pages' browser test (web/test/browser.mjs: two
// users in headless Chromium create a document from the list page, edit
// it together, comment, reconnect) against the app's /collab/, with the
// image rule on (the script inserts no image). It skips without Chromium,
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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "../../web/test/browser.mjs", "--url", ts.URL+"/collab",
		"--out", out+"/embed", "--chromium", chromium)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("web/test/browser.mjs:\n%s", output)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("web/test/browser.mjs timed out")
	}
	if err != nil {
		t.Fatalf("web/test/browser.mjs: %v", err)
	}
}
