package export

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// This file configures goldmark to read Markdown as markdown-it 14's
// commonmark preset with html off reads it: no HTML blocks or inline HTML
// (they stay text), markdown-it's own code spans and autolinks (ports of
// its backticks and autolink rules), and no link whose destination
// markdown-it refuses. goldmark cannot be told to refuse a link, so the
// source is changed instead and parsed again: a mark (a private-use
// character, taken out of the text again) before the "(" of such an
// inline link, or before the ":" of such a reference definition, makes
// goldmark read them as markdown-it does.

// maxPasses bounds the parses of one input: each pass marks the refused
// links that the one before found, and a refused link can only hide
// another one by holding it.
const maxPasses = 16

// mdSide is what the parsers of one parse record about the nodes they
// make, for the mapping (markdown_in.go).
type mdSide struct {
	fenceInfo  map[*ast.FencedCodeBlock]string
	codeSpans  map[*ast.CodeSpan]string
	imageLabel map[*ast.Image]string
	// dests and titles hold the destination and title of inline links
	// and images as markdown-it reads them (unescaped).
	dests, titles map[ast.Node]string
	// lines holds the lines of paragraphs before goldmark trims their
	// leading white space, which markdown-it keeps (in code spans).
	lines map[int][]text.Segment // by the start of the first line
	// itemLine holds the start of the line of each list item's marker.
	itemLine map[ast.Node]int
	// fenceIndent holds the indentation of each fence's opening line.
	fenceIndent map[ast.Node]int
	escapes     []int // offsets before which a mark is to be put
	spaces      []int // offsets before which a space mark is to be put
	breaks      []int // offsets before which a blank line is to be put
	marks       *mdMarks
	para        *mdPara
}

// mdPara is the content of the paragraph being parsed inline, as one
// text, with the offset of each of its lines in it.
type mdPara struct {
	block   ast.Node
	content []byte
	starts  []int // where each line's text, as goldmark trimmed it, starts
	begins  []int // where each line starts
	main    btState
	images  []*btState  // image descriptions, which markdown-it parses afresh
	skip    map[int]int // skipToken's cache
	opens   []int       // source offsets of "[" or "![" openers
}

var sideKey = parser.NewContextKey()

func sideOf(pc parser.Context) *mdSide { return pc.Get(sideKey).(*mdSide) }

// paraOf returns the content of the block that node (or an ancestor of
// it) is.
func (s *mdSide) paraOf(node ast.Node, src []byte) *mdPara {
	for node != nil && node.Type() != ast.TypeBlock {
		node = node.Parent()
	}
	if s.para != nil && s.para.block == node {
		return s.para
	}
	p := &mdPara{block: node}
	if node != nil && node.Lines().Len() > 0 {
		lines := node.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			p.begins = append(p.begins, len(p.content))
			if i > 0 {
				// markdown-it keeps the indentation of a continuation
				// line beyond its containers' (in code spans).
				// A line lazy for a list item keeps none, one lazy for a
				// blockquote all.
				pad, pos, lazy := s.lineContent(src, seg.Start, node, 0)
				switch {
				case lazy == nil && pos <= seg.Start:
					p.content = append(p.content, strings.Repeat(" ", pad)...)
					p.content = append(p.content, src[pos:seg.Start]...)
				case lazy != nil:
					// markdown-it reads a lazy line from its start, less
					// the list items' indentation inside the innermost
					// blockquote.
					pad, pos := lazyContent(src, pos, seg.Start, node)
					if pos <= seg.Start {
						p.content = append(p.content, strings.Repeat(" ", pad)...)
						p.content = append(p.content, src[pos:seg.Start]...)
					}
				}
			}
			p.starts = append(p.starts, len(p.content))
			p.content = append(p.content, seg.Value(src)...)
		}
	}
	s.para = p
	return p
}

