package transform

import (
	"errors"
	"slices"

	"github.com/pmauthority/pmauthority/model"
)

// ErrFitterLoop is the error of a replace whose slice the Fitter cannot
// finish placing. prosemirror-transform's Fitter loops for as long as the
// slice it is placing has a size other than zero; a slice whose open
// depths exceed its content (a negative size, which Slice.fromJSON
// accepts and which the Fitter can also make itself by dropping nodes
// from a slice open at its end) may never get there, and JavaScript
// hangs. The Go Fitter gives up with this error after fitRounds rounds.
var ErrFitterLoop = errors.New("replace: the slice does not fit and the Fitter would loop forever (prosemirror-transform hangs on it)")

// fitRounds bounds the rounds of Fitter.fit for slice. Each round places
// nodes, opens the slice one level deeper or drops a node; opening is
// bounded by the slice's depth, and placing and dropping take nodes or
// empty open levels off the unplaced slice, so a slice that can be
// fitted needs a few rounds per node and level. The bound is far above
// that (the differential corpora never come near it) and small enough
// that a looping slice fails in milliseconds.
func fitRounds(slice model.Slice) int {
	nodes, depth := 0, 0
	var walk func(f model.Fragment, d int)
	walk = func(f model.Fragment, d int) {
		depth = max(depth, d)
		f.ForEach(func(child *model.Node, _, _ int) {
			nodes++
			walk(child.Content, d+1)
		})
	}
	walk(slice.Content, 0)
	depth = max(depth, slice.OpenStart, slice.OpenEnd)
	return 16*(nodes+1)*(depth+2) + 1024
}

// typeError is the TypeError V8 throws where prosemirror-transform
// dereferences a missing node or fragment, which only malformed slices
// and documents that violate their schema lead it to.
func typeError(of, prop string) error {
	return errors.New("Cannot read properties of " + of + " (reading '" + prop + "')")
}

// ReplaceStepFor fits slice into the document between from and to and
// returns the step that inserts it: a ReplaceStep, a ReplaceAroundStep
// when inline content after the range must be pulled into the last
// placed textblock, or nil when there is no meaningful way to insert the
// slice here or the replace would change nothing. It is replaceStep of
// prosemirror-transform.
func ReplaceStepFor(doc *model.Node, from, to int, slice model.Slice) (Step, error) {
	if from == to && slice.Size() == 0 {
		return nil, nil
	}
	rFrom, err := doc.Resolve(from)
	if err != nil {
		return nil, err
	}
	rTo, err := doc.Resolve(to)
	if err != nil {
		return nil, err
	}
	trivial, err := fitsTrivially(rFrom, rTo, slice)
	if err != nil {
		return nil, err
	}
	if trivial {
		return &ReplaceStep{From: from, To: to, Slice: slice}, nil
	}
	f, err := newFitter(rFrom, rTo, slice)
	if err != nil {
		return nil, err
	}
	return f.fit()
}

func fitsTrivially(rFrom, rTo *model.ResolvedPos, slice model.Slice) (bool, error) {
	if slice.OpenStart != 0 || slice.OpenEnd != 0 || rFrom.Start(rFrom.Depth) != rTo.Start(rTo.Depth) {
		return false, nil
	}
	return canReplace(rFrom.Parent(), rFrom.Index(rFrom.Depth), rTo.Index(rTo.Depth), slice.Content)
}

// frontierEntry is an open node on the placed side of a Fitter: its type
// and the content match after what was placed in it so far. match is nil
// where the JavaScript's non-null assertion would be wrong (only after
// content that violates the schema).
type frontierEntry struct {
	typ   *model.NodeType
	match *model.ContentMatch
}

// fittable is where findFittable found room for content of the slice.
type fittable struct {
	sliceDepth, frontierDepth int
	parent                    *model.Node
	inject                    model.Fragment
	hasInject                 bool
	wrap                      []*model.NodeType
}

// fitter places the content of a slice into a gap, as the Fitter of
// prosemirror-transform's replace.ts does. The nodes open at the slice's
// start are placeable independently: in <p("foo"), p("bar")> with the
// first paragraph open, "foo" can go into the textblock at the left of
// the gap while p("bar") becomes a paragraph of its own.
//
// frontier is the open side of the placed content (starting at from and
// moving forward as content is placed, finally reconciled with to),
// unplaced is what is left of the slice, and placed is the placed
// content, open at the start as from is and at the end as frontier is.
type fitter struct {
	from, to *model.ResolvedPos
	unplaced model.Slice
	frontier []frontierEntry
	placed   model.Fragment
}

