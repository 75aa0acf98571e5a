package export

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/model"
)

// This file ports prosemirror-markdown 1.13.9's defaultMarkdownSerializer
// and MarkdownSerializerState (src/to_markdown.ts, MIT, see NOTICE). The
// JavaScript regular expressions are written out by hand with their exact
// semantics: \s is JavaScript's Unicode whitespace, \w and \d are ASCII,
// and "." stops at the line terminators \n, \r, U+2028 and U+2029.

// maxRepeat bounds the number of "#" of a heading and the width of an
// ordered list's numbers: a hostile level such as 1e9 is an error rather
// than gigabytes of output.
const maxRepeat = 1000

// ErrMarkdown is wrapped by every error of Markdown: a node or mark type
// the serializer does not know, or an attribute it cannot use.
var ErrMarkdown = errors.New("markdown export")

// markInfo is prosemirror-markdown's MarkSerializerSpec for one mark.
type markInfo struct {
	open, close              func(s *mdState, m *model.Mark, parent *model.Node, index int) (string, error)
	mixable                  bool
	expelEnclosingWhitespace bool
	noEscape                 bool
}

func fixed(s string) func(*mdState, *model.Mark, *model.Node, int) (string, error) {
	return func(*mdState, *model.Mark, *model.Node, int) (string, error) { return s, nil }
}

var (
	emInfo     = &markInfo{open: fixed("*"), close: fixed("*"), mixable: true, expelEnclosingWhitespace: true}
	strongInfo = &markInfo{open: fixed("**"), close: fixed("**"), mixable: true, expelEnclosingWhitespace: true}
	linkInfo   = &markInfo{open: linkOpen, close: linkClose, mixable: true}
	codeInfo   = &markInfo{
		open: func(_ *mdState, _ *model.Mark, parent *model.Node, index int) (string, error) {
			return backticksFor(parent.Child(index), -1), nil
		},
		close: func(_ *mdState, _ *model.Mark, parent *model.Node, index int) (string, error) {
			return backticksFor(parent.Child(index-1), 1), nil
		},
		noEscape: true,
	}
)

// markInfoOf returns the serializer spec of the mark type called name, nil
// for a mark the serializer does not know.
func markInfoOf(name string) *markInfo {
	switch name {
	case "em":
		return emInfo
	case "strong":
		return strongInfo
	case "link":
		return linkInfo
	case "code":
		return codeInfo
	}
	return nil
}

// mdState is MarkdownSerializerState.
type mdState struct {
	delim        string
	out          []byte
	closed       *model.Node
	inAutolink   bool
	atBlockStart bool
	inTightList  bool
}

// Markdown returns doc (its content) as CommonMark, byte for byte what
// prosemirror-markdown 1.13.9's defaultMarkdownSerializer.serialize(doc)
// gives. It knows the node types doc, paragraph, blockquote,
// horizontal_rule, heading, code_block, ordered_list, bullet_list,
// list_item, text, image and hard_break, and the marks em, strong, link
// and code (the basic and list schemas' names, which are prosemirror-
// markdown's); the attributes tight, params, bullet and markup of
// prosemirror-markdown's own schema are honoured when a schema has them.
// Any other node or mark type is an error, as in the default strict mode
// of the JavaScript serializer.
func Markdown(doc *model.Node) (string, error) {
	s := &mdState{}
	s.out = make([]byte, 0, doc.NodeSize()+doc.NodeSize()/4)
	if err := s.renderContent(doc); err != nil {
		return "", err
	}
	return string(s.out), nil
}

func (s *mdState) appendOut(str string) { s.out = append(s.out, str...) }

func (s *mdState) atBlank() bool { return len(s.out) == 0 || s.out[len(s.out)-1] == '\n' }

func (s *mdState) flushClose(size int) {
	if s.closed == nil {
		return
	}
	if !s.atBlank() {
		s.appendOut("\n")
	}
	if size > 1 {
		delimMin := trimRightJSSpace(s.delim)
		for i := 1; i < size; i++ {
			s.appendOut(delimMin + "\n")
		}
	}
	s.closed = nil
}

