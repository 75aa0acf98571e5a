package model

import (
	"errors"
	"iter"
	"strconv"
	"strings"
)

// Fragment is an immutable sequence of nodes, a node's content. The zero
// value is the empty fragment.
//
// A fragment of up to chunkMax children keeps them in one slice. A wider
// one (a long document's top level) keeps them in chunks, so that
// replacing one child, which every edit does to each ancestor of the
// edited node, copies one chunk and the chunk index rather than every
// child pointer.
type Fragment struct {
	content []*Node   // the children of a narrow fragment (nil when tree is set)
	tree    *fragTree // the children of a wide fragment (more than chunkMax)
	size    int
}

// chunkMax is the most children of a fragment kept in one slice, and the
// most children of a chunk of a wider fragment.
const chunkMax = 64

// fragTree holds the children of a wide fragment in chunks. Neither a tree
// nor its chunks' arrays are modified once built: other fragments share
// them.
type fragTree struct {
	// chunks holds at least two chunks; any two adjacent ones hold more
	// than chunkMax children together, so there are fewer than
	// 2*count/chunkMax+1 of them.
	chunks []fragChunk
}

// fragChunk is a run of 1 to chunkMax children of a wide fragment.
type fragChunk struct {
	nodes  []*Node // capacity capped at the length
	end    int     // index of the first child after the chunk
	endPos int     // offset in the fragment of the chunk's end
}

// count returns the number of children.
func (t *fragTree) count() int { return t.chunks[len(t.chunks)-1].end }

// start returns the index and offset of the first child of chunk k.
func (t *fragTree) start(k int) (index, pos int) {
	if k == 0 {
		return 0, 0
	}
	return t.chunks[k-1].end, t.chunks[k-1].endPos
}

// locate returns the chunk holding child i and i's index in it. It
// panics when i is out of range.
func (t *fragTree) locate(i int) (k, j int) {
	cs := t.chunks
	// Chunks are mostly full, so the first guess usually hits; chunk k
	// starts at index k*chunkMax or later.
	lo, hi := min(i/chunkMax, len(cs)-1), len(cs)-1
	if lo < 0 { // i < 0: index out of range
		return 0, i
	}
	if cs[lo].end > i && (lo == 0 || cs[lo-1].end <= i) {
		k = lo
	} else {
		if i >= cs[hi].end {
			panic("model: fragment child index " + strconv.Itoa(i) + " out of range")
		}
		for lo < hi { // first chunk with end > i
			m := int(uint(lo+hi) >> 1)
			if cs[m].end > i {
				hi = m
			} else {
				lo = m + 1
			}
		}
		k = lo
	}
	if k == 0 {
		return 0, i
	}
	return k, i - cs[k-1].end
}

