package export

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/pmauthority/pmauthority/model"
)

// ErrTemplate is wrapped by the errors of a toDOM template that cannot be
// used (see docs/export.md for the template language).
var ErrTemplate = errors.New("toDOM template")

// A template is a parsed toDOM template: an element (tag, attributes,
// children) or, for a string child, a text.
type template struct {
	text     string
	isText   bool
	tag      valueExpr
	attrs    []templateAttr
	children []*template
	hole     bool // the element's only child is the content hole

	// static is the rendering of a top-level template that reads no
	// attribute, for a mark when staticMark is set (see renderTemplate).
	static     *rendered
	staticMark bool
}

type templateAttr struct {
	name  string
	value valueExpr
}

// valueExpr is a literal or {"attr": NAME, "prefix"?, "suffix"?,
// "unless"?}: the attribute's value as JavaScript's String() writes it,
// between prefix and suffix; absent when the value is null, undefined or
// equal to unless.
type valueExpr struct {
	literal   string
	hasLit    bool // a literal (null literals are dropped while parsing)
	attr      string
	prefix    string
	suffix    string
	unless    any
	hasUnless bool
}

// rawTextElements are elements whose text HTML serializes unescaped, and
// a template may not use them.
var rawTextElements = map[string]bool{
	"script": true, "style": true, "xmp": true, "iframe": true, "noembed": true,
	"noframes": true, "plaintext": true, "noscript": true, "template": true,
}

// attrTags are the elements a tag taken from an attribute may name (and
// h followed by digits, see attrTagAllowed): text and structure elements
// that load nothing, run nothing, submit nothing and change nothing
// outside themselves. A template that wants a link, an image, a form
// control or anything else names it literally.
var attrTags = map[string]bool{
	"p": true, "div": true, "span": true, "blockquote": true, "pre": true, "code": true,
	"hr": true, "br": true, "wbr": true, "ul": true, "ol": true, "li": true, "dl": true,
	"dt": true, "dd": true, "section": true, "article": true, "aside": true, "header": true,
	"footer": true, "main": true, "nav": true, "address": true, "figure": true,
	"figcaption": true, "details": true, "summary": true, "hgroup": true,
	"em": true, "strong": true, "b": true, "i": true, "u": true, "s": true, "del": true,
	"ins": true, "mark": true, "small": true, "sub": true, "sup": true, "kbd": true,
	"samp": true, "var": true, "q": true, "cite": true, "abbr": true, "dfn": true,
	"time": true, "bdi": true, "bdo": true, "ruby": true, "rt": true, "rp": true,
	"table": true, "caption": true, "colgroup": true, "col": true, "thead": true,
	"tbody": true, "tfoot": true, "tr": true, "td": true, "th": true,
}