func (s *mdState) wrapBlock(delim, firstDelim string, node *model.Node, f func() error) error {
	old := s.delim
	s.write(firstDelim)
	s.delim += delim
	if err := f(); err != nil {
		return err
	}
	s.delim = old
	s.closeBlock(node)
	return nil
}

func (s *mdState) write(content string) {
	s.flushClose(2)
	if s.delim != "" && s.atBlank() {
		s.appendOut(s.delim)
	}
	s.appendOut(content)
}

func (s *mdState) closeBlock(node *model.Node) { s.closed = node }

// text is MarkdownSerializerState.text.
func (s *mdState) text(text string, escape bool) {
	for {
		line, rest, more := strings.Cut(text, "\n")
		s.write("")
		if !escape && strings.HasPrefix(line, "[") && s.endsWithUnescapedBang() {
			// Escape an exclamation mark in front of a link.
			s.out = append(s.out[:len(s.out)-1], '\\', '!')
		}
		switch {
		case !escape:
			s.appendOut(line)
		case s.atBlockStart:
			s.appendOut(escLineStart(escapeMarkdown(line)))
		default:
			s.appendEscaped(line)
		}
		if !more {
			return
		}
		s.appendOut("\n")
		text = rest
	}
}

// endsWithUnescapedBang is /(^|[^\\])\!$/.test(out.slice(-2)).
func (s *mdState) endsWithUnescapedBang() bool {
	n := len(s.out)
	return n > 0 && s.out[n-1] == '!' && (n == 1 || s.out[n-2] != '\\')
}

func (s *mdState) render(node, parent *model.Node, index int) error {
	switch node.Type.Name {
	case "blockquote":
		return s.wrapBlock("> ", "> ", node, func() error { return s.renderContent(node) })
	case "code_block":
		text := node.TextContent()
		fence := "```"
		if n := longestRun(text, '`'); n >= 3 {
			fence = strings.Repeat("`", n+1)
		}
		params, err := stringOr(node.Attrs, "params", "")
		if err != nil {
			return err
		}
		s.write(fence + params + "\n")
		s.text(text, false)
		s.write("\n")
		s.write(fence)
		s.closeBlock(node)
	case "heading":
		level, _ := node.Attrs.Get("level")
		n, err := repeatCount(level, "heading level")
		if err != nil {
			return err
		}
		s.write(strings.Repeat("#", n) + " ")
		if err := s.renderInline(node, false); err != nil {
			return err
		}
		s.closeBlock(node)
	case "horizontal_rule":
		markup, err := stringOr(node.Attrs, "markup", "---")
		if err != nil {
			return err
		}
		s.write(markup)
		s.closeBlock(node)
	case "bullet_list":
		bullet, err := stringOr(node.Attrs, "bullet", "*")
		if err != nil {
			return err
		}
		return s.renderList(node, "  ", func(int) string { return bullet + " " })
	case "ordered_list":
		start := 1.0
		if v, _ := node.Attrs.Get("order"); v != nil {
			f, ok := v.(float64)
			if !ok {
				return fmt.Errorf("%w: ordered_list order %s is not a number", ErrMarkdown, model.JSString(v))
			}
			start = f
		}
		maxW := len(model.JSString(start + float64(node.ChildCount()) - 1))
		if maxW > maxRepeat {
			return fmt.Errorf("%w: ordered_list order %s too wide", ErrMarkdown, model.JSString(start))
		}
		space := strings.Repeat(" ", maxW+2)
		return s.renderList(node, space, func(i int) string {
			nStr := model.JSString(start + float64(i))
			return strings.Repeat(" ", max(0, maxW-len(nStr))) + nStr + ". "
		})
	case "list_item":
		return s.renderContent(node)
	case "paragraph":
		if err := s.renderInline(node, true); err != nil {
			return err
		}
		s.closeBlock(node)
	case "image":
		src, ok := attrValue(node.Attrs, "src").(string)
		if !ok {
			return fmt.Errorf("%w: image src is not a string", ErrMarkdown)
		}
		alt, err := stringOr(node.Attrs, "alt", "")
		if err != nil {
			return err
		}
		out := "![" + s.esc(alt, false) + "](" + backslashBefore(src, "()")
		if title := attrValue(node.Attrs, "title"); model.JSTruthy(title) {
			t, ok := title.(string)
			if !ok {
				return fmt.Errorf("%w: image title is not a string", ErrMarkdown)
			}
			out += ` "` + backslashBefore(t, `"`) + `"`
		}
		s.write(out + ")")
	case "hard_break":
		for i := index + 1; i < parent.ChildCount(); i++ {
			if parent.Child(i).Type != node.Type {
				s.write("\\\n")
				return nil
			}
		}
	case "text":
		s.text(node.Text, !s.inAutolink)
	default:
		return fmt.Errorf("%w: Token type `%s` not supported by Markdown renderer", ErrMarkdown, node.Type.Name)
	}
	return nil
}

