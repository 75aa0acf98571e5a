package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The tests below check fragments stored in chunks (more than chunkMax
// children) against a reference: the same operations on a plain slice of
// children, done by the one-slice code (which works for any width).

// chunkTestPool returns nodes to build fragments from: text nodes that
// join (same and different marks, astral characters), leaves and blocks.
func chunkTestPool(t testing.TB) []*Node {
	b := newBasicBuilders(t)
	s := b.schema
	em, _ := s.Mark("em", nil)
	var pool []*Node
	for _, text := range []string{"a", "bc", "😀x", "y😀"} {
		plain, _ := s.Text(text, nil)
		marked, _ := s.Text(text, []*Mark{em})
		pool = append(pool, plain, marked)
	}
	pool = append(pool, b.br().node(), b.hr().node(), b.p().node(), b.p("ab").node(),
		b.p("x", b.em("😀z")).node(), b.blockquote(b.p("q"), b.p("rs")).node())
	return pool
}

// refFragment is the reference for a fragment of the given children: the
// one-slice representation, whatever the width.
func refFragment(nodes []*Node) Fragment {
	nodes = slices.Clone(nodes)
	return Fragment{content: nodes[:len(nodes):len(nodes)], size: sumSizes(nodes)}
}

// refAppend is Fragment.Append on slices of children.
func refAppend(a, b []*Node) Fragment {
	if len(a) == 0 || len(b) == 0 {
		return refFragment(append(slices.Clone(a), b...))
	}
	last, first := a[len(a)-1], b[0]
	if last.Type.IsText && last.SameMarkup(first) {
		joined := last.WithText(textConcat(last.Text, first.Text))
		return refFragment(append(append(slices.Clone(a[:len(a)-1]), joined), b[1:]...))
	}
	return refFragment(append(slices.Clone(a), b...))
}

func mustResolve(t *testing.T, doc *Node, pos int) *ResolvedPos {
	r, err := doc.Resolve(pos)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// children lists f's children by iteration.
func children(f Fragment) []*Node {
	var nodes []*Node
	for _, c := range f.all() {
		nodes = append(nodes, c)
	}
	return nodes
}

// checkFragment checks f's invariants, and that it holds the children of
// want (compared as nodes, and by identity when same).
func checkFragment(t *testing.T, what string, f, want Fragment, same bool) {
	t.Helper()
	wantNodes := want.content
	n := len(wantNodes)
	if f.ChildCount() != n || f.Size() != want.size {
		t.Fatalf("%s: %d children, size %d; want %d, %d", what, f.ChildCount(), f.Size(), n, want.size)
	}
	if (f.tree != nil) != (n > chunkMax) {
		t.Fatalf("%s: %d children, chunked %v", what, n, f.tree != nil)
	}
	if f.tree != nil {
		cs := f.tree.chunks
		if len(cs) < 2 {
			t.Fatalf("%s: %d chunks", what, len(cs))
		}
		count, pos := 0, 0
		for k, c := range cs {
			if len(c.nodes) == 0 || len(c.nodes) > chunkMax || cap(c.nodes) != len(c.nodes) {
				t.Fatalf("%s: chunk %d has %d nodes (cap %d)", what, k, len(c.nodes), cap(c.nodes))
			}
			if k > 0 && len(c.nodes)+len(cs[k-1].nodes) <= chunkMax {
				t.Fatalf("%s: chunks %d and %d could be merged", what, k-1, k)
			}
			count += len(c.nodes)
			pos += sumSizes(c.nodes)
			if c.end != count || c.endPos != pos {
				t.Fatalf("%s: chunk %d ends at %d/%d, want %d/%d", what, k, c.end, c.endPos, count, pos)
			}
		}
	}
	got := children(f)
	for i, c := range got {
		if c != f.Child(i) || (same && c != wantNodes[i]) || !c.Eq(wantNodes[i]) {
			t.Fatalf("%s: child %d is %s, want %s", what, i, c, wantNodes[i])
		}
	}
	if !f.Eq(want) || !want.Eq(f) || f.String() != want.String() {
		t.Fatalf("%s: not equal to the reference", what)
	}
	if ch := f.Children(); len(ch) != n || (n > 0 && ch[n-1] != got[n-1]) {
		t.Fatalf("%s: Children", what)
	}
	if n > 0 && (f.FirstChild() != got[0] || f.LastChild() != got[n-1]) {
		t.Fatalf("%s: first or last child", what)
	}
	if f.MaybeChild(-1) != nil || f.MaybeChild(n) != nil {
		t.Fatalf("%s: MaybeChild out of range", what)
	}
	// ForEach, NodesBetween and offsetAt agree on the offsets.
	offsets := make([]int, 0, n+1)
	f.ForEach(func(c *Node, offset, index int) {
		if index != len(offsets) || c != got[index] {
			t.Fatalf("%s: ForEach index %d", what, index)
		}
		offsets = append(offsets, offset)
	})
	offsets = append(offsets, f.size)
	for i := 0; i <= n; i += 1 + n/50 {
		if f.offsetAt(i) != offsets[i] {
			t.Fatalf("%s: offsetAt(%d) = %d, want %d", what, i, f.offsetAt(i), offsets[i])
		}
	}
	if n > 0 {
		from := offsets[n/3] + 1
		to := offsets[n/2]
		var visited []int
		f.NodesBetween(from, to, func(_ *Node, pos int, parent *Node, index int) bool {
			if parent == nil {
				visited = append(visited, index)
				if offsets[index] != pos {
					t.Fatalf("%s: NodesBetween child %d at %d", what, index, pos)
				}
			}
			return false
		}, 0)
		var wantVisited []int
		want.NodesBetween(from, to, func(_ *Node, _ int, parent *Node, index int) bool {
			if parent == nil {
				wantVisited = append(wantVisited, index)
			}
			return false
		}, 0)
		if !slices.Equal(visited, wantVisited) {
			t.Fatalf("%s: NodesBetween(%d, %d) visits %v, want %v", what, from, to, visited, wantVisited)
		}
	}
	// FindIndex at every position of a sample.
	for pos := 0; pos <= f.size; pos += 1 + f.size/97 {
		i, off, err := f.FindIndex(pos)
		wi, woff, _ := want.FindIndex(pos)
		if err != nil || i != wi || off != woff {
			t.Fatalf("%s: FindIndex(%d) = %d, %d; want %d, %d", what, pos, i, off, wi, woff)
		}
	}
	if _, _, err := f.FindIndex(f.size + 1); err == nil {
		t.Fatalf("%s: FindIndex past the end", what)
	}
}

func randomNodes(r *rand.Rand, pool []*Node, n int) []*Node {
	nodes := make([]*Node, n)
	for i := range nodes {
		nodes[i] = pool[r.IntN(len(pool))]
	}
	return nodes
}

func TestFragmentChunked(t *testing.T) {
	pool := chunkTestPool(t)
	for _, n := range []int{0, 1, 63, 64, 65, 129, 200, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(n), 7))
			nodes := randomNodes(r, pool, n)
			f := newFragmentNoJoin(slices.Clone(nodes))
			ref := refFragment(nodes)
			checkFragment(t, "new", f, ref, true)
			joined := NewFragment(slices.Clone(nodes))
			var joinRef Fragment
			for _, c := range nodes {
				joinRef = refAppend(joinRef.content, []*Node{c})
			}
			checkFragment(t, "NewFragment", joined, joinRef, false)
			rounds := 60
			if n == 5000 {
				rounds = 15
			}
			for round := range rounds {
				f, ref = chunkedOp(t, r, pool, round, f, ref)
				// The source of every operation stays as it was.
				checkFragment(t, fmt.Sprintf("round %d", round), f, ref, false)
			}
		})
	}
}

