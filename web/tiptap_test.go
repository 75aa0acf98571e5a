package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestClientTiptapTypes type-checks client/test/tiptap-types/app.ts, a
// Tiptap app using pmauthority-client/tiptap's tiptap.d.ts, with the
// TypeScript of client/test/types and the Tiptap of client/example-tiptap
// (npm ci in both). Skipped without them unless PMA_REQUIRE_BROWSER=1.
func TestClientTiptapTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := filepath.Join("client", "test", "tiptap-types")
	tsc := filepath.Join("client", "test", "types", "node_modules", "typescript", "bin", "tsc")
	node, err := exec.LookPath("node")
	for _, need := range []string{tsc, filepath.Join("client", "example-tiptap", "node_modules", "@tiptap", "starter-kit")} {
		if err == nil {
			_, err = os.Stat(need)
		}
	}
	if err != nil {
		if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%v (npm ci in client/test/types and client/example-tiptap) and PMA_REQUIRE_BROWSER=1", err)
		}
		t.Skipf("%v (npm ci in client/test/types and client/example-tiptap); set PMA_REQUIRE_BROWSER=1 to fail instead", err)
	}
	out, err := exec.Command(node, tsc, "-p", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("tsc -p %s: %v\n%s", dir, err, out)
	}
}

// TestExportSchema runs the unit tests of exportSchema
// (test/tiptap-schema.test.mjs, on prosemirror-model schemas).
func TestExportSchema(t *testing.T) {
	_, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("node_modules", "prosemirror-model"))
	}
	if err != nil {
		if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%v (npm ci in web/) and PMA_REQUIRE_BROWSER=1", err)
		}
		t.Skipf("%v (npm ci in web/); set PMA_REQUIRE_BROWSER=1 to fail instead", err)
	}
	out, err := exec.Command("node", "--test", "test/tiptap-schema.test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test test/tiptap-schema.test.mjs: %v\n%s", err, out)
	}
}
