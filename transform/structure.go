package transform

import (
	"errors"
	"strconv"
	"strings"

	"github.com/pmauthority/pmauthority/model"
)

// contentMatchAt is n.ContentMatchAt(i), with the TypeError JavaScript
// runs into for an index past n's children.
func contentMatchAt(n *model.Node, i int) (*model.ContentMatch, error) {
	if i > n.ChildCount() {
		return nil, typeError("undefined", "type")
	}
	return n.ContentMatchAt(i)
}

// canReplace is n.canReplace(from, to, replacement) of prosemirror-model,
// with the error it throws when n's content before from is invalid.
func canReplace(n *model.Node, from, to int, replacement model.Fragment) (bool, error) {
	if _, err := contentMatchAt(n, from); err != nil {
		return false, err
	}
	return n.CanReplace(from, to, replacement, 0, replacement.ChildCount()), nil
}

// canReplaceWith is n.canReplaceWith(from, to, t, marks) of
// prosemirror-model, with the error it throws when n's content before
// from is invalid. Nil marks are not checked.
func canReplaceWith(n *model.Node, from, to int, t *model.NodeType, marks []*model.Mark) (bool, error) {
	if marks != nil && !n.Type.AllowsMarks(marks) {
		return false, nil
	}
	if _, err := contentMatchAt(n, from); err != nil {
		return false, err
	}
	return n.CanReplaceWith(from, to, t, nil), nil
}

// cutByIndex is Fragment.cutByIndex of prosemirror-model for any
// indexes, as JavaScript's Array.slice takes them: an end past the
// children stops at the last, a start at or after the end gives nothing.
// (A NodeRange whose positions are not in the same node at its depth has
// such indexes.)
func cutByIndex(f model.Fragment, from, to int) model.Fragment {
	to = min(to, f.ChildCount())
	if from >= to {
		return model.Fragment{}
	}
	return f.CutByIndex(from, to)
}

func canCut(node *model.Node, start, end int) (bool, error) {
	if start != 0 {
		ok, err := canReplace(node, start, node.ChildCount(), model.Fragment{})
		if err != nil || !ok {
			return false, err
		}
	}
	if end != node.ChildCount() {
		return canReplace(node, 0, end, model.Fragment{})
	}
	return true, nil
}

// LiftTarget returns the depth to which the content of r can be lifted,
// and false when it cannot be. It does not go across isolating nodes.
func LiftTarget(r *model.NodeRange) (int, bool) {
	depth, ok, err := liftTarget(r)
	return depth, ok && err == nil
}

func liftTarget(r *model.NodeRange) (int, bool, error) {
	parent := r.Parent()
	content := cutByIndex(parent.Content, r.StartIndex(), r.EndIndex())
	contentBefore, contentAfter := 0, 0
	for depth := r.Depth; ; depth-- {
		node := r.From.Node(depth)
		index, endIndex := r.From.Index(depth)+contentBefore, r.To.IndexAfter(depth)-contentAfter
		if depth < r.Depth {
			ok, err := canReplace(node, index, endIndex, content)
			if err != nil {
				return 0, false, err
			}
			if ok {
				return depth, true, nil
			}
		}
		if depth == 0 || node.Type.Spec.Isolating {
			break
		}
		ok, err := canCut(node, index, endIndex)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			break
		}
		if index > 0 {
			contentBefore = 1
		}
		if endIndex < node.ChildCount() {
			contentAfter = 1
		}
	}
	return 0, false, nil
}

func lift(tr *Transform, r *model.NodeRange, target int) error {
	from, to, depth := r.From, r.To, r.Depth
	gapStart, _ := from.Before(depth + 1)
	gapEnd, _ := to.After(depth + 1)
	start, end := gapStart, gapEnd

	before, openStart := model.Fragment{}, 0
	for d, splitting := depth, false; d > target; d-- {
		if splitting || from.Index(d) > 0 {
			splitting = true
			before = model.FragmentOf(from.Node(d).Copy(before))
			openStart++
		} else {
			start--
		}
	}
	after, openEnd := model.Fragment{}, 0
	for d, splitting := depth, false; d > target; d-- {
		if a, _ := to.After(d + 1); splitting || a < to.End(d) {
			splitting = true
			after = model.FragmentOf(to.Node(d).Copy(after))
			openEnd++
		} else {
			end++
		}
	}
	return tr.Step(&ReplaceAroundStep{From: start, To: end, GapFrom: gapStart, GapTo: gapEnd,
		Slice: model.NewSlice(before.Append(after), openStart, openEnd), Insert: before.Size() - openStart, Structure: true})
}