func newFitter(from, to *model.ResolvedPos, unplaced model.Slice) (*fitter, error) {
	f := &fitter{from: from, to: to, unplaced: unplaced}
	for i := 0; i <= from.Depth; i++ {
		node := from.Node(i)
		match, err := contentMatchAt(node, from.IndexAfter(i))
		if err != nil {
			return nil, err
		}
		f.frontier = append(f.frontier, frontierEntry{node.Type, match})
	}
	for i := from.Depth; i > 0; i-- {
		f.placed = model.FragmentOf(from.Node(i).Copy(f.placed))
	}
	return f, nil
}

func (f *fitter) depth() int { return len(f.frontier) - 1 }

// fit places the slice and returns the step, or nil.
func (f *fitter) fit() (Step, error) {
	// As long as there is unplaced content, place some of it; where none
	// fits, open the slice deeper or drop a node, and try again. This is
	// the one loop of the Fitter that may not end (see ErrFitterLoop):
	// the others run over a fragment's children (placeNodes) or the
	// depths of the frontier and of the positions (close, mustMoveInline,
	// findCloseLevel), which are finite.
	limit := fitRounds(f.unplaced)
	for rounds := 0; f.unplaced.Size() != 0; rounds++ {
		if rounds == limit {
			return nil, ErrFitterLoop
		}
		fit, ok, err := f.findFittable()
		if err != nil {
			return nil, err
		}
		if ok {
			err = f.placeNodes(fit)
		} else if !f.openMore() {
			err = f.dropNode()
		}
		if err != nil {
			return nil, err
		}
	}
	// When there is inline content directly after the frontier and after
	// to, a ReplaceAroundStep must pull that content into the node after
	// the frontier: fit to the end of the textblock after to instead.
	moveInline, err := f.mustMoveInline()
	if err != nil {
		return nil, err
	}
	placedSize := f.placed.Size() - f.depth() - f.from.Depth
	closeTo := f.to
	if moveInline >= 0 {
		if closeTo, err = f.from.Doc().Resolve(moveInline); err != nil {
			return nil, err
		}
	}
	rTo, err := f.close(closeTo)
	if err != nil || rTo == nil {
		return nil, err
	}
	content, openStart, openEnd := f.placed, f.from.Depth, rTo.Depth
	for openStart > 0 && openEnd > 0 && content.ChildCount() == 1 { // drop open parents
		content = content.FirstChild().Content
		openStart--
		openEnd--
	}
	slice := model.NewSlice(content, openStart, openEnd)
	if moveInline >= 0 {
		return &ReplaceAroundStep{From: f.from.Pos, To: moveInline, GapFrom: f.to.Pos, GapTo: f.to.End(f.to.Depth),
			Slice: slice, Insert: placedSize}, nil
	}
	if slice.Size() != 0 || f.from.Pos != f.to.Pos { // no no-op steps
		return &ReplaceStep{From: f.from.Pos, To: rTo.Pos, Slice: slice}, nil
	}
	return nil, nil
}