// seek moves the reader to offset off of p.content.
func (p *mdPara) seek(block text.Reader, off int) {
	i := sort.Search(len(p.begins), func(i int) bool { return p.begins[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	seg := p.block.Lines().At(i)
	pos := seg.Start + max(off-p.starts[i], 0)
	block.SetPosition(i, text.NewSegment(pos, seg.Stop))
}

// offset returns where the reader is in p.content.
func (p *mdPara) offset(block text.Reader) int {
	l, seg := block.Position()
	if p.block == nil || l >= len(p.starts) {
		return -1
	}
	return p.starts[l] + seg.Start - p.block.Lines().At(l).Start
}

func newGoldmark() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(
			util.Prioritized(parser.NewSetextHeadingParser(), 100),
			util.Prioritized(parser.NewThematicBreakParser(), 200),
			util.Prioritized(&listParser{BlockParser: parser.NewListParser()}, 300),
			util.Prioritized(listItemParser{parser.NewListItemParser()}, 400),
			util.Prioritized(parser.NewCodeBlockParser(), 500),
			util.Prioritized(parser.NewATXHeadingParser(), 600),
			util.Prioritized(fenceParser{parser.NewFencedCodeBlockParser()}, 700),
			util.Prioritized(blockquoteParser{parser.NewBlockquoteParser()}, 800),
			util.Prioritized(paragraphParser{parser.NewParagraphParser()}, 1000),
		),
		parser.WithInlineParsers(
			util.Prioritized(codeSpanParser{}, 100),
			util.Prioritized(linkParser{parser.NewLinkParser()}, 200),
			util.Prioritized(autoLinkParser{}, 300),
			util.Prioritized(parser.NewEmphasisParser(), 500),
		),
		parser.WithParagraphTransformers(util.Prioritized(definitionsTransformer{}, 100)),
	)
}

var errTooManyPasses = errors.New("markdown import: links that markdown-it refuses nested too deep")

// parseGoldmark parses src, marking the links markdown-it refuses until
// there are none, and returns the tree, the source it is of and what the
// parsers recorded.
func parseGoldmark(src []byte) (ast.Node, []byte, *mdSide, error) {
	p := newGoldmark()
	marks := newMarks(src)
	src = marks.hide(src)
	if deep := deepParenLinks(src); len(deep) > 0 {
		src = marks.insert(src, deep, nil, nil)
	}
	for pass := 0; ; pass++ {
		side := &mdSide{
			fenceInfo:   map[*ast.FencedCodeBlock]string{},
			codeSpans:   map[*ast.CodeSpan]string{},
			imageLabel:  map[*ast.Image]string{},
			dests:       map[ast.Node]string{},
			titles:      map[ast.Node]string{},
			lines:       map[int][]text.Segment{},
			itemLine:    map[ast.Node]int{},
			fenceIndent: map[ast.Node]int{},
			marks:       marks,
		}
		pc := parser.NewContext()
		pc.Set(sideKey, side)
		doc := p.Parse(text.NewReader(src), parser.WithContext(pc))
		for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
			refusedDefinitions(c, src, side)
		}
		lazyInterrupts(doc, src, side)
		if len(side.escapes) > 0 {
			// Definitions may change with the marks: breaks wait.
			side.breaks = nil
		}
		if len(side.escapes) == 0 && len(side.spaces) == 0 && len(side.breaks) == 0 {
			return doc, src, side, nil
		}
		if pass+1 == maxPasses {
			return nil, nil, nil, fmt.Errorf("%w (more than %d passes)", errTooManyPasses, maxPasses)
		}
		src = marks.insert(src, side.escapes, side.spaces, side.breaks)
	}
}

// mdMarks are the private-use characters (ones the input does not hold)
// that stand in the source goldmark reads for what it would read
// otherwise than markdown-it: a mark that breaks a refused link or
// definition, and U+0085, U+2028 and U+2029, which goldmark takes for
// white space around emphasis and markdown-it does not. A U+2028 left in
// the source is a mark too: it ends a link's text (goldmark then reads
// the emphasis delimiters before it as markdown-it does, which reads
// that text up to its end only).
type mdMarks struct {
	mark     string
	hidden   *strings.Replacer
	restored *strings.Replacer
}

func newMarks(src []byte) *mdMarks {
	var free []string
	for r := rune(0xE000); len(free) < 4; r++ {
		if c := string(r); !bytes.Contains(src, []byte(c)) {
			free = append(free, c)
		}
	}
	return &mdMarks{
		mark:     free[0],
		hidden:   strings.NewReplacer("\u0085", free[1], "\u2028", free[2], "\u2029", free[3]),
		restored: strings.NewReplacer(free[0], "", "\u2028", "", free[1], "\u0085", free[2], "\u2028", free[3], "\u2029"),
	}
}

func (m *mdMarks) hide(src []byte) []byte { return []byte(m.hidden.Replace(string(src))) }

// strs is str for a string.
func (m *mdMarks) strs(s string) string { return m.restored.Replace(s) }

// str returns text of the source as it was.
func (m *mdMarks) str(b []byte) string { return m.restored.Replace(string(b)) }

// insert returns src with a mark before each offset of marks, a U+2028
// before each offset of spaces and a newline before each of breaks.
func (m *mdMarks) insert(src []byte, marks, spaces, breaks []int) []byte {
	type ins struct {
		off  int
		mark string
	}
	var all []ins
	for _, o := range marks {
		all = append(all, ins{o, m.mark})
	}
	for _, o := range spaces {
		all = append(all, ins{o, "\u2028"})
	}
	for _, o := range breaks {
		all = append(all, ins{o, "\n"})
	}
	slices.SortFunc(all, func(a, b ins) int { return a.off - b.off })
	all = slices.Compact(all)
	out := make([]byte, 0, len(src)+3*len(all))
	last := 0
	for _, i := range all {
		out = append(out, src[last:i.off]...)
		out = append(out, i.mark...)
		last = i.off
	}
	return append(out, src[last:]...)
}

// deepParenLinks returns the offsets of the "(" after a "]" that opens a
// destination with more than 32 nested parentheses, which markdown-it's
// parseLinkDestination refuses. They are marked before the first parse:
// goldmark reads such a destination to the end of its line, and many of
// them in a line take it quadratic time.
func deepParenLinks(src []byte) []int {
	var out []int
	for i := 0; i+1 < len(src); i++ {
		if src[i] != ']' || src[i+1] != '(' {
			continue
		}
		level := 0
	scan:
		for k := i + 2; k < len(src) && k-i < 4096; k++ {
			switch c := src[k]; {
			case c == ' ' || c < 0x20 || c == 0x7f:
				break scan
			case c == '\\':
				k++
			case c == '(':
				if level++; level > 32 {
					out = append(out, i+1)
					break scan
				}
			case c == ')':
				if level == 0 {
					break scan
				}
				level--
			}
		}
	}
	return out
}

