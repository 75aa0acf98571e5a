package model

import (
	"strings"
	"testing"
)

func TestNodeString(t *testing.T) {
	b := newBasicBuilders(t)
	cases := []struct {
		node *tnode
		want string
	}{
		{b.doc(b.ul(b.li(b.p("hey"), b.p()), b.li(b.p("foo")))),
			`doc(bullet_list(list_item(paragraph("hey"), paragraph), list_item(paragraph("foo"))))`},
		{b.doc(b.p("foo", b.img(), b.br(), "bar")), `doc(paragraph("foo", image, hard_break, "bar"))`},
		{b.doc(b.p("foo", b.em("bar", b.strong("quux")), b.code("baz"))),
			`doc(paragraph("foo", em("bar"), em(strong("quux")), code("baz")))`},
		{b.p("a\"b\\\n😀"), `paragraph("a\"b\\\n😀")`},
		{b.br(), "hard_break"},
	}
	for _, c := range cases {
		if got := c.node.node().String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
	}
	text, _ := b.schema.Text("hello", nil)
	if got := text.String(); got != `"hello"` {
		t.Errorf("text String() = %s", got)
	}
}

func TestNodeCut(t *testing.T) {
	b := newBasicBuilders(t)
	cases := []struct {
		name      string
		doc, want *tnode
	}{
		{"extracts a full block", b.doc(b.p("foo"), "<a>", b.p("bar"), "<b>", b.p("baz")), b.doc(b.p("bar"))},
		{"cuts text", b.doc(b.p("0"), b.p("foo<a>bar<b>baz"), b.p("2")), b.doc(b.p("bar"))},
		{"cuts deeply", b.doc(b.blockquote(b.ul(b.li(b.p("a"), b.p("b<a>c")), b.li(b.p("d")), "<b>", b.li(b.p("e"))), b.p("3"))),
			b.doc(b.blockquote(b.ul(b.li(b.p("c")), b.li(b.p("d")))))},
		{"works from the left", b.doc(b.blockquote(b.p("foo<b>bar"))), b.doc(b.blockquote(b.p("foo")))},
		{"works to the right", b.doc(b.blockquote(b.p("foo<a>bar"))), b.doc(b.blockquote(b.p("bar")))},
		{"preserves marks", b.doc(b.p("foo", b.em("ba<a>r", b.img(), b.strong("baz"), b.br()), "qu<b>ux", b.code("xyz"))),
			b.doc(b.p(b.em("r", b.img(), b.strong("baz"), b.br()), "qu"))},
	}
	for _, c := range cases {
		d := c.doc.node()
		got := d.Cut(c.doc.at("a", 0), c.doc.at("b", d.Content.Size()))
		if !got.Eq(c.want.node()) {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want.node())
		}
		if got.NodeSize() != c.want.node().NodeSize() {
			t.Errorf("%s: size %d, want %d", c.name, got.NodeSize(), c.want.node().NodeSize())
		}
	}
}

func TestNodesBetween(t *testing.T) {
	b := newBasicBuilders(t)
	cases := []struct {
		doc  *tnode
		want []string
	}{
		{b.doc(b.p("foo<a>bar<b>baz")), []string{"paragraph", "foobarbaz"}},
		{b.doc(b.blockquote(b.ul(b.li(b.p("f<a>oo")), b.p("b"), "<b>"), b.p("c"))),
			[]string{"blockquote", "bullet_list", "list_item", "paragraph", "foo", "paragraph", "b"}},
		{b.doc(b.p(b.em("x"), "f<a>oo", b.em("bar", b.img(), b.strong("baz"), b.br()), "quux", b.code("xy<b>z"))),
			[]string{"paragraph", "foo", "bar", "image", "baz", "hard_break", "quux", "xyz"}},
	}
	for _, c := range cases {
		d := c.doc.node()
		var got []string
		d.NodesBetween(c.doc.tag["a"], c.doc.tag["b"], func(n *Node, pos int, parent *Node, index int) bool {
			if n.IsText() {
				got = append(got, n.Text)
			} else {
				got = append(got, n.Type.Name)
				if d.NodeAt(pos) != n {
					t.Errorf("pos %d does not point at %s but %s", pos, n, d.NodeAt(pos))
				}
			}
			if parent.Child(index) != n {
				t.Errorf("parent/index mismatch for %s", n)
			}
			return true
		}, 0)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("got %v, want %v", got, c.want)
		}
	}
	// Returning false skips children; Descendants visits everything.
	d := b.doc(b.blockquote(b.p("a")), b.p("b")).node()
	var names []string
	d.Descendants(func(n *Node, pos int, parent *Node, index int) bool {
		names = append(names, n.Type.Name)
		return n.Type.Name != "blockquote"
	})
	if got := strings.Join(names, ","); got != "blockquote,paragraph,text" {
		t.Errorf("Descendants with skip: %s", got)
	}
}

