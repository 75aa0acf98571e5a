package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/internal/docid"
)

//go:embed dist
var dist embed.FS

// The headers of the pages: scripts only from this origin; inline styles
// are needed by the editor's decorations (remote selections).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src * data: blob:; connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

// Cache-Control values. Hashed asset names change with their content.
const (
	cachePage      = "no-cache" // revalidated with the ETag on every load
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheAsset     = "public, max-age=3600"
)

// hashedName matches the names esbuild gives the bundles (name-HASH.ext).
var hashedName = regexp.MustCompile(`-[A-Z0-9]{8}\.(js|css)$`)

// file is one embedded file, ready to serve.
type file struct {
	name    string
	body    []byte
	gzipped []byte // nil when compression does not pay
	header  http.Header
	gzTag   string // ETag of the gzipped variant
}

type handler struct {
	index, edit *file
	assets      map[string]*file // by name under assets/
}

var load = sync.OnceValues(func() (*handler, error) { return newHandler(dist) })

// Handler returns the handler of the demo pages (see the package doc).
// It answers 404 for any other path and 405 for methods other than GET
// and HEAD; the caller routes only the pages' paths to it.
func Handler() http.Handler {
	h, err := load()
	if err != nil {
		// The embedded files are part of the binary: a failure here is a
		// broken build, which the package's tests catch.
		msg := "web: the embedded pages are broken: " + err.Error()
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, msg, http.StatusInternalServerError)
		})
	}
	return h
}

func newHandler(fsys fs.FS) (*handler, error) {
	h := &handler{assets: map[string]*file{}}
	var err error
	if h.index, err = readFile(fsys, "dist/index.html", cachePage); err != nil {
		return nil, err
	}
	if h.edit, err = readFile(fsys, "dist/edit.html", cachePage); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(fsys, "dist/assets")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		cache := cacheAsset
		if hashedName.MatchString(e.Name()) {
			cache = cacheImmutable
		}
		f, err := readFile(fsys, "dist/assets/"+e.Name(), cache)
		if err != nil {
			return nil, err
		}
		h.assets[e.Name()] = f
	}
	return h, nil
}

func readFile(fsys fs.FS, name, cache string) (*file, error) {
	body, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	tag := base64.RawURLEncoding.EncodeToString(sum[:12])
	f := &file{name: path.Base(name), body: body, header: http.Header{}}
	ext := path.Ext(name)
	f.header.Set("Content-Type", contentType(ext))
	f.header.Set("Cache-Control", cache)
	f.header.Set("ETag", `"`+tag+`"`)
	f.header.Set("X-Content-Type-Options", "nosniff")
	if ext == ".html" {
		f.header.Set("Content-Security-Policy", contentSecurityPolicy)
		f.header.Set("Referrer-Policy", "same-origin")
	}
	if len(body) >= 1024 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body)*9/10 {
			f.gzipped = buf.Bytes()
			f.gzTag = `"` + tag + `-gz"`
		}
	}
	return f, nil
}

func contentType(ext string) string {
	switch ext {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".txt":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := h.route(r.URL.EscapedPath()) // a document name's %2F stays in its segment
	if f == nil {
		notFound(w, r.URL.Path)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	for k, v := range f.header {
		hdr[k] = v
	}
	body := f.body
	if f.gzipped != nil {
		hdr.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body = f.gzipped
			hdr.Set("Content-Encoding", "gzip")
			hdr.Set("ETag", f.gzTag)
		}
	}
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

// notFound answers 404 with an HTML page linking to the list page
// (relative to p, so that it works under any prefix): the answer of every
// unknown page path, assets and /edit/ of an invalid name included (API
// paths get the server's JSON 404).
func notFound(w http.ResponseWriter, p string) {
	home := strings.Repeat("../", strings.Count(strings.TrimPrefix(p, "/"), "/"))
	if home == "" {
		home = "./"
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", contentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found · pmauthority</title>`+
		`<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>`+
		`<body style="font: 15px/1.5 system-ui, sans-serif; color: #1f2328; max-width: 640px; margin: 48px auto; padding: 0 20px">`+
		`<h1 style="font-size: 20px">Page not found</h1><p>There is no page here. Documents open at <code>edit/NAME</code>.</p>`+
		`<p><a href="`+home+`">All documents</a></p></body></html>`)
}

func (h *handler) route(p string) *file {
	switch {
	case p == "/":
		return h.index
	case strings.HasPrefix(p, "/edit/"):
		// One segment (escaped: a name may hold %2F) that is a valid
		// document id once unescaped.
		if seg := p[len("/edit/"):]; !strings.Contains(seg, "/") {
			if id, err := url.PathUnescape(seg); err == nil && docid.Check(id) == nil {
				return h.edit
			}
		}
	case strings.HasPrefix(p, "/assets/"):
		return h.assets[p[len("/assets/"):]]
	}
	return nil
}

// acceptsGzip tells whether the request's Accept-Encoding allows gzip
// (a q=0 refuses it).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
