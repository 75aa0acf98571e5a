package export

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/model"
	"github.com/yuin/goldmark/ast"
)

// This file is prosemirror-markdown 1.13.9's defaultMarkdownParser
// (src/from_markdown.ts, MIT, see NOTICE): MarkdownParseState and the
// token handlers, driven by goldmark's CommonMark tree instead of
// markdown-it's tokens. Where goldmark and markdown-it 14 (the
// "commonmark" preset with html off) read a text differently, this side
// follows markdown-it: md_goldmark.go configures goldmark (no HTML, its own
// code spans and autolinks, link destinations that markdown-it refuses)
// and md_text.go decodes text the way markdown-it does.

// Default limits of a MarkdownParser.
const (
	DefaultMaxMarkdownBytes = 8 << 20
	DefaultMaxMarkdownDepth = 100
)

// maxNesting is markdown-it's maxNesting option of the commonmark
// preset: blocks nested deeper are dropped (see mdParse.blocks).
const maxNesting = 20

// ErrMarkdownLimit is wrapped by the errors of input over a
// MarkdownParser's limits.
var ErrMarkdownLimit = errors.New("markdown import limit")

// ErrMarkdownSchema is wrapped by the errors of a schema that lacks a node
// or mark type the parser needs. Its message is the JavaScript's.
var ErrMarkdownSchema = errors.New("markdown import: schema")

// jsError is an error whose message is the one the JavaScript throws.
type jsError struct {
	msg  string
	kind error
}

func (e *jsError) Error() string { return e.msg }
func (e *jsError) Unwrap() error { return e.kind }

// MarkdownParser parses CommonMark into documents of a schema, the way
// prosemirror-markdown's defaultMarkdownParser does with that schema. The
// zero limits mean the defaults.
type MarkdownParser struct {
	// Schema is the schema of the documents. It needs the node types
	// blockquote, paragraph, list_item, bullet_list, ordered_list,
	// heading, code_block, horizontal_rule, image and hard_break, and the
	// mark types em, strong, link and code for the Markdown that uses them.
	Schema *model.Schema
	// MaxBytes bounds the input (DefaultMaxMarkdownBytes when 0).
	MaxBytes int
	// MaxDepth bounds the nesting of blockquotes and list items in the
	// input, counted per line as container markers plus half the
	// columns of indentation (DefaultMaxMarkdownDepth when 0).
	MaxDepth int
}

// ParseMarkdown parses src with a MarkdownParser of schema s and the
// default limits.
func ParseMarkdown(s *model.Schema, src []byte) (*model.Node, error) {
	return (&MarkdownParser{Schema: s}).Parse(src)
}

// blockTypes are the node types of the parser's tokens, in the order in
// which prosemirror-markdown looks them up when it builds its handlers.
var blockTypes = []string{"blockquote", "paragraph", "list_item", "bullet_list", "ordered_list",
	"heading", "code_block", "horizontal_rule", "image", "hard_break"}

// Parse returns the document that src, CommonMark, describes.
func (p *MarkdownParser) Parse(src []byte) (*model.Node, error) {
	maxBytes, maxDepth := p.MaxBytes, p.MaxDepth
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMarkdownBytes
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxMarkdownDepth
	}
	if len(src) > maxBytes {
		return nil, fmt.Errorf("%w: Markdown of %d bytes, more than %d", ErrMarkdownLimit, len(src), maxBytes)
	}
	st := &mdParse{schema: p.Schema, types: map[string]*model.NodeType{}}
	for _, name := range blockTypes {
		t := p.Schema.NodeType(name)
		if t == nil {
			return nil, &jsError{"Unknown node type: " + name, ErrMarkdownSchema}
		}
		st.types[name] = t
	}
	src = normalizeMarkdown(src)
	if line, d := nestingDepth(src, maxDepth); d > maxDepth {
		return nil, fmt.Errorf("%w: Markdown nested more than %d deep (line %d)", ErrMarkdownLimit, maxDepth, line)
	}
	doc, src, side, err := parseGoldmark(src)
	if err != nil {
		return nil, err
	}
	st.src = src
	st.side = side
	st.stack = []*mdFrame{{typ: p.Schema.TopNodeType}}
	if _, err := st.blocks(doc, 0); err != nil {
		return nil, err
	}
	var out *model.Node
	for len(st.stack) > 0 {
		if out, err = st.closeNode(); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return p.Schema.TopNodeType.CreateAndFill(nil, model.Fragment{}, nil)
	}
	return out, nil
}