func TestTextBetweenAndContent(t *testing.T) {
	b := newBasicBuilders(t)
	d := b.doc(b.p("foo", b.img(), b.br())).node()
	if got := d.TextBetween(0, d.Content.Size(), "", "<leaf>"); got != "foo<leaf><leaf>" {
		t.Errorf("leafText: %q", got)
	}
	d = b.doc(b.p("one"), b.p(), b.p("two")).node()
	if got := d.TextBetween(0, 12, "\n", ""); got != "one\n\ntwo" {
		t.Errorf("separator around empty paragraph: %q", got)
	}
	d = b.doc(b.p("one"), b.hr(), b.hr(), b.p("two")).node()
	if got := d.TextBetween(0, 12, "\n", "---"); got != "one\n---\n---\ntwo" {
		t.Errorf("separator around leaves: %q", got)
	}
	if got := d.TextBetween(0, 12, "\n", ""); got != "one\ntwo" {
		t.Errorf("no separator around non-rendered leaves: %q", got)
	}
	if got := b.doc(b.p("foo")).node().TextContent(); got != "foo" {
		t.Errorf("TextContent doc: %q", got)
	}
	text, _ := b.schema.Text("foo", nil)
	if got := text.TextContent(); got != "foo" {
		t.Errorf("TextContent text: %q", got)
	}
	if got := b.doc(b.ul(b.li(b.p("hi")), b.li(b.p(b.em("a"), "b")))).node().TextContent(); got != "hiab" {
		t.Errorf("TextContent nested: %q", got)
	}
	// UTF-16 offsets.
	d = b.doc(b.p("a😀b")).node()
	if got := d.TextBetween(1, 5, "", ""); got != "a😀b" {
		t.Errorf("emoji: %q", got)
	}
	if got := d.TextBetween(2, 4, "", ""); got != "😀" {
		t.Errorf("emoji only: %q", got)
	}
}

func TestNodeFromFragment(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	par, _ := s.Node("paragraph", nil, Fragment{}, nil)
	brk, _ := s.Node("hard_break", nil, Fragment{}, nil)
	ta, _ := s.Text("a", nil)
	tb, _ := s.Text("b", nil)
	foo, _ := s.Text("foo", nil)
	cases := []struct {
		content Fragment
		want    *Node
	}{
		{FragmentOf(par), b.doc(b.p()).node()},
		{NewFragment([]*Node{brk, foo}), b.p(b.br(), "foo").node()},
		{b.doc(b.p("foo")).node().Content, b.doc(b.p("foo")).node()},
		{Fragment{}, b.p().node()},
		{NewFragment([]*Node{ta, tb}), b.p("ab").node()},
	}
	for _, c := range cases {
		if got := c.want.Copy(c.content); !got.Eq(c.want) {
			t.Errorf("Copy(%s) = %s, want %s", c.content, got, c.want)
		}
	}
	if NewFragment([]*Node{ta, tb}).ChildCount() != 1 {
		t.Errorf("adjacent text not joined")
	}
}

