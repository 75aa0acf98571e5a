package model

import (
	"errors"
	"strings"
	"sync/atomic"
)

// Node is an immutable document node. Text nodes have Type.IsText set and
// their content in Text.
type Node struct {
	// Type is the node's type.
	Type *NodeType
	// Attrs are the node's attributes, in the order of the type's spec.
	Attrs Attrs
	// Content holds the node's children.
	Content Fragment
	// Marks are the marks applied to the node, sorted by rank.
	Marks []*Mark
	// Text is the text of a text node ("" for other nodes).
	Text string

	size int // nodeSize: UTF-16 length for text, 1 for leaves, content size + 2 otherwise

	// resolved caches recent Resolve results (allocated on first use).
	resolved atomic.Pointer[resolveCache]
	// jsonSize caches JSONSize (0 until computed); memSize caches
	// MemSize, and is stored before jsonSize.
	jsonSize, memSize atomic.Int64
}

// newNode is JS `new Node(type, attrs, content, marks)`: no checks, the
// size is computed from the type and content.
func newNode(t *NodeType, attrs Attrs, content Fragment, marks []*Mark) *Node {
	n := &Node{Type: t, Attrs: attrs, Content: content, Marks: marks}
	if t.IsLeaf() {
		n.size = 1
	} else {
		n.size = content.size + 2
	}
	return n
}

// newTextNode builds a text node without checking that text is non-empty.
func newTextNode(t *NodeType, attrs Attrs, text string, marks []*Mark) *Node {
	return &Node{Type: t, Attrs: attrs, Marks: marks, Text: text, size: textLen(text)}
}

var errEmptyText = errors.New("Empty text nodes are not allowed")

// NewTextNode returns a text node of type t (the schema's text type) with
// the given text and marks (used as given: sorted, not copied). Text must
// not be empty.
func NewTextNode(t *NodeType, text string, marks []*Mark) (*Node, error) {
	if text == "" {
		return nil, errEmptyText
	}
	return newTextNode(t, t.defaultAttrs, text, marks), nil
}

// isTextNode reports whether n is a text node proper (JS TextNode). A node
// of the text type without text is a plain node (JS Node): replace makes
// one when the document's root is a text node, as JS node.copy(content)
// does (see closeNode). It is a leaf of size 1 whose JSON has no "text".
func (n *Node) isTextNode() bool { return n.Type.IsText && n.Text != "" }

// NodeSize returns the size of the node in the position scheme: the
// UTF-16 length of a text node, 1 for other leaves, and the content size
// plus two for the others.
func (n *Node) NodeSize() int { return n.size }

// ChildCount returns the number of children.
func (n *Node) ChildCount() int { return n.Content.ChildCount() }

// Child returns the child at index i; it panics when i is out of range.
func (n *Node) Child(i int) *Node { return n.Content.Child(i) }

// MaybeChild returns the child at index i, or nil.
func (n *Node) MaybeChild(i int) *Node { return n.Content.MaybeChild(i) }

// FirstChild returns the first child, or nil.
func (n *Node) FirstChild() *Node { return n.Content.FirstChild() }

// LastChild returns the last child, or nil.
func (n *Node) LastChild() *Node { return n.Content.LastChild() }

// IsText reports whether n is a text node.
func (n *Node) IsText() bool { return n.Type.IsText }

// IsBlock reports whether n is a block (non-inline) node.
func (n *Node) IsBlock() bool { return n.Type.IsBlock }

// IsInline reports whether n is an inline node (text or an inline leaf).
func (n *Node) IsInline() bool { return !n.Type.IsBlock }

// IsTextblock reports whether n is a block with inline content.
func (n *Node) IsTextblock() bool { return n.Type.IsBlock && n.Type.InlineContent }

// IsLeaf reports whether n's type allows no content.
func (n *Node) IsLeaf() bool { return n.Type.IsLeaf() }

// IsAtom reports whether n is a leaf or marked atom in its spec.
func (n *Node) IsAtom() bool { return n.Type.IsAtom() }

// InlineContent reports whether n's type has inline content.
func (n *Node) InlineContent() bool { return n.Type.InlineContent }

