package export

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pmauthority/pmauthority/model"
)

// templateCache holds each schema's templates (schemas are immutable).
var templateCache sync.Map // *model.Schema → *cachedTemplates

type cachedTemplates struct {
	set *templateSet
	err error
}

func templatesFor(schema *model.Schema) (*templateSet, error) {
	if c, ok := templateCache.Load(schema); ok {
		c := c.(*cachedTemplates)
		return c.set, c.err
	}
	set, err := buildTemplates(schema)
	templateCache.Store(schema, &cachedTemplates{set: set, err: err})
	return set, err
}

// Check returns the error that HTML would return for every document of
// schema: a toDOM template of its spec that cannot be used (wrapping
// ErrTemplate, naming the type), as a template naming a raw text element
// or an event handler attribute, or a tag from an attribute whose prefix
// and suffix allow none of the elements a tag from an attribute may name.
// A server checks its schemas with it when it starts.
func Check(schema *model.Schema) error {
	_, err := templatesFor(schema)
	return err
}

// HTML returns the content of doc as HTML: what prosemirror-model's
//
//	DOMSerializer.fromSchema(schema).serializeFragment(doc.content)
//
// gives, each top-level DOM node's outerHTML concatenated, as a browser
// (or jsdom) serializes them. Each node and mark type renders with the
// toDOM template of its JSON spec (the "toDOM" key, see docs/export.md);
// a type without one whose name is one of prosemirror-schema-basic's or
// prosemirror-schema-list's uses the toDOM of that package. A node type
// with no template is an error; a mark type with none is left out, its
// content kept, as in the JavaScript.
//
// The output is safe to embed: text and attribute values are escaped,
// attribute and element names come only from templates (which may not
// name event handlers, style, or elements whose text is not escaped),
// except a tag from an attribute, which must be one of a list of text and
// structure elements (docs/export.md; others are an error), and
// a URL attribute (href, src …) whose value has a javascript:, vbscript:
// or data: scheme is left out (data:image/… other than SVG is kept in
// src).
func HTML(doc *model.Node) (string, error) {
	set, err := templatesFor(doc.Type.Schema)
	if err != nil {
		return "", err
	}
	h := &htmlWriter{set: set}
	h.out.Grow(doc.NodeSize() * 2)
	if err := h.fragment(doc); err != nil {
		return "", err
	}
	return h.out.String(), nil
}

type htmlWriter struct {
	set      *templateSet
	out      strings.Builder
	suppress int // > 0 inside a void element, whose content HTML drops
}

func (h *htmlWriter) emit(s string) {
	if h.suppress == 0 {
		h.out.WriteString(s)
	}
}

// activeMark is a mark whose element is open.
type activeMark struct {
	mark   *model.Mark
	suffix string
	void   bool
}

// fragment is DOMSerializer.serializeFragment of parent's content.
func (h *htmlWriter) fragment(parent *model.Node) error {
	var active []activeMark
	pop := func() {
		a := active[len(active)-1]
		active = active[:len(active)-1]
		if a.void {
			h.suppress--
		}
		h.emit(a.suffix)
	}
	for i := range parent.ChildCount() {
		node := parent.Child(i)
		if len(active) > 0 || len(node.Marks) > 0 {
			keep, rendered := 0, 0
			for keep < len(active) && rendered < len(node.Marks) {
				next := node.Marks[rendered]
				if h.set.marks[next.Type] == nil {
					rendered++
					continue
				}
				if !next.Eq(active[keep].mark) || next.Type.Spec != nil && next.Type.Spec.Spanning != nil && !*next.Type.Spec.Spanning {
					break
				}
				keep++
				rendered++
			}
			for keep < len(active) {
				pop()
			}
			for rendered < len(node.Marks) {
				add := node.Marks[rendered]
				rendered++
				t := h.set.marks[add.Type]
				if t == nil {
					continue
				}
				r, err := renderTemplate(t, add.Attrs, true)
				if err != nil {
					return fmt.Errorf("mark %s: %w", add.Type.Name, err)
				}
				h.emit(r.prefix)
				if r.void {
					h.suppress++
				}
				active = append(active, activeMark{mark: add, suffix: r.suffix, void: r.void})
			}
		}
		if err := h.node(node); err != nil {
			return err
		}
	}
	for len(active) > 0 {
		pop()
	}
	return nil
}

// node is DOMSerializer.serializeNodeInner.
func (h *htmlWriter) node(node *model.Node) error {
	if node.IsText() {
		if h.suppress == 0 {
			escapeHTML(&h.out, node.Text, false)
		}
		return nil
	}
	t := h.set.nodes[node.Type]
	if t == nil {
		return fmt.Errorf("%w: node type %s has no toDOM template", ErrTemplate, node.Type.Name)
	}
	r, err := renderTemplate(t, node.Attrs, false)
	if err != nil {
		return fmt.Errorf("node %s: %w", node.Type.Name, err)
	}
	h.emit(r.prefix)
	if r.hole {
		if r.void {
			h.suppress++
		}
		if err := h.fragment(node); err != nil {
			return err
		}
		if r.void {
			h.suppress--
		}
	}
	h.emit(r.suffix)
	return nil
}

// rendered is a template rendered for some attributes: the HTML before
// and after the content, whether there is a content hole (for a mark the
// root element when the template has none) and whether the content lands
// in a void element, where HTML drops it.
type rendered struct {
	prefix, suffix string
	hole, void     bool
}

