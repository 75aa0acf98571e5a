package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/internal/testutil"
)

// TestServeTiptapSchema: `serve --schema NAME=FILE` takes a schema spec as
// JavaScript serializes Tiptap's editor.schema.spec (nodes and marks as
// OrderedMaps, {"content": [name, spec, …]}; before, serve exited with
// "the spec of node "content" must be an object, got array"), and as
// exportSchema writes it; documents of it take steps with Tiptap's names
// (the mark "bold"). A malformed OrderedMap exits 2 naming the problem.
func TestServeTiptapSchema(t *testing.T) {
	t.Setenv("PMA_POSTGRES_URL", "")
	addr, stderr, stop := startServe(t, "--store", "memory",
		"--schema", "tiptap=../../model/testdata/tiptap_starterkit_spec.json",
		"--schema", "exported=../../web/client/example-tiptap/schema.json", "--default-schema", "tiptap")
	do := func(method, path, body string) (int, string) {
		t.Helper()
		return httpDo(t, addr, method, path, body)
	}
	if s, got := do("GET", "/v1/schemas", ""); s != 200 || got != `{"default":"tiptap","schemas":["basic","exported","suggest","text","tiptap"]}` {
		t.Fatalf("/v1/schemas: %d %s", s, got)
	}
	bold := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi","marks":[{"type":"bold"}]}]}}`
	for _, schema := range []string{"tiptap", "exported"} {
		if s, got := do("POST", "/docs", `{"id":"`+schema+`","schema":"`+schema+`"}`); s != 201 {
			t.Fatalf("POST /docs %s: %d %s", schema, s, got)
		}
		if s, got := do("POST", "/docs/"+schema+"/events", `{"version":0,"steps":[`+bold+`],"clientID":1}`); s != 200 {
			t.Fatalf("steps with Tiptap's bold on %s: %d %s", schema, s, got)
		}
		want := `{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"bold"}],"text":"hi"}]}]}`
		if s, got := do("GET", "/docs/"+schema, ""); s != 200 || !strings.HasPrefix(got, want) {
			t.Fatalf("GET /docs/%s: %d %s", schema, s, got)
		}
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}

	odd := filepath.Join(t.TempDir(), "odd.json")
	os.WriteFile(odd, []byte(`{"nodes": {"content": ["doc", {"content": "text*"}, "text"]}}`), 0o644)
	const want = `odd.json: schema spec: "nodes" is an OrderedMap ({"content": [name, spec, …]}) whose content has an odd length (3): every name needs its spec`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := &testutil.LogBuffer{}
	code := serve(ctx, []string{"--schema", "odd=" + odd, "--addr", "127.0.0.1:0", "--store", "memory"}, errs, func(string) { cancel() })
	if code != 2 || !strings.Contains(errs.String(), want) {
		t.Errorf("serve: exit %d, want 2; stderr lacks %q:\n%s", code, want, errs)
	}
}