func TestNodeSizeAndAccessors(t *testing.T) {
	b := newBasicBuilders(t)
	d := b.doc(b.p("ab😀"), b.hr(), b.blockquote(b.p())).node()
	if d.NodeSize() != 2+6+1+4 || d.Content.Size() != 11 {
		t.Errorf("sizes: doc %d content %d", d.NodeSize(), d.Content.Size())
	}
	if d.FirstChild().NodeSize() != 6 || d.Child(0).FirstChild().NodeSize() != 4 {
		t.Errorf("paragraph/text size: %d %d", d.FirstChild().NodeSize(), d.Child(0).FirstChild().NodeSize())
	}
	if d.MaybeChild(3) != nil || d.MaybeChild(-1) != nil || d.LastChild().Type.Name != "blockquote" {
		t.Errorf("MaybeChild/LastChild")
	}
	if !d.Child(1).IsLeaf() || !d.Child(1).IsAtom() || !d.Child(1).IsBlock() || d.Child(1).IsInline() {
		t.Errorf("hr flags")
	}
	if !d.Child(0).IsTextblock() || !d.Child(0).InlineContent() || d.Child(2).IsTextblock() {
		t.Errorf("textblock flags")
	}
	if !d.Child(0).Child(0).IsText() || !d.Child(0).Child(0).IsInline() {
		t.Errorf("text flags")
	}
	var offsets []int
	d.ForEach(func(c *Node, offset, index int) { offsets = append(offsets, offset, index) })
	if len(offsets) != 6 || offsets[2] != 6 || offsets[4] != 7 || offsets[5] != 2 {
		t.Errorf("ForEach offsets %v", offsets)
	}
	// ChildAfter / ChildBefore / NodeAt.
	if c, i, o := d.ChildAfter(6); c.Type.Name != "horizontal_rule" || i != 1 || o != 6 {
		t.Errorf("ChildAfter(6) = %v %d %d", c, i, o)
	}
	if c, i, o := d.ChildBefore(6); c.Type.Name != "paragraph" || i != 0 || o != 0 {
		t.Errorf("ChildBefore(6) = %v %d %d", c, i, o)
	}
	if c, i, o := d.ChildBefore(3); c.Type.Name != "paragraph" || i != 0 || o != 0 {
		t.Errorf("ChildBefore(3) = %v %d %d", c, i, o)
	}
	if c, _, _ := d.ChildBefore(0); c != nil {
		t.Errorf("ChildBefore(0) = %v", c)
	}
	if c, i, _ := d.ChildAfter(11); c != nil || i != 3 {
		t.Errorf("ChildAfter(end) = %v %d", c, i)
	}
	if c, _, _ := d.ChildAfter(12); c != nil {
		t.Errorf("ChildAfter(out of range) = %v", c)
	}
	if n := d.NodeAt(2); n == nil || n.Text != "ab😀" {
		t.Errorf("NodeAt(2) = %v", n)
	}
	if n := d.NodeAt(6); n == nil || n.Type.Name != "horizontal_rule" {
		t.Errorf("NodeAt(6) = %v", n)
	}
	if n := d.NodeAt(8); n == nil || n.Type.Name != "paragraph" {
		t.Errorf("NodeAt(8) = %v", n)
	}
	if n := d.NodeAt(11); n != nil {
		t.Errorf("NodeAt(end) = %v", n)
	}
	if n := d.NodeAt(-1); n != nil {
		t.Errorf("NodeAt(-1) = %v", n)
	}
	if n := d.NodeAt(99); n != nil {
		t.Errorf("NodeAt(99) = %v", n)
	}
}

func TestNodeEqAndMarkup(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	if !b.doc(b.p("a", b.em("b"))).node().Eq(b.doc(b.p("a", b.em("b"))).node()) {
		t.Errorf("equal docs differ")
	}
	if b.doc(b.p("a", b.em("b"))).node().Eq(b.doc(b.p("a", b.strong("b"))).node()) {
		t.Errorf("different marks are equal")
	}
	if b.h1("x").node().Eq(b.h2("x").node()) {
		t.Errorf("different attrs are equal")
	}
	h1 := b.h1("x").node()
	heading := s.NodeType("heading")
	if !h1.HasMarkup(heading, nil, nil) || !h1.HasMarkup(heading, Attrs{{"level", 1.0}}, nil) ||
		h1.HasMarkup(heading, Attrs{{"level", 2.0}}, nil) {
		t.Errorf("HasMarkup")
	}
	em, _ := s.Mark("em", nil)
	text, _ := s.Text("x", nil)
	marked := text.Mark([]*Mark{em})
	if marked == text || !SameMarkSet(marked.Marks, []*Mark{em}) || marked.NodeSize() != 1 {
		t.Errorf("Mark(): %v", marked)
	}
	if marked.Mark(marked.Marks) != marked {
		t.Errorf("Mark with the same set should return the node")
	}
	if text.WithText("x") != text || text.WithText("yz").NodeSize() != 2 {
		t.Errorf("WithText")
	}
	p := b.p("abc").node()
	if p.Copy(p.Content) != p || p.Cut(0, 3) != p {
		t.Errorf("Copy/Cut of same content should return the node")
	}
}

func TestRangeHasMark(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	d := b.doc(b.p("ab", b.em("cd"), b.a("ef"))).node()
	em, link := s.MarkType("em"), s.MarkType("link")
	if d.RangeHasMark(1, 3, em) || !d.RangeHasMark(1, 4, em) || !d.RangeHasMark(4, 5, em) || d.RangeHasMark(5, 6, em) || d.RangeHasMark(4, 4, em) {
		t.Errorf("RangeHasMark em")
	}
	other, _ := s.Mark("link", Attrs{{"href", "bar"}})
	foo, _ := s.Mark("link", Attrs{{"href", "foo"}})
	if !d.RangeHasMark(6, 7, link) || d.RangeHasMark(1, 5, link) || d.RangeHasMarkInstance(1, 9, other) || !d.RangeHasMarkInstance(1, 9, foo) {
		t.Errorf("RangeHasMark link")
	}
}

