package transform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// Op is one Transform method call in JSON, the form that
// `pmauthority transform` and POST /docs/{id}/transform take:
//
//	{"op": "split", "args": [12, 2]}
//
// Op is the JavaScript method name (replace, replaceWith, insert, delete,
// replaceRange, replaceRangeWith, deleteRange, addMark, removeMark,
// clearIncompatible, setBlockType, setNodeMarkup, setNodeAttribute,
// setDocAttribute, addNodeMark, removeNodeMark, split, join, lift, wrap)
// and Args its arguments in order:
//   - positions are integers;
//   - node and mark types are their names;
//   - attributes are objects (null for the defaults);
//   - a node is its JSON, a mark its JSON, a slice its JSON (null for the
//     empty slice);
//   - content is an array of node JSON, or one node's JSON;
//   - removeMark's third argument is a mark's JSON, a mark type's name, or
//     null (or absent) for all marks; removeNodeMark's second a mark's
//     JSON or a mark type's name;
//   - a range (lift, wrap) is {"from": …, "to": …, "depth": …}, the
//     NodeRange of those positions resolved in the document at that op;
//   - wrap's wrappers and split's typesAfter are [{"type": NAME,
//     "attrs": …}], null entries allowed in typesAfter.
//
// Trailing optional arguments may be left out, with JavaScript's
// defaults: replace's to (from) and slice (empty), split's depth (1) and
// typesAfter, join's depth (1), setBlockType's attrs, setNodeMarkup's
// attrs and marks (null keeps the node's marks).
type Op struct {
	// Op is the method name.
	Op string `json:"op"`
	// Args are the method's arguments as JSON.
	Args []json.RawMessage `json:"args"`
}

// OpError is the failure of one op of ApplyOps.
type OpError struct {
	// Index is the index of the failing op.
	Index int
	// Op is its method name.
	Op string
	// Err is why it failed: a bad argument, or the error of the method.
	Err error
}

// Error returns "op i (name): " followed by Err's message.
func (e *OpError) Error() string { return fmt.Sprintf("op %d (%s): %v", e.Index, e.Op, e.Err) }

// Unwrap returns Err.
func (e *OpError) Unwrap() error { return e.Err }

// ArgError is a bad argument of an op: missing, of the wrong JSON type,
// or naming a type the schema does not have.
type ArgError struct {
	// Op is the op's method name.
	Op string
	// Arg is the index of the argument.
	Arg int
	// Msg says what is wrong.
	Msg string
	// Err, when set, is the error of decoding the argument (a node,
	// mark or slice that prosemirror-model's fromJSON rejects, with its
	// message).
	Err error
}

// Error returns "NAME argument i: " followed by Msg.
func (e *ArgError) Error() string { return fmt.Sprintf("%s argument %d: %s", e.Op, e.Arg, e.Msg) }

// Unwrap returns Err.
func (e *ArgError) Unwrap() error { return e.Err }

func (a *opArgs) wrapErr(i int, err error) error {
	return &ArgError{Op: a.op, Arg: i, Msg: err.Error(), Err: err}
}

// ApplyOps runs ops on a transform of doc, in order, and returns the
// transform. When an op fails it returns the transform as that op left
// it (steps the op added before failing included, as in JavaScript) and
// an *OpError naming the op.
func ApplyOps(doc *model.Node, ops []Op) (*Transform, error) {
	tr := New(doc)
	for i, op := range ops {
		if err := tr.Apply(op); err != nil {
			return tr, &OpError{Index: i, Op: op.Op, Err: err}
		}
	}
	return tr, nil
}

// opArgs reads the arguments of one op.
type opArgs struct {
	op     string
	args   []json.RawMessage
	schema *model.Schema
	doc    *model.Node
}

// opSpec is how many arguments an op takes (min required, max allowed)
// and the function that runs it.
type opSpec struct {
	min, max int
	run      func(tr *Transform, a *opArgs) error
}

var opSpecs map[string]opSpec

