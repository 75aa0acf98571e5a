package model

import (
	"cmp"
	"errors"
	"slices"
	"strings"
)

// Schema holds the node and mark types of a document schema. A Schema is
// immutable once built and safe for concurrent use.
type Schema struct {
	// Spec is the spec the schema was built from.
	Spec *SchemaSpec
	// Nodes lists the node types in spec order.
	Nodes []*NodeType
	// Marks lists the mark types in spec order (their rank).
	Marks []*MarkType
	// TopNodeType is the type of the default top node.
	TopNodeType *NodeType
	// LinebreakReplacement is the node type marked linebreakReplacement, or nil.
	LinebreakReplacement *NodeType

	nodesByName map[string]*NodeType
	marksByName map[string]*MarkType
	textType    *NodeType
}

// NodeType is the type of a node in a schema, allocated once per Schema.
type NodeType struct {
	// Name is the node type's name in its schema.
	Name string
	// Schema is the schema the type belongs to.
	Schema *Schema
	// Spec is the spec the type is based on.
	Spec *NodeSpec
	// Groups are the groups the type belongs to.
	Groups []string
	// Attrs are the type's attributes in spec order (JS property order).
	Attrs []*Attribute
	// IsBlock is true for block types (not inline, not text).
	IsBlock bool
	// IsText is true for the text node type.
	IsText bool
	// InlineContent is true when the type's content is inline.
	InlineContent bool
	// ContentMatch is the starting match of the type's content expression.
	ContentMatch *ContentMatch
	// MarkSet is the set of marks allowed in this node; nil when AllowsAllMarks.
	MarkSet []*MarkType
	// AllowsAllMarks is true when every mark is allowed (JS markSet == null).
	AllowsAllMarks bool

	// defaultAttrs is shared by nodes created without attrs; nil when
	// some attribute is required.
	defaultAttrs Attrs

	// The result of JS createAndFill() without arguments, computed by
	// NewSchema for every generatable type (FillBefore inserts these):
	// fill is nil when there is none, fillErr set where JS throws.
	fill      *Node
	fillErr   error
	fillState uint8 // 0 not computed, 1 computing, 2 done
}

// Attribute describes one attribute of a node or mark type.
type Attribute struct {
	// Name is the attribute's name.
	Name string
	// HasDefault tells whether the attribute has a default (otherwise it is required).
	HasDefault bool
	// Default is the default value (a JSON value, see Attrs).
	Default any
	// Validate lists the allowed JS typeof names ("string", "number",
	// "boolean", "object", "null", "undefined") from the spec's validate
	// string; nil means no validation.
	Validate []string

	owner string // name of the node or mark type, for error messages
}

// MarkType is the type of a mark in a schema, allocated once per Schema.
type MarkType struct {
	// Name is the mark type's name.
	Name string
	// Rank is the mark type's position in the schema's mark order.
	Rank int
	// Schema is the schema the type belongs to.
	Schema *Schema
	// Spec is the spec the type is based on.
	Spec *MarkSpec
	// Attrs are the type's attributes in spec order.
	Attrs []*Attribute

	excluded []*MarkType
	instance *Mark // shared mark when every attr has a default
}

// SchemaSpec is a schema spec as read from JSON (see DESIGN.md).
type SchemaSpec struct {
	// Nodes in order.
	Nodes []NamedNodeSpec
	// Marks in order.
	Marks []NamedMarkSpec
	// TopNode is the name of the top node type ("" means "doc").
	TopNode string
}

// NamedNodeSpec is one entry of SchemaSpec.Nodes.
type NamedNodeSpec struct {
	Name string
	Spec *NodeSpec
}

// NamedMarkSpec is one entry of SchemaSpec.Marks.
type NamedMarkSpec struct {
	Name string
	Spec *MarkSpec
}

// AttributeSpec is the spec of one attribute.
type AttributeSpec struct {
	Name string
	// HasDefault is false when the spec has no "default" key (required attribute).
	HasDefault bool
	Default    any
	// Validate is the validate type string such as "string|null" ("" for none).
	Validate string

	// hasValidate is set by ParseSchemaSpec for a "validate": "" key, which
	// JS turns into a check that rejects every given value.
	hasValidate bool
}

// NodeSpec is the spec of a node type. Fields mirror prosemirror-model's
// NodeSpec; absent optional strings are nil pointers where JS
// distinguishes absent from empty.
type NodeSpec struct {
	Content              string
	Marks                *string
	Group                string
	Inline               bool
	Atom                 bool
	Attrs                []AttributeSpec
	Selectable           *bool
	Draggable            bool
	Code                 bool
	Whitespace           string
	DefiningAsContext    *bool
	DefiningForContent   *bool
	Defining             bool
	Isolating            bool
	LinebreakReplacement bool
	// Extra keeps unknown keys as raw JSON, in order.
	Extra []RawProp
}