// chunkedOp applies a random operation to f and to its reference, checks
// the result, and returns the fragment to continue with (keeping the width
// near the starting one).
func chunkedOp(t *testing.T, r *rand.Rand, pool []*Node, round int, f, ref Fragment) (Fragment, Fragment) {
	t.Helper()
	n := ref.ChildCount()
	before := children(f)
	var got, want Fragment
	what := ""
	switch op := r.IntN(8); {
	case op == 0 && n > 0:
		i := r.IntN(n)
		c := pool[r.IntN(len(pool))]
		what = fmt.Sprintf("ReplaceChild(%d)", i)
		got, want = f.ReplaceChild(i, c), ref.ReplaceChild(i, c)
		if same := f.ReplaceChild(i, f.Child(i)); !sameFragment(same, f) {
			t.Fatalf("ReplaceChild with the same node made a new fragment")
		}
	case op == 1:
		from, to := r.IntN(f.size+3)-1, r.IntN(f.size+3)-1
		if r.IntN(2) == 0 {
			from, to = min(from, to), max(from, to)
		}
		what = fmt.Sprintf("Cut(%d, %d)", from, to)
		got, want = f.Cut(from, to), ref.Cut(from, to)
	case op == 2:
		from := r.IntN(n + 1)
		to := from + r.IntN(n-from+1)
		what = fmt.Sprintf("CutByIndex(%d, %d)", from, to)
		got, want = f.CutByIndex(from, to), ref.CutByIndex(from, to)
	case op == 3 || op == 4:
		m := []int{0, 1, 5, 63, 64, 65, 100, 300}[r.IntN(8)]
		other := randomNodes(r, pool, m)
		o, oref := newFragmentNoJoin(slices.Clone(other)), refFragment(other)
		if r.IntN(3) == 0 { // also a fragment built by cutting
			cut := r.IntN(m + 1)
			o, oref = o.CutByIndex(cut, m), refFragment(other[cut:])
		}
		if op == 3 {
			what = fmt.Sprintf("Append(%d)", m)
			got, want = f.Append(o), refAppend(ref.content, oref.content)
		} else {
			what = fmt.Sprintf("Prepend(%d)", m)
			got, want = o.Append(f), refAppend(oref.content, ref.content)
		}
	case op == 5:
		c := pool[r.IntN(len(pool))]
		what = "AddToStart"
		got, want = f.AddToStart(c), refFragment(append([]*Node{c}, ref.content...))
	case op == 6:
		c := pool[r.IntN(len(pool))]
		what = "AddToEnd"
		got, want = f.AddToEnd(c), refFragment(append(slices.Clone(ref.content), c))
	default:
		what = "Cut inside"
		from := r.IntN(f.size + 1)
		to := from + r.IntN(f.size-from+1)
		got, want = f.Cut(from, to), ref.Cut(from, to)
	}
	want = refFragment(children(want))
	checkFragment(t, fmt.Sprintf("round %d: %s", round, what), got, want, false)
	checkFragment(t, fmt.Sprintf("round %d: %s (source)", round, what), f, refFragment(before), true)
	// Continue from the result unless it drifted far from the start width.
	if got.ChildCount() < n/2 || got.ChildCount() > 2*n+10 {
		return f, ref
	}
	return got, want
}