// FindWrapping returns a way to wrap the content of r in a node of type
// t (with attrs): the wrappers, outermost first, with any extra nodes
// needed around and inside the wrapper, or false when there is none.
// When inner is not nil, its content is what must fit into the wrapping
// instead of r's.
func FindWrapping(r *model.NodeRange, t *model.NodeType, attrs model.Attrs, inner *model.NodeRange) ([]Wrapper, bool) {
	w, ok, err := findWrapping(r, t, attrs, inner)
	return w, ok && err == nil
}

func findWrapping(r *model.NodeRange, t *model.NodeType, attrs model.Attrs, innerRange *model.NodeRange) ([]Wrapper, bool, error) {
	if innerRange == nil {
		innerRange = r
	}
	around, ok, err := findWrappingOutside(r, t)
	if err != nil || !ok {
		return nil, false, err
	}
	inner, ok, err := findWrappingInside(innerRange, t)
	if err != nil || !ok {
		return nil, false, err
	}
	wrappers := make([]Wrapper, 0, len(around)+1+len(inner))
	for _, a := range around {
		wrappers = append(wrappers, Wrapper{Type: a})
	}
	wrappers = append(wrappers, Wrapper{Type: t, Attrs: attrs})
	for _, i := range inner {
		wrappers = append(wrappers, Wrapper{Type: i})
	}
	return wrappers, true, nil
}

func findWrappingOutside(r *model.NodeRange, t *model.NodeType) ([]*model.NodeType, bool, error) {
	parent, startIndex, endIndex := r.Parent(), r.StartIndex(), r.EndIndex()
	match, err := contentMatchAt(parent, startIndex)
	if err != nil {
		return nil, false, err
	}
	around, ok := match.FindWrapping(t)
	if !ok {
		return nil, false, nil
	}
	outer := t
	if len(around) > 0 {
		outer = around[0]
	}
	ok, err = canReplaceWith(parent, startIndex, endIndex, outer, nil)
	if err != nil || !ok {
		return nil, false, err
	}
	return around, true, nil
}

func findWrappingInside(r *model.NodeRange, t *model.NodeType) ([]*model.NodeType, bool, error) {
	parent, startIndex, endIndex := r.Parent(), r.StartIndex(), r.EndIndex()
	inner := parent.MaybeChild(startIndex)
	if inner == nil {
		return nil, false, errors.New("Index " + strconv.Itoa(startIndex) + " out of range for " + parent.Content.String())
	}
	inside, ok := t.ContentMatch.FindWrapping(inner.Type)
	if !ok {
		return nil, false, nil
	}
	lastType := t
	if len(inside) > 0 {
		lastType = inside[len(inside)-1]
	}
	innerMatch := lastType.ContentMatch
	for i := startIndex; innerMatch != nil && i < endIndex; i++ {
		child := parent.MaybeChild(i)
		if child == nil {
			return nil, false, errors.New("Index " + strconv.Itoa(i) + " out of range for " + parent.Content.String())
		}
		innerMatch = innerMatch.MatchType(child.Type)
	}
	if innerMatch == nil || !innerMatch.ValidEnd {
		return nil, false, nil
	}
	return inside, true, nil
}

var errWrapperContent = errors.New("Wrapper type given to Transform.wrap does not form valid content of its parent wrapper")