func (s *mdState) renderContent(parent *model.Node) error {
	for i := range parent.ChildCount() {
		if err := s.render(parent.Child(i), parent, i); err != nil {
			return err
		}
	}
	return nil
}

func getMark(name string) (*markInfo, error) {
	if info := markInfoOf(name); info != nil {
		return info, nil
	}
	return nil, fmt.Errorf("%w: Mark type `%s` not supported by Markdown renderer", ErrMarkdown, name)
}

func (s *mdState) markString(m *model.Mark, open bool, parent *model.Node, index int) (string, error) {
	info, err := getMark(m.Type.Name)
	if err != nil {
		return "", err
	}
	if open {
		return info.open(s, m, parent, index)
	}
	return info.close(s, m, parent, index)
}

// renderInline is MarkdownSerializerState.renderInline.
func (s *mdState) renderInline(parent *model.Node, fromBlockStart bool) error {
	s.atBlockStart = fromBlockStart
	var active []*model.Mark
	trailing := ""
	progress := func(node *model.Node, index int) error {
		// text is the node's text as the whitespace expulsion leaves it;
		// node is nil once nothing is left.
		var text string
		var marks []*model.Mark
		if node != nil {
			marks = node.Marks
			text = node.Text
		}
		if node != nil && node.Type.Name == "hard_break" {
			var kept []*model.Mark
			for _, m := range marks {
				if index+1 == parent.ChildCount() {
					continue
				}
				next := parent.Child(index + 1)
				if m.IsInSet(next.Marks) && (!next.IsText() || hasNonSpace(next.Text)) {
					kept = append(kept, m)
				}
			}
			marks = kept
		}
		var inner *model.Mark
		noEsc := false
		if len(marks) > 0 {
			inner = marks[len(marks)-1]
			info, err := getMark(inner.Type.Name)
			if err != nil {
				return err
			}
			noEsc = info.noEscape
		}
		n := len(marks)
		if noEsc {
			n--
		}

		// Reorder mixable marks so that their order matches active.
	outer:
		for i := 0; i < n; i++ {
			mark := marks[i]
			info, err := getMark(mark.Type.Name)
			if err != nil {
				return err
			}
			if !info.mixable {
				break
			}
			for j, other := range active {
				oinfo, err := getMark(other.Type.Name)
				if err != nil {
					return err
				}
				if !oinfo.mixable {
					break
				}
				if mark.Eq(other) {
					if i > j {
						marks = concatMarks(jsSlice(marks, 0, j), []*model.Mark{mark}, jsSlice(marks, j, i), jsSlice(marks, i+1, n))
					} else if j > i {
						marks = concatMarks(jsSlice(marks, 0, i), jsSlice(marks, i+1, j), []*model.Mark{mark}, jsSlice(marks, j, n))
					}
					continue outer
				}
			}
		}

		keep := 0
		for keep < min(len(active), n) && marks[keep].Eq(active[keep]) {
			keep++
		}

		leading := trailing
		trailing = ""
		if node != nil && node.IsText() && someMark(marks, func(_ int, m *model.Mark) bool {
			info := markInfoOf(m.Type.Name)
			if info == nil || !info.expelEnclosingWhitespace {
				return false
			}
			for i := 0; i < keep; i++ {
				if active[i].Eq(m) {
					return false
				}
			}
			return true
		}) {
			lead, rest := splitLeadingSpace(text)
			if lead != "" {
				leading += lead
				text = rest
				if rest == "" {
					node = nil
					marks = active
				}
			}
		}
		if node != nil && node.IsText() && someMark(marks, func(i int, m *model.Mark) bool {
			info := markInfoOf(m.Type.Name)
			return info != nil && info.expelEnclosingWhitespace && !isMarkAhead(parent, index+1, marks[:i+1])
		}) {
			rest, trail := splitTrailingSpace(text)
			if trail != "" {
				trailing = trail
				text = rest
				if rest == "" {
					node = nil
					marks = active
				}
			}
		}

		if node != nil || index == parent.ChildCount() {
			for keep < len(active) {
				m := active[len(active)-1]
				active = active[:len(active)-1]
				str, err := s.markString(m, false, parent, index)
				if err != nil {
					return err
				}
				s.text(str, false)
			}
		}

		if leading != "" {
			s.text(leading, true)
		}

		if node != nil {
			for len(active) < n {
				add := marks[len(active)]
				active = append(active, add)
				str, err := s.markString(add, true, parent, index)
				if err != nil {
					return err
				}
				s.text(str, false)
				s.atBlockStart = false
			}
			if noEsc && node.IsText() {
				open, err := s.markString(inner, true, parent, index)
				if err != nil {
					return err
				}
				closing, err := s.markString(inner, false, parent, index+1)
				if err != nil {
					return err
				}
				s.text(open+text+closing, false)
			} else if node.IsText() {
				s.text(text, !s.inAutolink)
			} else if err := s.render(node, parent, index); err != nil {
				return err
			}
			s.atBlockStart = false
		}
		return nil
	}
	for i := range parent.ChildCount() {
		if err := progress(parent.Child(i), i); err != nil {
			return err
		}
	}
	if err := progress(nil, parent.ChildCount()); err != nil {
		return err
	}
	s.atBlockStart = false
	return nil
}

