package transform

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

var errNoNodeForMark = errors.New("No node at mark step's position")

// mapFragment returns fragment with f applied to every inline node in it,
// at any depth; parent is the node holding fragment, passed on to f.
func mapFragment(fragment model.Fragment, f func(child, parent *model.Node) *model.Node, parent *model.Node) model.Fragment {
	n := fragment.ChildCount()
	if n == 0 {
		return fragment
	}
	mapped := make([]*model.Node, n)
	for i := range n {
		child := fragment.Child(i)
		if child.Content.Size() != 0 {
			child = child.Copy(mapFragment(child.Content, f, child))
		}
		if child.IsInline() {
			child = f(child, parent)
		}
		mapped[i] = child
	}
	return model.NewFragment(mapped)
}

// checkNodesBetween reports the error of calling doc.nodesBetween with an
// end beyond the document, which JavaScript throws (as a TypeError) when
// a mark step is inverted against a document too small for it.
func checkNodesBetween(doc *model.Node, to int) error {
	if to > doc.Content.Size() {
		return fmt.Errorf("Position %d out of range", to)
	}
	return nil
}

// AddMarkStep adds a mark to all inline content between two positions.
type AddMarkStep struct {
	// From is the start of the marked range.
	From int
	// To is the end of the marked range.
	To int
	// Mark is the mark to add.
	Mark *model.Mark
}

// Apply adds the mark to the inline atoms (text included) in the range
// whose parent allows it.
func (s *AddMarkStep) Apply(doc *model.Node) (*model.Node, error) {
	oldSlice, err := doc.Slice(s.From, s.To, false)
	if err != nil {
		return nil, err
	}
	rFrom, err := doc.Resolve(s.From)
	if err != nil {
		return nil, err
	}
	parent := rFrom.Node(rFrom.SharedDepth(s.To))
	content := mapFragment(oldSlice.Content, func(node, parent *model.Node) *model.Node {
		if !node.IsAtom() || !parent.Type.AllowsMarkType(s.Mark.Type) {
			return node
		}
		return node.Mark(s.Mark.AddToSet(node.Marks))
	}, parent)
	return doc.Replace(s.From, s.To, model.NewSlice(content, oldSlice.OpenStart, oldSlice.OpenEnd))
}

