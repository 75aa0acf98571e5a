package transform

import (
	"errors"
	"strconv"

	"github.com/pmauthority/pmauthority/model"
)

var errNoNodeForAttr = errors.New("No node at attribute step's position")

// withAttr returns a copy of attrs with name set to value, or without
// name when noValue is set (which makes NodeType.Create fall back to the
// default, as an undefined value does in JavaScript). A name the type
// does not have is added anyway; Create drops it.
func withAttr(attrs model.Attrs, name string, value any, noValue bool) model.Attrs {
	out := make(model.Attrs, 0, len(attrs)+1)
	found := false
	for _, a := range attrs {
		if a.Name == name {
			found = true
			if noValue {
				continue
			}
			a.Value = value
		}
		out = append(out, a)
	}
	if !found && !noValue {
		out = append(out, model.Attr{Name: name, Value: value})
	}
	return out
}

// AttrStep sets an attribute of the node at a position.
//
// An attribute the node's type does not have is ignored (the step
// succeeds and changes nothing), and a step without a value (NoValue)
// resets the attribute to its default, failing when it has none, as in
// JavaScript.
type AttrStep struct {
	// Pos is the position of the target node.
	Pos int
	// Attr is the name of the attribute to set.
	Attr string
	// Value is the attribute's new value, a JSON value (see model.Attrs).
	Value any
	// NoValue means that the step carries no value: JSON without "value",
	// which JavaScript reads as undefined. The inverse of a step on an
	// attribute the node does not have is such a step.
	NoValue bool
}

// Apply sets the attribute on the node at Pos, which must not be a text
// node. The new value is validated against the attribute's spec.
func (s *AttrStep) Apply(doc *model.Node) (*model.Node, error) {
	node, err := nodeAt(doc, s.Pos)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, errNoNodeForAttr
	}
	if node.IsText() {
		return nil, errTextCreate
	}
	updated, err := node.Type.Create(withAttr(node.Attrs, s.Attr, s.Value, s.NoValue), model.Fragment{}, node.Marks)
	if err != nil {
		return nil, err
	}
	return replaceNode(doc, s.Pos, node, updated)
}

// GetMap returns the empty map.
func (s *AttrStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns a step setting the attribute back to its value in doc
// (with NoValue when the node has no such attribute).
func (s *AttrStep) Invert(doc *model.Node) (Step, error) {
	node, err := nodeAt(doc, s.Pos)
	if err != nil {
		return nil, err
	}
	if node == nil {
		// JavaScript fails here reading attrs of null.
		return nil, errNoNodeForAttr
	}
	v, ok := node.Attrs.Get(s.Attr)
	return &AttrStep{Pos: s.Pos, Attr: s.Attr, Value: v, NoValue: !ok}, nil
}

// Map maps the position, returning nil when the node after it was deleted.
func (s *AttrStep) Map(m Mappable) Step {
	r := m.MapResult(s.Pos, 1)
	if r.DeletedAfter() {
		return nil
	}
	return &AttrStep{Pos: r.Pos, Attr: s.Attr, Value: s.Value, NoValue: s.NoValue}
}

// Merge reports false: attribute steps do not merge.
func (s *AttrStep) Merge(other Step) (Step, bool) { return nil, false }

// AppendJSON appends {"stepType":"attr","pos":…,"attr":…,"value":…},
// without "value" when NoValue is set.
func (s *AttrStep) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"stepType":"attr","pos":`...)
	buf = strconv.AppendInt(buf, int64(s.Pos), 10)
	buf = appendAttrAndValue(buf, s.Attr, s.Value, s.NoValue)
	return append(buf, '}')
}

// MarshalJSON returns AppendJSON(nil).
func (s *AttrStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func appendAttrAndValue(buf []byte, attr string, value any, noValue bool) []byte {
	buf = append(buf, `,"attr":`...)
	buf = model.AppendJSONString(buf, attr)
	if !noValue {
		buf = append(buf, `,"value":`...)
		buf = model.AppendJSONValue(buf, value)
	}
	return buf
}

func attrStepFromJSON(obj *jsonObject) (Step, error) {
	const where = "AttrStep.fromJSON"
	if err := obj.checkNumbers(where, fPos); err != nil {
		return nil, err
	}
	if err := obj.checkAttr(where); err != nil {
		return nil, err
	}
	if err := obj.checkPositions(where, fPos); err != nil {
		return nil, err
	}
	value, noValue := obj.valueField()
	return &AttrStep{Pos: obj.pos(fPos), Attr: obj.attr, Value: value, NoValue: noValue}, nil
}

// DocAttrStep sets an attribute of the document's top node.
type DocAttrStep struct {
	// Attr is the name of the attribute to set.
	Attr string
	// Value is the attribute's new value, a JSON value (see model.Attrs).
	Value any
	// NoValue means that the step carries no value, as in AttrStep.
	NoValue bool
}

// Apply sets the attribute on doc.
func (s *DocAttrStep) Apply(doc *model.Node) (*model.Node, error) {
	if doc.IsText() {
		return nil, errTextCreate
	}
	return doc.Type.Create(withAttr(doc.Attrs, s.Attr, s.Value, s.NoValue), doc.Content, doc.Marks)
}

// GetMap returns the empty map.
func (s *DocAttrStep) GetMap() *StepMap { return EmptyStepMap }

// Invert returns a step setting the attribute back to its value in doc.
func (s *DocAttrStep) Invert(doc *model.Node) (Step, error) {
	v, ok := doc.Attrs.Get(s.Attr)
	return &DocAttrStep{Attr: s.Attr, Value: v, NoValue: !ok}, nil
}

// Map returns the step itself: it has no position.
func (s *DocAttrStep) Map(m Mappable) Step { return s }

// Merge reports false: attribute steps do not merge.
func (s *DocAttrStep) Merge(other Step) (Step, bool) { return nil, false }

// AppendJSON appends {"stepType":"docAttr","attr":…,"value":…}, without
// "value" when NoValue is set.
func (s *DocAttrStep) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"stepType":"docAttr"`...)
	buf = appendAttrAndValue(buf, s.Attr, s.Value, s.NoValue)
	return append(buf, '}')
}

// MarshalJSON returns AppendJSON(nil).
func (s *DocAttrStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func docAttrStepFromJSON(obj *jsonObject) (Step, error) {
	if err := obj.checkAttr("DocAttrStep.fromJSON"); err != nil {
		return nil, err
	}
	value, noValue := obj.valueField()
	return &DocAttrStep{Attr: obj.attr, Value: value, NoValue: noValue}, nil
}