// TestFragmentChunkedReplaceSharing checks that replacing a child of a wide
// fragment copies only the chunk holding it.
func TestFragmentChunkedReplaceSharing(t *testing.T) {
	pool := chunkTestPool(t)
	r := rand.New(rand.NewPCG(1, 2))
	f := newFragmentNoJoin(randomNodes(r, pool, 1000))
	g := f.ReplaceChild(500, pool[0])
	shared := 0
	for k := range f.tree.chunks {
		if &f.tree.chunks[k].nodes[0] == &g.tree.chunks[k].nodes[0] {
			shared++
		}
	}
	if shared != len(f.tree.chunks)-1 {
		t.Errorf("%d of %d chunks shared", shared, len(f.tree.chunks))
	}
	if sameFragment(f, g) || !sameFragment(g, g) {
		t.Errorf("sameFragment")
	}
}

// TestFragmentChunkedDocReplace edits a document of many paragraphs and
// compares the result with the same edit on a document built from JSON.
func TestFragmentChunkedDocReplace(t *testing.T) {
	b := newBasicBuilders(t)
	var paras []any
	for i := range 300 {
		paras = append(paras, b.p(fmt.Sprintf("para %d", i)))
	}
	doc := b.doc(paras...).node()
	if doc.Content.tree == nil {
		t.Fatal("a doc of 300 paragraphs is not chunked")
	}
	for _, i := range []int{0, 63, 64, 65, 128, 150, 299} {
		pos := doc.Content.offsetAt(i) + 3 // inside the text of paragraph i
		text, _ := b.schema.Text("X", nil)
		got, err := doc.Replace(pos, pos, NewSlice(FragmentOf(text), 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.schema.NodeFromJSON(got.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Eq(want) || got.Content.Size() != doc.Content.Size()+1 {
			t.Errorf("insert at %d: %s", pos, got)
		}
		r, err := got.Resolve(pos + 1)
		if err != nil || r.Parent().TextContent() != mustResolve(t, want, pos+1).Parent().TextContent() {
			t.Errorf("resolve after insert at %d", pos)
		}
		back, err := got.Replace(pos, pos+1, EmptySlice)
		if err != nil || !back.Eq(doc) {
			t.Errorf("delete at %d: %v", pos, err)
		}
		// Split the paragraph (a replace at the top level).
		split, err := doc.Replace(pos, pos, NewSlice(NewFragment([]*Node{b.p().node(), b.p().node()}), 1, 1))
		if err != nil || split.ChildCount() != doc.ChildCount()+1 {
			t.Errorf("split at %d: %v", pos, err)
		}
		joined, err := split.Replace(pos, pos+2, EmptySlice)
		if err != nil || !joined.Eq(doc) {
			t.Errorf("join at %d: %v", pos, err)
		}
	}
}

// FuzzFragmentChunked runs random operations on wide fragments.
func FuzzFragmentChunked(f *testing.F) {
	f.Add(uint64(1), uint16(70))
	f.Add(uint64(2), uint16(130))
	f.Fuzz(func(t *testing.T, seed uint64, width uint16) {
		pool := chunkTestPool(t)
		r := rand.New(rand.NewPCG(seed, 1))
		nodes := randomNodes(r, pool, int(width%400))
		g, ref := newFragmentNoJoin(slices.Clone(nodes)), refFragment(nodes)
		for round := range 10 {
			g, ref = chunkedOp(t, r, pool, round, g, ref)
		}
	})
}