// attrTagAllowed tells whether a tag taken from an attribute may be name
// (an element name as checkTag returns it): one of attrTags, or h and
// digits, as the basic schema's heading writes any level (h1 to h6, and
// h0 or h7, which browsers do not know, for levels out of range).
func attrTagAllowed(name string) bool {
	return attrTags[name] || len(name) > 1 && name[0] == 'h' && allDigits(name[1:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// attrTagPossible tells whether a tag from an attribute between prefix
// and suffix can be an allowed one for some attribute value (lower-cased,
// as the tag is).
func attrTagPossible(prefix, suffix string) bool {
	p, s := strings.ToLower(prefix), strings.ToLower(suffix)
	for name := range attrTags {
		if len(name) >= len(p)+len(s) && strings.HasPrefix(name, p) && strings.HasSuffix(name, s) {
			return true
		}
	}
	// h and digits: p is empty or h and digits, s digits, or the value
	// gives the h (p empty, s anything of the form h and digits or digits).
	switch {
	case p == "":
		return allDigits(s) || len(s) > 1 && s[0] == 'h' && allDigits(s[1:])
	case p[0] == 'h':
		return allDigits(p[1:]) && allDigits(s)
	}
	return false
}

// voidElements are the elements HTML writes without end tag or children.
var voidElements = map[string]bool{
	"area": true, "base": true, "basefont": true, "bgsound": true, "br": true, "col": true,
	"embed": true, "frame": true, "hr": true, "img": true, "input": true, "keygen": true,
	"link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

// parseTemplate reads a template from its JSON value (model.ParseJSONValue).
func parseTemplate(v any) (*template, error) {
	t, holes, err := parseTemplateNode(v, true)
	if err != nil {
		return nil, err
	}
	if holes > 1 {
		return nil, fmt.Errorf("%w: Multiple content holes", ErrTemplate)
	}
	return t, nil
}

// withStatic returns t with its rendering kept when it reads no
// attribute (mark tells which kind of type it serves).
func withStatic(t *template, mark bool) *template {
	if t.readsAttrs() {
		return t
	}
	r, err := renderTemplate(t, nil, mark)
	if err != nil {
		return t
	}
	c := *t
	c.static, c.staticMark = &r, mark
	return &c
}

func (t *template) readsAttrs() bool {
	if t.isText {
		return false
	}
	if !t.tag.hasLit {
		return true
	}
	for _, a := range t.attrs {
		if !a.value.hasLit {
			return true
		}
	}
	for _, c := range t.children {
		if c.readsAttrs() {
			return true
		}
	}
	return false
}

func parseTemplateNode(v any, top bool) (*template, int, error) {
	if s, ok := v.(string); ok {
		if top {
			return nil, 0, fmt.Errorf("%w: a template must be an array [tag, attrs?, ...children]", ErrTemplate)
		}
		return &template{text: s, isText: true}, 0, nil
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, 0, fmt.Errorf("%w: Invalid array passed to renderSpec", ErrTemplate)
	}
	t := &template{}
	tag, err := parseValueExpr(arr[0])
	if err != nil {
		return nil, 0, fmt.Errorf("%w: tag: %w", ErrTemplate, err)
	}
	if !tag.hasLit && tag.attr == "" {
		return nil, 0, fmt.Errorf("%w: Invalid array passed to renderSpec", ErrTemplate)
	}
	if tag.hasLit {
		name, err := checkTag(tag.literal)
		if err != nil {
			return nil, 0, err
		}
		tag.literal = name
	} else if !attrTagPossible(tag.prefix, tag.suffix) {
		return nil, 0, fmt.Errorf("%w: a tag from attribute %s between %q and %q can name none of the elements a tag from an attribute may name (docs/export.md)",
			ErrTemplate, tag.attr, tag.prefix, tag.suffix)
	}
	t.tag = tag
	start := 1
	if len(arr) > 1 {
		if obj, ok := arr[1].(model.JSONObject); ok {
			start = 2
			for _, p := range obj {
				name, err := checkAttrName(p.Key)
				if err != nil {
					return nil, 0, err
				}
				val, err := parseValueExpr(p.Value)
				if err != nil {
					return nil, 0, fmt.Errorf("%w: attribute %s: %w", ErrTemplate, p.Key, err)
				}
				if !val.hasLit && val.attr == "" {
					continue // a null literal: setAttribute is never called
				}
				t.attrs = append(t.attrs, templateAttr{name: name, value: val})
			}
		}
	}
	holes := 0
	for i := start; i < len(arr); i++ {
		if n, ok := arr[i].(float64); ok && n == 0 {
			if i < len(arr)-1 || i > start {
				return nil, 0, fmt.Errorf("%w: Content hole must be the only child of its parent node", ErrTemplate)
			}
			t.hole = true
			holes++
			continue
		}
		child, h, err := parseTemplateNode(arr[i], false)
		if err != nil {
			return nil, 0, err
		}
		holes += h
		t.children = append(t.children, child)
	}
	return t, holes, nil
}

func parseValueExpr(v any) (valueExpr, error) {
	switch x := v.(type) {
	case nil:
		return valueExpr{}, nil
	case string, float64, bool:
		return valueExpr{literal: model.JSString(x), hasLit: true}, nil
	case model.JSONObject:
		var e valueExpr
		for _, p := range x {
			s, isString := p.Value.(string)
			switch p.Key {
			case "attr":
				e.attr = s
			case "prefix":
				e.prefix = s
			case "suffix":
				e.suffix = s
			case "unless":
				e.unless, e.hasUnless, isString = p.Value, true, true
			default:
				return e, fmt.Errorf("unknown key %q (want attr, prefix, suffix, unless)", p.Key)
			}
			if !isString {
				return e, fmt.Errorf("%s must be a string", p.Key)
			}
		}
		if e.attr == "" {
			return e, errors.New(`an attribute reference needs "attr"`)
		}
		return e, nil
	}
	return valueExpr{}, errors.New("must be a string, number, boolean, null or {\"attr\": NAME}")
}

// checkTag returns the element name as HTML's createElement makes it
// (ASCII lower case), refusing names that are not plain element names and
// the raw text elements.
func checkTag(name string) (string, error) {
	lower := strings.ToLower(name)
	if !validName(lower, false) {
		return "", fmt.Errorf("%w: invalid element name %q", ErrTemplate, name)
	}
	if rawTextElements[lower] {
		return "", fmt.Errorf("%w: element %q is not allowed (its text would not be escaped)", ErrTemplate, name)
	}
	return lower, nil
}

// checkAttrName returns the attribute name as setAttribute stores it,
// refusing event handlers (on…), style, srcdoc and namespaced names.
func checkAttrName(name string) (string, error) {
	lower := strings.ToLower(name)
	if !validName(lower, true) {
		return "", fmt.Errorf("%w: invalid attribute name %q", ErrTemplate, name)
	}
	if strings.HasPrefix(lower, "on") || lower == "style" || lower == "srcdoc" {
		return "", fmt.Errorf("%w: attribute %q is not allowed", ErrTemplate, name)
	}
	return lower, nil
}

func validName(s string, attr bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'):
		case attr && (c == '_' || c == ':' && i > 0):
		default:
			return false
		}
	}
	return true
}

// templateSet holds the templates of a schema's node and mark types.
type templateSet struct {
	nodes map[*model.NodeType]*template
	marks map[*model.MarkType]*template
}

//go:embed basic-dom.json
var basicDOMJSON []byte

// defaultTemplates are the templates of basic-dom.json: prosemirror-
// schema-basic's and prosemirror-schema-list's toDOM written as templates.
var defaultTemplates = mustDefaultTemplates()

type namedTemplates struct {
	nodes, marks map[string]*template
}

func mustDefaultTemplates() namedTemplates {
	v, err := model.ParseJSONValue(basicDOMJSON)
	if err != nil {
		panic(err)
	}
	out := namedTemplates{nodes: map[string]*template{}, marks: map[string]*template{}}
	for _, group := range v.(model.JSONObject) {
		dst := out.nodes
		if group.Key == "marks" {
			dst = out.marks
		}
		for _, p := range group.Value.(model.JSONObject) {
			t, err := parseTemplate(p.Value)
			if err != nil {
				panic(fmt.Sprintf("basic-dom.json %s: %v", p.Key, err))
			}
			dst[p.Key] = t
		}
	}
	return out
}

// specTemplate parses the "toDOM" key of a spec's unknown keys; nil when
// there is none.
func specTemplate(extra []model.RawProp) (*template, error) {
	for _, p := range extra {
		if p.Key != "toDOM" {
			continue
		}
		v, err := model.ParseJSONValue(p.Value)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
		}
		return parseTemplate(v)
	}
	return nil, nil
}

// buildTemplates collects the templates of schema's types: a type's spec
// "toDOM" when it has one, else the default template of its name.
func buildTemplates(schema *model.Schema) (*templateSet, error) {
	set := &templateSet{nodes: map[*model.NodeType]*template{}, marks: map[*model.MarkType]*template{}}
	for _, nt := range schema.Nodes {
		if nt.IsText {
			continue
		}
		var extra []model.RawProp
		if nt.Spec != nil {
			extra = nt.Spec.Extra
		}
		t, err := specTemplate(extra)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", nt.Name, err)
		}
		if t == nil {
			t = defaultTemplates.nodes[nt.Name]
		}
		if t != nil {
			if t.hasHole() && nt.IsLeaf() {
				return nil, fmt.Errorf("node %s: %w: Content hole not allowed in a leaf node spec", nt.Name, ErrTemplate)
			}
			set.nodes[nt] = withStatic(t, false)
		}
	}
	for _, mt := range schema.Marks {
		var extra []model.RawProp
		if mt.Spec != nil {
			extra = mt.Spec.Extra
		}
		t, err := specTemplate(extra)
		if err != nil {
			return nil, fmt.Errorf("mark %s: %w", mt.Name, err)
		}
		if t == nil {
			t = defaultTemplates.marks[mt.Name]
		}
		if t != nil {
			set.marks[mt] = withStatic(t, true)
		}
	}
	return set, nil
}

func (t *template) hasHole() bool {
	if t.hole {
		return true
	}
	for _, c := range t.children {
		if c.hasHole() {
			return true
		}
	}
	return false
}