// GetMap returns the empty map: marks do not move positions.
func (s *AddMarkStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns the steps that restore the marks of the inline atoms in
// the range: a RemoveMarkStep, AddMarkSteps for marks the added one
// excluded, all in a MarkSetStep unless there is exactly one.
func (s *AddMarkStep) Invert(doc *model.Node) (Step, error) {
	if err := checkNodesBetween(doc, s.To); err != nil {
		return nil, err
	}
	var steps []Step
	doc.NodesBetween(s.From, s.To, func(node *model.Node, pos int, _ *model.Node, _ int) bool {
		if !node.IsInline() || !node.IsAtom() {
			return true
		}
		added := s.Mark.AddToSet(node.Marks)
		if model.SameMarkSet(added, node.Marks) {
			return true
		}
		from, to := max(s.From, pos), min(s.To, pos+node.NodeSize())
		steps = pushMarkStep(steps, true, from, to, s.Mark)
		for _, m := range node.Marks {
			if !m.IsInSet(added) {
				steps = pushMarkStep(steps, false, from, to, m)
			}
		}
		return true
	}, 0)
	return markStepOrSet(steps), nil
}

// Map maps the range, returning nil when it collapsed.
func (s *AddMarkStep) Map(m Mappable) Step {
	from, to := m.Map(s.From, 1), m.Map(s.To, -1)
	if from >= to {
		return nil
	}
	return &AddMarkStep{From: from, To: to, Mark: s.Mark}
}

// Merge joins the step with an AddMarkStep of an equal mark whose range
// touches or overlaps its own.
func (s *AddMarkStep) Merge(other Step) (Step, bool) {
	o, ok := other.(*AddMarkStep)
	if !ok || !o.Mark.Eq(s.Mark) || s.From > o.To || s.To < o.From {
		return nil, false
	}
	return &AddMarkStep{From: min(s.From, o.From), To: max(s.To, o.To), Mark: s.Mark}, true
}

// AppendJSON appends {"stepType":"addMark","mark":…,"from":…,"to":…}.
func (s *AddMarkStep) AppendJSON(buf []byte) []byte {
	return appendMarkStepJSON(buf, "addMark", s.Mark, s.From, s.To)
}

// MarshalJSON returns AppendJSON(nil).
func (s *AddMarkStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func appendMarkStepJSON(buf []byte, stepType string, mark *model.Mark, from, to int) []byte {
	buf = append(buf, `{"stepType":"`...)
	buf = append(buf, stepType...)
	buf = append(buf, `","mark":`...)
	buf = mark.AppendJSON(buf)
	buf = append(buf, `,"from":`...)
	buf = strconv.AppendInt(buf, int64(from), 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, int64(to), 10)
	return append(buf, '}')
}

func addMarkStepFromJSON(schema *model.Schema, obj *jsonObject) (Step, error) {
	from, to, mark, err := markStepFromJSON(schema, obj, "AddMarkStep.fromJSON")
	if err != nil {
		return nil, err
	}
	return &AddMarkStep{From: from, To: to, Mark: mark}, nil
}

func markStepFromJSON(schema *model.Schema, obj *jsonObject, where string) (from, to int, mark *model.Mark, err error) {
	if err := obj.checkNumbers(where, fFrom, fTo); err != nil {
		return 0, 0, nil, err
	}
	if mark, err = obj.markField(schema); err != nil {
		return 0, 0, nil, err
	}
	if err := obj.checkPositions(where, fFrom, fTo); err != nil {
		return 0, 0, nil, err
	}
	return obj.pos(fFrom), obj.pos(fTo), mark, nil
}

// RemoveMarkStep removes a mark from all inline content between two
// positions.
type RemoveMarkStep struct {
	// From is the start of the unmarked range.
	From int
	// To is the end of the unmarked range.
	To int
	// Mark is the mark to remove.
	Mark *model.Mark
}

// Apply removes the mark from the inline nodes in the range.
func (s *RemoveMarkStep) Apply(doc *model.Node) (*model.Node, error) {
	oldSlice, err := doc.Slice(s.From, s.To, false)
	if err != nil {
		return nil, err
	}
	content := mapFragment(oldSlice.Content, func(node, _ *model.Node) *model.Node {
		return node.Mark(s.Mark.RemoveFromSet(node.Marks))
	}, doc)
	return doc.Replace(s.From, s.To, model.NewSlice(content, oldSlice.OpenStart, oldSlice.OpenEnd))
}

// GetMap returns the empty map: marks do not move positions.
func (s *RemoveMarkStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns AddMarkSteps putting the mark back on the inline atoms in
// the range that had it, in a MarkSetStep unless there is exactly one.
func (s *RemoveMarkStep) Invert(doc *model.Node) (Step, error) {
	if err := checkNodesBetween(doc, s.To); err != nil {
		return nil, err
	}
	var steps []Step
	doc.NodesBetween(s.From, s.To, func(node *model.Node, pos int, _ *model.Node, _ int) bool {
		if node.IsInline() && node.IsAtom() && s.Mark.IsInSet(node.Marks) {
			steps = pushMarkStep(steps, false, max(s.From, pos), min(s.To, pos+node.NodeSize()), s.Mark)
		}
		return true
	}, 0)
	return markStepOrSet(steps), nil
}

// Map maps the range, returning nil when it collapsed.
func (s *RemoveMarkStep) Map(m Mappable) Step {
	from, to := m.Map(s.From, 1), m.Map(s.To, -1)
	if from >= to {
		return nil
	}
	return &RemoveMarkStep{From: from, To: to, Mark: s.Mark}
}

// Merge joins the step with a RemoveMarkStep of an equal mark whose range
// touches or overlaps its own.
func (s *RemoveMarkStep) Merge(other Step) (Step, bool) {
	o, ok := other.(*RemoveMarkStep)
	if !ok || !o.Mark.Eq(s.Mark) || s.From > o.To || s.To < o.From {
		return nil, false
	}
	return &RemoveMarkStep{From: min(s.From, o.From), To: max(s.To, o.To), Mark: s.Mark}, true
}

// AppendJSON appends {"stepType":"removeMark","mark":…,"from":…,"to":…}.
func (s *RemoveMarkStep) AppendJSON(buf []byte) []byte {
	return appendMarkStepJSON(buf, "removeMark", s.Mark, s.From, s.To)
}

// MarshalJSON returns AppendJSON(nil).
func (s *RemoveMarkStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func removeMarkStepFromJSON(schema *model.Schema, obj *jsonObject) (Step, error) {
	from, to, mark, err := markStepFromJSON(schema, obj, "RemoveMarkStep.fromJSON")
	if err != nil {
		return nil, err
	}
	return &RemoveMarkStep{From: from, To: to, Mark: mark}, nil
}

// pushMarkStep appends a RemoveMarkStep (remove set) or AddMarkStep of
// mark over from..to to steps, extending the last step instead when it is
// of the same kind and mark and ends at from.
func pushMarkStep(steps []Step, remove bool, from, to int, mark *model.Mark) []Step {
	if n := len(steps); n > 0 {
		switch last := steps[n-1].(type) {
		case *AddMarkStep:
			if !remove && last.To == from && last.Mark.Eq(mark) {
				steps[n-1] = &AddMarkStep{From: last.From, To: to, Mark: mark}
				return steps
			}
		case *RemoveMarkStep:
			if remove && last.To == from && last.Mark.Eq(mark) {
				steps[n-1] = &RemoveMarkStep{From: last.From, To: to, Mark: mark}
				return steps
			}
		}
	}
	if remove {
		return append(steps, &RemoveMarkStep{From: from, To: to, Mark: mark})
	}
	return append(steps, &AddMarkStep{From: from, To: to, Mark: mark})
}

// markStepOrSet returns the only step of steps, or a MarkSetStep of them
// (which may be empty).
func markStepOrSet(steps []Step) Step {
	if len(steps) == 1 {
		return steps[0]
	}
	return &MarkSetStep{Steps: steps}
}

// MarkSetStep applies a sequence of mark steps as one step. It is what
// inverting a mark step gives when the inverse takes other than exactly
// one step (none included). It is MarkSetStep of prosemirror-transform
// 1.12, which that library does not export.
//
// Decoded from JSON, Steps holds only AddMarkSteps and RemoveMarkSteps.
// Inverting a MarkSetStep inverts each of its steps against the same
// document, as JavaScript does, and so may nest a MarkSetStep in another,
// whose JSON StepFromJSON then rejects.
type MarkSetStep struct {
	// Steps are applied in order.
	Steps []Step
}

// Apply applies the steps in order, failing when one fails.
func (s *MarkSetStep) Apply(doc *model.Node) (*model.Node, error) {
	for _, step := range s.Steps {
		next, err := step.Apply(doc)
		if err != nil {
			return nil, err
		}
		doc = next
	}
	return doc, nil
}

// GetMap returns the empty map.
func (s *MarkSetStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns a MarkSetStep of the inverses of the steps, each
// inverted against doc and kept in order, as JavaScript does.
func (s *MarkSetStep) Invert(doc *model.Node) (Step, error) {
	inverted := make([]Step, len(s.Steps))
	for i, step := range s.Steps {
		inv, err := step.Invert(doc)
		if err != nil {
			return nil, err
		}
		inverted[i] = inv
	}
	return &MarkSetStep{Steps: inverted}, nil
}

// Map maps each step, dropping those the mapping deletes; it returns nil
// when none is left.
func (s *MarkSetStep) Map(m Mappable) Step {
	var mapped []Step
	for _, step := range s.Steps {
		if ms := step.Map(m); ms != nil {
			mapped = append(mapped, ms)
		}
	}
	if len(mapped) == 0 {
		return nil
	}
	return &MarkSetStep{Steps: mapped}
}

// Merge reports false: mark sets do not merge.
func (s *MarkSetStep) Merge(other Step) (Step, bool) { return nil, false }

// AppendJSON appends {"stepType":"markSet","steps":[…]}.
func (s *MarkSetStep) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"stepType":"markSet","steps":[`...)
	for i, step := range s.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = step.AppendJSON(buf)
	}
	return append(buf, "]}"...)
}

// MarshalJSON returns AppendJSON(nil).
func (s *MarkSetStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

const msgInvalidMarkSet = "Invalid JSON for MarkSetStep"

// markSetStepFromJSON accepts only an array "steps" whose elements all
// have a stepType that equals (with JavaScript's ==) "addMark" or
// "removeMark", checked before any is decoded.
func markSetStepFromJSON(schema *model.Schema, obj *jsonObject) (Step, error) {
	if obj.fields[fSteps].kind != jsonscan.Array {
		return nil, &model.JSONError{Msg: msgInvalidMarkSet, Path: "steps"}
	}
	for i, elem := range obj.steps {
		switch {
		case elem.kind == jsonscan.Null:
			// JavaScript's every() reads null.stepType.
			return nil, &model.JSONError{Msg: "Cannot read properties of null (reading 'stepType')", Path: jsonPathIndex("steps", i)}
		case elem.obj == nil || !(elem.obj.stepTypeLooseEquals("addMark") || elem.obj.stepTypeLooseEquals("removeMark")):
			return nil, &model.JSONError{Msg: msgInvalidMarkSet, Path: jsonPathIndex("steps", i)}
		}
	}
	steps := make([]Step, len(obj.steps))
	for i, elem := range obj.steps {
		st, err := stepFromObject(schema, elem.obj)
		if err != nil {
			return nil, underPath(err, jsonPathIndex("steps", i))
		}
		steps[i] = st
	}
	return &MarkSetStep{Steps: steps}, nil
}

// AddNodeMarkStep adds a mark to the node at a position.
type AddNodeMarkStep struct {
	// Pos is the position of the target node.
	Pos int
	// Mark is the mark to add.
	Mark *model.Mark
}

// Apply adds the mark to the node at Pos (which must not be a text node).
func (s *AddNodeMarkStep) Apply(doc *model.Node) (*model.Node, error) {
	node, err := nodeAt(doc, s.Pos)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, errNoNodeForMark
	}
	if node.IsText() {
		return nil, errTextCreate
	}
	updated, err := node.Type.Create(node.Attrs, model.Fragment{}, s.Mark.AddToSet(node.Marks))
	if err != nil {
		return nil, err
	}
	return replaceNode(doc, s.Pos, node, updated)
}

// GetMap returns the empty map.
func (s *AddNodeMarkStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns a step restoring the node's marks: an AddNodeMarkStep
// when adding the mark left the number of marks unchanged (the mark was
// there, or replaced one it excludes), a RemoveNodeMarkStep otherwise.
func (s *AddNodeMarkStep) Invert(doc *model.Node) (Step, error) {
	node, err := nodeAt(doc, s.Pos)
	if err != nil {
		return nil, err
	}
	if node != nil {
		newSet := s.Mark.AddToSet(node.Marks)
		if len(newSet) == len(node.Marks) {
			for _, m := range node.Marks {
				if !m.IsInSet(newSet) {
					return &AddNodeMarkStep{Pos: s.Pos, Mark: m}, nil
				}
			}
			return &AddNodeMarkStep{Pos: s.Pos, Mark: s.Mark}, nil
		}
	}
	return &RemoveNodeMarkStep{Pos: s.Pos, Mark: s.Mark}, nil
}

// Map maps the position, returning nil when the node after it was deleted.
func (s *AddNodeMarkStep) Map(m Mappable) Step {
	r := m.MapResult(s.Pos, 1)
	if r.DeletedAfter() {
		return nil
	}
	return &AddNodeMarkStep{Pos: r.Pos, Mark: s.Mark}
}

// Merge reports false: node mark steps do not merge.
func (s *AddNodeMarkStep) Merge(other Step) (Step, bool) { return nil, false }

// AppendJSON appends {"stepType":"addNodeMark","pos":…,"mark":…}.
func (s *AddNodeMarkStep) AppendJSON(buf []byte) []byte {
	return appendNodeMarkStepJSON(buf, "addNodeMark", s.Pos, s.Mark)
}

// MarshalJSON returns AppendJSON(nil).
func (s *AddNodeMarkStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func appendNodeMarkStepJSON(buf []byte, stepType string, pos int, mark *model.Mark) []byte {
	buf = append(buf, `{"stepType":"`...)
	buf = append(buf, stepType...)
	buf = append(buf, `","pos":`...)
	buf = strconv.AppendInt(buf, int64(pos), 10)
	buf = append(buf, `,"mark":`...)
	buf = mark.AppendJSON(buf)
	return append(buf, '}')
}

func nodeMarkStepFromJSON(schema *model.Schema, obj *jsonObject, where string) (int, *model.Mark, error) {
	if err := obj.checkNumbers(where, fPos); err != nil {
		return 0, nil, err
	}
	mark, err := obj.markField(schema)
	if err != nil {
		return 0, nil, err
	}
	if err := obj.checkPositions(where, fPos); err != nil {
		return 0, nil, err
	}
	return obj.pos(fPos), mark, nil
}

func addNodeMarkStepFromJSON(schema *model.Schema, obj *jsonObject) (Step, error) {
	pos, mark, err := nodeMarkStepFromJSON(schema, obj, "AddNodeMarkStep.fromJSON")
	if err != nil {
		return nil, err
	}
	return &AddNodeMarkStep{Pos: pos, Mark: mark}, nil
}

// RemoveNodeMarkStep removes a mark from the node at a position.
type RemoveNodeMarkStep struct {
	// Pos is the position of the target node.
	Pos int
	// Mark is the mark to remove.
	Mark *model.Mark
}

// Apply removes the mark from the node at Pos (which must not be a text
// node).
func (s *RemoveNodeMarkStep) Apply(doc *model.Node) (*model.Node, error) {
	node, err := nodeAt(doc, s.Pos)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, errNoNodeForMark
	}
	if node.IsText() {
		return nil, errTextCreate
	}
	updated, err := node.Type.Create(node.Attrs, model.Fragment{}, s.Mark.RemoveFromSet(node.Marks))
	if err != nil {
		return nil, err
	}
	return replaceNode(doc, s.Pos, node, updated)
}

// GetMap returns the empty map.
func (s *RemoveNodeMarkStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns an AddNodeMarkStep when the node at Pos has the mark,
// and the step itself otherwise.
func (s *RemoveNodeMarkStep) Invert(doc *model.Node) (Step, error) {
	node, err := nodeAt(doc, s.Pos)
	if err != nil {
		return nil, err
	}
	if node == nil || !s.Mark.IsInSet(node.Marks) {
		return s, nil
	}
	return &AddNodeMarkStep{Pos: s.Pos, Mark: s.Mark}, nil
}

// Map maps the position, returning nil when the node after it was deleted.
func (s *RemoveNodeMarkStep) Map(m Mappable) Step {
	r := m.MapResult(s.Pos, 1)
	if r.DeletedAfter() {
		return nil
	}
	return &RemoveNodeMarkStep{Pos: r.Pos, Mark: s.Mark}
}

// Merge reports false: node mark steps do not merge.
func (s *RemoveNodeMarkStep) Merge(other Step) (Step, bool) { return nil, false }

// AppendJSON appends {"stepType":"removeNodeMark","pos":…,"mark":…}.
func (s *RemoveNodeMarkStep) AppendJSON(buf []byte) []byte {
	return appendNodeMarkStepJSON(buf, "removeNodeMark", s.Pos, s.Mark)
}

// MarshalJSON returns AppendJSON(nil).
func (s *RemoveNodeMarkStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func removeNodeMarkStepFromJSON(schema *model.Schema, obj *jsonObject) (Step, error) {
	pos, mark, err := nodeMarkStepFromJSON(schema, obj, "RemoveNodeMarkStep.fromJSON")
	if err != nil {
		return nil, err
	}
	return &RemoveNodeMarkStep{Pos: pos, Mark: mark}, nil
}
