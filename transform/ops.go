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
// or naming a type the schema does not have; or an op that is malformed
// as a whole (an unknown name, a wrong number of arguments).
type ArgError struct {
	// Op is the op's method name.
	Op string
	// Arg is the index of the argument, -1 for the op as a whole.
	Arg int
	// Msg says what is wrong.
	Msg string
	// Err, when set, is the error of decoding the argument (a node,
	// mark or slice that prosemirror-model's fromJSON rejects, with its
	// message).
	Err error
}

// Error returns "NAME argument i: " followed by Msg, or Msg alone for
// the op as a whole.
func (e *ArgError) Error() string {
	if e.Arg < 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s argument %d: %s", e.Op, e.Arg, e.Msg)
}

// Unwrap returns Err.
func (e *ArgError) Unwrap() error { return e.Err }

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

// opArgs reads the arguments of one op. Its readers keep the first
// error in err and read nothing once it is set, so that an op reads all
// its arguments and then checks err once.
type opArgs struct {
	op     string
	args   []json.RawMessage
	schema *model.Schema
	doc    *model.Node
	err    error
}

// opSpec is how many arguments an op takes (min required, max allowed)
// and the function that runs it.
type opSpec struct {
	min, max int
	run      func(tr *Transform, a *opArgs) error
}

var opSpecs = map[string]opSpec{
	"replace": {1, 3, func(tr *Transform, a *opArgs) error {
		from := a.pos(0)
		to := a.optPos(1, from)
		slice := a.slice(2)
		return a.then(func() error { return tr.Replace(from, to, slice) })
	}},
	"replaceWith": {3, 3, func(tr *Transform, a *opArgs) error {
		from, to, content := a.pos(0), a.pos(1), a.content(2)
		return a.then(func() error { return tr.ReplaceWith(from, to, content) })
	}},
	"insert": {2, 2, func(tr *Transform, a *opArgs) error {
		pos, content := a.pos(0), a.content(1)
		return a.then(func() error { return tr.Insert(pos, content) })
	}},
	"delete": {2, 2, func(tr *Transform, a *opArgs) error {
		from, to := a.pos(0), a.pos(1)
		return a.then(func() error { return tr.Delete(from, to) })
	}},
	"replaceRange": {3, 3, func(tr *Transform, a *opArgs) error {
		from, to, slice := a.pos(0), a.pos(1), a.slice(2)
		return a.then(func() error { return tr.ReplaceRange(from, to, slice) })
	}},
	"replaceRangeWith": {3, 3, func(tr *Transform, a *opArgs) error {
		from, to, node := a.pos(0), a.pos(1), a.node(2)
		return a.then(func() error { return tr.ReplaceRangeWith(from, to, node) })
	}},
	"deleteRange": {2, 2, func(tr *Transform, a *opArgs) error {
		from, to := a.pos(0), a.pos(1)
		return a.then(func() error { return tr.DeleteRange(from, to) })
	}},
	"addMark": {3, 3, func(tr *Transform, a *opArgs) error {
		from, to, mark := a.pos(0), a.pos(1), a.mark(2)
		return a.then(func() error { return tr.AddMark(from, to, mark) })
	}},
	"removeMark": {2, 3, func(tr *Transform, a *opArgs) error {
		from, to := a.pos(0), a.pos(1)
		if !a.has(2) {
			return a.then(func() error { return tr.RemoveAllMarks(from, to) })
		}
		mark, typ := a.markOrType(2)
		return a.then(func() error {
			if typ != nil {
				return tr.RemoveMarkType(from, to, typ)
			}
			return tr.RemoveMark(from, to, mark)
		})
	}},
	"clearIncompatible": {2, 2, func(tr *Transform, a *opArgs) error {
		pos, typ := a.pos(0), a.nodeType(1)
		return a.then(func() error { return tr.ClearIncompatible(pos, typ, nil) })
	}},
	"setBlockType": {3, 4, func(tr *Transform, a *opArgs) error {
		from, to, typ, attrs := a.pos(0), a.pos(1), a.nodeType(2), a.attrs(3)
		return a.then(func() error { return tr.SetBlockType(from, to, typ, attrs) })
	}},
	"setNodeMarkup": {1, 4, func(tr *Transform, a *opArgs) error {
		pos := a.pos(0)
		var typ *model.NodeType
		if a.has(1) {
			typ = a.nodeType(1)
		}
		attrs, marks := a.attrs(2), a.marks(3)
		return a.then(func() error { return tr.SetNodeMarkup(pos, typ, attrs, marks) })
	}},
	"setNodeAttribute": {3, 3, func(tr *Transform, a *opArgs) error {
		pos, name, value := a.pos(0), a.str(1), a.value(2)
		return a.then(func() error { return tr.SetNodeAttribute(pos, name, value) })
	}},
	"setDocAttribute": {2, 2, func(tr *Transform, a *opArgs) error {
		name, value := a.str(0), a.value(1)
		return a.then(func() error { return tr.SetDocAttribute(name, value) })
	}},
	"addNodeMark": {2, 2, func(tr *Transform, a *opArgs) error {
		pos, mark := a.pos(0), a.mark(1)
		return a.then(func() error { return tr.AddNodeMark(pos, mark) })
	}},
	"removeNodeMark": {2, 2, func(tr *Transform, a *opArgs) error {
		pos := a.pos(0)
		if a.err == nil && a.isNull(1) {
			a.fail(1, "want a mark or a mark type name, got null")
		}
		mark, typ := a.markOrType(1)
		return a.then(func() error {
			if typ != nil {
				return tr.RemoveNodeMarkType(pos, typ)
			}
			return tr.RemoveNodeMark(pos, mark)
		})
	}},
	"split": {1, 3, func(tr *Transform, a *opArgs) error {
		pos, depth, typesAfter := a.pos(0), a.optCount(1, 1), a.wrappers(2, true)
		return a.then(func() error { return tr.Split(pos, depth, typesAfter) })
	}},
	"join": {1, 2, func(tr *Transform, a *opArgs) error {
		pos, depth := a.pos(0), a.optCount(1, 1)
		return a.then(func() error { return tr.Join(pos, depth) })
	}},
	"lift": {2, 2, func(tr *Transform, a *opArgs) error {
		r, target := a.nodeRange(0), a.count(1)
		return a.then(func() error { return tr.Lift(r, target) })
	}},
	"wrap": {2, 2, func(tr *Transform, a *opArgs) error {
		r, wrappers := a.nodeRange(0), a.wrappers(1, false)
		return a.then(func() error { return tr.Wrap(r, wrappers) })
	}},
}