// ForEach calls f for every child with its offset and index.
func (n *Node) ForEach(f func(child *Node, offset, index int)) { n.Content.ForEach(f) }

// NodesBetween calls f for every descendant overlapping the content
// positions from and to, including the ancestors of nodes that do, with
// its position (counted from startPos), its parent and its index. When f
// returns false, the node's children are skipped.
func (n *Node) NodesBetween(from, to int, f func(node *Node, pos int, parent *Node, index int) bool, startPos int) {
	n.Content.nodesBetween(from, to, f, startPos, n)
}

// Descendants calls f for every descendant node; returning false skips
// the node's children.
func (n *Node) Descendants(f func(node *Node, pos int, parent *Node, index int) bool) {
	n.Content.nodesBetween(0, n.Content.size, f, 0, n)
}

// TextContent returns the concatenated text of all text nodes in n.
func (n *Node) TextContent() string {
	if n.Type.IsText {
		return n.Text
	}
	return n.Content.TextBetween(0, n.Content.size, "", "")
}

// TextBetween returns the text between the content positions from and to.
// A non-empty blockSeparator is put between the text of different blocks,
// a non-empty leafText stands for every non-text leaf ("" is JS null).
func (n *Node) TextBetween(from, to int, blockSeparator, leafText string) string {
	if n.Type.IsText {
		return textSlice(n.Text, from, to)
	}
	return n.Content.TextBetween(from, to, blockSeparator, leafText)
}

// Eq reports whether n and o represent the same document piece.
func (n *Node) Eq(o *Node) bool {
	if n == o {
		return true
	}
	if n.isTextNode() {
		return n.SameMarkup(o) && n.Text == o.Text
	}
	return n.SameMarkup(o) && n.Content.Eq(o.Content)
}

// SameMarkup reports whether n and o have the same type, attributes and
// marks.
func (n *Node) SameMarkup(o *Node) bool {
	return n.Type == o.Type && equalAttrs(n.Attrs, o.Attrs) && SameMarkSet(n.Marks, o.Marks)
}

// HasMarkup reports whether n has the given type, attributes (nil means
// the type's defaults) and marks.
func (n *Node) HasMarkup(t *NodeType, attrs Attrs, marks []*Mark) bool {
	if attrs == nil {
		attrs = t.defaultAttrs
	}
	return n.Type == t && equalAttrs(n.Attrs, attrs) && SameMarkSet(n.Marks, marks)
}

// Copy returns a node with n's markup and the given content (n itself
// when content is n's content). Text nodes are returned as they are.
func (n *Node) Copy(content Fragment) *Node {
	if n.Type.IsText || sameFragment(content, n.Content) {
		return n
	}
	c := &Node{Type: n.Type, Attrs: n.Attrs, Content: content, Marks: n.Marks}
	if n.size == 1 { // a leaf (non-leaf nodes are at least 2)
		c.size = 1
	} else {
		c.size = content.size + 2
	}
	return c
}

// Mark returns a copy of n with the given marks instead of its own.
func (n *Node) Mark(marks []*Mark) *Node {
	if sameMarkSlice(marks, n.Marks) {
		return n
	}
	if n.isTextNode() {
		return newTextNode(n.Type, n.Attrs, n.Text, marks)
	}
	return &Node{Type: n.Type, Attrs: n.Attrs, Content: n.Content, Marks: marks, size: n.size}
}

// WithText returns a text node with n's markup and the given text (n
// itself when the text is the same). It panics on empty text, where the
// JS throws "Empty text nodes are not allowed".
func (n *Node) WithText(text string) *Node {
	if text == n.Text {
		return n
	}
	if text == "" {
		panic(errEmptyText)
	}
	return newTextNode(n.Type, n.Attrs, text, n.Marks)
}

// withTextSize is WithText for a text whose UTF-16 length, size, is known.
func (n *Node) withTextSize(text string, size int) *Node {
	if text == n.Text {
		return n
	}
	if text == "" {
		panic(errEmptyText)
	}
	return &Node{Type: n.Type, Attrs: n.Attrs, Marks: n.Marks, Text: text, size: size}
}