// MarkSpec is the spec of a mark type.
type MarkSpec struct {
	Attrs     []AttributeSpec
	Inclusive *bool
	Excludes  *string
	Group     string
	Spanning  *bool
	Code      bool
	// Extra keeps unknown keys as raw JSON, in order.
	Extra []RawProp
}

// RawProp is an unknown spec key with its raw JSON value.
type RawProp struct {
	Key   string
	Value []byte
}

// NewSchema builds a schema from spec. It checks the spec as the
// prosemirror-model Schema constructor does and fails with the same
// messages: a missing top node or text type, text attributes, a name used
// for both a node and a mark, content expression syntax errors,
// non-generatable nodes in a required position, linebreak replacement
// rules, unknown mark names in marks or excludes. In addition, specs
// built in Go may not repeat a node, mark or attribute name, and content
// expressions whose automata would take JavaScript seconds to build (such
// as "p{0,1000}") fail with "Content expression too complex"; where the
// JavaScript compiler recurses forever (as for "(p?){1}*"), NewSchema
// fails with "Maximum call stack size exceeded", the error JavaScript
// raises.
//
// The schema keeps spec and its node and mark specs; they must not be
// modified afterwards.
func NewSchema(spec *SchemaSpec) (*Schema, error) {
	if spec == nil {
		spec = &SchemaSpec{}
	}
	s := &Schema{
		Spec:        spec,
		nodesByName: make(map[string]*NodeType, len(spec.Nodes)),
		marksByName: make(map[string]*MarkType, len(spec.Marks)),
	}
	for _, ns := range spec.Nodes {
		if s.nodesByName[ns.Name] != nil {
			return nil, errors.New("Duplicate node type '" + ns.Name + "'")
		}
		t, err := newNodeType(ns.Name, s, ns.Spec)
		if err != nil {
			return nil, err
		}
		s.Nodes = append(s.Nodes, t)
		s.nodesByName[t.Name] = t
	}
	top := spec.TopNode
	if top == "" {
		top = "doc"
	}
	if s.nodesByName[top] == nil {
		return nil, errors.New("Schema is missing its top node type ('" + top + "')")
	}
	s.textType = s.nodesByName["text"]
	if s.textType == nil {
		return nil, errors.New("Every schema needs a 'text' type")
	}
	if len(s.textType.Attrs) > 0 {
		return nil, errors.New("The text node type should not have attributes")
	}
	for _, ms := range spec.Marks {
		if s.marksByName[ms.Name] != nil {
			return nil, errors.New("Duplicate mark type '" + ms.Name + "'")
		}
		m, err := newMarkType(ms.Name, len(s.Marks), s, ms.Spec)
		if err != nil {
			return nil, err
		}
		s.Marks = append(s.Marks, m)
		s.marksByName[m.Name] = m
	}

	// The JS iterates its node and mark objects with for...in, which
	// visits array-index names first; that order decides which error is
	// reported first and the order of group members.
	nodeOrder := jsPropertyOrder(s.Nodes, func(t *NodeType) string { return t.Name })
	markOrder := jsPropertyOrder(s.Marks, func(m *MarkType) string { return m.Name })
	parser := &contentParser{byName: s.nodesByName, order: nodeOrder}
	exprCache := make(map[string]*ContentMatch)
	for _, t := range nodeOrder {
		if s.marksByName[t.Name] != nil {
			return nil, errors.New(t.Name + " can not be both a node and a mark")
		}
		match, ok := exprCache[t.Spec.Content]
		if !ok {
			var err error
			if match, err = parser.parseContent(t.Spec.Content); err != nil {
				return nil, err
			}
			exprCache[t.Spec.Content] = match
		}
		t.ContentMatch = match
		t.InlineContent = match.InlineContent()
		if t.Spec.LinebreakReplacement {
			if s.LinebreakReplacement != nil {
				return nil, errors.New("Multiple linebreak nodes defined")
			}
			if !t.IsInline() || !t.IsLeaf() {
				return nil, errors.New("Linebreak replacement nodes must be inline leaf nodes")
			}
			s.LinebreakReplacement = t
		}
		switch marks := t.Spec.Marks; {
		case marks != nil && *marks == "_":
			t.AllowsAllMarks = true
		case marks != nil && *marks != "":
			set, err := gatherMarks(s, markOrder, strings.Split(*marks, " "))
			if err != nil {
				return nil, err
			}
			t.MarkSet = set
		case marks != nil || !t.InlineContent:
			t.MarkSet = []*MarkType{}
		default:
			t.AllowsAllMarks = true
		}
	}
	for _, m := range markOrder {
		switch excl := m.Spec.Excludes; {
		case excl == nil:
			m.excluded = []*MarkType{m}
		case *excl == "":
			m.excluded = []*MarkType{}
		default:
			set, err := gatherMarks(s, markOrder, strings.Split(*excl, " "))
			if err != nil {
				return nil, err
			}
			m.excluded = set
		}
	}
	s.TopNodeType = s.nodesByName[top]
	for _, t := range s.Nodes {
		if t.generatable() {
			t.defaultFill()
		}
	}
	return s, nil
}

