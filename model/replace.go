package model

import (
	"errors"
	"strconv"
	"strings"
)

// Slice is a piece cut out of a document: a fragment plus the depths to
// which its start and end are open.
type Slice struct {
	Content   Fragment
	OpenStart int
	OpenEnd   int
}

// EmptySlice is the empty slice.
var EmptySlice = Slice{}

// NewSlice returns a slice of content open to the given depths. The open
// depths must not exceed the depth of nodes at the fragment's sides.
func NewSlice(content Fragment, openStart, openEnd int) Slice {
	return Slice{content, openStart, openEnd}
}

// ReplaceError is returned by Node.Replace when the slice does not fit
// the replaced range.
type ReplaceError struct {
	Message string
}

func (e *ReplaceError) Error() string { return e.Message }

// Size returns the size the slice adds when inserted into a document.
func (s Slice) Size() int { return s.Content.size - s.OpenStart - s.OpenEnd }

// Eq reports whether s and o are equal.
func (s Slice) Eq(o Slice) bool {
	return s.Content.Eq(o.Content) && s.OpenStart == o.OpenStart && s.OpenEnd == o.OpenEnd
}

// String returns a debugging representation: `<paragraph("a")>(0,1)`.
func (s Slice) String() string {
	return s.Content.String() + "(" + strconv.Itoa(s.OpenStart) + "," + strconv.Itoa(s.OpenEnd) + ")"
}

// InsertAt inserts f at pos (relative to the slice's content, like a
// position in a document the slice is inserted at). ok is false when the
// content does not fit there (JS null); err reports a position outside the
// slice or invalid existing content (where the JS throws).
func (s Slice) InsertAt(pos int, f Fragment) (result Slice, ok bool, err error) {
	content, ok, err := insertInto(s.Content, pos+s.OpenStart, f, s.OpenStart+1, s.OpenEnd+1, nil)
	if !ok || err != nil {
		return Slice{}, false, err
	}
	return Slice{content, s.OpenStart, s.OpenEnd}, true, nil
}

// RemoveBetween returns the slice with the content between from and to
// (relative positions as for InsertAt) removed; the range must be flat.
func (s Slice) RemoveBetween(from, to int) (Slice, error) {
	content, err := removeRange(s.Content, from+s.OpenStart, to+s.OpenStart)
	if err != nil {
		return Slice{}, err
	}
	return Slice{content, s.OpenStart, s.OpenEnd}, nil
}

// SliceMaxOpen returns a slice of f open as deep as possible on both
// sides. Unless openIsolating, it does not open isolating nodes.
func SliceMaxOpen(f Fragment, openIsolating bool) Slice {
	openStart, openEnd := 0, 0
	for n := f.FirstChild(); n != nil && !n.Type.IsLeaf() && (openIsolating || !n.Type.Spec.Isolating); n = n.FirstChild() {
		openStart++
	}
	for n := f.LastChild(); n != nil && !n.Type.IsLeaf() && (openIsolating || !n.Type.Spec.Isolating); n = n.LastChild() {
		openEnd++
	}
	return Slice{f, openStart, openEnd}
}

var errNonFlat = errors.New("Removing non-flat range")

func removeRange(content Fragment, from, to int) (Fragment, error) {
	index, offset, err := content.FindIndex(from)
	if err != nil {
		return Fragment{}, err
	}
	child := content.MaybeChild(index)
	indexTo, offsetTo, err := content.FindIndex(to)
	if err != nil {
		return Fragment{}, err
	}
	if offset == from || child.Type.IsText {
		if offsetTo != to && !content.Child(indexTo).Type.IsText {
			return Fragment{}, errNonFlat
		}
		return content.Cut(0, from).Append(content.Cut(to, content.size)), nil
	}
	if index != indexTo {
		return Fragment{}, errNonFlat
	}
	inner, err := removeRange(child.Content, from-offset-1, to-offset-1)
	if err != nil {
		return Fragment{}, err
	}
	return content.ReplaceChild(index, child.Copy(inner)), nil
}