// refusedDefinitions records the reference definitions in n whose
// destination markdown-it refuses (it reads them as paragraphs).
func refusedDefinitions(n ast.Node, src []byte, side *mdSide) {
	// markdown-it starts a block on the line after a definition, where
	// goldmark keeps the rest of the definitions' paragraph a paragraph:
	// a blank line between them (at the top level) gives goldmark the
	// same blocks.
	if d, ok := n.(*ast.LinkReferenceDefinition); ok && n.Parent().Kind() == ast.KindDocument && d.Lines().Len() > 0 {
		if para, ok := n.NextSibling().(*ast.Paragraph); ok && para.Lines().Len() > 0 {
			end := d.Lines().At(d.Lines().Len() - 1).Stop
			if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
				end += i + 1
			}
			start := para.Lines().At(0).Start
			if lineStart := bytes.LastIndexByte(src[:start], '\n') + 1; lineStart == end && validateLink(normalizeLink(unescapeAll(side.marks.str(d.Destination)))) {
				side.breaks = append(side.breaks, lineStart)
			}
		}
	}
	// Definitions are children of the document, blockquotes and list
	// items; walk only blocks, without recursion.
	stack := []ast.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d, ok := n.(*ast.LinkReferenceDefinition); ok {
			if d.Lines().Len() > 0 && (!validateLink(normalizeLink(unescapeAll(side.marks.str(d.Destination)))) || !definitionDestOK(src, d.Lines().At(0).Start)) {
				// A backslash before the ":" after the label: the line
				// is then text, and the label still a shortcut link.
				if i := labelColon(src, d.Lines().At(0).Start); i >= 0 {
					side.escapes = append(side.escapes, i)
				}
			}
			continue
		}
		switch n.(type) {
		case *ast.Document, *ast.Blockquote, *ast.List, *ast.ListItem:
			for c := n.LastChild(); c != nil; c = c.PreviousSibling() {
				stack = append(stack, c)
			}
		}
	}
}

// definitionDestOK reports whether markdown-it's parseLinkDestination
// reads a destination after the label of the definition at start.
func definitionDestOK(src []byte, start int) bool {
	i := labelColon(src, start)
	if i < 0 {
		return true
	}
	pos := i + 1
	for pos < len(src) && (src[pos] == ' ' || src[pos] == '\t') {
		pos++
	}
	if pos < len(src) && src[pos] == '\n' {
		pos++
		for pos < len(src) && (src[pos] == ' ' || src[pos] == '\t') {
			pos++
		}
	}
	_, _, ok := parseLinkDestination(src, pos)
	return ok
}

// lazyInterrupts records a blank line before a lazy line of a paragraph
// in list items (and no blockquote) that goldmark continues the paragraph
// with because it is indented four columns or more, where markdown-it,
// which measures its indentation from the list items' content, reads the
// start of a block that ends the paragraph there (a list item only when
// the line is indented less than four columns more than its list: the
// special case of markdown-it's list rule).
func lazyInterrupts(doc ast.Node, src []byte, side *mdSide) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Type() == ast.TypeInline {
			return ast.WalkSkipChildren, nil
		}
		if n.Kind() != ast.KindParagraph && n.Kind() != ast.KindTextBlock {
			return ast.WalkContinue, nil
		}
		w, inner := 0, -1
		for c := n.Parent(); c != nil; c = c.Parent() {
			if c.Kind() == ast.KindBlockquote {
				return ast.WalkSkipChildren, nil
			}
			if li, ok := c.(*ast.ListItem); ok {
				w += li.Offset
				if inner < 0 {
					inner = li.Offset
				}
			}
		}
		lines := n.Lines()
		for i := 1; i < lines.Len(); i++ {
			start := bytes.LastIndexByte(src[:lines.At(i).Start], '\n') + 1
			cols, pos := util.IndentWidth(src[start:], 0)
			if cols >= 4 && cols < w && interruptsParagraph(src[start+pos:], cols-(w-inner) < 4) {
				side.breaks = append(side.breaks, start)
				break
			}
		}
		return ast.WalkSkipChildren, nil
	})
}