func wrap(tr *Transform, r *model.NodeRange, wrappers []Wrapper) error {
	var content model.Fragment
	for i := len(wrappers) - 1; i >= 0; i-- {
		if content.Size() != 0 {
			match := wrappers[i].Type.ContentMatch.MatchFragment(content, 0, content.ChildCount())
			if match == nil || !match.ValidEnd {
				return errWrapperContent
			}
		}
		node, err := wrappers[i].Type.Create(wrappers[i].Attrs, content, nil)
		if err != nil {
			return err
		}
		content = model.FragmentOf(node)
	}
	start, end := r.Start(), r.End()
	return tr.Step(&ReplaceAroundStep{From: start, To: end, GapFrom: start, GapTo: end,
		Slice: model.NewSlice(content, 0, 0), Insert: len(wrappers), Structure: true})
}

var errSetBlockType = errors.New("Type given to setBlockType should be a textblock")

// newlineConversion is what setBlockType and join do with newlines and
// linebreak replacement nodes when the schema has a linebreakReplacement
// type: JavaScript's null, false or true.
type newlineConversion int

const (
	keepNewlines     newlineConversion = iota // null
	linebreaksToText                          // false: replacement nodes become "\n"
	newlinesToBreaks                          // true: "\n" become replacement nodes
)

func newlineConversionFor(t *model.NodeType) newlineConversion {
	lb := t.Schema.LinebreakReplacement
	if lb == nil {
		return keepNewlines
	}
	pre, supportLinebreak := t.Whitespace() == "pre", t.ContentMatch.MatchType(lb) != nil
	switch {
	case pre && !supportLinebreak:
		return linebreaksToText
	case !pre && supportLinebreak:
		return newlinesToBreaks
	}
	return keepNewlines
}

func setBlockType(tr *Transform, from, to int, typ *model.NodeType, attrs func(*model.Node) model.Attrs) error {
	if !typ.IsTextblock() {
		return errSetBlockType
	}
	mapFrom := len(tr.Steps)
	var err error
	tr.Doc.NodesBetween(from, to, func(node *model.Node, pos int, _ *model.Node, _ int) bool {
		if err != nil {
			return false
		}
		attrsHere := attrs(node)
		if !node.IsTextblock() || node.HasMarkup(typ, attrsHere, nil) {
			return true
		}
		var ok bool
		if ok, err = canChangeType(tr.Doc, tr.mappingFrom(mapFrom).Map(pos, 1), typ); err != nil || !ok {
			return true
		}
		convert := keepNewlines
		if node.Type.Schema.LinebreakReplacement != nil {
			convert = newlineConversionFor(typ)
		}
		// Clear the markup that the new type does not allow.
		if convert == linebreaksToText {
			if err = replaceLinebreaks(tr, node, pos, mapFrom); err != nil {
				return false
			}
		}
		if err = clearIncompatible(tr, tr.mappingFrom(mapFrom).Map(pos, 1), typ, nil, convert == keepNewlines); err != nil {
			return false
		}
		mapping := tr.mappingFrom(mapFrom)
		startM, endM := mapping.Map(pos, 1), mapping.Map(pos+node.NodeSize(), 1)
		var block *model.Node
		if block, err = typ.Create(attrsHere, model.Fragment{}, node.Marks); err != nil {
			return false
		}
		if err = tr.Step(&ReplaceAroundStep{From: startM, To: endM, GapFrom: startM + 1, GapTo: endM - 1,
			Slice: model.NewSlice(model.FragmentOf(block), 0, 0), Insert: 1, Structure: true}); err != nil {
			return false
		}
		if convert == newlinesToBreaks {
			err = replaceNewlines(tr, node, pos, mapFrom)
		}
		return false
	}, 0)
	if err != nil {
		return err
	}
	return nodesBetweenEnd(tr.Docs, tr.Doc, mapFrom, to)
}

// nodesBetweenEnd is the TypeError doc.nodesBetween throws, after calling
// back for every node, when to lies beyond the end of the document it ran
// on (the document before the steps from index mapFrom on).
func nodesBetweenEnd(docs []*model.Node, doc *model.Node, mapFrom, to int) error {
	if mapFrom < len(docs) {
		doc = docs[mapFrom]
	}
	if to > doc.Content.Size() {
		return errNodesBetweenEnd
	}
	return nil
}

