package model

import (
	"strings"
	"testing"
)

// Expected messages and values in this file come from running
// prosemirror-model 1.25.13 on the same specs.

// newSchemaJSON builds the schema of a JSON spec as prosemirror-model's
// Schema constructor does: LoadSchema without CheckSatisfiable, for the
// tests comparing with what JavaScript builds.
func newSchemaJSON(data []byte) (*Schema, error) {
	spec, err := ParseSchemaSpec(data)
	if err != nil {
		return nil, err
	}
	return NewSchema(spec)
}

func TestNewSchemaErrors(t *testing.T) {
	cases := []struct{ spec, want string }{
		{`{}`, "Schema is missing its top node type ('doc')"},
		{`{"nodes": {}}`, "Schema is missing its top node type ('doc')"},
		{`{"nodes": {"doc": {}}}`, "Every schema needs a 'text' type"},
		{`{"topNode": "page", "nodes": {"doc": {}, "text": {}}}`, "Schema is missing its top node type ('page')"},
		{`{"topNode": "", "nodes": {"doc": {}, "text": {}}}`, ""},
		{`{"nodes": {"doc": {}, "text": {"attrs": {"a": {"default": 1}}}}}`, "The text node type should not have attributes"},
		{`{"nodes": {"doc": {}, "text": {}, "em": {}}, "marks": {"em": {}}}`, "em can not be both a node and a mark"},
		{`{"nodes": {"doc": {"content": "foo+"}, "text": {}}}`, "No node type or group 'foo' found (in content expression 'foo+')"},
		{`{"nodes": {"doc": {"content": "block+"}, "p": {"group": "block", "content": "inline*"}, "img": {"inline": true, "group": "inline"}, "text": {"group": "inline"}}}`, ""},
		{`{"nodes": {"doc": {"content": "p img"}, "p": {}, "img": {"inline": true}, "text": {}}}`, "Mixing inline and block content (in content expression 'p img')"},
		{`{"nodes": {"doc": {"content": "(p | img)+"}, "p": {}, "img": {"inline": true}, "text": {}}}`, "Mixing inline and block content (in content expression '(p | img)+')"},
		{`{"nodes": {"doc": {"content": "img"}, "img": {"attrs": {"src": {}}}, "text": {}}}`, "Only non-generatable nodes (img) in a required position (see https://prosemirror.net/docs/guide/#generatable) (in content expression 'img')"},
		{`{"nodes": {"doc": {"content": "p+"}, "p": {"content": "text"}, "text": {}}}`, "Only non-generatable nodes (text) in a required position (see https://prosemirror.net/docs/guide/#generatable) (in content expression 'text')"},
		{`{"nodes": {"doc": {"content": "(img | pic)+"}, "img": {"attrs": {"src": {}}}, "pic": {"attrs": {"src": {}}}, "text": {}}}`, "Only non-generatable nodes (img, pic) in a required position (see https://prosemirror.net/docs/guide/#generatable) (in content expression '(img | pic)+')"},
		{`{"nodes": {"doc": {"content": "p* img"}, "p": {}, "img": {"attrs": {"src": {}}}, "text": {}}}`, ""},
		{`{"nodes": {"doc": {"content": "inline*"}, "text": {"group": "inline"}, "br": {"inline": true, "group": "inline", "linebreakReplacement": true}, "br2": {"inline": true, "linebreakReplacement": true}}}`, "Multiple linebreak nodes defined"},
		{`{"nodes": {"doc": {"content": "inline*"}, "text": {"group": "inline"}, "br": {"linebreakReplacement": true}}}`, "Linebreak replacement nodes must be inline leaf nodes"},
		{`{"nodes": {"doc": {"content": "inline*"}, "text": {"group": "inline"}, "br": {"inline": true, "content": "text*", "linebreakReplacement": true}}}`, "Linebreak replacement nodes must be inline leaf nodes"},
		{`{"nodes": {"doc": {"content": "inline*", "marks": "em zz"}, "text": {"group": "inline"}}, "marks": {"em": {}}}`, "Unknown mark type: 'zz'"},
		{`{"nodes": {"doc": {"content": "inline*", "marks": "em  strong"}, "text": {"group": "inline"}}, "marks": {"em": {}, "strong": {}}}`, "Unknown mark type: ''"},
		{`{"nodes": {"doc": {"content": "inline*"}, "text": {"group": "inline"}}, "marks": {"em": {"excludes": "zz"}}}`, "Unknown mark type: 'zz'"},
		{`{"nodes": {"doc": {"content": "inline*"}, "text": {"group": "inline"}}, "marks": {"em": {"excludes": "strong "}, "strong": {}}}`, "Unknown mark type: ''"},
		// Array-index names come first in the JS property order, so "10" is
		// checked before "b".
		{`{"nodes": {"doc": {"content": "b+"}, "10": {"content": "zz"}, "b": {"content": "yy"}, "text": {}}}`, "No node type or group 'zz' found (in content expression 'zz')"},
		{`{"nodes": {"doc": {"content": "x"}, "10": {"group": "x"}, "2": {"group": "x"}, "3": {"inline": true, "group": "x"}, "text": {}}}`, "Mixing inline and block content (in content expression 'x')"},
		{`{"nodes": {"doc": {"content": "x"}, "a": {"group": "x"}, "b": {"inline": true, "group": "x"}, "text": {}}}`, "Mixing inline and block content (in content expression 'x')"},
		{`{"nodes": {"doc": {"content": "(a?){1}*"}, "a": {}, "text": {}}}`, "Maximum call stack size exceeded"},
		{`{"nodes": {"doc": {"content": "a b"}, "a": {}, "b": {}, "text": {}}, "marks": {"a": {}}}`, "a can not be both a node and a mark"},
		{`{"nodes": {"doc": {}, "text": {}, "br": {"inline": true, "linebreakReplacement": true}}, "marks": {"br": {}}}`, "br can not be both a node and a mark"},
		{`{"nodes": {"doc": {"content": "%"}, "text": {}}}`, "Unexpected token '%' (in content expression '%')"},
		{`{"nodes": {"doc": {"content": "a{1,2"}, "a": {}, "text": {}}}`, "Unclosed braced range (in content expression 'a{1,2')"},
		{`{"nodes": {"doc": {"content": "a |"}, "a": {}, "text": {}}}`, "No node type or group 'undefined' found (in content expression 'a |')"},
		{`{"nodes": {"doc": {"content": "a{"}, "a": {}, "text": {}}}`, "Expected number, got 'undefined' (in content expression 'a{')"},
	}
	for _, c := range cases {
		_, err := newSchemaJSON([]byte(c.spec))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.spec, err)
		case c.want == "":
		case err == nil:
			t.Errorf("%s: no error, want %q", c.spec, c.want)
		case err.Error() != c.want && !(strings.HasPrefix(c.want, "Maximum") && strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s:\n got %q\nwant %q", c.spec, err, c.want)
		}
	}
}