// interruptsParagraph reports whether line starts a block that ends a
// paragraph in markdown-it when it is not indented more than the
// paragraph's container: an ATX heading, a fence, a blockquote, a
// thematic break or, with lists, a list item (of any kind there).
func interruptsParagraph(line []byte, lists bool) bool {
	if len(line) == 0 {
		return false
	}
	first := bytes.SplitN(line, []byte("\n"), 2)[0]
	end := func(i int) bool { return i >= len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\n' }
	switch c := line[0]; {
	case c == '#':
		i := 0
		for i < len(line) && line[i] == '#' {
			i++
		}
		return i <= 6 && end(i)
	case c == '>':
		return true
	case c == '`' || c == '~':
		return bytes.HasPrefix(line, []byte{c, c, c}) && (c == '~' || bytes.IndexByte(first[3:], '`') < 0)
	case c == '-' || c == '+' || c == '*' || c == '_':
		n := 0
		for _, d := range first {
			switch d {
			case c:
				n++
			case ' ', '\t':
			default:
				n = -1000
			}
		}
		if c != '+' && n >= 3 {
			return true
		}
		return lists && c != '_' && end(1)
	case c >= '0' && c <= '9':
		i := 0
		for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		return lists && i < len(line) && (line[i] == '.' || line[i] == ')') && end(i+1)
	}
	return false
}

// labelColon returns the offset of the ":" after the label of the
// definition that starts at or after start, or -1.
func labelColon(src []byte, start int) int {
	i := bytes.IndexByte(src[start:], '[')
	if i < 0 {
		return -1
	}
	for j := start + i + 1; j+1 < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case ']':
			if src[j+1] == ':' {
				return j + 1
			}
			return -1
		}
	}
	return -1
}

// fenceParser is goldmark's fenced code block parser recording the rest of
// the opening line after the fence, markdown-it's info.
type fenceParser struct{ parser.BlockParser }

func (p fenceParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	node, state := p.BlockParser.Open(parent, reader, pc)
	if f, ok := node.(*ast.FencedCodeBlock); ok {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		c := line[i]
		for i < len(line) && line[i] == c {
			i++
		}
		info := bytes.TrimSuffix(line[i:], []byte("\n"))
		w, _ := util.IndentWidth(line, reader.LineOffset())
		sideOf(pc).fenceIndent[f] = w
		sideOf(pc).fenceInfo[f] = sideOf(pc).marks.str(info)
	}
	return node, state
}

// codeSpanParser is markdown-it's backticks rule.
type codeSpanParser struct{}

func (codeSpanParser) Trigger() []byte { return []byte{'`'} }

func (codeSpanParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	side := sideOf(pc)
	p := side.paraOf(parent, block.Source())
	if off := p.offset(block); off >= 0 {
		if closer := p.backticks(off, n); closer >= 0 {
			node := ast.NewCodeSpan()
			side.codeSpans[node] = codeSpanText(side.marks.str(p.content[off+n : closer]))
			p.seek(block, closer+n)
			return node
		}
	}
	block.Advance(n)
	return ast.NewTextSegment(seg.WithStop(seg.Start + n))
}

// btRun is a run of backticks.
type btRun struct{ start, n int }

// btState is what markdown-it's backticks rule remembers in one inline
// parse (of content[lo:hi]).
type btState struct {
	lo, hi  int
	runs    []btRun     // the runs of backticks, in order
	scanned bool        // backticksScanned
	last    map[int]int // backticks: run length → start of the last run seen
}

// state returns the backticks state of the parse that offset off is in.
func (p *mdPara) state(off int) *btState {
	for i := len(p.images) - 1; i >= 0; i-- {
		if st := p.images[i]; st.lo <= off && off < st.hi {
			return st
		}
	}
	if p.main.last == nil {
		p.main.hi = len(p.content)
	}
	return &p.main
}

// backticks is markdown-it's backticks rule for the run of n backticks at
// off: the start of the closing run, or -1 when the run is text. Like
// markdown-it it remembers the runs it passes (and whether it scanned to
// the end), and trusts that memory: an opener whose closer an earlier
// scan (of a link's text) took as the closer of another opener is text.
func (p *mdPara) backticks(off, n int) int {
	st := p.state(off)
	if st.last == nil {
		st.last = map[int]int{}
		for i := st.lo; i < st.hi; {
			if p.content[i] != '`' {
				i++
				continue
			}
			j := i
			for j < st.hi && p.content[j] == '`' {
				j++
			}
			st.runs = append(st.runs, btRun{i, j - i})
			i = j
		}
	}
	if st.scanned && st.last[n] <= off-st.lo {
		return -1
	}
	k := sort.Search(len(st.runs), func(k int) bool { return st.runs[k].start >= off+n })
	for ; k < len(st.runs); k++ {
		r := st.runs[k]
		if r.n == n {
			return r.start
		}
		st.last[r.n] = r.start - st.lo
	}
	st.scanned = true
	return -1
}

// label is markdown-it's parseLinkLabel for the "[" at start, over
// skipToken (which changes what the backticks rule remembers): the offset
// of the "]" that closes the label, or -1. With disableNested a link in
// the label makes it none.
func (p *mdPara) label(start int, disableNested bool, depth int, refs func(string) bool) int {
	level := 1
	for pos := start + 1; pos < len(p.content); {
		c := p.content[pos]
		if c == ']' {
			if level--; level == 0 {
				return pos
			}
		}
		prev := pos
		pos = p.skipToken(pos, depth, refs)
		if c == '[' {
			if prev == pos-1 {
				level++
			} else if disableNested {
				return -1
			}
		}
	}
	return -1
}

// isTerminator is markdown-it's isTerminatorChar of the text rule.
func isTerminator(c byte) bool { return strings.IndexByte("\n!#$%&*+-:<=>@[\\]^_`{}~", c) >= 0 }