// normalizeMarkdown is markdown-it's normalize rule (line endings to
// "\n", NUL to U+FFFD), after bytes that are not UTF-8 are read as U+FFFD.
func normalizeMarkdown(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\r':
			out = append(out, '\n')
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			i++
		case c == 0:
			out = append(out, "\ufffd"...)
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\ufffd"...)
			} else {
				out = append(out, src[i:i+size]...)
			}
			i += size
		}
	}
	// markdown-it's StateBlock has no line for spaces and tabs at the
	// very end (its line scan skips them as indentation and stops).
	end := len(out)
	for end > 0 && (out[end-1] == ' ' || out[end-1] == '\t') {
		end--
	}
	if end == 0 || out[end-1] == '\n' {
		out = out[:end]
	}
	return out
}

// nestingDepth returns the first line whose depth (container markers and
// half its columns of indentation, a bound of the blocks open on it) is
// more than max, and that depth; 0, 0 when there is none. It keeps the
// parser from spending time in proportion to depth times lines.
func nestingDepth(src []byte, max int) (int, int) {
	line := 1
	for i := 0; i < len(src); line++ {
		d, ws, col := 0, 0, 0
	scan:
		for i < len(src) {
			switch c := src[i]; {
			case c == ' ':
				ws++
				col++
				i++
			case c == '\t':
				w := 4 - col%4
				ws += w
				col += w
				i++
			case c == '>':
				d++
				col++
				i++
			case (c == '-' || c == '+' || c == '*') && (i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t' || src[i+1] == '\n'):
				d++
				col++
				i++
			case c >= '0' && c <= '9':
				j := i
				for j < len(src) && j-i < 10 && src[j] >= '0' && src[j] <= '9' {
					j++
				}
				if j < len(src) && (src[j] == '.' || src[j] == ')') && (j+1 == len(src) || src[j+1] == ' ' || src[j+1] == '\t' || src[j+1] == '\n') {
					d++
					col += j + 1 - i
					i = j + 1
					continue
				}
				break scan
			default:
				break scan
			}
		}
		if d += (ws + 1) / 2; d > max {
			return line, d
		}
		if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
			i += j + 1
		} else {
			break
		}
	}
	return 0, 0
}

// mdFrame is one entry of MarkdownParseState's stack.
type mdFrame struct {
	typ     *model.NodeType
	attrs   model.Attrs
	content []*model.Node
	marks   []*model.Mark
	// text is the text after content, with textMarks, not yet a node:
	// addText joins texts with the same marks, and joining them one by
	// one would take time in proportion to the square of their number.
	text      strings.Builder
	textMarks []*model.Mark
}

// flush makes f's pending text a node.
func (f *mdFrame) flush(s *model.Schema) error {
	if f.text.Len() == 0 {
		return nil
	}
	node, err := s.Text(f.text.String(), f.textMarks)
	f.text.Reset()
	if err != nil {
		return err
	}
	f.content = append(f.content, node)
	return nil
}

// mdParse is MarkdownParseState.
type mdParse struct {
	schema *model.Schema
	types  map[string]*model.NodeType
	src    []byte
	side   *mdSide
	stack  []*mdFrame
}

func (s *mdParse) top() *mdFrame { return s.stack[len(s.stack)-1] }

// addText adds text with the current marks, joined to the text before it
// when that has the same marks.
func (s *mdParse) addText(text string) error {
	if text == "" {
		return nil
	}
	top := s.top()
	if top.text.Len() > 0 && !model.SameMarkSet(top.textMarks, top.marks) {
		if err := top.flush(s.schema); err != nil {
			return err
		}
	}
	if top.text.Len() == 0 {
		top.textMarks = top.marks
	}
	top.text.WriteString(text)
	return nil
}