func TestNewSchemaGoSpecs(t *testing.T) {
	text := NamedNodeSpec{Name: "text", Spec: &NodeSpec{}}
	cases := []struct {
		spec *SchemaSpec
		want string
	}{
		{nil, "Schema is missing its top node type ('doc')"},
		{&SchemaSpec{Nodes: []NamedNodeSpec{{Name: "doc"}, text}}, ""}, // nil NodeSpec is an empty spec
		{&SchemaSpec{Nodes: []NamedNodeSpec{{Name: "doc"}, text, {Name: "doc"}}}, "Duplicate node type 'doc'"},
		{&SchemaSpec{Nodes: []NamedNodeSpec{{Name: "doc"}, text}, Marks: []NamedMarkSpec{{Name: "em"}, {Name: "em"}}}, "Duplicate mark type 'em'"},
		{&SchemaSpec{Nodes: []NamedNodeSpec{{Name: "doc", Spec: &NodeSpec{Attrs: []AttributeSpec{{Name: "a"}, {Name: "a"}}}}, text}}, "Duplicate attribute 'a' on type doc"},
	}
	for i, c := range cases {
		_, err := NewSchema(c.spec)
		if got := errString(err); got != c.want {
			t.Errorf("case %d: error %q, want %q", i, got, c.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestBasicSchemaTypes(t *testing.T) {
	s := testBasicSchema(t)
	cases := []struct {
		name                                 string
		block, textblock, leaf, atom, inline bool
		whitespace, marks                    string // marks: "_" for all
		required                             bool
		match, fill                          string
	}{
		{"doc", true, false, false, false, false, "normal", "", false, "0  paragraph->1, blockquote->1, horizontal_rule->1, heading->1, code_block->1, ordered_list->1, bullet_list->1\n1* paragraph->1, blockquote->1, horizontal_rule->1, heading->1, code_block->1, ordered_list->1, bullet_list->1", "doc(paragraph)"},
		{"paragraph", true, true, false, false, true, "normal", "_", false, "0* text->0, image->0, hard_break->0", "paragraph"},
		{"blockquote", true, false, false, false, false, "normal", "", false, "0  paragraph->1, blockquote->1, horizontal_rule->1, heading->1, code_block->1, ordered_list->1, bullet_list->1\n1* paragraph->1, blockquote->1, horizontal_rule->1, heading->1, code_block->1, ordered_list->1, bullet_list->1", "blockquote(paragraph)"},
		{"horizontal_rule", true, false, true, true, false, "normal", "", false, "0* ", "horizontal_rule"},
		{"heading", true, true, false, false, true, "normal", "_", false, "0* text->0, image->0, hard_break->0", "heading"},
		{"code_block", true, true, false, false, true, "pre", "", false, "0* text->0", "code_block"},
		{"text", false, false, true, true, false, "normal", "", false, "0* ", "ERR NodeType.create can't construct text nodes"},
		{"image", false, false, true, true, false, "normal", "", true, "0* ", "ERR Expected value of type string for attribute src on type image, got null"},
		{"hard_break", false, false, true, true, false, "normal", "", false, "0* ", "hard_break"},
		{"ordered_list", true, false, false, false, false, "normal", "", false, "0  list_item->1\n1* list_item->1", "ordered_list(list_item(paragraph))"},
		{"bullet_list", true, false, false, false, false, "normal", "", false, "0  list_item->1\n1* list_item->1", "bullet_list(list_item(paragraph))"},
		{"list_item", true, false, false, false, false, "normal", "", false, "0  paragraph->1\n1* paragraph->1, blockquote->1, horizontal_rule->1, heading->1, code_block->1, ordered_list->1, bullet_list->1", "list_item(paragraph)"},
	}
	if len(s.Nodes) != len(cases) {
		t.Fatalf("%d node types", len(s.Nodes))
	}
	for i, c := range cases {
		nt := s.Nodes[i]
		if nt.Name != c.name || s.NodeType(c.name) != nt {
			t.Fatalf("node %d is %s, want %s", i, nt.Name, c.name)
		}
		if nt.IsBlock != c.block || nt.IsInline() == c.block || nt.IsTextblock() != c.textblock || nt.IsLeaf() != c.leaf ||
			nt.IsAtom() != c.atom || nt.InlineContent != c.inline || nt.Whitespace() != c.whitespace || nt.HasRequiredAttrs() != c.required {
			t.Errorf("%s: block %v textblock %v leaf %v atom %v inline %v whitespace %s required %v", c.name, nt.IsBlock,
				nt.IsTextblock(), nt.IsLeaf(), nt.IsAtom(), nt.InlineContent, nt.Whitespace(), nt.HasRequiredAttrs())
		}
		marks := "_"
		if !nt.AllowsAllMarks {
			var names []string
			for _, m := range nt.MarkSet {
				names = append(names, m.Name)
			}
			marks = strings.Join(names, " ")
		}
		if marks != c.marks {
			t.Errorf("%s: marks %q, want %q", c.name, marks, c.marks)
		}
		if got := nt.ContentMatch.String(); got != c.match {
			t.Errorf("%s: content\n%s\nwant\n%s", c.name, got, c.match)
		}
		fill := "null"
		if n, err := nt.CreateAndFill(nil, Fragment{}, nil); err != nil {
			fill = "ERR " + err.Error()
		} else if n != nil {
			fill = n.String()
		}
		if fill != c.fill {
			t.Errorf("%s: createAndFill %s, want %s", c.name, fill, c.fill)
		}
	}
	if s.TopNodeType != s.NodeType("doc") || s.LinebreakReplacement != nil || s.NodeType("nope") != nil || s.MarkType("nope") != nil {
		t.Error("schema fields")
	}
	if !s.NodeType("heading").IsInGroup("block") || s.NodeType("heading").IsInGroup("inline") {
		t.Error("IsInGroup")
	}
	if !s.NodeType("paragraph").CompatibleContent(s.NodeType("code_block")) || s.NodeType("doc").CompatibleContent(s.NodeType("paragraph")) ||
		!s.NodeType("image").CompatibleContent(s.NodeType("image")) {
		t.Error("CompatibleContent")
	}

	for i, c := range []struct {
		name, excluded      string
		inclusive, spanning bool
	}{{"link", "link", false, true}, {"em", "em", true, true}, {"strong", "strong", true, true}, {"code", "code", true, true}} {
		m := s.Marks[i]
		if m.Name != c.name || m.Rank != i || s.MarkType(c.name) != m {
			t.Fatalf("mark %d is %s", i, m.Name)
		}
		var names []string
		for _, x := range m.excluded {
			names = append(names, x.Name)
		}
		if strings.Join(names, " ") != c.excluded || m.Inclusive() != c.inclusive || m.Spanning() != c.spanning {
			t.Errorf("%s: excluded %v inclusive %v spanning %v", c.name, names, m.Inclusive(), m.Spanning())
		}
	}
	if !s.MarkType("em").Excludes(s.MarkType("em")) || s.MarkType("em").Excludes(s.MarkType("strong")) {
		t.Error("Excludes")
	}
}

func TestMarkSetsAndExcludes(t *testing.T) {
	s, err := LoadSchema([]byte(`{"nodes": {
		"doc": {"content": "block+"},
		"para": {"content": "inline*", "group": "block", "marks": "fmt link"},
		"all": {"content": "inline*", "group": "block", "marks": "_"},
		"none": {"content": "inline*", "group": "block", "marks": ""},
		"box": {"content": "block*", "group": "block"},
		"boxm": {"content": "block*", "group": "block", "marks": "_ em"},
		"text": {"group": "inline"}},
	  "marks": {"link": {"excludes": ""}, "em": {"group": "fmt"}, "strong": {"group": "fmt x", "excludes": "_"},
		"code": {"excludes": "fmt code"}, "2": {"group": "fmt"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ms []*MarkType) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		node, set string
		all       bool
	}{
		// Groups list their members in JS property order: "2" first.
		{"para", "2 em strong link", false},
		{"all", "", true},
		{"none", "", false},
		{"box", "", false},
		{"boxm", "2 link em strong code em", false},
	} {
		nt := s.NodeType(c.node)
		if nt.AllowsAllMarks != c.all || names(nt.MarkSet) != c.set {
			t.Errorf("%s: all %v set %q, want %v %q", c.node, nt.AllowsAllMarks, names(nt.MarkSet), c.all, c.set)
		}
	}
	for _, c := range []struct{ mark, excluded string }{
		{"link", ""}, {"em", "em"}, {"strong", "2 link em strong code"}, {"code", "2 em strong code"}, {"2", "2"},
	} {
		if got := names(s.MarkType(c.mark).excluded); got != c.excluded {
			t.Errorf("%s excludes %q, want %q", c.mark, got, c.excluded)
		}
	}
	// As in JS, an object's array-index keys come first, also for ranks.
	if s.MarkType("2").Rank != 0 || s.Marks[1].Name != "link" {
		t.Error("mark ranks")
	}
	// Given as pairs, the order is kept for ranks, but groups still list
	// their members in property order.
	p, err := LoadSchema([]byte(`{"nodes": [["doc", {"content": "inline*", "marks": "fmt"}], ["text", {"group": "inline"}]],
		"marks": [["em", {"group": "fmt"}], ["2", {"group": "fmt"}]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.MarkType("2").Rank != 1 || names(p.NodeType("doc").MarkSet) != "2 em" {
		t.Errorf("pairs: rank %d, marks %s", p.MarkType("2").Rank, names(p.NodeType("doc").MarkSet))
	}

	em, _ := s.Mark("em", nil)
	link, _ := s.Mark("link", nil)
	code, _ := s.Mark("code", nil)
	para := s.NodeType("para")
	if !para.AllowsMarkType(em.Type) || para.AllowsMarkType(code.Type) || !para.AllowsMarks([]*Mark{link, em}) ||
		para.AllowsMarks([]*Mark{em, code}) || !s.NodeType("all").AllowsMarks([]*Mark{code}) {
		t.Error("AllowsMarks")
	}
	set := []*Mark{link, em, code}
	if got := para.AllowedMarks(set); len(got) != 2 || got[0] != link || got[1] != em {
		t.Errorf("AllowedMarks = %v", got)
	}
	if got := para.AllowedMarks(set[:2]); &got[0] != &set[0] {
		t.Error("AllowedMarks should return its argument when all are allowed")
	}
	if got := s.NodeType("none").AllowedMarks(set); got != nil {
		t.Errorf("AllowedMarks = %v, want nil", got)
	}
	if got := em.Type.RemoveFromSet(set); len(got) != 2 || got[0] != link || got[1] != code || len(set) != 3 {
		t.Errorf("RemoveFromSet = %v", got)
	}
	if got := em.Type.RemoveFromSet(set[:1]); &got[0] != &set[0] {
		t.Error("RemoveFromSet should return its argument when the mark is absent")
	}
	if em.Type.IsInSet(set) != em || s.MarkType("strong").IsInSet(set) != nil {
		t.Error("IsInSet")
	}
}

func TestComputeAttrs(t *testing.T) {
	s := testBasicSchema(t)
	x, err := LoadSchema([]byte(`{"nodes": {"doc": {"content": "x*"}, "text": {},
		"x": {"attrs": {"b": {"default": 1, "validate": ""}, "10": {"default": [1], "validate": "object"},
		"2": {"default": null, "validate": "string|null"}, "a": {}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	obj := JSONObject{}
	cases := []struct {
		schema *Schema
		typ    string
		given  Attrs
		want   string // JSON of the result, or the error
	}{
		{s, "image", nil, "Expected value of type string for attribute src on type image, got null"},
		{s, "image", Attrs{}, "No value supplied for attribute src"},
		{s, "image", Attrs{{"src", 1.0}}, "Expected value of type string for attribute src on type image, got number"},
		{s, "image", Attrs{{"title", "t"}, {"extra", 1.0}, {"src", "a"}}, `{"src":"a","alt":null,"title":"t"}`},
		{s, "heading", nil, `{"level":1}`},
		{s, "heading", Attrs{}, `{"level":1}`},
		{s, "heading", Attrs{{"level", "2"}}, "Expected value of type number for attribute level on type heading, got string"},
		{s, "heading", Attrs{{"level", 3.0}}, `{"level":3}`},
		{x, "x", nil, "Expected value of type object for attribute 10 on type x, got null"},
		{x, "x", Attrs{{"a", 1.0}}, `{"2":null,"10":[1],"b":1,"a":1}`},
		{x, "x", Attrs{{"a", 1.0}, {"b", 2.0}}, "Expected value of type  for attribute b on type x, got number"},
		{x, "x", Attrs{{"a", obj}, {"10", []any{2.0}}}, `{"2":null,"10":[2],"b":1,"a":{}}`},
		{x, "x", Attrs{{"a", 0.0}, {"10", nil}}, "Expected value of type object for attribute 10 on type x, got null"},
		{x, "x", Attrs{{"a", 0.0}, {"2", 5.0}}, "Expected value of type string,null for attribute 2 on type x, got number"},
		{x, "x", Attrs{{"a", 0.0}, {"2", true}}, "Expected value of type string,null for attribute 2 on type x, got boolean"},
		{x, "x", Attrs{{"a", 0.0}, {"a", 1.0}}, `{"2":null,"10":[1],"b":1,"a":0}`},
	}
	for _, c := range cases {
		got, err := c.schema.NodeType(c.typ).ComputeAttrs(c.given)
		if s := attrsOrError(got, err); s != c.want {
			t.Errorf("%s %v: %s, want %s", c.typ, c.given, s, c.want)
		}
	}

	for _, c := range []struct {
		given Attrs
		want  string
	}{
		{nil, "Expected value of type string for attribute href on type link, got null"},
		{Attrs{}, "No value supplied for attribute href"},
		{Attrs{{"href", "h"}}, `{"href":"h","title":null}`},
		{Attrs{{"href", 5.0}}, "Expected value of type string for attribute href on type link, got number"},
	} {
		m, err := s.MarkType("link").Create(c.given)
		var got Attrs
		if err == nil {
			got = m.Attrs
		}
		if s := attrsOrError(got, err); s != c.want {
			t.Errorf("link %v: %s, want %s", c.given, s, c.want)
		}
		a, err := s.MarkType("link").ComputeAttrs(c.given)
		if s := attrsOrError(a, err); s != c.want {
			t.Errorf("link ComputeAttrs %v: %s, want %s", c.given, s, c.want)
		}
	}

	// Types without required attributes share their defaults, and marks
	// their instance.
	h := s.NodeType("heading")
	a1, _ := h.ComputeAttrs(nil)
	a2, _ := h.ComputeAttrs(nil)
	if &a1[0] != &a2[0] {
		t.Error("default attrs are not shared")
	}
	em1, _ := s.Mark("em", nil)
	em2, _ := s.MarkType("em").Create(nil)
	if em1 != em2 || em1.Attrs == nil || len(em1.Attrs) != 0 {
		t.Error("em instance is not shared")
	}
	if _, err := s.Mark("nope", nil); errString(err) != "There is no mark type nope in this schema" {
		t.Errorf("Mark(nope): %v", err)
	}
	if p, _ := s.NodeType("paragraph").ComputeAttrs(nil); p == nil || len(p) != 0 {
		t.Error("a type without attributes has empty, non-nil defaults")
	}
}

func attrsOrError(a Attrs, err error) string {
	if err != nil {
		return err.Error()
	}
	obj := JSONObject{}
	for _, x := range a {
		obj = append(obj, JSONProp{x.Name, x.Value})
	}
	return string(appendJSONValue(nil, obj))
}

func TestEqualAttrs(t *testing.T) {
	o1, _ := ParseJSONValue([]byte(`{"a":[1,{"b":null}],"c":"x"}`))
	o2, _ := ParseJSONValue([]byte(`{"c":"x","a":[1,{"b":null}]}`))
	o3, _ := ParseJSONValue([]byte(`{"c":"x","a":[1,{"b":false}]}`))
	cases := []struct {
		a, b Attrs
		want bool
	}{
		{nil, nil, true},
		{nil, Attrs{}, true},
		{Attrs{{"x", 1.0}, {"y", "s"}}, Attrs{{"y", "s"}, {"x", 1.0}}, true},
		{Attrs{{"x", 1.0}}, Attrs{{"x", "1"}}, false},
		{Attrs{{"x", 1.0}}, Attrs{{"y", 1.0}}, false},
		{Attrs{{"x", 1.0}}, Attrs{{"x", 1.0}, {"y", nil}}, false},
		{Attrs{{"x", o1}}, Attrs{{"x", o2}}, true},
		{Attrs{{"x", o1}}, Attrs{{"x", o3}}, false},
		{Attrs{{"x", nil}}, Attrs{{"x", nil}}, true},
		{Attrs{{"x", []any{}}}, Attrs{{"x", JSONObject{}}}, false},
	}
	for _, c := range cases {
		if got := equalAttrs(c.a, c.b); got != c.want {
			t.Errorf("equalAttrs(%v, %v) = %v", c.a, c.b, got)
		}
		if got := equalAttrs(c.b, c.a); got != c.want {
			t.Errorf("equalAttrs(%v, %v) = %v", c.b, c.a, got)
		}
	}
	if v, ok := (Attrs{{"x", 1.0}}).Get("x"); !ok || v != 1.0 {
		t.Error("Get")
	}
	if _, ok := (Attrs{{"x", 1.0}}).Get("y"); ok {
		t.Error("Get")
	}
}

func TestCheckAttrs(t *testing.T) {
	s := testBasicSchema(t)
	img := s.NodeType("image")
	cases := []struct {
		values Attrs
		want   string
	}{
		{Attrs{{"src", "a"}, {"alt", nil}, {"title", "t"}}, ""},
		{Attrs{{"src", "a"}, {"alt", nil}, {"title", "t"}, {"x", 1.0}}, "Unsupported attribute x for node of type image"},
		{Attrs{{"src", "a"}, {"title", nil}}, "Expected value of type string,null for attribute alt on type image, got undefined"},
		{Attrs{{"src", 1.0}, {"alt", nil}, {"title", nil}}, "Expected value of type string for attribute src on type image, got number"},
	}
	for _, c := range cases {
		if got := errString(checkAttrs(img.Attrs, c.values, "node", "image")); got != c.want {
			t.Errorf("checkAttrs(%v) = %q, want %q", c.values, got, c.want)
		}
	}
}

func TestCreate(t *testing.T) {
	s := testBasicSchema(t)
	cases := []struct {
		typ               string
		content           []string
		fill, checked     string
		createIsUnchecked bool
	}{
		{"doc", []string{"text"}, "null", `ERR Invalid content for node doc: <"x">`, true},
		{"list_item", []string{"blockquote"}, "list_item(paragraph, blockquote(paragraph))", "ERR Invalid content for node list_item: <blockquote(paragraph)>", true},
		{"ordered_list", nil, "ordered_list(list_item(paragraph))", "ERR Invalid content for node ordered_list: <>", true},
		{"blockquote", []string{"paragraph", "horizontal_rule"}, "blockquote(paragraph, horizontal_rule)", "blockquote(paragraph, horizontal_rule)", true},
		{"doc", []string{"list_item"}, "null", "ERR Invalid content for node doc: <list_item(paragraph)>", true},
		{"code_block", []string{"emtext"}, `code_block(em("y"))`, `ERR Invalid content for node code_block: <em("y")>`, true},
		{"paragraph", []string{"text", "image"}, `paragraph("x", image)`, `paragraph("x", image)`, true},
		{"ordered_list", []string{"paragraph"}, "null", "ERR Invalid content for node ordered_list: <paragraph>", true},
		{"horizontal_rule", []string{"paragraph"}, "null", "ERR Invalid content for node horizontal_rule: <paragraph>", true},
	}
	show := func(n *Node, err error) string {
		if err != nil {
			return "ERR " + err.Error()
		}
		if n == nil {
			return "null"
		}
		return n.String()
	}
	for _, c := range cases {
		nt := s.NodeType(c.typ)
		content := basicNodes(t, s, c.content)
		if got := show(nt.CreateAndFill(nil, content, nil)); got != c.fill {
			t.Errorf("%s.CreateAndFill(%v) = %s, want %s", c.typ, c.content, got, c.fill)
		}
		if got := show(nt.CreateChecked(nil, content, nil)); got != c.checked {
			t.Errorf("%s.CreateChecked(%v) = %s, want %s", c.typ, c.content, got, c.checked)
		}
		if got := show(s.Node(c.typ, nil, content, nil)); got != c.checked {
			t.Errorf("Node(%s, %v) = %s, want %s", c.typ, c.content, got, c.checked)
		}
		if n, err := nt.Create(nil, content, nil); err != nil || n.Content.ChildCount() != len(c.content) {
			t.Errorf("%s.Create(%v): %v", c.typ, c.content, err)
		}
	}

	// Marks are sorted; attrs are checked before content only in Create.
	em, _ := s.Mark("em", nil)
	strong, _ := s.Mark("strong", nil)
	link, _ := s.Mark("link", Attrs{{"href", "h"}})
	n, err := s.NodeType("image").Create(Attrs{{"src", "i"}}, Fragment{}, []*Mark{strong, em, link})
	if err != nil || len(n.Marks) != 3 || n.Marks[0] != link || n.Marks[1] != em || n.Marks[2] != strong {
		t.Errorf("Create marks: %v %v", n, err)
	}
	if _, err := s.Node("nope", nil, Fragment{}, nil); errString(err) != "Unknown node type: nope" {
		t.Errorf("Node(nope): %v", err)
	}
	if _, err := s.NodeType("heading").CreateChecked(Attrs{{"level", "x"}}, Fragment{}, nil); errString(err) != "Expected value of type number for attribute level on type heading, got string" {
		t.Errorf("CreateChecked attrs: %v", err)
	}
	if _, err := s.NodeType("heading").CreateAndFill(Attrs{{"level", "x"}}, Fragment{}, nil); errString(err) != "Expected value of type number for attribute level on type heading, got string" {
		t.Errorf("CreateAndFill attrs: %v", err)
	}
	for _, create := range []func(Attrs, Fragment, []*Mark) (*Node, error){
		s.NodeType("text").Create, s.NodeType("text").CreateChecked, s.NodeType("text").CreateAndFill,
	} {
		if _, err := create(nil, Fragment{}, nil); errString(err) != "NodeType.create can't construct text nodes" {
			t.Errorf("creating a text node: %v", err)
		}
	}
	txt, err := s.Text("hi", []*Mark{strong, em})
	if err != nil || txt.Text != "hi" || txt.Marks[0] != em || !txt.IsText() {
		t.Errorf("Text: %v %v", txt, err)
	}
	if _, err := s.Text("", nil); errString(err) != "Empty text nodes are not allowed" {
		t.Errorf("empty Text: %v", err)
	}
	if !s.NodeType("paragraph").ValidContent(basicNodes(t, s, []string{"text", "emtext"})) ||
		s.NodeType("code_block").ValidContent(basicNodes(t, s, []string{"emtext"})) ||
		s.NodeType("doc").ValidContent(Fragment{}) {
		t.Error("ValidContent")
	}
	if err := s.NodeType("doc").CheckContent(NewFragment([]*Node{mustText(t, s, strings.Repeat("é", 60))})); errString(err) != `Invalid content for node doc: <"`+strings.Repeat("é", 48) {
		t.Errorf("CheckContent message: %v", err)
	}
}

func mustText(t *testing.T, s *Schema, text string) *Node {
	t.Helper()
	n, err := s.Text(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFillErrors covers schemas whose node types cannot be filled, where
// JavaScript throws from createAndFill: a type needing itself recurses
// until the stack overflows, and a type without a fill yields null inside
// its parent's fill.
func TestFillErrors(t *testing.T) {
	s, err := newSchemaJSON([]byte(`{"nodes": {"doc": {"content": "block+"},
		"p": {"content": "text*", "group": "block"},
		"loop": {"content": "loop2", "group": "block"}, "loop2": {"content": "loop"},
		"stuck": {"content": "p+ req", "group": "block"}, "req": {"attrs": {"id": {}}},
		"holder": {"content": "stuck", "group": "block"},
		"text": {}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ typ, want string }{
		{"doc", "doc(p)"},
		{"loop", "ERR Maximum call stack size exceeded"},
		{"loop2", "ERR Maximum call stack size exceeded"},
		{"stuck", "null"},
		{"holder", "ERR Cannot read properties of null (reading 'nodeSize')"},
	}
	for _, c := range cases {
		got := "null"
		if n, err := s.NodeType(c.typ).CreateAndFill(nil, Fragment{}, nil); err != nil {
			got = "ERR " + err.Error()
		} else if n != nil {
			got = n.String()
		}
		if got != c.want {
			t.Errorf("%s.CreateAndFill() = %s, want %s", c.typ, got, c.want)
		}
	}
	_, ok, err := s.NodeType("holder").ContentMatch.FillBefore(Fragment{}, true, 0)
	if ok || errString(err) != "Cannot read properties of null (reading 'nodeSize')" {
		t.Errorf("FillBefore: %v %v", ok, err)
	}
}
