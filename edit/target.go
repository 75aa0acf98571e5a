package edit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/model"
)

// Target says where an edit applies, in the document at the request's
// base version: a block (by an attribute or by its path of child
// indices), or text found with its context. Exactly one is set.
type Target struct {
	Block *BlockTarget `json:"block,omitempty"`
	Text  *TextTarget  `json:"text,omitempty"`
}

// BlockTarget finds a block node: the one whose attribute Attr is Value
// (JSON values compared as JSON), or the one at Path, its child indices
// from the document down.
type BlockTarget struct {
	Attr  string          `json:"attr,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Path  []int           `json:"path,omitempty"`
}

// TextTarget finds the text Find, preceded by Before and followed by
// After, which must occur once in the document, within one textblock.
type TextTarget struct {
	Find   string `json:"find"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// found is a target located in a document: the range [from, to) of the
// block node (from is the position before it) or of the text, and, for
// text, the textblock it is in (blockFrom, blockTo around it).
type found struct {
	text               bool
	from, to           int
	blockFrom, blockTo int
	node               *model.Node // the block, or the textblock of the text
	// What must still be there: the block's type and text content, or the
	// text with its context.
	content string
	before  string
	after   string
}

// locate finds t in doc.
func locate(doc *model.Node, t Target) (found, error) {
	switch {
	case t.Block != nil && t.Text != nil:
		return found{}, fmt.Errorf("the target has both block and text")
	case t.Text != nil:
		return locateText(doc, *t.Text)
	case t.Block != nil && t.Block.Path != nil:
		if t.Block.Attr != "" {
			return found{}, fmt.Errorf("the block target has both attr and path")
		}
		return locatePath(doc, t.Block.Path)
	case t.Block != nil && t.Block.Attr != "":
		return locateAttr(doc, t.Block.Attr, t.Block.Value)
	case t.Block != nil:
		return found{}, fmt.Errorf("the block target needs attr and value, or path")
	}
	return found{}, fmt.Errorf("the target needs block or text")
}

// blockFound returns the found of the block node n at pos.
func blockFound(n *model.Node, pos int) found {
	end := pos + n.NodeSize()
	return found{from: pos, to: end, blockFrom: pos, blockTo: end, node: n, content: n.TextContent()}
}

// locatePath finds the block at the child indices path.
func locatePath(doc *model.Node, path []int) (found, error) {
	if len(path) == 0 {
		return found{}, fmt.Errorf("the path is empty (the document itself is not a block to edit)")
	}
	n, pos := doc, 0
	for depth, i := range path {
		if i < 0 || i >= n.ChildCount() {
			return found{}, fmt.Errorf("path %v: no child %d at depth %d (it has %d)", path, i, depth+1, n.ChildCount())
		}
		start := pos
		if depth > 0 {
			start++ // into n
		}
		for j := range i {
			start += n.Child(j).NodeSize()
		}
		n, pos = n.Child(i), start
	}
	if !n.IsBlock() {
		return found{}, fmt.Errorf("path %v is a %s, not a block", path, n.Type.Name)
	}
	return blockFound(n, pos), nil
}

// locateAttr finds the one block whose attribute attr is value.
func locateAttr(doc *model.Node, attr string, value json.RawMessage) (found, error) {
	if len(value) == 0 {
		return found{}, fmt.Errorf("the block target has attr %q but no value", attr)
	}
	v, err := model.ParseJSONValue(value)
	if err != nil {
		return found{}, fmt.Errorf("the value of %q: %v", attr, err)
	}
	want := model.AppendJSONValue(nil, v)
	var hits []found
	doc.Descendants(func(n *model.Node, pos int, _ *model.Node, _ int) bool {
		if !n.IsBlock() {
			return false
		}
		if v, ok := n.Attrs.Get(attr); ok && bytes.Equal(model.AppendJSONValue(nil, v), want) {
			hits = append(hits, blockFound(n, pos))
		}
		return len(hits) < 2
	})
	switch len(hits) {
	case 0:
		return found{}, fmt.Errorf("no block has %s = %s", attr, want)
	case 1:
		return hits[0], nil
	}
	return found{}, fmt.Errorf("several blocks have %s = %s", attr, want)
}

// inlineText is a textblock's inline content as text, with the document
// position of each byte: text as it is, any other inline node as U+FFFC.
type inlineText struct {
	text string
	pos  []int // pos[i] is the position before byte i; pos[len(text)] the end
}

// objectChar stands for an inline node that is not text.
const objectChar = "\uFFFC"

// textOf returns the inline text of the textblock n whose content starts
// at start. Positions count UTF-16 code units, as ProseMirror's do.
func textOf(n *model.Node, start int) inlineText {
	var b strings.Builder
	var pos []int
	p := start
	n.ForEach(func(c *model.Node, _, _ int) {
		if !c.IsText() {
			for range len(objectChar) {
				pos = append(pos, p)
			}
			b.WriteString(objectChar)
			p += c.NodeSize()
			return
		}
		s := c.Text
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			for range size {
				pos = append(pos, p)
			}
			p += utf16.RuneLen(r) // U+FFFD, 1, for a byte that is not UTF-8
			i += size
		}
		b.WriteString(s)
	})
	pos = append(pos, p)
	return inlineText{text: b.String(), pos: pos}
}

