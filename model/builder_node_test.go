package model

import (
	"os"
	"regexp"
	"sync"
	"testing"
)

// A small port of prosemirror-test-builder for the basic schema: strings
// become text nodes and may hold position tags such as "<a>", which are
// recorded (as document positions, for a doc) in the result's tag map.

var (
	basicOnce   sync.Once
	basicSchema *Schema
	basicErr    error
)

// testBasicSchema returns schemas/basic.json, loaded once.
func testBasicSchema(t testing.TB) *Schema {
	t.Helper()
	basicOnce.Do(func() {
		data, err := os.ReadFile("../schemas/basic.json")
		if err != nil {
			basicErr = err
			return
		}
		basicSchema, basicErr = LoadSchema(data)
	})
	if basicErr != nil {
		t.Fatalf("loading basic schema: %v", basicErr)
	}
	return basicSchema
}

// tnode is a builder result: one block node (tags relative to its content)
// or, for marks, a flat run of inline nodes (tags relative to its start).
type tnode struct {
	nodes []*Node
	tag   map[string]int
	flat  bool
}

// node returns the single node built.
func (t *tnode) node() *Node { return t.nodes[0] }

// at returns the position of tag name, or def when absent.
func (t *tnode) at(name string, def int) int {
	if p, ok := t.tag[name]; ok {
		return p
	}
	return def
}

var tagRE = regexp.MustCompile(`<(\w+)>`)

// flattenChildren turns builder arguments into nodes and tag positions.
func flattenChildren(s *Schema, children []any) ([]*Node, map[string]int) {
	var nodes []*Node
	tags := map[string]int{}
	pos := 0
	for _, c := range children {
		switch c := c.(type) {
		case string:
			at := 0
			for _, m := range tagRE.FindAllStringSubmatchIndex(c, -1) {
				if m[0] > at {
					n, err := s.Text(c[at:m[0]], nil)
					if err != nil {
						panic(err)
					}
					nodes = append(nodes, n)
					pos += n.NodeSize()
				}
				tags[c[m[2]:m[3]]] = pos
				at = m[1]
			}
			if at < len(c) {
				n, err := s.Text(c[at:], nil)
				if err != nil {
					panic(err)
				}
				nodes = append(nodes, n)
				pos += n.NodeSize()
			}
		case *tnode:
			shift := 1
			if c.flat {
				shift = 0
			}
			for k, v := range c.tag {
				tags[k] = v + shift + pos
			}
			for _, n := range c.nodes {
				nodes = append(nodes, n)
				pos += n.NodeSize()
			}
		case *Node:
			nodes = append(nodes, c)
			pos += c.NodeSize()
		default:
			panic("bad builder child")
		}
	}
	return nodes, tags
}

// testBuilder makes node and mark builders for a schema.
type testBuilder struct{ s *Schema }

func (b testBuilder) block(name string, attrs Attrs) func(children ...any) *tnode {
	return func(children ...any) *tnode {
		nodes, tags := flattenChildren(b.s, children)
		t := b.s.NodeType(name)
		if t == nil {
			panic("no node type " + name)
		}
		n, err := t.Create(attrs, NewFragment(nodes), nil)
		if err != nil {
			panic(err)
		}
		return &tnode{nodes: []*Node{n}, tag: tags}
	}
}

func (b testBuilder) mark(name string, attrs Attrs) func(children ...any) *tnode {
	return func(children ...any) *tnode {
		nodes, tags := flattenChildren(b.s, children)
		m, err := b.s.Mark(name, attrs)
		if err != nil {
			panic(err)
		}
		for i, n := range nodes {
			nodes[i] = n.Mark(m.AddToSet(n.Marks))
		}
		return &tnode{nodes: nodes, tag: tags, flat: true}
	}
}

// basicBuilders are the prosemirror-test-builder names for the basic schema.
type basicBuilders struct {
	doc, p, blockquote, h1, h2, ul, ol, li, pre, hr, br, img func(children ...any) *tnode
	em, strong, code, a                                      func(children ...any) *tnode
	schema                                                   *Schema
}

