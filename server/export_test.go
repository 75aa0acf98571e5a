package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// exportSteps replace the empty paragraph of a new basic document with a
// heading, a paragraph with marks and characters to escape, and a list.
const exportSteps = `{"stepType":"replace","from":0,"to":2,"slice":{"content":[` +
	`{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"Title"}]},` +
	`{"type":"paragraph","content":[{"type":"text","text":"a <b>&"},{"type":"text","marks":[{"type":"em"}],"text":"*em*"},` +
	`{"type":"text","marks":[{"type":"link","attrs":{"href":"javascript:alert(1)","title":"\"x\""}}],"text":"l"}]},` +
	`{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"i"}]}]}]}]}}`

func TestExportRoute(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	ctx := context.Background()
	if _, err := e.auth.Submit(ctx, "d", "", collab.Submission{Version: 0, Steps: [][]byte{[]byte(exportSteps)}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ format, contentType, body string }{
		{"text", "text/plain; charset=utf-8", "Title\n\na <b>&*em*l\n\ni"},
		{"markdown", "text/markdown; charset=utf-8", "## Title\n\na <b>&*\\*em\\**[l](javascript:alert\\(1\\) \"\\\"x\\\"\")\n\n* i"},
		{"html", "text/html; charset=utf-8", `<h2>Title</h2><p>a &lt;b&gt;&amp;<em>*em*</em><a title="&quot;x&quot;">l</a></p><ul><li><p>i</p></li></ul>`},
	} {
		for _, path := range []string{"/docs/d/export", "/docs/d/export/"} {
			w := e.serve(defaultIP, "GET", path+"?format="+tc.format, "", nil)
			if w.Code != http.StatusOK || w.Body.String() != tc.body {
				t.Errorf("%s %s: %d %q\nwant %q", path, tc.format, w.Code, w.Body, tc.body)
			}
			if ct := w.Header().Get("Content-Type"); ct != tc.contentType {
				t.Errorf("%s: Content-Type %q, want %q", tc.format, ct, tc.contentType)
			}
			if w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: no nosniff", tc.format)
			}
			if csp := w.Header().Get("Content-Security-Policy"); (tc.format == "html") != strings.Contains(csp, "script-src 'none'") {
				t.Errorf("%s: Content-Security-Policy %q", tc.format, csp)
			}
		}
	}
}

func TestExportRouteErrors(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	ctx := context.Background()
	huge := `{"stepType":"replace","from":0,"to":2,"slice":{"content":[{"type":"heading","attrs":{"level":5000}}]}}`
	if _, err := e.auth.Submit(ctx, "h", "", collab.Submission{Version: 0, Steps: [][]byte{[]byte(huge)}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		status int
		msg    string
	}{
		{"/docs/h/export?format=pdf", 400, `unknown export format "pdf" (want text, markdown or html)`},
		{"/docs/h/export?format=", 400, `unknown export format "" (want text, markdown or html)`},
		{"/docs/h/export", 400, `missing query parameter "format": want text, markdown or html`},
		{"/docs/nope/export?format=text", 404, `collab: "nope": document not found`},
		{"/docs/h/export?format=markdown", 422, `document "h" cannot be exported as markdown: markdown export: heading level 5000 out of range`},
	} {
		status, body := e.request(t, "GET", tc.target, "")
		if _, msg := checkAnswer(t, status, http.Header{"Content-Type": {jsonType}, "Content-Length": {strconv.Itoa(len(body))}}, []byte(body)); status != tc.status || msg != tc.msg {
			t.Errorf("GET %s: %d %s, want %d %q", tc.target, status, body, tc.status, tc.msg)
		}
	}
	// The heading level is fine for text and HTML.
	if w := e.serve(defaultIP, "GET", "/docs/h/export?format=html", "", nil); w.Code != 200 || w.Body.String() != "<h5000></h5000>" {
		t.Errorf("html: %d %q", w.Code, w.Body)
	}
	// An export creates nothing.
	if ok, err := e.auth.Exists(ctx, "nope"); err != nil || ok {
		t.Errorf("nope exists after its export: %v %v", ok, err)
	}
}

// TestExportVersion checks that &version=N exports the document at N, with
// the statuses of GET /docs/{id}?version=N.
func TestExportVersion(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	e := newCollab(t, Config{}, collab.Config{Store: st})
	typeInto(t, e, "d", "abcde")
	for v := range 6 {
		w := e.serve(defaultIP, "GET", fmt.Sprintf("/docs/d/export?format=text&version=%d", v), "", nil)
		if w.Code != http.StatusOK || w.Body.String() != "abcde"[:v] {
			t.Errorf("text at version %d: %d %q, want %q", v, w.Code, w.Body, "abcde"[:v])
		}
	}
	if w := e.serve(defaultIP, "GET", "/docs/d/export?version=2&format=html", "", nil); w.Code != http.StatusOK || w.Body.String() != "<p>ab</p>" {
		t.Errorf("html at version 2: %d %q", w.Code, w.Body)
	}
	if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: 4, Doc: []byte(docText("abcd")), Meta: []byte(`{"comments":[]}`)}, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		status int
		msg    string
	}{
		{"/docs/d/export?format=text&version=3", 410, "History no longer available"},
		{"/docs/d/export?format=text&version=6", 400, "Invalid version 6"},
		{"/docs/d/export?format=text&version=-1", 400, "Not a non-negative integer"},
		{"/docs/d/export?format=text&version=", 400, "Not a non-negative integer"},
		{"/docs/nope/export?format=text&version=0", 404, "document not found"},
		{"/docs/d/export?format=pdf&version=4", 400, "unknown export format"},
	} {
		status, body := e.request(t, "GET", tc.target, "")
		if status != tc.status || !strings.Contains(body, tc.msg) {
			t.Errorf("GET %s: %d %s, want %d %q", tc.target, status, body, tc.status, tc.msg)
		}
	}
	if w := e.serve(defaultIP, "GET", "/docs/d/export?format=text&version=4", "", nil); w.Code != http.StatusOK || w.Body.String() != "abcd" {
		t.Errorf("text at the snapshot's version 4: %d %q", w.Code, w.Body)
	}
	if ok, err := e.auth.Exists(ctx, "nope"); err != nil || ok {
		t.Errorf("nope exists after its export: %v %v", ok, err)
	}
}
