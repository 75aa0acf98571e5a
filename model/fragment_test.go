package model

import (
	"strings"
	"testing"
)

func TestFragmentBasics(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	var empty Fragment
	if empty.Size() != 0 || empty.ChildCount() != 0 || empty.FirstChild() != nil || empty.LastChild() != nil ||
		empty.MaybeChild(0) != nil || empty.String() != "<>" || !empty.Eq(Fragment{}) {
		t.Errorf("zero Fragment is not empty")
	}
	em, _ := s.Mark("em", nil)
	ta, _ := s.Text("a", nil)
	tb, _ := s.Text("b😀", nil)
	tc, _ := s.Text("c", []*Mark{em})
	brk := b.br().node()
	f := NewFragment([]*Node{ta, tb, tc, brk})
	if f.ChildCount() != 3 || f.Size() != 6 || f.String() != `<"ab😀", em("c"), hard_break>` {
		t.Errorf("NewFragment: %s size %d", f, f.Size())
	}
	if f.Child(0).NodeSize() != 4 || len(f.Children()) != 3 {
		t.Errorf("joined text size")
	}
	// Splitting a pair and joining the halves again.
	hi, lo := tb.Cut(0, 2), tb.Cut(2, 3)
	if hi.NodeSize() != 2 || lo.NodeSize() != 1 {
		t.Errorf("cut halves: %d %d", hi.NodeSize(), lo.NodeSize())
	}
	if j := NewFragment([]*Node{hi, lo}); j.ChildCount() != 1 || j.Child(0).Text != "b😀" {
		t.Errorf("rejoined: %s", j)
	}
	// Append joins text at the seam only.
	f1 := NewFragment([]*Node{ta})
	f2 := NewFragment([]*Node{tb, brk})
	app := f1.Append(f2)
	if app.String() != `<"ab😀", hard_break>` || app.Size() != 5 {
		t.Errorf("Append: %s %d", app, app.Size())
	}
	if f1.Append(Fragment{}).String() != f1.String() || (Fragment{}).Append(f2).String() != f2.String() {
		t.Errorf("Append with empty")
	}
	if f1.String() != `<"a">` || f2.String() != `<"b😀", hard_break>` {
		t.Errorf("Append modified its inputs")
	}
	// AddToStart / AddToEnd / ReplaceChild do not join and do not share.
	start := f2.AddToStart(ta)
	end := f2.AddToEnd(ta)
	if start.String() != `<"a", "b😀", hard_break>` || start.Size() != 5 || end.String() != `<"b😀", hard_break, "a">` || end.Size() != 5 {
		t.Errorf("AddToStart/End: %s %s", start, end)
	}
	rep := end.ReplaceChild(1, tc)
	if rep.String() != `<"b😀", em("c"), "a">` || rep.Size() != 5 || rep.Child(1).Marks[0].Type.Name != "em" || end.String() != `<"b😀", hard_break, "a">` {
		t.Errorf("ReplaceChild: %s", rep)
	}
	if end.ReplaceChild(1, brk).String() != end.String() {
		t.Errorf("ReplaceChild same node")
	}
	if got := end.CutByIndex(1, 3); got.String() != `<hard_break, "a">` || got.Size() != 2 {
		t.Errorf("CutByIndex: %s", got)
	}
	if got := end.CutByIndex(1, 1); got.ChildCount() != 0 {
		t.Errorf("CutByIndex empty")
	}
	var offs []int
	end.ForEach(func(c *Node, offset, index int) { offs = append(offs, offset) })
	if len(offs) != 3 || offs[1] != 3 || offs[2] != 4 {
		t.Errorf("ForEach: %v", offs)
	}
}