// findFittable finds a depth on the start spine of the unplaced slice
// with content that can go somewhere on the frontier: first without
// wrapping nodes, then with them.
func (f *fitter) findFittable() (fittable, bool, error) {
	startDepth := f.unplaced.OpenStart
	cur, openEnd := f.unplaced.Content, f.unplaced.OpenEnd
	for d := 0; d < startDepth; d++ {
		node := cur.FirstChild()
		if node == nil {
			return fittable{}, false, typeError("undefined", "type")
		}
		if cur.ChildCount() > 1 {
			openEnd = 0
		}
		if node.Type.Spec.Isolating && openEnd <= d {
			startDepth = d
			break
		}
		cur = node.Content
	}
	for pass := 1; pass <= 2; pass++ {
		sliceDepth := f.unplaced.OpenStart
		if pass == 1 {
			sliceDepth = startDepth
		}
		for ; sliceDepth >= 0; sliceDepth-- {
			var fragment model.Fragment
			var parent *model.Node
			if sliceDepth > 0 {
				c, err := contentAt(f.unplaced.Content, sliceDepth-1)
				if err != nil {
					return fittable{}, false, err
				}
				if parent = c.FirstChild(); parent == nil {
					return fittable{}, false, typeError("undefined", "content")
				}
				fragment = parent.Content
			} else {
				fragment = f.unplaced.Content
			}
			first := fragment.FirstChild()
			for frontierDepth := f.depth(); frontierDepth >= 0; frontierDepth-- {
				e := f.frontier[frontierDepth]
				if e.match == nil {
					return fittable{}, false, typeError("null", "matchType")
				}
				fit := fittable{sliceDepth: sliceDepth, frontierDepth: frontierDepth, parent: parent}
				if pass == 1 {
					// The next node matches, or there is none and the
					// parents look compatible.
					if first != nil {
						if e.match.MatchType(first.Type) != nil {
							return fit, true, nil
						}
						inject, ok, err := e.match.FillBefore(model.FragmentOf(first), false, 0)
						if err != nil {
							return fittable{}, false, err
						}
						if ok {
							fit.inject, fit.hasInject = inject, true
							return fit, true, nil
						}
					} else if parent != nil && e.typ.CompatibleContent(parent.Type) {
						return fit, true, nil
					}
				} else if first != nil {
					// Wrapping nodes that make first fit here.
					if wrap, ok := e.match.FindWrapping(first.Type); ok {
						fit.wrap = wrap
						return fit, true, nil
					}
				}
				// Do not look further up when the parent would fit here.
				if parent != nil && e.match.MatchType(parent.Type) != nil {
					break
				}
			}
		}
	}
	return fittable{}, false, nil
}

// openMore opens the unplaced slice one level deeper at its start, and at
// its end too when the end can open; false when it cannot.
func (f *fitter) openMore() bool {
	content, openStart, openEnd := f.unplaced.Content, f.unplaced.OpenStart, f.unplaced.OpenEnd
	if maxOpen(content, -1) <= openStart {
		return false
	}
	if f.unplaced.Size() > 1 && maxOpen(content, 1) > openEnd {
		openEnd++
	}
	f.unplaced = model.NewSlice(content, openStart+1, openEnd)
	return true
}

// dropNode drops the first node at the slice's open start.
func (f *fitter) dropNode() error {
	content, openStart, openEnd := f.unplaced.Content, f.unplaced.OpenStart, f.unplaced.OpenEnd
	inner, err := contentAt(content, openStart)
	if err != nil {
		return err
	}
	if inner.ChildCount() <= 1 && openStart > 0 {
		openAtEnd := content.Size()-openStart <= openStart+inner.Size()
		dropped, err := dropFromFragment(content, openStart-1, 1)
		if err != nil {
			return err
		}
		if openAtEnd {
			openEnd = openStart - 1
		}
		f.unplaced = model.NewSlice(dropped, openStart-1, openEnd)
		return nil
	}
	dropped, err := dropFromFragment(content, openStart, 1)
	if err != nil {
		return err
	}
	f.unplaced = model.NewSlice(dropped, openStart, openEnd)
	return nil
}

