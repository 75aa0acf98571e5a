package transform

import (
	"errors"
	"strconv"

	"github.com/pmauthority/pmauthority/model"
)

// TransformError is the error Transform.Step returns when a step fails to
// apply, as prosemirror-transform throws a TransformError with the failed
// result's message. Errors a step's Apply reports that JavaScript throws
// itself (a RangeError for a position out of range) are returned as they
// are.
type TransformError struct {
	// Err is the step's failure, with the JavaScript message.
	Err error
}

// Error returns the step's message.
func (e *TransformError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *TransformError) Unwrap() error { return e.Err }

// Transform builds up and tracks a list of steps that change a document.
// It is prosemirror-transform's Transform: its methods add the steps that
// make an edit (replace, split, wrap, add a mark …) and update Doc.
//
// A method that fails returns an error with the message JavaScript throws
// there. As in JavaScript, steps it added before failing stay in the
// transform: callers that want all or nothing start over from Before.
type Transform struct {
	// Doc is the current document: the result of applying the steps.
	Doc *model.Node
	// Steps are the steps in the transform.
	Steps []Step
	// Docs are the documents before each of the steps.
	Docs []*model.Node
	// Mapping holds the step maps of the steps (created with the first
	// step when nil, so that a Transform with only Doc set works).
	Mapping *Mapping
}

// New returns a transform that starts with doc.
func New(doc *model.Node) *Transform {
	return &Transform{Doc: doc, Mapping: &Mapping{}}
}

// Before returns the starting document.
func (tr *Transform) Before() *model.Node {
	if len(tr.Docs) > 0 {
		return tr.Docs[0]
	}
	return tr.Doc
}

// DocChanged reports whether the transform has steps.
func (tr *Transform) DocChanged() bool { return len(tr.Steps) > 0 }

// Step applies step and adds it to the transform. A step that fails to
// apply gives a *TransformError.
func (tr *Transform) Step(step Step) error {
	if err := tr.MaybeStep(step); err != nil {
		var re *model.ReplaceError
		if errors.As(err, &re) || isStepFailure(err) {
			return &TransformError{Err: err}
		}
		return err
	}
	return nil
}

// MaybeStep applies step and adds it to the transform when it applies;
// otherwise it returns the step's error and leaves the transform alone.
func (tr *Transform) MaybeStep(step Step) error {
	doc, err := step.Apply(tr.Doc)
	if err != nil {
		return err
	}
	tr.addStep(step, doc)
	return nil
}

// isStepFailure reports whether err is one of the failed results (not
// exceptions) of the built-in steps.
func isStepFailure(err error) bool {
	switch err {
	case errStructureReplace, errStructureGapReplace, errGapNotFlat, errGapMisfit, errNoNodeForMark, errNoNodeForAttr:
		return true
	}
	return false
}

// ChangedRange returns a range, in positions of Doc, that covers all
// content changed by the steps, and false when no step replaced content
// (mark and attribute steps are not counted).
func (tr *Transform) ChangedRange() (from, to int, ok bool) {
	from, to = 1e9, -1e9
	if tr.Mapping == nil {
		return 0, 0, false
	}
	for i, m := range tr.Mapping.Maps() {
		if i > 0 {
			from = m.Map(from, 1)
			to = m.Map(to, -1)
		}
		m.ForEach(func(_, _, newStart, newEnd int) {
			from = min(from, newStart)
			to = max(to, newEnd)
		})
	}
	if from == 1e9 {
		return 0, 0, false
	}
	return from, to, true
}

func (tr *Transform) addStep(step Step, doc *model.Node) {
	if tr.Mapping == nil {
		tr.Mapping = &Mapping{}
	}
	tr.Docs = append(tr.Docs, tr.Doc)
	tr.Steps = append(tr.Steps, step)
	tr.Mapping.AppendMap(step.GetMap(), -1)
	tr.Doc = doc
}