// skipToken is markdown-it's ParserInline.skipToken in the commonmark
// preset with html off: where the token at pos ends, cached.
func (p *mdPara) skipToken(pos, depth int, refs func(string) bool) int {
	if end, ok := p.skip[pos]; ok {
		return end
	}
	end := pos + 1
	if depth >= maxNesting {
		end = len(p.content)
	} else {
		switch c := p.content[pos]; {
		case c == '[':
			if e, ok := p.linkEnd(pos, pos, true, depth+1, refs); ok {
				end = e
			}
		case c == '!' && pos+1 < len(p.content) && p.content[pos+1] == '[':
			if e, ok := p.linkEnd(pos, pos+1, false, depth+1, refs); ok {
				end = e
			}
		case c == '`':
			n := 0
			for pos+n < len(p.content) && p.content[pos+n] == '`' {
				n++
			}
			if closer := p.backticks(pos, n); closer >= 0 {
				end = closer + n
			} else {
				end = pos + n
			}
		case c == '\\':
			if pos+1 < len(p.content) {
				end = pos + 2
			}
		case c == '<':
			if e := bytes.IndexByte(p.content[pos:], '>'); e > 0 {
				if u := p.content[pos+1 : pos+e]; bytes.IndexByte(u, '<') < 0 && (isAutolinkURL(u) || isAutolinkEmail(u)) {
					end = pos + e + 1
				}
			}
		case c == '&':
			if _, n := inlineSpecial(string(p.content[pos:min(len(p.content), pos+40)])); n > 0 {
				end = pos + n
			}
		case !isTerminator(c):
			for end < len(p.content) && !isTerminator(p.content[end]) {
				end++
			}
		}
	}
	if p.skip == nil {
		p.skip = map[int]int{}
	}
	p.skip[pos] = end
	return end
}

// linkEnd is markdown-it's link (or image) rule in silent mode for the
// one at pos whose label opens at open: where it ends, if it is one.
func (p *mdPara) linkEnd(pos, open int, disableNested bool, depth int, refs func(string) bool) (int, bool) {
	e := p.label(open, disableNested, depth, refs)
	if e < 0 {
		return 0, false
	}
	if e+1 < len(p.content) && p.content[e+1] == '(' {
		if _, _, end, ok := inlineLink(p.content, e+1, func(s string) string { return s }); ok {
			return end, true
		}
	}
	label, end := string(p.content[open+1:e]), e+1
	if e+1 < len(p.content) && p.content[e+1] == '[' {
		if e2 := p.label(e+1, false, depth, refs); e2 >= 0 {
			if l := string(p.content[e+2 : e2]); l != "" {
				label = l
			}
			end = e2 + 1
		}
	}
	return end, refs(label)
}

// autoLinkParser is markdown-it's autolink rule: a URL or an e-mail
// address in angle brackets, refused (left as text) when validateLink
// refuses the URL.
type autoLinkParser struct{}

func (autoLinkParser) Trigger() []byte { return []byte{'<'} }

func (autoLinkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	end := -1
	for i := 1; i < len(line); i++ {
		if line[i] == '<' {
			return nil
		}
		if line[i] == '>' {
			end = i
			break
		}
	}
	if end < 0 {
		return nil
	}
	url := line[1:end]
	var typ ast.AutoLinkType
	switch {
	case isAutolinkURL(url):
		if !validateLink(normalizeLink(sideOf(pc).marks.str(url))) {
			return nil
		}
		typ = ast.AutoLinkURL
	case isAutolinkEmail(url):
		typ = ast.AutoLinkEmail
	default:
		return nil
	}
	block.Advance(end + 1)
	return ast.NewAutoLink(typ, ast.NewTextSegment(text.NewSegment(seg.Start+1, seg.Start+end)))
}