// placeNodes moves content from the unplaced slice at fit.sliceDepth to
// the frontier node at fit.frontierDepth, closing that node when it can.
func (f *fitter) placeNodes(fit fittable) error {
	for f.depth() > fit.frontierDepth {
		if err := f.closeFrontierNode(); err != nil {
			return err
		}
	}
	for _, t := range fit.wrap {
		if err := f.openFrontierNode(t, nil, model.Fragment{}); err != nil {
			return err
		}
	}
	slice := f.unplaced
	fragment := slice.Content
	if fit.parent != nil {
		fragment = fit.parent.Content
	}
	openStart := slice.OpenStart - fit.sliceDepth
	taken := 0
	var add []*model.Node
	e := f.frontier[fit.frontierDepth]
	match, typ := e.match, e.typ
	if fit.hasInject {
		add = append(add, fit.inject.Children()...)
		match = match.MatchFragment(fit.inject, 0, fit.inject.ChildCount())
	}
	// The number of open nodes at the end of fragment: 0 when the parent
	// is open but nothing more, negative when nothing is open.
	openEndCount := (fragment.Size() + fit.sliceDepth) - (slice.Content.Size() - slice.OpenEnd)
	// Fit as many children of fragment as possible.
	for taken < fragment.ChildCount() {
		if match == nil {
			return typeError("null", "matchType")
		}
		next := fragment.Child(taken)
		matches := match.MatchType(next.Type)
		if matches == nil {
			break
		}
		taken++
		if taken > 1 || openStart == 0 || next.Content.Size() != 0 { // drop empty open nodes
			match = matches
			start, end := 0, -1
			if taken == 1 {
				start = openStart
			}
			if taken == fragment.ChildCount() {
				end = openEndCount
			}
			closed, err := closeNodeStart(next.Mark(typ.AllowedMarks(next.Marks)), start, end)
			if err != nil {
				return err
			}
			add = append(add, closed)
		}
	}
	toEnd := taken == fragment.ChildCount()
	if !toEnd {
		openEndCount = -1
	}
	placed, err := addToFragment(f.placed, fit.frontierDepth, model.NewFragment(add))
	if err != nil {
		return err
	}
	f.placed = placed
	f.frontier[fit.frontierDepth].match = match

	// When the parent types match, all of the node was moved and it is
	// not open, close this frontier node right away.
	if toEnd && openEndCount < 0 && fit.parent != nil && fit.parent.Type == f.frontier[f.depth()].typ && len(f.frontier) > 1 {
		if err := f.closeFrontierNode(); err != nil {
			return err
		}
	}
	// New frontier nodes for the nodes open at the end.
	var cur *model.Node
	if len(add) > 0 {
		cur = add[len(add)-1]
	}
	for i := 0; cur != nil && i < openEndCount; i++ {
		m, err := contentMatchAt(cur, cur.ChildCount())
		if err != nil {
			return err
		}
		f.frontier = append(f.frontier, frontierEntry{cur.Type, m})
		cur = cur.LastChild()
	}
	// Drop what was placed from the unplaced slice: the whole node it came
	// from when it got to its end.
	switch {
	case !toEnd:
		dropped, err := dropFromFragment(slice.Content, fit.sliceDepth, taken)
		if err != nil {
			return err
		}
		f.unplaced = model.NewSlice(dropped, fit.sliceDepth, slice.OpenEnd)
	case fit.sliceDepth == 0:
		f.unplaced = model.EmptySlice
	default:
		dropped, err := dropFromFragment(slice.Content, fit.sliceDepth-1, 1)
		if err != nil {
			return err
		}
		openEnd := fit.sliceDepth - 1
		if openEndCount < 0 {
			openEnd = slice.OpenEnd
		}
		f.unplaced = model.NewSlice(dropped, fit.sliceDepth-1, openEnd)
	}
	return nil
}

// mustMoveInline returns the end of the textblock after to when the
// inline content after to must be moved into the frontier's textblock,
// else -1.
func (f *fitter) mustMoveInline() (int, error) {
	if !f.to.Parent().IsTextblock() {
		return -1, nil
	}
	top := f.frontier[f.depth()]
	if !top.typ.IsTextblock() || top.match == nil {
		return -1, nil
	}
	if _, ok, err := contentAfterFits(f.to, f.to.Depth, top.typ, top.match, false); err != nil || !ok {
		return -1, err
	}
	if f.to.Depth == f.depth() {
		level, err := f.findCloseLevel(f.to)
		if err != nil {
			return -1, err
		}
		if level != nil && level.depth == f.depth() {
			return -1, nil
		}
	}
	depth := f.to.Depth
	after, err := f.to.After(depth)
	if err != nil {
		return -1, err
	}
	for depth > 1 {
		depth--
		if after != f.to.End(depth) {
			break
		}
		after++
	}
	return after, nil
}

// closeLevel is where the frontier can be closed to meet to: the depth,
// the nodes to add there and the position to close to.
type closeLevel struct {
	depth int
	fit   model.Fragment
	move  *model.ResolvedPos
}