func init() {
	opSpecs = map[string]opSpec{
		"replace": {1, 3, func(tr *Transform, a *opArgs) error {
			from, err := a.pos(0)
			if err != nil {
				return err
			}
			to := from
			if a.has(1) {
				if to, err = a.pos(1); err != nil {
					return err
				}
			}
			slice, err := a.slice(2)
			if err != nil {
				return err
			}
			return tr.Replace(from, to, slice)
		}},
		"replaceWith": {3, 3, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			content, err := a.content(2)
			if err != nil {
				return err
			}
			return tr.ReplaceWith(from, to, content)
		}},
		"insert": {2, 2, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			content, err := a.content(1)
			if err != nil {
				return err
			}
			return tr.Insert(pos, content)
		}},
		"delete": {2, 2, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			return tr.Delete(from, to)
		}},
		"replaceRange": {3, 3, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			slice, err := a.slice(2)
			if err != nil {
				return err
			}
			return tr.ReplaceRange(from, to, slice)
		}},
		"replaceRangeWith": {3, 3, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			node, err := a.node(2)
			if err != nil {
				return err
			}
			return tr.ReplaceRangeWith(from, to, node)
		}},
		"deleteRange": {2, 2, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			return tr.DeleteRange(from, to)
		}},
		"addMark": {3, 3, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			mark, err := a.mark(2)
			if err != nil {
				return err
			}
			return tr.AddMark(from, to, mark)
		}},
		"removeMark": {2, 3, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			if !a.has(2) {
				return tr.RemoveAllMarks(from, to)
			}
			mark, typ, err := a.markOrType(2)
			if err != nil {
				return err
			}
			if typ != nil {
				return tr.RemoveMarkType(from, to, typ)
			}
			return tr.RemoveMark(from, to, mark)
		}},
		"clearIncompatible": {2, 2, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			typ, err := a.nodeType(1)
			if err != nil {
				return err
			}
			return tr.ClearIncompatible(pos, typ, nil)
		}},
		"setBlockType": {3, 4, func(tr *Transform, a *opArgs) error {
			from, to, err := a.fromTo()
			if err != nil {
				return err
			}
			typ, err := a.nodeType(2)
			if err != nil {
				return err
			}
			attrs, err := a.attrs(3)
			if err != nil {
				return err
			}
			return tr.SetBlockType(from, to, typ, attrs)
		}},
		"setNodeMarkup": {1, 4, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			var typ *model.NodeType
			if a.has(1) {
				if typ, err = a.nodeType(1); err != nil {
					return err
				}
			}
			attrs, err := a.attrs(2)
			if err != nil {
				return err
			}
			marks, err := a.marks(3)
			if err != nil {
				return err
			}
			return tr.SetNodeMarkup(pos, typ, attrs, marks)
		}},
		"setNodeAttribute": {3, 3, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			name, err := a.str(1)
			if err != nil {
				return err
			}
			value, err := a.value(2)
			if err != nil {
				return err
			}
			return tr.SetNodeAttribute(pos, name, value)
		}},
		"setDocAttribute": {2, 2, func(tr *Transform, a *opArgs) error {
			name, err := a.str(0)
			if err != nil {
				return err
			}
			value, err := a.value(1)
			if err != nil {
				return err
			}
			return tr.SetDocAttribute(name, value)
		}},
		"addNodeMark": {2, 2, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			mark, err := a.mark(1)
			if err != nil {
				return err
			}
			return tr.AddNodeMark(pos, mark)
		}},
		"removeNodeMark": {2, 2, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			if a.isNull(1) {
				return a.errorf(1, "want a mark or a mark type name, got null")
			}
			mark, typ, err := a.markOrType(1)
			if err != nil {
				return err
			}
			if typ != nil {
				return tr.RemoveNodeMarkType(pos, typ)
			}
			return tr.RemoveNodeMark(pos, mark)
		}},
		"split": {1, 3, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			depth := 1
			if a.has(1) {
				if depth, err = a.count(1); err != nil {
					return err
				}
			}
			typesAfter, err := a.wrappers(2, true)
			if err != nil {
				return err
			}
			return tr.Split(pos, depth, typesAfter)
		}},
		"join": {1, 2, func(tr *Transform, a *opArgs) error {
			pos, err := a.pos(0)
			if err != nil {
				return err
			}
			depth := 1
			if a.has(1) {
				if depth, err = a.count(1); err != nil {
					return err
				}
			}
			return tr.Join(pos, depth)
		}},
		"lift": {2, 2, func(tr *Transform, a *opArgs) error {
			r, err := a.nodeRange(0)
			if err != nil {
				return err
			}
			target, err := a.count(1)
			if err != nil {
				return err
			}
			return tr.Lift(r, target)
		}},
		"wrap": {2, 2, func(tr *Transform, a *opArgs) error {
			r, err := a.nodeRange(0)
			if err != nil {
				return err
			}
			wrappers, err := a.wrappers(1, false)
			if err != nil {
				return err
			}
			return tr.Wrap(r, wrappers)
		}},
	}
}

// Apply runs one op on the transform. A bad argument gives an *ArgError
// and leaves the transform alone; otherwise the error is the method's.
func (tr *Transform) Apply(op Op) error {
	spec, ok := opSpecs[op.Op]
	if !ok {
		return fmt.Errorf("unknown op %q", op.Op)
	}
	if len(op.Args) < spec.min || len(op.Args) > spec.max {
		want := fmt.Sprintf("%d", spec.min)
		if spec.max != spec.min {
			want = fmt.Sprintf("%d to %d", spec.min, spec.max)
		}
		return fmt.Errorf("%s takes %s arguments, got %d", op.Op, want, len(op.Args))
	}
	return spec.run(tr, &opArgs{op: op.Op, args: op.Args, schema: tr.Doc.Type.Schema, doc: tr.Doc})
}