// locateText finds the text of t, once in the document.
func locateText(doc *model.Node, t TextTarget) (found, error) {
	if t.Find == "" {
		return found{}, fmt.Errorf("the text target's find is empty")
	}
	needle := t.Before + t.Find + t.After
	var hits []found
	doc.Descendants(func(n *model.Node, pos int, _ *model.Node, _ int) bool {
		if len(hits) > 1 {
			return false
		}
		if !n.IsTextblock() {
			return true
		}
		it := textOf(n, pos+1)
		for off := 0; len(hits) < 2; {
			i := strings.Index(it.text[off:], needle)
			if i < 0 {
				break
			}
			at := off + i + len(t.Before)
			hits = append(hits, found{
				text: true, from: it.pos[at], to: it.pos[at+len(t.Find)],
				blockFrom: pos, blockTo: pos + n.NodeSize(), node: n,
				content: t.Find, before: t.Before, after: t.After,
			})
			_, size := utf8.DecodeRuneInString(it.text[off+i:])
			off += i + size
		}
		return false
	})
	switch len(hits) {
	case 0:
		return found{}, fmt.Errorf("text %s not found", describe(t))
	case 1:
		return hits[0], nil
	}
	return found{}, fmt.Errorf("text %s occurs more than once: give more context (before, after)", describe(t))
}

// describe quotes t's text with its context.
func describe(t TextTarget) string {
	s := fmt.Sprintf("%q", t.Find)
	if t.Before != "" {
		s = fmt.Sprintf("%q before ", t.Before) + s
	}
	if t.After != "" {
		s += fmt.Sprintf(" with %q after", t.After)
	}
	return s
}

// still reports whether f, found in the document at the base version and
// mapped to pos (from, to) in doc, is still there: the same block with
// the same text, or the same text with its context in a textblock.
func (f found) still(doc *model.Node, from, to int) bool {
	if from > to || from < 0 || to > doc.Content.Size() {
		return false
	}
	if !f.text {
		n := doc.NodeAt(from)
		return n != nil && to == from+n.NodeSize() && n.Type == f.node.Type && n.TextContent() == f.content
	}
	rp, err := doc.Resolve(from)
	if err != nil || !rp.Parent().IsTextblock() {
		return false
	}
	if end := rp.End(rp.Depth); to > end {
		return false
	}
	it := textOf(rp.Parent(), rp.Start(rp.Depth))
	i, j := byteAt(it, from), byteAt(it, to)
	if i < 0 || j < 0 || it.text[i:j] != f.content {
		return false
	}
	return strings.HasSuffix(it.text[:i], f.before) && strings.HasPrefix(it.text[j:], f.after)
}

// byteAt returns the byte of it at position pos, or -1 when pos falls
// inside a character.
func byteAt(it inlineText, pos int) int {
	for i, p := range it.pos {
		if p == pos && (i == 0 || it.pos[i-1] != pos) {
			return i
		}
		if p > pos {
			break
		}
	}
	return -1
}