// jsPropertyOrder returns items in the order JavaScript's for...in visits
// an object with their names as keys: array-index names ascending first,
// then the others in insertion order.
func jsPropertyOrder[T any](items []T, name func(T) string) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int {
		ai, aIdx := isArrayIndex(name(a))
		bi, bIdx := isArrayIndex(name(b))
		switch {
		case aIdx && bIdx:
			return cmp.Compare(ai, bi)
		case aIdx:
			return -1
		case bIdx:
			return 1
		}
		return 0
	})
	return out
}

// initAttrs builds the attribute descriptors of a type, in JS property
// order.
func initAttrs(owner string, specs []AttributeSpec) ([]*Attribute, error) {
	attrs := make([]*Attribute, 0, len(specs))
	for _, as := range specs {
		if slices.ContainsFunc(attrs, func(a *Attribute) bool { return a.Name == as.Name }) {
			return nil, errors.New("Duplicate attribute '" + as.Name + "' on type " + owner)
		}
		attrs = append(attrs, newAttribute(owner, as))
	}
	return jsPropertyOrder(attrs, func(a *Attribute) string { return a.Name }), nil
}

func newNodeType(name string, s *Schema, spec *NodeSpec) (*NodeType, error) {
	if spec == nil {
		spec = &NodeSpec{}
	}
	attrs, err := initAttrs(name, spec.Attrs)
	if err != nil {
		return nil, err
	}
	t := &NodeType{Name: name, Schema: s, Spec: spec, Attrs: attrs}
	if spec.Group != "" {
		t.Groups = strings.Split(spec.Group, " ")
	}
	t.defaultAttrs = defaultAttrs(attrs)
	t.IsBlock = !(spec.Inline || name == "text")
	t.IsText = name == "text"
	return t, nil
}

func newMarkType(name string, rank int, s *Schema, spec *MarkSpec) (*MarkType, error) {
	if spec == nil {
		spec = &MarkSpec{}
	}
	attrs, err := initAttrs(name, spec.Attrs)
	if err != nil {
		return nil, err
	}
	m := &MarkType{Name: name, Rank: rank, Schema: s, Spec: spec, Attrs: attrs}
	if defaults := defaultAttrs(attrs); defaults != nil {
		m.instance = &Mark{Type: m, Attrs: defaults}
	}
	return m, nil
}

// gatherMarks resolves mark names and groups ("_" for all marks).
func gatherMarks(s *Schema, order []*MarkType, names []string) ([]*MarkType, error) {
	var found []*MarkType
	for _, name := range names {
		mark := s.marksByName[name]
		ok := mark != nil
		if mark != nil {
			found = append(found, mark)
		} else {
			for _, m := range order {
				if name == "_" || (m.Spec.Group != "" && slices.Contains(strings.Split(m.Spec.Group, " "), name)) {
					found = append(found, m)
					ok = true
				}
			}
		}
		if !ok {
			return nil, errors.New("Unknown mark type: '" + name + "'")
		}
	}
	return found, nil
}

// NodeType returns the node type called name, or nil.
func (s *Schema) NodeType(name string) *NodeType { return s.nodesByName[name] }

// MarkType returns the mark type called name, or nil.
func (s *Schema) MarkType(name string) *MarkType { return s.marksByName[name] }

// Text returns a text node with the given marks (sorted by rank). Text
// must not be empty.
func (s *Schema) Text(text string, marks []*Mark) (*Node, error) {
	return NewTextNode(s.textType, text, MarkSetFrom(marks))
}

// Node creates a node of the type called typ, checking its content
// (JS schema.node, which uses createChecked).
func (s *Schema) Node(typ string, attrs Attrs, content Fragment, marks []*Mark) (*Node, error) {
	t := s.nodesByName[typ]
	if t == nil {
		return nil, errors.New("Unknown node type: " + typ)
	}
	return t.CreateChecked(attrs, content, marks)
}

