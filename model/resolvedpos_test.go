package model

import (
	"sync"
	"testing"
)

func TestResolve(t *testing.T) {
	b := newBasicBuilders(t)
	testDoc := b.doc(b.p("ab"), b.blockquote(b.p(b.em("cd"), "ef"))).node()
	type level struct {
		node       *Node
		start, end int
	}
	doc := level{testDoc, 0, 12}
	p1 := level{testDoc.Child(0), 1, 3}
	blk := level{testDoc.Child(1), 5, 11}
	p2 := level{blk.node.Child(0), 6, 10}
	// Each case: the levels, the parent offset, and the node (or the text
	// content) before and after.
	cases := []struct {
		levels        []level
		offset        int
		before, after any
	}{
		{[]level{doc}, 0, nil, p1.node},
		{[]level{doc, p1}, 0, nil, "ab"},
		{[]level{doc, p1}, 1, "a", "b"},
		{[]level{doc, p1}, 2, "ab", nil},
		{[]level{doc}, 4, p1.node, blk.node},
		{[]level{doc, blk}, 0, nil, p2.node},
		{[]level{doc, blk, p2}, 0, nil, "cd"},
		{[]level{doc, blk, p2}, 1, "c", "d"},
		{[]level{doc, blk, p2}, 2, "cd", "ef"},
		{[]level{doc, blk, p2}, 3, "e", "f"},
		{[]level{doc, blk, p2}, 4, "ef", nil},
		{[]level{doc, blk}, 6, p2.node, nil},
		{[]level{doc}, 12, blk.node, nil},
	}
	check := func(pos int, what string, got *Node, want any) {
		t.Helper()
		switch w := want.(type) {
		case nil:
			if got != nil {
				t.Errorf("pos %d: %s = %s, want nil", pos, what, got)
			}
		case string:
			if got == nil || got.TextContent() != w {
				t.Errorf("pos %d: %s = %v, want %q", pos, what, got, w)
			}
		case *Node:
			if got != w {
				t.Errorf("pos %d: %s = %v, want %s", pos, what, got, w)
			}
		}
	}
	for pos, c := range cases {
		r, err := testDoc.Resolve(pos)
		if err != nil {
			t.Fatal(err)
		}
		if r.Pos != pos || r.Depth != len(c.levels)-1 || r.ParentOffset != c.offset {
			t.Errorf("pos %d: depth %d offset %d", pos, r.Depth, r.ParentOffset)
		}
		for i, l := range c.levels {
			if !r.Node(i).Eq(l.node) || r.Start(i) != l.start || r.End(i) != l.end {
				t.Errorf("pos %d depth %d: node %s start %d end %d", pos, i, r.Node(i), r.Start(i), r.End(i))
			}
			if i > 0 {
				before, err1 := r.Before(i)
				after, err2 := r.After(i)
				if before != l.start-1 || after != l.end+1 || err1 != nil || err2 != nil {
					t.Errorf("pos %d depth %d: before %d after %d", pos, i, before, after)
				}
			}
		}
		check(pos, "NodeBefore", r.NodeBefore(), c.before)
		check(pos, "NodeAfter", r.NodeAfter(), c.after)
		if r.Parent() != r.Node(r.Depth) || r.Doc() != testDoc {
			t.Errorf("pos %d: Parent/Doc", pos)
		}
		if d1, _ := r.Before(r.Depth + 1); d1 != pos {
			t.Errorf("pos %d: Before(depth+1) = %d", pos, d1)
		}
		if r2, _ := testDoc.ResolveNoCache(pos); r2 == r || r2.String() != r.String() {
			t.Errorf("pos %d: ResolveNoCache", pos)
		}
	}
	r, _ := testDoc.Resolve(0)
	if _, err := r.Before(0); err == nil || err.Error() != "There is no position before the top-level node" {
		t.Errorf("Before(0): %v", err)
	}
	if _, err := r.After(0); err == nil || err.Error() != "There is no position after the top-level node" {
		t.Errorf("After(0): %v", err)
	}
	for _, pos := range []int{-1, 13, 1 << 40} {
		if _, err := testDoc.Resolve(pos); err == nil || err.Error() != "Position "+itoa(pos)+" out of range" {
			t.Errorf("Resolve(%d): %v", pos, err)
		}
	}
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestResolvedPosIndexes(t *testing.T) {
	b := newBasicBuilders(t)
	d := b.doc(b.blockquote(b.p("one"), b.blockquote(b.p("two ", b.em("three")), b.p("four")))).node()
	pThree, _ := d.Resolve(12) // start of em("three")
	cases := []struct{ index, depth, want int }{
		{0, 3, 8}, {1, 3, 12}, {2, 3, 17},
		{0, 2, 7}, {1, 2, 18}, {2, 2, 24},
		{0, 1, 1}, {1, 1, 6}, {2, 1, 25},
		{0, 0, 0}, {1, 0, 26},
	}
	for _, c := range cases {
		if got := pThree.PosAtIndex(c.index, c.depth); got != c.want {
			t.Errorf("PosAtIndex(%d, %d) = %d, want %d", c.index, c.depth, got, c.want)
		}
	}
	if pThree.String() != "blockquote_0/blockquote_1/paragraph_0:4" {
		t.Errorf("String = %s", pThree)
	}
	if pThree.Index(3) != 1 || pThree.IndexAfter(3) != 1 || pThree.IndexAfter(2) != 1 || pThree.TextOffset() != 0 {
		t.Errorf("indexes: %d %d %d", pThree.Index(3), pThree.IndexAfter(3), pThree.IndexAfter(2))
	}
	inText, _ := d.Resolve(14)
	if inText.TextOffset() != 2 || inText.IndexAfter(3) != 2 {
		t.Errorf("in text: offset %d indexAfter %d", inText.TextOffset(), inText.IndexAfter(3))
	}
	if inText.SharedDepth(20) != 2 || inText.SharedDepth(3) != 1 || inText.SharedDepth(27) != 0 {
		t.Errorf("SharedDepth: %d %d %d", inText.SharedDepth(20), inText.SharedDepth(3), inText.SharedDepth(27))
	}
	other, _ := d.Resolve(20)
	if !inText.SameParent(pThree) || inText.SameParent(other) {
		t.Errorf("SameParent")
	}
	if inText.Max(other) != other || inText.Min(other) != inText || other.Max(inText) != other {
		t.Errorf("Max/Min")
	}
}

func TestBlockRange(t *testing.T) {
	b := newBasicBuilders(t)
	d := b.doc(b.blockquote(b.p("one"), b.p("two")), b.p("three")).node()
	res := func(pos int) *ResolvedPos {
		r, err := d.Resolve(pos)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		from, to                                int
		pred                                    func(*Node) bool
		depth, start, end, startIndex, endIndex int
	}{
		{3, 3, nil, 1, 1, 6, 0, 1},   // inside one paragraph
		{3, 8, nil, 1, 1, 11, 0, 2},  // two paragraphs in the quote
		{3, 15, nil, 0, 0, 19, 0, 2}, // across the quote's end
		{15, 3, nil, 0, 0, 19, 0, 2}, // reversed
		{1, 1, nil, 0, 0, 12, 0, 1},  // between blocks in the quote: pos == other
		{3, 8, func(n *Node) bool { return n.Type.Name == "doc" }, 0, 0, 12, 0, 1},
	}
	for _, c := range cases {
		r := res(c.from).BlockRange(res(c.to), c.pred)
		if r == nil {
			t.Errorf("BlockRange(%d, %d) = nil", c.from, c.to)
			continue
		}
		if r.Depth != c.depth || r.Start() != c.start || r.End() != c.end || r.StartIndex() != c.startIndex || r.EndIndex() != c.endIndex {
			t.Errorf("BlockRange(%d, %d) = depth %d [%d, %d] indexes %d-%d", c.from, c.to, r.Depth, r.Start(), r.End(), r.StartIndex(), r.EndIndex())
		}
		if r.Parent() != r.From.Node(r.Depth) {
			t.Errorf("Parent")
		}
	}
	if r := res(3).BlockRange(nil, func(*Node) bool { return false }); r != nil {
		t.Errorf("rejecting pred gives %v", r)
	}
	if r := res(0).BlockRange(nil, nil); r != nil {
		t.Errorf("top-level position gives %v", r)
	}
}

func TestResolvedPosMarks(t *testing.T) {
	b := newBasicBuilders(t)
	s := b.schema
	em, _ := s.Mark("em", nil)
	strong, _ := s.Mark("strong", nil)
	baz, _ := s.Mark("link", Attrs{{"href", "baz"}})
	cases := []struct {
		doc  *tnode
		mark *Mark
		want bool
	}{
		{b.doc(b.p(b.em("fo<a>o"))), em, true},
		{b.doc(b.p(b.em("fo<a>o"))), strong, false},
		{b.doc(b.p(b.em("hi"), "<a> there")), em, true},
		{b.doc(b.p("one <a>", b.em("two"))), em, false},
		{b.doc(b.p(b.em("<a>one"))), em, true},
		{b.doc(b.p(b.a("li<a>nk"))), baz, false},
	}
	for _, c := range cases {
		r, _ := c.doc.node().Resolve(c.doc.tag["a"])
		if got := c.mark.IsInSet(r.Marks()); got != c.want {
			t.Errorf("%s at %d: %v, want %v", c.mark.Type.Name, c.doc.tag["a"], got, c.want)
		}
	}

	cs := customMarkSchema(t)
	remark1, _ := cs.Mark("remark", Attrs{{"id", 1.0}})
	remark2, _ := cs.Mark("remark", Attrs{{"id", 2.0}})
	cstrong, _ := cs.Mark("strong", nil)
	txt := func(s string, marks ...*Mark) *Node {
		n, err := cs.Text(s, marks)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	para := func(nodes ...*Node) *Node {
		n, err := cs.Node("paragraph", nil, NewFragment(nodes), nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	customDoc, err := cs.Node("doc", nil, NewFragment([]*Node{
		para(txt("one", remark1, cstrong), txt("two")),
		para(txt("one"), txt("two", remark1), txt("three", remark1)),
		para(txt("one", remark2), txt("two", remark1)),
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pos  int
		want []*Mark
	}{
		{4, []*Mark{cstrong}},
		{3, []*Mark{remark1, cstrong}},
		{20, nil},
		{15, []*Mark{remark1}},
		{25, nil},
	} {
		r, _ := customDoc.Resolve(c.pos)
		if got := r.Marks(); !SameMarkSet(got, c.want) {
			t.Errorf("marks at %d: %d marks, want %d", c.pos, len(got), len(c.want))
		}
	}
	// MarksAcross.
	d := b.doc(b.p("a", b.a("bc"), "d"), b.hr()).node()
	from, _ := d.Resolve(2)
	to, _ := d.Resolve(4)
	if m, ok := from.MarksAcross(to); !ok || len(m) != 0 {
		t.Errorf("non-inclusive link dropped when absent at end: %v %v", m, ok)
	}
	to, _ = d.Resolve(3)
	if m, ok := from.MarksAcross(to); !ok || len(m) != 1 {
		t.Errorf("link kept when present at end: %v %v", m, ok)
	}
	end, _ := d.Resolve(5)
	if _, ok := end.MarksAcross(end); ok {
		t.Errorf("MarksAcross at end of parent should be null")
	}
	top, _ := d.Resolve(6)
	if _, ok := top.MarksAcross(top); ok {
		t.Errorf("MarksAcross before a block should be null")
	}
	empty, _ := b.doc(b.p()).node().Resolve(1)
	if m := empty.Marks(); m != nil {
		t.Errorf("marks in empty paragraph: %v", m)
	}
}

func TestResolveCacheConcurrent(t *testing.T) {
	b := newBasicBuilders(t)
	d := b.doc(b.p("hello"), b.blockquote(b.p("world"), b.p("!"))).node()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				pos := (i*7 + g) % (d.Content.Size() + 1)
				r, err := d.Resolve(pos)
				if err != nil || r.Pos != pos || r.Doc() != d {
					t.Errorf("Resolve(%d) = %v, %v", pos, r, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	r1, _ := d.Resolve(3)
	r2, _ := d.Resolve(3)
	if r1 != r2 {
		t.Errorf("recent result not cached")
	}
}

func BenchmarkResolveNoCache(b *testing.B) {
	doc, positions := replaceBenchDoc(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := doc.ResolveNoCache(positions[(i*7919)%len(positions)] + 3); err != nil {
			b.Fatal(err)
		}
	}
}
