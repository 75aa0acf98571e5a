package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/testutil"
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
	const chromium = testutil.Chromium
	node := testutil.NeedBrowser(t, "../../web")
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
