package edit

import (
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// make makes the edit e on tr, its target found at f in tr.Doc.
func (p *Plan) make(tr *transform.Transform, e Edit, f found, b built) error {
	// The block an edit that needs one works on: a text target's
	// textblock.
	from, to := f.from, f.to
	if f.text {
		from, to = f.blockFrom, f.blockTo
	}
	switch e.Op {
	case "insert":
		return insert(tr, e.At, f, from, to, b)
	case "replaceText":
		return replaceText(tr, f.from, f.to, b.content)
	case "addMark":
		return tr.AddMark(f.from, f.to, b.mark)
	case "removeMark":
		if b.markType != nil {
			return tr.RemoveMarkType(f.from, f.to, b.markType)
		}
		return tr.RemoveMark(f.from, f.to, b.mark)
	case "deleteBlock":
		return tr.DeleteRange(from, to)
	case "setBlockType":
		return setBlockType(tr, from, to, b)
	case "wrapInList":
		return wrapInList(tr, from, to, b)
	case "liftOutOfList":
		return liftOutOfList(tr, from, to)
	}
	return fmt.Errorf("unknown op %q", e.Op)
}

// insert inserts b's content at of the block [from, to) (or, for
// "replace" of a text target, in place of the text).
func insert(tr *transform.Transform, at string, f found, from, to int, b built) error {
	c := b.content
	switch at {
	case "before":
		return tr.Insert(from, c)
	case "after":
		return tr.Insert(to, c)
	case "replace":
		if f.text {
			return tr.ReplaceWith(f.from, f.to, inlineOf(c))
		}
		return tr.ReplaceWith(from, to, c)
	}
	n := tr.Doc.NodeAt(from)
	if n == nil || n.IsLeaf() {
		return errors.New("the target has no content to insert into")
	}
	pos := from + 1
	if at == "end" {
		pos = to - 1
	}
	if n.IsTextblock() {
		// Markdown of one paragraph goes in as its inline content.
		return tr.Insert(pos, inlineOf(c))
	}
	return tr.Insert(pos, c)
}

// inlineOf returns the inline content of c when c is one textblock, else
// c.
func inlineOf(c model.Fragment) model.Fragment {
	if c.ChildCount() == 1 && c.FirstChild().IsTextblock() {
		return c.FirstChild().Content
	}
	return c
}

// replaceText replaces [from, to) with text, which takes the marks of the
// text it replaces, as Transaction.insertText gives them.
func replaceText(tr *transform.Transform, from, to int, text model.Fragment) error {
	if text.Size() == 0 {
		return tr.Delete(from, to)
	}
	rf, err := tr.Doc.Resolve(from)
	if err != nil {
		return err
	}
	rt, err := tr.Doc.Resolve(to)
	if err != nil {
		return err
	}
	marks, _ := rf.MarksAcross(rt)
	return tr.ReplaceWith(from, to, model.FragmentOf(text.FirstChild().Mark(marks)))
}

// setBlockType makes the textblocks in [from, to) of type b.typ.
func setBlockType(tr *transform.Transform, from, to int, b built) error {
	before := len(tr.Steps)
	if err := tr.SetBlockType(from, to, b.typ, b.attrs); err != nil {
		return err
	}
	if len(tr.Steps) == before && !hasType(tr.Doc, from, to, b.typ) {
		return fmt.Errorf("no textblock there can be a %s", b.typ.Name)
	}
	return nil
}

// hasType reports whether a textblock in [from, to) of doc is of type t.
func hasType(doc *model.Node, from, to int, t *model.NodeType) bool {
	has := false
	doc.NodesBetween(from, to, func(n *model.Node, _ int, _ *model.Node, _ int) bool {
		has = has || n.IsTextblock() && n.Type == t
		return !has
	}, 0)
	return has
}

// wrapInList wraps the block [from, to) in a list of type b.typ, as
// prosemirror-schema-list's wrapInList does outside a list.
func wrapInList(tr *transform.Transform, from, to int, b built) error {
	r, err := innerRange(tr.Doc, from, to)
	if err != nil {
		return err
	}
	wrappers, ok := transform.FindWrapping(r, b.typ, b.attrs, nil)
	if !ok {
		return fmt.Errorf("the block cannot be wrapped in a %s", b.typ.Name)
	}
	return tr.Wrap(r, wrappers)
}

// liftOutOfList lifts the block [from, to) out of the list it is in.
func liftOutOfList(tr *transform.Transform, from, to int) error {
	r, err := innerRange(tr.Doc, from, to)
	if err != nil {
		return err
	}
	inList := false
	for d := r.Depth; d > 0; d-- {
		inList = inList || r.From.Node(d).Type.Name == "list_item"
	}
	if !inList {
		return errors.New("the block is not in a list")
	}
	target, ok := transform.LiftTarget(r)
	if !ok {
		return errors.New("the block cannot be lifted out of its list")
	}
	return tr.Lift(r, target)
}

// innerRange returns the range of the block node [from, to) in its
// parent.
func innerRange(doc *model.Node, from, to int) (*model.NodeRange, error) {
	n := doc.NodeAt(from)
	if n == nil || n.IsLeaf() {
		return nil, errors.New("the target is not a block with content")
	}
	rf, err := doc.Resolve(from + 1)
	if err != nil {
		return nil, err
	}
	rt, err := doc.Resolve(to - 1)
	if err != nil {
		return nil, err
	}
	r := rf.BlockRange(rt, nil)
	if r == nil {
		return nil, errors.New("the target is not a block")
	}
	return r, nil
}