// Apply runs one op on the transform. A bad argument gives an *ArgError
// and leaves the transform alone; otherwise the error is the method's.
func (tr *Transform) Apply(op Op) error {
	spec, ok := opSpecs[op.Op]
	if !ok {
		return &ArgError{Op: op.Op, Arg: -1, Msg: fmt.Sprintf("unknown op %q", op.Op)}
	}
	if len(op.Args) < spec.min || len(op.Args) > spec.max {
		want := fmt.Sprintf("%d", spec.min)
		if spec.max != spec.min {
			want = fmt.Sprintf("%d to %d", spec.min, spec.max)
		}
		return &ArgError{Op: op.Op, Arg: -1, Msg: fmt.Sprintf("%s takes %s arguments, got %d", op.Op, want, len(op.Args))}
	}
	return spec.run(tr, &opArgs{op: op.Op, args: op.Args, schema: tr.Doc.Type.Schema, doc: tr.Doc})
}

// then returns the first error reading the arguments, or runs f.
func (a *opArgs) then(f func() error) error {
	if a.err != nil {
		return a.err
	}
	return f()
}

func (a *opArgs) errorf(i int, format string, args ...any) error {
	return &ArgError{Op: a.op, Arg: i, Msg: fmt.Sprintf(format, args...)}
}

// fail records an *ArgError for argument i, unless an error is recorded.
func (a *opArgs) fail(i int, format string, args ...any) {
	if a.err == nil {
		a.err = a.errorf(i, format, args...)
	}
}