// isAutolinkURL is markdown-it's AUTOLINK_RE:
// ^([a-zA-Z][a-zA-Z0-9+.-]{1,31}):([^<>\x00-\x20]*)$
func isAutolinkURL(s []byte) bool {
	i := bytes.IndexByte(s, ':')
	if i < 2 || i > 32 || !isASCIILetter(s[0]) {
		return false
	}
	for _, c := range s[1:i] {
		if !isASCIILetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '.' && c != '-' {
			return false
		}
	}
	for _, c := range s[i+1:] {
		if c == '<' || c == '>' || c <= 0x20 {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isASCIIAlnum(c byte) bool { return isASCIILetter(c) || c >= '0' && c <= '9' }

// isAutolinkEmail is markdown-it's EMAIL_RE:
// ^([a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+)@([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*)$
func isAutolinkEmail(s []byte) bool {
	at := bytes.IndexByte(s, '@')
	if at < 1 {
		return false
	}
	for _, c := range s[:at] {
		if !isASCIIAlnum(c) && bytes.IndexByte([]byte(".!#$%&'*+/=?^_`{|}~-"), c) < 0 {
			return false
		}
	}
	for _, label := range bytes.Split(s[at+1:], []byte(".")) {
		if len(label) == 0 || len(label) > 63 || !isASCIIAlnum(label[0]) || !isASCIIAlnum(label[len(label)-1]) {
			return false
		}
		for _, c := range label {
			if !isASCIIAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

// linkParser is goldmark's link parser that records the source of image
// descriptions and the inline links markdown-it refuses.
type linkParser struct{ parser.InlineParser }

func (p linkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	side := sideOf(pc)
	para := side.paraOf(parent, block.Source())
	if line[0] == ']' {
		off := para.offset(block)
		refused := len(line) > 1 && line[1] == '(' && off >= 0 && !inlineLinkOK(para.content, off+1)
		if refused {
			side.escapes = append(side.escapes, seg.Start+1)
		}
		open := -1
		if n := len(para.opens); n > 0 {
			open = para.opens[n-1]
			para.opens = para.opens[:n-1]
		}
		node := p.InlineParser.Parse(parent, block, pc)
		if img, ok := node.(*ast.Image); ok && open >= 0 && open+2 <= seg.Start {
			side.imageLabel[img] = side.marks.str(block.Source()[open+2 : seg.Start])
		}
		if node != nil && len(line) > 1 && line[1] == '(' && off >= 0 {
			if dest, title, _, ok := inlineLink(para.content, off+1, side.marks.strs); ok {
				side.dests[node], side.titles[node] = dest, title
			}
		}
		if _, ok := node.(*ast.Link); ok && !refused && seg.Start > 0 {
			if c := block.Source()[seg.Start-1]; c == '*' || c == '_' {
				side.spaces = append(side.spaces, seg.Start)
			}
		}
		return node
	}
	if off := para.offset(block); off >= 0 {
		if line[0] == '!' {
			off++
		}
		if off < len(para.content) && para.content[off] == '[' {
			refs := func(label string) bool {
				_, ok := pc.Reference(util.ToLinkReference([]byte(label)))
				return ok
			}
			end := para.label(off, line[0] != '!', 1, refs)
			if end < 0 {
				return nil
			}
			if line[0] == '!' {
				para.images = append(para.images, &btState{lo: off + 1, hi: end})
			}
		}
	}
	node := p.InlineParser.Parse(parent, block, pc)
	if node != nil {
		para.opens = append(para.opens, seg.Start)
	}
	return node
}

// inlineLink returns the destination and title of the inline link whose
// "(" is at s[pos], as markdown-it's link rule reads them.
func inlineLink(s []byte, pos int, restore func(string) string) (dest, title string, end int, ok bool) {
	pos = skipLinkSpace(s, pos+1)
	if pos >= len(s) {
		return "", "", 0, false
	}
	if d, end, ok := parseLinkDestination(s, pos); ok {
		if dest = normalizeLink(restore(d)); validateLink(dest) {
			pos = end
		} else {
			dest = ""
		}
		start := pos
		pos = skipLinkSpace(s, pos)
		if t, end, ok := parseLinkTitle(s, pos); pos < len(s) && start != pos && ok {
			title = restore(t)
			pos = skipLinkSpace(s, end)
		}
	}
	return dest, title, pos + 1, pos < len(s) && s[pos] == ')'
}

// inlineLinkOK reports whether markdown-it's link rule reads an inline
// link (destination, title, ")") at the "(" at s[pos].
func inlineLinkOK(s []byte, pos int) bool {
	pos++
	pos = skipLinkSpace(s, pos)
	if pos >= len(s) {
		return false
	}
	if dest, end, ok := parseLinkDestination(s, pos); ok {
		if validateLink(normalizeLink(dest)) {
			pos = end
		}
		start := pos
		pos = skipLinkSpace(s, pos)
		if _, end, ok := parseLinkTitle(s, pos); pos < len(s) && start != pos && ok {
			pos = skipLinkSpace(s, end)
		}
	}
	return pos < len(s) && s[pos] == ')'
}

func skipLinkSpace(s []byte, pos int) int {
	for pos < len(s) && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n') {
		pos++
	}
	return pos
}

// parseLinkDestination is markdown-it's helper of that name: the
// destination (unescaped) and the offset after it.
func parseLinkDestination(s []byte, pos int) (string, int, bool) {
	start := pos
	if pos < len(s) && s[pos] == '<' {
		pos++
		for pos < len(s) {
			c := s[pos]
			if c == '\n' {
				return "", 0, false
			}
			if c == '<' {
				return "", 0, false
			}
			if c == '>' {
				return unescapeAll(string(s[start+1 : pos])), pos + 1, true
			}
			if c == '\\' && pos+1 < len(s) {
				pos += 2
				continue
			}
			pos++
		}
		return "", 0, false
	}
	level := 0
	for pos < len(s) {
		c := s[pos]
		if c == ' ' {
			break
		}
		if c < 0x20 || c == 0x7f {
			break
		}
		if c == '\\' && pos+1 < len(s) {
			if s[pos+1] == ' ' {
				pos++
				continue
			}
			pos += 2
			continue
		}
		if c == '(' {
			level++
			if level > 32 {
				return "", 0, false
			}
		}
		if c == ')' {
			if level == 0 {
				break
			}
			level--
		}
		pos++
	}
	if start == pos || level != 0 {
		return "", 0, false
	}
	return unescapeAll(string(s[start:pos])), pos, true
}

// parseLinkTitle is markdown-it's helper of that name (for a title that
// is complete).
func parseLinkTitle(s []byte, pos int) (string, int, bool) {
	if pos >= len(s) {
		return "", 0, false
	}
	marker := s[pos]
	if marker != '"' && marker != '\'' && marker != '(' {
		return "", 0, false
	}
	start := pos + 1
	if marker == '(' {
		marker = ')'
	}
	for pos = start; pos < len(s); pos++ {
		c := s[pos]
		if c == marker {
			return unescapeAll(string(s[start:pos])), pos + 1, true
		}
		if c == '(' && marker == ')' {
			return "", 0, false
		}
		if c == '\\' && pos+1 < len(s) {
			pos++
		}
	}
	return "", 0, false
}

// codeSpanText is markdown-it's code_inline content: newlines read as
// spaces, and one space stripped from both ends when both are spaces
// around at least one character.
func codeSpanText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) >= 3 && s[0] == ' ' && s[len(s)-1] == ' ' && !strings.ContainsAny(s[1:len(s)-1], "\r\u2028\u2029") {
		s = s[1 : len(s)-1]
	}
	return s
}

// CloseBlock passes the end of a block on to goldmark's link parser, which
// drops its unclosed brackets there.
func (p linkParser) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if c, ok := p.InlineParser.(parser.CloseBlocker); ok {
		c.CloseBlock(parent, block, pc)
	}
}

// paragraphParser is goldmark's paragraph parser that keeps the lines as
// they were before it trims them.
type paragraphParser struct{ parser.BlockParser }

func (p paragraphParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	segs := make([]text.Segment, lines.Len())
	for i := range segs {
		segs[i] = lines.At(i)
	}
	if len(segs) > 0 {
		sideOf(pc).lines[segs[0].Start] = segs
	}
	p.BlockParser.Close(node, reader, pc)
}

// blockquoteParser is goldmark's blockquote parser that also continues a
// blockquote on a line with ">" after four or more columns of
// indentation, as markdown-it does.
type blockquoteParser struct{ parser.BlockParser }

func (p blockquoteParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	line, _ := reader.PeekLine()
	w, pos := util.IndentWidth(line, reader.LineOffset())
	if w > 3 && pos < len(line) && line[pos] == '>' {
		reader.Advance(pos)
	}
	return p.BlockParser.Continue(node, reader, pc)
}

// listParser is goldmark's list parser that keeps a line indented to the
// content of an empty last item (not followed by a blank line) in that
// item, as markdown-it does, where goldmark ends the item.
type listParser struct {
	parser.BlockParser
	blank  map[ast.Node]ast.Node // list → its empty last item followed by a blank line
	blanks map[ast.Node]int      // list → blank lines after that item
}

func (p *listParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	line, _ := reader.PeekLine()
	last := node.LastChild()
	if util.IsBlank(line) {
		if last != nil && last.ChildCount() == 0 {
			if p.blank == nil {
				p.blank = map[ast.Node]ast.Node{}
				p.blanks = map[ast.Node]int{}
			}
			if p.blank[node] != last {
				p.blank[node], p.blanks[node] = last, 0
			}
			// markdown-it skips one blank line after an empty item;
			// at a second one the list ends.
			if p.blanks[node]++; p.blanks[node] == 2 {
				return parser.Close
			}
		}
		return p.BlockParser.Continue(node, reader, pc)
	}
	item, _ := last.(*ast.ListItem)
	indent, _ := util.IndentWidth(line, reader.LineOffset())
	if item != nil && item.ChildCount() == 0 && p.blank[node] != last && indent >= item.Offset {
		return parser.Continue | parser.HasChildren
	}
	state := p.BlockParser.Continue(node, reader, pc)
	// goldmark closes every open list after an empty item and a blank
	// line in any of them; only that item's list ends there.
	if state == parser.Close && item != nil && item.ChildCount() > 0 && indent >= item.Offset && p.blank[node] != last {
		return parser.Continue | parser.HasChildren
	}
	return state
}

// lazyContent returns where a lazy line of block n starts for
// markdown-it: the columns of the list items inside n's innermost
// blockquote (all of them when there is none) consumed from base (after
// the blockquote markers the line has), with pad the columns of a tab
// that straddles the end.
func lazyContent(src []byte, base, at int, n ast.Node) (pad, pos int) {
	w := 0
	for c := n.Parent(); c != nil; c = c.Parent() {
		if c.Kind() == ast.KindBlockquote {
			break
		}
		if li, ok := c.(*ast.ListItem); ok {
			w += li.Offset
		}
	}
	pos = base
	for col := 0; col < w && pos < at; pos++ {
		switch src[pos] {
		case ' ':
			col++
		case '\t':
			tw := 4 - col%4
			if col+tw > w {
				pad = col + tw - w
			}
			col += tw
		default:
			return pad, pos
		}
	}
	return pad, pos
}

// lineContent returns where the content of block n starts on the line
// that holds offset at: its containers' markers and indentation
// consumed (a list item's content column, a blockquote's ">" and the
// space after it), then extra more columns of indentation, as CommonMark
// and markdown-it count them (a tab to the next multiple of four). pad is
// the columns of a tab that straddles the end, which markdown-it writes
// as spaces. It reports false when a container's marker is not on the
// line (a lazy line): it returns that container, and in pos where the
// line goes on after the blockquote markers it has.
func (s *mdSide) lineContent(src []byte, at int, n ast.Node, extra int) (pad, pos int, lazy ast.Node) {
	var chain []ast.Node
	for c := n.Parent(); c != nil; c = c.Parent() {
		switch c.(type) {
		case *ast.ListItem, *ast.Blockquote:
			chain = append(chain, c)
		}
	}
	pos = bytes.LastIndexByte(src[:at], '\n') + 1
	lineStart, col := pos, 0
	base := pos // after the last blockquote marker matched
	// consume takes up to w columns of spaces and tabs.
	consume := func(w int) int {
		for w > 0 && pos < len(src) {
			switch src[pos] {
			case ' ':
				col++
				w--
				pos++
			case '\t':
				tw := 4 - col%4
				if tw > w {
					pad = tw - w
					col += tw
					pos++
					return 0
				}
				col += tw
				w -= tw
				pos++
			default:
				return w
			}
		}
		return w
	}
	for i := len(chain) - 1; i >= 0; i-- {
		pad = 0
		switch c := chain[i].(type) {
		case *ast.ListItem:
			if s.itemLine[c] == lineStart {
				// The marker's line: the content is Offset columns on
				// from the marker (or the end of the line).
				for target := col + c.Offset; col < target && pos < len(src) && src[pos] != '\n'; pos++ {
					if src[pos] != '\t' {
						col++
						continue
					}
					tw := 4 - col%4
					if col+tw > target {
						pad = col + tw - target
					}
					col += tw
				}
				continue
			}
			if consume(c.Offset) > 0 {
				return 0, base, c
			}
		case *ast.Blockquote:
			consume(3)
			if pos >= len(src) || src[pos] != '>' {
				return 0, base, c
			}
			pos++
			col++
			if pos < len(src) && (src[pos] == ' ' || src[pos] == '\t') {
				consume(1)
			}
			base = pos
		}
	}
	if pad > 0 {
		// A tab a container took one column of: its rest is indentation.
		if extra >= pad {
			extra -= pad
			pad = 0
		} else {
			pad -= extra
			extra = 0
		}
	}
	if extra > 0 && consume(extra) > 0 && pos < len(src) && src[pos] != '\n' {
		return 0, pos, n
	}
	return pad, pos, nil
}

// listItemParser is goldmark's list item parser recording where each
// item's marker line starts.
type listItemParser struct{ parser.BlockParser }

func (p listItemParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	_, seg := reader.PeekLine()
	node, state := p.BlockParser.Open(parent, reader, pc)
	if node != nil {
		src := reader.Source()
		sideOf(pc).itemLine[node] = bytes.LastIndexByte(src[:min(seg.Start, len(src))], '\n') + 1
	}
	return node, state
}

// definitionsTransformer is goldmark's link reference transformer, given
// a long paragraph in chunks: it takes time in proportion to the
// definitions times the paragraph's lines. A chunk ends before a line
// that starts with "[" after a line that cannot go on into it (no ":" at
// its end, no quote or parenthesis that might open a title), and the
// chunks are given in order until one keeps lines that are not
// definitions.
type definitionsTransformer struct{}

// definitionsChunk is how many lines a chunk has at least.
const definitionsChunk = 64

func (definitionsTransformer) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() <= 2*definitionsChunk {
		parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
		return
	}
	src := reader.Source()
	all := make([]text.Segment, lines.Len())
	for i := range all {
		all[i] = lines.At(i)
	}
	parent := node.Parent()
	for start := 0; start < len(all); {
		end := len(all)
		for i := start + definitionsChunk; i < len(all); i++ {
			if chunkBoundary(all[i-1].Value(src), all[i].Value(src)) {
				end = i
				break
			}
		}
		chunk := ast.NewParagraph()
		chunk.SetBlankPreviousLines(start == 0 && node.HasBlankPreviousLines())
		segs := text.NewSegments()
		for _, seg := range all[start:end] {
			segs.Append(seg)
		}
		chunk.SetLines(segs)
		parent.InsertBefore(parent, node, chunk)
		parser.LinkReferenceParagraphTransformer.Transform(chunk, reader, pc)
		if chunk.Parent() != nil {
			// Not all definitions: the rest of the chunk and of the
			// paragraph are the paragraph.
			rest := chunk.Lines()
			for _, seg := range all[end:] {
				rest.Append(seg)
			}
			parent.RemoveChild(parent, chunk)
			node.SetLines(rest)
			return
		}
		start = end
	}
	parent.RemoveChild(parent, node)
}

// chunkBoundary reports whether a definition on line prev cannot go on
// into line next, which starts with "[" (after up to three spaces).
func chunkBoundary(prev, next []byte) bool {
	next = bytes.TrimLeft(next, " ")
	if len(next) == 0 || next[0] != '[' {
		return false
	}
	prev = bytes.TrimRight(prev, " \t\n")
	return len(prev) > 0 && prev[len(prev)-1] != ':' && !bytes.ContainsAny(prev, "\"'(")
}