func insertInto(content Fragment, dist int, insert Fragment, openStart, openEnd int, parent *Node) (Fragment, bool, error) {
	index, offset, err := content.FindIndex(dist)
	if err != nil {
		return Fragment{}, false, err
	}
	child := content.MaybeChild(index)
	if offset == dist || child.Type.IsText {
		if parent != nil && openStart <= 0 && openEnd <= 0 {
			ok, err := parent.canReplace(index, index, insert, 0, insert.ChildCount())
			if err != nil || !ok {
				return Fragment{}, false, err
			}
		}
		return content.Cut(0, dist).Append(insert).Append(content.Cut(dist, content.size)), true, nil
	}
	innerStart, innerEnd := 0, 0
	if index == 0 {
		innerStart = openStart - 1
	}
	if index == content.ChildCount()-1 {
		innerEnd = openEnd - 1
	}
	inner, ok, err := insertInto(child.Content, dist-offset-1, insert, innerStart, innerEnd, child)
	if !ok || err != nil {
		return Fragment{}, false, err
	}
	return content.ReplaceChild(index, child.Copy(inner)), true, nil
}

// The replace algorithm follows replace.ts step by step. Slices come from
// JSON unchecked, so their open depths may not match their content; the JS
// then reads past the end of a resolved position's path (getting
// undefined) and usually fails with a TypeError, sometimes succeeds. The
// helpers below reproduce that: pathNode/pathIndex report a depth outside
// the path as nil / !ok, and every spot where the JS would dereference
// undefined returns the TypeError V8 would throw.

// jsTypeError is the error V8 throws when reading prop of undefined.
func jsTypeError(prop string) error {
	return errors.New("Cannot read properties of undefined (reading '" + prop + "')")
}

func pathNode(r *ResolvedPos, depth int) *Node {
	if depth < 0 || depth > r.Depth {
		return nil
	}
	return r.path[depth].node
}

func pathIndex(r *ResolvedPos, depth int) (int, bool) {
	if depth < 0 || depth > r.Depth {
		return 0, false
	}
	return r.path[depth].index, true
}

// sameIndex compares two indexes as JS == does, undefined included.
func sameIndex(a *ResolvedPos, ad int, b *ResolvedPos, bd int) bool {
	ai, aok := pathIndex(a, ad)
	bi, bok := pathIndex(b, bd)
	return aok == bok && ai == bi
}

func replace(from, to *ResolvedPos, s Slice) (*Node, error) {
	if s.OpenStart > from.Depth {
		return nil, &ReplaceError{"Inserted content deeper than insertion position"}
	}
	if from.Depth-s.OpenStart != to.Depth-s.OpenEnd {
		return nil, &ReplaceError{"Inconsistent open depths"}
	}
	return replaceOuter(from, to, s, 0)
}

func replaceOuter(from, to *ResolvedPos, s Slice, depth int) (*Node, error) {
	node := pathNode(from, depth)
	if sameIndex(from, depth, to, depth) && depth < from.Depth-s.OpenStart {
		inner, err := replaceOuter(from, to, s, depth+1)
		if err != nil {
			return nil, err
		}
		if node == nil { // unreachable: the inner call fails first
			return nil, jsTypeError("copy")
		}
		index := from.path[depth].index
		if index >= node.Content.ChildCount() {
			return nil, jsTypeError("nodeSize")
		}
		return node.Copy(node.Content.ReplaceChild(index, inner)), nil
	}
	if s.Content.size == 0 {
		content, err := replaceTwoWay(from, to, depth)
		if err != nil {
			return nil, err
		}
		return closeNode(node, content)
	}
	if s.OpenStart == 0 && s.OpenEnd == 0 && from.Depth == depth && to.Depth == depth { // simple, flat case
		parent, content := from.Parent(), from.Parent().Content
		return closeNode(parent, joinFragments(content, from.ParentOffset, s.Content, to.ParentOffset))
	}
	start, end, err := prepareSliceForReplace(s, from)
	if err != nil {
		return nil, err
	}
	content, err := replaceThreeWay(from, start, end, to, depth)
	if err != nil {
		return nil, err
	}
	return closeNode(node, content)
}

