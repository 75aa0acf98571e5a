package model

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
)

// Reading documents from JSON. The decoder goes straight from bytes to
// nodes, reproducing what JSON.parse followed by prosemirror-model's
// Node.fromJSON, Mark.fromJSON, Fragment.fromJSON and Slice.fromJSON do,
// including their JavaScript loose typing:
//
//   - a value's truthiness decides (`if (!json)`, `if (json.marks)`), so
//     null, false, 0 and "" count as absent where JS tests them;
//   - a truthy value that is not an object has no properties, so the number
//     5 read as a node is a node of type "undefined";
//   - type names are looked up with String() coercion (["text"] is text);
//   - attributes are read as `attrs[name]`: a string or array as attrs
//     gives its characters or elements for index-named attributes and its
//     length for an attribute named "length";
//   - errors are raised in the order the JS evaluates (marks before text,
//     content before the type lookup, attrs last), whatever the key order
//     of the JSON; of duplicate keys the last wins.
//
// Deliberate differences, since JS behaviour there is meaningless:
// properties JS would inherit from a prototype (an attribute named
// "constructor" or "toString" missing from attrs gets a function in JS)
// are treated as absent; Slice openStart/openEnd must be non-negative
// integers (JS keeps any number); nesting is limited (see jsonscan).

// JSONError is document JSON that is well-formed but that prosemirror-model
// rejects. Msg is the message the JS throws (or, where JS accepts nonsense,
// a message in the same style); Path says where, as in
// `content[3].marks[0].type` ("" for the value itself).
type JSONError struct {
	Msg  string
	Path string
}

func (e *JSONError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Msg + " (at " + e.Path + ")"
}

// Under returns a copy of e located inside field seg of an enclosing
// value, e.g. Under("slice") turns "content[0]" into "slice.content[0]"
// (and Under("steps[2]") "x" into "steps[2].x").
func (e *JSONError) Under(seg string) *JSONError {
	c := *e
	return c.under(seg)
}

// under puts seg in front of e's path and returns e.
func (e *JSONError) under(seg string) *JSONError {
	switch {
	case e.Path == "":
		e.Path = seg
	case e.Path[0] == '[':
		e.Path = seg + e.Path
	default:
		e.Path = seg + "." + e.Path
	}
	return e
}

func jsonErr(msg, path string) *JSONError { return &JSONError{Msg: msg, Path: path} }