func (f *fitter) findCloseLevel(to *model.ResolvedPos) (*closeLevel, error) {
scan:
	for i := min(f.depth(), to.Depth); i >= 0; i-- {
		e := f.frontier[i]
		dropInner := i < to.Depth && to.End(i+1) == to.Pos+(to.Depth-(i+1))
		fit, ok, err := contentAfterFits(to, i, e.typ, e.match, dropInner)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for d := i - 1; d >= 0; d-- {
			o := f.frontier[d]
			matches, ok, err := contentAfterFits(to, d, o.typ, o.match, true)
			if err != nil {
				return nil, err
			}
			if !ok || matches.ChildCount() > 0 {
				continue scan
			}
		}
		move := to
		if dropInner {
			after, err := to.After(i + 1)
			if err != nil {
				return nil, err
			}
			if move, err = to.Doc().Resolve(after); err != nil {
				return nil, err
			}
		}
		return &closeLevel{depth: i, fit: fit, move: move}, nil
	}
	return nil, nil
}

// close closes the frontier to meet to, returning the position closed to
// (nil when it cannot).
func (f *fitter) close(to *model.ResolvedPos) (*model.ResolvedPos, error) {
	cl, err := f.findCloseLevel(to)
	if err != nil || cl == nil {
		return nil, err
	}
	for f.depth() > cl.depth {
		if err := f.closeFrontierNode(); err != nil {
			return nil, err
		}
	}
	if cl.fit.ChildCount() > 0 {
		if f.placed, err = addToFragment(f.placed, cl.depth, cl.fit); err != nil {
			return nil, err
		}
	}
	to = cl.move
	for d := cl.depth + 1; d <= to.Depth; d++ {
		node := to.Node(d)
		add, _, err := node.Type.ContentMatch.FillBefore(node.Content, true, to.Index(d))
		if err != nil {
			return nil, err
		}
		if err := f.openFrontierNode(node.Type, node.Attrs, add); err != nil {
			return nil, err
		}
	}
	return to, nil
}

func (f *fitter) openFrontierNode(typ *model.NodeType, attrs model.Attrs, content model.Fragment) error {
	top := &f.frontier[f.depth()]
	if top.match == nil {
		return typeError("null", "matchType")
	}
	top.match = top.match.MatchType(typ)
	node, err := typ.Create(attrs, content, nil)
	if err != nil {
		return err
	}
	if f.placed, err = addToFragment(f.placed, f.depth(), model.FragmentOf(node)); err != nil {
		return err
	}
	f.frontier = append(f.frontier, frontierEntry{typ, typ.ContentMatch})
	return nil
}

func (f *fitter) closeFrontierNode() error {
	open := f.frontier[f.depth()]
	f.frontier = f.frontier[:f.depth()]
	if open.match == nil {
		return typeError("null", "fillBefore")
	}
	add, ok, err := open.match.FillBefore(model.Fragment{}, true, 0)
	if err != nil {
		return err
	}
	if !ok {
		return typeError("null", "childCount")
	}
	if add.ChildCount() > 0 {
		if f.placed, err = addToFragment(f.placed, len(f.frontier), add); err != nil {
			return err
		}
	}
	return nil
}

// dropFromFragment drops count nodes from the start of the content at
// depth in fragment's start spine.
func dropFromFragment(fragment model.Fragment, depth, count int) (model.Fragment, error) {
	if depth == 0 {
		if count >= fragment.ChildCount() {
			return model.Fragment{}, nil
		}
		return fragment.CutByIndex(count, fragment.ChildCount()), nil
	}
	first := fragment.FirstChild()
	if first == nil {
		return model.Fragment{}, typeError("null", "content")
	}
	inner, err := dropFromFragment(first.Content, depth-1, count)
	if err != nil {
		return model.Fragment{}, err
	}
	return fragment.ReplaceChild(0, first.Copy(inner)), nil
}

// addToFragment adds content at the end of the content at depth in
// fragment's end spine.
func addToFragment(fragment model.Fragment, depth int, content model.Fragment) (model.Fragment, error) {
	if depth == 0 {
		return fragment.Append(content), nil
	}
	last := fragment.LastChild()
	if last == nil {
		return model.Fragment{}, typeError("null", "content")
	}
	inner, err := addToFragment(last.Content, depth-1, content)
	if err != nil {
		return model.Fragment{}, err
	}
	return fragment.ReplaceChild(fragment.ChildCount()-1, last.Copy(inner)), nil
}

// contentAt returns the content at depth in fragment's start spine.
func contentAt(fragment model.Fragment, depth int) (model.Fragment, error) {
	for range depth {
		first := fragment.FirstChild()
		if first == nil {
			return model.Fragment{}, typeError("null", "content")
		}
		fragment = first.Content
	}
	return fragment, nil
}