// joinFragments returns content.Cut(0, from).Append(insert).Append(content.Cut(to)),
// for from and to that are not inside non-text children (the flat case),
// and a non-empty insert. It builds the result in one slice, and joined
// text in one string.
func joinFragments(content Fragment, from int, insert Fragment, to int) Fragment {
	i0, s0 := content.findIndex(from)
	i1, s1 := content.findIndex(to)
	n := content.ChildCount()
	b := seamBuilder{nodes: make([]*Node, 0, i0+1+insert.ChildCount()+n-i1+1)}
	if s0 < from { // from is inside the text node i0
		b.piece(content.childSlice(0, i0+1), "", 0, textSlice(content.Child(i0).Text, 0, from-s0), from-s0)
	} else {
		b.piece(content.childSlice(0, i0), "", 0, "", 0)
	}
	b.piece(insert.childSlice(0, insert.ChildCount()), "", 0, "", 0)
	if s1 < to { // to is inside the text node i1
		c := content.Child(i1)
		b.piece(content.childSlice(i1, n), textSlice(c.Text, to-s1, c.size), c.size-(to-s1), "", 0)
	} else {
		b.piece(content.childSlice(i1, n), "", 0, "", 0)
	}
	b.flush()
	return makeFragment(b.nodes, from+insert.size+content.size-to)
}

// seamBuilder concatenates pieces of fragments as Fragment.Append does:
// text nodes with the same markup are joined where two pieces meet (only
// there). The last text node of a piece is held back as a run of text
// parts, so that a text joined across several seams is built once.
type seamBuilder struct {
	nodes  []*Node
	run    *Node // markup (and, unless runMod, text) of the held-back text node
	runMod bool  // whether the run's text differs from run.Text
	runLen int   // the UTF-16 length of the run's text (the sum of its parts')
	parts  [4]string
	nparts int
}

// piece adds nodes, the first one with its text replaced by head when
// headLen (its UTF-16 length) is not 0, the last one with its text
// replaced by tail when tailLen is not 0.
func (b *seamBuilder) piece(nodes []*Node, head string, headLen int, tail string, tailLen int) {
	if len(nodes) == 0 {
		return
	}
	last := len(nodes) - 1
	first, text, size, mod := nodes[0], nodes[0].Text, nodes[0].size, false
	if headLen != 0 {
		text, size, mod = head, headLen, true
	}
	if last == 0 && tailLen != 0 {
		text, size, mod = tail, tailLen, true
	}
	if b.run != nil && first.Type.IsText && b.run.SameMarkup(first) {
		b.addPart(text, size)
		b.runMod = true
	} else {
		b.flush()
		b.hold(first, text, size, mod)
	}
	if last == 0 {
		return
	}
	b.flush()
	b.nodes = append(b.nodes, nodes[1:last]...)
	text, size, mod = nodes[last].Text, nodes[last].size, false
	if tailLen != 0 {
		text, size, mod = tail, tailLen, true
	}
	b.hold(nodes[last], text, size, mod)
}

// hold holds a text node back as the run, or appends any other node.
func (b *seamBuilder) hold(n *Node, text string, size int, mod bool) {
	if !n.Type.IsText {
		b.nodes = append(b.nodes, n)
		return
	}
	b.run, b.runMod, b.nparts, b.runLen = n, mod, 0, 0
	b.addPart(text, size)
}

func (b *seamBuilder) addPart(s string, size int) {
	b.runLen += size
	if b.nparts == len(b.parts) { // more seams than joinFragments has
		b.parts[0], b.nparts = textConcatN(b.parts[:]), 1
	}
	b.parts[b.nparts] = s
	b.nparts++
}