func TestFragmentCut(t *testing.T) {
	b := newBasicBuilders(t)
	f := b.doc(b.p("ab"), b.p("cd"), b.hr(), b.p("ef")).node().Content // sizes 4, 4, 1, 4
	cases := []struct {
		from, to int
		want     string
	}{
		{0, 13, `<paragraph("ab"), paragraph("cd"), horizontal_rule, paragraph("ef")>`},
		{4, 9, `<paragraph("cd"), horizontal_rule>`},
		{1, 3, `<paragraph("ab")>`},
		{2, 6, `<paragraph("b"), paragraph("c")>`},
		{2, 3, `<paragraph("b")>`},
		{5, 5, `<>`},
		{6, 2, `<>`},
		{9, 13, `<paragraph("ef")>`},
		{12, 99, `<paragraph>`},
		{13, 20, `<>`},
		{0, 1, `<paragraph>`},
	}
	for _, c := range cases {
		got := f.Cut(c.from, c.to)
		if got.String() != c.want {
			t.Errorf("Cut(%d, %d) = %s, want %s", c.from, c.to, got, c.want)
		}
		size := 0
		for _, n := range got.Children() {
			size += n.NodeSize()
		}
		if size != got.Size() {
			t.Errorf("Cut(%d, %d): size %d, children %d", c.from, c.to, got.Size(), size)
		}
	}
	// Cutting shares nothing mutable: appending to a cut does not change f.
	sub := f.Cut(4, 9)
	_ = sub.AddToEnd(b.hr().node())
	if f.Child(2).Type.Name != "horizontal_rule" || f.ChildCount() != 4 {
		t.Errorf("cut aliasing")
	}
	text := b.p("héllo😀").node().Content
	if got := text.Cut(1, 5); got.String() != `<"éllo">` {
		t.Errorf("text cut: %s", got)
	}
}

func TestFragmentFindIndex(t *testing.T) {
	b := newBasicBuilders(t)
	f := b.doc(b.p("ab"), b.hr(), b.p("cd"), b.hr(), b.hr()).node().Content // 0-4, 4-5, 5-9, 9-10, 10-11
	cases := []struct{ pos, index, offset int }{
		{0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {4, 1, 4}, {5, 2, 5}, {6, 2, 5}, {8, 2, 5},
		{9, 3, 9}, {10, 4, 10}, {11, 5, 11},
	}
	for _, c := range cases {
		index, offset, err := f.FindIndex(c.pos)
		if err != nil || index != c.index || offset != c.offset {
			t.Errorf("FindIndex(%d) = %d, %d, %v; want %d, %d", c.pos, index, offset, err, c.index, c.offset)
		}
	}
	for _, pos := range []int{-1, 12} {
		_, _, err := f.FindIndex(pos)
		if err == nil || !strings.HasPrefix(err.Error(), "Position "+itoa(pos)+" outside of fragment (<paragraph(\"ab\"), horizontal_rule") {
			t.Errorf("FindIndex(%d): %v", pos, err)
		}
	}
	// Many children: both scan directions agree with a linear scan.
	var nodes []*Node
	for i := 0; i < 50; i++ {
		nodes = append(nodes, b.p(strings.Repeat("x", i%5)).node())
	}
	big := NewFragment(nodes)
	for pos := 0; pos <= big.Size(); pos++ {
		index, offset, _ := big.FindIndex(pos)
		wi, wo, cur := len(nodes), big.Size(), 0
		for i, n := range nodes {
			end := cur + n.NodeSize()
			if pos == 0 {
				wi, wo = 0, 0
				break
			}
			if end >= pos {
				if end == pos {
					wi, wo = i+1, end
				} else {
					wi, wo = i, cur
				}
				break
			}
			cur = end
		}
		if index != wi || offset != wo {
			t.Fatalf("FindIndex(%d) = %d, %d; want %d, %d", pos, index, offset, wi, wo)
		}
	}
}

func TestFragmentTextBetween(t *testing.T) {
	b := newBasicBuilders(t)
	f := b.doc(b.p("ab", b.img()), b.blockquote(b.p("cd"), b.hr())).node().Content
	if got := f.TextBetween(0, f.Size(), "|", "*"); got != "ab*|cd|*" {
		t.Errorf("TextBetween = %q", got)
	}
	if got := f.TextBetween(2, 8, "", ""); got != "bc" {
		t.Errorf("TextBetween partial = %q", got)
	}
	var visited []string
	f.NodesBetween(2, 8, func(n *Node, pos int, parent *Node, index int) bool {
		name := n.Type.Name
		if parent == nil {
			name += "@top"
		}
		visited = append(visited, name)
		return true
	}, 10)
	if got := strings.Join(visited, ","); got != "paragraph@top,text,image,blockquote@top,paragraph,text" {
		t.Errorf("NodesBetween: %s", got)
	}
	var positions []int
	f.Descendants(func(n *Node, pos int, _ *Node, _ int) bool {
		positions = append(positions, pos)
		return true
	})
	if len(positions) != 7 || positions[2] != 3 || positions[3] != 5 || positions[6] != 10 {
		t.Errorf("Descendants positions: %v", positions)
	}
}