// markType returns the mark type called name, or the error JavaScript
// throws when it calls create on the undefined type.
func (s *mdParse) markType(name string) (*model.MarkType, error) {
	if t := s.schema.MarkType(name); t != nil {
		return t, nil
	}
	return nil, &jsError{"Cannot read properties of undefined (reading 'create')", ErrMarkdownSchema}
}

func (s *mdParse) openMark(name string, attrs model.Attrs) error {
	t, err := s.markType(name)
	if err != nil {
		return err
	}
	m, err := t.Create(attrs)
	if err != nil {
		return err
	}
	top := s.top()
	top.marks = m.AddToSet(top.marks)
	return nil
}

func (s *mdParse) closeMark(name string) {
	top := s.top()
	top.marks = s.schema.MarkType(name).RemoveFromSet(top.marks)
}

// addNode adds a node of type t, filled to be valid, with the current
// marks; a node whose content cannot be made valid is left out.
func (s *mdParse) addNode(t *model.NodeType, attrs model.Attrs, content []*model.Node) (*model.Node, error) {
	var marks []*model.Mark
	if len(s.stack) > 0 {
		marks = s.top().marks
	}
	node, err := t.CreateAndFill(attrs, model.NewFragment(content), marks)
	if err != nil || node == nil {
		return nil, err
	}
	if len(s.stack) > 0 {
		top := s.top()
		if err := top.flush(s.schema); err != nil {
			return nil, err
		}
		top.content = append(top.content, node)
	}
	return node, nil
}

func (s *mdParse) openNode(name string, attrs model.Attrs) {
	s.stack = append(s.stack, &mdFrame{typ: s.types[name], attrs: attrs})
}

func (s *mdParse) closeNode() (*model.Node, error) {
	f := s.stack[len(s.stack)-1]
	if err := f.flush(s.schema); err != nil {
		return nil, err
	}
	s.stack = s.stack[:len(s.stack)-1]
	return s.addNode(f.typ, f.attrs, f.content)
}

func (s *mdParse) closeNodeErr() error {
	_, err := s.closeNode()
	return err
}

