package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWalkthrough follows a newcomer from a clone to a Tiptap app editing
// through a proxy, as one chain, each step as the docs give it:
//
//  1. the binary, by the go install line of the README's "Getting the
//     binary" (into a temporary GOBIN), and its `version`;
//  2. served as web/client/example-tiptap/README.md's serve line says
//     (StarterKit's schema as the default), run by that binary, with the
//     production example's --trusted-proxies and --allow-origin for the
//     app's origin;
//  3. behind the repository's nginx configuration on a non-default port
//     (startNginx, as TestNginx);
//  4. the client package packed (npm pack) and installed from its tarball
//     into a fresh copy of the Tiptap example app (its pinned packages,
//     not the folder link), bundled by its build.mjs and served from an
//     origin of its own;
//  5. two Tiptap editors in chromium editing one document through nginx
//     (web/test/browser-tiptap.mjs --app).
//
// The README's other examples are run by their own tests (TestDocExamples,
// TestREADMECurl, TestEditsDoc …). Skipped with -short; without nginx,
// chromium or the npm packages it skips, unless PMA_REQUIRE_NGINX=1 or
// PMA_REQUIRE_BROWSER=1 (scripts/test sets both), which make that a failure.
func TestWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, an app, and runs nginx and chromium (-short)")
	}
	nginx := needNginx(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "web", "client", "example-tiptap")
	missing := func(what string) {
		t.Helper()
		if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s missing and PMA_REQUIRE_BROWSER=1", what)
		}
		t.Skipf("%s missing; set PMA_REQUIRE_BROWSER=1 to fail instead", what)
	}
	need := func(path, what string) {
		t.Helper()
		if _, err := os.Stat(path); err != nil {
			missing(what)
		}
	}
	need("/usr/bin/chromium", "chromium (Debian: apt-get install chromium)")
	need(filepath.Join(root, "web", "node_modules", "playwright-core"), "web/node_modules (npm ci there)")
	need(filepath.Join(example, "node_modules", "@tiptap", "starter-kit"), "web/client/example-tiptap/node_modules (npm ci there: it fills npm's cache)")
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(tool)
		}
	}
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s$ %s %s: %v\n%s", dir, name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// 1. The binary, as the README says.
	install := codeLine(t, filepath.Join(root, "README.md"), "## Getting the binary", "go install ")
	gobin := t.TempDir()
	run(root, []string{"GOBIN=" + gobin}, "sh", "-c", install)
	bin := filepath.Join(gobin, "pmauthority")
	if out := run(root, nil, bin, "version"); !strings.HasPrefix(out, "pmauthority ") {
		t.Errorf("pmauthority version: %q, want it to start with \"pmauthority \"", out)
	}

	// 4 (first, for its origin). The app's own server; the files come
	// below.
	built := t.TempDir()
	appSrv := httptest.NewServer(http.FileServer(http.Dir(built)))
	defer appSrv.Close()

	// 2. Served as the Tiptap example's README says.
	serveLine := codeLine(t, filepath.Join(example, "README.md"), "## The schema", "go run ./cmd/pmauthority serve ")
	args := append(strings.Fields(strings.TrimPrefix(serveLine, "go run ./cmd/pmauthority ")),
		"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "json", "--drain-delay", "0",
		"--trusted-proxies", "127.0.0.1/32", "--allow-origin", strings.TrimPrefix(appSrv.URL, "http://"))
	serve := exec.Command(bin, args...)
	serve.Dir = root
	backend := startBinary(t, serve)

	// 3. Behind the repository's nginx configuration.
	conf, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}
	front := "http://" + startNginx(t, nginx, conf, backend)

	// 4. The client from its tarball in a fresh copy of the app.
	packs := t.TempDir()
	tarball := strings.TrimSpace(lastLine(run(filepath.Join(root, "web", "client"),
		[]string{"npm_config_update_notifier=false"}, "npm", "pack", "--pack-destination", packs, "--loglevel=error")))
	if !strings.HasSuffix(tarball, ".tgz") {
		t.Fatalf("npm pack printed %q, want the tarball's name", tarball)
	}
	app := filepath.Join(t.TempDir(), "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"main.js", "index.html", "build.mjs"} {
		data, err := os.ReadFile(filepath.Join(example, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withoutClient(t, filepath.Join(example, "package.json"), filepath.Join(app, "package.json"))
	withoutClient(t, filepath.Join(example, "package-lock.json"), filepath.Join(app, "package-lock.json"))
	npm := []string{"--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"}
	env := []string{"npm_config_update_notifier=false"}
	run(app, env, "npm", append([]string{"ci"}, npm...)...)
	run(app, env, "npm", append([]string{"install", filepath.Join(packs, tarball)}, npm...)...)
	if fi, err := os.Lstat(filepath.Join(app, "node_modules", "pmauthority-client")); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("node_modules/pmauthority-client: %v (a link: %v), want the tarball's copy", err, fi != nil && fi.Mode()&os.ModeSymlink != 0)
	}
	run(app, nil, "node", "build.mjs", "--outdir", built)

	// 5. Two Tiptap editors through nginx.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := exec.CommandContext(ctx, "node", "test/browser-tiptap.mjs", "--url", front, "--app", appSrv.URL,
		"--out", t.TempDir(), "--chromium", "/usr/bin/chromium")
	browser.Dir = filepath.Join(root, "web")
	browser.WaitDelay = 5 * time.Second
	out, err := browser.CombinedOutput()
	t.Logf("browser-tiptap.mjs:\n%s", out)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("browser-tiptap.mjs timed out")
	}
	if err != nil {
		t.Fatalf("browser-tiptap.mjs: %v", err)
	}
}

// codeLine returns the first line of an indented or fenced code block in
// the Markdown file's section (from the heading to the next heading of
// any level) that starts with prefix, without its indentation.
func codeLine(t *testing.T, file, heading, prefix string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = line == heading
			continue
		}
		if in && strings.HasPrefix(strings.TrimSpace(line), prefix) {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("%s: no line starting with %q under %q", file, prefix, heading)
	return ""
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// withoutClient copies the npm package file (package.json or
// package-lock.json) from to to without pmauthority-client, which the
// example links from its folder ("file:.."): the app installs it from the
// tarball instead.
func withoutClient(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var pkg map[string]any
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	drop := func(m any, keys ...string) {
		if m, ok := m.(map[string]any); ok {
			for _, k := range keys {
				delete(m, k)
			}
		}
	}
	drop(pkg["dependencies"], "pmauthority-client")
	if pkgs, ok := pkg["packages"].(map[string]any); ok {
		drop(pkgs, "..", "node_modules/pmauthority-client")
		if root, ok := pkgs[""].(map[string]any); ok {
			drop(root["dependencies"], "pmauthority-client")
		}
	}
	out, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