// closeNodeStart closes the start of node, open openStart levels deep,
// by filling in what its content needs before (and, with openEnd <= 0,
// after) it.
func closeNodeStart(node *model.Node, openStart, openEnd int) (*model.Node, error) {
	if openStart <= 0 {
		return node, nil
	}
	frag := node.Content
	if openStart > 1 {
		first := frag.FirstChild()
		if first == nil {
			return nil, typeError("null", "content")
		}
		end := 0
		if frag.ChildCount() == 1 {
			end = openEnd - 1
		}
		closed, err := closeNodeStart(first, openStart-1, end)
		if err != nil {
			return nil, err
		}
		frag = frag.ReplaceChild(0, closed)
	}
	before, ok, err := node.Type.ContentMatch.FillBefore(frag, false, 0)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, typeError("null", "append")
	}
	frag = before.Append(frag)
	if openEnd <= 0 {
		match := node.Type.ContentMatch.MatchFragment(frag, 0, frag.ChildCount())
		if match == nil {
			return nil, typeError("null", "fillBefore")
		}
		after, ok, err := match.FillBefore(model.Fragment{}, true, 0)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, typeError("null", "size")
		}
		frag = frag.Append(after)
	}
	return node.Copy(frag), nil
}

// contentAfterFits returns the nodes to insert at the frontier node
// (typ, match) so that the content of to's ancestor at depth after to (or
// after that ancestor's child at to, with open) fits after it.
func contentAfterFits(to *model.ResolvedPos, depth int, typ *model.NodeType, match *model.ContentMatch, open bool) (model.Fragment, bool, error) {
	if match == nil {
		return model.Fragment{}, false, typeError("null", "fillBefore")
	}
	node := to.Node(depth)
	index := to.Index(depth)
	if open {
		index = to.IndexAfter(depth)
	}
	if index == node.ChildCount() && !typ.CompatibleContent(node.Type) {
		return model.Fragment{}, false, nil
	}
	fit, ok, err := match.FillBefore(node.Content, true, index)
	if err != nil || !ok {
		return model.Fragment{}, false, err
	}
	if invalidMarks(typ, node.Content, index) {
		return model.Fragment{}, false, nil
	}
	return fit, true, nil
}

func invalidMarks(typ *model.NodeType, fragment model.Fragment, start int) bool {
	for i := start; i < fragment.ChildCount(); i++ {
		if !typ.AllowsMarks(fragment.Child(i).Marks) {
			return true
		}
	}
	return false
}

func definesContent(t *model.NodeType) bool {
	return t.Spec.Defining || (t.Spec.DefiningForContent != nil && *t.Spec.DefiningForContent)
}

// maxOpen returns how deep fragment can be opened on one side (side < 0
// for the start).
func maxOpen(frag model.Fragment, side int) int {
	for count := 0; ; count++ {
		ch := frag.LastChild()
		if side < 0 {
			ch = frag.FirstChild()
		}
		if ch == nil || ch.IsAtom() {
			return count
		}
		frag = ch.Content
	}
}