// blocks adds the block children of n, whose content markdown-it parses at
// nesting level level. It reports whether a list item nested too deep
// swallowed the rest of the content: markdown-it then skips to the end of
// the range it tokenizes, which for a list item is the end of the nearest
// blockquote or of the document, so the enclosing list items and lists
// end there too.
func (s *mdParse) blocks(n ast.Node, level int) (bool, error) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		var err error
		switch c := c.(type) {
		case *ast.Paragraph, *ast.TextBlock:
			s.openNode("paragraph", nil)
			if err = s.inline(c); err == nil {
				err = s.closeNodeErr()
			}
		case *ast.Heading:
			s.openNode("heading", model.Attrs{{Name: "level", Value: float64(c.Level)}})
			if err = s.inline(c); err == nil {
				err = s.closeNodeErr()
			}
		case *ast.ThematicBreak:
			_, err = s.addNode(s.types["horizontal_rule"], nil, nil)
		case *ast.CodeBlock:
			s.openNode("code_block", nil)
			if err = s.addText(s.side.marks.str([]byte(s.codeText(c, 4)))); err == nil {
				err = s.closeNodeErr()
			}
		case *ast.FencedCodeBlock:
			s.openNode("code_block", model.Attrs{{Name: "params", Value: s.side.fenceInfo[c]}})
			if err = s.addText(s.side.marks.str([]byte(s.codeText(c, s.side.fenceIndent[c])))); err == nil {
				err = s.closeNodeErr()
			}
		case *ast.Blockquote:
			s.openNode("blockquote", nil)
			if level+1 < maxNesting {
				_, err = s.blocks(c, level+1)
			}
			if err == nil {
				err = s.closeNodeErr()
			}
		case *ast.List:
			swallowed, err := s.list(c, level)
			if err != nil || swallowed {
				return swallowed, err
			}
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// list adds list l, whose items' content markdown-it parses at level+2.
func (s *mdParse) list(l *ast.List, level int) (bool, error) {
	first := l.FirstChild()
	tight := l.IsTight && level+2 < maxNesting && first != nil
	if tight {
		switch first.FirstChild().(type) {
		case *ast.TextBlock, *ast.Paragraph:
		default:
			tight = false
		}
	}
	if l.IsOrdered() {
		order := l.Start
		if order == 0 {
			order = 1
		}
		s.openNode("ordered_list", model.Attrs{{Name: "order", Value: float64(order)}, {Name: "tight", Value: tight}})
	} else {
		s.openNode("bullet_list", model.Attrs{{Name: "tight", Value: tight}})
	}
	swallowed := false
	for item := first; item != nil; item = item.NextSibling() {
		s.openNode("list_item", nil)
		if level+2 >= maxNesting {
			swallowed = true
		} else {
			var err error
			if swallowed, err = s.blocks(item, level+2); err != nil {
				return false, err
			}
		}
		if err := s.closeNodeErr(); err != nil {
			return false, err
		}
		if swallowed {
			break
		}
	}
	return swallowed, s.closeNodeErr()
}

// codeText returns the content of a code block without its last newline:
// each line after its containers and indent more columns, counted as
// markdown-it counts them.
func (s *mdParse) codeText(n ast.Node, indent int) string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		if pad, pos, lazy := s.side.lineContent(s.src, seg.Start, n, indent); lazy == nil && pos <= seg.Stop {
			b.WriteString(strings.Repeat(" ", pad))
			b.Write(s.src[pos:seg.Stop])
			continue
		}
		b.WriteString(strings.Repeat(" ", seg.Padding))
		b.Write(seg.Value(s.src))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// mergeTexts joins the text children of n that are contiguous in the
// source (goldmark sometimes splits a text at a backslash), so that
// escapes and entities are decoded whole.
func mergeTexts(n ast.Node) {
	for c := n.FirstChild(); c != nil; {
		t, ok := c.(*ast.Text)
		next, ok2 := c.NextSibling().(*ast.Text)
		if ok && ok2 && !t.SoftLineBreak() && !t.HardLineBreak() && !t.IsRaw() && !next.IsRaw() && t.Segment.Stop == next.Segment.Start && next.Segment.Padding == 0 {
			t.Segment = t.Segment.WithStop(next.Segment.Stop)
			t.SetSoftLineBreak(next.SoftLineBreak())
			t.SetHardLineBreak(next.HardLineBreak())
			n.RemoveChild(n, next)
			continue
		}
		c = c.NextSibling()
	}
}

// inline adds the inline content of block n.
func (s *mdParse) inline(n ast.Node) error {
	// Walk the tree without recursion: emphasis may nest as deep as the
	// input is long.
	mergeTexts(n)
	c := n.FirstChild()
	for c != nil {
		if c.FirstChild() != nil {
			mergeTexts(c)
		}
		descend, err := s.enterInline(c)
		if err != nil {
			return err
		}
		if descend && c.FirstChild() != nil {
			c = c.FirstChild()
			continue
		}
		for c != n {
			if err := s.exitInline(c); err != nil {
				return err
			}
			if next := c.NextSibling(); next != nil {
				c = next
				break
			}
			c = c.Parent()
		}
		if c == n {
			break
		}
	}
	return nil
}

// enterInline adds what comes before n's children (or n itself) and
// reports whether its children are to be walked.
func (s *mdParse) enterInline(n ast.Node) (bool, error) {
	switch n := n.(type) {
	case *ast.Text:
		return false, s.text(n)
	case *ast.String:
		return false, s.addText(string(n.Value))
	case *ast.CodeSpan:
		if err := s.openMark("code", nil); err != nil {
			return false, err
		}
		if err := s.addText(s.side.codeSpans[n]); err != nil {
			return false, err
		}
		s.closeMark("code")
		return false, nil
	case *ast.Emphasis:
		if n.Level == 2 {
			return true, s.openMark("strong", nil)
		}
		return true, s.openMark("em", nil)
	case *ast.Link:
		href, title := s.linkAttrs(n, n.Destination, n.Title)
		return true, s.openMark("link", model.Attrs{{Name: "href", Value: href}, {Name: "title", Value: title}})
	case *ast.AutoLink:
		url := s.side.marks.str(n.Label(s.src))
		href := url
		if n.AutoLinkType == ast.AutoLinkEmail {
			href = "mailto:" + url
		}
		if err := s.openMark("link", model.Attrs{{Name: "href", Value: normalizeLink(href)}, {Name: "title", Value: nil}}); err != nil {
			return false, err
		}
		if err := s.addText(normalizeLinkText(url)); err != nil {
			return false, err
		}
		s.closeMark("link")
		return false, nil
	case *ast.Image:
		src, title := s.linkAttrs(n, n.Destination, n.Title)
		_, err := s.addNode(s.types["image"], model.Attrs{
			{Name: "src", Value: src},
			{Name: "title", Value: title},
			{Name: "alt", Value: imageAlt(n, s.src, s.side)},
		}, nil)
		return false, err
	}
	return false, nil
}

// linkAttrs returns the href (or src) and title of a link or image: as
// markdown-it read them for an inline one, normalised from goldmark's
// destination and title for one by reference.
func (s *mdParse) linkAttrs(n ast.Node, dest, title []byte) (string, any) {
	if d, ok := s.side.dests[n]; ok {
		return d, orNull(s.side.titles[n])
	}
	return normalizeLink(unescapeAll(s.side.marks.str(dest))), orNull(unescapeAll(s.side.marks.str(title)))
}

// exitInline closes the mark n opened.
func (s *mdParse) exitInline(n ast.Node) error {
	switch n := n.(type) {
	case *ast.Emphasis:
		if n.Level == 2 {
			s.closeMark("strong")
		} else {
			s.closeMark("em")
		}
	case *ast.Link:
		s.closeMark("link")
	}
	return nil
}

// orNull returns nil for "" (the JavaScript's `|| null`).
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// text adds a text node of goldmark's and the line break after it.
func (s *mdParse) text(n *ast.Text) error {
	raw := s.side.marks.str(n.Segment.Value(s.src))
	if !n.SoftLineBreak() && !n.HardLineBreak() {
		return s.addText(decodeInline(raw))
	}
	raw, hard := breakText(raw, n.Segment.Stop, s.src)
	if err := s.addText(decodeInline(raw)); err != nil {
		return err
	}
	if hard {
		_, err := s.addNode(s.types["hard_break"], nil, nil)
		return err
	}
	return s.addText(" ")
}

// breakText returns the text of a line that ends in a line break, as
// markdown-it's newline and escape rules leave it, and whether the break
// is a hard one: a backslash before the newline, or two or more spaces
// (all of them dropped; a single space is dropped before a soft break).
func breakText(raw string, stop int, src []byte) (string, bool) {
	raw = strings.TrimSuffix(raw, "\n")
	eol := bytes.IndexByte(src[stop:], '\n')
	if eol < 0 {
		eol = len(src) - stop
	}
	rest := string(src[stop : stop+eol])
	if rest == "\\" || (rest == "" && strings.HasSuffix(raw, "\\") && oddBackslashes(raw)) {
		return strings.TrimSuffix(raw, "\\"), true
	}
	full := raw + rest
	n := len(full) - len(strings.TrimRight(full, " "))
	switch {
	case n >= 2:
		return full[:len(full)-n], true
	case n == 1:
		return full[:len(full)-1], false
	}
	return full, false
}

// oddBackslashes reports whether s ends in an odd number of backslashes.
func oddBackslashes(s string) bool {
	n := len(s) - len(strings.TrimRight(s, "\\"))
	return n%2 == 1
}

// imageAlt is prosemirror-markdown's alt: the content of the first token
// markdown-it makes of the image's description (in which, unlike
// elsewhere, escapes and entities stay tokens of their own), or null.
func imageAlt(n *ast.Image, src []byte, side *mdSide) any {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			raw := side.marks.str(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				raw, _ = breakText(raw, c.Segment.Stop, src)
			}
			text, special, stop := leadingText(raw)
			if special != "" && b.Len() == 0 && text == "" {
				return special
			}
			b.WriteString(text)
			if stop || c.SoftLineBreak() || c.HardLineBreak() {
				return orNull(b.String())
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			if b.Len() == 0 {
				return orNull(side.codeSpans[c])
			}
			return orNull(b.String())
		case *ast.Image:
			if b.Len() == 0 {
				return orNull(side.imageLabel[c])
			}
			return orNull(b.String())
		default:
			return orNull(b.String())
		}
	}
	return orNull(b.String())
}