// flush emits the held-back text node.
func (b *seamBuilder) flush() {
	if b.run == nil {
		return
	}
	n := b.run
	if b.runMod {
		n = n.withTextSize(textConcatN(b.parts[:b.nparts]), b.runLen)
	}
	b.nodes = append(b.nodes, n)
	b.run, b.runMod, b.nparts = nil, false, 0
}

// textConcatN joins texts as repeated textConcat does, in one allocation
// unless a part starts with a byte that may begin a lone surrogate.
func textConcatN(parts []string) string {
	n := len(parts[0])
	for _, p := range parts[1:] {
		if len(p) > 0 && p[0] == 0xED {
			s := parts[0]
			for _, p := range parts[1:] {
				s = textConcat(s, p)
			}
			return s
		}
		n += len(p)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, p := range parts {
		sb.WriteString(p)
	}
	return sb.String()
}

func checkJoin(main, sub *Node) error {
	if sub == nil || main == nil {
		return jsTypeError("type")
	}
	if !sub.Type.CompatibleContent(main.Type) {
		return &ReplaceError{"Cannot join " + sub.Type.Name + " onto " + main.Type.Name}
	}
	return nil
}

func joinable(before, after *ResolvedPos, depth int) (*Node, error) {
	node := pathNode(before, depth)
	if err := checkJoin(node, pathNode(after, depth)); err != nil {
		return nil, err
	}
	return node, nil
}

// addNode appends child to target, joining it to a preceding text node
// with the same markup.
func addNode(child *Node, target []*Node) []*Node {
	last := len(target) - 1
	if last >= 0 && child.Type.IsText && child.SameMarkup(target[last]) {
		target[last] = child.withTextSize(textConcat(target[last].Text, child.Text), target[last].size+child.size)
		return target
	}
	return append(target, child)
}

// addRange appends the children of the node at depth between start and
// end (nil meaning the node's start or end) to target.
func addRange(start, end *ResolvedPos, depth int, target []*Node) ([]*Node, error) {
	var node *Node
	endIndex, endOK := 0, true
	if end != nil {
		node = pathNode(end, depth)
		endIndex, endOK = pathIndex(end, depth)
	} else {
		node = pathNode(start, depth)
		if node == nil {
			return target, jsTypeError("childCount")
		}
		endIndex = node.Content.ChildCount()
	}
	startIndex, startOK := 0, true
	if start != nil {
		startIndex, startOK = pathIndex(start, depth)
		if start.Depth > depth {
			startIndex++
		} else if start.TextOffset() != 0 {
			target = addNode(start.NodeAfter(), target)
			startIndex++
		}
	}
	if startOK && endOK && startIndex < endIndex {
		// addNode for each child, appending runs that cannot join in bulk.
		// (addNode joins each run's first child to the previous run.)
		node.Content.eachRun(startIndex, endIndex, func(children []*Node) {
			for len(children) > 0 {
				target = addNode(children[0], target)
				j := 1
				for j < len(children) && !(children[j].Type.IsText && children[j].SameMarkup(children[j-1])) {
					j++
				}
				target = append(target, children[1:j]...)
				children = children[j:]
			}
		})
	}
	if end != nil && end.Depth == depth && end.TextOffset() != 0 {
		target = addNode(end.NodeBefore(), target)
	}
	return target, nil
}

// childCountAt returns the child count of r's ancestor at depth (0 when
// undefined), to size result slices.
func childCountAt(r *ResolvedPos, depth int) int {
	if n := pathNode(r, depth); n != nil {
		return n.Content.ChildCount()
	}
	return 0
}

// closeNode returns node with the given content, which must be valid.
func closeNode(node *Node, content Fragment) (*Node, error) {
	if node == nil {
		return nil, jsTypeError("type")
	}
	if !node.Type.ValidContent(content) {
		return nil, &ReplaceError{"Invalid content for node " + node.Type.Name}
	}
	if node.Type.IsText {
		// Only a root can be a text node here. The JS calls node.copy
		// with a new fragment, and TextNode does not override copy:
		// the result is a plain Node of the text type, without text.
		return newNode(node.Type, node.Attrs, content, node.Marks), nil
	}
	return node.Copy(content), nil
}

func replaceThreeWay(from, start, end, to *ResolvedPos, depth int) (Fragment, error) {
	var openStart, openEnd *Node
	var err error
	if from.Depth > depth {
		if openStart, err = joinable(from, start, depth+1); err != nil {
			return Fragment{}, err
		}
	}
	if to.Depth > depth {
		if openEnd, err = joinable(end, to, depth+1); err != nil {
			return Fragment{}, err
		}
	}
	content, err := addRange(nil, from, depth, make([]*Node, 0, childCountAt(from, depth)+childCountAt(start, depth)+1))
	if err != nil {
		return Fragment{}, err
	}
	if openStart != nil && openEnd != nil && sameIndex(start, depth, end, depth) {
		if err := checkJoin(openStart, openEnd); err != nil {
			return Fragment{}, err
		}
		inner, err := replaceThreeWay(from, start, end, to, depth+1)
		if err != nil {
			return Fragment{}, err
		}
		closed, err := closeNode(openStart, inner)
		if err != nil {
			return Fragment{}, err
		}
		content = addNode(closed, content)
	} else {
		if openStart != nil {
			inner, err := replaceTwoWay(from, start, depth+1)
			if err != nil {
				return Fragment{}, err
			}
			closed, err := closeNode(openStart, inner)
			if err != nil {
				return Fragment{}, err
			}
			content = addNode(closed, content)
		}
		if content, err = addRange(start, end, depth, content); err != nil {
			return Fragment{}, err
		}
		if openEnd != nil {
			inner, err := replaceTwoWay(end, to, depth+1)
			if err != nil {
				return Fragment{}, err
			}
			closed, err := closeNode(openEnd, inner)
			if err != nil {
				return Fragment{}, err
			}
			content = addNode(closed, content)
		}
	}
	if content, err = addRange(to, nil, depth, content); err != nil {
		return Fragment{}, err
	}
	return newFragmentNoJoin(content), nil
}

func replaceTwoWay(from, to *ResolvedPos, depth int) (Fragment, error) {
	content, err := addRange(nil, from, depth, make([]*Node, 0, childCountAt(from, depth)+1))
	if err != nil {
		return Fragment{}, err
	}
	if from.Depth > depth {
		typ, err := joinable(from, to, depth+1)
		if err != nil {
			return Fragment{}, err
		}
		inner, err := replaceTwoWay(from, to, depth+1)
		if err != nil {
			return Fragment{}, err
		}
		closed, err := closeNode(typ, inner)
		if err != nil {
			return Fragment{}, err
		}
		content = addNode(closed, content)
	}
	if content, err = addRange(to, nil, depth, content); err != nil {
		return Fragment{}, err
	}
	return newFragmentNoJoin(content), nil
}

// prepareSliceForReplace wraps the slice's content in copies of along's
// ancestors and resolves the positions where its content starts and ends.
func prepareSliceForReplace(s Slice, along *ResolvedPos) (start, end *ResolvedPos, err error) {
	extra := along.Depth - s.OpenStart
	parent := pathNode(along, extra)
	if parent == nil {
		return nil, nil, jsTypeError("copy")
	}
	node := parent.Copy(s.Content)
	for i := extra - 1; i >= 0; i-- {
		node = along.path[i].node.Copy(FragmentOf(node))
	}
	if start, err = resolvePos(node, s.OpenStart+extra); err != nil {
		return nil, nil, err
	}
	if end, err = resolvePos(node, node.Content.size-s.OpenEnd-extra); err != nil {
		return nil, nil, err
	}
	return start, end, nil
}