// renderTemplate renders t with attrs. For a mark (rootHole), content
// goes at the end of the root element when the template has no hole, as
// DOMSerializer appends it to the mark's dom.
func renderTemplate(t *template, attrs model.Attrs, rootHole bool) (rendered, error) {
	if t.static != nil && t.staticMark == rootHole {
		return *t.static, nil
	}
	var b strings.Builder
	var r rendered
	var holeAt int
	var walk func(t *template, root bool) error
	walk = func(t *template, root bool) error {
		if t.isText {
			escapeHTML(&b, t.text, false)
			return nil
		}
		tag, ok, err := t.tag.eval(attrs)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: element name from attribute %s is null", ErrTemplate, t.tag.attr)
		}
		if !t.tag.hasLit {
			if tag, err = checkTag(tag); err != nil {
				return err
			}
			if !attrTagAllowed(tag) {
				return fmt.Errorf("%w: element %q (from attribute %s) is not allowed: a tag from an attribute must name a text or structure element (p, div, span, h1 … h6, li, td …; docs/export.md lists them)",
					ErrTemplate, tag, t.tag.attr)
			}
		}
		void := voidElements[tag]
		b.WriteByte('<')
		b.WriteString(tag)
		if err := writeAttrs(&b, t.attrs, attrs); err != nil {
			return err
		}
		b.WriteByte('>')
		if void {
			if t.hasHole() || root && rootHole {
				r.hole, r.void = true, true
				holeAt = b.Len()
			}
			return nil
		}
		if t.hole {
			r.hole = true
			holeAt = b.Len()
		}
		for _, c := range t.children {
			if err := walk(c, false); err != nil {
				return err
			}
		}
		if root && rootHole && !r.hole {
			r.hole = true
			holeAt = b.Len()
		}
		b.WriteString("</")
		b.WriteString(tag)
		b.WriteByte('>')
		return nil
	}
	if err := walk(t, true); err != nil {
		return r, err
	}
	s := b.String()
	if r.hole {
		r.prefix, r.suffix = s[:holeAt], s[holeAt:]
	} else {
		r.prefix = s
	}
	return r, nil
}

// eval returns the expression's value for attrs; ok is false when it is
// absent (a null or undefined attribute, or the unless value).
func (e valueExpr) eval(attrs model.Attrs) (string, bool, error) {
	if e.hasLit {
		return e.literal, true, nil
	}
	v, found := attrs.Get(e.attr)
	if !found || v == nil {
		return "", false, nil
	}
	if e.hasUnless && looseEqual(v, e.unless) {
		return "", false, nil
	}
	return e.prefix + model.JSString(v) + e.suffix, true, nil
}

// looseEqual is JavaScript's == between an attribute value and a template
// literal, for the primitive values templates hold.
func looseEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// writeAttrs writes the attributes of an element: in template order, a
// repeated name keeping its first place with the last value, as
// setAttribute does.
func writeAttrs(b *strings.Builder, tas []templateAttr, attrs model.Attrs) error {
	type kv struct{ name, value string }
	var list []kv
	for _, ta := range tas {
		v, ok, err := ta.value.eval(attrs)
		if err != nil {
			return err
		}
		if !ok || !ta.value.hasLit && unsafeURL(ta.name, v) {
			continue
		}
		replaced := false
		for i := range list {
			if list[i].name == ta.name {
				list[i].value, replaced = v, true
			}
		}
		if !replaced {
			list = append(list, kv{ta.name, v})
		}
	}
	for _, a := range list {
		b.WriteByte(' ')
		b.WriteString(a.name)
		b.WriteString(`="`)
		escapeHTML(b, a.value, true)
		b.WriteByte('"')
	}
	return nil
}

// urlAttributes are the attributes whose value a browser follows as a URL.
var urlAttributes = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "cite": true,
	"background": true, "poster": true, "xlink:href": true, "data": true, "codebase": true,
	"longdesc": true, "usemap": true, "manifest": true, "ping": true, "srcset": true,
	"dynsrc": true, "lowsrc": true, "profile": true, "classid": true, "archive": true,
}

// unsafeURL tells whether value, in the attribute called name, is a URL
// whose scheme runs script: javascript: and vbscript:, and data: except
// data:image/ (not SVG) in src. Browsers ignore ASCII whitespace and
// control characters in a scheme, so they are ignored here too.
func unsafeURL(name, value string) bool {
	if !urlAttributes[name] {
		return false
	}
	var scheme []byte
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c <= ' ' || c == 0x7f {
			continue
		}
		if c == ':' {
			break
		}
		if c == '/' || c == '?' || c == '#' {
			return false
		}
		if len(scheme) > 16 {
			return false
		}
		scheme = append(scheme, c|0x20)
	}
	switch string(scheme) {
	case "javascript", "vbscript":
		return strings.Contains(value, ":")
	case "data":
		if !strings.Contains(value, ":") {
			return false
		}
		rest := strings.ToLower(strings.TrimLeft(value[strings.IndexByte(value, ':')+1:], " \t\n\r\f"))
		return name != "src" || !strings.HasPrefix(rest, "image/") || strings.HasPrefix(rest, "image/svg")
	}
	return false
}

// htmlSpecial marks the bytes escapeHTML may replace.
var htmlSpecial = [256]bool{'&': true, '<': true, '>': true, '"': true, 0xc2: true}

// escapeHTML writes s escaped as the HTML fragment serialization
// algorithm escapes text (& < > and no-break space) or attribute values
// (& " < > and no-break space, as current browsers and jsdom do).
func escapeHTML(b *strings.Builder, s string, attr bool) {
	last := 0
	for i := 0; i < len(s); i++ {
		if !htmlSpecial[s[i]] {
			continue
		}
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			if !attr {
				continue
			}
			rep = "&quot;"
		case 0xc2:
			if i+1 < len(s) && s[i+1] == 0xa0 {
				b.WriteString(s[last:i])
				b.WriteString("&nbsp;")
				i++
				last = i + 1
			}
			continue
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		last = i + 1
	}
	b.WriteString(s[last:])
}
