package model

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
)

// ResolvedPos is a position in a document with the context around it.
// Depth arguments of its methods are absolute (0 is the document, Depth
// the parent); where the JS defaults to this.depth or takes negative
// depths, pass r.Depth or r.Depth-n.
type ResolvedPos struct {
	// Pos is the position that was resolved.
	Pos int
	// Depth is the number of levels the parent node is from the root.
	Depth int
	// ParentOffset is the offset of the position in its parent node.
	ParentOffset int

	path    []pathEntry // one per depth 0..Depth
	pathBuf [4]pathEntry
}

type pathEntry struct {
	node   *Node
	index  int
	offset int // start position of the child at index (JS path[i*3+2])
}

// NodeRange is a flat range of content: one that starts and ends in the
// same node.
type NodeRange struct {
	// From is a position at the start of the range; it may be deeper
	// than Depth.
	From *ResolvedPos
	// To is a position at the end of the range; it may be deeper than Depth.
	To *ResolvedPos
	// Depth is the depth of the node the range points into.
	Depth int
}

// Resolve resolves pos in n, returning the position with its context.
// Results are cached (the 12 most recent per node).
func (n *Node) Resolve(pos int) (*ResolvedPos, error) {
	c := n.resolved.Load()
	if c == nil {
		c = new(resolveCache)
		if !n.resolved.CompareAndSwap(nil, c) {
			c = n.resolved.Load()
		}
	} else {
		for i := range c.elts {
			if r := c.elts[i].Load(); r != nil && r.Pos == pos {
				return r, nil
			}
		}
	}
	r, err := resolvePos(n, pos)
	if err != nil {
		return nil, err
	}
	i := (c.next.Add(1) - 1) % resolveCacheSize
	c.elts[i].Store(r)
	return r, nil
}

// ResolveNoCache is Resolve without the cache.
func (n *Node) ResolveNoCache(pos int) (*ResolvedPos, error) {
	return resolvePos(n, pos)
}

const resolveCacheSize = 12

// resolveCache is a ring of recent resolve results of one node, safe for
// concurrent use (a lost race only evicts a different entry).
type resolveCache struct {
	next atomic.Uint32
	elts [resolveCacheSize]atomic.Pointer[ResolvedPos]
}

func resolvePos(doc *Node, pos int) (*ResolvedPos, error) {
	if pos < 0 || pos > doc.Content.size {
		return nil, errors.New("Position " + strconv.Itoa(pos) + " out of range")
	}
	r := &ResolvedPos{Pos: pos}
	path := r.pathBuf[:0]
	start, parentOffset := 0, pos
	for node := doc; ; {
		index, offset := node.Content.findIndex(parentOffset)
		rem := parentOffset - offset
		path = append(path, pathEntry{node, index, start + offset})
		if rem == 0 {
			break
		}
		node = node.Content.Child(index)
		if node.Type.IsText {
			break
		}
		parentOffset = rem - 1
		start += offset + 1
	}
	r.path = path
	r.Depth = len(path) - 1
	r.ParentOffset = parentOffset
	return r, nil
}

// Parent returns the node the position points into (never a text node).
func (r *ResolvedPos) Parent() *Node { return r.path[r.Depth].node }

// Doc returns the root node the position was resolved in.
func (r *ResolvedPos) Doc() *Node { return r.path[0].node }

// Node returns the ancestor at the given depth.
func (r *ResolvedPos) Node(depth int) *Node { return r.path[depth].node }

// Index returns the index into the ancestor at the given depth.
func (r *ResolvedPos) Index(depth int) int { return r.path[depth].index }

// IndexAfter returns the index pointing after this position into the
// ancestor at the given depth.
func (r *ResolvedPos) IndexAfter(depth int) int {
	if depth == r.Depth && r.TextOffset() == 0 {
		return r.path[depth].index
	}
	return r.path[depth].index + 1
}

// Start returns the position at the start of the node at the given depth.
func (r *ResolvedPos) Start(depth int) int {
	if depth == 0 {
		return 0
	}
	return r.path[depth-1].offset + 1
}

// End returns the position at the end of the node at the given depth.
func (r *ResolvedPos) End(depth int) int {
	return r.Start(depth) + r.path[depth].node.Content.size
}

var (
	errNoBefore = errors.New("There is no position before the top-level node")
	errNoAfter  = errors.New("There is no position after the top-level node")
)

// Before returns the position directly before the ancestor at the given
// depth, or Pos when depth is Depth+1. Depth 0 is an error.
func (r *ResolvedPos) Before(depth int) (int, error) {
	if depth == 0 {
		return 0, errNoBefore
	}
	if depth == r.Depth+1 {
		return r.Pos, nil
	}
	return r.path[depth-1].offset, nil
}

// After returns the position directly after the ancestor at the given
// depth, or Pos when depth is Depth+1. Depth 0 is an error.
func (r *ResolvedPos) After(depth int) (int, error) {
	if depth == 0 {
		return 0, errNoAfter
	}
	if depth == r.Depth+1 {
		return r.Pos, nil
	}
	return r.path[depth-1].offset + r.path[depth].node.size, nil
}

// TextOffset returns the distance from the start of the text node the
// position points into, or 0 between nodes.
func (r *ResolvedPos) TextOffset() int { return r.Pos - r.path[r.Depth].offset }