func (a *opArgs) errorf(i int, format string, args ...any) error {
	return &ArgError{Op: a.op, Arg: i, Msg: fmt.Sprintf(format, args...)}
}

// has reports whether argument i is given and not null.
func (a *opArgs) has(i int) bool { return i < len(a.args) && !a.isNull(i) }

func (a *opArgs) isNull(i int) bool {
	if i >= len(a.args) {
		return true
	}
	kind, err := peekKind(a.args[i])
	return err == nil && kind == jsonscan.Null
}

func peekKind(raw []byte) (jsonscan.Kind, error) {
	var d jsonscan.Decoder
	d.Reset(raw)
	return d.Peek()
}

// value decodes argument i as a JSON value (see model.Attrs).
func (a *opArgs) value(i int) (any, error) {
	if i >= len(a.args) {
		return nil, a.errorf(i, "missing")
	}
	var d jsonscan.Decoder
	d.Reset(a.args[i])
	v, err := model.ValueFromDecoder(&d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return nil, a.errorf(i, "%v", err)
	}
	return v, nil
}

// integer decodes argument i as an integer.
func (a *opArgs) integer(i int) (int, error) {
	v, err := a.value(i)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok {
		return 0, a.errorf(i, "want an integer, got %s", jsonKind(v))
	}
	if f != math.Trunc(f) || math.Abs(f) > maxPosition {
		return 0, a.errorf(i, "want an integer, got %v", f)
	}
	return int(f), nil
}

// pos decodes argument i as a position. Positions outside the document
// are left to the method, which fails on them as JavaScript does.
func (a *opArgs) pos(i int) (int, error) { return a.integer(i) }

// count decodes argument i as a depth or a number of levels, which must
// not be negative (JavaScript reads negative depths relative to a
// position's own depth, which these methods do not mean).
func (a *opArgs) count(i int) (int, error) {
	n, err := a.integer(i)
	if err == nil && n < 0 {
		err = a.errorf(i, "want a depth of 0 or more, got %d", n)
	}
	return n, err
}

func (a *opArgs) fromTo() (int, int, error) {
	from, err := a.pos(0)
	if err != nil {
		return 0, 0, err
	}
	to, err := a.pos(1)
	return from, to, err
}

func (a *opArgs) str(i int) (string, error) {
	v, err := a.value(i)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", a.errorf(i, "want a string, got %s", jsonKind(v))
	}
	return s, nil
}

func (a *opArgs) nodeType(i int) (*model.NodeType, error) {
	name, err := a.str(i)
	if err != nil {
		return nil, err
	}
	t := a.schema.NodeType(name)
	if t == nil {
		return nil, a.errorf(i, "unknown node type %q", name)
	}
	return t, nil
}

// attrs decodes argument i as attributes: nil (the defaults) when absent
// or null.
func (a *opArgs) attrs(i int) (model.Attrs, error) {
	if !a.has(i) {
		return nil, nil
	}
	v, err := a.value(i)
	if err != nil {
		return nil, err
	}
	return attrsOf(v, func(msg string) error { return a.errorf(i, "%s", msg) })
}