func replaceRange(tr *Transform, from, to int, slice model.Slice) error {
	if slice.Size() == 0 {
		return tr.DeleteRange(from, to)
	}
	rFrom, err := tr.Doc.Resolve(from)
	if err != nil {
		return err
	}
	rTo, err := tr.Doc.Resolve(to)
	if err != nil {
		return err
	}
	trivial, err := fitsTrivially(rFrom, rTo, slice)
	if err != nil {
		return err
	}
	if trivial {
		return tr.Step(&ReplaceStep{From: from, To: to, Slice: slice})
	}

	targetDepths := coveredDepths(rFrom, rTo)
	// The whole document cannot be replaced: drop depth 0.
	if n := len(targetDepths); n > 0 && targetDepths[n-1] == 0 {
		targetDepths = targetDepths[:n-1]
	}
	// A negative depth -D stands for replacing from before the node at
	// depth D to to, rather than for expanding over the whole node.
	preferredTarget := -(rFrom.Depth + 1)
	targetDepths = slices.Insert(targetDepths, 0, preferredTarget)
	// Pick a preferred target depth among the covered ones that are not
	// outside a defining node, and add negative depths for those that
	// have from at their start and do not cross a defining node.
	for d, pos := rFrom.Depth, rFrom.Pos-1; d > 0; d, pos = d-1, pos-1 {
		spec := rFrom.Node(d).Type.Spec
		if spec.Defining || (spec.DefiningAsContext != nil && *spec.DefiningAsContext) || spec.Isolating {
			break
		}
		if slices.Contains(targetDepths, d) {
			preferredTarget = d
		} else if before, _ := rFrom.Before(d); before == pos {
			targetDepths = slices.Insert(targetDepths, 1, -d)
		}
	}
	// Try each open depth of the slice at each target depth, starting
	// with the preferred ones.
	preferredTargetIndex := slices.Index(targetDepths, preferredTarget)

	var leftNodes []*model.Node
	preferredDepth := slice.OpenStart
	for content, i := slice.Content, 0; ; i++ {
		node := content.FirstChild()
		leftNodes = append(leftNodes, node)
		if i == slice.OpenStart {
			break
		}
		if node == nil {
			return typeError("undefined", "content")
		}
		content = node.Content
	}
	// Back preferredDepth up over defining textblocks directly above it,
	// possibly skipping a non-defining textblock.
	for d := preferredDepth - 1; d >= 0; d-- {
		leftNode := leftNodes[d]
		def := definesContent(leftNode.Type)
		if def && !leftNode.SameMarkup(rFrom.Node(abs(preferredTarget)-1)) {
			preferredDepth = d
		} else if def || !leftNode.Type.IsTextblock() {
			break
		}
	}

	for j := slice.OpenStart; j >= 0; j-- {
		openDepth := (j + preferredDepth + 1) % (slice.OpenStart + 1)
		insert := leftNodes[openDepth]
		if insert == nil {
			continue
		}
		for i := range targetDepths {
			targetDepth := targetDepths[(i+preferredTargetIndex)%len(targetDepths)]
			expand := true
			if targetDepth < 0 {
				expand = false
				targetDepth = -targetDepth
			}
			parent, index := rFrom.Node(targetDepth-1), rFrom.Index(targetDepth-1)
			ok, err := canReplaceWith(parent, index, index, insert.Type, insert.Marks)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			start, _ := rFrom.Before(targetDepth)
			end := to
			if expand {
				end, _ = rTo.After(targetDepth)
			}
			closed, err := closeFragment(slice.Content, 0, slice.OpenStart, openDepth, nil)
			if err != nil {
				return err
			}
			return tr.Replace(start, end, model.NewSlice(closed, openDepth, slice.OpenEnd))
		}
	}

	startSteps := len(tr.Steps)
	for i := len(targetDepths) - 1; i >= 0; i-- {
		if err := tr.Replace(from, to, slice); err != nil {
			return err
		}
		if len(tr.Steps) > startSteps {
			break
		}
		depth := targetDepths[i]
		if depth < 0 {
			continue
		}
		from, _ = rFrom.Before(depth)
		to, _ = rTo.After(depth)
	}
	return nil
}

func closeFragment(fragment model.Fragment, depth, oldOpen, newOpen int, parent *model.Node) (model.Fragment, error) {
	if depth < oldOpen {
		first := fragment.FirstChild()
		if first == nil {
			return model.Fragment{}, typeError("undefined", "content")
		}
		inner, err := closeFragment(first.Content, depth+1, oldOpen, newOpen, first)
		if err != nil {
			return model.Fragment{}, err
		}
		fragment = fragment.ReplaceChild(0, first.Copy(inner))
	}
	if depth > newOpen {
		match, err := contentMatchAt(parent, 0)
		if err != nil {
			return model.Fragment{}, err
		}
		before, ok, err := match.FillBefore(fragment, false, 0)
		if err != nil {
			return model.Fragment{}, err
		}
		if !ok {
			return model.Fragment{}, typeError("null", "append")
		}
		start := before.Append(fragment)
		m := match.MatchFragment(start, 0, start.ChildCount())
		if m == nil {
			return model.Fragment{}, typeError("null", "fillBefore")
		}
		after, ok, err := m.FillBefore(model.Fragment{}, true, 0)
		if err != nil {
			return model.Fragment{}, err
		}
		if !ok {
			return model.Fragment{}, typeError("null", "size")
		}
		fragment = start.Append(after)
	}
	return fragment, nil
}

