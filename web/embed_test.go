package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, method, path string, header http.Header) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, r)
	return w.Result()
}

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assetRef matches the pages' references to their assets, which are
// relative to the page (so that the pages work under any prefix).
var assetRef = regexp.MustCompile(`(?:src|href)="((?:\.\./)?assets/[^"]+)"`)

// absoluteRef matches a reference to an absolute path or URL.
var absoluteRef = regexp.MustCompile(`(?:src|href)="(?:/|[a-z]+://)`)

// resolve is the path that ref, found in the page at path page, refers to.
func resolve(t *testing.T, page, ref string) string {
	t.Helper()
	u, err := url.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Path: page}).ResolveReference(u).Path
}

func TestPages(t *testing.T) {
	for _, tc := range []struct{ path, file, script string }{
		{"/", "dist/index.html", `"assets/list-`},
		{"/edit/some-doc", "dist/edit.html", `"../assets/edit-`},
		{"/edit/a%20b", "dist/edit.html", `"../assets/edit-`},
		{"/edit/team-a%2Fnotes", "dist/edit.html", `"../assets/edit-`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := get(t, "GET", tc.path, nil)
			body := readAll(t, res)
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			want, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, want) {
				t.Errorf("body is not %s", tc.file)
			}
			for k, v := range map[string]string{
				"Content-Type":           "text/html; charset=utf-8",
				"Cache-Control":          "no-cache",
				"X-Content-Type-Options": "nosniff",
			} {
				if got := res.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			refs := assetRef.FindAllStringSubmatch(string(body), -1)
			if len(refs) != 2 || !strings.Contains(string(body), tc.script) {
				t.Fatalf("page references %v, want one script %s… and one stylesheet", refs, tc.script)
			}
			if m := absoluteRef.FindString(string(body)); m != "" {
				t.Errorf("page has an absolute reference %s…", m)
			}
			for _, ref := range refs {
				checkAsset(t, resolve(t, tc.path, ref[1]))
			}
		})
	}
}

// checkAsset fetches an asset the pages reference and checks its type,
// caching and body against dist/.
func checkAsset(t *testing.T, path string) {
	t.Helper()
	res := get(t, "GET", path, nil)
	body := readAll(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%s: status %d", path, res.StatusCode)
	}
	wantType := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[filepath.Ext(path)]
	if got := res.Header.Get("Content-Type"); wantType == "" || got != wantType {
		t.Errorf("%s: Content-Type %q, want %q", path, got, wantType)
	}
	if got := res.Header.Get("Cache-Control"); got != cacheImmutable {
		t.Errorf("%s: Cache-Control %q, want %q", path, got, cacheImmutable)
	}
	want, err := os.ReadFile(filepath.Join("dist", filepath.FromSlash(strings.TrimPrefix(path, "/"))))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) || len(body) == 0 {
		t.Errorf("%s: body (%d bytes) is not the dist file (%d bytes)", path, len(body), len(want))
	}
}

func TestGzipAndRevalidation(t *testing.T) {
	page := string(readAll(t, get(t, "GET", "/edit/x", nil)))
	var js string
	for _, m := range assetRef.FindAllStringSubmatch(page, -1) {
		if strings.HasSuffix(m[1], ".js") {
			js = resolve(t, "/edit/x", m[1])
		}
	}
	if js == "" {
		t.Fatal("no script in the editor page")
	}
	plain := readAll(t, get(t, "GET", js, nil))

	res := get(t, "GET", js, http.Header{"Accept-Encoding": {"br, gzip;q=0.8"}})
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("Content-Encoding %q, Vary %q", res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unzipped, plain) {
		t.Error("gzipped body does not decompress to the plain one")
	}
	gzTag := res.Header.Get("ETag")
	plainTag := get(t, "GET", js, nil).Header.Get("ETag")
	if gzTag == "" || plainTag == "" || gzTag == plainTag {
		t.Errorf("ETags plain %q, gzip %q: want two different ones", plainTag, gzTag)
	}
	if res := get(t, "GET", js, http.Header{"Accept-Encoding": {"gzip;q=0"}}); res.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 got a gzipped answer")
	}

	res = get(t, "GET", "/", nil)
	tag := res.Header.Get("ETag")
	res = get(t, "GET", "/", http.Header{"If-None-Match": {tag}})
	if res.StatusCode != http.StatusNotModified || len(readAll(t, res)) != 0 {
		t.Errorf("If-None-Match %s: status %d, want 304 without a body", tag, res.StatusCode)
	}
}