var errNodesBetweenEnd = typeError("undefined", "nodeSize")

// newlineIndexes calls f with the UTF-16 offset and length of each
// newline (\r\n, \n or \r) in text.
func newlineIndexes(text string, f func(index, length int) error) error {
	offset := 0
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], "\r\n")
		if j < 0 {
			return nil
		}
		offset += model.UTF16Len(text[i : i+j])
		i += j
		n := 1
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			n = 2
		}
		if err := f(offset, n); err != nil {
			return err
		}
		offset += n
		i += n
	}
	return nil
}

func replaceNewlines(tr *Transform, node *model.Node, pos, mapFrom int) error {
	lb := node.Type.Schema.LinebreakReplacement
	var err error
	node.ForEach(func(child *model.Node, offset, _ int) {
		if err != nil || !child.IsText() {
			return
		}
		err = newlineIndexes(child.Text, func(index, _ int) error {
			start := tr.mappingFrom(mapFrom).Map(pos+1+offset+index, 1)
			br, err := lb.Create(nil, model.Fragment{}, nil)
			if err != nil {
				return err
			}
			return tr.ReplaceWith(start, start+1, model.FragmentOf(br))
		})
	})
	return err
}

func replaceLinebreaks(tr *Transform, node *model.Node, pos, mapFrom int) error {
	schema := node.Type.Schema
	var err error
	node.ForEach(func(child *model.Node, offset, _ int) {
		if err != nil || child.Type != schema.LinebreakReplacement {
			return
		}
		start := tr.mappingFrom(mapFrom).Map(pos+1+offset, 1)
		var text *model.Node
		if text, err = schema.Text("\n", nil); err == nil {
			err = tr.ReplaceWith(start, start+1, model.FragmentOf(text))
		}
	})
	return err
}

func canChangeType(doc *model.Node, pos int, t *model.NodeType) (bool, error) {
	r, err := doc.Resolve(pos)
	if err != nil {
		return false, err
	}
	index := r.Index(r.Depth)
	return canReplaceWith(r.Parent(), index, index+1, t, nil)
}

var errNoNodeAtPos = errors.New("No node at given position")

func setNodeMarkup(tr *Transform, pos int, typ *model.NodeType, attrs model.Attrs, marks []*model.Mark) error {
	node, err := nodeAt(tr.Doc, pos)
	if err != nil {
		return err
	}
	if node == nil {
		return errNoNodeAtPos
	}
	if typ == nil {
		typ = node.Type
	}
	if marks == nil {
		marks = node.Marks
	}
	newNode, err := typ.Create(attrs, model.Fragment{}, marks)
	if err != nil {
		return err
	}
	if node.IsLeaf() {
		return tr.ReplaceWith(pos, pos+node.NodeSize(), model.FragmentOf(newNode))
	}
	if !typ.ValidContent(node.Content) {
		return errors.New("Invalid content for node type " + typ.Name)
	}
	return tr.Step(&ReplaceAroundStep{From: pos, To: pos + node.NodeSize(), GapFrom: pos + 1, GapTo: pos + node.NodeSize() - 1,
		Slice: model.NewSlice(model.FragmentOf(newNode), 0, 0), Insert: 1, Structure: true})
}

// wrapperAt returns typesAfter[i] when there is such an entry with a
// type (JavaScript's undefined and null are both nil).
func wrapperAt(typesAfter []Wrapper, i int) *Wrapper {
	if i < 0 || i >= len(typesAfter) || typesAfter[i].Type == nil {
		return nil
	}
	return &typesAfter[i]
}

// CanSplit reports whether splitting at pos (depth levels, with
// typesAfter as in Transform.Split) is allowed. It is false for a
// position outside doc.
func CanSplit(doc *model.Node, pos, depth int, typesAfter []Wrapper) bool {
	ok, err := canSplit(doc, pos, depth, typesAfter)
	return ok && err == nil
}