func newBasicBuilders(t testing.TB) basicBuilders {
	s := testBasicSchema(t)
	b := testBuilder{s}
	return basicBuilders{
		doc:        b.block("doc", nil),
		p:          b.block("paragraph", nil),
		blockquote: b.block("blockquote", nil),
		h1:         b.block("heading", Attrs{{"level", 1.0}}),
		h2:         b.block("heading", Attrs{{"level", 2.0}}),
		ul:         b.block("bullet_list", nil),
		ol:         b.block("ordered_list", nil),
		li:         b.block("list_item", nil),
		pre:        b.block("code_block", nil),
		hr:         b.block("horizontal_rule", nil),
		br:         b.block("hard_break", nil),
		img:        b.block("image", Attrs{{"src", "img.png"}}),
		em:         b.mark("em", nil),
		strong:     b.mark("strong", nil),
		code:       b.mark("code", nil),
		a:          b.mark("link", Attrs{{"href", "foo"}}),
		schema:     s,
	}
}

// byteSource turns fuzz input into choices; it yields zeros when exhausted.
type byteSource struct {
	data []byte
	i    int
}

func (b *byteSource) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if b.i >= len(b.data) {
		return 0
	}
	v := int(b.data[b.i])
	b.i++
	if n > 256 && b.i < len(b.data) {
		v = v<<8 | int(b.data[b.i])
		b.i++
	}
	return v % n
}

// randomDoc builds a basic-schema document from src: mostly valid, with
// the occasional misplaced node (documents from JSON are not validated).
func randomDoc(s *Schema, src *byteSource) *Node {
	return randomNode(s, src, s.NodeType("doc"), 0)
}

var (
	randomTexts  = []string{"a", "bc", "héllo", "😀", "x😀y", "日本", "z"}
	randomBlocks = []string{"paragraph", "blockquote", "heading", "code_block", "bullet_list", "ordered_list", "horizontal_rule", "list_item"}
	randomInline = []string{"text", "text", "text", "image", "hard_break"}
)

func randomNode(s *Schema, src *byteSource, t *NodeType, depth int) *Node {
	var children []*Node
	if !t.IsLeaf() {
		n := src.intn(4)
		if depth > 4 {
			n = 0
		}
		if n == 0 && t.Name != "paragraph" && t.Name != "heading" && t.Name != "code_block" && src.intn(8) != 0 {
			n = 1 // mostly valid: block+ content is not empty
		}
		for i := 0; i < n; i++ {
			var name string
			switch {
			case src.intn(16) == 0: // anything, anywhere
				all := append(append([]string{}, randomBlocks...), randomInline...)
				name = all[src.intn(len(all))]
			case t.InlineContent:
				name = randomInline[src.intn(len(randomInline))]
				if t.Name == "code_block" {
					name = "text"
				}
			case t.Name == "bullet_list" || t.Name == "ordered_list":
				name = "list_item"
			case t.Name == "list_item" && i == 0:
				name = "paragraph"
			default:
				name = randomBlocks[src.intn(len(randomBlocks)-1)]
			}
			children = append(children, randomChild(s, src, name, depth+1))
		}
	}
	n, err := t.Create(nil, NewFragment(children), nil)
	if err != nil {
		panic(err)
	}
	return n
}

func randomChild(s *Schema, src *byteSource, name string, depth int) *Node {
	var marks []*Mark
	if src.intn(3) == 0 {
		for _, m := range s.Marks {
			if src.intn(3) == 0 {
				var attrs Attrs
				if m.Name == "link" {
					attrs = Attrs{{"href", []string{"a", "b"}[src.intn(2)]}}
				}
				mk, err := m.Create(attrs)
				if err != nil {
					panic(err)
				}
				marks = mk.AddToSet(marks)
			}
		}
	}
	switch name {
	case "text":
		n, err := s.Text(randomTexts[src.intn(len(randomTexts))], marks)
		if err != nil {
			panic(err)
		}
		return n
	case "image":
		n, err := s.NodeType("image").Create(Attrs{{"src", "i"}}, Fragment{}, marks)
		if err != nil {
			panic(err)
		}
		return n
	case "hard_break":
		n, err := s.NodeType("hard_break").Create(nil, Fragment{}, marks)
		if err != nil {
			panic(err)
		}
		return n
	}
	return randomNode(s, src, s.NodeType(name), depth)
}

// randomSlice returns a slice of a random document, cut between two random
// positions, or now and then one with arbitrary open depths.
func randomSlice(s *Schema, src *byteSource) Slice {
	if src.intn(6) == 0 {
		return EmptySlice
	}
	d := randomDoc(s, src)
	from, to := src.intn(d.Content.Size()+1), src.intn(d.Content.Size()+1)
	if from > to {
		from, to = to, from
	}
	sl, err := d.Slice(from, to, src.intn(4) == 0)
	if err != nil {
		panic(err)
	}
	if src.intn(5) == 0 {
		sl.OpenStart += src.intn(5) - 2
		sl.OpenEnd += src.intn(5) - 2
	}
	return sl
}
