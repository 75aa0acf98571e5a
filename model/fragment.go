package model

import (
	"errors"
	"strconv"
	"strings"
)

// Fragment is an immutable sequence of nodes, a node's content. The zero
// value is the empty fragment.
type Fragment struct {
	content []*Node
	size    int
}

// NewFragment returns a fragment holding nodes, joining adjacent text
// nodes that have the same marks (JS Fragment.fromArray). The fragment
// takes ownership of the slice: do not modify it afterwards.
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
			joined[len(joined)-1] = node.WithText(textConcat(last.Text, node.Text))
		} else if joined != nil {
			joined = append(joined, node)
		}
	}
	if joined != nil {
		return Fragment{joined, size}
	}
	return Fragment{nodes[:len(nodes):len(nodes)], size}
}

// newFragmentNoJoin is JS `new Fragment(content)`: no text joining.
func newFragmentNoJoin(nodes []*Node) Fragment {
	size := 0
	for _, n := range nodes {
		size += n.size
	}
	return Fragment{nodes[:len(nodes):len(nodes)], size}
}

// cloneNodes returns a copy of nodes. (append into fresh memory needs
// only half the write barriers of make and copy while the GC runs.)
func cloneNodes(nodes []*Node) []*Node {
	return append([]*Node(nil), nodes...)
}

// FragmentOf returns a fragment holding the single node n (JS
// Fragment.from(node)).
func FragmentOf(n *Node) Fragment {
	return Fragment{[]*Node{n}, n.size}
}

// sameFragment reports whether a and b are the same fragment value (the
// JS identity comparison of fragments).
func sameFragment(a, b Fragment) bool {
	return len(a.content) == len(b.content) && a.size == b.size &&
		(len(a.content) == 0 || &a.content[0] == &b.content[0])
}

// Size returns the total size of the fragment's nodes.
func (f Fragment) Size() int { return f.size }

// ChildCount returns the number of nodes in the fragment.
func (f Fragment) ChildCount() int { return len(f.content) }

// Child returns the node at index i; it panics when i is out of range.
func (f Fragment) Child(i int) *Node { return f.content[i] }

// MaybeChild returns the node at index i, or nil.
func (f Fragment) MaybeChild(i int) *Node {
	if i < 0 || i >= len(f.content) {
		return nil
	}
	return f.content[i]
}

// FirstChild returns the first node, or nil.
func (f Fragment) FirstChild() *Node {
	if len(f.content) == 0 {
		return nil
	}
	return f.content[0]
}

// LastChild returns the last node, or nil.
func (f Fragment) LastChild() *Node {
	if len(f.content) == 0 {
		return nil
	}
	return f.content[len(f.content)-1]
}

// Children returns the fragment's nodes. The slice must not be modified.
func (f Fragment) Children() []*Node { return f.content }

// ForEach calls fn for every node with its offset and index.
func (f Fragment) ForEach(fn func(child *Node, offset, index int)) {
	p := 0
	for i, c := range f.content {
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
	pos := 0
	for i := 0; pos < to && i < len(f.content); i++ {
		child := f.content[i]
		end := pos + child.size
		if end > from && fn(child, nodeStart+pos, parent, i) && child.Content.size != 0 {
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
	var b strings.Builder
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
				b.WriteString(blockSeparator)
			}
		}
		b.WriteString(nodeText)
		return true
	}, 0, nil)
	return b.String()
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
	n := len(f.content)
	last, first := f.content[n-1], o.content[0]
	if last.Type.IsText && last.SameMarkup(first) {
		content := cloneNodes(f.content)
		content[n-1] = last.WithText(textConcat(last.Text, first.Text))
		return Fragment{append(content, o.content[1:]...), f.size + o.size}
	}
	// Appending to a capped slice copies it into new memory.
	return Fragment{append(f.content[:n:n], o.content...), f.size + o.size}
}

// Cut returns the part of f between the positions from and to.
func (f Fragment) Cut(from, to int) Fragment {
	if from == 0 && to == f.size {
		return f
	}
	if to <= from {
		return Fragment{}
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
		return Fragment{f.content[i0:i1:i1], end1 - start0}
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
	return Fragment{result, size}
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
	if from == 0 && to == len(f.content) {
		return f
	}
	return newFragmentNoJoin(f.content[from:to:to])
}

// ReplaceChild returns a fragment with the node at index i replaced by n.
func (f Fragment) ReplaceChild(i int, n *Node) Fragment {
	current := f.content[i]
	if current == n {
		return f
	}
	content := cloneNodes(f.content)
	content[i] = n
	return Fragment{content, f.size + n.size - current.size}
}

// AddToStart returns a fragment with n prepended.
func (f Fragment) AddToStart(n *Node) Fragment {
	content := make([]*Node, len(f.content)+1)
	content[0] = n
	copy(content[1:], f.content)
	return Fragment{content, f.size + n.size}
}

// AddToEnd returns a fragment with n appended.
func (f Fragment) AddToEnd(n *Node) Fragment {
	return Fragment{append(f.content[:len(f.content):len(f.content)], n), f.size + n.size}
}

// Eq reports whether f and o hold equal nodes.
func (f Fragment) Eq(o Fragment) bool {
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
// nearer to pos.
func (f Fragment) findIndex(pos int) (index, offset int) {
	if pos == 0 {
		return 0, 0
	}
	if pos == f.size {
		return len(f.content), pos
	}
	if pos <= f.size>>1 {
		cur := 0
		for i, c := range f.content {
			end := cur + c.size
			if end >= pos {
				if end == pos {
					return i + 1, end
				}
				return i, cur
			}
			cur = end
		}
	}
	end := f.size
	for i := len(f.content) - 1; i > 0; i-- {
		start := end - f.content[i].size
		if start <= pos {
			return i, start
		}
		end = start
	}
	return 0, 0
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
	for i, c := range f.content {
		if i > 0 {
			b.WriteString(", ")
		}
		c.writeString(b)
	}
}