func TestNodeCanReplace(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	d := b.doc(b.p("a"), b.p("b")).node()
	para := s.NodeType("paragraph")
	if !d.CanReplace(0, 2, b.doc(b.p("x")).node().Content, 0, 1) {
		t.Errorf("replace both paragraphs with one")
	}
	if d.CanReplace(0, 2, Fragment{}, 0, 0) {
		t.Errorf("doc needs block+")
	}
	if !d.CanReplaceWith(0, 2, para, nil) || d.CanReplaceWith(1, 1, s.NodeType("text"), nil) {
		t.Errorf("CanReplaceWith")
	}
	code := b.pre("x").node()
	em, _ := s.Mark("em", nil)
	if code.CanReplaceWith(0, 1, s.NodeType("text"), []*Mark{em}) || !code.CanReplaceWith(0, 1, s.NodeType("text"), nil) {
		t.Errorf("CanReplaceWith marks in code_block")
	}
	if !b.p("a").node().CanAppend(b.p("b").node()) || b.p("a").node().CanAppend(b.doc(b.p("b")).node()) {
		t.Errorf("CanAppend")
	}
	if !b.p("a").node().CanAppend(b.h1().node()) || b.p("a").node().CanAppend(b.ul(b.li(b.p())).node()) {
		t.Errorf("CanAppend empty")
	}
	if _, err := d.ContentMatchAt(2); err != nil {
		t.Errorf("ContentMatchAt: %v", err)
	}
	bad := b.doc(b.p("a")).node().Copy(NewFragment([]*Node{b.p("a").node().Child(0)}))
	if _, err := bad.ContentMatchAt(1); err == nil || err.Error() != "Called contentMatchAt on a node with invalid content" {
		t.Errorf("ContentMatchAt on invalid content: %v", err)
	}
	if bad.CanReplace(1, 1, Fragment{}, 0, 0) {
		t.Errorf("CanReplace on invalid content")
	}
}

func TestNodeCheck(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	if err := b.doc(b.p("a", b.em("b")), b.ul(b.li(b.p("c")))).node().Check(); err != nil {
		t.Errorf("valid doc: %v", err)
	}
	text, _ := s.Text("hi", nil)
	bad := b.doc(b.p()).node().Copy(FragmentOf(text))
	if err := bad.Check(); err == nil || err.Error() != `Invalid content for node doc: <"hi">` {
		t.Errorf("invalid content: %v", err)
	}
	deep := b.doc(b.blockquote(b.p())).node()
	deep = deep.Copy(FragmentOf(deep.Child(0).Copy(FragmentOf(text))))
	if err := deep.Check(); err == nil || err.Error() != `Invalid content for node blockquote: <"hi">` {
		t.Errorf("invalid nested content: %v", err)
	}
	link1, _ := s.Mark("link", Attrs{{"href", "a"}})
	link2, _ := s.Mark("link", Attrs{{"href", "b"}})
	twoLinks := b.doc(b.p(text.Mark([]*Mark{link1, link2}))).node()
	if err := twoLinks.Check(); err == nil || err.Error() != "Invalid collection of marks for node text: link,link" {
		t.Errorf("excluding marks: %v", err)
	}
	strong, _ := s.Mark("strong", nil)
	em, _ := s.Mark("em", nil)
	unsorted := b.doc(b.p(text.Mark([]*Mark{strong, em}))).node()
	if err := unsorted.Check(); err == nil || err.Error() != "Invalid collection of marks for node text: strong,em" {
		t.Errorf("unsorted marks: %v", err)
	}
	codeMarks := b.doc(b.pre(text.Mark([]*Mark{em}))).node()
	if err := codeMarks.Check(); err == nil || !strings.HasPrefix(err.Error(), "Invalid content for node code_block") {
		t.Errorf("marks not allowed: %v", err)
	}
	badAttr := newNode(s.NodeType("heading"), Attrs{{"level", "x"}}, Fragment{}, nil)
	if err := b.doc(badAttr).node().Check(); err == nil ||
		err.Error() != "Expected value of type number for attribute level on type heading, got string" {
		t.Errorf("attr validation: %v", err)
	}
	unknown := newNode(s.NodeType("paragraph"), Attrs{{"foo", 1.0}}, Fragment{}, nil)
	if err := b.doc(unknown).node().Check(); err == nil || err.Error() != "Unsupported attribute foo for node of type paragraph" {
		t.Errorf("unknown attr: %v", err)
	}
	long := strings.Repeat("x", 80)
	longText, _ := s.Text(long, nil)
	if err := b.doc(b.p()).node().Copy(FragmentOf(longText)).Check(); err == nil ||
		err.Error() != `Invalid content for node doc: <"`+strings.Repeat("x", 48) {
		t.Errorf("message truncated to 50: %v", err)
	}
}

func TestNewTextNode(t *testing.T) {
	s := testBasicSchema(t)
	if _, err := NewTextNode(s.NodeType("text"), "", nil); err == nil || err.Error() != "Empty text nodes are not allowed" {
		t.Errorf("empty text: %v", err)
	}
	n, err := NewTextNode(s.NodeType("text"), "x😀", nil)
	if err != nil || n.NodeSize() != 3 || n.Text != "x😀" {
		t.Errorf("NewTextNode: %v %v", n, err)
	}
}
