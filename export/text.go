package export

import (
	"encoding/json"
	"strings"

	"github.com/pmauthority/pmauthority/model"
)

// Text returns the document's text as prosemirror-model's
//
//	doc.textBetween(0, doc.content.size, "\n\n", leafText)
//
// gives it: blocks separated by a blank line, where leafText gives a leaf
// node's text. A node type's leafText is the string under the "leafText"
// key of its JSON spec when it has one; without it, a node type called
// hard_break gives "\n" and every other leaf (image, horizontal_rule …)
// gives "" (prosemirror-schema-basic defines no leafText, so the export
// passes this function in its textBetween call).
func Text(doc *model.Node) string {
	t := textWriter{first: true}
	t.b.Grow(doc.Content.Size())
	t.children(doc)
	return t.b.String()
}

// textWriter walks a document in the order of textBetween's nodesBetween.
type textWriter struct {
	b     strings.Builder
	first bool
}

func (t *textWriter) children(parent *model.Node) {
	parent.ForEach(func(node *model.Node, _, _ int) {
		if node.IsText() {
			t.b.WriteString(node.Text)
			return
		}
		leaf := node.IsLeaf()
		var nodeText string
		if leaf {
			nodeText = leafText(node.Type)
		}
		if node.IsBlock() && (leaf && nodeText != "" || node.InlineContent()) {
			if t.first {
				t.first = false
			} else {
				t.b.WriteString("\n\n")
			}
		}
		t.b.WriteString(nodeText)
		if !leaf {
			t.children(node)
		}
	})
}

// leafText is the text a leaf node of type t stands for in Text.
func leafText(t *model.NodeType) string {
	if t.Spec != nil {
		for _, p := range t.Spec.Extra {
			if p.Key == "leafText" {
				var s string
				if json.Unmarshal(p.Value, &s) == nil {
					return s
				}
			}
		}
	}
	if t.Name == "hard_break" {
		return "\n"
	}
	return ""
}
