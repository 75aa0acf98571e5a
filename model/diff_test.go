package model

import "testing"

func TestFindDiffStart(t *testing.T) {
	b := newBasicBuilders(t)
	cases := []struct {
		name string
		a, b *tnode
	}{
		{"returns null for identical nodes", b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye"))),
			b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")))},
		{"notices when one node is longer", b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")), "<a>"),
			b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")), b.p("oops"))},
		{"notices when one node is shorter", b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")), "<a>", b.p("oops")),
			b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")))},
		{"notices differing marks", b.doc(b.p("a<a>", b.em("b"))), b.doc(b.p("a", b.strong("b")))},
		{"stops at longer text", b.doc(b.p("foo<a>bar", b.em("b"))), b.doc(b.p("foo", b.em("b")))},
		{"stops at a different character", b.doc(b.p("foo<a>bar")), b.doc(b.p("foocar"))},
		{"stops at a different node type", b.doc(b.p("a"), "<a>", b.p("b")), b.doc(b.p("a"), b.h1("b"))},
		{"works when the difference is at the start", b.doc("<a>", b.p("b")), b.doc(b.h1("b"))},
		{"notices a different attribute", b.doc(b.p("a"), "<a>", b.h1("foo")), b.doc(b.p("a"), b.h2("foo"))},
		// UTF-16: a position never splits a surrogate pair whose first half matched.
		{"different emoji with the same high surrogate", b.doc(b.p("x<a>😀")), b.doc(b.p("x😁"))},
		{"multi-byte prefix", b.doc(b.p("é😀<a>a")), b.doc(b.p("é😀b"))},
		{"same-lead-byte characters", b.doc(b.p("日<a>本")), b.doc(b.p("日木"))},
		{"lone high surrogate against a pair", b.doc(b.p("x\xed\xa0\xbd<a>y")), b.doc(b.p("x😀"))},
	}
	for _, c := range cases {
		pos, ok := c.a.node().Content.FindDiffStart(c.b.node().Content, 0)
		want, wantOK := c.a.tag["a"]
		if pos != want || ok != wantOK {
			t.Errorf("%s: got %d %v, want %d %v", c.name, pos, ok, want, wantOK)
		}
	}
}

func TestFindDiffEnd(t *testing.T) {
	b := newBasicBuilders(t)
	cases := []struct {
		name string
		a, b *tnode
	}{
		{"returns null when there is no difference", b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye"))),
			b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")))},
		{"notices when the second doc is longer", b.doc("<a>", b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye"))),
			b.doc(b.p("oops"), b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")))},
		{"notices when the second doc is shorter", b.doc(b.p("oops"), "<a>", b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye"))),
			b.doc(b.p("a", b.em("b")), b.p("hello"), b.blockquote(b.h1("bye")))},
		{"notices different styles", b.doc(b.p("a", b.em("b"), "<a>c")), b.doc(b.p("a", b.strong("b"), "c"))},
		{"spots longer text", b.doc(b.p("bar<a>foo", b.em("b"))), b.doc(b.p("foo", b.em("b")))},
		{"spots different text", b.doc(b.p("foob<a>ar")), b.doc(b.p("foocar"))},
		{"notices different nodes", b.doc(b.p("a"), "<a>", b.p("b")), b.doc(b.h1("a"), b.p("b"))},
		{"notices a difference at the end", b.doc(b.p("b"), "<a>"), b.doc(b.h1("b"))},
		{"handles a similar start", b.doc("<a>", b.p("hello")), b.doc(b.p("hey"), b.p("hello"))},
		// UTF-16: the low surrogates match, the high ones differ; the JS
		// moves the position back after the pair.
		{"pair with the same low surrogate", b.doc(b.p("a\U00010400<a>b")), b.doc(b.p("a\U00010800b"))},
		{"multi-byte suffix", b.doc(b.p("a<a>é😀")), b.doc(b.p("bé😀"))},
	}
	for _, c := range cases {
		a, bb := c.a.node().Content, c.b.node().Content
		posA, posB, ok := a.FindDiffEnd(bb, a.Size(), bb.Size())
		want, wantOK := c.a.tag["a"]
		if posA != want || ok != wantOK {
			t.Errorf("%s: got %d %v, want %d %v", c.name, posA, ok, want, wantOK)
		}
		if ok && posA-a.Size() != posB-bb.Size() {
			t.Errorf("%s: b position %d not aligned", c.name, posB)
		}
	}
}

// Expected values from prosemirror-model, for pairs that differ in the
// middle of a surrogate pair.
func TestFindDiffSurrogates(t *testing.T) {
	b := newBasicBuilders(t)
	cases := []struct {
		a, b           string
		start          int
		endA, endB     int
		startOK, endOK bool
	}{
		{"x😀y", "x😁y", 2, 4, 4, true, true},
		{"😀", "😁", 1, 3, 3, true, true},
		{"\U00010400z", "\U00010800z", 1, 3, 3, true, true},
		{"ab", "ab😀", 3, 3, 5, true, true},
		{"x\xed\xa0\xbd", "x😀", 3, 3, 4, true, true},
		{"\xed\xb8\x80y", "😀y", 1, 1, 2, true, true},
		{"x\xed\xa0\xbdy", "x😀", 3, 4, 4, true, true},
		{"a\U00010400b", "a\U00010800b", 2, 4, 4, true, true},
		{"日本", "日木", 2, 3, 3, true, true},
	}
	for _, c := range cases {
		fa, fb := b.doc(b.p(c.a)).node().Content, b.doc(b.p(c.b)).node().Content
		start, ok := fa.FindDiffStart(fb, 0)
		if start != c.start || ok != c.startOK {
			t.Errorf("start(%q, %q) = %d %v, want %d", c.a, c.b, start, ok, c.start)
		}
		ea, eb, ok := fa.FindDiffEnd(fb, fa.Size(), fb.Size())
		if ea != c.endA || eb != c.endB || ok != c.endOK {
			t.Errorf("end(%q, %q) = %d %d %v, want %d %d", c.a, c.b, ea, eb, ok, c.endA, c.endB)
		}
	}
}
