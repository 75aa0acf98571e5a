package model

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// tiptapJS is testdata/tiptap_starterkit_js.json, what prosemirror-model
// derives from Tiptap StarterKit's schema (written by
// web/client/example-tiptap/export-schema.mjs).
type tiptapJS struct {
	TopNode              string           `json:"topNode"`
	LinebreakReplacement *string          `json:"linebreakReplacement"`
	Nodes                []map[string]any `json:"nodes"`
	Marks                []map[string]any `json:"marks"`
	Docs                 []struct {
		Input  string  `json:"input"`  // JSON text
		Output string  `json:"output"` // JSON.stringify(doc.toJSON())
		Size   int     `json:"size"`
		Check  *string `json:"check"`
	} `json:"docs"`
}

// TestTiptapStarterKitSchema loads Tiptap StarterKit's schema spec in the
// two forms a Tiptap app gives the server: JSON.stringify(editor.schema.spec)
// (nodes and marks as OrderedMaps, {"content": [name, spec, …]}, which
// LoadSchema refused before it read that form: "the spec of node "content"
// must be an object, got array") and exportSchema's output (the example's
// schema.json, objects). Either must give the schema prosemirror-model
// builds: node and mark names in order, groups, content automata, mark
// sets, exclusions, attributes and defaults, the nodes' fills, and the
// same verdict and JSON for sample documents.
func TestTiptapStarterKitSchema(t *testing.T) {
	var js tiptapJS
	data, err := os.ReadFile("testdata/tiptap_starterkit_js.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Nodes) < 10 || len(js.Marks) < 6 || len(js.Docs) < 5 {
		t.Fatalf("testdata has %d nodes, %d marks, %d docs", len(js.Nodes), len(js.Marks), len(js.Docs))
	}
	for _, file := range []string{"testdata/tiptap_starterkit_spec.json", "../web/client/example-tiptap/schema.json"} {
		t.Run(file, func(t *testing.T) {
			spec, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := LoadSchema(spec)
			if err != nil {
				t.Fatal(err)
			}
			compareTiptapSchema(t, s, &js)
		})
	}
}

func compareTiptapSchema(t *testing.T, s *Schema, js *tiptapJS) {
	same := func(what string, want, got any) {
		t.Helper()
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if !bytes.Equal(w, g) {
			t.Errorf("%s: JS %s, Go %s", what, w, g)
		}
	}
	same("topNode", js.TopNode, s.TopNodeType.Name)
	var lb *string
	if s.LinebreakReplacement != nil {
		lb = &s.LinebreakReplacement.Name
	}
	same("linebreakReplacement", js.LinebreakReplacement, lb)

	var nodes []map[string]any
	for _, n := range s.Nodes {
		var markSet []string
		if !n.AllowsAllMarks {
			markSet = []string{}
			for _, m := range n.MarkSet {
				markSet = append(markSet, m.Name)
			}
		}
		var fill any
		if !n.IsText && !n.HasRequiredAttrs() {
			if f, err := n.CreateAndFill(nil, Fragment{}, nil); err == nil && f != nil {
				fill = string(f.AppendJSON(nil)) // JSON text, as JS wrote it
			}
		}
		var def any
		if d := n.ContentMatch.DefaultType(); d != nil {
			def = d.Name
		}
		sp := n.Spec
		nodes = append(nodes, map[string]any{
			"name": n.Name, "groups": nonNil(n.Groups), "isBlock": n.IsBlock, "isInline": n.IsInline(), "isText": n.IsText,
			"isLeaf": n.IsLeaf(), "isAtom": n.IsAtom(), "isTextblock": n.IsTextblock(), "inlineContent": n.InlineContent,
			"whitespace": n.Whitespace(), "markSet": markSet, "contentMatch": n.ContentMatch.String(), "defaultType": def,
			"hasRequiredAttrs": n.HasRequiredAttrs(), "attrs": goAttrs(n.Attrs), "createAndFill": fill,
			"spec": map[string]any{
				"content": optional(sp.Content != "", sp.Content), "marks": sp.Marks, "group": optional(sp.Group != "", sp.Group),
				"inline": optional(sp.Inline, true), "atom": optional(sp.Atom, true), "selectable": sp.Selectable,
				"draggable": optional(sp.Draggable, true), "code": optional(sp.Code, true),
				"whitespace": optional(sp.Whitespace != "", sp.Whitespace), "definingAsContext": sp.DefiningAsContext,
				"definingForContent": sp.DefiningForContent, "defining": optional(sp.Defining, true),
				"isolating": optional(sp.Isolating, true), "linebreakReplacement": optional(sp.LinebreakReplacement, true),
			},
		})
	}
	if len(nodes) != len(js.Nodes) {
		t.Errorf("%d node types, JS has %d", len(nodes), len(js.Nodes))
	}
	for i := range min(len(nodes), len(js.Nodes)) {
		for key, want := range js.Nodes[i] {
			same("node "+s.Nodes[i].Name+"."+key, want, nodes[i][key])
		}
	}

	var marks []map[string]any
	for _, m := range s.Marks {
		excluded := []string{}
		for _, o := range s.Marks {
			if m.Excludes(o) {
				excluded = append(excluded, o.Name)
			}
		}
		sp := m.Spec
		marks = append(marks, map[string]any{
			"name": m.Name, "rank": m.Rank, "excluded": excluded, "attrs": goAttrs(m.Attrs),
			"spec": map[string]any{"inclusive": sp.Inclusive, "excludes": sp.Excludes, "group": optional(sp.Group != "", sp.Group),
				"spanning": sp.Spanning, "code": optional(sp.Code, true)},
		})
	}
	if len(marks) != len(js.Marks) {
		t.Errorf("%d mark types, JS has %d", len(marks), len(js.Marks))
	}
	for i := range min(len(marks), len(js.Marks)) {
		for key, want := range js.Marks[i] {
			same("mark "+s.Marks[i].Name+"."+key, want, marks[i][key])
		}
	}

	for i, d := range js.Docs {
		n, err := s.NodeFromJSON([]byte(d.Input))
		if err != nil {
			t.Errorf("doc %d: %v", i, err)
			continue
		}
		if got := string(n.AppendJSON(nil)); got != d.Output {
			t.Errorf("doc %d: JS %s, Go %s", i, d.Output, got)
		}
		same("doc size", d.Size, n.Content.Size())
		var check *string
		if err := n.Check(); err != nil {
			msg := err.Error()
			check = &msg
		}
		same("doc check", d.Check, check)
	}
}

// optional is v when ok, else nil (a JSON null, as the JS description
// writes an absent spec key).
func optional[T any](ok bool, v T) any {
	if !ok {
		return nil
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func goAttrs(attrs []*Attribute) []map[string]any {
	out := []map[string]any{}
	for _, a := range attrs {
		validate := "undefined"
		if a.Validate != nil {
			validate = "function" // JS compiles a type string into a function
		}
		out = append(out, map[string]any{"name": a.Name, "hasDefault": a.HasDefault, "default": a.Default, "validate": validate})
	}
	return out
}
