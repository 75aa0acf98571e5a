package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Chromium is where Debian's chromium package puts the browser that the
// browser tests drive.
const Chromium = "/usr/bin/chromium"

// NeedBrowser skips t, in -short mode or when Chromium, node or the npm
// packages of web/ (in webDir/node_modules) are missing, unless
// PMA_REQUIRE_BROWSER=1 makes a missing one fail it instead. It returns
// the path of node.
func NeedBrowser(t testing.TB, webDir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short")
	}
	need := func(what, path string) {
		t.Helper()
		if _, err := os.Stat(path); err != nil {
			if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
				t.Fatalf("%s missing (%s) and PMA_REQUIRE_BROWSER=1", what, path)
			}
			t.Skipf("%s missing (%s); set PMA_REQUIRE_BROWSER=1 to fail instead", what, path)
		}
	}
	need("chromium (apt-get install chromium)", Chromium)
	node, err := exec.LookPath("node")
	if err != nil {
		need("node", "node")
	}
	need("web/node_modules (npm ci in web/)", filepath.Join(webDir, "node_modules", "playwright-core"))
	return node
}