// failed records err (a decoding error of argument i, kept as ArgError.Err)
// and reports whether there is an error.
func (a *opArgs) failed(i int, err error) bool {
	if err != nil && a.err == nil {
		a.err = &ArgError{Op: a.op, Arg: i, Msg: err.Error(), Err: err}
	}
	return a.err != nil
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

// value reads argument i as a JSON value (see model.Attrs).
func (a *opArgs) value(i int) any {
	if a.err != nil {
		return nil
	}
	if i >= len(a.args) {
		a.fail(i, "missing")
		return nil
	}
	var d jsonscan.Decoder
	d.Reset(a.args[i])
	v, err := model.ValueFromDecoder(&d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		a.fail(i, "%v", err)
		return nil
	}
	return v
}

// pos reads argument i as a position, an integer. Positions outside the
// document are left to the method, which fails on them as JavaScript
// does.
func (a *opArgs) pos(i int) int {
	v := a.value(i)
	if a.err != nil {
		return 0
	}
	f, ok := v.(float64)
	if !ok {
		a.fail(i, "want an integer, got %s", jsonKind(v))
		return 0
	}
	if f != math.Trunc(f) || math.Abs(f) > maxPosition {
		a.fail(i, "want an integer, got %v", f)
		return 0
	}
	return int(f)
}

// optPos is pos for an optional argument: def when absent or null.
func (a *opArgs) optPos(i, def int) int {
	if !a.has(i) {
		return def
	}
	return a.pos(i)
}

// count reads argument i as a depth or a number of levels, which must
// not be negative (JavaScript reads negative depths relative to a
// position's own depth, which these methods do not mean).
func (a *opArgs) count(i int) int {
	n := a.pos(i)
	if a.err == nil && n < 0 {
		a.fail(i, "want a depth of 0 or more, got %d", n)
	}
	return n
}

// optCount is count for an optional argument: def when absent or null.
func (a *opArgs) optCount(i, def int) int {
	if !a.has(i) {
		return def
	}
	return a.count(i)
}

func (a *opArgs) str(i int) string {
	v := a.value(i)
	if a.err != nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.fail(i, "want a string, got %s", jsonKind(v))
	}
	return s
}

func (a *opArgs) nodeType(i int) *model.NodeType {
	name := a.str(i)
	if a.err != nil {
		return nil
	}
	t := a.schema.NodeType(name)
	if t == nil {
		a.fail(i, "unknown node type %q", name)
	}
	return t
}

// attrs reads argument i as attributes: nil (the defaults) when absent
// or null.
func (a *opArgs) attrs(i int) model.Attrs {
	if !a.has(i) {
		return nil
	}
	v := a.value(i)
	if a.err != nil {
		return nil
	}
	attrs, msg := attrsOf(v)
	if msg != "" {
		a.fail(i, "%s", msg)
	}
	return attrs
}

