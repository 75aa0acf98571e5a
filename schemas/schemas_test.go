package schemas

import (
	"slices"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	if got, want := Names(), []string{"basic", "suggest", "text"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	cases := []struct {
		name, top string
		nodes     []string
	}{
		{"text", "doc", []string{"text", "doc"}},
		{"basic", "doc", []string{"doc", "paragraph", "blockquote", "horizontal_rule", "heading", "code_block", "text", "image", "hard_break", "ordered_list", "bullet_list", "list_item"}},
	}
	for _, c := range cases {
		s, err := Get(c.name)
		if err != nil {
			t.Fatalf("Get(%q): %v", c.name, err)
		}
		if s.TopNodeType.Name != c.top {
			t.Errorf("%s: top node %s, want %s", c.name, s.TopNodeType.Name, c.top)
		}
		var names []string
		for _, n := range s.Nodes {
			names = append(names, n.Name)
		}
		if !slices.Equal(names, c.nodes) {
			t.Errorf("%s: nodes %v, want %v", c.name, names, c.nodes)
		}
		again, _ := Get(c.name)
		if again != s {
			t.Errorf("%s: Get built the schema twice", c.name)
		}
	}
	if _, err := Get("nope"); err == nil || !strings.Contains(err.Error(), "basic, suggest, text") {
		t.Errorf("Get(nope) error = %v, want one listing the built-ins", err)
	}
}