// Cut returns a copy of n with only the content between from and to (for
// text nodes: the text between the UTF-16 offsets from and to, which must
// not be empty).
func (n *Node) Cut(from, to int) *Node {
	if n.Type.IsText {
		if from == 0 && to == n.size {
			return n
		}
		// textSlice clamps from and to to the text, and keeps every
		// UTF-16 unit between them (a cut pair leaves a lone surrogate).
		return n.withTextSize(textSlice(n.Text, from, to), max(0, min(to, n.size)-max(from, 0)))
	}
	if from == 0 && to == n.Content.size {
		return n
	}
	return n.Copy(n.Content.Cut(from, to))
}

// Slice returns the part of the document between the positions from and
// to. With includeParents, the slice is opened from the document's root
// rather than from the shared parent of the positions.
func (n *Node) Slice(from, to int, includeParents bool) (Slice, error) {
	if from == to {
		return EmptySlice, nil
	}
	rFrom, err := n.Resolve(from)
	if err != nil {
		return Slice{}, err
	}
	rTo, err := n.Resolve(to)
	if err != nil {
		return Slice{}, err
	}
	depth := 0
	if !includeParents {
		depth = rFrom.SharedDepth(to)
	}
	start, node := rFrom.Start(depth), rFrom.path[depth].node
	content := node.Content.Cut(rFrom.Pos-start, rTo.Pos-start)
	return Slice{content, rFrom.Depth - depth, rTo.Depth - depth}, nil
}

// Replace replaces the part of the document between from and to with the
// slice, which must fit: its open sides must join the content around the
// positions, and the nodes it closes must get valid content. Otherwise a
// *ReplaceError (or a position error) is returned.
func (n *Node) Replace(from, to int, s Slice) (*Node, error) {
	rFrom, err := n.Resolve(from)
	if err != nil {
		return nil, err
	}
	rTo, err := n.Resolve(to)
	if err != nil {
		return nil, err
	}
	return replace(rFrom, rTo, s)
}

// NodeAt returns the node directly after the position pos, or nil (also
// when pos is outside n's content).
func (n *Node) NodeAt(pos int) *Node {
	for node := n; ; {
		if pos < 0 || pos > node.Content.size {
			return nil
		}
		index, offset := node.Content.findIndex(pos)
		node = node.Content.MaybeChild(index)
		if node == nil {
			return nil
		}
		if offset == pos || node.Type.IsText {
			return node
		}
		pos -= offset + 1
	}
}

// ChildAfter returns the direct child after the content offset pos, with
// its index and offset (child is nil at the end, or when pos is outside
// the content).
func (n *Node) ChildAfter(pos int) (child *Node, index, offset int) {
	if pos < 0 || pos > n.Content.size {
		return nil, 0, 0
	}
	index, offset = n.Content.findIndex(pos)
	return n.Content.MaybeChild(index), index, offset
}

// ChildBefore returns the direct child before the content offset pos,
// with its index and offset (child is nil at the start, or when pos is
// outside the content).
func (n *Node) ChildBefore(pos int) (child *Node, index, offset int) {
	if pos == 0 {
		return nil, 0, 0
	}
	if pos < 0 || pos > n.Content.size {
		return nil, 0, 0
	}
	index, offset = n.Content.findIndex(pos)
	if offset < pos {
		return n.Content.Child(index), index, offset
	}
	child = n.Content.Child(index - 1)
	return child, index - 1, offset - child.size
}

// RangeHasMark reports whether a mark of type t occurs between from and to.
func (n *Node) RangeHasMark(from, to int, t *MarkType) bool {
	found := false
	if to > from {
		n.NodesBetween(from, to, func(node *Node, _ int, _ *Node, _ int) bool {
			if t.IsInSet(node.Marks) != nil {
				found = true
			}
			return !found
		}, 0)
	}
	return found
}

// RangeHasMarkInstance reports whether the mark m occurs between from and to.
func (n *Node) RangeHasMarkInstance(from, to int, m *Mark) bool {
	found := false
	if to > from {
		n.NodesBetween(from, to, func(node *Node, _ int, _ *Node, _ int) bool {
			if m.IsInSet(node.Marks) {
				found = true
			}
			return !found
		}, 0)
	}
	return found
}