// NodeAfter returns the node directly after the position (the part of a
// text node after it), or nil.
func (r *ResolvedPos) NodeAfter() *Node {
	e := &r.path[r.Depth]
	if e.index == e.node.Content.ChildCount() {
		return nil
	}
	child := e.node.Content.Child(e.index)
	if dOff := r.Pos - e.offset; dOff != 0 {
		return child.Cut(dOff, child.size)
	}
	return child
}

// NodeBefore returns the node directly before the position (the part of
// a text node before it), or nil.
func (r *ResolvedPos) NodeBefore() *Node {
	e := &r.path[r.Depth]
	if dOff := r.Pos - e.offset; dOff != 0 {
		return e.node.Content.Child(e.index).Cut(0, dOff)
	}
	if e.index == 0 {
		return nil
	}
	return e.node.Content.Child(e.index - 1)
}

// PosAtIndex returns the position at the given index in the ancestor at
// the given depth.
func (r *ResolvedPos) PosAtIndex(index, depth int) int {
	node := r.path[depth].node
	return r.Start(depth) + node.Content.offsetAt(index)
}

// Marks returns the marks at the position, taking the inclusive property
// of the surrounding marks into account. At the start of a non-empty
// parent, the marks of the node after the position are used.
func (r *ResolvedPos) Marks() []*Mark {
	parent, index := r.Parent(), r.path[r.Depth].index
	if parent.Content.size == 0 {
		return nil
	}
	if r.TextOffset() != 0 {
		return parent.Content.Child(index).Marks
	}
	main, other := parent.MaybeChild(index-1), parent.MaybeChild(index)
	if main == nil {
		main, other = other, main
	}
	marks := main.Marks
	for i := 0; i < len(marks); i++ {
		if !marks[i].Type.Inclusive() && (other == nil || !marks[i].IsInSet(other.Marks)) {
			marks = marks[i].RemoveFromSet(marks)
			i--
		}
	}
	return marks
}

// MarksAcross returns the marks after the position, except non-inclusive
// ones absent at end; ok is false (JS null) when the position is at the
// end of its parent or the node after it is not inline.
func (r *ResolvedPos) MarksAcross(end *ResolvedPos) (marks []*Mark, ok bool) {
	after := r.Parent().MaybeChild(r.path[r.Depth].index)
	if after == nil || after.Type.IsBlock {
		return nil, false
	}
	marks = after.Marks
	next := end.Parent().MaybeChild(end.path[end.Depth].index)
	for i := 0; i < len(marks); i++ {
		if !marks[i].Type.Inclusive() && (next == nil || !marks[i].IsInSet(next.Marks)) {
			marks = marks[i].RemoveFromSet(marks)
			i--
		}
	}
	return marks, true
}

// SharedDepth returns the depth up to which this position and pos share
// the same parent nodes.
func (r *ResolvedPos) SharedDepth(pos int) int {
	for depth := r.Depth; depth > 0; depth-- {
		if r.Start(depth) <= pos && r.End(depth) >= pos {
			return depth
		}
	}
	return 0
}

// BlockRange returns a range around the block content where this
// position and other (nil means r) diverge, or nil. pred, when not nil,
// must accept the range's parent node. As in the JS, pred is ignored when
// other is before r.
func (r *ResolvedPos) BlockRange(other *ResolvedPos, pred func(*Node) bool) *NodeRange {
	if other == nil {
		other = r
	}
	if other.Pos < r.Pos {
		return other.BlockRange(r, nil)
	}
	d := r.Depth
	if r.Parent().Type.InlineContent || r.Pos == other.Pos {
		d--
	}
	for ; d >= 0; d-- {
		if other.Pos <= r.End(d) && (pred == nil || pred(r.path[d].node)) {
			return &NodeRange{From: r, To: other, Depth: d}
		}
	}
	return nil
}

// SameParent reports whether r and o point into the same parent node.
func (r *ResolvedPos) SameParent(o *ResolvedPos) bool {
	return r.Pos-r.ParentOffset == o.Pos-o.ParentOffset
}

// Max returns the greater of r and o.
func (r *ResolvedPos) Max(o *ResolvedPos) *ResolvedPos {
	if o.Pos > r.Pos {
		return o
	}
	return r
}

// Min returns the smaller of r and o.
func (r *ResolvedPos) Min(o *ResolvedPos) *ResolvedPos {
	if o.Pos < r.Pos {
		return o
	}
	return r
}

// String returns a debugging representation: "paragraph_1/…:offset".
func (r *ResolvedPos) String() string {
	var b strings.Builder
	for i := 1; i <= r.Depth; i++ {
		if i > 1 {
			b.WriteByte('/')
		}
		b.WriteString(r.path[i].node.Type.Name)
		b.WriteByte('_')
		b.WriteString(strconv.Itoa(r.path[i-1].index))
	}
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(r.ParentOffset))
	return b.String()
}

// Start returns the position at the start of the range.
func (nr *NodeRange) Start() int {
	p, _ := nr.From.Before(nr.Depth + 1)
	return p
}

// End returns the position at the end of the range.
func (nr *NodeRange) End() int {
	p, _ := nr.To.After(nr.Depth + 1)
	return p
}

// Parent returns the node the range points into.
func (nr *NodeRange) Parent() *Node { return nr.From.path[nr.Depth].node }

// StartIndex returns the index of the range's start in its parent.
func (nr *NodeRange) StartIndex() int { return nr.From.path[nr.Depth].index }

// EndIndex returns the index of the range's end in its parent.
func (nr *NodeRange) EndIndex() int { return nr.To.IndexAfter(nr.Depth) }