func canSplit(doc *model.Node, pos, depth int, typesAfter []Wrapper) (bool, error) {
	r, err := doc.Resolve(pos)
	if err != nil {
		return false, err
	}
	base := r.Depth - depth
	parent, index := r.Parent(), r.Index(r.Depth)
	innerType := parent.Type
	if typesAfter != nil {
		if w := wrapperAt(typesAfter, len(typesAfter)-1); w != nil {
			innerType = w.Type
		}
	}
	if base < 0 || parent.Type.Spec.Isolating {
		return false, nil
	}
	if ok, err := canReplace(parent, index, parent.ChildCount(), model.Fragment{}); err != nil || !ok {
		return false, err
	}
	if !innerType.ValidContent(parent.Content.CutByIndex(index, parent.ChildCount())) {
		return false, nil
	}
	for d, i := r.Depth-1, depth-2; d > base; d, i = d-1, i-1 {
		node, index := r.Node(d), r.Index(d)
		if node.Type.Spec.Isolating {
			return false, nil
		}
		rest := node.Content.CutByIndex(index, node.ChildCount())
		if override := wrapperAt(typesAfter, i+1); override != nil {
			child, err := override.Type.Create(override.Attrs, model.Fragment{}, nil)
			if err != nil {
				return false, err
			}
			rest = rest.ReplaceChild(0, child)
		}
		after := node.Type
		if w := wrapperAt(typesAfter, i); w != nil {
			after = w.Type
		}
		if ok, err := canReplace(node, index+1, node.ChildCount(), model.Fragment{}); err != nil || !ok {
			return false, err
		}
		if !after.ValidContent(rest) {
			return false, nil
		}
	}
	index = r.IndexAfter(base)
	var baseType *model.NodeType
	if w := wrapperAt(typesAfter, 0); w != nil {
		baseType = w.Type
	} else if base+1 > r.Depth {
		return false, typeError("undefined", "type") // depth 0: JS reads the node below the position
	} else {
		baseType = r.Node(base + 1).Type
	}
	return canReplaceWith(r.Node(base), index, index, baseType, nil)
}

// jsNode is $pos.node(d) of prosemirror-model, where a negative depth
// counts up from the position's own depth.
func jsNode(r *model.ResolvedPos, d int) (*model.Node, error) {
	if d < 0 {
		d += r.Depth
	}
	if d < 0 || d > r.Depth {
		return nil, typeError("undefined", "copy")
	}
	return r.Node(d), nil
}

func split(tr *Transform, pos, depth int, typesAfter []Wrapper) error {
	r, err := tr.Doc.Resolve(pos)
	if err != nil {
		return err
	}
	var before, after model.Fragment
	for d, e, i := r.Depth, r.Depth-depth, depth-1; d > e; d, i = d-1, i-1 {
		node, err := jsNode(r, d)
		if err != nil {
			return err
		}
		before = model.FragmentOf(node.Copy(before))
		if w := wrapperAt(typesAfter, i); w != nil {
			n, err := w.Type.Create(w.Attrs, after, nil)
			if err != nil {
				return err
			}
			after = model.FragmentOf(n)
		} else {
			after = model.FragmentOf(node.Copy(after))
		}
	}
	return tr.Step(&ReplaceStep{From: pos, To: pos, Slice: model.NewSlice(before.Append(after), depth, depth), Structure: true})
}

// CanJoin reports whether the blocks before and after pos can be joined.
// It is false for a position outside doc.
func CanJoin(doc *model.Node, pos int) bool {
	ok, err := canJoin(doc, pos)
	return ok && err == nil
}

func canJoin(doc *model.Node, pos int) (bool, error) {
	r, err := doc.Resolve(pos)
	if err != nil {
		return false, err
	}
	index := r.Index(r.Depth)
	ok, err := joinable(r.NodeBefore(), r.NodeAfter())
	if err != nil || !ok {
		return false, err
	}
	return canReplace(r.Parent(), index, index+1, model.Fragment{})
}

