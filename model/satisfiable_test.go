package model

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckSatisfiable: LoadSchema refuses the schemas no document can
// satisfy, which prosemirror-model (and NewSchema) builds, naming the node
// types; it keeps the schemas whose every type can be completed.
func TestCheckSatisfiable(t *testing.T) {
	cases := []struct{ spec, want string }{
		// A node type that needs itself.
		{`{"nodes": {"doc": {"content": "a"}, "a": {"content": "a"}, "text": {}}}`,
			`no finite document can hold node types doc (content "a"), a (content "a")`},
		// A cycle through two types, not needed by doc, and a type that
		// needs a type of the cycle.
		{`{"nodes": {"doc": {"content": "p+"}, "p": {"content": "text*"}, "loop": {"content": "p loop2"},
			"loop2": {"content": "(loop | loop)+"}, "user": {"content": "p* loop2"}, "text": {}}}`,
			`no finite document can hold node types loop (content "p loop2"), loop2 (content "(loop | loop)+"), user (content "p* loop2")`},
		{`{"nodes": {"doc": {"content": "p+"}, "p": {"content": "text*"}, "self": {"content": "self+"}, "text": {}}}`,
			`no finite document can hold node type self (content "self+"): its content requires a node of its own type`},
		// Possible types whose empty fill JavaScript cannot make: the fill
		// of a tries a first and overflows the stack; stuck has no fill
		// (req needs its attribute), which Fragment.from then reads.
		{`{"nodes": {"doc": {"content": "a"}, "a": {"content": "a | p"}, "p": {}, "text": {}}}`,
			"the top node type doc cannot be created empty (createAndFill: Maximum call stack size exceeded)"},
		{`{"nodes": {"doc": {"content": "stuck"}, "stuck": {"content": "p+ req"}, "p": {}, "req": {"attrs": {"id": {}}}, "text": {}}}`,
			"the top node type doc cannot be created empty (createAndFill: Cannot read properties of null (reading 'nodeSize'))"},
		{`{"nodes": {"doc": {"content": "p* img"}, "p": {}, "img": {"attrs": {"src": {}}}, "text": {}}}`,
			"the top node type doc cannot be created empty (createAndFill: its content cannot be completed with generatable nodes)"},
		{`{"topNode": "page", "nodes": {"doc": {"content": "page"}, "page": {"content": "page"}, "text": {}}}`,
			`no finite document can hold node types doc (content "page"), page (content "page")`},
		// Satisfiable: recursion with a way out, text and attributes given
		// by the document, a type only reachable with attributes.
		{`{"nodes": {"doc": {"content": "a"}, "a": {"content": "p | a"}, "p": {"content": "text*"}, "text": {}}}`, ""},
		{`{"nodes": {"doc": {"content": "block+"}, "p": {"group": "block", "content": "inline*"},
			"quote": {"group": "block", "content": "block+"}, "fig": {"content": "p* img", "group": "block"},
			"img": {"attrs": {"src": {}}}, "code": {"content": "br* text"}, "br": {"inline": true}, "text": {"group": "inline"}}}`, ""},
		{`{"nodes": {"doc": {"content": "p+", "attrs": {"v": {}}}, "p": {}, "text": {}}}`, ""},
	}
	for _, c := range cases {
		_, err := LoadSchema([]byte(c.spec))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.spec, err)
		case c.want == "":
		case err == nil:
			t.Errorf("%s: loaded, want %q", c.spec, c.want)
		case !errors.Is(err, ErrUnsatisfiable) || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s:\n got %q\nwant %q", c.spec, err, c.want)
		}
		if c.want == "" {
			continue
		}
		// NewSchema builds it, as prosemirror-model does.
		spec, err := ParseSchemaSpec([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSchema(spec)
		if err != nil {
			t.Errorf("%s: NewSchema: %v", c.spec, err)
		} else if err := s.CheckSatisfiable(); err == nil {
			t.Errorf("%s: CheckSatisfiable: no error", c.spec)
		}
	}
}
