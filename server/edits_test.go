package server

import (
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// TestEdits: POST /docs/{id}/edits finds its targets at the base
// version, maps them to the current one, and refuses a stale read or a
// missing target with the status and message of docs/edits.md, changing
// nothing.
func TestEdits(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{History: 50, Limits: collab.Limits{}})
	post := func(body string) (int, string) {
		t.Helper()
		return e.request(t, "POST", "/docs/d/edits", body)
	}
	if code, body := e.request(t, "POST", "/docs/d/events", `{"version":0,"clientID":1,"steps":[`+insert(1, "alpha beta gamma")+`]}`); code != 200 {
		t.Fatalf("typing: %d %s", code, body)
	}
	// Read at version 1; an editor types at the start meanwhile.
	if code, body := e.request(t, "POST", "/docs/d/events", `{"version":1,"clientID":1,"steps":[`+insert(1, "so ")+`]}`); code != 200 {
		t.Fatalf("typing: %d %s", code, body)
	}
	code, body := post(`{"base":1,"name":"Bot","edits":[
		{"op":"addMark","target":{"text":{"find":"beta"}},"mark":{"type":"strong"}},
		{"op":"insert","target":{"text":{"find":"gamma"}},"at":"after","content":{"type":"paragraph","content":[{"type":"text","text":"new"}]}}]}`)
	if code != 200 || body != `{"version":4,"steps":2}` {
		t.Fatalf("edits at base 1: %d %s", code, body)
	}
	doc := e.mustGet(t, "/docs/d")
	if !strings.Contains(doc, `{"type":"text","text":"so alpha "},{"type":"text","marks":[{"type":"strong"}],"text":"beta"}`) ||
		!strings.Contains(doc, `{"type":"paragraph","content":[{"type":"text","text":"new"}]}`) {
		t.Fatalf("after the edits: %s", doc)
	}
	steps := e.mustGet(t, "/docs/d/steps?from=2")
	if !strings.Contains(steps, `"clientID":"server"`) {
		t.Errorf("the edits' steps are not the server client's: %s", steps)
	}

	// An editor changes "gamma" after a read at version 4.
	if code, body := e.request(t, "POST", "/docs/d/events", `{"version":4,"clientID":1,"steps":[`+insert(18, "X")+`]}`); code != 200 {
		t.Fatalf("typing: %d %s", code, body)
	}
	for _, tt := range []struct {
		body, want string
		code       int
	}{
		{`{"base":4,"edits":[{"op":"replaceText","target":{"text":{"find":"gamma"}},"text":"G"}]}`, `edit 0 (replaceText): its target changed since the base version`, 409},
		{`{"base":4,"edits":[{"op":"deleteBlock","target":{"block":{"path":[1]}}},{"op":"replaceText","target":{"text":{"find":"gamma"}},"text":"G"}]}`, `edit 1 (replaceText)`, 409},
		{`{"base":4,"edits":[{"op":"replaceText","target":{"text":{"find":"delta"}},"text":"G"}]}`, `edit 0 (replaceText): text \"delta\" not found`, 422},
		{`{"base":4,"edits":[{"op":"replaceText","target":{"text":{"find":"a"}},"text":"G"}]}`, `occurs more than once`, 422},
		{`{"base":9,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, `Invalid version 9`, 400},
		{`{"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, `base`, 400},
		{`{"base":4,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}},"extra":1}]}`, `extra`, 400},
		{`{"base":4,"name":"` + strings.Repeat("n", 65) + `","edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, `longer than 64`, 400},
		{`{"base":4,"edits":[` + strings.Repeat(`{"op":"deleteBlock","target":{"block":{"path":[0]}}},`, 1000) + `{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, `edits over the limit`, 413},
	} {
		code, body := post(tt.body)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%.120s: %d %s, want %d with %s", tt.body, code, body, tt.code, tt.want)
		}
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"version":5`) {
		t.Fatalf("refused edits changed the document: %s", doc)
	}
	// Markdown, parsed with the document's schema.
	if code, body := post(`{"base":5,"edits":[{"op":"insert","target":{"text":{"find":"new"}},"at":"after","markdown":"# Title\n\nSome **bold** text"}]}`); code != 200 || body != `{"version":6,"steps":1}` {
		t.Fatalf("a Markdown insert: %d %s", code, body)
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]},{"type":"paragraph","content":[{"type":"text","text":"Some "},{"type":"text","marks":[{"type":"strong"}],"text":"bold"},{"type":"text","text":" text"}]}`) {
		t.Fatalf("after the Markdown insert: %s", doc)
	}
	// Markdown over Limits.MaxEditMarkdown.
	big := strings.Repeat("a", DefaultMaxEditMarkdown+1)
	if code, body := post(`{"base":6,"edits":[{"op":"insert","target":{"text":{"find":"new"}},"at":"after","markdown":"` + big + `"}]}`); code != 413 || !strings.Contains(body, "Markdown (Limits.MaxEditMarkdown) over the limit") {
		t.Fatalf("too much Markdown: %d %.200s", code, body)
	}
	// Unchanged targets still apply after the change.
	if code, body := post(`{"base":4,"edits":[{"op":"deleteBlock","target":{"text":{"find":"new"}}}]}`); code != 200 || body != `{"version":7,"steps":1}` {
		t.Fatalf("an untouched target after a change: %d %s", code, body)
	}
}

// TestEditsPolicy: edits need the edit action.
func TestEditsPolicy(t *testing.T) {
	e := newCollab(t, Config{Policy: rolePolicy{commenters: map[string]bool{"carol": true}}}, collab.Config{})
	post := func(token, body string) (int, string) {
		r := httptest.NewRequest("POST", "/docs/d/edits", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	e.mustGet(t, "/docs/d") // made (AutoCreate)
	edit := `{"base":0,"edits":[{"op":"insert","target":{"block":{"path":[0]}},"at":"start","content":{"type":"text","text":"hi"}}]}`
	if code, body := post("carol", edit); code != 403 {
		t.Fatalf("carol's edit: %d %s, want 403", code, body)
	}
	if code, body := post("alice", edit); code != 200 {
		t.Fatalf("alice's edit: %d %s", code, body)
	}
	steps := e.mustGet(t, "/docs/d/steps?from=0")
	if !strings.Contains(steps, `"author":"alice"`) {
		t.Errorf("the edit's author is not alice: %s", steps)
	}
}

// TestEditsDoc runs the curl examples of docs/edits.md in order and
// compares each answer with the line after it.
func TestEditsDoc(t *testing.T) {
	text, err := os.ReadFile("../docs/edits.md")
	if err != nil {
		t.Fatal(err)
	}
	e := newCollabAuto(t, Config{}, collab.Config{}, false)
	lines := strings.Split(string(text), "\n")
	curl := regexp.MustCompile(`^    curl -s -H 'Content-Type: application/json' -d '([^']*)' http://127\.0\.0\.1:8080(/\S*)$`)
	ran := 0
	for i, line := range lines {
		if !strings.HasPrefix(line, "    curl") {
			continue
		}
		m := curl.FindStringSubmatch(line)
		if m == nil || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    {") {
			t.Fatalf("line %d: not a curl example of the form this test runs, followed by its answer: %s", i+1, line)
		}
		_, body := e.request(t, "POST", m[2], m[1])
		if want := strings.TrimSpace(lines[i+1]); body != want {
			t.Errorf("line %d: %s answers\n%s\nwant\n%s", i+1, m[2], body, want)
		}
		ran++
	}
	if ran < 5 {
		t.Fatalf("ran %d examples of docs/edits.md, want 5 or more", ran)
	}
}

// TestTransformRoute: POST /docs/{id}/transform runs Transform API calls
// at the current version, and refuses a stale version, a bad argument
// and a failing op, changing nothing.
func TestTransformRoute(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	post := func(body string) (int, string) {
		t.Helper()
		return e.request(t, "POST", "/docs/d/transform", body)
	}
	if code, body := e.request(t, "POST", "/docs/d/events", `{"version":0,"clientID":1,"steps":[`+insert(1, "hello world")+`]}`); code != 200 {
		t.Fatalf("typing: %d %s", code, body)
	}
	code, body := post(`{"version":1,"name":"Tool","ops":[{"op":"split","args":[6]},{"op":"addMark","args":[1,6,{"type":"em"}]},{"op":"setBlockType","args":[8,8,"heading",{"level":2}]}]}`)
	if code != 200 || body != `{"version":4,"steps":3}` {
		t.Fatalf("ops at version 1: %d %s", code, body)
	}
	want := `"content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"em"}],"text":"hello"}]},{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":" world"}]}]`
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, want) {
		t.Fatalf("after the ops: %s", doc)
	}
	for _, tt := range []struct {
		body, want string
		code       int
	}{
		{`{"version":1,"ops":[{"op":"delete","args":[1,2]}]}`, `Version not current`, 409},
		{`{"version":9,"ops":[{"op":"delete","args":[1,2]}]}`, `Invalid version 9`, 400},
		{`{"version":4,"ops":[{"op":"delete","args":[1,2]},{"op":"split","args":[99]}]}`, `op 1 (split)`, 422},
		{`{"version":4,"ops":[{"op":"delete","args":["one",2]}]}`, `op 0 (delete): delete argument 0`, 400},
		{`{"version":4,"ops":[{"op":"explode","args":[]}]}`, `op 0 (explode): unknown op`, 400},
		{`{"version":4,"ops":[]}`, `\"ops\" is missing`, 400},
		{`{"ops":[{"op":"delete","args":[1,2]}]}`, `\"version\"`, 400},
		{`{"version":4,"ops":[` + strings.Repeat(`{"op":"delete","args":[1,2]},`, 1000) + `{"op":"delete","args":[1,2]}]}`, `ops over the limit`, 413},
	} {
		code, body := post(tt.body)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%.100s: %d %s, want %d with %s", tt.body, code, body, tt.code, tt.want)
		}
	}
	if doc := e.mustGet(t, "/docs/d"); !strings.Contains(doc, `"version":4`) || !strings.Contains(doc, want) {
		t.Fatalf("refused ops changed the document: %s", doc)
	}
}