// attrsOf converts a JSON value to attributes, or says why it cannot.
func attrsOf(v any) (model.Attrs, string) {
	if v == nil {
		return nil, ""
	}
	obj, ok := v.(model.JSONObject)
	if !ok {
		return nil, "want attributes (an object), got " + jsonKind(v)
	}
	attrs := make(model.Attrs, 0, len(obj))
	for _, p := range obj {
		attrs = append(attrs, model.Attr{Name: p.Key, Value: p.Value})
	}
	return attrs, ""
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

// raw returns argument i, recording an error when it is missing.
func (a *opArgs) raw(i int) []byte {
	if a.err != nil {
		return nil
	}
	if i >= len(a.args) {
		a.fail(i, "missing")
		return nil
	}
	return a.args[i]
}

func (a *opArgs) node(i int) *model.Node {
	raw := a.raw(i)
	if a.err != nil {
		return nil
	}
	n, err := a.schema.NodeFromJSON(raw)
	a.failed(i, err)
	return n
}

func (a *opArgs) mark(i int) *model.Mark {
	raw := a.raw(i)
	if a.err != nil {
		return nil
	}
	m, err := a.schema.MarkFromJSON(raw)
	a.failed(i, err)
	return m
}

// markOrType reads argument i as a mark's JSON or a mark type's name.
func (a *opArgs) markOrType(i int) (*model.Mark, *model.MarkType) {
	raw := a.raw(i)
	if a.err != nil {
		return nil, nil
	}
	if kind, err := peekKind(raw); a.failed(i, err) || kind != jsonscan.String {
		return a.mark(i), nil
	}
	name := a.str(i)
	t := a.schema.MarkType(name)
	if t == nil {
		a.fail(i, "unknown mark type %q", name)
	}
	return nil, t
}

// list reads argument i as an array of raw elements.
func (a *opArgs) list(i int, what string) []json.RawMessage {
	raw := a.raw(i)
	if a.err != nil {
		return nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		a.fail(i, "want an array of %s", what)
	}
	return elems
}

// marks reads argument i as an array of marks; nil when absent or null.
func (a *opArgs) marks(i int) []*model.Mark {
	if !a.has(i) {
		return nil
	}
	raws := a.list(i, "marks")
	marks := make([]*model.Mark, 0, len(raws))
	for _, raw := range raws {
		m, err := a.schema.MarkFromJSON(raw)
		if a.failed(i, err) {
			return nil
		}
		marks = append(marks, m)
	}
	return marks
}

// slice reads argument i as a slice; empty when absent or null.
func (a *opArgs) slice(i int) model.Slice {
	if !a.has(i) || a.err != nil {
		return model.EmptySlice
	}
	s, err := a.schema.SliceFromJSON(a.args[i])
	a.failed(i, err)
	return s
}

// content reads argument i as a fragment: an array of nodes or one node.
func (a *opArgs) content(i int) model.Fragment {
	raw := a.raw(i)
	if a.err != nil {
		return model.Fragment{}
	}
	if kind, err := peekKind(raw); a.failed(i, err) || kind != jsonscan.Array {
		if n := a.node(i); a.err == nil {
			return model.FragmentOf(n)
		}
		return model.Fragment{}
	}
	raws := a.list(i, "nodes")
	nodes := make([]*model.Node, 0, len(raws))
	for _, raw := range raws {
		n, err := a.schema.NodeFromJSON(raw)
		if a.failed(i, err) {
			return model.Fragment{}
		}
		nodes = append(nodes, n)
	}
	return model.NewFragment(nodes)
}

// nodeRange reads argument i as {"from", "to", "depth"}, resolved in the
// document. The depth must be one both positions have.
func (a *opArgs) nodeRange(i int) *model.NodeRange {
	raw := a.raw(i)
	if a.err != nil {
		return nil
	}
	var r struct {
		From, To, Depth *json.Number
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil || r.From == nil || r.To == nil || r.Depth == nil {
		a.fail(i, `want a range {"from": …, "to": …, "depth": …}`)
		return nil
	}
	var vals [3]int
	for j, n := range []*json.Number{r.From, r.To, r.Depth} {
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxPosition {
			a.fail(i, "range: want integers, got %s", n.String())
			return nil
		}
		vals[j] = int(f)
	}
	from, err := a.doc.Resolve(vals[0])
	if err == nil {
		var to *model.ResolvedPos
		if to, err = a.doc.Resolve(vals[1]); err == nil {
			if depth := vals[2]; depth < 0 || depth > from.Depth || depth > to.Depth {
				a.fail(i, "range depth %d is not between 0 and the depth of both positions", depth)
				return nil
			}
			return &model.NodeRange{From: from, To: to, Depth: vals[2]}
		}
	}
	a.err = err // a position out of range fails as in JavaScript
	return nil
}

// wrappers reads argument i as [{"type", "attrs"}], with null entries
// when nulls (typesAfter, which may also be absent or null).
func (a *opArgs) wrappers(i int, nulls bool) []Wrapper {
	if a.err != nil {
		return nil
	}
	if !a.has(i) {
		if !nulls {
			a.fail(i, `want an array of {"type", "attrs"}`)
		}
		return nil
	}
	v := a.value(i)
	list, ok := v.([]any)
	if a.err != nil || !ok {
		a.fail(i, `want an array of {"type", "attrs"}, got %s`, jsonKind(v))
		return nil
	}
	out := make([]Wrapper, len(list))
	for j, e := range list {
		if e == nil && nulls {
			continue
		}
		obj, ok := e.(model.JSONObject)
		if !ok {
			a.fail(i, `element %d: want {"type", "attrs"}, got %s`, j, jsonKind(e))
			return nil
		}
		name, _ := obj.Get("type")
		s, ok := name.(string)
		if !ok {
			a.fail(i, `element %d: want a node type name in "type"`, j)
			return nil
		}
		t := a.schema.NodeType(s)
		if t == nil {
			a.fail(i, "element %d: unknown node type %q", j, s)
			return nil
		}
		av, _ := obj.Get("attrs")
		attrs, msg := attrsOf(av)
		if msg != "" {
			a.fail(i, "element %d: %s", j, msg)
			return nil
		}
		out[j] = Wrapper{Type: t, Attrs: attrs}
	}
	return out
}