// canAppendWithSubstitutedLinebreaks reports whether b's content can go
// at the end of a, counting linebreak replacement nodes as text. As in
// JavaScript, an empty b is checked against a's content alone (the
// compatibleContent test there has no effect).
func canAppendWithSubstitutedLinebreaks(a, b *model.Node) (bool, error) {
	match, err := contentMatchAt(a, a.ChildCount())
	if err != nil {
		return false, err
	}
	schema := a.Type.Schema
	lb := schema.LinebreakReplacement
	for i := 0; i < b.ChildCount(); i++ {
		child := b.Child(i)
		t := child.Type
		if lb != nil && t == lb {
			t = schema.NodeType("text")
		}
		if match = match.MatchType(t); match == nil {
			return false, nil
		}
		if !a.Type.AllowsMarks(child.Marks) {
			return false, nil
		}
	}
	return match.ValidEnd, nil
}

func joinable(a, b *model.Node) (bool, error) {
	if a == nil || b == nil || a.IsLeaf() {
		return false, nil
	}
	return canAppendWithSubstitutedLinebreaks(a, b)
}

// JoinPoint returns the position of an ancestor boundary of pos where
// the block before (dir < 0) or after (dir > 0) can be joined, and false
// when there is none (or pos is outside doc).
func JoinPoint(doc *model.Node, pos, dir int) (int, bool) {
	p, ok, err := joinPoint(doc, pos, dir)
	return p, ok && err == nil
}

func joinPoint(doc *model.Node, pos, dir int) (int, bool, error) {
	r, err := doc.Resolve(pos)
	if err != nil {
		return 0, false, err
	}
	for d := r.Depth; ; d-- {
		var before, after *model.Node
		index := r.Index(d)
		switch {
		case d == r.Depth:
			before, after = r.NodeBefore(), r.NodeAfter()
		case dir > 0:
			before = r.Node(d + 1)
			index++
			after = r.Node(d).MaybeChild(index)
		default:
			before = r.Node(d).MaybeChild(index - 1)
			after = r.Node(d + 1)
		}
		if before != nil && !before.IsTextblock() {
			ok, err := joinable(before, after)
			if err == nil && ok {
				ok, err = canReplace(r.Node(d), index, index+1, model.Fragment{})
			}
			if err != nil {
				return 0, false, err
			}
			if ok {
				return pos, true, nil
			}
		}
		if d == 0 {
			break
		}
		if dir < 0 {
			pos, _ = r.Before(d)
		} else {
			pos, _ = r.After(d)
		}
	}
	return 0, false, nil
}

func join(tr *Transform, pos, depth int) error {
	schema := tr.Doc.Type.Schema
	rBefore, err := tr.Doc.Resolve(pos - depth)
	if err != nil {
		return err
	}
	beforeType := rBefore.Parent().Type
	convert := keepNewlines
	if schema.LinebreakReplacement != nil && beforeType.InlineContent {
		convert = newlineConversionFor(beforeType)
	}
	mapFrom := len(tr.Steps)
	if convert == linebreaksToText {
		rAfter, err := tr.Doc.Resolve(pos + depth)
		if err != nil {
			return err
		}
		before, err := rAfter.Before(rAfter.Depth)
		if err != nil {
			return err
		}
		if err := replaceLinebreaks(tr, rAfter.Parent(), before, mapFrom); err != nil {
			return err
		}
	}
	if beforeType.InlineContent {
		match, err := contentMatchAt(rBefore.Parent(), rBefore.Index(rBefore.Depth))
		if err != nil {
			return err
		}
		if err := clearIncompatible(tr, pos+depth-1, beforeType, match, convert == keepNewlines); err != nil {
			return err
		}
	}
	mapping := tr.mappingFrom(mapFrom)
	start := mapping.Map(pos-depth, 1)
	if err := tr.Step(&ReplaceStep{From: start, To: mapping.Map(pos+depth, -1), Slice: model.EmptySlice, Structure: true}); err != nil {
		return err
	}
	if convert == newlinesToBreaks {
		full, err := tr.Doc.Resolve(start)
		if err != nil {
			return err
		}
		before, err := full.Before(full.Depth)
		if err != nil {
			return err
		}
		return replaceNewlines(tr, full.Parent(), before, len(tr.Steps))
	}
	return nil
}