// renderList is MarkdownSerializerState.renderList.
func (s *mdState) renderList(node *model.Node, delim string, firstDelim func(int) string) error {
	if s.closed != nil && s.closed.Type == node.Type {
		s.flushClose(3)
	} else if s.inTightList {
		s.flushClose(1)
	}
	isTight := false
	if v, ok := node.Attrs.Get("tight"); ok {
		isTight = model.JSTruthy(v)
	}
	prevTight := s.inTightList
	s.inTightList = isTight
	for i := range node.ChildCount() {
		if i > 0 && isTight {
			s.flushClose(1)
		}
		child := node.Child(i)
		if err := s.wrapBlock(delim, firstDelim(i), node, func() error { return s.render(child, node, i) }); err != nil {
			return err
		}
	}
	s.inTightList = prevTight
	return nil
}

// esc is MarkdownSerializerState.esc (without escapeExtraCharacters).
func (s *mdState) esc(str string, startOfLine bool) string {
	out := escapeMarkdown(str)
	if startOfLine {
		out = escLineStart(out)
	}
	return out
}

// escapeLen returns the index of the first byte of str that esc escapes,
// or len(str).
func escapeLen(str string, from int) int {
	for i := from; i < len(str); i++ {
		switch c := str[i]; c {
		case '`', '*', '\\', '~', '[', ']':
			return i
		case '_':
			if !(i > 0 && i+1 < len(str) && isWordByte(str[i-1]) && isWordByte(str[i+1])) {
				return i
			}
		}
	}
	return len(str)
}

// escapeMarkdown puts a backslash before the characters esc escapes anywhere:
// ` * \ ~ [ ] and _ unless between two word characters.
func escapeMarkdown(str string) string {
	i := escapeLen(str, 0)
	if i == len(str) {
		return str
	}
	var b strings.Builder
	b.Grow(len(str) + 8)
	last := 0
	for ; i < len(str); i = escapeLen(str, i+1) {
		b.WriteString(str[last:i])
		b.WriteByte('\\')
		last = i
	}
	b.WriteString(str[last:])
	return b.String()
}