// Mark creates a mark of the type called typ.
func (s *Schema) Mark(typ string, attrs Attrs) (*Mark, error) {
	m := s.marksByName[typ]
	if m == nil {
		return nil, errors.New("There is no mark type " + typ + " in this schema")
	}
	return m.Create(attrs)
}

// IsInline reports whether the type is inline (not a block).
func (t *NodeType) IsInline() bool { return !t.IsBlock }

// IsTextblock reports whether the type is a block with inline content.
func (t *NodeType) IsTextblock() bool { return t.IsBlock && t.InlineContent }

// IsLeaf reports whether the type allows no content.
func (t *NodeType) IsLeaf() bool { return t.ContentMatch == EmptyContentMatch }

// IsAtom reports whether the type is a leaf or has spec.atom set.
func (t *NodeType) IsAtom() bool { return t.IsLeaf() || t.Spec.Atom }

// IsInGroup reports whether the type belongs to group g.
func (t *NodeType) IsInGroup(g string) bool { return slices.Contains(t.Groups, g) }

// Whitespace returns the type's whitespace option: spec.whitespace, or
// "pre" for code and "normal" otherwise.
func (t *NodeType) Whitespace() string {
	if t.Spec.Whitespace != "" {
		return t.Spec.Whitespace
	}
	if t.Spec.Code {
		return "pre"
	}
	return "normal"
}

// HasRequiredAttrs reports whether some attribute of the type has no
// default.
func (t *NodeType) HasRequiredAttrs() bool { return t.defaultAttrs == nil }

// generatable reports whether nodes of the type can be created without
// information (JS: not text, no required attributes).
func (t *NodeType) generatable() bool { return !t.IsText && t.defaultAttrs != nil }

// CompatibleContent reports whether t allows some of the same content as o.
func (t *NodeType) CompatibleContent(o *NodeType) bool {
	return t == o || t.ContentMatch.Compatible(o.ContentMatch)
}

// ComputeAttrs returns the attributes of a node of type t created with
// given (see computeAttrs for the rules): the type's shared defaults when
// given is nil and no attribute is required.
func (t *NodeType) ComputeAttrs(given Attrs) (Attrs, error) {
	if given == nil && t.defaultAttrs != nil {
		return t.defaultAttrs, nil
	}
	return computeAttrs(t.Attrs, given)
}

var errCreateText = errors.New("NodeType.create can't construct text nodes")

// Create returns a node of type t with the given attributes (checked and
// defaulted), content and marks (sorted). The content is not checked.
func (t *NodeType) Create(attrs Attrs, content Fragment, marks []*Mark) (*Node, error) {
	if t.IsText {
		return nil, errCreateText
	}
	attrs, err := t.ComputeAttrs(attrs)
	if err != nil {
		return nil, err
	}
	return newNode(t, attrs, content, MarkSetFrom(marks)), nil
}

// CreateChecked is Create that also checks the content against the type's
// content expression and allowed marks. Unlike the JS, which builds a
// malformed node, it refuses the text type like Create.
func (t *NodeType) CreateChecked(attrs Attrs, content Fragment, marks []*Mark) (*Node, error) {
	if t.IsText {
		return nil, errCreateText
	}
	if err := t.CheckContent(content); err != nil {
		return nil, err
	}
	attrs, err := t.ComputeAttrs(attrs)
	if err != nil {
		return nil, err
	}
	return newNode(t, attrs, content, MarkSetFrom(marks)), nil
}

// CreateAndFill is Create that adds the nodes needed before and after
// content to make it valid. It returns nil (and no error) when content
// cannot be made to fit. It refuses the text type like Create.
func (t *NodeType) CreateAndFill(attrs Attrs, content Fragment, marks []*Mark) (*Node, error) {
	if t.IsText {
		return nil, errCreateText
	}
	attrs, err := t.ComputeAttrs(attrs)
	if err != nil {
		return nil, err
	}
	if content.Size() > 0 {
		before, ok, err := t.ContentMatch.FillBefore(content, false, 0)
		if err != nil || !ok {
			return nil, err
		}
		content = before.Append(content)
	}
	matched := t.ContentMatch.MatchFragment(content, 0, content.ChildCount())
	if matched == nil {
		return nil, nil
	}
	after, ok, err := matched.FillBefore(Fragment{}, true, 0)
	if err != nil || !ok {
		return nil, err
	}
	return newNode(t, attrs, content.Append(after), MarkSetFrom(marks)), nil
}