// mappingFrom returns the mapping through the steps from index from on.
func (tr *Transform) mappingFrom(from int) *Mapping {
	if tr.Mapping == nil {
		return &Mapping{}
	}
	return tr.Mapping.Slice(from, len(tr.Steps))
}

// Replace replaces the part of the document between from and to with
// slice, fitting the slice in (ReplaceStepFor) and adding a step when
// there is something to change.
func (tr *Transform) Replace(from, to int, slice model.Slice) error {
	step, err := ReplaceStepFor(tr.Doc, from, to, slice)
	if err != nil || step == nil {
		return err
	}
	return tr.Step(step)
}

// ReplaceWith replaces the range with content.
func (tr *Transform) ReplaceWith(from, to int, content model.Fragment) error {
	return tr.Replace(from, to, model.NewSlice(content, 0, 0))
}

// Delete deletes the content between from and to.
func (tr *Transform) Delete(from, to int) error {
	return tr.Replace(from, to, model.EmptySlice)
}

// Insert inserts content at pos.
func (tr *Transform) Insert(pos int, content model.Fragment) error {
	return tr.ReplaceWith(pos, pos, content)
}

// ReplaceRange replaces a range of the document with slice, using from,
// to and the slice's OpenStart as hints rather than fixed points: it may
// grow the replaced range or close open nodes of the slice to get a fit
// that is closer to what a user expects (the method for a paste).
func (tr *Transform) ReplaceRange(from, to int, slice model.Slice) error {
	return replaceRange(tr, from, to, slice)
}

// ReplaceRangeWith replaces the range with node, using from and to as
// hints: an empty range at the start or end of a parent that does not
// allow node may move out to a parent that does, and a range covering a
// whole parent may replace it.
func (tr *Transform) ReplaceRangeWith(from, to int, node *model.Node) error {
	return replaceRangeWith(tr, from, to, node)
}

// DeleteRange deletes the range, growing it over fully covered parent
// nodes until a valid replace is found.
func (tr *Transform) DeleteRange(from, to int) error {
	return deleteRange(tr, from, to)
}

// Lift splits the content of r off its parent, where there is sibling
// content before or after it, and moves it up the tree to depth target
// (see LiftTarget).
func (tr *Transform) Lift(r *model.NodeRange, target int) error {
	return lift(tr, r, target)
}

// Join joins the blocks around pos; with a depth above 1, their last and
// first descendants too, down to that depth. Depth 1 is the usual choice.
func (tr *Transform) Join(pos, depth int) error {
	return join(tr, pos, depth)
}

// Wrap wraps the content of r in wrappers, outermost first (see
// FindWrapping, which finds wrappers that are valid here).
func (tr *Transform) Wrap(r *model.NodeRange, wrappers []Wrapper) error {
	return wrap(tr, r, wrappers)
}

// SetBlockType sets the type of all textblocks (partly) between from and
// to to typ, with attrs (nil for the defaults).
func (tr *Transform) SetBlockType(from, to int, typ *model.NodeType, attrs model.Attrs) error {
	return setBlockType(tr, from, to, typ, func(*model.Node) model.Attrs { return attrs })
}

// SetBlockTypeFunc is SetBlockType with the attributes of each block
// computed from the block being changed (a nil attrs gives the defaults).
func (tr *Transform) SetBlockTypeFunc(from, to int, typ *model.NodeType, attrs func(old *model.Node) model.Attrs) error {
	if attrs == nil {
		attrs = func(*model.Node) model.Attrs { return nil }
	}
	return setBlockType(tr, from, to, typ, attrs)
}

// SetNodeMarkup changes the type, attributes and marks of the node at pos.
// A nil typ keeps the node's type; nil attrs are the defaults; nil marks
// keep the node's marks (a non-nil empty slice removes them).
func (tr *Transform) SetNodeMarkup(pos int, typ *model.NodeType, attrs model.Attrs, marks []*model.Mark) error {
	return setNodeMarkup(tr, pos, typ, attrs, marks)
}