// appendEscaped appends escapeMarkdown(str) to the output.
func (s *mdState) appendEscaped(str string) {
	i := escapeLen(str, 0)
	if i == len(str) {
		s.appendOut(str)
		return
	}
	last := 0
	for ; i < len(str); i = escapeLen(str, i+1) {
		s.out = append(s.out, str[last:i]...)
		s.out = append(s.out, '\\')
		last = i
	}
	s.out = append(s.out, str[last:]...)
}

// escLineStart applies, in order, the three start-of-line replacements of
// esc: /^(\+[ ]|[\-*>])/, /^(\s*)(#{1,6})(\s|$)/ and /^(\s*\d+)\.\s/.
func escLineStart(str string) string {
	if strings.HasPrefix(str, "+ ") || str != "" && (str[0] == '-' || str[0] == '*' || str[0] == '>') {
		str = "\\" + str
	}
	ws := leadingSpaceLen(str)
	hashes := 0
	for ws+hashes < len(str) && str[ws+hashes] == '#' {
		hashes++
	}
	if hashes >= 1 && hashes <= 6 {
		after := str[ws+hashes:]
		if after == "" || leadingSpaceLen(after) > 0 {
			str = str[:ws] + "\\" + str[ws:]
		}
	}
	digits := 0
	for ws+digits < len(str) && str[ws+digits] >= '0' && str[ws+digits] <= '9' {
		digits++
	}
	if digits > 0 && ws+digits < len(str) && str[ws+digits] == '.' {
		after := str[ws+digits+1:]
		if n := firstSpaceLen(after); n > 0 {
			str = str[:ws+digits] + "\\. " + after[n:]
		}
	}
	return str
}

func linkOpen(s *mdState, m *model.Mark, parent *model.Node, index int) (string, error) {
	href, ok := attrValue(m.Attrs, "href").(string)
	if !ok {
		return "", fmt.Errorf("%w: link href is not a string", ErrMarkdown)
	}
	s.inAutolink = isPlainURL(m, href, parent, index)
	if s.inAutolink {
		return "<", nil
	}
	return "[", nil
}

func linkClose(s *mdState, m *model.Mark, _ *model.Node, _ int) (string, error) {
	inAutolink := s.inAutolink
	s.inAutolink = false
	if inAutolink {
		return ">", nil
	}
	href, ok := attrValue(m.Attrs, "href").(string)
	if !ok {
		return "", fmt.Errorf("%w: link href is not a string", ErrMarkdown)
	}
	out := "](" + backslashBefore(href, `()"`)
	if title := attrValue(m.Attrs, "title"); model.JSTruthy(title) {
		t, ok := title.(string)
		if !ok {
			return "", fmt.Errorf("%w: link title is not a string", ErrMarkdown)
		}
		out += ` "` + backslashBefore(t, `"`) + `"`
	}
	return out + ")", nil
}

// isPlainURL tells whether a link is written as an autolink <href>. The
// mark must be the very mark object last in the content node's marks (the
// JavaScript compares identity).
func isPlainURL(link *model.Mark, href string, parent *model.Node, index int) bool {
	if model.JSTruthy(attrValue(link.Attrs, "title")) || !hasSchemePrefix(href) {
		return false
	}
	content := parent.Child(index)
	if !content.IsText() || content.Text != href || len(content.Marks) == 0 || content.Marks[len(content.Marks)-1] != link {
		return false
	}
	return index == parent.ChildCount()-1 || !link.IsInSet(parent.Child(index+1).Marks)
}

// hasSchemePrefix is /^\w+:/.test(s).
func hasSchemePrefix(s string) bool {
	i := 0
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return i > 0 && i < len(s) && s[i] == ':'
}

// isMarkAhead is MarkdownSerializerState.isMarkAhead, including its step
// of two past a hard break.
func isMarkAhead(parent *model.Node, index int, marks []*model.Mark) bool {
	for ; ; index++ {
		if index >= parent.ChildCount() {
			return false
		}
		next := parent.Child(index)
		if next.Type.Name != "hard_break" {
			return len(next.Marks) >= len(marks) && model.SameMarkSet(next.Marks[:len(marks)], marks)
		}
		index++
	}
}