var errContentMatchAt = errors.New("Called contentMatchAt on a node with invalid content")

// ContentMatchAt returns the content match of n after its first i children.
func (n *Node) ContentMatchAt(i int) (*ContentMatch, error) {
	match := n.Type.ContentMatch.MatchFragment(n.Content, 0, i)
	if match == nil {
		return nil, errContentMatchAt
	}
	return match, nil
}

// CanReplace reports whether replacing the children from index from to
// index to with the children start to end of replacement leaves n's
// content valid. It is false when n's content before from is already
// invalid (where the JS throws).
func (n *Node) CanReplace(from, to int, replacement Fragment, start, end int) bool {
	ok, _ := n.canReplace(from, to, replacement, start, end)
	return ok
}

func (n *Node) canReplace(from, to int, replacement Fragment, start, end int) (bool, error) {
	match, err := n.ContentMatchAt(from)
	if err != nil {
		return false, err
	}
	one := match.MatchFragment(replacement, start, end)
	if one == nil {
		return false, nil
	}
	two := one.MatchFragment(n.Content, to, n.Content.ChildCount())
	if two == nil || !two.ValidEnd {
		return false, nil
	}
	for i := start; i < end; i++ {
		if !n.Type.AllowsMarks(replacement.Child(i).Marks) {
			return false, nil
		}
	}
	return true, nil
}

// CanReplaceWith reports whether replacing the children from index from
// to index to with a node of type t (and the given marks, nil for none
// to check) leaves n's content valid.
func (n *Node) CanReplaceWith(from, to int, t *NodeType, marks []*Mark) bool {
	if marks != nil && !n.Type.AllowsMarks(marks) {
		return false
	}
	match, err := n.ContentMatchAt(from)
	if err != nil {
		return false
	}
	start := match.MatchType(t)
	if start == nil {
		return false
	}
	end := start.MatchFragment(n.Content, to, n.Content.ChildCount())
	return end != nil && end.ValidEnd
}

// CanAppend reports whether o's content could be appended to n. For an
// empty o, it reports whether the two types have compatible content.
func (n *Node) CanAppend(o *Node) bool {
	if o.Content.size != 0 {
		c := n.Content.ChildCount()
		return n.CanReplace(c, c, o.Content, 0, o.Content.ChildCount())
	}
	return n.Type.CompatibleContent(o.Type)
}

// Check verifies that n and its descendants conform to the schema:
// content, attributes and marks.
func (n *Node) Check() error {
	if err := n.Type.CheckContent(n.Content); err != nil {
		return err
	}
	if err := checkAttrs(n.Type.Attrs, n.Attrs, "node", n.Type.Name); err != nil {
		return err
	}
	var set []*Mark
	for _, m := range n.Marks {
		if err := checkAttrs(m.Type.Attrs, m.Attrs, "mark", m.Type.Name); err != nil {
			return err
		}
		set = m.AddToSet(set)
	}
	if !SameMarkSet(set, n.Marks) {
		var b strings.Builder
		b.WriteString("Invalid collection of marks for node ")
		b.WriteString(n.Type.Name)
		b.WriteString(": ")
		for i, m := range n.Marks {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(m.Type.Name)
		}
		return errors.New(b.String())
	}
	for _, c := range n.Content.all() {
		if err := c.Check(); err != nil {
			return err
		}
	}
	return nil
}

// String returns a debugging representation of n, as the JS toString:
// `paragraph("foo", em("bar"))`.
func (n *Node) String() string {
	var b strings.Builder
	n.writeString(&b)
	return b.String()
}

func (n *Node) writeString(b *strings.Builder) {
	for _, m := range n.Marks {
		b.WriteString(m.Type.Name)
		b.WriteByte('(')
	}
	if n.isTextNode() {
		b.Write(appendJSONString(nil, n.Text))
	} else {
		b.WriteString(n.Type.Name)
		if n.Content.size != 0 {
			b.WriteByte('(')
			n.Content.writeInner(b)
			b.WriteByte(')')
		}
	}
	for range n.Marks {
		b.WriteByte(')')
	}
}