// SetNodeAttribute sets the attribute attr of the node at pos to value
// (a JSON value, see model.Attrs).
func (tr *Transform) SetNodeAttribute(pos int, attr string, value any) error {
	return tr.Step(&AttrStep{Pos: pos, Attr: attr, Value: value})
}

// SetDocAttribute sets the attribute attr of the document to value.
func (tr *Transform) SetDocAttribute(attr string, value any) error {
	return tr.Step(&DocAttrStep{Attr: attr, Value: value})
}

// AddNodeMark adds mark to the node at pos.
func (tr *Transform) AddNodeMark(pos int, mark *model.Mark) error {
	return tr.Step(&AddNodeMarkStep{Pos: pos, Mark: mark})
}

// RemoveNodeMark removes mark from the node at pos, when the node has it.
func (tr *Transform) RemoveNodeMark(pos int, mark *model.Mark) error {
	node, err := nodeAtPosition(tr.Doc, pos)
	if err != nil {
		return err
	}
	if !mark.IsInSet(node.Marks) {
		return nil
	}
	return tr.Step(&RemoveNodeMarkStep{Pos: pos, Mark: mark})
}

// RemoveNodeMarkType removes the marks of type t from the node at pos.
func (tr *Transform) RemoveNodeMarkType(pos int, t *model.MarkType) error {
	node, err := nodeAtPosition(tr.Doc, pos)
	if err != nil {
		return err
	}
	var steps []Step
	for set := node.Marks; ; {
		found := t.IsInSet(set)
		if found == nil {
			break
		}
		steps = append(steps, &RemoveNodeMarkStep{Pos: pos, Mark: found})
		set = found.RemoveFromSet(set)
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if err := tr.Step(steps[i]); err != nil {
			return err
		}
	}
	return nil
}

// nodeAtPosition is the node at pos, with the errors removeNodeMark
// throws when there is none.
func nodeAtPosition(doc *model.Node, pos int) (*model.Node, error) {
	node, err := nodeAt(doc, pos)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, errors.New("No node at position " + strconv.Itoa(pos))
	}
	return node, nil
}

// Split splits the node at pos and, with a depth above 1, that many
// levels of its ancestors. The parts split off get the type of the node
// they were split from, unless typesAfter (outermost first, one per
// level; an entry with a nil Type keeps the type) says otherwise.
func (tr *Transform) Split(pos, depth int, typesAfter []Wrapper) error {
	return split(tr, pos, depth, typesAfter)
}

// AddMark adds mark to the inline content between from and to.
func (tr *Transform) AddMark(from, to int, mark *model.Mark) error {
	return addMark(tr, from, to, mark)
}

// RemoveMark removes mark from the inline content between from and to.
func (tr *Transform) RemoveMark(from, to int, mark *model.Mark) error {
	return removeMark(tr, from, to, markMatcher{mark: mark})
}

// RemoveMarkType removes the marks of type t from the inline content
// between from and to.
func (tr *Transform) RemoveMarkType(from, to int, t *model.MarkType) error {
	return removeMark(tr, from, to, markMatcher{typ: t})
}

// RemoveAllMarks removes all marks from the inline content between from
// and to.
func (tr *Transform) RemoveAllMarks(from, to int) error {
	return removeMark(tr, from, to, markMatcher{})
}

// ClearIncompatible removes the marks and nodes in the content of the
// node at pos that parentType does not allow, starting the content match
// at match (nil for parentType's own).
func (tr *Transform) ClearIncompatible(pos int, parentType *model.NodeType, match *model.ContentMatch) error {
	return clearIncompatible(tr, pos, parentType, match, true)
}

// Wrapper is a node type with attributes: an element of the wrappers of
// Transform.Wrap and FindWrapping, and of the typesAfter of Split and
// CanSplit (where a nil Type is JavaScript's null entry). Nil Attrs are
// the type's defaults.
type Wrapper struct {
	// Type is the node type.
	Type *model.NodeType
	// Attrs are the node's attributes.
	Attrs model.Attrs
}
