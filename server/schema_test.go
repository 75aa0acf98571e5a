package server

import (
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// buildSchema builds a schema as a library user does, with
// model.NewSchema, which builds what prosemirror-model builds.
func buildSchema(t *testing.T, spec string) *model.Schema {
	t.Helper()
	ss, err := model.ParseSchemaSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := model.NewSchema(ss)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// serveSchema returns a server whose collab API and Config serve sc as
// name, and the error of New.
func serveSchema(t *testing.T, name string, sc *model.Schema) (*collabEnv, error) {
	t.Helper()
	auth, err := collab.New(collab.Config{Store: memstore.New(), AutoCreate: true, IdleUnload: -1,
		Schemas: func(n string) (*model.Schema, bool) { return sc, n == name }, DefaultSchema: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	s, err := New(Config{Collab: auth, Schemas: map[string]*model.Schema{name: sc}, DefaultSchema: name})
	if err != nil {
		return nil, err
	}
	return &collabEnv{s: s, auth: auth}, nil
}

// TestUnsatisfiableSchemaRefused: a schema no document can satisfy
// ("doc: a", "a: a") is refused when the server starts, naming the node
// types, instead of answering 500 to every document creation (as it did).
func TestUnsatisfiableSchemaRefused(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{`{"nodes": {"doc": {"content": "a"}, "a": {"content": "a"}, "text": {}}}`,
			`no finite document can hold node types doc (content "a"), a (content "a")`},
		{`{"nodes": {"doc": {"content": "a"}, "a": {"content": "a | p"}, "p": {}, "text": {}}}`,
			"the top node type doc cannot be created empty"},
	} {
		e, err := serveSchema(t, "loop", buildSchema(t, tc.spec))
		if err != nil {
			if !strings.Contains(err.Error(), `schema "loop": Unsatisfiable schema: `+tc.want) {
				t.Errorf("New: %v, want %q", err, tc.want)
			}
			continue
		}
		code, body := e.request(t, "POST", "/docs", `{"id": "x", "schema": "loop"}`)
		t.Errorf("%s: New accepted the schema; POST /docs: %d %s", tc.spec, code, body)
	}
}

// TestAttrTagsServed: a document cannot make the HTML export write an
// element a tag from an attribute may not name (422; it was written), and
// a schema whose template can name none is refused when the server starts.
func TestAttrTagsServed(t *testing.T) {
	sc := buildSchema(t, `{"nodes": {"doc": {"content": "box+"},
		"box": {"content": "text*", "attrs": {"tag": {"default": "div"}}, "toDOM": [{"attr": "tag"}, {"action": "/x"}, 0]},
		"text": {}}}`)
	e, err := serveSchema(t, "boxes", sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tag  string
		code int
		want string
	}{
		{"section", 200, `<section action="/x">t</section>`},
		{"form", 422, `element \"form\" (from attribute tag) is not allowed`},
		{"base", 422, `element \"base\" (from attribute tag) is not allowed`},
		{"meta", 422, `element \"meta\" (from attribute tag) is not allowed`},
	} {
		doc := `{"type": "doc", "content": [{"type": "box", "attrs": {"tag": "` + tc.tag + `"}, "content": [{"type": "text", "text": "t"}]}]}`
		if code, body := e.request(t, "POST", "/docs", `{"id": "`+tc.tag+`", "doc": `+doc+`}`); code != 201 {
			t.Fatalf("POST /docs: %d %s", code, body)
		}
		w := e.serve(defaultIP, "GET", "/docs/"+tc.tag+"/export?format=html", "", nil)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("export of a %s box: %d %s, want %d %s", tc.tag, w.Code, w.Body, tc.code, tc.want)
		}
	}
	bad := buildSchema(t, `{"nodes": {"doc": {"content": "box+"},
		"box": {"content": "text*", "attrs": {"tag": {"default": "m"}}, "toDOM": [{"attr": "tag", "prefix": "fr"}, 0]},
		"text": {}}}`)
	if _, err := serveSchema(t, "bad", bad); err == nil || !strings.Contains(err.Error(), `schema "bad": node box: toDOM template: a tag from attribute tag between "fr" and ""`) {
		t.Errorf("New: %v, want the template refused", err)
	}
}