func indexSeg(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// NodeFromJSON reads a node from its JSON form (Node.toJSON), as
// Node.fromJSON(schema, JSON.parse(data)) does. Malformed JSON gives a
// *jsonscan.SyntaxError; JSON that prosemirror-model rejects a *JSONError.
func (s *Schema) NodeFromJSON(data []byte) (*Node, error) {
	d := jsonscan.NewDecoder(data)
	n, err := s.NodeFromDecoder(d)
	if err = finishDecode(d, err); err != nil {
		return nil, err
	}
	return n, nil
}

// MarkFromJSON reads a mark from its JSON form, as Mark.fromJSON does.
func (s *Schema) MarkFromJSON(data []byte) (*Mark, error) {
	d := jsonscan.NewDecoder(data)
	m, err := s.MarkFromDecoder(d)
	if err = finishDecode(d, err); err != nil {
		return nil, err
	}
	return m, nil
}

// SliceFromJSON reads a slice from its JSON form, as Slice.fromJSON does:
// null (or any falsy value) is the empty slice.
func (s *Schema) SliceFromJSON(data []byte) (Slice, error) {
	d := jsonscan.NewDecoder(data)
	sl, err := s.SliceFromDecoder(d)
	if err = finishDecode(d, err); err != nil {
		return Slice{}, err
	}
	return sl, nil
}

// finishDecode checks that only whitespace follows the value. As JSON.parse
// runs before fromJSON, a syntax error after the value wins over a
// semantic one (syntax errors inside the value were found while reading it).
func finishDecode(d *jsonscan.Decoder, err error) error {
	if err == nil {
		return d.End()
	}
	if _, ok := err.(*JSONError); ok {
		if serr := d.End(); serr != nil {
			return serr
		}
	}
	return err
}

// NodeFromDecoder reads one node from d (see NodeFromJSON). On a
// *JSONError the whole value has been read, so that the caller can go on;
// after any other error d's position is unspecified.
func (s *Schema) NodeFromDecoder(d *jsonscan.Decoder) (*Node, error) {
	nd := newNodeDecoder(s, d)
	return nd.node()
}

// MarkFromDecoder reads one mark from d (see MarkFromJSON and
// NodeFromDecoder).
func (s *Schema) MarkFromDecoder(d *jsonscan.Decoder) (*Mark, error) {
	nd := newNodeDecoder(s, d)
	return nd.mark()
}

// SliceFromDecoder reads one slice from d (see SliceFromJSON and
// NodeFromDecoder).
func (s *Schema) SliceFromDecoder(d *jsonscan.Decoder) (Slice, error) {
	nd := newNodeDecoder(s, d)
	return nd.slice()
}

// The keys of node, mark and slice objects.
var nodeKeys = jsonscan.NewKeys("type", "marks", "content", "text", "attrs", "openStart", "openEnd")

const (
	keyType = iota
	keyMarks
	keyContent
	keyText
	keyAttrs
	keyOpenStart
	keyOpenEnd
)

// nodeType returns the node type named name (schema.nodes[name]).
func (nd *nodeDecoder) nodeType(name []byte) *NodeType {
	if len(nd.s.Nodes) > 16 {
		return nd.s.nodesByName[string(name)]
	}
	for _, t := range nd.s.Nodes {
		if len(t.Name) == len(name) && t.Name == string(name) {
			return t
		}
	}
	return nil
}

// markType returns the mark type named name (schema.marks[name]).
func (nd *nodeDecoder) markType(name []byte) *MarkType {
	if len(nd.s.Marks) > 16 {
		return nd.s.marksByName[string(name)]
	}
	for _, t := range nd.s.Marks {
		if len(t.Name) == len(name) && t.Name == string(name) {
			return t
		}
	}
	return nil
}

// nodeDecoder holds the state of one decoding: the scanner and stacks
// shared by all levels, so that child and mark lists are built in place
// and copied once into slices of the right size.
type nodeDecoder struct {
	s        *Schema
	d        *jsonscan.Decoder
	textType *NodeType
	nodes    []*Node
	marks    []*Mark
	sets     [4][]*Mark // recently built mark sets, reused when equal
	nextSet  int
	given    Attrs // scratch for attribute values read from an object

	setCache rawCache[[]*Mark] // mark arrays seen

	slab  []Node          // nodes to hand out
	lists []*Node         // space for child lists
	texts strings.Builder // space for strings
}

// Nodes, child lists and strings are carved out of larger blocks, which
// saves most allocations and GC work. A block lives as long as one of its
// nodes (or lists, or strings) does, so a document that is edited for a
// long time may keep up to the memory of the document as it was decoded.
// Blocks are sized by the input left to read, so that small inputs (a
// step's slice) take little.

// allocNode returns a zero Node to fill in (see newNode for the size).
func (nd *nodeDecoder) allocNode() *Node {
	if len(nd.slab) == 0 {
		nd.slab = make([]Node, min(max((len(nd.d.Data())-nd.d.Pos())/64, 2), 256))
	}
	n := &nd.slab[0]
	nd.slab = nd.slab[1:]
	return n
}

// nodeList returns a copy of nodes, with no room to append.
func (nd *nodeDecoder) nodeList(nodes []*Node) []*Node {
	if len(nodes) > cap(nd.lists) {
		nd.lists = make([]*Node, 0, max(len(nodes), min((len(nd.d.Data())-nd.d.Pos())/256, 1024)))
	}
	out := append(nd.lists, nodes...)
	nd.lists = out[len(out):]
	return out[:len(out):len(out)]
}

// str returns b as a string.
func (nd *nodeDecoder) str(b []byte) string {
	if len(b) > 512 {
		return string(b)
	}
	if nd.texts.Cap()-nd.texts.Len() < len(b) {
		// Strings take at most the input left (but for U+FFFD replacing
		// single bad bytes).
		nd.texts = strings.Builder{}
		nd.texts.Grow(max(min(len(nd.d.Data())-nd.d.Pos(), 16384), len(b)))
	}
	start := nd.texts.Len()
	nd.texts.Write(b)
	return nd.texts.String()[start:]
}

func newNodeDecoder(s *Schema, d *jsonscan.Decoder) *nodeDecoder {
	return &nodeDecoder{s: s, d: d, textType: s.textNodeType()}
}

// textNodeType returns the schema's text type (schema.nodes.text).
func (s *Schema) textNodeType() *NodeType {
	if s.textType != nil {
		return s.textType
	}
	return s.nodesByName["text"]
}

// truthy reads a value of kind k and returns its JavaScript truthiness.
func (nd *nodeDecoder) truthy(k jsonscan.Kind) (bool, error) {
	d := nd.d
	switch k {
	case jsonscan.Null:
		return false, d.ReadNull()
	case jsonscan.False, jsonscan.True:
		return d.ReadBool()
	case jsonscan.Number:
		f, _, err := d.ReadNumber()
		return f != 0, err
	case jsonscan.String:
		b, err := d.ReadStringBytes()
		return len(b) > 0, err
	}
	return true, d.Skip()
}

// Keys as JSON.stringify writes them, as little-endian words: the first
// key of an object and the others (after a comma).
var (
	firstTypeWord = leWord(`"type":"`)
	typeWord      = leWord(`,"type":`)
	textWord      = leWord(`,"text":`)
	marksWord     = leWord(`,"marks"`)
	attrsWord     = leWord(`,"attrs"`)
	contentWord   = leWord(`,"conten`)
)

func leWord(s string) uint64 { return binary.LittleEndian.Uint64([]byte(s)) }

// nextKey reads the next key of a node, mark or slice object and returns
// its index in nodeKeys (-1 for others). The keys that toJSON writes are
// recognised from the raw input; anything else goes the general way.
func (nd *nodeDecoder) nextKey(first bool) (int, bool, error) {
	if nd.d.TryEndObject() {
		return -1, false, nil
	}
	data, p := nd.d.Data(), nd.d.Pos()
	if p+11 <= len(data) {
		w := binary.LittleEndian.Uint64(data[p:])
		key, n := -1, 0
		switch {
		case first:
			if w == firstTypeWord {
				key, n = keyType, 7
			}
		case w == textWord:
			key, n = keyText, 8
		case w == typeWord:
			key, n = keyType, 8
		case w == marksWord && data[p+8] == ':':
			key, n = keyMarks, 9
		case w == attrsWord && data[p+8] == ':':
			key, n = keyAttrs, 9
		case w == contentWord && string(data[p+8:p+11]) == `t":`:
			key, n = keyContent, 11
		}
		if n > 0 {
			nd.d.Advance(n)
			return key, true, nil
		}
	}
	key, _, ok, err := nd.d.NextKeyIndex(nodeKeys)
	return key, ok, err
}

// typeName reads a "type" value and returns the property key JS makes of
// it (String(value)). For the common string case, the returned bytes are
// only valid until the next read.
func (nd *nodeDecoder) typeName() (name []byte, err error) {
	data, p := nd.d.Data(), nd.d.Pos()
	if p < len(data) && data[p] == '"' {
		if q := jsonscan.SkipPlain(data, p+1); q < len(data) && data[q] == '"' {
			nd.d.Advance(q + 1 - p)
			return data[p+1 : q], nil
		}
	}
	k, err := nd.d.Peek()
	if err != nil {
		return nil, err
	}
	if k == jsonscan.String {
		return nd.d.ReadStringBytes()
	}
	v, err := ValueFromDecoder(nd.d)
	if err != nil {
		return nil, err
	}
	return []byte(jsString(v)), nil
}

// nodeFields collects the properties of a node object read so far.
type nodeFields struct {
	typeSet  bool
	isText   bool      // json.type == "text"
	nodeType *NodeType // schema.nodes[json.type], nil when unknown
	typeName string    // String(json.type), kept only when unknown

	marks    []*Mark
	marksErr *JSONError

	content    Fragment
	contentErr *JSONError

	textCP    jsonscan.Checkpoint
	textSet   bool // the "text" key is present
	textRead  bool // text holds its value (false: skipped, read again if needed)
	textStr   bool // the value is a string
	textUnits int  // the UTF-16 length of text, -1 if not known
	text      string

	attrsCP  jsonscan.Checkpoint
	attrsSet bool
	attrsFor *NodeType // the type attrs and attrsErr were computed for
	attrs    Attrs
	attrsErr error
}

// node reads one value as Node.fromJSON does.
func (nd *nodeDecoder) node() (*Node, error) {
	d := nd.d
	k := jsonscan.Object
	if data, p := d.Data(), d.Pos(); p >= len(data) || data[p] != '{' {
		var err error
		if k, err = d.Peek(); err != nil {
			return nil, err
		}
	}
	var f nodeFields
	if k != jsonscan.Object {
		t, err := nd.truthy(k)
		if err != nil {
			return nil, err
		}
		if !t {
			return nil, jsonErr("Invalid input for Node.fromJSON", "")
		}
		// A truthy non-object has none of the properties read below.
		return nd.finishNode(&f)
	}
	if !d.TryBeginObject() {
		if err := d.BeginObject(); err != nil {
			return nil, err
		}
	}
	first := true
	// The type comes first in what toJSON writes: read it right away.
	if data, p := d.Data(), d.Pos(); p+13 <= len(data) && binary.LittleEndian.Uint64(data[p:]) == firstTypeWord {
		if string(data[p+8:p+13]) == `text"` {
			f.typeSet, f.isText, f.nodeType = true, true, nd.textType
			d.Advance(13)
			first = false
		} else if q := jsonscan.SkipPlain(data, p+8); q < len(data) && data[q] == '"' {
			nd.setType(&f, data[p+8:q])
			d.Advance(q + 1 - p)
			first = false
		}
	}
	if f.isText && !first {
		// Most nodes are text: {"type":"text","marks":[...],"text":"..."}.
		data, p := d.Data(), d.Pos()
		if p+9 <= len(data) && string(data[p:p+9]) == `,"marks":` {
			d.Advance(9)
			if err := nd.marksField(&f); err != nil {
				return nil, err
			}
			p = d.Pos()
		}
		if p+9 <= len(data) && binary.LittleEndian.Uint64(data[p:]) == textWord && data[p+8] == '"' {
			if q := jsonscan.SkipPlain(data, p+9); q < len(data) && data[q] == '"' {
				// Plain ASCII.
				f.textSet, f.textRead, f.textStr, f.textUnits = true, true, true, q-(p+9)
				f.text = nd.str(data[p+9 : q])
				d.Advance(q + 1 - p)
			} else {
				d.Advance(8)
				f.textSet = true
				if err := nd.textField(&f); err != nil {
					return nil, err
				}
			}
			if d.TryEndObject() {
				return nd.finishNode(&f)
			}
		}
	}
	for ; ; first = false {
		key, ok, err := nd.nextKey(first)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch key {
		case keyType:
			name, err := nd.typeName()
			if err != nil {
				return nil, err
			}
			nd.setType(&f, name)
		case keyMarks:
			err = nd.marksField(&f)
		case keyContent:
			err = nd.contentField(&f)
		case keyText:
			err = nd.textKey(&f)
		case keyAttrs:
			err = nd.attrsField(&f)
		default:
			err = d.Skip()
		}
		if err != nil {
			return nil, err
		}
	}
	return nd.finishNode(&f)
}

// contentField reads the "content" property of a node.
func (nd *nodeDecoder) contentField(f *nodeFields) (err error) {
	f.content, f.contentErr, err = nd.fragment()
	if f.contentErr != nil {
		f.contentErr.under("content")
	}
	return err
}

// textKey reads the "text" property of a node: now if the node is (so
// far) a text node, else later if it turns out to be one.
func (nd *nodeDecoder) textKey(f *nodeFields) error {
	f.textSet, f.textRead, f.textStr, f.text = true, false, false, ""
	if f.typeSet && !f.isText {
		f.textCP = nd.d.Checkpoint()
		return nd.d.Skip()
	}
	return nd.textField(f)
}

// attrsField reads the "attrs" property of a node: now if its type is
// known, else once it is.
func (nd *nodeDecoder) attrsField(f *nodeFields) error {
	f.attrsSet, f.attrsCP, f.attrsFor = true, nd.d.Checkpoint(), nil
	if f.nodeType == nil || f.isText {
		return nd.d.Skip()
	}
	// Compute now: the given values live in a scratch buffer that the
	// children will reuse. Errors wait for their turn.
	return nd.nodeAttrs(f, f.nodeType)
}

// setType records the type of a node object, given String(json.type).
func (nd *nodeDecoder) setType(f *nodeFields, name []byte) {
	f.typeSet = true
	f.isText = string(name) == "text"
	if f.isText {
		f.nodeType = nd.textType
	} else {
		f.nodeType = nd.nodeType(name)
	}
	f.typeName = ""
	if f.nodeType == nil {
		f.typeName = string(name)
	}
}

func (nd *nodeDecoder) textField(f *nodeFields) error {
	f.textRead = true
	k, err := nd.d.Peek()
	if err != nil {
		return err
	}
	if k != jsonscan.String {
		return nd.d.Skip()
	}
	b, err := nd.d.ReadStringBytes()
	f.textStr, f.text, f.textUnits = true, nd.str(b), nd.d.UTF16Len()
	return err
}

// finishNode makes the node once its object has been read, raising
// errors in the order of Node.fromJSON.
func (nd *nodeDecoder) finishNode(f *nodeFields) (*Node, error) {
	if f.marksErr != nil {
		return nil, f.marksErr
	}
	if f.isText {
		if f.textSet && !f.textRead {
			if err := nd.reread(f.textCP, func() error { return nd.textField(f) }); err != nil {
				return nil, err
			}
		}
		if !f.textStr {
			return nil, jsonErr("Invalid text node in JSON", "text")
		}
		if f.text == "" {
			return nil, jsonErr(errEmptyText.Error(), "text")
		}
		n := nd.allocNode()
		n.Type, n.Attrs, n.Marks, n.Text = nd.textType, nd.textType.defaultAttrs, f.marks, f.text
		if n.size = f.textUnits; n.size < 0 {
			n.size = textLen(f.text)
		}
		return n, nil
	}
	if f.contentErr != nil {
		return nil, f.contentErr
	}
	t := f.nodeType
	if !f.typeSet {
		t = nd.s.nodesByName["undefined"]
		f.typeName = "undefined"
	}
	if t == nil {
		path := "type"
		if !f.typeSet {
			path = ""
		}
		return nil, jsonErr("Unknown node type: "+f.typeName, path)
	}
	if t.IsText {
		// Unreachable: only "text" names the text type, and it is handled above.
		return nil, jsonErr("NodeType.create can't construct text nodes", "type")
	}
	switch {
	case !f.attrsSet:
		f.attrs, f.attrsErr = t.ComputeAttrs(nil)
	case f.attrsFor != t:
		if err := nd.reread(f.attrsCP, func() error { return nd.nodeAttrs(f, t) }); err != nil {
			return nil, err
		}
	}
	if f.attrsErr != nil {
		return nil, jsonErr(f.attrsErr.Error(), "attrs")
	}
	n := nd.allocNode()
	n.Type, n.Attrs, n.Content, n.Marks = t, f.attrs, f.content, f.marks
	if t.IsLeaf() {
		n.size = 1
	} else {
		n.size = f.content.size + 2
	}
	return n, nil
}

// nodeAttrs reads an attrs value and computes the attributes of a node of
// type t from it.
func (nd *nodeDecoder) nodeAttrs(f *nodeFields, t *NodeType) error {
	given, err := nd.attrs(t.Attrs)
	if err != nil {
		return err
	}
	f.attrsFor = t
	f.attrs, f.attrsErr = t.ComputeAttrs(given)
	return nil
}

// reread reads a value again from a checkpoint with read, then returns
// to where the decoder was.
func (nd *nodeDecoder) reread(cp jsonscan.Checkpoint, read func() error) error {
	end := nd.d.Checkpoint()
	nd.d.Restore(cp)
	err := read()
	nd.d.Restore(end)
	return err
}

// marksField reads the "marks" property of a node.
func (nd *nodeDecoder) marksField(f *nodeFields) error {
	d := nd.d
	f.marks, f.marksErr = nil, nil
	k, err := d.Peek()
	if err != nil {
		return err
	}
	if k != jsonscan.Array {
		t, err := nd.truthy(k)
		if t {
			f.marksErr = jsonErr("Invalid mark data for Node.fromJSON", "marks")
		}
		return err
	}
	data, start, depth := d.Data(), d.Pos(), d.Depth()
	if set, n := nd.setCache.get(data[start:], depth); n > 0 {
		f.marks = set
		d.Advance(n)
		return nil
	}
	if err := d.BeginArray(); err != nil {
		return err
	}
	base := len(nd.marks)
	defer func() { nd.marks = nd.marks[:base] }()
	for i := 0; ; i++ {
		ok, err := d.NextElem()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if f.marksErr != nil {
			// json.marks.map stops at the first throw.
			if err := d.Skip(); err != nil {
				return err
			}
			continue
		}
		m, err := nd.mark()
		if err != nil {
			je, ok := err.(*JSONError)
			if !ok {
				return err
			}
			f.marksErr = je.under(indexSeg("marks", i))
			continue
		}
		nd.marks = append(nd.marks, m)
	}
	if f.marksErr == nil {
		f.marks = nd.markSet(nd.marks[base:])
		nd.setCache.put(data[start:], d.Pos()-start, depth, f.marks)
	}
	return nil
}

// rawCache remembers values decoded from recent pieces of the input by
// their bytes, as the same bytes decode to the same immutable value (here
// mark sets, which repeat a lot). It is direct-mapped, by a hash of some
// bytes at the start. An entry serves only at a nesting depth no deeper
// than the one it was read at, so that the depth limit holds.
type rawCache[T any] struct {
	raw   [16][]byte
	depth [16]int
	val   [16]T
}

// rawSlot returns the slot for a piece of input starting data (with what
// follows), or -1 when data is too short to bother.
func rawSlot(data []byte) int {
	if len(data) < 18 {
		return -1
	}
	return int(binary.LittleEndian.Uint64(data[10:]) * 0x9E3779B97F4A7C15 >> 60)
}

// get returns the value of the entry data starts with, and its length (0
// when there is none).
func (c *rawCache[T]) get(data []byte, depth int) (v T, n int) {
	i := rawSlot(data)
	if i < 0 {
		return v, 0
	}
	if r := c.raw[i]; len(r) != 0 && len(r) <= len(data) && depth <= c.depth[i] && string(data[:len(r)]) == string(r) {
		return c.val[i], len(r)
	}
	return v, 0
}

// put records that the first n bytes of data, read at depth, hold v.
func (c *rawCache[T]) put(data []byte, n, depth int, v T) {
	if i := rawSlot(data); i >= 0 {
		c.raw[i], c.depth[i], c.val[i] = data[:n], depth, v
	}
}

// markSet returns Mark.setFrom(marks) as a new slice, or a recently built
// equal one (mark sets are immutable, so nodes may share them).
func (nd *nodeDecoder) markSet(marks []*Mark) []*Mark {
	if len(marks) == 0 {
		return nil
	}
	sorted := true
	for i := 1; i < len(marks); i++ {
		if marks[i].Type.Rank < marks[i-1].Type.Rank {
			sorted = false
			break
		}
	}
	if sorted {
		for _, set := range nd.sets {
			if slices.Equal(set, marks) {
				return set
			}
		}
	}
	set := MarkSetFrom(marks)
	nd.sets[nd.nextSet] = set
	nd.nextSet = (nd.nextSet + 1) % len(nd.sets)
	return set
}

// fragment reads a value as Fragment.fromJSON does. The *JSONError return
// is a semantic error (the value has been read); err is a syntax error.
func (nd *nodeDecoder) fragment() (Fragment, *JSONError, error) {
	d := nd.d
	k, err := d.Peek()
	if err != nil {
		return Fragment{}, nil, err
	}
	if k != jsonscan.Array {
		t, err := nd.truthy(k)
		if t {
			return Fragment{}, jsonErr("Invalid input for Fragment.fromJSON", ""), err
		}
		return Fragment{}, nil, err
	}
	if err := d.BeginArray(); err != nil {
		return Fragment{}, nil, err
	}
	base := len(nd.nodes)
	defer func() { nd.nodes = nd.nodes[:base] }()
	var semErr *JSONError
	for i := 0; ; i++ {
		// Fast path for NextElem between objects.
		if data, p := d.Data(), d.Pos(); i > 0 && p+1 < len(data) && data[p] == ',' && data[p+1] == '{' {
			d.Advance(1)
		} else if ok, err := d.NextElem(); err != nil {
			return Fragment{}, nil, err
		} else if !ok {
			break
		}
		if semErr != nil {
			if err := d.Skip(); err != nil {
				return Fragment{}, nil, err
			}
			continue
		}
		n, err := nd.node()
		if err != nil {
			je, ok := err.(*JSONError)
			if !ok {
				return Fragment{}, nil, err
			}
			semErr = je.under("[" + strconv.Itoa(i) + "]")
			continue
		}
		nd.nodes = append(nd.nodes, n)
	}
	if semErr != nil {
		return Fragment{}, semErr, nil
	}
	if len(nd.nodes) == base {
		return Fragment{}, nil, nil
	}
	return NewFragment(nd.nodeList(nd.nodes[base:])), nil, nil
}

// mark reads one value as Mark.fromJSON does.
func (nd *nodeDecoder) mark() (*Mark, error) {
	d := nd.d
	k, err := d.Peek()
	if err != nil {
		return nil, err
	}
	var (
		typeSet  bool
		t        *MarkType
		typeName string
		attrsSet bool
		attrsCP  jsonscan.Checkpoint
		attrsFor *MarkType
		given    Attrs
	)
	if k == jsonscan.Object {
		if !d.TryBeginObject() {
			if err := d.BeginObject(); err != nil {
				return nil, err
			}
		}
		first := true
		if data, p := d.Data(), d.Pos(); p+8 <= len(data) && binary.LittleEndian.Uint64(data[p:]) == firstTypeWord {
			if q := jsonscan.SkipPlain(data, p+8); q < len(data) && data[q] == '"' {
				typeSet, t = true, nd.markType(data[p+8:q])
				if t == nil {
					typeName = string(data[p+8 : q])
				}
				d.Advance(q + 1 - p)
				first = false
			}
		}
		for ; ; first = false {
			key, ok, err := nd.nextKey(first)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			switch key {
			case keyType:
				name, err := nd.typeName()
				if err != nil {
					return nil, err
				}
				typeSet = true
				t = nd.markType(name)
				typeName = ""
				if t == nil {
					typeName = string(name)
				}
			case keyAttrs:
				attrsSet, attrsCP, attrsFor, given = true, d.Checkpoint(), nil, nil
				if t == nil {
					err = d.Skip()
				} else {
					attrsFor = t
					given, err = nd.attrs(t.Attrs)
				}
				if err != nil {
					return nil, err
				}
			default:
				if err := d.Skip(); err != nil {
					return nil, err
				}
			}
		}
	} else {
		truthy, err := nd.truthy(k)
		if err != nil {
			return nil, err
		}
		if !truthy {
			return nil, jsonErr("Invalid input for Mark.fromJSON", "")
		}
	}
	if !typeSet {
		t, typeName = nd.s.marksByName["undefined"], "undefined"
	}
	if t == nil {
		path := "type"
		if !typeSet {
			path = ""
		}
		return nil, jsonErr("There is no mark type "+typeName+" in this schema", path)
	}
	if attrsSet && attrsFor != t {
		err := nd.reread(attrsCP, func() (err error) {
			given, err = nd.attrs(t.Attrs)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	m, err := t.Create(given)
	if err != nil {
		return nil, jsonErr(err.Error(), "attrs")
	}
	return m, nil
}

// attrs reads an "attrs" value and returns what computeAttrs will see of
// it for the attributes spec: nil for JS null (absent or null attrs), else
// the values `attrs[name]` gives for the attributes' names.
func (nd *nodeDecoder) attrs(spec []*Attribute) (Attrs, error) {
	d := nd.d
	if len(spec) == 0 {
		return nil, d.Skip() // nothing is looked up
	}
	k, err := d.Peek()
	if err != nil {
		return nil, err
	}
	if k != jsonscan.Object {
		v, err := ValueFromDecoder(d)
		if err != nil {
			return nil, err
		}
		return attrsFromValue(spec, v, true), nil
	}
	if err := d.BeginObject(); err != nil {
		return nil, err
	}
	var small [8]any
	var smallSeen [8]bool
	vals, seen := small[:], smallSeen[:]
	if len(spec) > len(small) {
		vals, seen = make([]any, len(spec)), make([]bool, len(spec))
	}
	for first := true; ; first = false {
		key, ok, err := nd.plainKey(first)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		i := attrIndex(spec, key)
		if i < 0 {
			if err := d.Skip(); err != nil {
				return nil, err
			}
			continue
		}
		if vals[i], err = nd.value(); err != nil {
			return nil, err
		}
		seen[i] = true
	}
	// computeAttrs copies what it needs, so given can be a scratch buffer.
	given := nd.given[:0]
	if given == nil {
		given = make(Attrs, 0, max(len(spec), 4))
	}
	for i, a := range spec {
		if seen[i] {
			given = append(given, Attr{a.Name, vals[i]})
		}
	}
	nd.given = given
	return given, nil
}

// plainKey is NextKey with a fast path for compact JSON and plain keys.
func (nd *nodeDecoder) plainKey(first bool) ([]byte, bool, error) {
	data, p := nd.d.Data(), nd.d.Pos()
	q := p
	if !first && q < len(data) && data[q] == ',' {
		q++
	}
	if (first || q > p) && q < len(data) && data[q] == '"' {
		if e := jsonscan.SkipPlain(data, q+1); e+1 < len(data) && data[e] == '"' && data[e+1] == ':' {
			nd.d.Advance(e + 2 - p)
			return data[q+1 : e], true, nil
		}
	}
	return nd.d.NextKey()
}

// value is ValueFromDecoder with fast paths for plain strings and null.
func (nd *nodeDecoder) value() (any, error) {
	data, p := nd.d.Data(), nd.d.Pos()
	if p < len(data) {
		switch data[p] {
		case '"':
			if q := jsonscan.SkipPlain(data, p+1); q < len(data) && data[q] == '"' {
				nd.d.Advance(q + 1 - p)
				return nd.str(data[p+1 : q]), nil
			}
		case 'n':
			if p+4 <= len(data) && string(data[p:p+4]) == "null" {
				nd.d.Advance(4)
				return nil, nil
			}
		}
	}
	return ValueFromDecoder(nd.d)
}

func attrIndex(spec []*Attribute, key []byte) int {
	for i, a := range spec {
		if a.Name == string(key) {
			return i
		}
	}
	return -1
}

// requiresAttrs reports whether some attribute has no default (JS
// defaultAttrs returns null, so that a falsy attrs is looked into).
func requiresAttrs(spec []*Attribute) bool {
	for _, a := range spec {
		if !a.HasDefault {
			return true
		}
	}
	return false
}

// attrsFromValue returns what computeAttrs sees of an attrs value v
// (present tells JS undefined from null): nil for null or undefined;
// for the other falsy values (false, 0, "") every attribute gets that
// value, unless the type has defaults for all (then nil, the defaults);
// otherwise the attributes v has as own properties.
func attrsFromValue(spec []*Attribute, v any, present bool) Attrs {
	if !present || v == nil {
		return nil
	}
	if !jsTruthy(v) {
		if !requiresAttrs(spec) {
			return nil
		}
		given := make(Attrs, len(spec))
		for i, a := range spec {
			given[i] = Attr{a.Name, v}
		}
		return given
	}
	given := Attrs{}
	for _, a := range spec {
		if x, ok := jsGet(v, a.Name); ok {
			given = append(given, Attr{a.Name, x})
		}
	}
	return given
}

// jsTruthy reports whether v is truthy in JavaScript.
func jsTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// jsGet returns v[name] for a JSON value as JavaScript reads it, limited
// to own properties: object keys, and the characters (UTF-16 units),
// elements and length of strings and arrays. ok is false for undefined.
func jsGet(v any, name string) (any, bool) {
	switch x := v.(type) {
	case JSONObject:
		return x.Get(name)
	case string:
		n := textLen(x)
		if name == "length" {
			return float64(n), true
		}
		if i, ok := isArrayIndex(name); ok && int64(i) < int64(n) {
			return textSlice(x, int(i), int(i)+1), true
		}
	case []any:
		if name == "length" {
			return float64(len(x)), true
		}
		if i, ok := isArrayIndex(name); ok && int64(i) < int64(len(x)) {
			return x[i], true
		}
	}
	return nil, false
}

// slice reads one value as Slice.fromJSON does.
func (nd *nodeDecoder) slice() (Slice, error) {
	d := nd.d
	k, err := d.Peek()
	if err != nil {
		return Slice{}, err
	}
	if k != jsonscan.Object {
		// Falsy: Slice.empty. Truthy: no openStart, openEnd or content.
		_, err := nd.truthy(k)
		return Slice{}, err
	}
	if err := d.BeginObject(); err != nil {
		return Slice{}, err
	}
	var (
		open       [2]any // openStart, openEnd values (nil: absent or null)
		content    Fragment
		contentErr *JSONError
	)
	for {
		key, _, ok, err := d.NextKeyIndex(nodeKeys)
		if err != nil {
			return Slice{}, err
		}
		if !ok {
			break
		}
		switch key {
		case keyOpenStart, keyOpenEnd:
			if open[key-keyOpenStart], err = ValueFromDecoder(d); err != nil {
				return Slice{}, err
			}
		case keyContent:
			content, contentErr, err = nd.fragment()
			if err != nil {
				return Slice{}, err
			}
			if contentErr != nil {
				contentErr.under("content")
			}
		default:
			if err := d.Skip(); err != nil {
				return Slice{}, err
			}
		}
	}
	// `json.openStart || 0`, then both must be numbers.
	var depths [2]int
	for i, v := range open {
		if !jsTruthy(v) {
			continue
		}
		if _, ok := v.(float64); !ok {
			return Slice{}, jsonErr("Invalid input for Slice.fromJSON", openNames[i])
		}
	}
	for i, v := range open {
		f, ok := v.(float64)
		if !ok || f == 0 {
			continue
		}
		if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return Slice{}, jsonErr("Invalid input for Slice.fromJSON: "+openNames[i]+" must be a non-negative integer, not "+jsString(f), openNames[i])
		}
		depths[i] = int(f)
	}
	if contentErr != nil {
		return Slice{}, contentErr
	}
	return NewSlice(content, depths[0], depths[1]), nil
}

var openNames = [2]string{"openStart", "openEnd"}

// ValueFromDecoder reads any JSON value as an attribute value (nil, bool,
// float64, string, []any or JSONObject), as JSON.parse builds it: object
// keys in JavaScript property order, the last of duplicate keys winning,
// numbers out of range as ±Inf.
func ValueFromDecoder(d *jsonscan.Decoder) (any, error) {
	k, err := d.Peek()
	if err != nil {
		return nil, err
	}
	switch k {
	case jsonscan.Null:
		return nil, d.ReadNull()
	case jsonscan.True, jsonscan.False:
		return d.ReadBool()
	case jsonscan.Number:
		f, _, err := d.ReadNumber()
		return f, err
	case jsonscan.String:
		return d.ReadString()
	case jsonscan.Array:
		if err := d.BeginArray(); err != nil {
			return nil, err
		}
		arr := []any{}
		for {
			ok, err := d.NextElem()
			if err != nil {
				return nil, err
			}
			if !ok {
				return arr, nil
			}
			v, err := ValueFromDecoder(d)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
	}
	if err := d.BeginObject(); err != nil {
		return nil, err
	}
	var b objectBuilder
	for {
		key, ok, err := d.NextKey()
		if err != nil {
			return nil, err
		}
		if !ok {
			return b.object(), nil
		}
		name := string(key)
		v, err := ValueFromDecoder(d)
		if err != nil {
			return nil, err
		}
		b.set(name, v)
	}
}

// objectBuilder builds a JSONObject as JSON.parse does, in linear time: a
// repeated key keeps its first place and takes the last value; array-index
// keys go first in ascending order.
type objectBuilder struct {
	props   JSONObject
	index   map[string]int // key -> place in props, once there are many keys
	indexed bool           // some key is an array index
}

func (b *objectBuilder) set(key string, v any) {
	if b.index != nil {
		if i, ok := b.index[key]; ok {
			b.props[i].Value = v
			return
		}
	} else {
		for i := range b.props {
			if b.props[i].Key == key {
				b.props[i].Value = v
				return
			}
		}
		if len(b.props) >= 16 {
			b.index = make(map[string]int, 2*len(b.props))
			for i, p := range b.props {
				b.index[p.Key] = i
			}
		}
	}
	if b.index != nil {
		b.index[key] = len(b.props)
	}
	if !b.indexed {
		_, b.indexed = isArrayIndex(key)
	}
	b.props = append(b.props, JSONProp{key, v})
}

func (b *objectBuilder) object() JSONObject {
	if b.props == nil {
		return JSONObject{}
	}
	if b.indexed {
		slices.SortStableFunc(b.props, func(p, q JSONProp) int {
			pi, pok := isArrayIndex(p.Key)
			qi, qok := isArrayIndex(q.Key)
			switch {
			case pok && qok:
				return int(int64(pi) - int64(qi))
			case pok:
				return -1
			case qok:
				return 1
			}
			return 0
		})
	}
	return b.props
}

// NodeFromValue makes a node from a JSON value tree as ParseJSONValue
// returns it, following Node.fromJSON step by step. It is the slow,
// simple counterpart of NodeFromJSON, which it must agree with.
func (s *Schema) NodeFromValue(v any) (*Node, error) {
	if !jsTruthy(v) {
		return nil, jsonErr("Invalid input for Node.fromJSON", "")
	}
	var marks []*Mark
	if mv, _ := jsGet(v, "marks"); jsTruthy(mv) {
		arr, ok := mv.([]any)
		if !ok {
			return nil, jsonErr("Invalid mark data for Node.fromJSON", "marks")
		}
		for i, mj := range arr {
			m, err := s.markFromValue(mj)
			if err != nil {
				return nil, err.under(indexSeg("marks", i))
			}
			marks = append(marks, m)
		}
	}
	marks = MarkSetFrom(marks)
	tv, hasType := jsGet(v, "type")
	name := "undefined"
	if hasType {
		name = jsString(tv)
	}
	if name == "text" && hasType {
		text, _ := jsGet(v, "text")
		str, ok := text.(string)
		if !ok {
			return nil, jsonErr("Invalid text node in JSON", "text")
		}
		if str == "" {
			return nil, jsonErr(errEmptyText.Error(), "text")
		}
		return NewTextNode(s.textNodeType(), str, marks)
	}
	cv, _ := jsGet(v, "content")
	content, cerr := s.fragmentFromValue(cv)
	if cerr != nil {
		return nil, cerr.under("content")
	}
	t := s.nodesByName[name]
	if t == nil {
		path := "type"
		if !hasType {
			path = ""
		}
		return nil, jsonErr("Unknown node type: "+name, path)
	}
	av, hasAttrs := jsGet(v, "attrs")
	attrs, err := t.ComputeAttrs(attrsFromValue(t.Attrs, av, hasAttrs))
	if err != nil {
		return nil, jsonErr(err.Error(), "attrs")
	}
	return newNode(t, attrs, content, marks), nil
}

func (s *Schema) fragmentFromValue(v any) (Fragment, *JSONError) {
	if !jsTruthy(v) {
		return Fragment{}, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return Fragment{}, jsonErr("Invalid input for Fragment.fromJSON", "")
	}
	nodes := make([]*Node, 0, len(arr))
	for i, nv := range arr {
		n, err := s.NodeFromValue(nv)
		if err != nil {
			je, ok := err.(*JSONError)
			if !ok {
				je = jsonErr(err.Error(), "")
			}
			return Fragment{}, je.under("[" + strconv.Itoa(i) + "]")
		}
		nodes = append(nodes, n)
	}
	return NewFragment(nodes), nil
}

func (s *Schema) markFromValue(v any) (*Mark, *JSONError) {
	if !jsTruthy(v) {
		return nil, jsonErr("Invalid input for Mark.fromJSON", "")
	}
	tv, hasType := jsGet(v, "type")
	name := "undefined"
	if hasType {
		name = jsString(tv)
	}
	t := s.marksByName[name]
	if t == nil {
		path := "type"
		if !hasType {
			path = ""
		}
		return nil, jsonErr("There is no mark type "+name+" in this schema", path)
	}
	av, hasAttrs := jsGet(v, "attrs")
	m, err := t.Create(attrsFromValue(t.Attrs, av, hasAttrs))
	if err != nil {
		return nil, jsonErr(err.Error(), "attrs")
	}
	return m, nil
}