func TestMethodsAndNotFound(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"HEAD", "/", 200},
		{"HEAD", "/assets/licenses.txt", 200},
		{"POST", "/", 405},
		{"PUT", "/edit/x", 405},
		{"GET", "/edit/", 404},
		{"GET", "/edit/a/b", 404},
		{"GET", "/edit/a%00b", 404},
		{"GET", "/edit/%FF", 404},
		{"GET", "/edit/%2E%2E", 404},
		{"GET", "/edit/My%20notes%20%2F%20caf%C3%A9", 200},
		{"GET", "/assets/", 404},
		{"GET", "/assets/nope.js", 404},
		{"GET", "/assets/../embed.go", 404},
		{"GET", "/index.html", 404},
		{"GET", "/docs", 404},
	} {
		res := get(t, tc.method, tc.path, nil)
		body := readAll(t, res)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
		if tc.method == "HEAD" && len(body) != 0 {
			t.Errorf("HEAD %s: %d bytes of body", tc.path, len(body))
		}
		if tc.status == 405 && res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", tc.method, tc.path, res.Header.Get("Allow"))
		}
	}
	// Unknown page paths, assets and invalid names included, answer an
	// HTML page linking to the list page.
	for path, home := range map[string]string{"/edit/": `href="../"`, "/edit/a/b": `href="../../"`, "/index.html": `href="./"`,
		"/edit/a%00b": `href="../"`, "/assets/nope.js": `href="../"`} {
		res := get(t, "GET", path, nil)
		body := readAll(t, res)
		if ct := res.Header.Get("Content-Type"); res.StatusCode != 404 || ct != "text/html; charset=utf-8" || !bytes.Contains(body, []byte(home)) {
			t.Errorf("GET %s: %d %q %q, want 404 text/html with %s", path, res.StatusCode, ct, body, home)
		}
	}
	res := get(t, "GET", "/assets/licenses.txt", nil)
	if ct := res.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("licenses.txt: Content-Type %q", ct)
	}
	if cc := res.Header.Get("Cache-Control"); cc != cacheAsset {
		t.Errorf("licenses.txt (not hashed): Cache-Control %q, want %q", cc, cacheAsset)
	}
	if body := readAll(t, res); !bytes.Contains(body, []byte("prosemirror-view")) {
		t.Error("licenses.txt does not name prosemirror-view")
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip", true},
		{"GZIP;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0.0", false},
		{"br", false},
		{"x-gzip", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Accept-Encoding", tc.header)
		}
		if got := acceptsGzip(r); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// needNode skips the test when node or web/node_modules is missing,
// unless PMA_REQUIRE_BROWSER=1 (CI), which makes that a failure.
func needNode(t *testing.T) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node"
	} else if _, err := os.Stat("node_modules/esbuild"); err != nil {
		missing = "web/node_modules (npm ci in web/)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("PMA_REQUIRE_BROWSER") == "1" {
		t.Fatalf("%s missing and PMA_REQUIRE_BROWSER=1", missing)
	}
	t.Skipf("%s missing; set PMA_REQUIRE_BROWSER=1 to fail instead", missing)
}

// TestDistUpToDate fails when the committed dist/ is not a fresh build of
// src/ (check-dist.sh).
func TestDistUpToDate(t *testing.T) {
	needNode(t)
	out, err := exec.Command("sh", "check-dist.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("check-dist.sh: %v\n%s", err, out)
	}
}

// TestClient runs the unit tests of the JavaScript client
// (test/client.test.mjs: the protocol against a scripted fake server)
// and of the history panel's grouping and decorations
// (test/history.test.mjs).
func TestClient(t *testing.T) {
	needNode(t)
	for _, script := range []string{"test/client.test.mjs", "test/history.test.mjs"} {
		out, err := exec.Command("node", "--test", script).CombinedOutput()
		if err != nil {
			t.Fatalf("node --test %s: %v\n%s", script, err, out)
		}
	}
}

func TestBrokenEmbed(t *testing.T) {
	if _, err := newHandler(os.DirFS("testdata-missing")); err == nil {
		t.Fatal("newHandler of an empty file system: no error")
	}
}