// InsertPoint returns a position near pos where a node of type t can be
// inserted: pos itself, or a position found searching up the tree when
// pos is at the start or end of its parent. It is false when there is
// none (or pos is outside doc).
func InsertPoint(doc *model.Node, pos int, t *model.NodeType) (int, bool) {
	p, ok, err := insertPoint(doc, pos, t)
	return p, ok && err == nil
}

func insertPoint(doc *model.Node, pos int, t *model.NodeType) (int, bool, error) {
	r, err := doc.Resolve(pos)
	if err != nil {
		return 0, false, err
	}
	index := r.Index(r.Depth)
	if ok, err := canReplaceWith(r.Parent(), index, index, t, nil); err != nil || ok {
		return pos, ok, err
	}
	if r.ParentOffset == 0 {
		for d := r.Depth - 1; d >= 0; d-- {
			index := r.Index(d)
			ok, err := canReplaceWith(r.Node(d), index, index, t, nil)
			if err != nil {
				return 0, false, err
			}
			if ok {
				p, _ := r.Before(d + 1)
				return p, true, nil
			}
			if index > 0 {
				return 0, false, nil
			}
		}
	}
	if r.ParentOffset == r.Parent().Content.Size() {
		for d := r.Depth - 1; d >= 0; d-- {
			index := r.IndexAfter(d)
			ok, err := canReplaceWith(r.Node(d), index, index, t, nil)
			if err != nil {
				return 0, false, err
			}
			if ok {
				p, _ := r.After(d + 1)
				return p, true, nil
			}
			if index < r.Node(d).ChildCount() {
				return 0, false, nil
			}
		}
	}
	return 0, false, nil
}

// DropPoint returns a position at or around pos where slice can be
// inserted, looking at the nearest boundary of the parent nodes even when
// pos is not at the start or end of them; false when there is none (or
// pos is outside doc).
func DropPoint(doc *model.Node, pos int, slice model.Slice) (int, bool) {
	p, ok, err := dropPoint(doc, pos, slice)
	return p, ok && err == nil
}

func dropPoint(doc *model.Node, pos int, slice model.Slice) (int, bool, error) {
	r, err := doc.Resolve(pos)
	if err != nil {
		return 0, false, err
	}
	if slice.Content.Size() == 0 {
		return pos, true, nil
	}
	content, err := contentAt(slice.Content, slice.OpenStart)
	if err != nil {
		return 0, false, err
	}
	passes := 1
	if slice.OpenStart == 0 && slice.Size() != 0 {
		passes = 2
	}
	for pass := 1; pass <= passes; pass++ {
		for d := r.Depth; d >= 0; d-- {
			bias := 0
			if d != r.Depth {
				bias = 1
				if 2*r.Pos <= r.Start(d+1)+r.End(d+1) {
					bias = -1
				}
			}
			for attempt := 0; attempt < 2; attempt++ {
				if attempt > 0 {
					if bias == 0 {
						break
					}
					bias = -bias
				}
				insertPos := r.Index(d)
				if bias > 0 {
					insertPos++
				}
				parent := r.Node(d)
				var fits bool
				if pass == 1 {
					if fits, err = canReplace(parent, insertPos, insertPos, content); err != nil {
						return 0, false, err
					}
				} else {
					match, err := contentMatchAt(parent, insertPos)
					if err != nil {
						return 0, false, err
					}
					first := content.FirstChild()
					if first == nil {
						return 0, false, typeError("null", "type")
					}
					if wrapping, ok := match.FindWrapping(first.Type); ok && len(wrapping) > 0 {
						if fits, err = canReplaceWith(parent, insertPos, insertPos, wrapping[0], nil); err != nil {
							return 0, false, err
						}
					}
				}
				if fits {
					switch {
					case bias == 0:
						return r.Pos, true, nil
					case bias < 0:
						p, _ := r.Before(d + 1)
						return p, true, nil
					default:
						p, _ := r.After(d + 1)
						return p, true, nil
					}
				}
			}
		}
	}
	return 0, false, nil
}