// chunkAtPos returns the first chunk whose end is at or after pos.
func (t *fragTree) chunkAtPos(pos int) int {
	cs := t.chunks
	lo, hi := 0, len(cs)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cs[m].endPos >= pos {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// NewFragment returns a fragment holding nodes, joining adjacent text
// nodes that have the same marks (JS Fragment.fromArray). As in JS, a
// joined node takes the markup of the later one: marks that are equal may
// still write their attributes' keys in another order. The fragment takes
// ownership of the slice: do not modify it afterwards.
func NewFragment(nodes []*Node) Fragment {
	if len(nodes) == 0 {
		return Fragment{}
	}
	var joined []*Node
	size := 0
	for i, node := range nodes {
		size += node.size
		if i > 0 && node.Type.IsText && nodes[i-1].SameMarkup(node) {
			if joined == nil {
				joined = make([]*Node, i, len(nodes))
				copy(joined, nodes[:i])
			}
			last := joined[len(joined)-1]
			joined[len(joined)-1] = node.withTextSize(textConcat(last.Text, node.Text), last.size+node.size)
		} else if joined != nil {
			joined = append(joined, node)
		}
	}
	if joined != nil {
		return makeFragment(joined, size)
	}
	return makeFragment(nodes, size)
}

// newFragmentNoJoin is JS `new Fragment(content)`: no text joining. The
// fragment takes ownership of the slice.
func newFragmentNoJoin(nodes []*Node) Fragment {
	return makeFragment(nodes, sumSizes(nodes))
}

// makeFragment returns the fragment of nodes, whose sizes add up to size.
// The fragment takes ownership of the slice: a wide one's chunks are
// pieces of it.
func makeFragment(nodes []*Node, size int) Fragment {
	n := len(nodes)
	if n <= chunkMax {
		return Fragment{content: nodes[:n:n], size: size}
	}
	chunks := make([]fragChunk, 0, (n+chunkMax-1)/chunkMax)
	pos := 0
	for i := 0; i < n; i += chunkMax {
		j := min(i+chunkMax, n)
		pos += sumSizes(nodes[i:j])
		chunks = append(chunks, fragChunk{nodes[i:j:j], j, pos})
	}
	return Fragment{tree: &fragTree{chunks}, size: size}
}

// sumSizes returns the total size of nodes.
func sumSizes(nodes []*Node) int {
	size := 0
	for _, n := range nodes {
		size += n.size
	}
	return size
}

// cloneNodes returns a copy of nodes. (append into fresh memory needs
// only half the write barriers of make and copy while the GC runs.)
func cloneNodes(nodes []*Node) []*Node {
	return append([]*Node(nil), nodes...)
}

// fragBuilder builds a fragment from runs of children. It keeps the runs'
// arrays as chunks where it can (they must not be modified afterwards,
// as no fragment's children are), and copies only to merge short runs,
// so that any two adjacent chunks hold more than chunkMax children.
type fragBuilder struct {
	chunks []fragChunk
	owned  bool // whether the last chunk's array was allocated here (it may grow in place)
	count  int
	size   int
}

// add appends the run nodes, whose sizes add up to size.
func (b *fragBuilder) add(nodes []*Node, size int) {
	for len(nodes) > 0 {
		n := min(len(nodes), chunkMax)
		k := len(b.chunks)
		merge := false
		if k > 0 {
			room := chunkMax - len(b.chunks[k-1].nodes)
			if len(nodes) <= room || b.owned && room > 0 {
				n, merge = min(len(nodes), room), true
			}
		}
		part, partSize := nodes[:n:n], size
		if n < len(nodes) {
			partSize = sumSizes(part)
		}
		b.count += n
		b.size += partSize
		if merge {
			last := &b.chunks[k-1]
			if !b.owned {
				grown := make([]*Node, len(last.nodes), len(last.nodes)+n)
				copy(grown, last.nodes)
				last.nodes, b.owned = grown, true
			}
			last.nodes = append(last.nodes, part...)
			last.end, last.endPos = b.count, b.size
		} else {
			if b.owned { // done growing in place
				last := &b.chunks[k-1]
				last.nodes = last.nodes[:len(last.nodes):len(last.nodes)]
			}
			b.chunks = append(b.chunks, fragChunk{part, b.count, b.size})
			b.owned = false
		}
		nodes, size = nodes[n:], size-partSize
	}
}

// addNode appends one child.
func (b *fragBuilder) addNode(n *Node) {
	b.add([]*Node{n}, n.size)
}

// addRange appends the children of f from index from to index to
// (exclusive), sharing f's arrays.
func (b *fragBuilder) addRange(f Fragment, from, to int) {
	if from >= to {
		return
	}
	if f.tree == nil {
		nodes := f.content[from:to]
		size := f.size
		if len(nodes) != len(f.content) {
			size = sumSizes(nodes)
		}
		b.add(nodes, size)
		return
	}
	t := f.tree
	k0, j0 := t.locate(from)
	k1, j1 := t.locate(to - 1)
	for k := k0; k <= k1; k++ {
		c := t.chunks[k]
		nodes := c.nodes
		if k == k1 {
			nodes = nodes[:j1+1]
		}
		if k == k0 {
			nodes = nodes[j0:]
		}
		size := 0
		if len(nodes) == len(c.nodes) {
			_, startPos := t.start(k)
			size = c.endPos - startPos
		} else {
			size = sumSizes(nodes)
		}
		b.add(nodes, size)
	}
}

// fragment returns the fragment built.
func (b *fragBuilder) fragment() Fragment {
	switch len(b.chunks) {
	case 0:
		return Fragment{}
	case 1:
		nodes := b.chunks[0].nodes
		return Fragment{content: nodes[:len(nodes):len(nodes)], size: b.size}
	}
	last := &b.chunks[len(b.chunks)-1]
	last.nodes = last.nodes[:len(last.nodes):len(last.nodes)]
	return Fragment{tree: &fragTree{b.chunks}, size: b.size}
}

// FragmentOf returns a fragment holding the single node n (JS
// Fragment.from(node)).
func FragmentOf(n *Node) Fragment {
	return Fragment{content: []*Node{n}, size: n.size}
}

// sameFragment reports whether a and b are the same fragment value (the
// JS identity comparison of fragments).
func sameFragment(a, b Fragment) bool {
	if a.tree != nil || b.tree != nil {
		return a.tree == b.tree && a.size == b.size
	}
	return len(a.content) == len(b.content) && a.size == b.size &&
		(len(a.content) == 0 || &a.content[0] == &b.content[0])
}

// Size returns the total size of the fragment's nodes.
func (f Fragment) Size() int { return f.size }

// ChildCount returns the number of nodes in the fragment.
func (f Fragment) ChildCount() int {
	if f.tree != nil {
		return f.tree.count()
	}
	return len(f.content)
}

// Child returns the node at index i; it panics when i is out of range.
func (f Fragment) Child(i int) *Node {
	if f.tree != nil {
		return f.tree.child(i)
	}
	return f.content[i]
}

func (t *fragTree) child(i int) *Node {
	k, j := t.locate(i)
	return t.chunks[k].nodes[j]
}

// MaybeChild returns the node at index i, or nil.
func (f Fragment) MaybeChild(i int) *Node {
	if i < 0 || i >= f.ChildCount() {
		return nil
	}
	return f.Child(i)
}

// FirstChild returns the first node, or nil.
func (f Fragment) FirstChild() *Node {
	if f.tree != nil {
		return f.tree.chunks[0].nodes[0]
	}
	if len(f.content) == 0 {
		return nil
	}
	return f.content[0]
}

// LastChild returns the last node, or nil.
func (f Fragment) LastChild() *Node {
	if f.tree != nil {
		nodes := f.tree.chunks[len(f.tree.chunks)-1].nodes
		return nodes[len(nodes)-1]
	}
	if len(f.content) == 0 {
		return nil
	}
	return f.content[len(f.content)-1]
}

// Children returns the fragment's nodes. The slice must not be modified.
// For a fragment of more than 64 children it is built on each call (the
// children are stored in chunks): prefer ChildCount and Child, or ForEach.
func (f Fragment) Children() []*Node {
	if f.tree == nil {
		return f.content
	}
	return f.childSlice(0, f.tree.count())
}

// childSlice returns the children from index from to index to
// (exclusive); the slice must not be modified. It copies them when f is
// stored in chunks.
func (f Fragment) childSlice(from, to int) []*Node {
	if f.tree == nil {
		return f.content[from:to]
	}
	nodes := make([]*Node, 0, to-from)
	f.eachRun(from, to, func(run []*Node) { nodes = append(nodes, run...) })
	return nodes
}

// eachRun calls fn with the children from index from to index to
// (exclusive), in one or more runs.
func (f Fragment) eachRun(from, to int, fn func(run []*Node)) {
	if from >= to {
		return
	}
	if f.tree == nil {
		fn(f.content[from:to])
		return
	}
	t := f.tree
	k0, j0 := t.locate(from)
	k1, j1 := t.locate(to - 1)
	for k := k0; k <= k1; k++ {
		nodes := t.chunks[k].nodes
		if k == k1 {
			nodes = nodes[:j1+1]
		}
		if k == k0 {
			nodes = nodes[j0:]
		}
		fn(nodes)
	}
}

// all returns the children with their indices.
func (f Fragment) all() iter.Seq2[int, *Node] {
	return func(yield func(int, *Node) bool) {
		if f.tree == nil {
			for i, c := range f.content {
				if !yield(i, c) {
					return
				}
			}
			return
		}
		i := 0
		for _, ch := range f.tree.chunks {
			for _, c := range ch.nodes {
				if !yield(i, c) {
					return
				}
				i++
			}
		}
	}
}

// ForEach calls fn for every node with its offset and index.
func (f Fragment) ForEach(fn func(child *Node, offset, index int)) {
	p := 0
	for i, c := range f.all() {
		fn(c, p, i)
		p += c.size
	}
}

// NodesBetween calls fn for every descendant overlapping the positions
// from and to (relative to the fragment's start), with its position
// (counted from nodeStart), its parent (nil for the fragment's own nodes)
// and its index. When fn returns false, the node's children are skipped.
func (f Fragment) NodesBetween(from, to int, fn func(node *Node, pos int, parent *Node, index int) bool, nodeStart int) {
	f.nodesBetween(from, to, fn, nodeStart, nil)
}

func (f Fragment) nodesBetween(from, to int, fn func(node *Node, pos int, parent *Node, index int) bool, nodeStart int, parent *Node) {
	if f.tree == nil {
		nodesBetween(f.content, 0, 0, from, to, fn, nodeStart, parent)
		return
	}
	for k, c := range f.tree.chunks {
		index, pos := f.tree.start(k)
		if pos >= to {
			break
		}
		if c.endPos > from {
			nodesBetween(c.nodes, index, pos, from, to, fn, nodeStart, parent)
		}
	}
}

// nodesBetween is Fragment.nodesBetween for a run of children, the first
// of which has the given index and offset.
func nodesBetween(nodes []*Node, index, pos, from, to int, fn func(node *Node, pos int, parent *Node, index int) bool, nodeStart int, parent *Node) {
	for i := 0; pos < to && i < len(nodes); i++ {
		child := nodes[i]
		end := pos + child.size
		if end > from && fn(child, nodeStart+pos, parent, index+i) && child.Content.size != 0 {
			start := pos + 1
			child.Content.nodesBetween(max(0, from-start), min(child.Content.size, to-start), fn, nodeStart+start, child)
		}
		pos = end
	}
}

// Descendants calls fn for every descendant node; returning false skips
// the node's children.
func (f Fragment) Descendants(fn func(node *Node, pos int, parent *Node, index int) bool) {
	f.nodesBetween(0, f.size, fn, 0, nil)
}

// TextBetween returns the text between from and to; see Node.TextBetween.
func (f Fragment) TextBetween(from, to int, blockSeparator, leafText string) string {
	// The pieces are joined as JS joins strings: a surrogate pair split
	// between two of them is one code point again.
	var b []byte
	first := true
	f.nodesBetween(from, to, func(node *Node, pos int, _ *Node, _ int) bool {
		var nodeText string
		leaf := node.Type.IsLeaf()
		if node.Type.IsText {
			nodeText = textSlice(node.Text, max(from, pos)-pos, to-pos)
		} else if leaf {
			nodeText = leafText
		}
		if node.Type.IsBlock && (leaf && nodeText != "" || node.Type.InlineContent) && blockSeparator != "" {
			if first {
				first = false
			} else {
				b = appendText(b, blockSeparator)
			}
		}
		b = appendText(b, nodeText)
		return true
	}, 0, nil)
	return string(b)
}

// Append returns the concatenation of f and o, joining a text node at the
// end of f with one of the same markup at the start of o.
func (f Fragment) Append(o Fragment) Fragment {
	if o.size == 0 {
		return f
	}
	if f.size == 0 {
		return o
	}
	n, m := f.ChildCount(), o.ChildCount()
	last, first := f.LastChild(), o.FirstChild()
	join := last.Type.IsText && last.SameMarkup(first)
	if f.tree == nil && o.tree == nil && n+m <= chunkMax {
		if join {
			content := cloneNodes(f.content)
			content[n-1] = last.withTextSize(textConcat(last.Text, first.Text), last.size+first.size)
			return Fragment{content: append(content, o.content[1:]...), size: f.size + o.size}
		}
		// Appending to a capped slice copies it into new memory.
		return Fragment{content: append(f.content[:n:n], o.content...), size: f.size + o.size}
	}
	var b fragBuilder
	b.chunks = make([]fragChunk, 0, f.chunkCount()+o.chunkCount())
	if join {
		b.addRange(f, 0, n-1)
		b.addNode(last.withTextSize(textConcat(last.Text, first.Text), last.size+first.size))
		b.addRange(o, 1, m)
	} else {
		b.addRange(f, 0, n)
		b.addRange(o, 0, m)
	}
	return b.fragment()
}

// chunkCount returns the number of chunks f is stored in.
func (f Fragment) chunkCount() int {
	if f.tree != nil {
		return len(f.tree.chunks)
	}
	return 1
}

// Cut returns the part of f between the positions from and to.
func (f Fragment) Cut(from, to int) Fragment {
	if from == 0 && to == f.size {
		return f
	}
	if to <= from {
		return Fragment{}
	}
	if f.tree != nil {
		return f.cutTree(max(from, 0), min(to, f.size))
	}
	// Find the children overlapping [from, to): i0 up to i1 (exclusive).
	n := len(f.content)
	i, pos := 0, 0
	for ; i < n; i++ {
		end := pos + f.content[i].size
		if end > from {
			break
		}
		pos = end
	}
	i0, start0 := i, pos
	for ; i < n && pos < to; i++ {
		pos += f.content[i].size
	}
	i1, end1 := i, pos
	if i0 >= i1 {
		return Fragment{}
	}
	cutFirst := start0 < from || start0+f.content[i0].size > to
	cutLast := end1 > to
	if !cutFirst && !cutLast {
		return Fragment{content: f.content[i0:i1:i1], size: end1 - start0}
	}
	result := cloneNodes(f.content[i0:i1])
	size := end1 - start0
	if cutFirst {
		c := result[0]
		nc := cutChild(c, from-start0, to-start0)
		result[0] = nc
		size += nc.size - c.size
	}
	if cutLast && i1-1 > i0 {
		c := result[len(result)-1]
		lastStart := end1 - c.size
		nc := cutChild(c, from-lastStart, to-lastStart)
		result[len(result)-1] = nc
		size += nc.size - c.size
	}
	return Fragment{content: result, size: size}
}

// cutTree is Cut for a fragment stored in chunks, with 0 <= from < to <=
// f.size. It shares the chunks of the children kept whole.
func (f Fragment) cutTree(from, to int) Fragment {
	if from >= to {
		return Fragment{}
	}
	// The children overlapping [from, to): i0 up to i1 (exclusive).
	i0, start0 := f.findIndex(from)
	i1, end1 := f.findIndex(to)
	if end1 < to {
		end1 += f.Child(i1).size
		i1++
	}
	first := f.Child(i0)
	cutFirst := start0 < from || start0+first.size > to
	cutLast := end1 > to
	var b fragBuilder
	lo, hi := i0, i1
	if cutFirst {
		b.addNode(cutChild(first, from-start0, to-start0))
		lo++
	}
	var lastNode *Node
	if cutLast && i1-1 > i0 {
		c := f.Child(i1 - 1)
		lastNode = cutChild(c, from-(end1-c.size), to-(end1-c.size))
		hi--
	}
	b.addRange(f, lo, hi)
	if lastNode != nil {
		b.addNode(lastNode)
	}
	return b.fragment()
}

// cutChild cuts a child overlapping a cut range; from and to are relative
// to the child's start.
func cutChild(c *Node, from, to int) *Node {
	if c.Type.IsText {
		return c.Cut(max(0, from), min(c.size, to))
	}
	return c.Cut(max(0, from-1), min(c.Content.size, to-1))
}

// CutByIndex returns the fragment of the children from index from to
// index to (exclusive).
func (f Fragment) CutByIndex(from, to int) Fragment {
	if from == to {
		return Fragment{}
	}
	if f.tree == nil {
		if from == 0 && to == len(f.content) {
			return f
		}
		return newFragmentNoJoin(f.content[from:to:to])
	}
	if from == 0 && to == f.tree.count() {
		return f
	}
	if from > to || from < 0 || to > f.tree.count() {
		panic("model: CutByIndex(" + strconv.Itoa(from) + ", " + strconv.Itoa(to) + ") out of range")
	}
	var b fragBuilder
	b.addRange(f, from, to)
	return b.fragment()
}

// ReplaceChild returns a fragment with the node at index i replaced by n.
func (f Fragment) ReplaceChild(i int, n *Node) Fragment {
	if f.tree != nil {
		return f.tree.replaceChild(i, n, f)
	}
	current := f.content[i]
	if current == n {
		return f
	}
	content := cloneNodes(f.content)
	content[i] = n
	return Fragment{content: content, size: f.size + n.size - current.size}
}

// replaceChild is ReplaceChild for f, the fragment of t: it copies the
// chunk index and the chunk holding child i, and shares the others.
func (t *fragTree) replaceChild(i int, n *Node, f Fragment) Fragment {
	k, j := t.locate(i)
	current := t.chunks[k].nodes[j]
	if current == n {
		return f
	}
	chunks := append([]fragChunk(nil), t.chunks...)
	nodes := cloneNodes(chunks[k].nodes)
	nodes[j] = n
	chunks[k].nodes = nodes[:len(nodes):len(nodes)]
	if d := n.size - current.size; d != 0 {
		for x := k; x < len(chunks); x++ {
			chunks[x].endPos += d
		}
	}
	return Fragment{tree: &fragTree{chunks}, size: f.size + n.size - current.size}
}

// AddToStart returns a fragment with n prepended.
func (f Fragment) AddToStart(n *Node) Fragment {
	if f.tree == nil && len(f.content) < chunkMax {
		content := make([]*Node, len(f.content)+1)
		content[0] = n
		copy(content[1:], f.content)
		return Fragment{content: content, size: f.size + n.size}
	}
	var b fragBuilder
	b.chunks = make([]fragChunk, 0, f.chunkCount()+1)
	b.addNode(n)
	b.addRange(f, 0, f.ChildCount())
	return b.fragment()
}

// AddToEnd returns a fragment with n appended.
func (f Fragment) AddToEnd(n *Node) Fragment {
	if f.tree == nil && len(f.content) < chunkMax {
		return Fragment{content: append(f.content[:len(f.content):len(f.content)], n), size: f.size + n.size}
	}
	var b fragBuilder
	b.chunks = make([]fragChunk, 0, f.chunkCount()+1)
	b.addRange(f, 0, f.ChildCount())
	b.addNode(n)
	return b.fragment()
}

// Eq reports whether f and o hold equal nodes.
func (f Fragment) Eq(o Fragment) bool {
	if f.tree == nil && o.tree == nil {
		if len(f.content) != len(o.content) {
			return false
		}
		for i, c := range f.content {
			if !c.Eq(o.content[i]) {
				return false
			}
		}
		return true
	}
	if f.ChildCount() != o.ChildCount() {
		return false
	}
	for i, c := range f.all() {
		if !c.Eq(o.Child(i)) {
			return false
		}
	}
	return true
}

// FindDiffStart returns the first position, counting from pos, at which f
// and o differ; ok is false when they are the same.
func (f Fragment) FindDiffStart(o Fragment, pos int) (int, bool) {
	return findDiffStart(f, o, pos)
}

// FindDiffEnd returns the first position, searching from the end, at
// which f and o differ: a in f (ending at pos) and b in o (ending at
// otherPos); ok is false when they are the same.
func (f Fragment) FindDiffEnd(o Fragment, pos, otherPos int) (a, b int, ok bool) {
	return findDiffEnd(f, o, pos, otherPos)
}

// FindIndex returns the index of the child at position pos and the
// position where it starts. A position between two children gives the
// index of the second; the end of the fragment gives the child count.
func (f Fragment) FindIndex(pos int) (index, offset int, err error) {
	if pos < 0 || pos > f.size {
		return 0, 0, errors.New("Position " + strconv.Itoa(pos) + " outside of fragment (" + f.String() + ")")
	}
	index, offset = f.findIndex(pos)
	return index, offset, nil
}

// findIndex is FindIndex for 0 <= pos <= f.size. It scans from the end
// nearer to pos (within the chunk holding pos, for a wide fragment).
func (f Fragment) findIndex(pos int) (index, offset int) {
	if pos == 0 {
		return 0, 0
	}
	if pos == f.size {
		return f.ChildCount(), pos
	}
	if f.tree != nil {
		return f.tree.findIndex(pos)
	}
	return findIndexIn(f.content, 0, 0, f.size, pos)
}

// findIndexIn is findIndex within the run of children nodes, which starts
// at index index0 and offset start and ends at offset end, for start < pos
// < end.
func findIndexIn(nodes []*Node, index0, start, end, pos int) (index, offset int) {
	if pos-start <= (end-start)>>1 {
		cur := start
		for i, c := range nodes {
			end := cur + c.size
			if end >= pos {
				if end == pos {
					return index0 + i + 1, end
				}
				return index0 + i, cur
			}
			cur = end
		}
	}
	for i := len(nodes) - 1; i > 0; i-- {
		start := end - nodes[i].size
		if start <= pos {
			return index0 + i, start
		}
		end = start
	}
	return index0, start
}

// findIndex is Fragment.findIndex for 0 < pos < the fragment's size.
func (t *fragTree) findIndex(pos int) (index, offset int) {
	k := t.chunkAtPos(pos)
	c := t.chunks[k]
	if c.endPos == pos {
		return c.end, pos
	}
	index, start := t.start(k)
	return findIndexIn(c.nodes, index, start, c.endPos, pos)
}

// offsetAt returns the offset of the child at index (the fragment's size
// for the child count).
func (f Fragment) offsetAt(index int) int {
	nodes, pos := f.content, 0
	if f.tree != nil {
		if index == f.tree.count() {
			return f.size
		}
		k, j := f.tree.locate(index)
		_, pos = f.tree.start(k)
		nodes, index = f.tree.chunks[k].nodes, j
	}
	for _, c := range nodes[:index] {
		pos += c.size
	}
	return pos
}

// String returns a debugging representation: `<paragraph("a"), hard_break>`.
func (f Fragment) String() string {
	var b strings.Builder
	b.WriteByte('<')
	f.writeInner(&b)
	b.WriteByte('>')
	return b.String()
}

func (f Fragment) writeInner(b *strings.Builder) {
	for i, c := range f.all() {
		if i > 0 {
			b.WriteString(", ")
		}
		c.writeString(b)
	}
}