func attrsOf(v any, fail func(string) error) (model.Attrs, error) {
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(model.JSONObject)
	if !ok {
		return nil, fail("want attributes (an object), got " + jsonKind(v))
	}
	attrs := make(model.Attrs, 0, len(obj))
	for _, p := range obj {
		attrs = append(attrs, model.Attr{Name: p.Key, Value: p.Value})
	}
	return attrs, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

func (a *opArgs) node(i int) (*model.Node, error) {
	if i >= len(a.args) {
		return nil, a.errorf(i, "missing")
	}
	n, err := a.schema.NodeFromJSON(a.args[i])
	if err != nil {
		return nil, a.wrapErr(i, err)
	}
	return n, nil
}

func (a *opArgs) mark(i int) (*model.Mark, error) {
	if i >= len(a.args) {
		return nil, a.errorf(i, "missing")
	}
	m, err := a.schema.MarkFromJSON(a.args[i])
	if err != nil {
		return nil, a.wrapErr(i, err)
	}
	return m, nil
}

// markOrType decodes argument i as a mark's JSON or a mark type's name.
func (a *opArgs) markOrType(i int) (*model.Mark, *model.MarkType, error) {
	kind, err := peekKind(a.args[i])
	if err != nil {
		return nil, nil, a.errorf(i, "%v", err)
	}
	if kind == jsonscan.String {
		name, err := a.str(i)
		if err != nil {
			return nil, nil, err
		}
		t := a.schema.MarkType(name)
		if t == nil {
			return nil, nil, a.errorf(i, "unknown mark type %q", name)
		}
		return nil, t, nil
	}
	m, err := a.mark(i)
	return m, nil, err
}

// marks decodes argument i as an array of marks; nil when absent or null.
func (a *opArgs) marks(i int) ([]*model.Mark, error) {
	if !a.has(i) {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(a.args[i], &raws); err != nil {
		return nil, a.errorf(i, "want an array of marks")
	}
	marks := make([]*model.Mark, 0, len(raws))
	for _, raw := range raws {
		m, err := a.schema.MarkFromJSON(raw)
		if err != nil {
			return nil, a.wrapErr(i, err)
		}
		marks = append(marks, m)
	}
	return marks, nil
}

// slice decodes argument i as a slice; empty when absent or null.
func (a *opArgs) slice(i int) (model.Slice, error) {
	if !a.has(i) {
		return model.EmptySlice, nil
	}
	s, err := a.schema.SliceFromJSON(a.args[i])
	if err != nil {
		return model.Slice{}, a.wrapErr(i, err)
	}
	return s, nil
}

// content decodes argument i as a fragment: an array of nodes or one
// node.
func (a *opArgs) content(i int) (model.Fragment, error) {
	kind, err := peekKind(a.args[i])
	if err != nil {
		return model.Fragment{}, a.errorf(i, "%v", err)
	}
	if kind != jsonscan.Array {
		n, err := a.node(i)
		if err != nil {
			return model.Fragment{}, err
		}
		return model.FragmentOf(n), nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(a.args[i], &raws); err != nil {
		return model.Fragment{}, a.errorf(i, "%v", err)
	}
	nodes := make([]*model.Node, 0, len(raws))
	for _, raw := range raws {
		n, err := a.schema.NodeFromJSON(raw)
		if err != nil {
			return model.Fragment{}, a.wrapErr(i, err)
		}
		nodes = append(nodes, n)
	}
	return model.NewFragment(nodes), nil
}

// nodeRange decodes argument i as {"from", "to", "depth"}, resolved in
// the document. The depth must be one both positions have.
func (a *opArgs) nodeRange(i int) (*model.NodeRange, error) {
	var raw struct {
		From, To, Depth *json.Number
	}
	d := json.NewDecoder(bytes.NewReader(a.args[i]))
	d.UseNumber()
	d.DisallowUnknownFields()
	if err := d.Decode(&raw); err != nil || raw.From == nil || raw.To == nil || raw.Depth == nil {
		return nil, a.errorf(i, `want a range {"from": …, "to": …, "depth": …}`)
	}
	var vals [3]int
	for j, n := range []*json.Number{raw.From, raw.To, raw.Depth} {
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxPosition {
			return nil, a.errorf(i, "range: want integers, got %s", n.String())
		}
		vals[j] = int(f)
	}
	from, err := a.doc.Resolve(vals[0])
	if err != nil {
		return nil, err
	}
	to, err := a.doc.Resolve(vals[1])
	if err != nil {
		return nil, err
	}
	if depth := vals[2]; depth < 0 || depth > from.Depth || depth > to.Depth {
		return nil, a.errorf(i, "range depth %d is not between 0 and the depth of both positions", depth)
	}
	return &model.NodeRange{From: from, To: to, Depth: vals[2]}, nil
}

// wrappers decodes argument i as [{"type", "attrs"}], with null entries
// when nulls (typesAfter); absent or null is nil.
func (a *opArgs) wrappers(i int, nulls bool) ([]Wrapper, error) {
	if !a.has(i) {
		if nulls {
			return nil, nil
		}
		return nil, a.errorf(i, "want an array of {\"type\", \"attrs\"}")
	}
	v, err := a.value(i)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, a.errorf(i, "want an array of {\"type\", \"attrs\"}, got %s", jsonKind(v))
	}
	out := make([]Wrapper, len(list))
	for j, e := range list {
		if e == nil && nulls {
			continue
		}
		obj, ok := e.(model.JSONObject)
		if !ok {
			return nil, a.errorf(i, "element %d: want {\"type\", \"attrs\"}, got %s", j, jsonKind(e))
		}
		name, _ := obj.Get("type")
		s, ok := name.(string)
		if !ok {
			return nil, a.errorf(i, "element %d: want a node type name in \"type\"", j)
		}
		t := a.schema.NodeType(s)
		if t == nil {
			return nil, a.errorf(i, "element %d: unknown node type %q", j, s)
		}
		av, _ := obj.Get("attrs")
		attrs, err := attrsOf(av, func(msg string) error { return a.errorf(i, "element %d: %s", j, msg) })
		if err != nil {
			return nil, err
		}
		out[j] = Wrapper{Type: t, Attrs: attrs}
	}
	return out, nil
}