// defaultFill returns JS t.createAndFill() (no arguments), computing it on
// first use; NewSchema computes it for every generatable type so that a
// finished schema only reads it. A type that needs itself to be filled
// gets the stack overflow JavaScript would hit.
func (t *NodeType) defaultFill() (*Node, error) {
	switch t.fillState {
	case 2:
		return t.fill, t.fillErr
	case 1:
		return nil, errStackOverflow
	}
	t.fillState = 1
	var n *Node
	var err error
	if types, ok := t.ContentMatch.fillTypes(Fragment{}, true, 0); ok {
		var content Fragment
		if content, err = fillNodes(types); err == nil {
			n = newNode(t, t.defaultAttrs, content, nil)
		}
	}
	t.fill, t.fillErr, t.fillState = n, err, 2
	return n, err
}

// ValidContent reports whether f is valid content for t: it matches the
// content expression and its children's marks are allowed.
func (t *NodeType) ValidContent(f Fragment) bool {
	result := t.ContentMatch.MatchFragment(f, 0, f.ChildCount())
	if result == nil || !result.ValidEnd {
		return false
	}
	for i := 0; i < f.ChildCount(); i++ {
		if !t.AllowsMarks(f.Child(i).Marks) {
			return false
		}
	}
	return true
}

// CheckContent returns an error when f is not valid content for t.
func (t *NodeType) CheckContent(f Fragment) error {
	if !t.ValidContent(f) {
		return errors.New("Invalid content for node " + t.Name + ": " + textSlice(f.String(), 0, 50))
	}
	return nil
}

// AllowsMarkType reports whether marks of type m are allowed in t.
func (t *NodeType) AllowsMarkType(m *MarkType) bool {
	return t.AllowsAllMarks || slices.Contains(t.MarkSet, m)
}

// AllowsMarks reports whether all of marks are allowed in t.
func (t *NodeType) AllowsMarks(marks []*Mark) bool {
	if t.AllowsAllMarks {
		return true
	}
	for _, m := range marks {
		if !t.AllowsMarkType(m.Type) {
			return false
		}
	}
	return true
}

// AllowedMarks returns marks without the ones not allowed in t: marks
// itself when all are allowed, nil when none is.
func (t *NodeType) AllowedMarks(marks []*Mark) []*Mark {
	if t.AllowsAllMarks {
		return marks
	}
	var out []*Mark
	copied := false
	for i, m := range marks {
		if !t.AllowsMarkType(m.Type) {
			if !copied {
				out = slices.Clone(marks[:i])
				copied = true
			}
		} else if copied {
			out = append(out, m)
		}
	}
	if !copied {
		return marks
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Create returns a mark of type m with the given attributes (checked and
// defaulted): the type's shared instance when attrs is nil and no
// attribute is required.
func (m *MarkType) Create(attrs Attrs) (*Mark, error) {
	if attrs == nil && m.instance != nil {
		return m.instance, nil
	}
	attrs, err := computeAttrs(m.Attrs, attrs)
	if err != nil {
		return nil, err
	}
	return &Mark{Type: m, Attrs: attrs}, nil
}

// ComputeAttrs returns the attributes of a mark of type m created with
// given, as Create computes them.
func (m *MarkType) ComputeAttrs(given Attrs) (Attrs, error) {
	if given == nil && m.instance != nil {
		return m.instance.Attrs, nil
	}
	return computeAttrs(m.Attrs, given)
}

// RemoveFromSet returns set without the marks of type m (set itself when
// there are none).
func (m *MarkType) RemoveFromSet(set []*Mark) []*Mark {
	for i := 0; i < len(set); i++ {
		if set[i].Type == m {
			set = slices.Concat(set[:i], set[i+1:])
			i--
		}
	}
	return set
}

// IsInSet returns the mark of type m in set, or nil.
func (m *MarkType) IsInSet(set []*Mark) *Mark {
	for _, mk := range set {
		if mk.Type == m {
			return mk
		}
	}
	return nil
}

// Excludes reports whether m excludes marks of type o.
func (m *MarkType) Excludes(o *MarkType) bool { return slices.Contains(m.excluded, o) }

// Inclusive reports whether the mark is active at its end (spec.inclusive
// is not false).
func (m *MarkType) Inclusive() bool { return m.Spec.Inclusive == nil || *m.Spec.Inclusive }

// Spanning reports whether marks of this type may span several adjacent
// nodes when serialized (spec.spanning is not false).
func (m *MarkType) Spanning() bool { return m.Spec.Spanning == nil || *m.Spec.Spanning }