func replaceRangeWith(tr *Transform, from, to int, node *model.Node) error {
	if !node.IsInline() && from == to {
		rFrom, err := tr.Doc.Resolve(from)
		if err != nil {
			return err
		}
		if rFrom.Parent().Content.Size() != 0 {
			point, ok, err := insertPoint(tr.Doc, from, node.Type)
			if err != nil {
				return err
			}
			if ok {
				from, to = point, point
			}
		}
	}
	return tr.ReplaceRange(from, to, model.NewSlice(model.FragmentOf(node), 0, 0))
}

func deleteRange(tr *Transform, from, to int) error {
	rFrom, err := tr.Doc.Resolve(from)
	if err != nil {
		return err
	}
	rTo, err := tr.Doc.Resolve(to)
	if err != nil {
		return err
	}
	// A range from the start of one textblock to the start of another
	// moves out of the start of both.
	if rFrom.Parent().IsTextblock() && rTo.Parent().IsTextblock() && rFrom.Start(rFrom.Depth) != rTo.Start(rTo.Depth) &&
		rFrom.ParentOffset == 0 && rTo.ParentOffset == 0 {
		shared, isolated := rFrom.SharedDepth(to), false
		for d := rFrom.Depth; d > shared; d-- {
			if rFrom.Node(d).Type.Spec.Isolating {
				isolated = true
			}
		}
		for d := rTo.Depth; d > shared; d-- {
			if rTo.Node(d).Type.Spec.Isolating {
				isolated = true
			}
		}
		if !isolated {
			for d := rFrom.Depth; d > 0 && from == rFrom.Start(d); d-- {
				from, _ = rFrom.Before(d)
			}
			for d := rTo.Depth; d > 0 && to == rTo.Start(d); d-- {
				to, _ = rTo.Before(d)
			}
			if rFrom, err = tr.Doc.Resolve(from); err != nil {
				return err
			}
			if rTo, err = tr.Doc.Resolve(to); err != nil {
				return err
			}
		}
	}

	covered := coveredDepths(rFrom, rTo)
	for i, depth := range covered {
		last := i == len(covered)-1
		if (last && depth == 0) || rFrom.Node(depth).Type.ContentMatch.ValidEnd {
			return tr.Delete(rFrom.Start(depth), rTo.End(depth))
		}
		if depth > 0 {
			ok := last
			if !ok {
				if ok, err = canReplace(rFrom.Node(depth-1), rFrom.Index(depth-1), rTo.IndexAfter(depth-1), model.Fragment{}); err != nil {
					return err
				}
			}
			if ok {
				before, _ := rFrom.Before(depth)
				after, _ := rTo.After(depth)
				return tr.Delete(before, after)
			}
		}
	}
	for d := 1; d <= rFrom.Depth && d <= rTo.Depth; d++ {
		if from-rFrom.Start(d) == rFrom.Depth-d && to > rFrom.End(d) && rTo.End(d)-to != rTo.Depth-d &&
			rFrom.Start(d-1) == rTo.Start(d-1) {
			ok, err := canReplace(rFrom.Node(d-1), rFrom.Index(d-1), rTo.Index(d-1), model.Fragment{})
			if err != nil {
				return err
			}
			if ok {
				before, _ := rFrom.Before(d)
				return tr.Delete(before, to)
			}
		}
	}
	return tr.Delete(from, to)
}

// coveredDepths returns the depths, deepest first, at which the range
// from..to spans the whole content of the node there.
func coveredDepths(rFrom, rTo *model.ResolvedPos) []int {
	var result []int
	for d := min(rFrom.Depth, rTo.Depth); d >= 0; d-- {
		start := rFrom.Start(d)
		if start < rFrom.Pos-(rFrom.Depth-d) || rTo.End(d) > rTo.Pos+(rTo.Depth-d) ||
			rFrom.Node(d).Type.Spec.Isolating || rTo.Node(d).Type.Spec.Isolating {
			break
		}
		if start == rTo.Start(d) ||
			(d == rFrom.Depth && d == rTo.Depth && rFrom.Parent().InlineContent() && rTo.Parent().InlineContent() &&
				d > 0 && rTo.Start(d-1) == start-1) {
			result = append(result, d)
		}
	}
	return result
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