func backticksFor(node *model.Node, side int) string {
	n := 0
	if node.IsText() {
		n = longestRun(node.Text, '`')
	}
	var b strings.Builder
	if n > 0 && side > 0 {
		b.WriteString(" `")
	} else {
		b.WriteString("`")
	}
	b.WriteString(strings.Repeat("`", n))
	if n > 0 && side < 0 {
		b.WriteString(" ")
	}
	return b.String()
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// jsSlice is Array.prototype.slice for non-negative bounds: clamped to
// the slice, empty when from >= to.
func jsSlice(marks []*model.Mark, from, to int) []*model.Mark {
	to = min(to, len(marks))
	if from >= to {
		return nil
	}
	return marks[from:to]
}

func concatMarks(parts ...[]*model.Mark) []*model.Mark {
	var out []*model.Mark
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func someMark(marks []*model.Mark, f func(int, *model.Mark) bool) bool {
	for i, m := range marks {
		if f(i, m) {
			return true
		}
	}
	return false
}

// attrValue returns an attribute's value, nil when absent (JS undefined
// and null alike: every caller treats them the same).
func attrValue(attrs model.Attrs, name string) any {
	v, _ := attrs.Get(name)
	return v
}

// stringOr is `attrs[name] || def` for an attribute that must be a string
// when truthy.
func stringOr(attrs model.Attrs, name, def string) (string, error) {
	v := attrValue(attrs, name)
	if !model.JSTruthy(v) {
		return def, nil
	}
	str, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: attribute %s is not a string", ErrMarkdown, name)
	}
	return str, nil
}

// repeatCount is how many times JS repeat(str, n) repeats for n.
func repeatCount(v any, what string) (int, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil // i < undefined is false
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("%w: %s %s is not a number", ErrMarkdown, what, model.JSString(v))
	}
	if f > maxRepeat {
		return 0, fmt.Errorf("%w: %s %s out of range", ErrMarkdown, what, model.JSString(v))
	}
	n := 0
	for float64(n) < f {
		n++
	}
	return n, nil
}

// backslashBefore puts a backslash before every byte of s found in chars
// (ASCII).
func backslashBefore(s, chars string) string {
	if !strings.ContainsAny(s, chars) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(chars, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isJSSpace tells whether r is in JavaScript's \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// isLineTerminator tells whether r ends a line for JavaScript's "." and
// multiline "$".
func isLineTerminator(r rune) bool { return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 }

// leadingSpaceLen is the byte length of the longest prefix of s in \s.
func leadingSpaceLen(s string) int {
	for i, r := range s {
		if !isJSSpace(r) {
			return i
		}
	}
	return len(s)
}

// firstSpaceLen is the byte length of the first character of s when it is
// in \s, else 0.
func firstSpaceLen(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !isJSSpace(r) {
		return 0
	}
	return n
}

func hasNonSpace(s string) bool { return leadingSpaceLen(s) < len(s) }

func trimRightJSSpace(s string) string { return strings.TrimRightFunc(s, isJSSpace) }

// lineEnd is the byte index of the first line terminator in s, or len(s).
func lineEnd(s string) int {
	for i, r := range s {
		if isLineTerminator(r) {
			return i
		}
	}
	return len(s)
}

// splitLeadingSpace is /^(\s*)(.*)$/m.exec(s): the leading whitespace and
// the rest of the line after it (what follows the line's end is dropped,
// as in the JavaScript).
func splitLeadingSpace(s string) (lead, rest string) {
	n := leadingSpaceLen(s)
	lead, rest = s[:n], s[n:]
	return lead, rest[:lineEnd(rest)]
}

// splitTrailingSpace is /^(.*?)(\s*)$/m.exec(s): the first line up to its
// trailing whitespace, and that whitespace run, which may continue over
// line ends up to the last line end (or the end of s) it reaches.
func splitTrailingSpace(s string) (rest, trail string) {
	l := lineEnd(s)
	k := len(trimRightJSSpace(s[:l]))
	p := l
	for i, r := range s[l:] {
		if !isJSSpace(r) {
			break
		}
		if isLineTerminator(r) {
			p = l + i
		}
		if l+i+utf8.RuneLen(r) == len(s) {
			p = len(s)
		}
	}
	return s[:k], s[k:p]
}
